// Tests of the ONNX importer on models built in memory: operator extraction,
// the matrix-vector view, fusion, aliasing, constant folding, --shape, and
// refusal of malformed, unsupported, oversized or unsafe input with a message
// that names the file, the element and (where there is one) the fix.
#include "hetplan/graph/onnx_import.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

namespace hetplan {
namespace {

namespace fs = std::filesystem;
using Dims = std::vector<int64_t>;
using Names = std::vector<std::string>;

// --- model builders ---------------------------------------------------------

onnx::ModelProto MakeModel(int opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("hetplan-test");
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

// A negative dim is symbolic and named dim_param.
void AddInput(onnx::ModelProto& m, const std::string& name, const Dims& dims,
              const std::string& dim_param = "", int elem = onnx::TensorProto::FLOAT) {
  auto* vi = m.mutable_graph()->add_input();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) {
    auto* dim = shape->add_dim();
    if (d < 0) dim->set_dim_param(dim_param);
    else dim->set_dim_value(d);
  }
}

void AddOutput(onnx::ModelProto& m, const std::string& name) {
  auto* vi = m.mutable_graph()->add_output();
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

// Empty `values` are filled with 0.01 to the size of `dims`.
onnx::TensorProto& AddInitializer(onnx::ModelProto& m, const std::string& name, const Dims& dims,
                                  std::vector<float> values = {}) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  if (values.empty()) values.assign(static_cast<size_t>(n), 0.01f);
  for (float v : values) t->add_float_data(v);
  return *t;
}

onnx::TensorProto& AddInt64Initializer(onnx::ModelProto& m, const std::string& name,
                                       const Dims& dims, const std::vector<int64_t>& values) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
  return *t;
}

// Moves the tensor's data to an external file reference (never written).
void MakeExternal(onnx::TensorProto& t, const std::string& location) {
  t.clear_float_data();
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = t.add_external_data();
  kv->set_key("location");
  kv->set_value(location);
}

onnx::AttributeProto IntAttr(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

onnx::AttributeProto IntsAttr(const std::string& name, const Dims& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}

onnx::NodeProto& AddNode(onnx::ModelProto& m, const std::string& op, const Names& inputs,
                         const Names& outputs, const std::string& name,
                         const std::vector<onnx::AttributeProto>& attrs = {}) {
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  for (const auto& a : attrs) *n->add_attribute() = a;
  return *n;
}

std::string Bytes(const onnx::ModelProto& m) {
  std::string s;
  EXPECT_TRUE(m.SerializeToString(&s));
  return s;
}

Result<LoadedModel> Import(const onnx::ModelProto& m, const ImportOptions& options = {}) {
  return LoadOnnxModelFromBytes(Bytes(m), "test.onnx", options);
}

ImportOptions Fused() {
  ImportOptions o;
  o.fusion = FusionLevel::kActivation;
  return o;
}

// x[1,3,8,8] → Conv(8x3x3x3, pad 1) → Relu → Conv(16x8x1x1) → y[1,16,8,8].
onnx::ModelProto ConvReluConv() {
  auto m = MakeModel();
  AddInput(m, "x", {1, 3, 8, 8});
  AddInitializer(m, "w1", {8, 3, 3, 3});
  AddInitializer(m, "w2", {16, 8, 1, 1});
  AddNode(m, "Conv", {"x", "w1"}, {"c1"}, "conv1",
          {IntsAttr("pads", {1, 1, 1, 1}), IntsAttr("kernel_shape", {3, 3})});
  AddNode(m, "Relu", {"c1"}, {"r1"}, "relu1");
  AddNode(m, "Conv", {"r1", "w2"}, {"y"}, "conv2");
  AddOutput(m, "y");
  return m;
}

// x[1,3,8,8] → Conv(8x3x3x3, pad 1) → c[1,8,8,8]; the caller adds the rest.
onnx::ModelProto ConvOnly() {
  auto m = MakeModel();
  AddInput(m, "x", {1, 3, 8, 8});
  AddInitializer(m, "w", {8, 3, 3, 3});
  AddNode(m, "Conv", {"x", "w"}, {"c"}, "conv", {IntsAttr("pads", {1, 1, 1, 1})});
  return m;
}

// x → Relu → y, a minimal valid model.
onnx::ModelProto Tiny(const Dims& dims = {1, 4}) {
  auto m = MakeModel();
  AddInput(m, "x", dims);
  AddNode(m, "Relu", {"x"}, {"y"}, "relu");
  AddOutput(m, "y");
  return m;
}

// Checks the code and that the message contains every part.
template <typename T>
::testing::AssertionResult Fails(const Result<T>& r, ErrorCode code,
                                 std::initializer_list<std::string_view> parts) {
  if (r.ok()) return ::testing::AssertionFailure() << "expected an error, got ok";
  const Status& s = r.status();
  if (s.code() != code) {
    return ::testing::AssertionFailure() << "code " << static_cast<int>(s.code()) << ", expected "
                                         << static_cast<int>(code) << ": " << s.message();
  }
  for (std::string_view p : parts) {
    if (s.message().find(p) == std::string::npos) {
      return ::testing::AssertionFailure() << "message lacks '" << p << "': " << s.message();
    }
  }
  return ::testing::AssertionSuccess();
}

const Edge* FindEdge(const OpGraph& g, int from, int to) {
  for (const auto& e : g.edges()) {
    if (e.from == from && e.to == to) return &e;
  }
  return nullptr;
}

// A file or folder under the temp dir, removed at the end of the test.
class TempPath {
 public:
  explicit TempPath(const std::string& stem)
      : path_(fs::temp_directory_path() /
              ("hetplan_import_test_" + std::to_string(::getpid()) + "_" + stem)) {}
  ~TempPath() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

// --- good models --------------------------------------------------------------

TEST(OnnxImport, ConvReluConvWithoutFusion) {
  auto r = Import(ConvReluConv());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const OpGraph& g = r->graph;
  ASSERT_EQ(g.size(), 3);
  EXPECT_EQ(r->onnx_nodes, 3);
  EXPECT_EQ(r->folded_nodes, 0);
  EXPECT_EQ(r->fusion, FusionLevel::kNone);
  EXPECT_EQ(g.op(0).type, "Conv");
  EXPECT_EQ(g.op(0).name, "conv1");
  EXPECT_EQ(g.op(1).type, "Relu");
  EXPECT_EQ(g.op(2).type, "Conv");

  const Operator& c1 = g.op(0);
  EXPECT_TRUE(c1.has_weight);
  EXPECT_EQ(c1.weight_rows, 27);
  EXPECT_EQ(c1.weight_cols, 8);
  EXPECT_EQ(c1.n_mvm, 64);  // 8x8 output pixels
  EXPECT_EQ(c1.kernel_h, 3);
  EXPECT_EQ(c1.kernel_w, 3);
  EXPECT_EQ(c1.input_elements, 3 * 8 * 8);
  EXPECT_EQ(c1.output_elements, 8 * 8 * 8);
  EXPECT_EQ(c1.macs, 8 * 8 * 8 * 27);
  EXPECT_EQ(c1.param_bytes, 8 * 27 * 4);
  ASSERT_EQ(c1.inputs.size(), 1u);
  EXPECT_EQ(c1.inputs[0].name, "x");

  const Operator& c2 = g.op(2);
  EXPECT_EQ(c2.weight_rows, 8);
  EXPECT_EQ(c2.weight_cols, 16);
  EXPECT_EQ(c2.n_mvm, 64);
  EXPECT_EQ(c2.output_elements, 16 * 8 * 8);
  EXPECT_EQ(c2.macs, 16 * 8 * 8 * 8);
  EXPECT_FALSE(g.op(1).has_weight);

  ASSERT_EQ(g.edges().size(), 2u);
  const Edge* e01 = FindEdge(g, 0, 1);
  const Edge* e12 = FindEdge(g, 1, 2);
  ASSERT_TRUE(e01 && e12);
  EXPECT_EQ(e01->tensors, Names{"c1"});
  EXPECT_EQ(e01->elements, 512);
  EXPECT_EQ(e01->bytes, 512 * 4);
  EXPECT_EQ(e12->elements, 512);
  EXPECT_TRUE(g.reaches(0, 2));
  ASSERT_EQ(g.graph_inputs().size(), 1u);
  EXPECT_EQ(g.graph_inputs()[0].elements, 192);
  ASSERT_EQ(g.graph_outputs().size(), 1u);
  EXPECT_EQ(g.graph_outputs()[0].shape, (Dims{1, 16, 8, 8}));
  EXPECT_EQ(r->sha256.size(), 64u);
}

TEST(OnnxImport, ConvReluConvWithActivationFusion) {
  auto r = Import(ConvReluConv(), Fused());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const OpGraph& g = r->graph;
  ASSERT_EQ(g.size(), 2);
  EXPECT_EQ(g.op(0).nodes, (Names{"conv1", "relu1"}));
  EXPECT_EQ(g.op(0).node_types, (Names{"Conv", "Relu"}));
  EXPECT_EQ(g.op(0).output_elements, 512);
  ASSERT_EQ(g.op(0).outputs.size(), 1u);
  EXPECT_EQ(g.op(0).outputs[0].name, "r1");
  EXPECT_EQ(g.op(0).weight_rows, 27);
  ASSERT_EQ(g.edges().size(), 1u);
  EXPECT_EQ(g.edges()[0].tensors, Names{"r1"});
  EXPECT_EQ(g.edges()[0].elements, 512);
}

TEST(OnnxImport, GemmTransBAfterFlatten) {
  auto m = MakeModel();
  AddInput(m, "x", {2, 4, 4, 4});
  AddInitializer(m, "w", {10, 64});
  AddInitializer(m, "b", {10});
  AddNode(m, "Flatten", {"x"}, {"f"}, "flatten");
  AddNode(m, "Gemm", {"f", "w", "b"}, {"y"}, "fc", {IntAttr("transB", 1)});
  AddOutput(m, "y");
  auto r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->graph.size(), 2);
  const Operator& fc = r->graph.op(1);
  EXPECT_EQ(fc.type, "Gemm");
  EXPECT_TRUE(fc.has_weight);
  EXPECT_EQ(fc.weight_rows, 64);
  EXPECT_EQ(fc.weight_cols, 10);
  EXPECT_EQ(fc.n_mvm, 2);
  EXPECT_EQ(fc.macs, 2 * 64 * 10);
  EXPECT_EQ(fc.param_bytes, (640 + 10) * 4);
  EXPECT_EQ(fc.output_elements, 20);
}

TEST(OnnxImport, MatMulWithConstantAndActivationOperands) {
  auto m = MakeModel();
  AddInput(m, "x", {1, 5, 64});
  AddInput(m, "q", {1, 4, 5, 16});
  AddInput(m, "k", {1, 4, 16, 5});
  AddInitializer(m, "w", {64, 32});
  AddNode(m, "MatMul", {"x", "w"}, {"y"}, "proj");
  AddNode(m, "MatMul", {"q", "k"}, {"s"}, "qk");
  AddOutput(m, "y");
  AddOutput(m, "s");
  auto r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->graph.size(), 2);
  const Operator& proj = r->graph.op(0);
  EXPECT_TRUE(proj.has_weight);
  EXPECT_EQ(proj.weight_rows, 64);
  EXPECT_EQ(proj.weight_cols, 32);
  EXPECT_EQ(proj.n_mvm, 5);
  EXPECT_EQ(proj.macs, 5 * 32 * 64);
  const Operator& qk = r->graph.op(1);
  EXPECT_FALSE(qk.has_weight);
  EXPECT_EQ(qk.weight_rows, 0);
  EXPECT_EQ(qk.macs, 4 * 5 * 5 * 16);
  EXPECT_EQ(qk.input_elements, 2 * 4 * 5 * 16);
  EXPECT_TRUE(r->graph.parallelizable(0, 1));
}

TEST(OnnxImport, FusesConvBatchNormRelu) {
  auto m = ConvOnly();
  for (const char* p : {"s", "b", "mean", "var"}) AddInitializer(m, p, {8}, std::vector<float>(8, 1.0f));
  AddNode(m, "BatchNormalization", {"c", "s", "b", "mean", "var"}, {"bn"}, "bn");
  AddNode(m, "Relu", {"bn"}, {"y"}, "relu");
  AddOutput(m, "y");
  auto r = Import(m, Fused());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->graph.size(), 1);
  EXPECT_EQ(r->graph.op(0).type, "Conv");
  EXPECT_EQ(r->graph.op(0).nodes, (Names{"conv", "bn", "relu"}));
  EXPECT_EQ(r->graph.op(0).param_bytes, (216 + 32) * 4);
  EXPECT_EQ(Import(m)->graph.size(), 3);
}

TEST(OnnxImport, FusesConvSiLU) {
  auto m = ConvOnly();
  AddNode(m, "Sigmoid", {"c"}, {"sig"}, "sigmoid");
  AddNode(m, "Mul", {"c", "sig"}, {"y"}, "mul");
  AddOutput(m, "y");
  auto r = Import(m, Fused());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->graph.size(), 1);
  EXPECT_EQ(r->graph.op(0).nodes, (Names{"conv", "sigmoid", "mul"}));
  ASSERT_EQ(r->graph.op(0).outputs.size(), 1u);
  EXPECT_EQ(r->graph.op(0).outputs[0].name, "y");
}

TEST(OnnxImport, FusesMatMulBiasErfGelu) {
  auto m = MakeModel();
  AddInput(m, "x", {1, 5, 64});
  AddInitializer(m, "w", {64, 32});
  AddInitializer(m, "bias", {32});
  AddInitializer(m, "sqrt2", {}, {1.4142f});
  AddInitializer(m, "one", {}, {1.0f});
  AddInitializer(m, "half", {}, {0.5f});
  AddNode(m, "MatMul", {"x", "w"}, {"mm"}, "matmul");
  AddNode(m, "Add", {"mm", "bias"}, {"a"}, "add_bias");
  AddNode(m, "Div", {"a", "sqrt2"}, {"d"}, "div");
  AddNode(m, "Erf", {"d"}, {"e"}, "erf");
  AddNode(m, "Add", {"e", "one"}, {"e1"}, "add_one");
  AddNode(m, "Mul", {"a", "e1"}, {"g"}, "mul");
  AddNode(m, "Mul", {"g", "half"}, {"y"}, "mul_half");
  AddOutput(m, "y");
  auto r = Import(m, Fused());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->graph.size(), 1);
  const Operator& op = r->graph.op(0);
  EXPECT_EQ(op.type, "MatMul");
  EXPECT_EQ(op.nodes, (Names{"matmul", "add_bias", "div", "erf", "add_one", "mul", "mul_half"}));
  EXPECT_EQ(op.n_mvm, 5);
  EXPECT_EQ(op.output_elements, 160);
  EXPECT_EQ(Import(m)->graph.size(), 7);
}

TEST(OnnxImport, DoesNotFuseConvWithTwoConsumers) {
  auto m = ConvOnly();
  AddNode(m, "Relu", {"c"}, {"r"}, "relu");
  AddNode(m, "Add", {"c", "r"}, {"y"}, "add");
  AddOutput(m, "y");
  auto r = Import(m, Fused());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->graph.size(), 3);
  EXPECT_EQ(r->graph.op(0).nodes, Names{"conv"});
  EXPECT_EQ(r->graph.op(1).type, "Relu");
  EXPECT_TRUE(FindEdge(r->graph, 0, 1) && FindEdge(r->graph, 0, 2) && FindEdge(r->graph, 1, 2));
}

TEST(OnnxImport, DoesNotFuseConvWhoseOutputIsAGraphOutput) {
  auto m = ConvOnly();
  AddNode(m, "Relu", {"c"}, {"y"}, "relu");
  AddOutput(m, "c");
  AddOutput(m, "y");
  auto r = Import(m, Fused());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->graph.size(), 2);
  EXPECT_EQ(r->graph.op(0).nodes, Names{"conv"});
  EXPECT_EQ(r->graph.op(1).nodes, Names{"relu"});
}

TEST(OnnxImport, IdentityAndDropoutAreAliasesNotOperators) {
  for (const char* alias : {"Identity", "Dropout"}) {
    SCOPED_TRACE(alias);
    auto m = ConvOnly();
    AddNode(m, alias, {"c"}, {"c_alias"}, "alias");
    AddNode(m, "Relu", {"c_alias"}, {"y"}, "relu");
    AddOutput(m, "y");
    auto r = Import(m);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->graph.size(), 2);
    EXPECT_EQ(r->graph.op(0).type, "Conv");
    EXPECT_EQ(r->graph.op(1).type, "Relu");
    ASSERT_EQ(r->graph.edges().size(), 1u);
    const Edge& e = r->graph.edges()[0];
    EXPECT_EQ(e.from, 0);
    EXPECT_EQ(e.to, 1);
    EXPECT_EQ(e.tensors, Names{"c"});
    EXPECT_EQ(e.elements, 512);
  }
}

TEST(OnnxImport, FoldsShapeSubgraphIntoReshape) {
  auto m = MakeModel();
  AddInput(m, "x", {1, 4, 6});
  AddInt64Initializer(m, "idx0", {}, {0});
  AddInt64Initializer(m, "axes0", {1}, {0});
  AddInt64Initializer(m, "minus1", {1}, {-1});
  AddNode(m, "Shape", {"x"}, {"s"}, "shape");
  AddNode(m, "Gather", {"s", "idx0"}, {"n"}, "gather", {IntAttr("axis", 0)});
  AddNode(m, "Unsqueeze", {"n", "axes0"}, {"n1"}, "unsqueeze");
  AddNode(m, "Concat", {"n1", "minus1"}, {"target"}, "concat", {IntAttr("axis", 0)});
  AddNode(m, "Reshape", {"x", "target"}, {"flat"}, "reshape");
  AddNode(m, "Relu", {"flat"}, {"y"}, "relu");
  AddOutput(m, "y");
  auto r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->onnx_nodes, 6);
  EXPECT_GE(r->folded_nodes, 4);
  EXPECT_EQ(r->model->graph().node_size(), 2);
  const OpGraph& g = r->graph;
  ASSERT_EQ(g.size(), 2);
  EXPECT_EQ(g.op(0).type, "Reshape");
  EXPECT_EQ(g.op(1).type, "Relu");
  ASSERT_EQ(g.op(0).outputs.size(), 1u);
  EXPECT_EQ(g.op(0).outputs[0].shape, (Dims{1, 24}));
  ASSERT_EQ(g.op(0).inputs.size(), 1u);  // the folded shape is a constant, not an input
  EXPECT_EQ(g.op(0).inputs[0].name, "x");
  ASSERT_EQ(g.edges().size(), 1u);
  EXPECT_EQ(g.edges()[0].elements, 24);
}

TEST(OnnxImport, SortsNodesListedBeforeTheirProducers) {
  auto m = MakeModel();
  AddInput(m, "x", {1, 3, 8, 8});
  AddInitializer(m, "w", {8, 3, 3, 3});
  AddNode(m, "Relu", {"c"}, {"y"}, "relu");
  AddNode(m, "Conv", {"x", "w"}, {"c"}, "conv", {IntsAttr("pads", {1, 1, 1, 1})});
  AddOutput(m, "y");
  auto r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->graph.size(), 2);
  EXPECT_EQ(r->graph.op(0).name, "conv");
  EXPECT_EQ(r->graph.op(1).name, "relu");
  EXPECT_TRUE(FindEdge(r->graph, 0, 1));
  EXPECT_EQ(r->model->graph().node(0).name(), "conv");
}

TEST(OnnxImport, SymbolicBatchNeedsShapeOption) {
  auto m = ConvReluConv();
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()
      ->mutable_dim(0)->set_dim_param("batch");
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kInvalidArgument, {"test.onnx", "'x'", "batch", "--shape"}));

  ImportOptions o;
  o.input_shapes["x"] = {2, 3, 8, 8};
  auto r = Import(m, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->graph.op(0).n_mvm, 2 * 64);
  EXPECT_EQ(r->graph.op(0).input_elements, 2 * 192);

  ImportOptions wrong = o;  // a typo next to a correct --shape
  wrong.input_shapes["image"] = {1, 3, 8, 8};
  EXPECT_TRUE(Fails(Import(m, wrong), ErrorCode::kInvalidArgument,
                    {"test.onnx", "'image'", "not a graph input", "inputs are: x"}));

  ImportOptions rank;
  rank.input_shapes["x"] = {1, 3};
  EXPECT_TRUE(Fails(Import(m, rank), ErrorCode::kInvalidArgument, {"test.onnx", "--shape x", "rank 4"}));
}

TEST(OnnxImport, ParseShapeOverride) {
  auto good = ParseShapeOverride("x=1x3");
  ASSERT_TRUE(good.ok()) << good.status().message();
  EXPECT_EQ(good->first, "x");
  EXPECT_EQ(good->second, (Dims{1, 3}));
  auto img = ParseShapeOverride("input.1=1x3x224x224");
  ASSERT_TRUE(img.ok());
  EXPECT_EQ(img->first, "input.1");
  EXPECT_EQ(img->second, (Dims{1, 3, 224, 224}));

  for (const char* bad : {"x=", "=1x2", "x=1xx2", "x=0x3", "x=ax3", "x", "x=1x3x", "x=-1x3",
                          "x=99999999999999999x2"}) {
    auto r = ParseShapeOverride(bad);
    EXPECT_TRUE(Fails(r, ErrorCode::kInvalidArgument, {"--shape", bad})) << bad;
  }
  EXPECT_TRUE(Fails(ParseShapeOverride("x=ax3"), ErrorCode::kInvalidArgument, {"'a'", "x=1x3x224x224"}));
}

TEST(OnnxImport, ParseFusionLevel) {
  EXPECT_EQ(ParseFusionLevel("none").value(), FusionLevel::kNone);
  EXPECT_EQ(ParseFusionLevel("activation").value(), FusionLevel::kActivation);
  EXPECT_TRUE(Fails(ParseFusionLevel("all"), ErrorCode::kInvalidArgument, {"'all'", "none or activation"}));
  EXPECT_EQ(ToString(FusionLevel::kActivation), "activation");
}

// --- malformed files ----------------------------------------------------------

TEST(OnnxImport, RejectsEmptyBytes) {
  EXPECT_TRUE(Fails(LoadOnnxModelFromBytes("", "test.onnx"), ErrorCode::kParseError,
                    {"test.onnx", "empty"}));
}

TEST(OnnxImport, RejectsGarbageBytes) {
  std::mt19937 rng(7);
  std::string garbage(4096, '\0');
  for (char& c : garbage) c = static_cast<char>(rng() & 0xff);
  EXPECT_TRUE(Fails(LoadOnnxModelFromBytes(garbage, "test.onnx"), ErrorCode::kParseError, {"test.onnx"}));
  EXPECT_TRUE(Fails(LoadOnnxModelFromBytes(std::string(64, '\xff'), "test.onnx"), ErrorCode::kParseError,
                    {"test.onnx", "not a valid ONNX protobuf"}));
}

TEST(OnnxImport, RejectsTruncatedModel) {
  std::string bytes = Bytes(ConvReluConv());
  auto r = LoadOnnxModelFromBytes(std::string_view(bytes).substr(0, bytes.size() / 2), "test.onnx");
  EXPECT_TRUE(Fails(r, ErrorCode::kParseError, {"test.onnx", "truncated"}));
}

TEST(OnnxImport, RejectsProtobufThatIsNotAModel) {
  onnx::TensorProto t;
  t.set_name("t");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(3);
  for (float v : {1.f, 2.f, 3.f}) t.add_float_data(v);
  EXPECT_TRUE(Fails(LoadOnnxModelFromBytes(t.SerializeAsString(), "test.onnx"), ErrorCode::kParseError,
                    {"test.onnx"}));

  auto m = MakeModel();
  m.clear_graph();
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kParseError, {"test.onnx", "no graph"}));
}

TEST(OnnxImport, RejectsGraphWithoutNodes) {
  auto m = MakeModel();
  AddInput(m, "x", {1, 4});
  AddOutput(m, "x");
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kParseError, {"test.onnx", "no nodes"}));
}

TEST(OnnxImport, RejectsModelWithoutOpset) {
  auto m = Tiny();
  m.clear_opset_import();
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kParseError, {"test.onnx", "opset_import"}));
}

TEST(OnnxImport, RejectsCycle) {
  auto m = MakeModel();
  AddInput(m, "x", {1, 4});
  AddNode(m, "Add", {"x", "b_out"}, {"a_out"}, "A");
  AddNode(m, "Relu", {"a_out"}, {"b_out"}, "B");
  AddOutput(m, "a_out");
  auto r = Import(m);
  EXPECT_TRUE(Fails(r, ErrorCode::kParseError, {"test.onnx", "cycle"}));
  const std::string& msg = r.status().message();
  EXPECT_TRUE(msg.find("'A'") != std::string::npos || msg.find("'B'") != std::string::npos) << msg;
}

TEST(OnnxImport, CycleMessageNamesANodeOnTheCycle) {
  // "C" only reads from the cycle A ⇄ B; it is listed first.
  auto m = MakeModel();
  AddInput(m, "x", {1, 4});
  AddNode(m, "Relu", {"a_out"}, {"c_out"}, "C");
  AddNode(m, "Add", {"x", "b_out"}, {"a_out"}, "A");
  AddNode(m, "Relu", {"a_out"}, {"b_out"}, "B");
  AddOutput(m, "c_out");
  auto r = Import(m);
  ASSERT_TRUE(Fails(r, ErrorCode::kParseError, {"test.onnx", "cycle"}));
  const std::string& msg = r.status().message();
  EXPECT_EQ(msg.find("'C'"), std::string::npos) << msg;
  EXPECT_TRUE(msg.find("'A'") != std::string::npos || msg.find("'B'") != std::string::npos) << msg;
}

TEST(OnnxImport, RejectsSelfLoop) {
  auto m = MakeModel();
  AddInput(m, "x", {1, 4});
  AddNode(m, "Add", {"x", "a"}, {"a"}, "self");
  AddOutput(m, "a");
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kParseError, {"test.onnx", "'self'", "cycle"}));
}

TEST(OnnxImport, RejectsDanglingInput) {
  auto m = Tiny();
  AddNode(m, "Add", {"y", "ghost"}, {"z"}, "add");
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kParseError, {"test.onnx", "'add'", "'ghost'", "dangling"}));
}

TEST(OnnxImport, RejectsTwoProducersOfOneTensor) {
  auto m = Tiny();
  AddNode(m, "Sigmoid", {"x"}, {"y"}, "sigmoid");
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kParseError, {"test.onnx", "'sigmoid'", "'y'", "one producer"}));
  auto shadow = Tiny();
  AddInitializer(shadow, "y", {1, 4});
  EXPECT_TRUE(Fails(Import(shadow), ErrorCode::kParseError, {"test.onnx", "'y'"}));
}

TEST(OnnxImport, RejectsGraphOutputWithoutProducer) {
  auto m = Tiny();
  AddOutput(m, "nowhere");
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kParseError, {"test.onnx", "'nowhere'"}));
}

// --- unsupported content ----------------------------------------------------

TEST(OnnxImport, RejectsControlFlow) {
  for (const char* op : {"Loop", "If", "Scan"}) {
    SCOPED_TRACE(op);
    auto m = Tiny();
    AddInput(m, "cond", {}, "", onnx::TensorProto::BOOL);
    AddNode(m, op, {"cond"}, {"z"}, std::string("flow_") + op);
    EXPECT_TRUE(Fails(Import(m), ErrorCode::kUnsupported,
                      {"test.onnx", std::string("'flow_") + op + "'", "control flow"}));
  }
}

TEST(OnnxImport, RejectsSubgraphAttribute) {
  auto m = Tiny();
  onnx::AttributeProto a;
  a.set_name("body");
  a.set_type(onnx::AttributeProto::GRAPH);
  a.mutable_g()->set_name("inner");
  AddNode(m, "Relu", {"y"}, {"z"}, "sneaky", {a});
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kUnsupported, {"test.onnx", "'sneaky'", "'body'"}));
}

TEST(OnnxImport, RejectsCustomDomainNode) {
  auto m = Tiny();
  AddNode(m, "MyOp", {"y"}, {"z"}, "custom").set_domain("com.example");
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kUnsupported, {"test.onnx", "'custom'", "'com.example'"}));
}

TEST(OnnxImport, RejectsUnknownOpsetDomain) {
  auto m = Tiny();
  auto* o = m.add_opset_import();
  o->set_domain("com.vendor");
  o->set_version(1);
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kUnsupported, {"test.onnx", "'com.vendor'", "export without"}));
}

TEST(OnnxImport, RejectsUnknownOpType) {
  auto m = Tiny();
  AddNode(m, "FooBar", {"y"}, {"z"}, "foo");
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kUnsupported, {"test.onnx", "'foo'", "'FooBar'", "opset 13"}));
}

TEST(OnnxImport, RejectsOutputWithoutStaticShape) {
  // The Reshape target is a graph input, so its output shape is unknowable.
  auto m = MakeModel();
  AddInput(m, "x", {1, 4, 6});
  AddInput(m, "target", {2}, "", onnx::TensorProto::INT64);
  AddNode(m, "Reshape", {"x", "target"}, {"flat"}, "reshape");
  AddNode(m, "Relu", {"flat"}, {"y"}, "relu");
  AddOutput(m, "y");
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kUnsupported,
                    {"test.onnx", "'reshape'", "'flat'", "no static shape", "--shape"}));
}

TEST(OnnxImport, RejectsZeroSizedInput) {
  auto m = Tiny({1, 0, 4});
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kInvalidArgument, {"test.onnx", "'x'", "dim 1"}));
  // Given through the options (the CLI parser refuses 0, the API does not).
  ImportOptions o;
  o.input_shapes["x"] = {1, 0, 4};
  EXPECT_TRUE(Fails(Import(m, o), ErrorCode::kUnsupported, {"test.onnx", "'x'", "zero elements"}));
}

TEST(OnnxImport, RejectsEnormousTensor) {
  auto m = Tiny({1, 1024, 1024, 1024, 1024});
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kLimitExceeded, {"test.onnx", "'x'", "1,1024,1024,1024,1024"}));
  ImportOptions small;
  small.max_tensor_elements = 3;
  EXPECT_TRUE(Fails(Import(Tiny({1, 4}), small), ErrorCode::kLimitExceeded, {"test.onnx", "'x'"}));
}

TEST(OnnxImport, RejectsEnormousUnusedInput) {
  // No operator reads it, but graph_inputs() reports its size: no silent overflow.
  auto m = Tiny();
  AddInput(m, "huge", {1 << 30, 1 << 30, 1 << 30});
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kLimitExceeded, {"test.onnx", "'huge'"}));
}

TEST(OnnxImport, RejectsEnormousConstant) {
  // A weight declared [2^32, 2^32] (its data external, never read).
  auto m = MakeModel();
  AddInput(m, "x", {1, int64_t{1} << 32});
  auto& w = AddInitializer(m, "w", {1, 1});
  w.clear_dims();
  w.add_dims(int64_t{1} << 32);
  w.add_dims(int64_t{1} << 32);
  MakeExternal(w, "w.bin");
  AddNode(m, "MatMul", {"x", "w"}, {"y"}, "matmul");
  AddOutput(m, "y");
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kLimitExceeded, {"test.onnx", "'matmul'", "'w'"}));
}

TEST(OnnxImport, EnforcesOperatorAndFileLimits) {
  ImportOptions ops;
  ops.max_operators = 2;
  EXPECT_TRUE(Fails(Import(ConvReluConv(), ops), ErrorCode::kLimitExceeded,
                    {"test.onnx", "3 operators", "--max-operators"}));
  ImportOptions bytes;
  bytes.max_file_bytes = 16;
  EXPECT_TRUE(Fails(Import(ConvReluConv(), bytes), ErrorCode::kLimitExceeded, {"test.onnx", "limit of 16"}));
}

// --- external data -------------------------------------------------------------

TEST(OnnxImport, RefusesExternalDataOutsideTheModelFolder) {
  for (const char* loc : {"../../etc/passwd", "/etc/passwd", "weights/../../secret.bin", "C:\\w.bin"}) {
    SCOPED_TRACE(loc);
    auto m = ConvOnly();
    AddOutput(m, "c");
    MakeExternal(*m.mutable_graph()->mutable_initializer(0), loc);
    EXPECT_TRUE(Fails(Import(m), ErrorCode::kUnsupported, {"test.onnx", "'w'", loc, "refusing"}));
  }
  // The same check covers tensors inside Constant nodes.
  auto m = Tiny();
  onnx::AttributeProto value;
  value.set_name("value");
  value.set_type(onnx::AttributeProto::TENSOR);
  value.mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  MakeExternal(*value.mutable_t(), "/etc/shadow");
  AddNode(m, "Constant", {}, {"k"}, "const", {value});
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kUnsupported, {"test.onnx", "/etc/shadow"}));
}

TEST(OnnxImport, NeverReadsExternalData) {
  // The referenced file does not exist: the import works from dims alone.
  auto m = ConvOnly();
  AddOutput(m, "c");
  MakeExternal(*m.mutable_graph()->mutable_initializer(0), "weights_that_do_not_exist.bin");
  auto r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->graph.op(0).has_weight);
  EXPECT_EQ(r->graph.op(0).weight_rows, 27);
}

// --- files ---------------------------------------------------------------------

TEST(OnnxImport, LoadsFromFile) {
  TempPath file("model.onnx");
  std::string bytes = Bytes(ConvReluConv());
  {
    std::ofstream f(file.str(), std::ios::binary);
    f << bytes;
  }
  auto r = LoadOnnxModel(file.str());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->path, file.str());
  EXPECT_EQ(r->graph.size(), 3);
  auto same = LoadOnnxModelFromBytes(bytes, "test.onnx");
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(r->sha256, same->sha256);

  // Errors from a file name the path rather than a label.
  {
    std::ofstream f(file.str(), std::ios::binary | std::ios::trunc);
    f << bytes.substr(0, bytes.size() / 2);
  }
  EXPECT_TRUE(Fails(LoadOnnxModel(file.str()), ErrorCode::kParseError, {file.str()}));
}

TEST(OnnxImport, MissingFileIsNotFound) {
  TempPath missing("missing.onnx");
  EXPECT_TRUE(Fails(LoadOnnxModel(missing.str()), ErrorCode::kNotFound, {missing.str(), "check the path"}));
}

TEST(OnnxImport, DirectoryIsAnError) {
  TempPath dir("dir.onnx");
  ASSERT_TRUE(fs::create_directories(dir.str()));
  EXPECT_TRUE(Fails(LoadOnnxModel(dir.str()), ErrorCode::kIoError, {dir.str(), "folder"}));
}

// --- robustness ------------------------------------------------------------------

TEST(OnnxImport, MisSizedRawDataShapeDoesNotCrash) {
  // A Reshape target declared [2] but holding one int64 of raw data.
  auto m = MakeModel();
  AddInput(m, "x", {1, 4, 6});
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("target");
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(2);
  int64_t one = 24;
  t->set_raw_data(std::string(reinterpret_cast<const char*>(&one), sizeof one));
  AddNode(m, "Reshape", {"x", "target"}, {"flat"}, "reshape");
  AddNode(m, "Relu", {"flat"}, {"y"}, "relu");
  AddOutput(m, "y");
  auto r = Import(m);
  if (!r.ok()) {
    EXPECT_NE(r.status().message().find("test.onnx"), std::string::npos) << r.status().message();
  }

  // Huge declared dims with a tiny payload: no overflow, no giant allocation.
  t->clear_dims();
  t->add_dims(int64_t{1} << 40);
  t->add_dims(int64_t{1} << 40);
  auto huge = Import(m);
  if (!huge.ok()) {
    EXPECT_NE(huge.status().message().find("test.onnx"), std::string::npos) << huge.status().message();
  }
}

TEST(OnnxImport, MalformedShapeArithmeticDoesNotCrash) {
  // Slice/Range with empty constant operands must not escape as exceptions.
  auto m = MakeModel();
  AddInput(m, "x", {1, 4, 6});
  AddInt64Initializer(m, "empty", {0}, {});
  AddInt64Initializer(m, "one", {1}, {1});
  AddNode(m, "Shape", {"x"}, {"s"}, "shape");
  AddNode(m, "Slice", {"s", "empty", "one"}, {"sl"}, "slice");
  AddNode(m, "Reshape", {"x", "sl"}, {"flat"}, "reshape");
  AddOutput(m, "flat");
  auto r = Import(m);
  if (!r.ok()) {
    EXPECT_NE(r.status().message().find("test.onnx"), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace hetplan
