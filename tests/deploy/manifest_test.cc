// The deployment manifest's format on its own: what ManifestToJson writes,
// LoadManifest reads back, and the keys that only describe the plan are
// read leniently.
#include "hetplan/deploy/manifest.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/util/io.h"
#include "testing/scratch.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

using test_util::TempDir;

ManifestTensor Tensor(const std::string& name, std::vector<int64_t> shape) {
  ManifestTensor t;
  t.name = name;
  t.dtype = "float32";
  t.shape = std::move(shape);
  t.bytes = 4;
  for (int64_t d : t.shape) t.bytes *= d;
  return t;
}

// Segment `id` of PU `pu` (its kind too), one ONNX node per operator.
ManifestSegment Segment(int id, const std::string& pu, std::vector<int> operators) {
  ManifestSegment s;
  s.id = id;
  s.device = s.kind = pu;
  s.measured = pu == "cpu";
  s.file = "segment_00" + std::to_string(id) + "_" + pu + ".onnx";
  s.sha256 = "s" + std::to_string(id);
  s.nodes = static_cast<int>(operators.size());
  s.operators = std::move(operators);
  return s;
}

// Two segments, x → [cpu: a] → [cim: y]; every key the writer knows set.
Manifest TwoSegments() {
  Manifest m;
  m.model_name = "tiny";
  m.model_file = "/models/tiny.onnx";
  m.model_sha256 = "abc";
  m.fusion = "activation";
  m.model_operators = 3;
  m.assumptions.input_shapes = {{"x", {1, 4}}};
  m.assumptions.fixed_inputs = {{"sr", onnx::TensorProto::INT64, {}, {"16000"}},
                                {"gains", onnx::TensorProto::FLOAT, {2}, {"0.5", "-2"}}};
  m.assumptions.branches = {{"gate", true, true, "wake"}, {"sr_if", false, false, "is16k"}};
  m.schedule = {"plan.json", "klein-arm", "ilp", "optimal", 12.5, 0, 3.5};
  m.threads = 2;
  m.graph_optimization = "all";
  m.devices = {{"cpu", "cpu", "serial", "measured", true}, {"cim", "cim", "spatial", "analytical", false}};
  m.inputs = {Tensor("x", {1, 4})};
  ManifestTensor y = Tensor("y", {1, 4});
  y.segment = 1;
  m.outputs = {y};
  ManifestSegment a = Segment(0, "cpu", {0, 1});
  a.inputs = {Tensor("x", {1, 4})};
  ManifestTensor out = Tensor("a", {1, 4});
  out.to = {1};
  a.outputs = {out};
  a.predicted_us = 5;
  a.planned_start_us = 0;
  a.planned_finish_us = 5;
  ManifestSegment b = Segment(1, "cim", {2});
  ManifestTensor in = Tensor("a", {1, 4});
  in.from = 0;
  b.inputs = {in};
  ManifestTensor last = Tensor("y", {1, 4});
  last.model_output = true;
  b.outputs = {last};
  b.depends_on = {0};
  b.predicted_us = 7;
  b.predicted_transfer_in_us = 0.5;
  b.planned_start_us = 5.5;
  b.planned_finish_us = 12.5;
  b.unused_outputs = true;
  m.segments = {a, b};
  m.boundaries = 1;
  m.handoffs = 1;
  m.predicted_host_us = 5;
  m.predicted_accelerator_us = 7;
  m.predicted_transfer_us = 0.5;
  m.predicted_sequential_us = 12.5;
  m.predicted_makespan_us = 12.5;
  return m;
}

fs::path WriteWithSegments(const std::string& name, const nlohmann::json& j) {
  const fs::path dir = TempDir(name);
  for (const char* file : {"segment_000_cpu.onnx", "segment_001_cim.onnx"}) {
    EXPECT_TRUE(WriteFileAtomic((dir / file).string(), "onnx").ok());
  }
  EXPECT_TRUE(WriteManifest(j, dir.string()).ok());
  return dir;
}

TEST(Manifest, WritesEveryKeyAndReadsItBack) {
  const Manifest m = TwoSegments();
  const nlohmann::json j = ManifestToJson(m);
  EXPECT_EQ(j["format"], kManifestFormat);
  EXPECT_EQ(j["version"], kManifestVersion);
  EXPECT_EQ(j["model"]["input_shapes"]["x"], nlohmann::json({1, 4}));
  EXPECT_EQ(j["model"]["input_values"]["sr"]["values"], nlohmann::json::array({16000}));
  EXPECT_EQ(j["model"]["input_values"]["gains"]["dtype"], "float32");
  EXPECT_EQ(j["model"]["branches"][0]["assumed"], true);
  EXPECT_EQ(j["model"]["branches"][1]["branch"], "else");
  EXPECT_EQ(j["devices"][1]["timing"], "modelled");
  EXPECT_EQ(j["outputs"][0]["segment"], 1);
  EXPECT_FALSE(j["inputs"][0].contains("from"));
  EXPECT_TRUE(j["segments"][0]["inputs"][0]["from"].is_null());
  EXPECT_EQ(j["segments"][1]["inputs"][0]["from"], 0);
  EXPECT_FALSE(j["segments"][0].contains("unused_outputs"));
  EXPECT_EQ(j["segments"][1]["unused_outputs"], true);
  EXPECT_EQ(j["schedule"]["initiation_interval_us"], 3.5);

  const fs::path dir = WriteWithSegments("roundtrip", j);
  const std::string text = ReadFile((dir / kManifestFileName).string()).value();
  EXPECT_EQ(text, j.dump(1) + "\n");
  auto loaded = LoadManifest(dir.string());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->dir, dir.string());
  EXPECT_EQ(loaded->segments[1].path, (dir / "segment_001_cim.onnx").string());
  EXPECT_EQ(ManifestToJson(*loaded), j);
  fs::remove_all(dir);
}

// Keys that only describe the plan never make a manifest unreadable.
TEST(Manifest, ReadsDescriptiveKeysLeniently) {
  nlohmann::json j = ManifestToJson(TwoSegments());
  j["schedule"] = "not a map";
  j["devices"] = {1, "two"};
  j["handoffs"] = "many";
  j["segments"][0]["nodes"] = "two";
  j["segments"][1]["unused_outputs"] = "yes";
  j["outputs"][0]["segment"] = nullptr;
  j["model"].erase("input_shapes");
  const fs::path dir = WriteWithSegments("lenient", j);
  auto loaded = LoadManifest(dir.string());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->schedule.file, "");
  EXPECT_TRUE(loaded->devices.empty());
  EXPECT_EQ(loaded->handoffs, 0);
  EXPECT_EQ(loaded->segments[0].nodes, 0);
  EXPECT_FALSE(loaded->segments[1].unused_outputs);
  EXPECT_EQ(loaded->outputs[0].segment, -1);
  EXPECT_TRUE(loaded->assumptions.input_shapes.empty());
  EXPECT_EQ(loaded->boundaries, 1);  // counted from the segments, as before
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hetplan
