// The constant folder on the opset 7–18 forms of the shape-computing
// operators: attribute forms (Slice before 10, Squeeze/Unsqueeze before 13,
// the reductions before 13/18) and input forms, any-rank data, numpy
// broadcasting, and ONNX Runtime's integer and cast semantics.
#include "graph/constant_folding.h"

#include <initializer_list>
#include <string>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

namespace hetplan::internal {
namespace {

using Dims = std::vector<int64_t>;
using T = onnx::TensorProto;

ConstTensor I(Dims dims, std::vector<int64_t> v, int32_t dtype = T::INT64) {
  ConstTensor c;
  c.dtype = dtype;
  c.dims = std::move(dims);
  c.ints = std::move(v);
  return c;
}
ConstTensor F(Dims dims, std::vector<double> v, int32_t dtype = T::FLOAT) {
  ConstTensor c;
  c.dtype = dtype;
  c.is_float = true;
  c.dims = std::move(dims);
  c.floats = std::move(v);
  return c;
}

struct Node {
  onnx::NodeProto n;
  Node(const std::string& op, std::initializer_list<std::string> inputs) {
    n.set_op_type(op);
    for (const auto& i : inputs) n.add_input(i);
    n.add_output("out");
  }
  Node& Int(const char* name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
    return *this;
  }
  Node& Ints(const char* name, std::initializer_list<int64_t> v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return *this;
  }
};

std::optional<ConstTensor> Eval(const Node& node, const std::unordered_map<std::string, ConstTensor>& c,
                                const std::unordered_map<std::string, Dims>& shapes = {}) {
  auto r = EvaluateNode(node.n, c, shapes);
  if (!r) return std::nullopt;
  return r->at(0);
}

TEST(ConstantFolding, ShapeAndSizeFromStaticShapes) {
  const std::unordered_map<std::string, Dims> shapes = {{"x", {2, 3, 4, 5}}};
  auto s = Eval(Node("Shape", {"x"}), {}, shapes);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->ints, (std::vector<int64_t>{2, 3, 4, 5}));
  auto sl = Eval(Node("Shape", {"x"}).Int("start", 1).Int("end", -1), {}, shapes);  // opset 15
  ASSERT_TRUE(sl);
  EXPECT_EQ(sl->ints, (std::vector<int64_t>{3, 4}));
  auto n = Eval(Node("Size", {"x"}), {}, shapes);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->ints, (std::vector<int64_t>{120}));
  EXPECT_TRUE(n->dims.empty());
}

TEST(ConstantFolding, SliceInBothForms) {
  const auto x = F({4}, {1, 3, 16, 16});
  // Opset 9 (Paddle2ONNX): starts/ends/axes as attributes.
  auto a = Eval(Node("Slice", {"x"}).Ints("starts", {0}).Ints("ends", {1}).Ints("axes", {0}), {{"x", x}});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->floats, (std::vector<double>{1}));
  // Opset 10+: inputs, with a negative step and clamped bounds.
  auto b = Eval(Node("Slice", {"x", "s", "e", "ax", "st"}),
                {{"x", x}, {"s", I({1}, {-1})}, {"e", I({1}, {INT64_MIN})}, {"ax", I({1}, {0})}, {"st", I({1}, {-2})}});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->floats, (std::vector<double>{16, 3}));
  // Two axes of a 2-D tensor.
  auto m = I({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  auto c = Eval(Node("Slice", {"m", "s", "e", "ax"}),
                {{"m", m}, {"s", I({2}, {1, 1})}, {"e", I({2}, {3, INT64_MAX})}, {"ax", I({2}, {0, -1})}});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->dims, (Dims{2, 3}));
  EXPECT_EQ(c->ints, (std::vector<int64_t>{5, 6, 7, 9, 10, 11}));
}

// torch.onnx writes F.pad's pads as Concat → Reshape → Slice(step −1) →
// Transpose → Reshape → Cast when it does not fold them itself (Hyena).
TEST(ConstantFolding, TransposeWithAndWithoutPerm) {
  const auto m = I({2, 3}, {0, 1, 2, 3, 4, 5});
  auto t = Eval(Node("Transpose", {"m"}), {{"m", m}});  // no perm: axes reversed
  ASSERT_TRUE(t);
  EXPECT_EQ(t->dims, (Dims{3, 2}));
  EXPECT_EQ(t->ints, (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  const auto x = F({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  auto p = Eval(Node("Transpose", {"x"}).Ints("perm", {2, 0, 1}), {{"x", x}});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->dims, (Dims{3, 2, 1}));
  EXPECT_EQ(p->floats, (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_FALSE(Eval(Node("Transpose", {"x"}).Ints("perm", {0, 0, 1}), {{"x", x}}));  // not a permutation
  EXPECT_FALSE(Eval(Node("Transpose", {"x"}).Ints("perm", {1, 0}), {{"x", x}}));     // wrong rank
}

TEST(ConstantFolding, CastTruncatesAndRoundsToFloat32) {
  auto i = Eval(Node("Cast", {"x"}).Int("to", T::INT64), {{"x", F({3}, {2.7, -2.7, 1.0})}});
  ASSERT_TRUE(i);
  EXPECT_EQ(i->ints, (std::vector<int64_t>{2, -2, 1}));
  auto f = Eval(Node("Cast", {"x"}).Int("to", T::FLOAT), {{"x", I({1}, {16777217})}});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->floats[0], 16777216.0);  // what float32 holds
  auto b = Eval(Node("Cast", {"x"}).Int("to", T::BOOL), {{"x", F({2}, {0.0, 0.5})}});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->ints, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(b->dtype, T::BOOL);
}

TEST(ConstantFolding, GatherSqueezeUnsqueezeConcatAnyRankBothForms) {
  auto m = I({2, 3}, {1, 2, 3, 4, 5, 6});
  auto g = Eval(Node("Gather", {"m", "i"}).Int("axis", 1), {{"m", m}, {"i", I({2}, {2, -3})}});
  ASSERT_TRUE(g);
  EXPECT_EQ(g->dims, (Dims{2, 2}));
  EXPECT_EQ(g->ints, (std::vector<int64_t>{3, 1, 6, 4}));
  auto scalar = Eval(Node("Gather", {"v", "i"}), {{"v", I({3}, {7, 8, 9})}, {"i", I({}, {1})}});
  ASSERT_TRUE(scalar);
  EXPECT_TRUE(scalar->dims.empty());
  EXPECT_EQ(scalar->ints, (std::vector<int64_t>{8}));
  auto u11 = Eval(Node("Unsqueeze", {"s"}).Ints("axes", {0}), {{"s", I({}, {5})}});  // opset 11
  auto u13 = Eval(Node("Unsqueeze", {"s", "a"}), {{"s", I({}, {5})}, {"a", I({1}, {0})}});  // opset 13
  ASSERT_TRUE(u11 && u13);
  EXPECT_EQ(u11->dims, (Dims{1}));
  EXPECT_EQ(u13->dims, (Dims{1}));
  auto sq = Eval(Node("Squeeze", {"x"}).Ints("axes", {-1}), {{"x", I({2, 1}, {1, 2})}});
  ASSERT_TRUE(sq);
  EXPECT_EQ(sq->dims, (Dims{2}));
  EXPECT_FALSE(Eval(Node("Squeeze", {"x"}).Ints("axes", {0}), {{"x", I({2, 1}, {1, 2})}}));  // dim 2 ≠ 1
  auto cat = Eval(Node("Concat", {"a", "b"}).Int("axis", 1), {{"a", I({2, 1}, {1, 2})}, {"b", I({2, 2}, {3, 4, 5, 6})}});
  ASSERT_TRUE(cat);
  EXPECT_EQ(cat->dims, (Dims{2, 3}));
  EXPECT_EQ(cat->ints, (std::vector<int64_t>{1, 3, 4, 2, 5, 6}));
}

TEST(ConstantFolding, ArithmeticComparisonsAndLogicBroadcast) {
  auto add = Eval(Node("Add", {"a", "b"}), {{"a", I({2, 1}, {10, 20})}, {"b", I({3}, {1, 2, 3})}});
  ASSERT_TRUE(add);
  EXPECT_EQ(add->dims, (Dims{2, 3}));
  EXPECT_EQ(add->ints, (std::vector<int64_t>{11, 12, 13, 21, 22, 23}));
  auto div = Eval(Node("Div", {"a", "b"}), {{"a", I({2}, {7, -7})}, {"b", I({}, {2})}});
  ASSERT_TRUE(div);
  EXPECT_EQ(div->ints, (std::vector<int64_t>{3, -3}));  // truncation, as ORT's int kernels
  auto mod = Eval(Node("Mod", {"a", "b"}), {{"a", I({2}, {7, -7})}, {"b", I({}, {3})}});
  ASSERT_TRUE(mod);
  EXPECT_EQ(mod->ints, (std::vector<int64_t>{1, 2}));  // the divisor's sign without fmod
  for (const auto& [op, want] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"Equal", {0, 1, 0}}, {"Less", {1, 0, 0}}, {"Greater", {0, 0, 1}}, {"LessOrEqual", {1, 1, 0}},
           {"GreaterOrEqual", {0, 1, 1}}}) {
    auto r = Eval(Node(op, {"a", "b"}), {{"a", I({3}, {1, 2, 3})}, {"b", I({}, {2})}});
    ASSERT_TRUE(r) << op;
    EXPECT_EQ(r->ints, want) << op;
    EXPECT_EQ(r->dtype, T::BOOL) << op;
  }
  auto f = Eval(Node("Equal", {"a", "b"}), {{"a", F({}, {16000})}, {"b", I({}, {16000})}});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->ints, (std::vector<int64_t>{1}));
  const auto t = I({2}, {1, 0}, T::BOOL), u = I({2}, {1, 1}, T::BOOL);
  auto a = Eval(Node("And", {"t", "u"}), {{"t", t}, {"u", u}});
  auto o = Eval(Node("Or", {"t", "u"}), {{"t", t}, {"u", u}});
  auto n = Eval(Node("Not", {"t"}), {{"t", t}});
  ASSERT_TRUE(a && o && n);
  EXPECT_EQ(a->ints, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(o->ints, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(n->ints, (std::vector<int64_t>{0, 1}));
  auto mx = Eval(Node("Max", {"a", "b", "c"}), {{"a", I({}, {1})}, {"b", I({2}, {5, 0})}, {"c", I({}, {3})}});
  ASSERT_TRUE(mx);
  EXPECT_EQ(mx->ints, (std::vector<int64_t>{5, 3}));
  EXPECT_FALSE(Eval(Node("Add", {"a", "b"}), {{"a", I({2}, {1, 2})}, {"b", I({3}, {1, 2, 3})}}));  // no broadcast
}

TEST(ConstantFolding, WhereExpandTileConstantOfShapeRangeReshape) {
  auto w = Eval(Node("Where", {"c", "a", "b"}),
                {{"c", I({2}, {1, 0}, T::BOOL)}, {"a", I({}, {7})}, {"b", I({2, 1}, {8, 9})}});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->dims, (Dims{2, 2}));
  EXPECT_EQ(w->ints, (std::vector<int64_t>{7, 8, 7, 9}));
  auto e = Eval(Node("Expand", {"x", "s"}), {{"x", I({1, 2}, {1, 2})}, {"s", I({3}, {2, 1, 1})}});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->dims, (Dims{2, 1, 2}));
  auto t = Eval(Node("Tile", {"x", "r"}), {{"x", I({2}, {1, 2})}, {"r", I({1}, {2})}});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->ints, (std::vector<int64_t>{1, 2, 1, 2}));
  onnx::TensorProto one;
  one.set_data_type(T::INT64);
  one.add_dims(1);
  one.add_int64_data(1);
  Node cos("ConstantOfShape", {"s"});
  auto* a = cos.n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = one;
  auto c = Eval(cos, {{"s", I({2}, {2, 3})}});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->ints, std::vector<int64_t>(6, 1));
  EXPECT_EQ(c->dtype, T::INT64);
  auto rf = Eval(Node("Range", {"a", "b", "c"}), {{"a", F({}, {0})}, {"b", F({}, {1})}, {"c", F({}, {0.25})}});
  ASSERT_TRUE(rf);
  EXPECT_EQ(rf->floats, (std::vector<double>{0, 0.25, 0.5, 0.75}));
  auto ri = Eval(Node("Range", {"a", "b", "c"}), {{"a", I({}, {10})}, {"b", I({}, {4})}, {"c", I({}, {-3})}});
  ASSERT_TRUE(ri);
  EXPECT_EQ(ri->ints, (std::vector<int64_t>{10, 7}));
  auto r0 = Eval(Node("Reshape", {"x", "s"}), {{"x", I({2, 3}, {1, 2, 3, 4, 5, 6})}, {"s", I({2}, {0, -1})}});
  ASSERT_TRUE(r0);
  EXPECT_EQ(r0->dims, (Dims{2, 3}));
  auto rz = Eval(Node("Reshape", {"x", "s"}).Int("allowzero", 1), {{"x", I({0}, {})}, {"s", I({2}, {0, 5})}});
  ASSERT_TRUE(rz);
  EXPECT_EQ(rz->dims, (Dims{0, 5}));
}

TEST(ConstantFolding, ReductionsInAttributeAndOpset18InputForms) {
  const auto x = I({2, 3}, {1, 2, 3, 4, 5, 6});
  auto attr = Eval(Node("ReduceProd", {"x"}).Ints("axes", {1}).Int("keepdims", 0), {{"x", x}});  // opset ≤ 17
  auto input = Eval(Node("ReduceProd", {"x", "a"}).Int("keepdims", 0), {{"x", x}, {"a", I({1}, {1})}});  // opset 18
  ASSERT_TRUE(attr && input);
  EXPECT_EQ(attr->ints, (std::vector<int64_t>{6, 120}));
  EXPECT_EQ(input->ints, attr->ints);
  auto all = Eval(Node("ReduceSum", {"x"}), {{"x", x}});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->dims, (Dims{1, 1}));
  EXPECT_EQ(all->ints, (std::vector<int64_t>{21}));
  auto noop = Eval(Node("ReduceMax", {"x", "a"}).Int("noop_with_empty_axes", 1), {{"x", x}, {"a", I({0}, {})}});
  ASSERT_TRUE(noop);
  EXPECT_EQ(noop->dims, (Dims{2, 3}));
}

TEST(ConstantFolding, TensorProtoRoundTripKeepsTheType) {
  for (int32_t dtype : {T::INT64, T::INT32, T::INT8, T::UINT8, T::BOOL, T::INT16, T::UINT16}) {
    SCOPED_TRACE(dtype);
    auto back = FromTensorProto(ToTensorProto(I({3}, {0, 1, 1}, dtype), "t"));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->dtype, dtype);
    EXPECT_EQ(back->ints, (std::vector<int64_t>{0, 1, 1}));
  }
  for (int32_t dtype : {T::FLOAT, T::DOUBLE}) {
    auto back = FromTensorProto(ToTensorProto(F({2}, {0.5, -2}, dtype), "t"));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->dtype, dtype);
    EXPECT_EQ(back->floats, (std::vector<double>{0.5, -2}));
  }
}

// tf2onnx computes Pad's pads as Concat(Split(initializer)): Split in its
// attribute (2–12), input (13+) and equal-parts forms (num_outputs, 18+).
TEST(ConstantFolding, SplitInItsThreeFormsHasOneValuePerOutput) {
  const std::unordered_map<std::string, ConstTensor> c = {{"x", I({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})},
                                                          {"sizes", I({2}, {1, 3})},
                                                          {"y", I({1, 5}, {0, 1, 2, 3, 4})}};
  auto outputs = [](Node node, int n) {
    node.n.clear_output();
    for (int k = 0; k < n; ++k) node.n.add_output("o" + std::to_string(k));
    return node;
  };
  auto attr = EvaluateNode(outputs(Node("Split", {"x"}).Int("axis", 1).Ints("split", {1, 3}), 2).n, c, {});
  ASSERT_TRUE(attr);
  ASSERT_EQ(attr->size(), 2u);
  EXPECT_EQ((*attr)[0].dims, (Dims{2, 1}));
  EXPECT_EQ((*attr)[0].ints, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ((*attr)[1].ints, (std::vector<int64_t>{1, 2, 3, 5, 6, 7}));
  auto input = EvaluateNode(outputs(Node("Split", {"x", "sizes"}).Int("axis", -1), 2).n, c, {});
  ASSERT_TRUE(input);
  EXPECT_EQ((*input)[1].ints, (*attr)[1].ints);
  auto equal = EvaluateNode(outputs(Node("Split", {"x"}), 2).n, c, {});  // axis 0, two equal rows
  ASSERT_TRUE(equal);
  EXPECT_EQ((*equal)[1].ints, (std::vector<int64_t>{4, 5, 6, 7}));
  auto last_smaller = EvaluateNode(outputs(Node("Split", {"y"}).Int("axis", 1).Int("num_outputs", 3), 3).n, c, {});
  ASSERT_TRUE(last_smaller);
  EXPECT_EQ((*last_smaller)[0].ints, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ((*last_smaller)[2].ints, (std::vector<int64_t>{4}));
  // Sizes that do not add up, or an uneven split without num_outputs, are left to ONNX Runtime.
  EXPECT_FALSE(EvaluateNode(outputs(Node("Split", {"x"}).Int("axis", 1).Ints("split", {1, 1}), 2).n, c, {}));
  EXPECT_FALSE(EvaluateNode(outputs(Node("Split", {"x"}).Int("axis", 1), 3).n, c, {}));
  auto id = Eval(Node("Identity", {"sizes"}), c);
  ASSERT_TRUE(id);
  EXPECT_EQ(id->ints, (std::vector<int64_t>{1, 3}));
  EXPECT_FALSE(Eval(Node("Identity", {"w"}), {{"w", F({2}, {0.5, 1.5})}}));  // a weight alias stays
  auto sum = Eval(Node("Sum", {"sizes", "sizes", "sizes"}), c);  // tf2onnx's AddN
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->ints, (std::vector<int64_t>{3, 9}));
}

}  // namespace
}  // namespace hetplan::internal
