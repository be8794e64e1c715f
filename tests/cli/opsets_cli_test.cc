// The zoo at opsets 18 and 21 (issue 43): each zoo, INT8 and family model,
// converted by ONNX's own version converter (the library setup_onnx.sh builds),
// imports to the same operator graph as at its exported opset (13 or 17):
// the same operators, shapes, weight matrices, MACs, edges and phases, so
// that every cost table computed from it is the same. On an analytical
// platform the exact search then proves the same makespan.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/version_converter/convert.h>

#include "testing/helpers.h"
#include "testing/platforms.h"
#include "testing/scratch.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;
using test_util::Hetplan;

const fs::path& Scratch() { return test_util::ScratchDir("hetplan_opsets_"); }
[[maybe_unused]] ::testing::Environment* const kCleanUp =
    ::testing::AddGlobalTestEnvironment(new test_util::RemoveAtExit(Scratch()));

onnx::ModelProto Load(const fs::path& path) {
  onnx::ModelProto m;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(m.ParseFromIstream(&in)) << path;
  return m;
}

int DefaultOpset(const onnx::ModelProto& m) {
  for (const auto& o : m.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return static_cast<int>(o.version());
  }
  return -1;
}

// `hetplan graph --json` of `model`, without the "model" block (file name,
// hash and ONNX node counts, which the converter changes: it writes the axes
// of ReduceMean at opset 18 as a Constant node, which the importer folds).
nlohmann::json GraphOf(const fs::path& model) {
  const fs::path out = Scratch() / (model.stem().string() + ".graph.json");
  auto r = Hetplan("graph " + model.string() + " --json " + out.string());
  EXPECT_EQ(r.code, 0) << r.out;
  std::ifstream in(out);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << out;
  j.erase("model");
  return j;
}

struct Schedule {
  std::string status;
  double makespan_us = -1;
};

Schedule Partition(const fs::path& model) {
  const fs::path out = Scratch() / (model.stem().string() + ".schedule.json");
  auto r = Hetplan("partition " + model.string() + " --platform " +
                   test_util::WriteRooflineCimPlatform(Scratch()) + " --solver exact --time-limit 20 --out " +
                   out.string());
  EXPECT_EQ(r.code, 0) << r.out;
  std::ifstream in(out);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return {};
  return {j["solver"]["status"].get<std::string>(), j["makespan_us"].get<double>()};
}

class Opsets : public ::testing::TestWithParam<std::string> {};

TEST_P(Opsets, TheConvertedModelImportsToTheSameGraph) {
  const fs::path original = fs::path(HETPLAN_ZOO_DIR) / (GetParam() + ".onnx");
  ASSERT_TRUE(fs::exists(original)) << original << " is missing: build the `zoo` target (./test.sh does)";
  const onnx::ModelProto m = Load(original);
  ASSERT_LE(DefaultOpset(m), 17);
  const nlohmann::json base = GraphOf(original);
  ASSERT_TRUE(base.contains("operators"));
  for (int opset : {18, 21}) {
    onnx::ModelProto converted = onnx::version_conversion::ConvertVersion(m, opset);
    ASSERT_EQ(DefaultOpset(converted), opset);
    onnx::checker::check_model(converted);  // throws (fails the test) on an invalid model
    const fs::path path = Scratch() / (GetParam() + "_opset" + std::to_string(opset) + ".onnx");
    {
      std::ofstream out(path, std::ios::binary);
      ASSERT_TRUE(converted.SerializeToOstream(&out));
    }
    const nlohmann::json at = GraphOf(path);
    ASSERT_EQ(at["stats"], base["stats"]) << "opset " << opset;
    ASSERT_EQ(at["operators"].size(), base["operators"].size());
    for (size_t i = 0; i < base["operators"].size(); ++i) {
      EXPECT_EQ(at["operators"][i], base["operators"][i]) << "opset " << opset << ", operator " << i;
    }
    EXPECT_EQ(at, base) << "opset " << opset;  // edges, phases, graph inputs and outputs too
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, Opsets,
                         ::testing::Values("resnet18", "resnet50", "mobilenetv2", "vit_b_16", "yolov5n", "googlenet",
                                           "vgg8", "resnet18_int8", "yolov5n_int8", "resnet18_int8_qop",
                                           "llama_layer", "mamba", "hyena", "kan", "snn_vgg9", "bitnet",
                                           "vla_pipeline", "llama_layer_int8", "bitnet_int8"),
                         [](const auto& info) { return info.param; });

// The same optimum: the exact search on an analytical platform (roofline CPU
// beside the CIM paper's crossbars) proves the same makespan at opsets 13, 18
// and 21 (the CNNs, which it proves within seconds).
TEST(OpsetsPlan, TheExactSearchProvesTheSameMakespan) {
  for (const std::string name : {"resnet18", "googlenet", "mobilenetv2", "yolov5n"}) {
    const fs::path original = fs::path(HETPLAN_ZOO_DIR) / (name + ".onnx");
    ASSERT_TRUE(fs::exists(original)) << original;
    const Schedule base = Partition(original);
    ASSERT_EQ(base.status, "optimal") << name;
    const onnx::ModelProto m = Load(original);
    for (int opset : {18, 21}) {
      const fs::path path = Scratch() / (name + "_plan_opset" + std::to_string(opset) + ".onnx");
      {
        std::ofstream out(path, std::ios::binary);
        ASSERT_TRUE(onnx::version_conversion::ConvertVersion(m, opset).SerializeToOstream(&out));
      }
      const Schedule at = Partition(path);
      EXPECT_EQ(at.status, "optimal") << name << " at opset " << opset;
      EXPECT_DOUBLE_EQ(at.makespan_us, base.makespan_us) << name << " at opset " << opset;
    }
  }
}

}  // namespace
}  // namespace hetplan

