// `runtime: openvino` end to end (docs/openvino.md): a platform whose PUs
// are ONNX Runtime's CPU and OpenVINO's CPU device plans ResNet-18 with both
// measured, the schedule passes `hetplan validate` and names the runtime,
// split refuses the OpenVINO PU in one line, and a device this machine lacks
// is refused in one line before anything is measured.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ov/openvino.h"
#include "testing/helpers.h"
#include "testing/scratch.h"

namespace {

namespace fs = std::filesystem;

using hetplan::test_util::CmdResult;
using hetplan::test_util::Hetplan;
using hetplan::test_util::kResnet18;
using hetplan::test_util::ReadJson;

fs::path WritePlatform(const fs::path& dir, const std::string& second_device) {
  const fs::path p = dir / "ort-ov.yaml";
  std::ofstream(p) << "name: ort-ov\n"
                      "pus:\n"
                      "  - {name: ort, kind: cpu, cost: profile}\n"
                      "  - {name: ov, kind: cpu, cost: profile, runtime: openvino, device: "
                   << second_device << "}\n";
  return p;
}

TEST(CliOpenVino, APlatformMeasuredWithBothRuntimesPlansValidatesAndIsNotSplitYet) {
  if (!hetplan::ov_runtime::Built()) GTEST_SKIP() << "this build has no OpenVINO (scripts/setup_openvino.sh)";
  const fs::path d = hetplan::test_util::FreshDir("hetplan_cli_ov_", "ok");
  const fs::path platform = WritePlatform(d, "CPU");
  CmdResult r = Hetplan("map " + kResnet18 + " --platform " + platform.string() + " --warmup 2 --runs 5 --out " +
                        (d / "s.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("ov: measured with openvino 2026.4"), std::string::npos) << r.out;
  EXPECT_EQ(Hetplan("validate " + (d / "s.json").string()).code, 0);
  const auto s = ReadJson(d / "s.json");
  EXPECT_EQ(s["platform"]["ov"]["runtime"], "openvino");
  EXPECT_EQ(s["platform"]["ov"]["device"], "CPU");
  EXPECT_FALSE(s["platform"]["ort"].contains("runtime"));
  CmdResult split = Hetplan("split " + (d / "s.json").string() + " --out " + (d / "split").string());
  EXPECT_NE(split.code, 0);
  EXPECT_NE(split.out.find("PU 'ov' runs on OpenVINO (device CPU); split and run execute ONNX Runtime PUs only"),
            std::string::npos)
      << split.out;
  EXPECT_FALSE(fs::exists(d / "split"));
}

TEST(CliOpenVino, ADeviceThisMachineLacksIsRefusedBeforeMeasuring) {
  if (!hetplan::ov_runtime::Built()) GTEST_SKIP() << "this build has no OpenVINO (scripts/setup_openvino.sh)";
  const fs::path d = hetplan::test_util::FreshDir("hetplan_cli_ov_", "gpu");
  const fs::path platform = WritePlatform(d, "GPU");
  CmdResult r = Hetplan("map " + kResnet18 + " --platform " + platform.string() + " --out " + (d / "s.json").string());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("pus[1] (ov).device: OpenVINO device 'GPU' is not on this machine (available: CPU"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(d / "s.json"));
  CmdResult bad = Hetplan("map " + kResnet18 + " --platform " + platform.string() + " --set ov.device=GPU\\ 1");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("is not an OpenVINO device name"), std::string::npos) << bad.out;
}

}  // namespace

namespace {

// `run SCHEDULE --hetero`: the plan compiled as one model on HETERO, its two
// PUs on two OpenVINO devices (the CPU plugin registered again as CPUB).
TEST(CliOpenVino, APlanRunsAsOneHeteroModelWithTheUnsplitOutputs) {
  if (!hetplan::ov_runtime::Built()) GTEST_SKIP() << "this build has no OpenVINO (scripts/setup_openvino.sh)";
  for (const std::string model : {"resnet18", "resnet18_int8"}) {
    const std::string path = hetplan::test_util::Zoo(model);
    if (!fs::exists(path)) GTEST_SKIP() << path << " not built";
    const fs::path d = hetplan::test_util::FreshDir("hetplan_cli_ov_", "hetero_" + model);
    const fs::path platform = WritePlatform(d, "CPU");
    CmdResult p = Hetplan("map " + path + " --platform " + platform.string() + " --warmup 1 --runs 3 --out " +
                          (d / "s.json").string());
    ASSERT_EQ(p.code, 0) << p.out;
    const auto plan = ReadJson(d / "s.json");
    std::set<std::string> used;
    for (const auto& op : plan["operators"]) used.insert(op["device"].get<std::string>());
    CmdResult no_device = Hetplan("run " + (d / "s.json").string() + " --hetero --runs 2");
    if (used.count("ort")) {
      EXPECT_NE(no_device.code, 0);
      EXPECT_NE(no_device.out.find("PU 'ort' runs operators but is no OpenVINO device; give it one with --device ort="),
                std::string::npos)
          << no_device.out;
    }
    // INT8: where the plan cuts the QDQ graph, OpenVINO fuses it otherwise than in one piece, and a logit may
    // round to the next step of the output's quantization (scale 0.0426 here: one step is what was seen).
    const std::string tolerance = model == "resnet18_int8" ? " --atol 0.05" : "";
    CmdResult r = Hetplan("run " + (d / "s.json").string() +
                          " --hetero --device ort=CPUB --plugin CPUB=libopenvino_intel_cpu_plugin.so --warmup 1 "
                          "--runs 3 --json " + (d / "r.json").string() + tolerance);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("outputs    match the model on "), std::string::npos) << r.out;
    const auto report = ReadJson(d / "r.json");
    EXPECT_TRUE(report["outputs_match"].get<bool>());
    EXPECT_GT(report["median_us"].get<double>(), 0.0);
    EXPECT_GE(report["submodels"].get<int>(), 1);
    // OpenVINO splits where the plan changes PU: more than one sub-model when both PUs run.
    EXPECT_GE(report["plan_segments"].get<int>(), static_cast<int>(used.size()));
    if (used.size() == 2) {
      EXPECT_GE(report["submodels"].get<int>(), 2) << r.out;
    }
  }
}

}  // namespace
