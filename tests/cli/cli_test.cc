// End-to-end: the real `hetplan` binary on real files (HiGHS-style app tests).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/helpers.h"
#include "testing/scratch.h"

namespace {

namespace fs = std::filesystem;

using hetplan::test_util::CmdResult;
using hetplan::test_util::Hetplan;

using hetplan::test_util::ReadJson;
using hetplan::test_util::TempDir;
using hetplan::test_util::Zoo;

TEST(Cli, HelpListsSubcommands) {
  CmdResult r = Hetplan("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* sub : {"graph", "profile", "partition", "validate"}) {
    EXPECT_NE(r.out.find(sub), std::string::npos) << sub;
  }
}

TEST(Cli, GraphPrintsSummaryAndWritesJsonAndDot) {
  fs::path d = TempDir("graph");
  CmdResult r = Hetplan("graph " + Zoo("resnet18") + " --json " + (d / "g.json").string() + " --dot " + (d / "g.dot").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("operators  49"), std::string::npos) << r.out;
  auto j = ReadJson(d / "g.json");
  EXPECT_EQ(j["operators"].size(), 49u);
  EXPECT_EQ(j["operators"][0]["type"], "Conv");
  EXPECT_TRUE(j["operators"][0].contains("n_mvm"));
  EXPECT_EQ(j["edges"].size(), 56u);
  EXPECT_TRUE(fs::file_size(d / "g.dot") > 100);
}

TEST(Cli, BadInputsGiveOneLineErrorsAndNonZeroExit) {
  fs::path d = TempDir("bad");
  {
    std::ofstream(d / "garbage.onnx") << "this is not a protobuf at all \x01\x02\x03";
  }
  for (const std::string& args : {std::string("graph /nonexistent/model.onnx"),
                                   "graph " + (d / "garbage.onnx").string(),
                                   "graph " + d.string()}) {
    CmdResult r = Hetplan(args);
    EXPECT_NE(r.code, 0) << args;
    EXPECT_NE(r.out.find("hetplan: error:"), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
  CmdResult r = Hetplan("graph " + Zoo("resnet18") + " --fusion everything");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("none or activation"), std::string::npos) << r.out;
}

// A flag given to a method that does not read it is refused in one line
// naming the flag, the method and the methods that read it; a flag left out
// is no obstacle (SolveOptions::given, CheckOptionsApply).
TEST(Cli, AFlagTheMethodIgnoresIsRefused) {
  fs::path d = TempDir("ignored");
  const std::string base = "partition " + Zoo("resnet18") + " --platform klein-arm --solver greedy --warmup 1 --runs 2 "
                           "--cache-dir " + (d / "cache").string() + " --out " + (d / "s.json").string();
  CmdResult r = Hetplan(base + " --search-nodes 5 --time-limit 9");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("--time-limit (time_limit_s) does not apply to solver 'greedy'"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("read by exact, mip"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_FALSE(fs::exists(d / "s.json"));
  CmdResult ok = Hetplan(base);
  EXPECT_EQ(ok.code, 0) << ok.out;
}

TEST(Cli, FailedRunDoesNotOverwriteGoodOutput) {
  fs::path d = TempDir("keep");
  fs::path out = d / "g.json";
  ASSERT_EQ(Hetplan("graph " + Zoo("resnet18") + " --json " + out.string()).code, 0);
  auto before = fs::file_size(out);
  CmdResult r = Hetplan("graph /nonexistent.onnx --json " + out.string());
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(fs::file_size(out), before);
}

// Partition ResNet-18 on klein-arm with a cheap profile; validate the file;
// the same command twice gives identical files except the wall time.
TEST(Cli, PartitionValidatesAndIsDeterministic) {
  fs::path d = TempDir("partition");
  std::string common = "partition " + Zoo("resnet18") + " --platform klein-arm --warmup 2 --runs 5 --cache-dir " +
                       (d / "cache").string();
  CmdResult r1 = Hetplan(common + " --out " + (d / "a.json").string() + " --trace " + (d / "t.json").string() + " --csv " +
                   (d / "a.csv").string() + " --threads 1");
  ASSERT_EQ(r1.code, 0) << r1.out;
  EXPECT_NE(r1.out.find("optimal"), std::string::npos) << r1.out;
  EXPECT_NE(r1.out.find("cache miss"), std::string::npos) << r1.out;
  // The exact search's statistics, from its typed result (not a note's text).
  EXPECT_NE(r1.out.find("segments (largest "), std::string::npos) << r1.out;
  EXPECT_NE(r1.out.find(" branch-and-bound nodes\n"), std::string::npos) << r1.out;
  CmdResult v = Hetplan("validate " + (d / "a.json").string());
  EXPECT_EQ(v.code, 0) << v.out;
  auto s = ReadJson(d / "a.json");
  EXPECT_EQ(s["format"], "hetplan-schedule");
  EXPECT_EQ(s["operators"].size(), 49u);
  EXPECT_EQ(s["solver"]["status"], "optimal");
  EXPECT_GT(s["speedup"].get<double>(), 1.0);
  EXPECT_EQ(s["platform"]["cim"]["crossbars"], 100);
  auto trace = ReadJson(d / "t.json");
  EXPECT_GT(trace["traceEvents"].size(), 49u);

  CmdResult r2 = Hetplan(common + " --out " + (d / "b.json").string() + " --threads 2");
  ASSERT_EQ(r2.code, 0) << r2.out;
  EXPECT_NE(r2.out.find("cache hit"), std::string::npos) << r2.out;
  auto a = ReadJson(d / "a.json"), b = ReadJson(d / "b.json");
  a["solver"].erase("seconds");
  b["solver"].erase("seconds");
  EXPECT_EQ(a.dump(), b.dump());

  // A lying schedule is caught: move an operator onto the CIM where it is unsupported.
  for (auto& op : s["operators"]) {
    if (op["cost_us"]["cim"].is_null()) {
      op["device"] = "cim";
      break;
    }
  }
  {
    std::ofstream(d / "bad.json") << s.dump();
  }
  CmdResult bad = Hetplan("validate " + (d / "bad.json").string());
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.out.find("unsupported"), std::string::npos) << bad.out;
}

// --mip-backend: the paper's MIP on HiGHS writes a file the validator
// accepts and that names HiGHS with its version; an unknown backend is a
// one-line error. A build without HiGHS refuses highs in one line naming
// the setup script.
TEST(Cli, ThePaperMipRunsOnTheChosenBackend) {
  fs::path d = TempDir("backend");
  const std::string base = "partition " + Zoo("resnet18") + " --platform klein-arm --warmup 1 --runs 2 --cache-dir " +
                           (d / "cache").string() + " --solver mip --time-limit 10 --threads 1";
  const bool has_highs = Hetplan("solvers").out.find("highs (HiGHS 1.") != std::string::npos;
  CmdResult r = Hetplan(base + " --mip-backend highs --out " + (d / "h.json").string());
  if (!has_highs) {
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.out.find("scripts/setup_highs.sh"), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_FALSE(fs::exists(d / "h.json"));
  } else {
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(Hetplan("validate " + (d / "h.json").string()).code, 0);
    const auto s = ReadJson(d / "h.json");
    EXPECT_EQ(s["solver"]["name"], "mip");
    EXPECT_EQ(s["solver"]["mip_solver"].get<std::string>().rfind("HiGHS 1.", 0), 0u) << s["solver"].dump();
  }
  CmdResult cbc = Hetplan(base + " --mip-backend cbc --out " + (d / "c.json").string());
  ASSERT_EQ(cbc.code, 0) << cbc.out;
  EXPECT_EQ(ReadJson(d / "c.json")["solver"]["mip_solver"].get<std::string>().rfind("CBC 2.", 0), 0u);
  // The default, auto: HiGHS where the build has it.
  CmdResult automatic = Hetplan(base + " --out " + (d / "a.json").string());
  ASSERT_EQ(automatic.code, 0) << automatic.out;
  EXPECT_EQ(ReadJson(d / "a.json")["solver"]["mip_solver"].get<std::string>().rfind(has_highs ? "HiGHS 1." : "CBC 2.", 0),
            0u);
  CmdResult bad = Hetplan(base + " --mip-backend gurobi --out " + (d / "g.json").string());
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("--mip-backend"), std::string::npos) << bad.out;
  EXPECT_FALSE(fs::exists(d / "g.json"));
}

TEST(Cli, ZeroCrossbarsGivesTheCpuOnlySchedule) {
  fs::path d = TempDir("c0");
  CmdResult r = Hetplan("partition " + Zoo("resnet18") + " --set cim.crossbars=0 --warmup 2 --runs 5 --cache-dir " +
                  (d / "cache").string() + " --out " + (d / "s.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  auto s = ReadJson(d / "s.json");
  for (const auto& op : s["operators"]) EXPECT_EQ(op["device"], "cpu");
  EXPECT_NEAR(s["speedup"].get<double>(), 1.0, 1e-9);
}

TEST(Cli, ProfileWritesATableAndHitsTheCacheTheSecondTime) {
  fs::path d = TempDir("profile");
  std::string args = "profile " + Zoo("resnet18") + " --platform klein-arm --warmup 1 --runs 3 --model-runs 3 --cache-dir " +
                     (d / "cache").string() + " --out " + (d / "t.csv").string() + " --json " + (d / "t.json").string();
  CmdResult first = Hetplan(args);
  ASSERT_EQ(first.code, 0) << first.out;
  EXPECT_NE(first.out.find("miss"), std::string::npos) << first.out;
  auto table = ReadJson(d / "t.json");
  EXPECT_EQ(table["meta"]["source"], "measured");
  CmdResult second = Hetplan(args);
  ASSERT_EQ(second.code, 0) << second.out;
  EXPECT_NE(second.out.find("hit"), std::string::npos) << second.out;
  std::ifstream f(d / "t.csv");
  std::string csv((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(csv.find("/conv1/Conv"), std::string::npos);
}

// --refine on partition and map: each round printed and kept in the file,
// the kept schedule valid; where nothing is measured here, one error line and
// no file.
TEST(Cli, RefineReportsEveryRoundAndRefusesWhatItCannotMeasure) {
  fs::path d = TempDir("refine");
  CmdResult r = Hetplan("partition " + Zoo("resnet18") + " --platform klein-arm --warmup 2 --runs 5 --cache-dir " +
                        (d / "cache").string() + " --boundary-cost fitted --refine 1 --refine-tolerance 0 " +
                        "--refine-runs 3 --refine-warmup 1 --refine-dir " + (d / "rounds").string() + " --out " +
                        (d / "s.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("refine    round 0: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refine    round 1: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refine    kept round "), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(d / "rounds" / "round-1" / "manifest.json"));
  EXPECT_EQ(Hetplan("validate " + (d / "s.json").string()).code, 0);
  auto s = ReadJson(d / "s.json");
  ASSERT_TRUE(s.contains("refine")) << s.dump().substr(0, 400);
  EXPECT_EQ(s["refine"]["rounds"].size(), 2u);
  EXPECT_TRUE(s["refine"]["calibration"].contains("cpu"));
  EXPECT_FALSE(s["refine"]["calibration"].contains("cim"));
  EXPECT_GT(s["refine"]["calibration"]["cpu"]["scale"].get<double>(), 0);
  EXPECT_GE(s["refine"]["calibration"]["cpu"]["boundary_us"].get<double>(), 0);
  // The kept round's charge, where its fit found one, is in the file.
  const auto& kept = s["refine"]["rounds"][s["refine"]["kept_round"].get<size_t>()];
  if (kept["fits"].contains("cpu") && kept["fits"]["cpu"]["boundary_us"].get<double>() > 0) {
    EXPECT_DOUBLE_EQ(s["devices"][0]["boundary_us"].get<double>(), kept["fits"]["cpu"]["boundary_us"].get<double>());
  }

  for (const std::string& args : {std::string("map ") + Zoo("resnet18") + " --platform soc-example --refine 1",
                                  std::string("map ") + Zoo("resnet18") + " --mode concurrent --refine 1"}) {
    CmdResult bad = Hetplan(args + " --out " + (d / "never.json").string());
    EXPECT_NE(bad.code, 0) << args;
    EXPECT_NE(bad.out.find("--refine"), std::string::npos) << bad.out;
    EXPECT_EQ(std::count(bad.out.begin(), bad.out.end(), '\n'), 1) << bad.out;
    EXPECT_FALSE(fs::exists(d / "never.json"));
  }
}

TEST(Cli, BadOverrideIsAClearError) {
  CmdResult r = Hetplan("partition " + Zoo("resnet18") + " --set cim.nonsense=3 --out /tmp/never-written.json");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("nonsense"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists("/tmp/never-written.json"));
}

// The cached profile tables' meta under `dir` (one per profiled PU).
std::vector<nlohmann::json> CachedMeta(const fs::path& dir) {
  std::vector<nlohmann::json> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    auto j = ReadJson(e.path());
    if (j.is_object() && j.contains("meta")) out.push_back(j["meta"]);
  }
  return out;
}

// A model slow on purpose (two 128-channel 3x3 convolutions at 192x192: about
// 0.15 s a run here, a profile of about 7 s: over ProfileProgress's 2 s with
// room for a machine three times faster). Off a terminal, partition announces each stage of its
// profile with the time left; the whole-model and boundary repetitions follow
// --runs, and partition takes profile's --model-runs, --boundary-runs and
// --no-in-context (issue 47).
TEST(Cli, ProfilingASlowModelShowsItsStagesAndItsBudgetFollowsRuns) {
  fs::path d = TempDir("slow_profile");
  onnx::ModelProto m = hetplan::test_util::ResidualBlock(128, 192);
  hetplan::test_util::AddNode(m.mutable_graph(), "Relu", {"s"}, {"y"}, "/out/Relu");
  const fs::path model = d / "slow.onnx";
  {
    std::ofstream f(model, std::ios::binary);
    ASSERT_TRUE(m.SerializeToOstream(&f));
  }
  CmdResult r = Hetplan("partition " + model.string() + " --platform klein-arm --warmup 2 --runs 10 --cache-dir " +
                        (d / "cache").string() + " --out " + (d / "s.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("profiling cpu: whole model, 2 warm-up and 5 timed runs plain and as many with ONNX Runtime's "
                       "profiler; then 5 operators x 12 runs, 30 whole-model runs in all (about "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("profiling cpu: 5 operators, 2 warm-up and 10 timed runs each (about "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("profiling cpu: boundary fit"), std::string::npos) << r.out;
  auto meta = CachedMeta(d / "cache");
  ASSERT_EQ(meta.size(), 1u);
  EXPECT_EQ(meta[0]["model_runs"], "5");
  EXPECT_EQ(meta[0]["boundary_runs"], "1");

  CmdResult given = Hetplan("partition " + model.string() +
                            " --platform klein-arm --warmup 1 --runs 4 --model-runs 3 --boundary-runs 0 "
                            "--no-in-context --cache-dir " + (d / "cache2").string() + " --out " +
                            (d / "s2.json").string());
  ASSERT_EQ(given.code, 0) << given.out;
  meta = CachedMeta(d / "cache2");
  ASSERT_EQ(meta.size(), 1u);
  EXPECT_EQ(meta[0]["model_runs"], "3");
  EXPECT_EQ(meta[0]["in_context"], "false");
  EXPECT_FALSE(meta[0].contains("boundary_runs"));
  fs::remove_all(d);
}

// Two CIM PUs: each device line counts its own operators' crossbars against
// its own capacity (issue 42: partition printed the sum over every spatial PU
// against each one's capacity).
TEST(Cli, PartitionCountsEachSpatialPusOwnCrossbars) {
  fs::path d = TempDir("two_cim");
  {
    std::ofstream f(d / "two-cim.yaml");
    f << "name: two-cim\npus:\n"
         "  - {name: cpu, kind: cpu, execution: serial, cost: profile, threads: 1}\n";
    for (const char* c : {"cima", "cimb"}) {
      f << "  - {name: " << c << ", kind: cim, execution: spatial, cost: cim, crossbar_rows: 256, crossbar_cols: 256, "
           "crossbars: 40, mvm_latency_ns: 50, bandwidth_gbps: 10.24, supported_ops: [Conv, Gemm, MatMul]}\n";
    }
    f << "links:\n  - {between: [cpu, cima], bandwidth_gbps: 10.24, latency_us: 0}\n"
         "  - {between: [cpu, cimb], bandwidth_gbps: 10.24, latency_us: 0}\n"
         "  - {between: [cima, cimb], bandwidth_gbps: 10.24, latency_us: 0}\n";
  }
  CmdResult r = Hetplan("partition " + Zoo("resnet18") + " --platform " + (d / "two-cim.yaml").string() +
                        " --warmup 1 --runs 3 --time-limit 20 --cache-dir " + (d / "cache").string() + " --out " +
                        (d / "s.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  auto s = ReadJson(d / "s.json");
  std::map<std::string, int64_t> used;
  for (const auto& op : s["operators"]) {
    if (!op["crossbars"].is_null()) used[op["device"].get<std::string>()] += op["crossbars"].get<int64_t>();
  }
  ASSERT_GT(used["cima"], 0) << r.out;
  ASSERT_GT(used["cimb"], 0) << r.out;
  for (const char* c : {"cima", "cimb"}) {
    EXPECT_LE(used[c], 40) << c;
    EXPECT_NE(r.out.find("crossbars " + std::to_string(used[c]) + " / 40"), std::string::npos) << c << "\n" << r.out;
  }
  fs::remove_all(d);
}

// `hetplan platform show` prints what a platform's keys come to (issue 44):
// the cells a weight takes and where they go, with --set applied.
TEST(Cli, PlatformShowPrintsTheDerivedCellLayout) {
  CmdResult plain = Hetplan("platform show klein-arm");
  ASSERT_EQ(plain.code, 0) << plain.out;
  EXPECT_NE(plain.out.find("one cell holds a whole weight (the CIM paper's eq. 1) (1 cell a weight)"),
            std::string::npos)
      << plain.out;
  EXPECT_NE(plain.out.find("T_mvm 50 ns: mvm_latency_ns (fixed, the paper's mode)"), std::string::npos) << plain.out;
  CmdResult cells = Hetplan(
      "platform show klein-arm --set cim.bits_per_cell=2 --set cim.signed_weights=differential "
      "--set cim.slice_mapping=crossbars --json");
  ASSERT_EQ(cells.code, 0) << cells.out;
  const auto j = nlohmann::json::parse(cells.out);
  EXPECT_EQ(j["cim"]["derived"]["cells_per_weight"], 8);
  EXPECT_EQ(j["cim"]["bits_per_cell"], 2);
  EXPECT_NE(j["cim"]["derived"]["weight_layout"].get<std::string>().find("crossbars of their own"), std::string::npos);
  CmdResult bad = Hetplan("platform show klein-arm --set cim.bits_per_cell=0");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("bits_per_cell: must be 1 to 16, got 0"), std::string::npos) << bad.out;
}

// A CIM whose circuit gives T_mvm and energies (the puma preset): `platform
// show` derives both, and an energy-objective plan prices every CIM operator's
// conversions, reads and buffer accesses in the schedule, whose total the
// validator re-adds from the file (issue 44, items 2 and 3).
TEST(Cli, ACircuitModelledCimPricesTimeAndEnergy) {
  CmdResult show = Hetplan("platform show puma");
  ASSERT_EQ(show.code, 0) << show.out;
  EXPECT_NE(show.out.find("T_mvm 1800 ns: the circuit: 16 input cycles (16-bit inputs, 1-bit DACs) x 100 ns"),
            std::string::npos)
      << show.out;
  EXPECT_NE(show.out.find("one MVM through a full crossbar: "), std::string::npos) << show.out;
  const auto j = nlohmann::json::parse(Hetplan("platform show puma --set cim.input_bits=8 --json").out);
  EXPECT_EQ(j["cim"]["derived"]["mvm_latency_ns"], 1000.0);
  // 128 rows x 128 columns, 8 input cycles: 8 x 128 conversions of 1.8 pJ.
  EXPECT_NEAR(j["cim"]["derived"]["crossbar_mvm_energy_pj"]["adc"].get<double>(), 8 * 128 * 1.8, 1e-6);

  fs::path d = fs::temp_directory_path() / "hetplan_cli_puma_energy";
  fs::remove_all(d);
  fs::create_directories(d);
  CmdResult r = Hetplan("partition " + Zoo("resnet18") +
                        " --platform puma --set cpu.power_w=5 --set cim.crossbars=64 --objective energy "
                        "--solver greedy --warmup 1 --runs 2 --no-cache --out " + (d / "s.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const auto s = ReadJson(d / "s.json");
  std::map<std::string, double> power;
  for (const auto& dev : s["devices"]) power[dev["name"].get<std::string>()] = dev["power_w"].get<double>();
  EXPECT_EQ(power["cim"], 0.0);  // nothing beyond the per-MVM energies
  double sum = 0;
  int priced = 0;
  for (const auto& op : s["operators"]) {
    const std::string dev = op["device"].get<std::string>();
    sum += op["cost_us"][dev].get<double>() * op.value("slowdown", 1.0) * power[dev];
    if (op.contains("op_energy_uj") && op["op_energy_uj"].contains(dev)) {
      EXPECT_GT(op["op_energy_uj"][dev].get<double>(), 0.0);
      sum += op["op_energy_uj"][dev].get<double>();
      ++priced;
    }
    if (op["type"] == "Conv") {
      EXPECT_TRUE(op.contains("op_energy_uj")) << op.dump();
    }
  }
  EXPECT_GT(priced, 0) << "no operator on the CIM";
  EXPECT_NEAR(s["energy_uj"].get<double>(), sum, 1e-6 * sum);
  // The summary gives each PU's share; the shares add up to the total.
  double shares = 0;
  int devices = 0;
  for (size_t at = r.out.find("\ndevice "); at != std::string::npos; at = r.out.find("\ndevice ", at + 1)) {
    const size_t e = r.out.find(", energy ", at);
    ASSERT_NE(e, std::string::npos) << r.out;
    shares += std::stod(r.out.substr(e + 9));
    ++devices;
  }
  EXPECT_EQ(devices, 2) << r.out;
  EXPECT_NEAR(shares, s["energy_uj"].get<double>(), 0.1 * devices) << r.out;
  EXPECT_EQ(Hetplan("validate " + (d / "s.json").string()).code, 0);
  // The validator re-adds op_energy_uj from the file: one changed value is caught.
  auto tampered = s;
  for (auto& op : tampered["operators"]) {
    if (op.contains("op_energy_uj") && op["op_energy_uj"].contains("cim") && op["device"] == "cim") {
      op["op_energy_uj"]["cim"] = op["op_energy_uj"]["cim"].get<double>() * 2;
      break;
    }
  }
  std::ofstream(d / "t.json") << tampered.dump();
  CmdResult v = Hetplan("validate " + (d / "t.json").string());
  EXPECT_NE(v.code, 0) << v.out;
  EXPECT_NE(v.out.find("Σ (cost × slowdown × power + op_energy_uj)"), std::string::npos) << v.out;
  fs::remove_all(d);
}

// A shared ADC pool (issue 44, item 4): `platform show` states it, the exact
// search plans ResNet-18 with it (its status as the search found it), the
// schedule records the pool and each CIM operator's share, the validator
// re-checks it from the file, and the paper's MIP refuses it in one line.
TEST(Cli, ASharedAdcPoolIsPlannedRecordedAndValidated) {
  CmdResult show = Hetplan("platform show puma --set cim.shared_adcs=16");
  ASSERT_EQ(show.code, 0) << show.out;
  // platform layers gives each operator's share: conv1's 16 crossbars take 16 ADCs of 16.
  CmdResult layers = Hetplan("platform layers puma " + Zoo("resnet18") + " --set cim.shared_adcs=16");
  ASSERT_EQ(layers.code, 0) << layers.out;
  EXPECT_NE(layers.out.find("  adcs 16"), std::string::npos) << layers.out;
  EXPECT_NE(show.out.find("ADCs: a pool of 16 shared by the operators running at once; a crossbar's columns take 1"),
            std::string::npos)
      << show.out;
  fs::path d = fs::temp_directory_path() / "hetplan_cli_shared_adcs";
  fs::remove_all(d);
  fs::create_directories(d);
  const std::string plan = "partition " + Zoo("resnet18") +
                           " --platform puma --set cim.crossbars=256 --set cim.shared_adcs=16 --warmup 1 --runs 2 "
                           "--time-limit 3 --out " + (d / "s.json").string();
  CmdResult r = Hetplan(plan + " --solver exact");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto s = ReadJson(d / "s.json");
  EXPECT_EQ(s["devices"][1]["shared_adcs"], 16);
  EXPECT_EQ(s["solver"]["formulation"], "shared-adc");
  const std::string status = s["solver"]["status"].get<std::string>();
  EXPECT_TRUE(status == "optimal" || (status == "feasible" && s["solver"]["gap"].get<double>() > 0)) << status;
  int on_cim = 0;
  for (const auto& op : s["operators"]) {
    if (op["device"] != "cim") continue;
    ++on_cim;
    const int64_t held = op["adcs"]["cim"].get<int64_t>();
    EXPECT_GE(held, 1) << op.dump();
    EXPECT_LE(held, 16) << op.dump();
  }
  EXPECT_GT(on_cim, 0);
  EXPECT_EQ(Hetplan("validate " + (d / "s.json").string()).code, 0);
  // One operator holding more than the pool is caught from the file.
  auto tampered = s;
  for (auto& op : tampered["operators"]) {
    if (op["device"] == "cim") {
      op["adcs"]["cim"] = 17;
      break;
    }
  }
  std::ofstream(d / "t.json") << tampered.dump();
  CmdResult v = Hetplan("validate " + (d / "t.json").string());
  EXPECT_NE(v.code, 0) << v.out;
  EXPECT_NE(v.out.find("more than its 16"), std::string::npos) << v.out;
  CmdResult mip = Hetplan(plan + " --solver mip");
  EXPECT_NE(mip.code, 0);
  EXPECT_NE(mip.out.find("solver 'mip' does not model a shared ADC pool, and PU 'cim' has one (shared_adcs: 16)"),
            std::string::npos)
      << mip.out;
  fs::remove_all(d);
}

// Reprogramming (issue 44, item 5): VGG-8 on PUMA with 1,200 crossbars
// cannot keep its layers resident (6,400 crossbars); rewriting them each
// inference puts more of them on the CIM and shortens the plan. The
// schedule shows every write and every operator's physical crossbars, the
// validator checks them, and an endurance budget too small for the writes is
// caught from the file.
TEST(Cli, ReprogrammingRewritesLayersThatDoNotFit) {
  fs::path d = fs::temp_directory_path() / "hetplan_cli_reprogram";
  fs::remove_all(d);
  fs::create_directories(d);
  const std::string base = "partition " + Zoo("vgg8") +
                           " --platform puma --set cim.crossbars=1200 --warmup 1 --runs 2 --solver exact "
                           "--time-limit 5 --set cim.write_ns_per_row=100 --set cim.write_energy_pj_per_row=10 "
                           "--set cim.endurance_writes=1e8 --set cim.lifetime_inferences=1e6";
  CmdResult show = Hetplan("platform show puma --set cim.write_ns_per_row=100 --set cim.endurance_writes=1e8 "
                           "--set cim.lifetime_inferences=1e6 --set cim.reprogram=true");
  EXPECT_NE(show.out.find("reprograms: 100 ns a row; 1e+08 writes a cell over 1e+06 inferences (100 writes a cell an "
                          "inference)"),
            std::string::npos)
      << show.out;
  CmdResult fixed = Hetplan(base + " --out " + (d / "fixed.json").string());
  ASSERT_EQ(fixed.code, 0) << fixed.out;
  CmdResult r = Hetplan(base + " --set cim.reprogram=true --out " + (d / "s.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const auto s = ReadJson(d / "s.json");
  EXPECT_EQ(s["solver"]["formulation"], "reprogram");
  EXPECT_LT(s["makespan_us"].get<double>(), ReadJson(d / "fixed.json")["makespan_us"].get<double>());
  int writes = 0;
  for (const auto& op : s["operators"]) {
    if (op["device"] != "cim") continue;
    EXPECT_TRUE(op.contains("crossbar_ids")) << op.dump();
    if (!op.contains("write")) continue;
    ++writes;
    // At most a crossbar's 128 rows in sequence, 100 ns each.
    const int64_t rows = op["write"]["rows"].get<int64_t>();
    EXPECT_LE(rows, 128) << op.dump();
    EXPECT_NEAR(op["write"]["write_us"].get<double>(), rows * 0.1, 1e-9) << op.dump();
  }
  EXPECT_GT(writes, 0);
  EXPECT_EQ(Hetplan("validate " + (d / "s.json").string()).code, 0);
  auto worn = s;
  worn["devices"][1]["reprogram"]["endurance_writes"] = 1;
  std::ofstream(d / "t.json") << worn.dump();
  CmdResult v = Hetplan("validate " + (d / "t.json").string());
  EXPECT_NE(v.code, 0);
  EXPECT_NE(v.out.find("endurance: 1000000 inferences"), std::string::npos) << v.out;
  fs::remove_all(d);
}

// VGG-8's crossbars per layer at 128x128 with 8-bit weights equal what
// NeuroSim's mapping gives (numColPerSynapse = ceil(8 / cell bits); a 3x3
// layer's nine kernel positions each Cin rows), and the puma preset's equal
// PUMA's 8 physical crossbars per 128x128 logical tile (issue 44;
// bench/cim_mapping.py prints the tables with their sources).
TEST(Cli, Vgg8CrossbarsPerLayerAreNeuroSimsAndPumas) {
  auto crossbars = [](const std::string& platform, const std::string& sets) {
    CmdResult r = Hetplan("platform layers " + platform + " " + Zoo("vgg8") + " --json " + sets);
    EXPECT_EQ(r.code, 0) << r.out;
    std::vector<int64_t> out;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    for (const auto& row : j["pus"]["cim"]["operators"]) {
      out.push_back(row["crossbars"].get<int64_t>());
    }
    return out;
  };
  const std::string geometry = "--set cim.crossbar_rows=128 --set cim.crossbar_cols=128 --set cim.weight_bits=8 ";
  EXPECT_EQ(crossbars("klein-arm", geometry + "--set cim.bits_per_cell=1"),
            (std::vector<int64_t>{8, 72, 144, 288, 576, 1152, 4096, 8}));
  EXPECT_EQ(crossbars("klein-arm", geometry + "--set cim.bits_per_cell=2"),
            (std::vector<int64_t>{4, 36, 72, 144, 288, 576, 2048, 8}));
  EXPECT_EQ(crossbars("puma", ""), (std::vector<int64_t>{8, 72, 144, 288, 576, 1152, 4096, 64}));
  CmdResult text = Hetplan("platform layers puma " + Zoo("vgg8"));
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("total 6400 crossbars (budget 21504)"), std::string::npos) << text.out;
  CmdResult bad = Hetplan("platform layers puma /nonexistent/m.onnx");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("/nonexistent/m.onnx"), std::string::npos) << bad.out;
  CmdResult no_cim = Hetplan("platform layers soc-example " + Zoo("vgg8"));
  EXPECT_EQ(no_cim.code, 2) << no_cim.out;
  EXPECT_NE(no_cim.out.find("preset:soc-example: no PU of kind cim"), std::string::npos) << no_cim.out;
}

}  // namespace
