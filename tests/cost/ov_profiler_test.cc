// The OpenVINO profiler (runtime: openvino, docs/openvino.md) on the zoo's
// ResNet-18 in FP32 and INT8, on this machine's CPU device: every operator
// gets its share of OpenVINO's executed nodes, the shares add up to what the
// nodes measured, the INT8 graph's QDQ nodes are given to an executed node
// through the graph, the cache returns the same table, and a device this
// machine lacks is refused in one line. Few runs: the checks are on the
// mapping and the bookkeeping, not on how fast this machine is.
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "hetplan/cost/profiler.h"
#include "hetplan/graph/onnx_import.h"
#include "ov/openvino.h"
#include "testing/helpers.h"
#include "testing/scratch.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;
using test_util::Zoo;

ProfileOptions OpenVinoCpu() {
  ProfileOptions o;
  o.runtime = "openvino";
  o.device = "CPU";
  o.warmup = 3;
  o.runs = 10;
  return o;
}

// A build without OpenVINO (HETPLAN_OPENVINO=OFF, or no scripts/setup_openvino.sh) has nothing to test here;
// ./test.sh's setup installs it, so CI runs every test below.
#define HETPLAN_NEED_OPENVINO() \
  if (!ov_runtime::Built()) GTEST_SKIP() << "this build has no OpenVINO (scripts/setup_openvino.sh)"

double Num(const CostTable& t, const std::string& key) {
  auto it = t.meta.find(key);
  return it == t.meta.end() ? -1.0 : std::stod(it->second);
}

TEST(OpenVinoProfiler, EveryResNet18OperatorGetsItsShareOfTheExecutedNodes) {
  HETPLAN_NEED_OPENVINO();
  auto m = LoadOnnxModel(Zoo("resnet18"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto t = ProfileOpenVino(*m, "ov", OpenVinoCpu());
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(static_cast<int>(t->ops.size()), m->graph.size());
  EXPECT_EQ(t->meta.at("runtime").rfind("openvino 2026.4", 0), 0u) << t->meta.at("runtime");
  EXPECT_EQ(t->meta.at("device"), "CPU");
  EXPECT_EQ(t->meta.at("precision"), "f32");  // not the CPU's default bf16
  EXPECT_GE(Num(*t, "executed_nodes"), 20);   // 20 convolutions at least
  EXPECT_GE(Num(*t, "onnx_nodes_named"), 40);
  double sum = 0;
  for (const OpCost& c : t->ops) {
    EXPECT_EQ(c.pu, "ov");
    EXPECT_GE(c.exec_us, 0.0);
    sum += c.exec_us;
    if (m->graph.op(c.op_id).type == "Conv") {
      EXPECT_GT(c.exec_us, 0.0) << c.op_name;
    }
  }
  EXPECT_NEAR(sum, Num(*t, "sum_of_op_us"), 1e-6 * sum);
  ASSERT_TRUE(t->model_median_us.has_value());
  EXPECT_NEAR(sum / *t->model_median_us - 1.0, Num(*t, "relative_error"), 1e-9);
  // The per-node counters account for most of a whole inference.
  EXPECT_GT(sum, 0.5 * *t->model_median_us);
  EXPECT_LT(sum, 1.5 * *t->model_median_us);
  EXPECT_TRUE(CheckCostTable(*t, m->graph, "ov").ok());
}

TEST(OpenVinoProfiler, Int8QdqNodesAreGivenToAnExecutedNodeThroughTheGraph) {
  HETPLAN_NEED_OPENVINO();
  const std::string path = Zoo("resnet18_int8");
  if (!fs::exists(path)) GTEST_SKIP() << "INT8 zoo not built (target zoo)";
  auto m = LoadOnnxModel(path);
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto t = ProfileOpenVino(*m, "ov", OpenVinoCpu());
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(static_cast<int>(t->ops.size()), m->graph.size());
  // originalLayersNames names few of the QDQ graph's nodes: most are found through the graph.
  EXPECT_GT(Num(*t, "onnx_nodes_attributed"), Num(*t, "onnx_nodes_named"));
  EXPECT_LE(Num(*t, "onnx_nodes_named") + Num(*t, "onnx_nodes_attributed"), Num(*t, "onnx_nodes"));
  int timed_convs = 0;
  for (const OpCost& c : t->ops) timed_convs += m->graph.op(c.op_id).type == "Conv" && c.exec_us > 0 ? 1 : 0;
  EXPECT_GE(timed_convs, 20);
}

TEST(OpenVinoProfiler, ACachedTableIsTheSameAndItsKeyNamesTheRuntime) {
  HETPLAN_NEED_OPENVINO();
  auto m = LoadOnnxModel(Zoo("resnet18"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  ProfileOptions o = OpenVinoCpu();
  o.runs = 3;
  o.cache_dir = test_util::FreshDir("hetplan_ov_cache_", "c").string();
  auto a = ProfileOperators(*m, "ov", o);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->meta.at("cache"), "miss");
  auto b = ProfileOperators(*m, "ov", o);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->meta.at("cache"), "hit");
  ASSERT_EQ(a->ops.size(), b->ops.size());
  for (size_t i = 0; i < a->ops.size(); ++i) EXPECT_DOUBLE_EQ(a->ops[i].exec_us, b->ops[i].exec_us);
  ProfileOptions ort = o;
  ort.runtime = "onnxruntime";
  ort.device.clear();
  EXPECT_NE(ProfileCacheKey(*m, "ov", o), ProfileCacheKey(*m, "ov", ort));
}

TEST(OpenVinoProfiler, EachOperationOfTheModelAsReadBelongsToAnOnnxNode) {
  HETPLAN_NEED_OPENVINO();
  auto m = LoadOnnxModel(Zoo("resnet18"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto ops = ov_runtime::ReadOperations(*m->model, "resnet18");
  ASSERT_TRUE(ops.ok()) << ops.status().message();
  std::set<int> nodes;
  for (const ov_runtime::ReadOperation& op : *ops) {
    if (op.type == "Parameter" || op.type == "Result") {
      EXPECT_EQ(op.onnx_node, -1) << op.name;
      continue;
    }
    EXPECT_GE(op.onnx_node, 0) << op.name << " (" << op.type << ")";
    nodes.insert(op.onnx_node);
  }
  // Every ONNX node of ResNet-18 has an operation (Flatten's is a Reshape).
  EXPECT_EQ(static_cast<int>(nodes.size()), m->model->graph().node_size());
}

TEST(OpenVinoProfiler, ADeviceThisMachineLacksIsRefusedInOneLine) {
  HETPLAN_NEED_OPENVINO();
  ProcessingUnit pu;
  pu.name = "gpu";
  pu.kind = PuKind::kGpu;
  pu.runtime = "openvino";
  pu.device = "GPU";
  Status st = CheckPuRuntime(pu, "bident.yaml: pus[1] (gpu)");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("bident.yaml: pus[1] (gpu).device: OpenVINO device 'GPU' is not on this machine "
                              "(available: CPU"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(st.message().find('\n'), std::string::npos);
  pu.device = "CPU";
  EXPECT_TRUE(CheckPuRuntime(pu, "x").ok());
}

}  // namespace
}  // namespace hetplan
