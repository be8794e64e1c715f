// BIDENT's workload families (models/families.py) profile, plan and validate
// like every zoo model: the exact search on a CPU + CIM platform with the host
// measured, BIDENT's mapping on the CPU/GPU/NPU example.
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/helpers.h"

namespace {

namespace fs = std::filesystem;

using hetplan::test_util::CmdResult;
using hetplan::test_util::Hetplan;

class FamilyCli : public ::testing::TestWithParam<const char*> {};

TEST_P(FamilyCli, ProfilesPlansAndValidates) {
  const std::string model = std::string(HETPLAN_ZOO_DIR) + "/" + GetParam() + ".onnx";
  const fs::path d = fs::temp_directory_path() / ("hetplan_family_" + std::string(GetParam()) + "_" +
                                                  std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  const std::string cache = " --cache-dir " + (d / "cache").string();
  CmdResult p = Hetplan("partition " + model + " --platform klein-arm --warmup 1 --runs 3 --time-limit 20" + cache +
                        " --out " + (d / "p.json").string());
  ASSERT_EQ(p.code, 0) << p.out;
  EXPECT_EQ(Hetplan("validate " + (d / "p.json").string()).code, 0);
  std::ifstream f(d / "p.json");
  const nlohmann::json s = nlohmann::json::parse(f);
  EXPECT_EQ(s["solver"]["status"], "optimal") << p.out;
  EXPECT_GE(s["speedup"].get<double>(), 1.0);
  CmdResult m = Hetplan("map " + model + " --platform soc-example --warmup 1 --runs 3" + cache + " --out " +
                        (d / "m.json").string());
  ASSERT_EQ(m.code, 0) << m.out;
  EXPECT_EQ(Hetplan("validate " + (d / "m.json").string()).code, 0);
  fs::remove_all(d);
}

// DFT (Hyena), the longest graph (Mamba's unrolled scan), two graph inputs
// (the pipeline), INT8 with ternary weights (BitNet).
INSTANTIATE_TEST_SUITE_P(Families, FamilyCli, ::testing::Values("hyena", "mamba", "vla_pipeline", "bitnet_int8"));

}  // namespace
