// Pins BIDENT's workload families (models/families.py; part of the `zoo`
// target): each model's operator graph, at FP32 and INT8, and the operators
// that make it what it is.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "hetplan/graph/algorithms.h"
#include "hetplan/graph/onnx_import.h"

namespace hetplan {
namespace {

LoadedModel Load(const std::string& name, FusionLevel fusion = FusionLevel::kNone) {
  const std::string path = std::string(HETPLAN_ZOO_DIR) + "/" + name + ".onnx";
  EXPECT_TRUE(std::filesystem::exists(path)) << path << " is missing: build the `zoo` target (./test.sh does)";
  ImportOptions o;
  o.fusion = fusion;
  auto m = LoadOnnxModel(path, o);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : LoadedModel{};
}

// ONNX node types over every operator (fused nodes included).
std::map<std::string, int> NodeTypes(const OpGraph& g) {
  std::map<std::string, int> n;
  for (const Operator& op : g.operators()) {
    for (const std::string& t : op.node_types) ++n[t];
  }
  return n;
}

struct FamilyCase {
  const char* model;
  int onnx_nodes;
  int operators;             // fusion none
  int operators_activation;  // fusion activation
  int operators_int8;        // <model>_int8, fusion none
  int64_t parallel_pairs;
};

class FamilyTest : public ::testing::TestWithParam<FamilyCase> {};

TEST_P(FamilyTest, OperatorGraphIsPinnedAtBothPrecisions) {
  const FamilyCase& c = GetParam();
  const LoadedModel m = Load(c.model);
  EXPECT_EQ(m.onnx_nodes, c.onnx_nodes);
  EXPECT_EQ(m.graph.size(), c.operators);
  EXPECT_EQ(CountParallelPairs(m.graph), c.parallel_pairs);
  EXPECT_EQ(Load(c.model, FusionLevel::kActivation).graph.size(), c.operators_activation);
  for (const Operator& op : m.graph.operators()) {
    for (const TensorInfo& t : op.outputs) EXPECT_GT(t.elements, 0) << op.name << " " << t.name;
    EXPECT_FALSE(op.type == "Identity" || op.type == "Constant") << op.name;
  }
  // INT8: the same network with quantized weights and activations.
  const LoadedModel q = Load(std::string(c.model) + "_int8");
  EXPECT_EQ(q.graph.size(), c.operators_int8);
  const std::map<std::string, int> types = NodeTypes(q.graph);
  EXPECT_GT(types.count("DequantizeLinear") ? types.at("DequantizeLinear") : 0, 0);
  int int8_tensors = 0;
  for (const Operator& op : q.graph.operators()) {
    for (const TensorInfo& t : op.inputs) int8_tensors += t.dtype == "uint8" || t.dtype == "int8";
  }
  EXPECT_GT(int8_tensors, 0);
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyTest,
                         ::testing::Values(FamilyCase{"llama_layer", 105, 60, 58, 61, 325},
                                           FamilyCase{"mamba", 851, 605, 603, 606, 59000},
                                           FamilyCase{"hyena", 197, 90, 72, 91, 156},
                                           FamilyCase{"kan", 211, 115, 115, 115, 957},
                                           FamilyCase{"snn_vgg9", 318, 225, 225, 225, 10692},
                                           FamilyCase{"bitnet", 290, 201, 201, 202, 524},
                                           FamilyCase{"vla_pipeline", 327, 209, 182, 209, 728}),
                         [](const auto& info) { return std::string(info.param.model); });

int Count(const std::map<std::string, int>& types, const std::string& t) {
  auto it = types.find(t);
  return it == types.end() ? 0 : it->second;
}

TEST(Families, LlamaLayerHasRmsNormRotaryGroupedAttentionAndSwiGlu) {
  const auto t = NodeTypes(Load("llama_layer").graph);
  EXPECT_EQ(Count(t, "ReduceMean"), 2);  // two RMSNorms
  EXPECT_EQ(Count(t, "Neg"), 2);         // rotate_half of q and k
  EXPECT_EQ(Count(t, "Expand"), 2);      // 2 key/value heads serve 8 query heads
  EXPECT_EQ(Count(t, "Softmax"), 1);
  EXPECT_EQ(Count(t, "Sigmoid"), 1);     // SiLU of the gate
  EXPECT_EQ(Count(t, "MatMul"), 9);      // q k v o, gate up down, QK^T, AV
}

TEST(Families, MambaUnrollsTheSelectiveScanRecurrence) {
  const LoadedModel m = Load("mamba");
  const auto t = NodeTypes(m.graph);
  // exp(dt_t A) for t = 1..15 in each of 2 blocks (t = 0 starts the state).
  EXPECT_EQ(Count(t, "Exp"), 2 * 15);
  EXPECT_EQ(Count(t, "Softplus"), 2);
  // The state h_t = exp(dt_t A) h_{t-1} + dt_t B_t x_t is a chain: the
  // operator computing h_15 depends on 15 earlier state updates.
  int depthwise = 0;
  for (const Operator& op : m.graph.operators()) depthwise += op.type == "Conv" && op.groups > 1;
  EXPECT_EQ(depthwise, 2);
  std::vector<int> depth(static_cast<size_t>(m.graph.size()), 1);  // operators on the longest path ending here
  for (int v : m.graph.topological_order()) {
    for (int e : m.graph.in_edges(v)) {
      const int u = m.graph.edges()[static_cast<size_t>(e)].from;
      depth[static_cast<size_t>(v)] = std::max(depth[static_cast<size_t>(v)], depth[static_cast<size_t>(u)] + 1);
    }
  }
  EXPECT_GE(*std::max_element(depth.begin(), depth.end()), 2 * 15 * 2);
}

TEST(Families, HyenaConvolvesByDftForwardAndInverse) {
  const LoadedModel m = Load("hyena");
  EXPECT_EQ(Count(NodeTypes(m.graph), "DFT"), 4);  // 2 blocks × (forward, inverse)
  int inverse = 0;
  for (const onnx::NodeProto& n : m.model->graph().node()) {
    if (n.op_type() != "DFT") continue;
    for (const onnx::AttributeProto& a : n.attribute()) inverse += a.name() == "inverse" && a.i() == 1;
  }
  EXPECT_EQ(inverse, 2);
  EXPECT_GE(m.model->opset_import(0).version(), 17);
}

TEST(Families, KanEvaluatesBSplinesByComparisons) {
  const auto t = NodeTypes(Load("kan").graph);
  EXPECT_EQ(Count(t, "GreaterOrEqual"), 3);  // one knot test per layer
  EXPECT_EQ(Count(t, "Less"), 3);
  EXPECT_EQ(Count(t, "And"), 3);
  EXPECT_EQ(Count(t, "MatMul") + Count(t, "Gemm"), 6);  // spline and base term per layer
}

TEST(Families, SnnVgg9FiresOverFourTimeStepsWithSharedWeights) {
  const LoadedModel m = Load("snn_vgg9");
  const auto t = NodeTypes(m.graph);
  EXPECT_EQ(Count(t, "GreaterOrEqual"), 4 * 8);  // 7 conv + 1 hidden linear layer of neurons, 4 steps
  // The first layer reads the same image at every step: the exporter keeps
  // one of its 4 identical convolutions.
  EXPECT_EQ(Count(t, "Conv"), 1 + 4 * 6);
  std::set<std::string> conv_weights;
  for (const onnx::NodeProto& n : m.model->graph().node()) {
    if (n.op_type() == "Conv") conv_weights.insert(n.input(1));
  }
  EXPECT_EQ(conv_weights.size(), 7u);  // every step reuses the layer's weights
}

TEST(Families, BitNetWeightsAreTernaryAndActivationsQuantizedInGraph) {
  const LoadedModel m = Load("bitnet");
  // One activation quantizer per distinct input of a BitLinear: (q, k, v),
  // o, (gate, up), down in each of 2 blocks.
  EXPECT_EQ(Count(NodeTypes(m.graph), "Round"), 2 * 4);
  int ternary = 0;
  for (const onnx::TensorProto& init : m.model->graph().initializer()) {
    if (init.name().find("wq") == std::string::npos) continue;
    ASSERT_EQ(init.data_type(), onnx::TensorProto::FLOAT) << init.name();
    const std::string& raw = init.raw_data();
    ASSERT_EQ(raw.size() % sizeof(float), 0u);
    std::set<float> values;
    for (size_t i = 0; i < raw.size(); i += sizeof(float)) {
      float v;
      std::memcpy(&v, raw.data() + i, sizeof v);
      values.insert(v);
    }
    EXPECT_TRUE(std::includes(std::set<float>{-1.0F, 0.0F, 1.0F}.begin(), std::set<float>{-1.0F, 0.0F, 1.0F}.end(),
                              values.begin(), values.end()))
        << init.name();
    ++ternary;
  }
  EXPECT_EQ(ternary, 2 * 7);
}

TEST(Families, VlaPipelineRunsVisionThenLanguageThenActions) {
  const LoadedModel m = Load("vla_pipeline");
  ASSERT_EQ(m.model->graph().input_size(), 2);
  EXPECT_EQ(m.model->graph().input(0).name(), "image");
  EXPECT_EQ(m.model->graph().input(1).name(), "text");
  const auto t = NodeTypes(m.graph);
  EXPECT_EQ(Count(t, "Softmax"), 4);  // 2 vision blocks, 2 decoder layers
  EXPECT_EQ(Count(t, "Conv"), 1);     // the patch embedding
  EXPECT_EQ(m.model->graph().output(0).name(), "actions");
}

}  // namespace
}  // namespace hetplan
