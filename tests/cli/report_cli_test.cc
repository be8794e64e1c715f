// `hetplan report --frontier` end to end: a frontier file alone is enough,
// neither a results file nor a frontier file is one error line, a bad
// frontier file is one error line naming the file and the field with
// nothing written, and --no-figures needs no gnuplot.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hetplan/report/plots.h"
#include "testing/helpers.h"
#include "testing/scratch.h"

namespace {

namespace fs = std::filesystem;

using hetplan::test_util::CmdResult;
using hetplan::test_util::Hetplan;

using hetplan::test_util::Slurp;
using hetplan::test_util::TempDir;

// A small single-curve frontier file, as `hetplan frontier` writes it.
nlohmann::json Frontier() {
  nlohmann::json bps = nlohmann::json::array();
  for (const auto& [xb, ms] : {std::pair{0, 10000.0}, std::pair{30, 5000.0}, std::pair{90, 2000.0}}) {
    bps.push_back({{"crossbars", xb}, {"makespan_us", ms}, {"speedup", 10000.0 / ms}, {"status", "optimal"},
                   {"lower_bound_us", ms}});
  }
  return {{"format", "hetplan-frontier"},
          {"version", 1},
          {"model", {{"file", "resnet18.onnx"}, {"sha256", "00"}, {"operators", 30}}},
          {"platform", {{"name", "klein-x86"}, {"source", "klein-x86"}, {"overrides", nlohmann::json::array()}}},
          {"pu", "cim"},
          {"crossbars_range", {0, 120}},
          {"crossbars_for_all", 120},
          {"cpu_only_us", 10000.0},
          {"solver", {{"name", "exact"}, {"complete", true}, {"termination", "proved"}}},
          {"breakpoints", bps},
          {"lower_bounds", nlohmann::json::array()}};
}

TEST(CliReport, AFrontierFileAloneMakesAReport) {
  if (!hetplan::GnuplotAvailable()) GTEST_SKIP() << "gnuplot not installed";
  const fs::path d = TempDir("ok");
  std::ofstream(d / "f.json") << Frontier().dump();
  CmdResult r = Hetplan("report --frontier " + (d / "f.json").string() + " --out " + (d / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("frontiers 1 files, 1 curves"), std::string::npos) << r.out;
  const std::string md = Slurp(d / "out" / "report.md");
  EXPECT_NE(md.find("| resnet18 | klein-x86 | — | 0–120 | 3 | complete | not in the file | — | 1.00× | 2.00× | "
                    "5.00× | 5.00× |"),
            std::string::npos)
      << md;
  EXPECT_TRUE(fs::exists(d / "out" / "frontier_0_resnet18_klein-x86.png"));
  EXPECT_TRUE(fs::exists(d / "out" / "frontier_0_resnet18_klein-x86.svg"));
  EXPECT_TRUE(fs::exists(d / "out" / "frontier_0_resnet18_klein-x86.gp"));
}

TEST(CliReport, NothingToReportIsOneErrorLine) {
  CmdResult r = Hetplan("report --out " + (TempDir("none") / "out").string());
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find("--frontier"), std::string::npos) << r.out;
}

TEST(CliReport, ABadFrontierFileIsOneErrorLineAndWritesNothing) {
  const fs::path d = TempDir("bad");
  nlohmann::json j = Frontier();
  j["breakpoints"][1]["makespan_us"] = "fast";
  std::ofstream(d / "f.json") << j.dump();
  CmdResult r = Hetplan("report --no-figures --frontier " + (d / "f.json").string() + " --out " + (d / "out").string());
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find((d / "f.json").string() + ": breakpoints[1].makespan_us: \"fast\" is not a number"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(d / "out"));
}

TEST(CliReport, NoFiguresNeedsNoGnuplot) {
  const fs::path d = TempDir("nogp");
  std::ofstream(d / "f.json") << Frontier().dump();
  fs::create_directories(d / "bin");
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  // The child's shell is /bin/sh by its full path; `hetplan` finds no gnuplot.
  setenv("PATH", (d / "bin").c_str(), 1);
  CmdResult r = Hetplan("report --no-figures --frontier " + (d / "f.json").string() + " --out " + (d / "out").string());
  CmdResult with = Hetplan("report --frontier " + (d / "f.json").string() + " --out " + (d / "out2").string());
  setenv("PATH", old_path.c_str(), 1);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(Slurp(d / "out" / "report.md").find("| resnet18 | klein-x86 |"), std::string::npos);
  EXPECT_FALSE(fs::exists(d / "out" / "frontier_0_resnet18_klein-x86.png"));
  EXPECT_NE(with.code, 0);
  EXPECT_NE(with.out.find("gnuplot"), std::string::npos) << with.out;
}

}  // namespace
