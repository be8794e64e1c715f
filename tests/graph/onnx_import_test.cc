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
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/defs/schema.h>
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

onnx::AttributeProto IntsAttr(const std::string& name, const Dims& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}

onnx::AttributeProto IntAttr(const std::string& name, int64_t v) {
  onnx::AttributeProto a = IntsAttr(name, {});
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
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

std::string Bytes(const onnx::ModelProto& m) { return m.SerializeAsString(); }

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
    return ::testing::AssertionFailure() << "code " << static_cast<int>(s.code()) << " (expected "
                                         << static_cast<int>(code) << "): " << s.message();
  }
  for (std::string_view p : parts) {
    if (s.message().find(p) == std::string::npos) {
      return ::testing::AssertionFailure() << "message lacks '" << p << "': " << s.message();
    }
  }
  return ::testing::AssertionSuccess();
}
#define ASSERT_OK(r) ASSERT_TRUE((r).ok()) << (r).status().message()

// For a test that only demands "no crash": an error, if any, names the file.
template <typename T>
void ExpectOkOrNamesFile(const Result<T>& r) {
  if (!r.ok()) {
    EXPECT_NE(r.status().message().find("test.onnx"), std::string::npos) << r.status().message();
  }
}

// The matrix-vector view: weight_rows, weight_cols, n_mvm, macs.
Dims Mvm(const Operator& op) { return {op.weight_rows, op.weight_cols, op.n_mvm, op.macs}; }

// The ONNX nodes each operator covers, in operator order.
std::vector<Names> Units(const OpGraph& g) {
  std::vector<Names> units;
  for (const auto& op : g.operators()) units.push_back(op.nodes);
  return units;
}

Names Types(const OpGraph& g) {
  Names types;
  for (const auto& op : g.operators()) types.push_back(op.type);
  return types;
}

const Edge* FindEdge(const OpGraph& g, int from, int to) {
  for (const auto& e : g.edges()) {
    if (e.from == from && e.to == to) return &e;
  }
  return nullptr;
}

// A path under the temp dir, removed (file or folder) when the test ends.
struct TempPath {
  explicit TempPath(const std::string& stem)
      : path((fs::temp_directory_path() /
              ("hetplan_import_test_" + std::to_string(::getpid()) + "_" + stem)).string()) {}
  ~TempPath() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string path;
};

// --- good models --------------------------------------------------------------

TEST(OnnxImport, ConvReluConvWithoutFusion) {
  auto r = Import(ConvReluConv());
  ASSERT_OK(r);
  const OpGraph& g = r->graph;
  EXPECT_EQ(Types(g), (Names{"Conv", "Relu", "Conv"}));
  EXPECT_EQ(g.op(0).name, "conv1");
  EXPECT_EQ(r->onnx_nodes, 3);
  EXPECT_EQ(r->folded_nodes, 0);
  EXPECT_EQ(r->sha256.size(), 64u);

  const Operator& c1 = g.op(0);
  EXPECT_TRUE(c1.has_weight);
  EXPECT_EQ(Mvm(c1), (Dims{27, 8, 8 * 8, 8 * 8 * 8 * 27}));  // n_mvm = H_out·W_out
  EXPECT_EQ((Dims{c1.kernel_h, c1.kernel_w}), (Dims{3, 3}));
  EXPECT_EQ(c1.input_elements, 3 * 8 * 8);
  EXPECT_EQ(c1.output_elements, 8 * 8 * 8);
  EXPECT_EQ(c1.param_bytes, 8 * 27 * 4);
  ASSERT_EQ(c1.inputs.size(), 1u);
  EXPECT_EQ(c1.inputs[0].name, "x");
  EXPECT_FALSE(g.op(1).has_weight);
  EXPECT_EQ(Mvm(g.op(2)), (Dims{8, 16, 8 * 8, 16 * 8 * 8 * 8}));
  EXPECT_EQ(g.op(2).output_elements, 16 * 8 * 8);

  ASSERT_EQ(g.edges().size(), 2u);
  const Edge* e01 = FindEdge(g, 0, 1);
  const Edge* e12 = FindEdge(g, 1, 2);
  ASSERT_TRUE(e01 && e12);
  EXPECT_EQ(e01->tensors, Names{"c1"});
  EXPECT_EQ(e01->elements, 512);
  EXPECT_EQ(e01->bytes, 512 * 4);
  EXPECT_EQ(e12->tensors, Names{"r1"});
  EXPECT_EQ(e12->elements, 512);
  EXPECT_TRUE(g.reaches(0, 2));
  ASSERT_EQ(g.graph_inputs().size(), 1u);
  EXPECT_EQ(g.graph_inputs()[0].elements, 192);
  ASSERT_EQ(g.graph_outputs().size(), 1u);
  EXPECT_EQ(g.graph_outputs()[0].shape, (Dims{1, 16, 8, 8}));
}

TEST(OnnxImport, ConvReluConvWithActivationFusion) {
  auto r = Import(ConvReluConv(), Fused());
  ASSERT_OK(r);
  const OpGraph& g = r->graph;
  EXPECT_EQ(r->fusion, FusionLevel::kActivation);
  EXPECT_EQ(Units(g), (std::vector<Names>{{"conv1", "relu1"}, {"conv2"}}));
  EXPECT_EQ(g.op(0).node_types, (Names{"Conv", "Relu"}));
  EXPECT_EQ(Mvm(g.op(0)), (Dims{27, 8, 64, 512 * 27}));
  ASSERT_EQ(g.op(0).outputs.size(), 1u);
  EXPECT_EQ(g.op(0).outputs[0].name, "r1");
  EXPECT_EQ(g.op(0).output_elements, 512);
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
  ASSERT_OK(r);
  EXPECT_EQ(Types(r->graph), (Names{"Flatten", "Gemm"}));
  const Operator& fc = r->graph.op(1);
  EXPECT_TRUE(fc.has_weight);
  EXPECT_EQ(Mvm(fc), (Dims{64, 10, 2, 2 * 64 * 10}));  // n_mvm = batch rows
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
  AddNode(m, "MatMul", {"q", "k"}, {"s"}, "qk");  // attention scores QK^T
  AddOutput(m, "y");
  AddOutput(m, "s");
  auto r = Import(m);
  ASSERT_OK(r);
  ASSERT_EQ(r->graph.size(), 2);
  EXPECT_TRUE(r->graph.op(0).has_weight);
  EXPECT_EQ(Mvm(r->graph.op(0)), (Dims{64, 32, 5, 5 * 32 * 64}));
  const Operator& qk = r->graph.op(1);
  EXPECT_FALSE(qk.has_weight);
  EXPECT_EQ(Mvm(qk), (Dims{0, 0, 0, 4 * 5 * 5 * 16}));
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
  ASSERT_OK(r);
  EXPECT_EQ(Units(r->graph), (std::vector<Names>{{"conv", "bn", "relu"}}));
  EXPECT_EQ(r->graph.op(0).type, "Conv");
  EXPECT_EQ(r->graph.op(0).param_bytes, (216 + 32) * 4);
  EXPECT_EQ(Import(m)->graph.size(), 3);
}

TEST(OnnxImport, FusesConvSiLU) {
  auto m = ConvOnly();
  AddNode(m, "Sigmoid", {"c"}, {"sig"}, "sigmoid");
  AddNode(m, "Mul", {"c", "sig"}, {"y"}, "mul");
  AddOutput(m, "y");
  auto r = Import(m, Fused());
  ASSERT_OK(r);
  EXPECT_EQ(Units(r->graph), (std::vector<Names>{{"conv", "sigmoid", "mul"}}));
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
  ASSERT_OK(r);
  EXPECT_EQ(Units(r->graph), (std::vector<Names>{
                                 {"matmul", "add_bias", "div", "erf", "add_one", "mul", "mul_half"}}));
  EXPECT_EQ(r->graph.op(0).type, "MatMul");
  EXPECT_EQ(r->graph.op(0).n_mvm, 5);
  EXPECT_EQ(r->graph.op(0).output_elements, 160);
  EXPECT_EQ(Import(m)->graph.size(), 7);
}

TEST(OnnxImport, DoesNotFuseConvWithTwoConsumers) {
  auto m = ConvOnly();
  AddNode(m, "Relu", {"c"}, {"r"}, "relu");
  AddNode(m, "Add", {"c", "r"}, {"y"}, "add");
  AddOutput(m, "y");
  auto r = Import(m, Fused());
  ASSERT_OK(r);
  EXPECT_EQ(Units(r->graph), (std::vector<Names>{{"conv"}, {"relu"}, {"add"}}));
  EXPECT_TRUE(FindEdge(r->graph, 0, 1) && FindEdge(r->graph, 0, 2) && FindEdge(r->graph, 1, 2));
}

TEST(OnnxImport, DoesNotFuseConvWhoseOutputIsAGraphOutput) {
  auto m = ConvOnly();
  AddNode(m, "Relu", {"c"}, {"y"}, "relu");
  AddOutput(m, "c");
  AddOutput(m, "y");
  auto r = Import(m, Fused());
  ASSERT_OK(r);
  EXPECT_EQ(Units(r->graph), (std::vector<Names>{{"conv"}, {"relu"}}));
}

TEST(OnnxImport, IdentityAndDropoutAreAliasesNotOperators) {
  for (const char* alias : {"Identity", "Dropout"}) {
    SCOPED_TRACE(alias);
    auto m = ConvOnly();
    AddNode(m, alias, {"c"}, {"c_alias"}, "alias");
    AddNode(m, "Relu", {"c_alias"}, {"y"}, "relu");
    AddOutput(m, "y");
    auto r = Import(m);
    ASSERT_OK(r);
    EXPECT_EQ(Types(r->graph), (Names{"Conv", "Relu"}));
    ASSERT_EQ(r->graph.edges().size(), 1u);
    const Edge& e = r->graph.edges()[0];
    EXPECT_EQ((std::pair{e.from, e.to}), (std::pair{0, 1}));
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
  ASSERT_OK(r);
  EXPECT_EQ(r->onnx_nodes, 6);
  EXPECT_GE(r->folded_nodes, 4);
  EXPECT_EQ(r->model->graph().node_size(), 2);
  const OpGraph& g = r->graph;
  EXPECT_EQ(Types(g), (Names{"Reshape", "Relu"}));
  ASSERT_EQ(g.op(0).outputs.size(), 1u);
  EXPECT_EQ(g.op(0).outputs[0].shape, (Dims{1, 24}));
  ASSERT_EQ(g.op(0).inputs.size(), 1u);  // the folded target is a constant, not an input
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
  ASSERT_OK(r);
  EXPECT_EQ(Units(r->graph), (std::vector<Names>{{"conv"}, {"relu"}}));
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
  ASSERT_OK(r);
  EXPECT_EQ(r->graph.op(0).n_mvm, 2 * 64);
  EXPECT_EQ(r->graph.op(0).input_elements, 2 * 192);

  ImportOptions typo = o;  // a typo next to a correct --shape
  typo.input_shapes["image"] = {1, 3, 8, 8};
  EXPECT_TRUE(Fails(Import(m, typo), ErrorCode::kInvalidArgument,
                    {"test.onnx", "'image'", "not a graph input", "inputs are: x"}));
  ImportOptions rank;
  rank.input_shapes["x"] = {1, 3};
  EXPECT_TRUE(Fails(Import(m, rank), ErrorCode::kInvalidArgument, {"test.onnx", "--shape x", "rank 4"}));
}

TEST(OnnxImport, ParseShapeOverride) {
  auto good = ParseShapeOverride("x=1x3");
  ASSERT_OK(good);
  EXPECT_EQ(good->first, "x");
  EXPECT_EQ(good->second, (Dims{1, 3}));
  auto img = ParseShapeOverride("input.1=1x3x224x224");
  ASSERT_OK(img);
  EXPECT_EQ(img->first, "input.1");
  EXPECT_EQ(img->second, (Dims{1, 3, 224, 224}));
  auto empty = ParseShapeOverride("past=1x4x0x16");  // 0 is a size: an empty input
  ASSERT_OK(empty);
  EXPECT_EQ(empty->second, (Dims{1, 4, 0, 16}));
  for (const char* bad : {"x=", "=1x2", "x=1xx2", "x=ax3", "x", "x=1x3x", "x=-1x3",
                          "x=99999999999999999x2"}) {
    EXPECT_TRUE(Fails(ParseShapeOverride(bad), ErrorCode::kInvalidArgument, {"--shape", bad}));
  }
  EXPECT_TRUE(Fails(ParseShapeOverride("x=ax3"), ErrorCode::kInvalidArgument, {"'a'", "x=1x3x224x224"}));
}

// --- malformed files ----------------------------------------------------------

TEST(OnnxImport, RejectsUnparseableBytes) {
  EXPECT_TRUE(Fails(LoadOnnxModelFromBytes("", "test.onnx"), ErrorCode::kParseError,
                    {"test.onnx", "empty"}));
  std::mt19937 rng(7);
  std::string garbage(4096, '\0');
  for (char& c : garbage) c = static_cast<char>(rng() & 0xff);
  EXPECT_TRUE(Fails(LoadOnnxModelFromBytes(garbage, "test.onnx"), ErrorCode::kParseError, {"test.onnx"}));
  EXPECT_TRUE(Fails(LoadOnnxModelFromBytes(std::string(64, '\xff'), "test.onnx"), ErrorCode::kParseError,
                    {"test.onnx", "not a valid ONNX protobuf", "re-export"}));
  std::string bytes = Bytes(ConvReluConv());
  EXPECT_TRUE(Fails(LoadOnnxModelFromBytes(std::string_view(bytes).substr(0, bytes.size() / 2), "test.onnx"),
                    ErrorCode::kParseError, {"test.onnx", "truncated"}));
}

TEST(OnnxImport, RejectsProtobufThatIsNotAUsableModel) {
  onnx::TensorProto t;
  t.set_name("t");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(3);
  for (float v : {1.f, 2.f, 3.f}) t.add_float_data(v);
  EXPECT_TRUE(Fails(LoadOnnxModelFromBytes(t.SerializeAsString(), "test.onnx"), ErrorCode::kParseError,
                    {"test.onnx"}));
  auto no_graph = MakeModel();
  no_graph.clear_graph();
  EXPECT_TRUE(Fails(Import(no_graph), ErrorCode::kParseError, {"test.onnx", "no graph"}));
  auto no_nodes = MakeModel();
  AddInput(no_nodes, "x", {1, 4});
  AddOutput(no_nodes, "x");
  EXPECT_TRUE(Fails(Import(no_nodes), ErrorCode::kParseError, {"test.onnx", "no nodes"}));
  auto no_opset = Tiny();
  no_opset.clear_opset_import();
  EXPECT_TRUE(Fails(Import(no_opset), ErrorCode::kParseError, {"test.onnx", "opset_import"}));
}

// An opset newer than the ONNX library's schemas is refused at import, not
// later by ONNX Runtime when `partition` profiles the model.
TEST(OnnxImport, RejectsOpsetNewerThanOnnxKnows) {
  const int newest = NewestSupportedOpset();
  EXPECT_LE(newest, onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second);
  auto future = Tiny();
  future.mutable_opset_import(0)->set_version(99);
  const auto r = Import(future);
  EXPECT_TRUE(Fails(r, ErrorCode::kUnsupported,
                    {"test.onnx", "opset 99", fmt::format("({}: ONNX Runtime", newest), "re-export"}));
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
  // Declared under the explicit "ai.onnx" name, the same.
  auto named = future;
  named.mutable_opset_import(0)->set_domain("ai.onnx");
  EXPECT_TRUE(Fails(Import(named), ErrorCode::kUnsupported, {"test.onnx", "opset 99"}));
  // The newest known opset itself is accepted.
  auto latest = Tiny();
  latest.mutable_opset_import(0)->set_version(newest);
  EXPECT_TRUE(Import(latest).ok()) << Import(latest).status().message();
}

// Model-local functions are inlined at import, each operator named after its
// call (the exporters' test runs a nested model against ONNX Runtime); a
// function that calls itself is refused in one line, not followed forever.
// A model x → `call` (node `name`, of the domain "pkg") → y, importing "pkg"
// at version 1; returns that import.
onnx::OperatorSetIdProto* CallModel(onnx::ModelProto& m, const std::string& call, const std::string& name) {
  AddInput(m, "x", {1, 4});
  AddNode(m, call, {"x"}, {"y"}, name).set_domain("pkg");
  AddOutput(m, "y");
  auto* opset = m.add_opset_import();
  opset->set_domain("pkg");
  opset->set_version(1);
  return opset;
}

TEST(OnnxImport, InlinesLocalFunctionsNamedAfterTheirCall) {
  auto m = MakeModel();
  auto* opset = CallModel(m, "Act", "/block/Act");
  auto* f = m.add_functions();
  f->set_domain("pkg");
  f->set_name("Act");
  f->add_input("X");
  f->add_output("Y");
  *f->add_opset_import() = m.opset_import(0);
  auto* relu = f->add_node();
  relu->set_op_type("Relu");
  relu->set_name("relu");
  relu->add_input("X");
  relu->add_output("Y");
  const auto r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->graph.size(), 1);
  EXPECT_EQ(r->graph.op(0).name, "/block/Act/relu");
  EXPECT_EQ(r->graph.op(0).type, "Relu");

  relu->set_op_type("Act");  // Act calls itself
  relu->set_domain("pkg");
  *f->add_opset_import() = *opset;
  const auto cycle = Import(m);
  EXPECT_TRUE(Fails(cycle, ErrorCode::kUnsupported, {"test.onnx", "nest deeper than 64", "re-export"}));
  EXPECT_EQ(cycle.status().message().find('\n'), std::string::npos);
}

// Acyclic functions F0 .. F29, each calling the next twice (F29 a Relu):
// inlined they would be 2^30 nodes, as ONNX's own inliner would make them.
// Refused in one line once a million nodes are made, not after memory runs out.
TEST(OnnxImport, FunctionCallsThatExpandBeyondAMillionNodesAreRefused) {
  auto m = MakeModel();
  auto* opset = CallModel(m, "F0", "top");
  constexpr int kLevels = 30;
  for (int level = 0; level < kLevels; ++level) {
    auto* f = m.add_functions();
    f->set_domain("pkg");
    f->set_name("F" + std::to_string(level));
    f->add_input("X");
    f->add_output("Y");
    *f->add_opset_import() = m.opset_import(0);
    *f->add_opset_import() = *opset;
    const bool last = level + 1 == kLevels;
    for (int k = 0; k < 2; ++k) {
      auto* n = f->add_node();
      n->set_op_type(last ? "Relu" : "F" + std::to_string(level + 1));
      if (!last) n->set_domain("pkg");
      n->set_name("c" + std::to_string(k));
      n->add_input(k == 0 ? "X" : "T");
      n->add_output(k == 0 ? "T" : "Y");
    }
  }
  const auto r = Import(m);
  EXPECT_TRUE(Fails(r, ErrorCode::kUnsupported, {"test.onnx", "expand to more than 1000000 nodes", "inlined"}));
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
}

TEST(OnnxImport, RejectsCycles) {
  auto m = MakeModel();
  AddInput(m, "x", {1, 4});
  AddNode(m, "Add", {"x", "b_out"}, {"a_out"}, "A");
  AddNode(m, "Relu", {"a_out"}, {"b_out"}, "B");
  AddOutput(m, "a_out");
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kParseError, {"test.onnx", "cycle", "'A'"}));

  auto self = MakeModel();
  AddInput(self, "x", {1, 4});
  AddNode(self, "Add", {"x", "a"}, {"a"}, "self");
  AddOutput(self, "a");
  EXPECT_TRUE(Fails(Import(self), ErrorCode::kParseError, {"test.onnx", "'self'", "cycle"}));

  // "C" only reads from the cycle A ⇄ B and is listed first: the message names A or B.
  m.mutable_graph()->clear_output();
  m.mutable_graph()->clear_node();
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

TEST(OnnxImport, RejectsBrokenDataflow) {
  auto dangling = Tiny();
  AddNode(dangling, "Add", {"y", "ghost"}, {"z"}, "add");
  EXPECT_TRUE(Fails(Import(dangling), ErrorCode::kParseError,
                    {"test.onnx", "'add'", "'ghost'", "dangling", "re-export"}));
  auto twice = Tiny();
  AddNode(twice, "Sigmoid", {"x"}, {"y"}, "sigmoid");
  EXPECT_TRUE(Fails(Import(twice), ErrorCode::kParseError, {"test.onnx", "'sigmoid'", "'y'", "one producer"}));
  auto shadow = Tiny();  // a node output that is also an initializer
  AddInitializer(shadow, "y", {1, 4});
  EXPECT_TRUE(Fails(Import(shadow), ErrorCode::kParseError, {"test.onnx", "'y'"}));
  auto orphan = Tiny();
  AddOutput(orphan, "nowhere");
  EXPECT_TRUE(Fails(Import(orphan), ErrorCode::kParseError, {"test.onnx", "'nowhere'"}));
}

// --- unsupported content ----------------------------------------------------

TEST(OnnxImport, RejectsControlFlow) {
  for (std::string op : {"Loop", "If", "Scan"}) {
    SCOPED_TRACE(op);
    auto m = Tiny();
    AddInput(m, "cond", {}, "", onnx::TensorProto::BOOL);
    auto& n = AddNode(m, op, {"cond"}, {"z"}, "flow_" + op);
    if (op == "If") {  // on an input: known only at run time
      onnx::AttributeProto then_branch;
      then_branch.set_name("then_branch");
      then_branch.set_type(onnx::AttributeProto::GRAPH);
      auto* g = then_branch.mutable_g();
      g->set_name("then");
      auto* id = g->add_node();
      id->set_op_type("Identity");
      id->add_input("y");
      id->add_output("t");
      g->add_output()->set_name("t");
      g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
      *n.add_attribute() = then_branch;
      then_branch.set_name("else_branch");
      *n.add_attribute() = then_branch;
    }
    EXPECT_TRUE(Fails(Import(m), ErrorCode::kUnsupported, {"test.onnx", "'flow_" + op + "'", "control flow"}));
  }
  auto m = Tiny();
  onnx::AttributeProto body;
  body.set_name("body");
  body.set_type(onnx::AttributeProto::GRAPH);
  body.mutable_g()->set_name("inner");
  AddNode(m, "Relu", {"y"}, {"z"}, "sneaky", {body});
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kUnsupported, {"test.onnx", "'sneaky'", "'body'"}));
}

// --- control flow, values, domains by use -----------------------------------

onnx::AttributeProto GraphAttr(const std::string& name, const onnx::GraphProto& g) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::GRAPH);
  *a.mutable_g() = g;
  return a;
}

// A branch: its nodes (op, inputs, output, name) and its one output.
onnx::GraphProto Branch(const std::string& name, const std::vector<std::tuple<std::string, Names, std::string,
                                                                             std::string>>& nodes,
                        const std::string& output) {
  onnx::GraphProto g;
  g.set_name(name);
  for (const auto& [op, inputs, out, node_name] : nodes) {
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(node_name);
    for (const auto& i : inputs) n->add_input(i);
    n->add_output(out);
  }
  auto* o = g.add_output();
  o->set_name(output);
  o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return g;
}

// x[1,4] → relu → If(flag) { then: If(shape(z)[1] == 4) { sigmoid } else { tanh } ; else: neg } → y,
// out = y + sigmoid(x). The branches read the outer z, one and four.
onnx::ModelProto NestedIfs() {
  auto m = MakeModel(13);
  AddInput(m, "x", {1, 4});
  AddInput(m, "flag", {}, "", onnx::TensorProto::BOOL);
  AddNode(m, "Relu", {"x"}, {"z"}, "relu");
  auto inner_then = Branch("inner_then", {{"Sigmoid", {"z"}, "s", "sigmoid"}}, "s");
  auto inner_else = Branch("inner_else", {{"Tanh", {"z"}, "t", "tanh"}}, "t");
  auto then_g = Branch("then", {{"Shape", {"z"}, "shape", "shape"},
                                {"Gather", {"shape", "one"}, "width", "width"},
                                {"Equal", {"width", "four"}, "is4", "is4"}},
                       "w");
  AddInt64Initializer(m, "one", {}, {1});
  AddInt64Initializer(m, "four", {}, {4});
  auto* inner = then_g.add_node();
  inner->set_op_type("If");
  inner->set_name("inner");
  inner->add_input("is4");
  inner->add_output("w");
  *inner->add_attribute() = GraphAttr("then_branch", inner_then);
  *inner->add_attribute() = GraphAttr("else_branch", inner_else);
  auto else_g = Branch("else", {{"Neg", {"z"}, "n", "neg"}}, "n");
  AddNode(m, "If", {"flag"}, {"y"}, "gate", {GraphAttr("then_branch", then_g), GraphAttr("else_branch", else_g)});
  // The outer graph has an "s" and a node "sigmoid" too: the inlined ones are renamed.
  AddNode(m, "Sigmoid", {"x"}, {"s"}, "sigmoid");
  AddNode(m, "Add", {"y", "s"}, {"out"}, "add");
  AddOutput(m, "out");
  return m;
}

TEST(OnnxImport, IfWithAConstantConditionIsReplacedByItsBranchRecursively) {
  auto m = NestedIfs();
  ImportOptions o;
  o.input_values["flag"] = {"true"};
  auto r = Import(m, o);
  ASSERT_OK(r);
  EXPECT_EQ(Types(r->graph), (Names{"Relu", "Sigmoid", "Sigmoid", "Add"}));
  EXPECT_EQ(r->graph.op(1).name, "inner/sigmoid");  // renamed: the outer graph has a "sigmoid"
  EXPECT_NE(r->graph.op(1).outputs[0].name, "s");
  ASSERT_EQ(r->assumptions.branches.size(), 2u);
  EXPECT_EQ(r->assumptions.branches[0].node, "gate");
  EXPECT_TRUE(r->assumptions.branches[0].then);
  EXPECT_FALSE(r->assumptions.branches[0].assumed);
  EXPECT_EQ(r->assumptions.branches[1].node, "inner");
  ASSERT_EQ(r->assumptions.fixed_inputs.size(), 1u);
  EXPECT_EQ(r->assumptions.fixed_inputs[0].name, "flag");
  EXPECT_EQ(r->graph.graph_inputs().size(), 1u);  // flag is a constant now
  EXPECT_TRUE(FindEdge(r->graph, 0, 1));
  EXPECT_TRUE(FindEdge(r->graph, 1, 3));

  o.input_values["flag"] = {"0"};
  auto e = Import(m, o);
  ASSERT_OK(e);
  EXPECT_EQ(Types(e->graph), (Names{"Relu", "Neg", "Sigmoid", "Add"}));
}

TEST(OnnxImport, DataDependentIfNeedsABranchAndRecordsTheAssumption) {
  auto m = NestedIfs();
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kUnsupported,
                    {"test.onnx", "'gate'", "control flow", "graph input 'flag'", "--branch gate=then"}));
  ImportOptions o;
  o.branches["gate"] = false;
  auto r = Import(m, o);
  ASSERT_OK(r);
  EXPECT_EQ(Types(r->graph), (Names{"Relu", "Neg", "Sigmoid", "Add"}));
  ASSERT_EQ(r->assumptions.branches.size(), 1u);
  EXPECT_TRUE(r->assumptions.branches[0].assumed);
  ImportOptions conflict;
  conflict.input_values["flag"] = {"1"};
  conflict.branches["gate"] = false;
  EXPECT_TRUE(Fails(Import(m, conflict), ErrorCode::kInvalidArgument, {"test.onnx", "--branch gate=else", "folds to true"}));
  ImportOptions typo;
  typo.branches["gat"] = true;
  EXPECT_TRUE(Fails(Import(m, typo), ErrorCode::kInvalidArgument, {"test.onnx", "'gat'", "its Ifs are: gate, inner"}));
  // The unsplit model under the assumption: the If replaced, nothing else changed.
  auto pinned = m;
  ASSERT_TRUE(PinIfBranches(&pinned, {{"gate", true}}).ok());
  int ifs = 0;
  for (const auto& n : pinned.graph().node()) ifs += n.op_type() == "If";
  EXPECT_EQ(ifs, 1);  // the nested one came up, still an If
  EXPECT_FALSE(PinIfBranches(&pinned, {{"nowhere", true}}).ok());
}

TEST(OnnxImport, ValuesFoldLikeInitializers) {
  auto m = MakeModel(13);
  AddInput(m, "x", {1, 4});
  AddInput(m, "scale", {-1}, "n");
  AddNode(m, "Mul", {"x", "scale"}, {"y"}, "mul");
  AddOutput(m, "y");
  ImportOptions o;
  o.input_values["scale"] = {"0.5", "1", "2", "4"};
  auto r = Import(m, o);
  ASSERT_OK(r);
  ASSERT_EQ(r->assumptions.fixed_inputs.size(), 1u);
  EXPECT_EQ(r->assumptions.fixed_inputs[0].shape, (Dims{4}));  // the symbolic dim from the count
  EXPECT_EQ(r->graph.op(0).param_bytes, 16);
  ImportOptions bad;
  bad.input_values["scale"] = {"1"};
  bad.input_shapes["scale"] = {4};
  EXPECT_TRUE(Fails(Import(m, bad), ErrorCode::kInvalidArgument, {"test.onnx", "--value scale", "gives 1 value"}));
  EXPECT_TRUE(ParseValueOverride("sr=16000").ok());
  EXPECT_TRUE(ParseValueOverride("m=true,false,1").ok());
  EXPECT_FALSE(ParseValueOverride("sr=").ok());
  EXPECT_FALSE(ParseValueOverride("sr=1,,2").ok());
  EXPECT_FALSE(ParseValueOverride("sr=nan").ok());
  EXPECT_TRUE(ParseBranchOverride("a/b=then").ok());
  EXPECT_FALSE(ParseBranchOverride("a=maybe").ok());
}

TEST(OnnxImport, EverySymbolicInputIsListedWithItsOwnRank) {
  auto m = MakeModel(13);
  AddInput(m, "audio", {-1, 16000}, "batch");
  AddInput(m, "image", {-1, 3, 8, 8}, "N");
  m.mutable_graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(2)->Clear();
  AddNode(m, "ReduceMean", {"audio"}, {"a"}, "a", {IntsAttr("axes", {1}), IntAttr("keepdims", 0)});
  AddNode(m, "ReduceMean", {"image"}, {"b"}, "b", {IntsAttr("axes", {1, 2, 3}), IntAttr("keepdims", 0)});
  AddNode(m, "Add", {"a", "b"}, {"y"}, "add");
  AddOutput(m, "y");
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kInvalidArgument,
                    {"test.onnx", "2 graph inputs need a static shape", "'audio' dim 0 ('batch') is symbolic: --shape audio=1x16000",
                     "'image' dim 0 ('N'), dim 2 (unnamed) are symbolic: --shape image=1x3x1x8"}));
}

TEST(OnnxImport, MicrosoftOperatorsAreImportedWithTheirShapes) {
  auto m = MakeModel(13);
  auto* o = m.add_opset_import();
  o->set_domain("com.microsoft");
  o->set_version(1);
  AddInput(m, "x", {1, 3, 8, 8});
  AddInitializer(m, "w", {4, 3, 3, 3});
  AddNode(m, "FusedConv", {"x", "w"}, {"c"}, "fused", {IntsAttr("pads", {1, 1, 1, 1})}).set_domain("com.microsoft");
  AddNode(m, "Flatten", {"c"}, {"f"}, "flatten");
  AddInitializer(m, "w2", {256, 10});
  AddNode(m, "FusedMatMul", {"f", "w2"}, {"mm"}, "fmm").set_domain("com.microsoft");
  AddNode(m, "Gelu", {"mm"}, {"y"}, "gelu").set_domain("com.microsoft");
  AddOutput(m, "y");
  auto r = Import(m);
  ASSERT_OK(r);
  EXPECT_EQ(Types(r->graph), (Names{"FusedConv", "Flatten", "FusedMatMul", "Gelu"}));
  EXPECT_EQ(r->graph.op(0).outputs[0].shape, (Dims{1, 4, 8, 8}));
  EXPECT_EQ(Mvm(r->graph.op(0)), (Dims{27, 4, 64, 64 * 4 * 27}));
  EXPECT_EQ(r->graph.op(0).matrix_op, "Conv");
  EXPECT_EQ(Mvm(r->graph.op(2)), (Dims{256, 10, 1, 2560}));
  EXPECT_EQ(r->graph.op(3).outputs[0].shape, (Dims{1, 10}));
  // Also without the declared import, and through the guarded Conv checks.
  m.mutable_opset_import()->RemoveLast();
  EXPECT_TRUE(Import(m).ok());
  m.mutable_graph()->mutable_node(0)->add_attribute()->CopyFrom(IntsAttr("strides", {1, 0}));
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kParseError, {"test.onnx", "'strides'"}));
}

TEST(OnnxImport, RejectsNonStandardOperators) {
  auto custom = Tiny();
  AddNode(custom, "MyOp", {"y"}, {"z"}, "custom").set_domain("com.example");
  EXPECT_TRUE(Fails(Import(custom), ErrorCode::kUnsupported, {"test.onnx", "'custom'", "'com.example'"}));
  // A domain is judged by the nodes that use it: declared and unused is fine.
  auto vendor = Tiny();
  auto* o = vendor.add_opset_import();
  o->set_domain("com.vendor");
  o->set_version(1);
  EXPECT_TRUE(Import(vendor).ok());
  auto ms = Tiny();
  AddNode(ms, "NotARealOp", {"y"}, {"z"}, "mystery").set_domain("com.microsoft");
  EXPECT_TRUE(Fails(Import(ms), ErrorCode::kUnsupported, {"test.onnx", "'mystery'", "'com.microsoft'", "'NotARealOp'"}));
  auto unknown = Tiny();
  AddNode(unknown, "FooBar", {"y"}, {"z"}, "foo");
  EXPECT_TRUE(Fails(Import(unknown), ErrorCode::kUnsupported, {"test.onnx", "'foo'", "'FooBar'", "opset 13"}));
}

TEST(OnnxImport, RejectsOutputWithoutStaticShape) {
  // The Reshape target is a graph input, so the output shape is unknowable.
  auto m = MakeModel();
  AddInput(m, "x", {1, 4, 6});
  AddInput(m, "target", {2}, "", onnx::TensorProto::INT64);
  AddNode(m, "Reshape", {"x", "target"}, {"flat"}, "reshape");
  AddNode(m, "Relu", {"flat"}, {"y"}, "relu");
  AddOutput(m, "y");
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kUnsupported,
                    {"test.onnx", "'reshape'", "'flat'", "no static shape", "graph input 'target'",
                     "--value target=V,V"}));
  // The value it names fixes it.
  ImportOptions o;
  o.input_values["target"] = {"4", "6"};
  auto r = Import(m, o);
  ASSERT_OK(r);
  EXPECT_EQ(r->graph.op(0).outputs[0].shape, (Dims{4, 6}));
}

// --- sizes and limits -----------------------------------------------------------

// A zero-sized input has one value, the empty tensor: it is a constant, as
// if given with --value (a KV cache's past at prefill, declared or through
// --shape). A model that computes nothing else is still refused.
TEST(OnnxImport, ZeroSizedInputIsTheEmptyConstant) {
  auto m = MakeModel();
  AddInput(m, "past", {1, 0, 4});
  AddInput(m, "x", {1, 3, 4});
  AddNode(m, "Concat", {"past", "x"}, {"present"}, "concat", {IntAttr("axis", 1)});
  AddNode(m, "Relu", {"present"}, {"y"}, "relu");
  AddOutput(m, "y");
  for (bool through_shape : {false, true}) {
    ImportOptions o;
    if (through_shape) {  // declared symbolic, fixed to 0 by --shape
      auto* dim = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1);
      dim->set_dim_param("past_len");
      o.input_shapes["past"] = {1, 0, 4};
    }
    auto r = Import(m, o);
    ASSERT_OK(r);
    ASSERT_EQ(r->graph.size(), 2);
    EXPECT_EQ(r->graph.op(0).type, "Concat");
    ASSERT_EQ(r->graph.op(0).inputs.size(), 1u);  // x; the empty past is a constant of 0 bytes
    EXPECT_EQ(r->graph.op(0).inputs[0].name, "x");
    EXPECT_EQ(r->graph.op(0).param_bytes, 0);
    EXPECT_EQ(r->graph.op(0).outputs[0].shape, (Dims{1, 3, 4}));
    ASSERT_EQ(r->assumptions.fixed_inputs.size(), 1u);
    EXPECT_EQ(r->assumptions.fixed_inputs[0].name, "past");
    EXPECT_EQ(r->assumptions.fixed_inputs[0].shape, (Dims{1, 0, 4}));
    EXPECT_TRUE(r->assumptions.fixed_inputs[0].values.empty());
  }
  auto only = Tiny({1, 0, 4});  // Relu of the empty tensor: nothing left to plan
  const auto r = Import(only);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("test.onnx"), std::string::npos) << r.status().message();
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
}

TEST(OnnxImport, RejectsEnormousTensors) {
  auto m = Tiny({1, 1024, 1024, 1024, 1024});  // 2^40 elements
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kLimitExceeded, {"test.onnx", "'x'", "1,1024,1024,1024,1024"}));
  ImportOptions small;
  small.max_tensor_elements = 3;
  EXPECT_TRUE(Fails(Import(Tiny({1, 4}), small), ErrorCode::kLimitExceeded, {"test.onnx", "'x'"}));
  // No operator reads it, but graph_inputs() reports its size: no silent overflow.
  auto unused = Tiny();
  AddInput(unused, "huge", {1 << 30, 1 << 30, 1 << 30});
  EXPECT_TRUE(Fails(Import(unused), ErrorCode::kLimitExceeded, {"test.onnx", "'huge'"}));
}

TEST(OnnxImport, RejectsEnormousConstant) {
  // A weight declared [2^32, 2^32], its data external (never read).
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
  auto m = Tiny();  // the same check covers tensors inside Constant nodes
  onnx::AttributeProto value;
  value.set_name("value");
  value.set_type(onnx::AttributeProto::TENSOR);
  value.mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  MakeExternal(*value.mutable_t(), "/etc/shadow");
  AddNode(m, "Constant", {}, {"k"}, "const", {value});
  EXPECT_TRUE(Fails(Import(m), ErrorCode::kUnsupported, {"test.onnx", "/etc/shadow"}));
}

TEST(OnnxImport, NeverReadsExternalData) {
  // The referenced file does not exist: the import works from the dims alone.
  auto m = ConvOnly();
  AddOutput(m, "c");
  MakeExternal(*m.mutable_graph()->mutable_initializer(0), "weights_that_do_not_exist.bin");
  auto r = Import(m);
  ASSERT_OK(r);
  EXPECT_EQ(Mvm(r->graph.op(0)), (Dims{27, 8, 64, 512 * 27}));
}

// --- files ---------------------------------------------------------------------

TEST(OnnxImport, LoadsFromFile) {
  TempPath file("model.onnx");
  std::string bytes = Bytes(ConvReluConv());
  std::ofstream(file.path, std::ios::binary) << bytes;
  auto r = LoadOnnxModel(file.path);
  ASSERT_OK(r);
  EXPECT_EQ(r->path, file.path);
  EXPECT_EQ(r->graph.size(), 3);
  auto same = LoadOnnxModelFromBytes(bytes, "test.onnx");
  ASSERT_OK(same);
  EXPECT_EQ(r->sha256, same->sha256);
  // Errors from a file name its path.
  std::ofstream(file.path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
  EXPECT_TRUE(Fails(LoadOnnxModel(file.path), ErrorCode::kParseError, {file.path, "truncated"}));
}

TEST(OnnxImport, MissingFileOrDirectoryIsAnError) {
  TempPath missing("missing.onnx");
  EXPECT_TRUE(Fails(LoadOnnxModel(missing.path), ErrorCode::kNotFound, {missing.path, "check the path"}));
  TempPath dir("dir.onnx");
  ASSERT_TRUE(fs::create_directories(dir.path));
  EXPECT_TRUE(Fails(LoadOnnxModel(dir.path), ErrorCode::kIoError, {dir.path, "folder"}));
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
  int64_t n = 24;
  t->set_raw_data(std::string(reinterpret_cast<const char*>(&n), sizeof n));
  AddNode(m, "Reshape", {"x", "target"}, {"flat"}, "reshape");
  AddNode(m, "Relu", {"flat"}, {"y"}, "relu");
  AddOutput(m, "y");
  ExpectOkOrNamesFile(Import(m));
  // Enormous declared dims over the same 8 bytes: no overflow, no huge allocation.
  t->clear_dims();
  t->add_dims(int64_t{1} << 40);
  t->add_dims(int64_t{1} << 40);
  ExpectOkOrNamesFile(Import(m));
}

TEST(OnnxImport, MalformedShapeArithmeticDoesNotCrash) {
  // Slice with an empty `starts` constant must not escape as an exception.
  auto m = MakeModel();
  AddInput(m, "x", {1, 4, 6});
  AddInt64Initializer(m, "empty", {0}, {});
  AddInt64Initializer(m, "one", {1}, {1});
  AddNode(m, "Shape", {"x"}, {"s"}, "shape");
  AddNode(m, "Slice", {"s", "empty", "one"}, {"sl"}, "slice");
  AddNode(m, "Reshape", {"x", "sl"}, {"flat"}, "reshape");
  AddOutput(m, "flat");
  ExpectOkOrNamesFile(Import(m));
}

}  // namespace
}  // namespace hetplan
