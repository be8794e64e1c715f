// `hetplan frontier` end to end: the files it writes (each breakpoint's
// schedule passes `hetplan validate`), and bad arguments that end in one
// error line with nothing written.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/helpers.h"
#include "testing/scratch.h"
#include "testing/platforms.h"

namespace {

namespace fs = std::filesystem;

using hetplan::test_util::CmdResult;
using hetplan::test_util::Hetplan;
using hetplan::test_util::kResnet18;
using hetplan::test_util::Slurp;
using hetplan::test_util::TempDir;

std::string Platform(const fs::path& dir) { return hetplan::test_util::WriteRooflineCimPlatform(dir); }

TEST(CliFrontier, WritesTheCurveCsvAndValidSchedules) {
  if (!fs::exists(kResnet18)) GTEST_SKIP() << "zoo not built";
  const fs::path d = TempDir("ok");
  CmdResult r = Hetplan("frontier " + kResnet18 + " --platform " + Platform(d) + " --out " + (d / "f.json").string() +
                        " --csv " + (d / "f.csv").string() + " --schedules " + (d / "s").string() +
                        " --saturation --min-crossbars-for-speedup 1.2 --threads 1");
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(d / "f.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["format"], "hetplan-frontier");
  ASSERT_FALSE(j["breakpoints"].empty());
  EXPECT_EQ(j["breakpoints"][0]["crossbars"], 0);
  EXPECT_TRUE(j["solver"]["complete"].get<bool>());
  double last = 1e300;
  for (const auto& bp : j["breakpoints"]) {
    EXPECT_EQ(bp["status"], "optimal");
    EXPECT_LT(bp["makespan_us"].get<double>(), last);
    last = bp["makespan_us"].get<double>();
    const std::string file = bp["schedule_file"].get<std::string>();
    CmdResult v = Hetplan("validate " + file);
    EXPECT_EQ(v.code, 0) << v.out;
    std::ifstream sf(file);
    const nlohmann::json s = nlohmann::json::parse(sf);
    EXPECT_EQ(s["makespan_us"].get<double>(), bp["makespan_us"].get<double>());
    for (const auto& dev : s["devices"]) {
      if (dev["name"] == "cim") {
        EXPECT_EQ(dev["capacity_crossbars"], bp["crossbars"]);
      }
    }
  }
  EXPECT_EQ(j["saturation"]["crossbars"], j["breakpoints"].back()["crossbars"]);
  const std::string csv = Slurp(d / "f.csv");
  EXPECT_EQ(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')), j["breakpoints"].size() + 1);
  EXPECT_NE(r.out.find("saturation"), std::string::npos) << r.out;
}

// --objective throughput: a stream's smallest II per budget, falling at each
// breakpoint; every breakpoint's cyclic schedule passes `hetplan validate`
// at its own budget, with the breakpoint's II; `hetplan report` draws it.
TEST(CliFrontier, ThroughputCurveOfTheInitiationInterval) {
  if (!fs::exists(kResnet18)) GTEST_SKIP() << "zoo not built";
  const fs::path d = TempDir("stream");
  CmdResult r = Hetplan("frontier " + kResnet18 + " --platform " + Platform(d) + " --objective throughput --out " +
                        (d / "f.json").string() + " --csv " + (d / "f.csv").string() + " --schedules " +
                        (d / "s").string() + " --crossbars 0:120 --saturation --min-crossbars-for-speedup 1.5");
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(d / "f.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["objective"], "throughput");
  ASSERT_GT(j["breakpoints"].size(), 2u);
  EXPECT_TRUE(j["solver"]["complete"].get<bool>());
  double last = 1e300;
  for (const auto& bp : j["breakpoints"]) {
    EXPECT_EQ(bp["status"], "optimal");
    EXPECT_FALSE(bp.contains("makespan_us"));
    const double ii = bp["initiation_interval_us"].get<double>();
    EXPECT_LT(ii, last);
    last = ii;
    EXPECT_NEAR(bp["inputs_per_s"].get<double>(), 1e6 / ii, 1e-6 * 1e6 / ii);
    EXPECT_NEAR(bp["speedup"].get<double>(), j["cpu_only_us"].get<double>() / ii, 1e-9 * bp["speedup"].get<double>());
    const std::string file = bp["schedule_file"].get<std::string>();
    CmdResult v = Hetplan("validate " + file);
    EXPECT_EQ(v.code, 0) << v.out;
    std::ifstream sf(file);
    const nlohmann::json s = nlohmann::json::parse(sf);
    EXPECT_EQ(s["initiation_interval_us"].get<double>(), ii);
    EXPECT_EQ(s["makespan_us"].get<double>(), bp["latency_us"].get<double>());
  }
  EXPECT_TRUE(j["min_crossbars_for_speedup"].contains("initiation_interval_us"));
  EXPECT_NE(r.out.find(" II "), std::string::npos) << r.out;
  const std::string csv = Slurp(d / "f.csv");
  EXPECT_EQ(csv.rfind("crossbars,initiation_interval_us,", 0), 0u) << csv;
  CmdResult rep = Hetplan("report --frontier " + (d / "f.json").string() + " --out " + (d / "report").string());
  ASSERT_EQ(rep.code, 0) << rep.out;
  EXPECT_NE(Slurp(d / "report" / "report.md").find("throughput (II)"), std::string::npos);
}

// --objective throughput --pareto: the (II, latency) front at the platform's
// budget, on a model small enough for the MIP with a latency bound; each
// point's cyclic schedule passes `hetplan validate` and keeps its latency.
TEST(CliFrontier, ThroughputParetoFrontOfIntervalAndLatency) {
  const std::string vgg8 = std::string(HETPLAN_ZOO_DIR) + "/vgg8.onnx";
  if (!fs::exists(vgg8)) GTEST_SKIP() << "zoo not built";
  const fs::path d = TempDir("stream_front");
  CmdResult r = Hetplan("frontier " + vgg8 + " --platform klein-arm --warmup 1 --runs 2 --threads 1 --objective "
                        "throughput --pareto --pareto-points 3 --time-limit 4 --crossbars 0:40 --out " +
                        (d / "f.json").string() + " --schedules " + (d / "s").string());
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(d / "f.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  const auto& points = j["pareto"]["points"];
  ASSERT_GE(points.size(), 1u);
  EXPECT_EQ(j["pareto"]["objective"], "throughput");
  double last_ii = 0, last_latency = 1e300;
  for (const auto& pt : points) {
    EXPECT_GT(pt["initiation_interval_us"].get<double>(), last_ii);
    EXPECT_LT(pt["latency_us"].get<double>(), last_latency);
    last_ii = pt["initiation_interval_us"].get<double>();
    last_latency = pt["latency_us"].get<double>();
    const std::string file = pt["schedule_file"].get<std::string>();
    CmdResult v = Hetplan("validate " + file);
    EXPECT_EQ(v.code, 0) << v.out;
    std::ifstream sf(file);
    const nlohmann::json s = nlohmann::json::parse(sf);
    EXPECT_EQ(s["initiation_interval_us"].get<double>(), last_ii);
    EXPECT_EQ(s["makespan_us"].get<double>(), last_latency);
  }
  EXPECT_NE(r.out.find("one input"), std::string::npos) << r.out;
}

// A second axis, the Pareto front and the MVM-latency question in one call:
// one curve per value, each with the schedule files in its own folder, all
// valid; the CSV has the axis column.
TEST(CliFrontier, CurvesPerMvmLatencyParetoFrontAndMvmQuestion) {
  if (!fs::exists(kResnet18)) GTEST_SKIP() << "zoo not built";
  const fs::path d = TempDir("axis");
  CmdResult r = Hetplan("frontier " + kResnet18 + " --platform " + Platform(d) +
                        " --set cpu.power_w=5 --set cim.power_w=40 --sweep cim.mvm_latency_ns=50,1000 --pareto "
                        "--saturation --threads 1 --out " +
                        (d / "f.json").string() + " --csv " + (d / "f.csv").string() + " --schedules " +
                        (d / "s").string());
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(d / "f.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_FALSE(j.contains("breakpoints"));
  EXPECT_EQ(j["axis"]["key"], "cim.mvm_latency_ns");
  ASSERT_EQ(j["curves"].size(), 2u);
  EXPECT_EQ(j["curves"][0]["value"].get<double>(), 50);
  EXPECT_EQ(j["curves"][1]["value"].get<double>(), 1000);
  size_t rows = 0;
  for (const auto& c : j["curves"]) {
    ASSERT_FALSE(c["breakpoints"].empty());
    rows += c["breakpoints"].size();
    // Every file exists; `hetplan validate` re-checks the two ends (the
    // library validated each before writing).
    for (const auto& bp : c["breakpoints"]) {
      const std::string file = bp["schedule_file"].get<std::string>();
      EXPECT_NE(file.find("cim.mvm_latency_ns="), std::string::npos) << file;
      EXPECT_TRUE(fs::exists(file)) << file;
    }
    for (const auto* bp : {&c["breakpoints"].front(), &c["breakpoints"].back()}) {
      EXPECT_EQ(Hetplan("validate " + (*bp)["schedule_file"].get<std::string>()).code, 0);
    }
    ASSERT_FALSE(c["pareto"]["points"].empty());
    for (const auto& pt : c["pareto"]["points"]) {
      EXPECT_EQ(Hetplan("validate " + pt["schedule_file"].get<std::string>()).code, 0);
    }
  }
  // A slower MVM never makes the best plan faster.
  EXPECT_GE(j["curves"][1]["breakpoints"].back()["makespan_us"].get<double>(),
            j["curves"][0]["breakpoints"].back()["makespan_us"].get<double>() * (1 - 1e-9));
  const std::string csv = Slurp(d / "f.csv");
  EXPECT_EQ(csv.rfind("cim.mvm_latency_ns,crossbars,", 0), 0u) << csv.substr(0, 80);
  EXPECT_EQ(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')), rows + 1);

  CmdResult m = Hetplan("frontier " + kResnet18 + " --platform " + Platform(d) +
                        " --max-mvm-latency-for-speedup 1.2 --threads 1 --out " + (d / "m.json").string());
  ASSERT_EQ(m.code, 0) << m.out;
  std::ifstream mi(d / "m.json");
  const nlohmann::json a = nlohmann::json::parse(mi)["max_mvm_latency_for_speedup"];
  EXPECT_NE(m.out.find("MVM latency"), std::string::npos) << m.out;
  if (a["status"] == "optimal") {
    EXPECT_GE(a["speedup_at"].get<double>(), 1.2 * (1 - 1e-12));
    EXPECT_LT(a["speedup_above"].get<double>(), 1.2);
    EXPECT_GT(a["not_reached_ns"].get<double>(), a["mvm_latency_ns"].get<double>());
  }
}

TEST(CliFrontier, BadArgumentsGiveOneErrorLineAndWriteNothing) {
  if (!fs::exists(kResnet18)) GTEST_SKIP() << "zoo not built";
  const fs::path d = TempDir("bad");
  const std::string platform = Platform(d);
  const fs::path out = d / "f.json";
  const struct {
    std::string args, says;
  } cases[] = {
      {"--platform " + platform + " --crossbars 50:10", "empty range"},
      {"--platform " + platform + " --crossbars 100000:", "past saturation"},
      {"--platform " + platform + " --crossbars=-5:10", "negative"},
      {"--platform " + platform + " --crossbars 0:x", "not an integer"},
      {"--platform soc-example", "no crossbar capacity"},
      {"--platform " + platform + " --pu cpu", "no crossbar capacity"},
      {"--platform " + platform + " --pu gpu", "no such PU"},
      {"--platform " + platform + " --min-crossbars-for-speedup -2", "factor > 0"},
      {"--platform " + platform + " --min-crossbars-for-speedup 0", "factor > 0"},
      {"--platform " + platform + " --min-crossbars-for-makespan -1", "makespan is > 0"},
      {"--platform " + platform + " --gap -1", "gap"},
      {"--platform " + platform + " --sweep cim.mvm_latency_ns", "PU.KEY=V1,V2"},
      {"--platform " + platform + " --sweep cim.mvm_latency_ns=50,,100", "empty value"},
      {"--platform " + platform + " --sweep cim.mvm_latency_ns=50,50", "given twice"},
      {"--platform " + platform + " --sweep cim.mvm_latency_ns=-5", "--sweep cim.mvm_latency_ns=-5"},
      {"--platform " + platform + " --sweep cim.crossbars=10,20", "frontier's own axis"},
      {"--platform " + platform + " --pareto", "no power_w"},
      {"--platform " + platform + " --set cpu.power_w=5 --set cim.power_w=2 --pareto --pareto-points 0",
       "at least one point"},
      {"--platform " + platform + " --max-mvm-latency-for-speedup 0", "factor > 0"},
      {"--platform " + platform + " --objective energy", "latency and throughput"},
      {"--platform " + platform + " --objective speed", "speed"},
      {"--platform " + platform + " --objective throughput --min-crossbars-for-makespan 100",
       "--min-crossbars-for-makespan"},
      {"--platform " + platform + " --objective throughput --pareto", "plan one cap at a time"},
      {"--platform " + platform + " --max-mvm-latency-for-speedup 2 --sweep cim.mvm_latency_ns=50,100",
       "do not --sweep"},
  };
  for (const auto& c : cases) {
    std::ofstream(out) << "keep";
    CmdResult r = Hetplan("frontier " + kResnet18 + " " + c.args + " --out " + out.string() + " --csv " +
                          (d / "f.csv").string() + " --schedules " + (d / "s").string());
    EXPECT_NE(r.code, 0) << c.args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find("error"), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_EQ(Slurp(out), "keep") << c.args;
    EXPECT_FALSE(fs::exists(d / "f.csv")) << c.args;
    EXPECT_FALSE(fs::exists(d / "s")) << c.args;
  }
}

}  // namespace
