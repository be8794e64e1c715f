// Quantized models on import (src/graph/qdq.h): QDQ groups become the float
// model's operators with INT8 tensors, QOperator nodes are operators with
// the float operator's matrix view, and bad quantization parameters are
// refused with one clear error. Models are built in memory; the zoo's INT8
// models are pinned in zoo_test.cc.
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "hetplan/graph/onnx_import.h"
#include "hetplan/graph/quantization.h"
#include "testing/helpers.h"

namespace hetplan {
namespace {

using test_util::AddNode;
using test_util::AddTensor;
using test_util::Floats;
using Dims = std::vector<int64_t>;
using onnx::TensorProto;

// An initializer of an integer type whose values go to int32_data (as
// onnx.helper writes them, so that a value outside the type can be stored).
TensorProto Ints(const std::string& name, int32_t type, const Dims& dims, const std::vector<int32_t>& values) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  for (int32_t v : values) t.add_int32_data(v);
  return t;
}

TensorProto Scalar(const std::string& name, float v) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(TensorProto::FLOAT);
  t.add_float_data(v);
  return t;
}

// One quantized tensor's parameters: scale `<p>_s`, uint8 zero point `<p>_z`.
void AddParams(onnx::GraphProto* g, const std::string& p, float scale = 0.05f, int32_t zp = 128,
               int32_t zp_type = TensorProto::UINT8) {
  *g->add_initializer() = Scalar(p + "_s", scale);
  *g->add_initializer() = Ints(p + "_z", zp_type, {}, {zp});
}

// A Conv weight [co, ci, 3, 3] as int8 with per-channel scales, dequantized
// (constant-only: part of the constant, as a quantized weight is).
std::string AddQuantizedWeight(onnx::GraphProto* g, const std::string& name, int64_t co, int64_t ci) {
  std::vector<int32_t> q(static_cast<size_t>(co * ci * 9));
  for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<int32_t>(i % 17) - 8;
  *g->add_initializer() = Ints(name + "_q", TensorProto::INT8, {co, ci, 3, 3}, q);
  TensorProto* scales = g->add_initializer();
  scales->set_name(name + "_s");
  scales->set_data_type(TensorProto::FLOAT);
  scales->add_dims(co);
  for (int64_t i = 0; i < co; ++i) scales->add_float_data(0.01f * static_cast<float>(i + 1));
  *g->add_initializer() = Ints(name + "_z", TensorProto::INT8, {co}, std::vector<int32_t>(static_cast<size_t>(co), 0));
  auto* dq = AddNode(g, "DequantizeLinear", {name + "_q", name + "_s", name + "_z"}, {name}, name + "_dq");
  auto* axis = dq->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  return name;
}

void Pad(onnx::NodeProto* n) { test_util::Pads(n); }

// torch.onnx's form of a quantized Conv → ReLU → Conv (quantizable
// torchvision models): Q(input), then Cast → DQ in front of each quantized
// kernel, the ReLU between the Conv and its Q, a DQ at the end.
//   x → Q → Cast → DQ → Conv(w0) → Relu → Q → Cast → DQ → Conv(w1) → Q → DQ → y
onnx::ModelProto TorchStyle() {
  onnx::ModelProto m = test_util::NewModel("torch_qdq");
  auto* g = m.mutable_graph();
  AddTensor(g->add_input(), "x", {1, 3, 8, 8});
  AddTensor(g->add_output(), "y", {1, 4, 8, 8});
  AddParams(g, "in");
  AddParams(g, "a", 0.02f, 0);
  AddParams(g, "b");
  AddNode(g, "QuantizeLinear", {"x", "in_s", "in_z"}, {"xq"}, "quant");
  auto cast = [&](const std::string& in, const std::string& out, const std::string& name) {
    auto* c = AddNode(g, "Cast", {in}, {out}, name);
    auto* to = c->add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(TensorProto::UINT8);
  };
  cast("xq", "xc", "conv0/Cast");
  AddNode(g, "DequantizeLinear", {"xc", "in_s", "in_z"}, {"xd"}, "conv0/DequantizeLinear");
  AddQuantizedWeight(g, "w0", 4, 3);
  Pad(AddNode(g, "Conv", {"xd", "w0"}, {"c0"}, "conv0"));
  AddNode(g, "Relu", {"c0"}, {"r0"}, "relu0");
  AddNode(g, "QuantizeLinear", {"r0", "a_s", "a_z"}, {"r0q"}, "relu0/QuantizeLinear");
  cast("r0q", "r0c", "conv1/Cast");
  AddNode(g, "DequantizeLinear", {"r0c", "a_s", "a_z"}, {"r0d"}, "conv1/DequantizeLinear");
  AddQuantizedWeight(g, "w1", 4, 4);
  Pad(AddNode(g, "Conv", {"r0d", "w1"}, {"c1"}, "conv1"));
  AddNode(g, "QuantizeLinear", {"c1", "b_s", "b_z"}, {"c1q"}, "conv1/QuantizeLinear");
  AddNode(g, "DequantizeLinear", {"c1q", "b_s", "b_z"}, {"y"}, "dequant");
  return m;
}

// The same network in float.
onnx::ModelProto FloatTwin() {
  onnx::ModelProto m = test_util::NewModel("float");
  auto* g = m.mutable_graph();
  AddTensor(g->add_input(), "x", {1, 3, 8, 8});
  AddTensor(g->add_output(), "y", {1, 4, 8, 8});
  *g->add_initializer() = Floats("w0", {4, 3, 3, 3}, 0.01f);
  *g->add_initializer() = Floats("w1", {4, 4, 3, 3}, 0.01f);
  Pad(AddNode(g, "Conv", {"x", "w0"}, {"c0"}, "conv0"));
  AddNode(g, "Relu", {"c0"}, {"r0"}, "relu0");
  Pad(AddNode(g, "Conv", {"r0", "w1"}, {"y"}, "conv1"));
  return m;
}

// `m` imported as the importer reads a file's bytes.
Result<LoadedModel> LoadQuantized(const onnx::ModelProto& m, FusionLevel fusion = FusionLevel::kNone) {
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  ImportOptions o;
  o.fusion = fusion;
  return LoadOnnxModelFromBytes(bytes, "q.onnx", o);
}

const Operator& ByName(const OpGraph& g, const std::string& name) {
  for (const Operator& op : g.operators()) {
    if (op.name == name) return op;
  }
  ADD_FAILURE() << "no operator " << name;
  return g.op(0);
}

TEST(Qdq, TorchStyleGroupsAsTheFloatModelWithInt8Tensors) {
  auto q = LoadQuantized(TorchStyle());
  ASSERT_TRUE(q.ok()) << q.status().message();
  auto f = LoadQuantized(FloatTwin());
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(q->graph.size(), f->graph.size());
  EXPECT_EQ(q->graph.edges().size(), f->graph.edges().size());
  EXPECT_TRUE(IsQuantized(q->graph));
  EXPECT_FALSE(IsQuantized(f->graph));
  const Operator& conv0 = ByName(q->graph, "conv0");
  // The input's Q and the Cast → DQ in front of the Conv are part of it.
  EXPECT_EQ(conv0.node_types,
            (std::vector<std::string>{"QuantizeLinear", "Cast", "DequantizeLinear", "Conv"}));
  ASSERT_EQ(conv0.inputs.size(), 1u);
  EXPECT_EQ(conv0.inputs[0].name, "x");
  // fusion none: the ReLU is an operator of its own, so the Conv's output is still float.
  EXPECT_EQ(conv0.outputs[0].dtype, "float32");
  const Operator& relu = ByName(q->graph, "relu0");
  EXPECT_EQ(relu.node_types, (std::vector<std::string>{"Relu", "QuantizeLinear"}));
  EXPECT_EQ(relu.outputs[0].dtype, "uint8");
  EXPECT_EQ(relu.outputs[0].element_bytes, 1);
  EXPECT_EQ(relu.dtype, "uint8");
  const Operator& conv1 = ByName(q->graph, "conv1");
  EXPECT_EQ(conv1.node_types, (std::vector<std::string>{"Cast", "DequantizeLinear", "Conv", "QuantizeLinear",
                                                        "DequantizeLinear"}));
  EXPECT_EQ(conv1.inputs[0].name, "r0q");  // the uint8 tensor crosses, not its float image
  EXPECT_EQ(conv1.inputs[0].dtype, "uint8");
  EXPECT_EQ(conv1.outputs[0].name, "y");
  // The matrix view and MAC count are the float model's.
  for (const char* name : {"conv0", "conv1"}) {
    const Operator& a = ByName(q->graph, name);
    const Operator& b = ByName(f->graph, name);
    EXPECT_TRUE(a.has_weight) << name;
    EXPECT_EQ(a.weight_rows, b.weight_rows) << name;
    EXPECT_EQ(a.weight_cols, b.weight_cols) << name;
    EXPECT_EQ(a.n_mvm, b.n_mvm) << name;
    EXPECT_EQ(a.macs, b.macs) << name;
  }
  // Parameters count the stored int8 weight with its per-channel scale and zero point (108 + 16 + 4),
  // and the input's scale and zero point (4 + 1).
  EXPECT_EQ(conv0.param_bytes, 4 * 3 * 9 + 4 * 4 + 4 + 4 + 1);
  // The edge relu0 → conv1 carries 256 one-byte elements.
  bool found = false;
  for (const Edge& e : q->graph.edges()) {
    if (q->graph.op(e.from).name == "relu0" && q->graph.op(e.to).name == "conv1") {
      found = true;
      EXPECT_EQ(e.elements, 256);
      EXPECT_EQ(e.bytes, 256);
    }
  }
  EXPECT_TRUE(found);
}

TEST(Qdq, ActivationFusionKeepsTheFloatModelsGroups) {
  auto q = LoadQuantized(TorchStyle(), FusionLevel::kActivation);
  ASSERT_TRUE(q.ok()) << q.status().message();
  auto f = LoadQuantized(FloatTwin(), FusionLevel::kActivation);
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(q->graph.size(), 2);
  EXPECT_EQ(f->graph.size(), 2);
  const Operator& conv0 = ByName(q->graph, "conv0");
  // The whole DQ → Conv → Relu → Q unit: what ONNX Runtime runs as one QLinearConv.
  EXPECT_EQ(conv0.node_types, (std::vector<std::string>{"QuantizeLinear", "Cast", "DequantizeLinear", "Conv",
                                                        "Relu", "QuantizeLinear"}));
  EXPECT_EQ(conv0.outputs[0].dtype, "uint8");
  ASSERT_EQ(q->graph.edges().size(), 1u);
  EXPECT_EQ(q->graph.edges()[0].bytes, 256);
  EXPECT_EQ(f->graph.edges()[0].bytes, 4 * 256);
}

// ONNX Runtime's quantize_static form: one Q → DQ per tensor, the DQ shared
// by every reader; each reader gets its own copy.
TEST(Qdq, SharedDequantizeIsSplitPerReader) {
  onnx::ModelProto m = test_util::NewModel("ort_qdq");
  auto* g = m.mutable_graph();
  AddTensor(g->add_input(), "x", {1, 4, 8, 8});
  AddTensor(g->add_output(), "y", {1, 4, 8, 8});
  for (const char* p : {"in", "a", "b", "s"}) AddParams(g, p);
  AddNode(g, "Relu", {"x"}, {"r"}, "relu");
  AddNode(g, "QuantizeLinear", {"r", "in_s", "in_z"}, {"rq"}, "relu_q");
  AddNode(g, "DequantizeLinear", {"rq", "in_s", "in_z"}, {"rd"}, "relu_dq");
  AddQuantizedWeight(g, "wa", 4, 4);
  AddQuantizedWeight(g, "wb", 4, 4);
  Pad(AddNode(g, "Conv", {"rd", "wa"}, {"a"}, "conv_a"));
  Pad(AddNode(g, "Conv", {"rd", "wb"}, {"b"}, "conv_b"));
  AddNode(g, "QuantizeLinear", {"a", "a_s", "a_z"}, {"aq"}, "a_q");
  AddNode(g, "QuantizeLinear", {"b", "b_s", "b_z"}, {"bq"}, "b_q");
  AddNode(g, "DequantizeLinear", {"aq", "a_s", "a_z"}, {"ad"}, "a_dq");
  AddNode(g, "DequantizeLinear", {"bq", "b_s", "b_z"}, {"bd"}, "b_dq");
  AddNode(g, "Add", {"ad", "bd"}, {"s"}, "add");
  AddNode(g, "QuantizeLinear", {"s", "s_s", "s_z"}, {"sq"}, "s_q");
  AddNode(g, "DequantizeLinear", {"sq", "s_s", "s_z"}, {"y"}, "s_dq");
  auto q = LoadQuantized(m);
  ASSERT_TRUE(q.ok()) << q.status().message();
  ASSERT_EQ(q->graph.size(), 4);  // relu, conv_a, conv_b, add: the float model's operators
  const Operator& a = ByName(q->graph, "conv_a");
  const Operator& b = ByName(q->graph, "conv_b");
  EXPECT_EQ(a.node_types, (std::vector<std::string>{"DequantizeLinear", "Conv", "QuantizeLinear"}));
  EXPECT_EQ(b.node_types, (std::vector<std::string>{"DequantizeLinear", "Conv", "QuantizeLinear"}));
  EXPECT_NE(a.nodes[0], b.nodes[0]);  // each its own DequantizeLinear
  EXPECT_EQ(a.inputs[0].name, "rq");
  EXPECT_EQ(b.inputs[0].name, "rq");
  const Operator& add = ByName(q->graph, "add");
  EXPECT_EQ(add.inputs.size(), 2u);
  EXPECT_EQ(add.inputs[0].dtype, "uint8");
  EXPECT_EQ(add.outputs[0].name, "y");
  EXPECT_EQ(add.outputs[0].dtype, "float32");
  EXPECT_EQ(q->graph.edges().size(), 4u);
}

// QOperator form: the quantized operators are operators, with the matrix of
// the float operator they compute.
TEST(Qdq, QOperatorNodesHaveTheFloatMatrixView) {
  onnx::ModelProto m = test_util::NewModel("qop");
  auto* g = m.mutable_graph();
  AddTensor(g->add_input(), "x", {1, 3, 8, 8});
  AddTensor(g->add_output(), "y", {1, 4, 8, 8});
  AddTensor(g->add_output(), "z", {1, 8});
  for (const char* p : {"in", "c", "mm"}) AddParams(g, p);
  AddNode(g, "QuantizeLinear", {"x", "in_s", "in_z"}, {"xq"}, "quant");
  std::vector<int32_t> w(4 * 3 * 9, 3);
  *g->add_initializer() = Ints("w", TensorProto::INT8, {4, 3, 3, 3}, w);
  *g->add_initializer() = Ints("w_z", TensorProto::INT8, {4}, {0, 0, 0, 0});
  TensorProto ws;
  ws.set_name("w_s");
  ws.set_data_type(TensorProto::FLOAT);
  ws.add_dims(4);
  for (int i = 0; i < 4; ++i) ws.add_float_data(0.01f);
  *g->add_initializer() = ws;
  Pad(AddNode(g, "QLinearConv", {"xq", "in_s", "in_z", "w", "w_s", "w_z", "c_s", "c_z"}, {"cq"}, "qconv"));
  AddNode(g, "DequantizeLinear", {"cq", "c_s", "c_z"}, {"y"}, "dq");
  // A QLinearMatMul on a flattened pooled copy, and a MatMulInteger beside it.
  AddNode(g, "GlobalAveragePool", {"y"}, {"p"}, "pool");
  auto* flat = AddNode(g, "Flatten", {"p"}, {"pf"}, "flatten");
  (void)flat;
  AddNode(g, "QuantizeLinear", {"pf", "in_s", "in_z"}, {"pq"}, "pool_q");
  *g->add_initializer() = Ints("b", TensorProto::INT8, {4, 8}, std::vector<int32_t>(32, 1));
  *g->add_initializer() = Ints("b_z", TensorProto::INT8, {}, {0});
  *g->add_initializer() = Scalar("b_s", 0.01f);
  AddNode(g, "QLinearMatMul", {"pq", "in_s", "in_z", "b", "b_s", "b_z", "mm_s", "mm_z"}, {"mq"}, "qmatmul");
  AddNode(g, "MatMulInteger", {"pq", "b", "in_z", "b_z"}, {"mi"}, "matmulint");
  AddNode(g, "Cast", {"mi"}, {"mf"}, "mi_cast")->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("to");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(TensorProto::FLOAT);
    return a;
  }());
  AddNode(g, "DequantizeLinear", {"mq", "mm_s", "mm_z"}, {"md"}, "mm_dq");
  AddNode(g, "Add", {"md", "mf"}, {"z"}, "add");
  auto q = LoadQuantized(m);
  ASSERT_TRUE(q.ok()) << q.status().message();
  const Operator& conv = ByName(q->graph, "qconv");
  EXPECT_EQ(conv.type, "QLinearConv");
  EXPECT_EQ(FloatOpType(conv.type), "Conv");
  EXPECT_TRUE(conv.has_weight);
  EXPECT_EQ(conv.weight_rows, 27);
  EXPECT_EQ(conv.weight_cols, 4);
  EXPECT_EQ(conv.n_mvm, 64);
  EXPECT_EQ(conv.inputs[0].name, "x");  // the input's Q joined it
  EXPECT_EQ(conv.outputs[0].name, "y");
  for (const char* name : {"qmatmul", "matmulint"}) {
    const Operator& mm = ByName(q->graph, name);
    EXPECT_TRUE(mm.has_weight) << name;
    EXPECT_EQ(mm.weight_rows, 4) << name;
    EXPECT_EQ(mm.weight_cols, 8) << name;
    EXPECT_EQ(mm.n_mvm, 1) << name;
    EXPECT_EQ(mm.inputs[0].dtype, "uint8") << name;
  }
  EXPECT_EQ(ByName(q->graph, "qmatmul").outputs[0].dtype, "uint8");
  EXPECT_EQ(ByName(q->graph, "matmulint").outputs[0].dtype, "int32");
}

// --- bad quantization parameters: one clear error each -------------------------------

// x → Q → DQ → y with the parameters `edit` breaks.
std::string QdqError(const std::function<void(onnx::GraphProto*)>& edit) {
  onnx::ModelProto m = test_util::NewModel("bad");
  auto* g = m.mutable_graph();
  AddTensor(g->add_input(), "x", {1, 4, 8, 8});
  AddTensor(g->add_output(), "y", {1, 4, 8, 8});
  AddParams(g, "p");
  AddNode(g, "QuantizeLinear", {"x", "p_s", "p_z"}, {"xq"}, "quant");
  AddNode(g, "DequantizeLinear", {"xq", "p_s", "p_z"}, {"xd"}, "dequant");
  AddQuantizedWeight(g, "w", 4, 4);
  Pad(AddNode(g, "Conv", {"xd", "w"}, {"y"}, "conv"));
  edit(g);
  auto r = LoadQuantized(m);
  if (r.ok()) return "";
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
  EXPECT_EQ(r.status().message().rfind("q.onnx: ", 0), 0u) << r.status().message();
  return r.status().message();
}

TensorProto* Find(onnx::GraphProto* g, const std::string& name) {
  for (auto& t : *g->mutable_initializer()) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

TEST(QdqErrors, TheGoodModelImports) { EXPECT_EQ(QdqError([](onnx::GraphProto*) {}), ""); }

TEST(QdqErrors, ScaleAndZeroPointShapesDisagree) {
  std::string e = QdqError([](onnx::GraphProto* g) {
    Find(g, "w_z")->clear_dims();
    Find(g, "w_z")->add_dims(3);
    Find(g, "w_z")->clear_int32_data();
    for (int i = 0; i < 3; ++i) Find(g, "w_z")->add_int32_data(0);
  });
  EXPECT_NE(e.find("node 'w_dq' (DequantizeLinear)"), std::string::npos) << e;
  EXPECT_NE(e.find("scale 'w_s' has shape [4] but its zero point 'w_z' has shape [3]"), std::string::npos) << e;
}

TEST(QdqErrors, PerChannelCountDisagreesWithTheAxis) {
  std::string e = QdqError([](onnx::GraphProto* g) {
    for (auto& n : *g->mutable_node()) {
      if (n.name() == "w_dq") n.mutable_attribute(0)->set_i(1);
    }
    // axis 1 has 4 channels too: give the weight 2 input channels.
    *Find(g, "w_q") = Ints("w_q", TensorProto::INT8, {4, 2, 3, 3}, std::vector<int32_t>(72, 1));
  });
  EXPECT_NE(e.find("'w_dq'"), std::string::npos) << e;
  EXPECT_NE(e.find("has 4 values but the input 'w_q' (shape [4,2,3,3]) has 2 along axis 1"), std::string::npos) << e;
}

TEST(QdqErrors, AxisOutOfRange) {
  std::string e = QdqError([](onnx::GraphProto* g) {
    for (auto& n : *g->mutable_node()) {
      if (n.name() == "w_dq") n.mutable_attribute(0)->set_i(4);
    }
  });
  EXPECT_NE(e.find("axis 4 is outside the rank-4 input 'w_q' (valid: -4 to 3)"), std::string::npos) << e;
}

// One value is per tensor whatever the axis says (ONNX ignores it, as ONNX
// Runtime does): a quantizer's axis=1 on a rank-1 bias, here axis 7 on a
// rank-4 activation, with a scalar scale and with a one-element one.
TEST(QdqErrors, PerTensorParametersIgnoreTheAxis) {
  const auto with_axis = [](onnx::GraphProto* g) {
    for (auto& n : *g->mutable_node()) {
      if (n.name() == "dequant") {
        auto* a = n.add_attribute();
        a->set_name("axis");
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(7);
      }
    }
  };
  EXPECT_EQ(QdqError(with_axis), "");
  EXPECT_EQ(QdqError([&](onnx::GraphProto* g) {
              with_axis(g);
              Find(g, "p_s")->add_dims(1);
              Find(g, "p_z")->add_dims(1);
            }),
            "");
}

TEST(QdqErrors, ZeroOrNegativeScale) {
  std::string zero = QdqError([](onnx::GraphProto* g) { Find(g, "p_s")->set_float_data(0, 0.0f); });
  EXPECT_NE(zero.find("node 'quant' (QuantizeLinear)"), std::string::npos) << zero;
  EXPECT_NE(zero.find("scale 'p_s' holds 0"), std::string::npos) << zero;
  EXPECT_NE(zero.find("positive and finite"), std::string::npos) << zero;
  std::string negative = QdqError([](onnx::GraphProto* g) { Find(g, "w_s")->set_float_data(2, -0.5f); });
  EXPECT_NE(negative.find("scale 'w_s' holds -0.5 (element 2)"), std::string::npos) << negative;
}

TEST(QdqErrors, ZeroPointOutsideItsType) {
  std::string e = QdqError([](onnx::GraphProto* g) { Find(g, "p_z")->set_int32_data(0, 300); });
  EXPECT_NE(e.find("zero point 'p_z' holds 300 (element 0), outside uint8's range 0 to 255"), std::string::npos)
      << e;
  std::string f = QdqError([](onnx::GraphProto* g) {
    *Find(g, "p_z") = Scalar("p_z", 3.0f);
  });
  EXPECT_NE(f.find("zero point 'p_z' is float32"), std::string::npos) << f;
}

TEST(QdqErrors, QuantizeAndDequantizeTypesDisagree) {
  std::string e = QdqError([](onnx::GraphProto* g) {
    *g->add_initializer() = Ints("s8_z", TensorProto::INT8, {}, {0});
    for (auto& n : *g->mutable_node()) {
      if (n.name() == "dequant") n.set_input(2, "s8_z");
    }
  });
  EXPECT_NE(e.find("node 'dequant' (DequantizeLinear)"), std::string::npos) << e;
  EXPECT_NE(e.find("reads 'xq' as uint8, written by node 'quant' (QuantizeLinear)"), std::string::npos) << e;
  EXPECT_NE(e.find("zero point 's8_z' is int8"), std::string::npos) << e;
}

}  // namespace
}  // namespace hetplan
