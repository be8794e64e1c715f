// `hetplan dse`: sweep parsing and expansion, a 4-point mini sweep on
// ResNet-18 (results file fields, every schedule valid), resume after a
// partial file, after a killed run and after an interrupt, and the report of
// that sweep.
#include "hetplan/dse/dse.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <thread>
#include <vector>

#include "hetplan/cost/profiler.h"
#include "hetplan/report/plots.h"
#include "hetplan/validate/validator.h"
#include "testing/helpers.h"
#include "testing/scratch.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

using test_util::kResnet18;

// One temporary folder (and profile cache) for the whole binary: ResNet-18 is
// profiled once, with few runs.
const fs::path& TempDir() { return test_util::ScratchDir("hetplan_dse_test_"); }
[[maybe_unused]] ::testing::Environment* const kCleanUp =
    ::testing::AddGlobalTestEnvironment(new test_util::RemoveAtExit(TempDir()));
std::string CacheDir() { return test_util::DseTestCacheDir(); }
std::string Fresh(const std::string& name) { return test_util::FreshPath(TempDir(), name); }

DseSpec MiniSpec(const std::string& out) {
  DseSpec s;
  s.models = {kResnet18};
  s.platforms = {"klein-arm"};
  s.sweeps = {{"cim.crossbars", {"25", "100"}}, {"cim.mvm_latency_ns", {"50", "1000"}}};
  s.solvers = {"ilp"};
  s.profile.warmup = 2;
  s.profile.runs = 5;
  s.profile.cache_dir = CacheDir();
  s.solve.time_limit_s = 30;
  s.out_path = out;
  return s;
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

bool ZooPresent() { return fs::exists(kResnet18); }

TEST(Sweep, ParsesAxes) {
  auto a = ParseSweep("cim.crossbars=25,50, 100");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->key, "cim.crossbars");
  EXPECT_EQ(a->values, (std::vector<std::string>{"25", "50", "100"}));
  for (const char* bad : {"cim.crossbars", "=1,2", "cim.crossbars=", "cim.crossbars=1,,2", "cim.crossbars=1,1"}) {
    auto r = ParseSweep(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(Sweep, ExpandsTheProductInOrder) {
  DseSpec s;
  s.models = {"a.onnx", "b.onnx"};
  s.platforms = {"p"};
  s.overrides = {"cim.bandwidth_gbps=5"};
  s.sweeps = {{"x", {"1", "2", "3"}}, {"y", {"10", "20"}}};
  s.solvers = {"ilp", "greedy"};
  s.objectives = {Objective::kLatency, Objective::kEnergy};
  const auto pts = ExpandPoints(s);
  ASSERT_EQ(pts.size(), 2u * 3 * 2 * 2 * 2);
  EXPECT_EQ(pts[0].overrides, (std::vector<std::string>{"cim.bandwidth_gbps=5", "x=1", "y=10"}));
  EXPECT_EQ(pts[0].solver, "ilp");
  EXPECT_EQ(pts[1].solver, "greedy");
  EXPECT_EQ(pts[2].objective, Objective::kEnergy);
  EXPECT_EQ(pts[4].params.at("y"), "20");  // the last axis varies fastest
  EXPECT_EQ(pts[8].params.at("x"), "2");
  EXPECT_EQ(pts[24].model, 1);
  std::set<std::string> keys;
  for (const DsePoint& p : pts) {
    keys.insert(PointKey(std::to_string(p.model), "p", p.overrides, p.solver, p.objective));
  }
  EXPECT_EQ(keys.size(), pts.size());
  DseSpec none = s;
  none.sweeps.clear();
  EXPECT_EQ(ExpandPoints(none).size(), 2u * 2 * 2);
}

TEST(Sweep, RefusesBadSpecsBeforeRunning) {
  if (!ZooPresent()) GTEST_SKIP() << "zoo not built";
  DseSpec s = MiniSpec(Fresh("bad.jsonl"));
  s.solvers = {"no-such-solver"};
  auto r = RunDse(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no-such-solver"), std::string::npos);
  s = MiniSpec(Fresh("bad.jsonl"));
  s.sweeps = {{"cim.no_such_key", {"1"}}};
  r = RunDse(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no_such_key"), std::string::npos) << r.status().message();
  EXPECT_FALSE(fs::exists(s.out_path));
}

TEST(Dse, MiniSweepResultsAndResume) {
  if (!ZooPresent()) GTEST_SKIP() << "zoo not built";
  const std::string out = Fresh("mini.jsonl");
  const std::string schedules = Fresh("schedules");
  DseSpec spec = MiniSpec(out);
  spec.schedules_dir = schedules;
  int progress_calls = 0;
  auto summary = RunDse(spec, [&](const DseProgress&) { ++progress_calls; });
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->points, 4);
  EXPECT_EQ(summary->ran, 4);
  EXPECT_EQ(summary->failed, 0);
  EXPECT_GT(progress_calls, 4);

  auto rows = ReadDseResults(out);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->rows.size(), 4u);
  std::set<std::string> keys, points;
  for (const nlohmann::json& r : rows->rows) {
    keys.insert(r["key"].get<std::string>());
    points.insert(r["params"]["cim.crossbars"].get<std::string>() + "/" +
                  r["params"]["cim.mvm_latency_ns"].get<std::string>());
    EXPECT_EQ(r["model"], "resnet18");
    EXPECT_EQ(r["platform"], "klein-arm");
    EXPECT_EQ(r["solver"], "exact");  // "ilp" is its old name
    EXPECT_EQ(r["status"], "optimal") << r.dump();
    for (const char* f : {"makespan_us", "cpu_only_us", "speedup", "seconds", "bound", "gap", "variables",
                          "constraints", "crossbars_used", "devices", "energy_uj", "host_cpu", "model_sha256"}) {
      EXPECT_TRUE(r.contains(f)) << f;
    }
    EXPECT_NEAR(r["speedup"].get<double>(), r["cpu_only_us"].get<double>() / r["makespan_us"].get<double>(), 1e-9);
    EXPECT_GE(r["speedup"].get<double>(), 1.0 - 1e-9);  // CPU-only is a feasible schedule
    EXPECT_LE(r["crossbars_used"].get<int64_t>(), std::stoll(r["params"]["cim.crossbars"].get<std::string>()));
    EXPECT_EQ(r["devices"]["cpu"]["operators"].get<int>() + r["devices"]["cim"]["operators"].get<int>(),
              r["operators"].get<int>());
    auto v = ValidateScheduleFile(r["schedule_file"].get<std::string>());
    ASSERT_TRUE(v.ok());
    EXPECT_TRUE(v->ok());
  }
  EXPECT_EQ(keys.size(), 4u);
  EXPECT_EQ(points, (std::set<std::string>{"25/50", "25/1000", "100/50", "100/1000"}));
  // More crossbars never hurt; a faster MVM never hurts.
  auto speedup = [&](const std::string& xb, const std::string& ns) {
    for (const nlohmann::json& r : rows->rows) {
      if (r["params"]["cim.crossbars"] == xb && r["params"]["cim.mvm_latency_ns"] == ns) {
        return r["speedup"].get<double>();
      }
    }
    return 0.0;
  };
  EXPECT_GE(speedup("100", "50") * (1 + 1e-6), speedup("25", "50"));
  EXPECT_GE(speedup("100", "50") * (1 + 1e-6), speedup("100", "1000"));

  // Without --resume an existing file is refused, untouched.
  const std::vector<std::string> before = Lines(out);
  auto again = RunDse(spec);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("--resume"), std::string::npos);
  EXPECT_EQ(Lines(out), before);

  // A sweep killed mid-write: two whole lines and half of the third.
  {
    std::ofstream f(out, std::ios::trunc);
    f << before[0] << "\n" << before[1] << "\n" << before[2].substr(0, before[2].size() / 2);
  }
  spec.resume = true;
  auto resumed = RunDse(spec);
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ(resumed->resumed, 2);
  EXPECT_EQ(resumed->ran, 2);
  const std::vector<std::string> after = Lines(out);
  ASSERT_EQ(after.size(), 4u);
  EXPECT_EQ(after[0], before[0]);  // not redone
  EXPECT_EQ(after[1], before[1]);
  auto rows2 = ReadDseResults(out);
  ASSERT_TRUE(rows2.ok());
  EXPECT_EQ(rows2->bad_lines, 0);
  std::set<std::string> keys2;
  for (const nlohmann::json& r : rows2->rows) keys2.insert(r["key"].get<std::string>());
  EXPECT_EQ(keys2, keys);

  // Resuming a complete file runs nothing.
  auto noop = RunDse(spec);
  ASSERT_TRUE(noop.ok());
  EXPECT_EQ(noop->ran, 0);
  EXPECT_EQ(noop->resumed, 4);
  EXPECT_EQ(Lines(out).size(), 4u);
}

// --boundary-cost fitted in a sweep: every point plans with the CPU's fitted
// boundary (its schedule records it), never below the uncharged optimum; the
// setting is in the key (a resume with the other setting redoes every point)
// and in each line; two-request methods are refused before anything runs.
TEST(Dse, FittedBoundaryIsChargedKeyedAndRecorded) {
  if (!ZooPresent()) GTEST_SKIP() << "zoo not built";
  DseSpec none = MiniSpec(Fresh("boundary_none.jsonl"));
  none.sweeps = {{"cim.crossbars", {"25", "100"}}};
  none.schedules_dir = Fresh("boundary_none_schedules");
  DseSpec fitted = none;
  fitted.charge_boundary = true;
  fitted.out_path = Fresh("boundary_fitted.jsonl");
  fitted.schedules_dir = Fresh("boundary_fitted_schedules");
  for (const DseSpec* s : {&none, &fitted}) {
    auto r = RunDse(*s);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->ran, 2);
    EXPECT_EQ(r->failed, 0);
  }
  // What the sweep charged: the CPU's boundary row in the shared profile (a
  // fit that came out at or below 0 under load records 0: nothing to charge).
  auto model = LoadOnnxModel(kResnet18);
  auto klein = LoadPlatform("klein-arm");
  ASSERT_TRUE(model.ok() && klein.ok());
  const ProcessingUnit& cpu = klein->pus[static_cast<size_t>(klein->FindPu("cpu"))];
  auto table = LoadCostTable((fs::path(CacheDir()) / (ProfileCacheKey(*model, "cpu", ForPu(none.profile, cpu)) + ".json")).string());
  ASSERT_TRUE(table.ok()) << table.status().message();
  const double boundary = table->boundary_us.count("cpu") ? table->boundary_us.at("cpu") : 0.0;
  auto a = ReadDseResults(none.out_path);
  auto b = ReadDseResults(fitted.out_path);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->rows.size(), 2u);
  ASSERT_EQ(b->rows.size(), 2u);
  for (const nlohmann::json& u : a->rows) {
    const nlohmann::json* c = nullptr;
    for (const nlohmann::json& r : b->rows) {
      if (r["params"] == u["params"]) c = &r;
    }
    ASSERT_NE(c, nullptr) << u["params"].dump();
    EXPECT_EQ(u["boundary_cost"], "none");
    EXPECT_EQ((*c)["boundary_cost"], "fitted");
    EXPECT_EQ((*c)["key"].get<std::string>(), u["key"].get<std::string>() + "|boundary=fitted");
    EXPECT_EQ((*c)["status"], "optimal") << c->dump();
    EXPECT_GE((*c)["makespan_us"].get<double>(), u["makespan_us"].get<double>() * (1 - 1e-9));
    // The planner saw the charge: the schedule file carries the CPU's boundary.
    std::ifstream fc((*c)["schedule_file"].get<std::string>()), fu(u["schedule_file"].get<std::string>());
    const nlohmann::json sc = nlohmann::json::parse(fc), su = nlohmann::json::parse(fu);
    bool charged = false;
    for (const auto& d : sc["devices"]) charged = charged || (d["name"] == "cpu" && d.contains("boundary_us"));
    EXPECT_EQ(charged, boundary > 0) << "boundary " << boundary << " µs; " << sc["devices"].dump();
    for (const auto& d : su["devices"]) EXPECT_FALSE(d.contains("boundary_us")) << d.dump();
  }
  // Resuming the uncharged file with the charge on matches none of its points.
  DseSpec mixed = fitted;
  mixed.out_path = none.out_path;
  mixed.schedules_dir.clear();
  mixed.resume = true;
  auto resumed = RunDse(mixed);
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ(resumed->resumed, 0);
  EXPECT_EQ(resumed->ran, 2);

  DseSpec pair = fitted;
  pair.solvers = {"map_concurrent"};
  pair.out_path = Fresh("boundary_pair.jsonl");
  auto refused = RunDse(pair);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--boundary-cost"), std::string::npos) << refused.status().message();
  EXPECT_NE(refused.status().message().find("map_concurrent"), std::string::npos) << refused.status().message();
  EXPECT_FALSE(fs::exists(pair.out_path));
}

TEST(Dse, BaselinesAndNotApplicableRows) {
  if (!ZooPresent()) GTEST_SKIP() << "zoo not built";
  DseSpec spec = MiniSpec(Fresh("baselines.jsonl"));
  spec.sweeps = {{"cim.crossbars", {"100"}}};
  spec.solvers = {"ilp",     "greedy", "type_policy", "neurosurgeon", "hetero",
                  "haxconn", "axonn",  "best_single", "single:cim"};
  spec.jobs = 2;
  auto summary = RunDse(spec);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->ran, 9);
  EXPECT_EQ(summary->failed, 0);
  EXPECT_EQ(summary->not_applicable, 2);  // axonn (no power_w), single:cim (unsupported operators)
  auto rows = ReadDseResults(spec.out_path);
  ASSERT_TRUE(rows.ok());
  double ilp = 0;
  std::vector<double> others;
  for (const nlohmann::json& r : rows->rows) {
    if (r["status"] == "not_applicable") {
      EXPECT_FALSE(r["message"].get<std::string>().empty());
      continue;
    }
    ASSERT_TRUE(r["valid"].get<bool>()) << r.dump();
    if (r["solver"] == "exact") {  // given as its old name "ilp"
      ilp = r["makespan_us"].get<double>();
    } else {
      others.push_back(r["makespan_us"].get<double>());
    }
  }
  ASSERT_EQ(others.size(), 6u);
  for (double m : others) EXPECT_LE(ilp, m * (1 + 1e-6));
}

TEST(Dse, AnInterruptStopsTheSweepBeforeItsNextPoint) {
  onnx::ModelProto m = test_util::ResidualBlock();
  test_util::AddNode(m.mutable_graph(), "Relu", {"s"}, {"y"}, "/out/Relu");
  const std::string model = (TempDir() / "block.onnx").string();
  {
    std::ofstream f(model, std::ios::binary);
    ASSERT_TRUE(m.SerializeToOstream(&f));
  }
  DseSpec spec;
  spec.models = {model};
  spec.platforms = {"soc-example"};  // roofline costs: nothing to profile
  spec.solvers = {"greedy", "exact"};
  spec.out_path = Fresh("interrupted.jsonl");
  std::atomic<bool> stop{true};
  spec.solve.interrupt = &stop;
  auto summary = RunDse(spec);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_TRUE(summary->interrupted);
  EXPECT_EQ(summary->points, 2);
  EXPECT_EQ(summary->ran, 0);
  EXPECT_TRUE(Lines(spec.out_path).empty());
  stop.store(false);
  spec.resume = true;  // what was left runs on resume
  summary = RunDse(spec);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_FALSE(summary->interrupted);
  EXPECT_EQ(summary->ran, 2);
  EXPECT_EQ(Lines(spec.out_path).size(), 2u);
}

TEST(Dse, PairSolversOnASoc) {
  if (!ZooPresent()) GTEST_SKIP() << "zoo not built";
  DseSpec spec = MiniSpec(Fresh("pairs.jsonl"));
  spec.platforms = {"soc-example"};  // roofline costs: nothing to profile
  spec.sweeps.clear();
  spec.solvers = {"pair:map", "pair_serial", "pair_naive_multi_pu"};
  spec.objectives = {Objective::kLatency, Objective::kEnergy};
  auto summary = RunDse(spec);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->ran, 6);
  EXPECT_EQ(summary->failed, 0);
  auto rows = ReadDseResults(spec.out_path);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->rows.size(), 6u);
  for (const nlohmann::json& r : rows->rows) {
    ASSERT_EQ(r["status"] == "optimal" || r["status"] == "heuristic", true) << r.dump();
    EXPECT_TRUE(r["valid"].get<bool>());
    EXPECT_EQ(r["requests"], 2);
    const int ops = r["operators"].get<int>();
    int placed = 0;
    for (const auto& [name, d] : r["devices"].items()) placed += d["operators"].get<int>();
    EXPECT_EQ(placed, 2 * ops);  // both requests scheduled
    const double makespan = r["makespan_us"].get<double>();
    if (r["objective"] == "latency") {
      EXPECT_NEAR(r["speedup_vs_serial"].get<double>(), r["best_serial_us"].get<double>() / makespan, 1e-9);
      if (r["solver"] == "pair_serial") {
        EXPECT_NEAR(makespan, r["best_serial_us"].get<double>(), 1e-6 * makespan);
      }
      if (r["solver"] == "pair_naive_multi_pu") {
        EXPECT_NEAR(makespan, r["naive_multi_pu_us"].get<double>(), 1e-6 * makespan);
        EXPECT_GE(r["speedup_vs_serial"].get<double>(), 1 - 1e-9);  // serial is one of its candidates
      }
    } else {
      EXPECT_TRUE(r["energy_saving_vs_serial"].is_number()) << r.dump();
    }
  }
}

TEST(Sweep, AllPairsPlansEveryUnorderedPairOnce) {
  DseSpec s;
  s.models = {"a.onnx", "b.onnx", "c.onnx", "d.onnx"};
  s.platforms = {"soc-example"};
  s.solvers = {"map", "map_concurrent", "pair_serial"};
  s.all_pairs = true;
  const auto pts = ExpandPoints(s);
  // 4 one-request points, and 4·5/2 = 10 pairs (4 of a model with itself)
  // for each of 2 pair methods.
  ASSERT_EQ(pts.size(), 4u + 2 * 10);
  std::set<std::tuple<int, int, std::string>> pairs;
  for (const DsePoint& pt : pts) {
    if (pt.solver == "map") {
      EXPECT_EQ(pt.second, -1);
      continue;
    }
    EXPECT_TRUE(pt.second == -1 || pt.second > pt.model);  // unordered: each pair once
    EXPECT_TRUE(pairs.insert({pt.model, pt.second < 0 ? pt.model : pt.second, pt.solver}).second);
  }
  EXPECT_EQ(pairs.size(), 20u);
  s.all_pairs = false;  // each model with itself
  for (const DsePoint& pt : ExpandPoints(s)) EXPECT_EQ(pt.second, -1);
  EXPECT_EQ(ExpandPoints(s).size(), 4u * 3);
}

TEST(Sweep, AllPairsNeedsAPairMethod) {
  DseSpec s = MiniSpec(Fresh("pairs_refused.jsonl"));
  s.platforms = {"soc-example"};
  s.sweeps.clear();
  s.all_pairs = true;
  s.models.push_back(std::string(HETPLAN_ZOO_DIR) + "/kan.onnx");
  s.solvers = {"map"};
  auto r = RunDse(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("needs a two-request method"), std::string::npos) << r.status().message();
  EXPECT_FALSE(fs::exists(s.out_path));
}

TEST(Dse, PairStudyPlansEveryPairTogetherAndResumes) {
  if (!ZooPresent()) GTEST_SKIP() << "zoo not built";
  const std::string kan = std::string(HETPLAN_ZOO_DIR) + "/kan.onnx", hyena = std::string(HETPLAN_ZOO_DIR) +
                                                                            "/hyena.onnx";
  DseSpec spec = MiniSpec(Fresh("pair_study.jsonl"));
  spec.models = {kResnet18, kan, hyena};
  spec.platforms = {"soc-example"};
  spec.sweeps.clear();
  spec.solvers = {"map_concurrent", "pair_serial", "pair_naive_multi_pu"};
  spec.all_pairs = true;
  auto summary = RunDse(spec);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->ran, 6 * 3);
  EXPECT_EQ(summary->failed, 0);
  auto rows = ReadDseResults(spec.out_path);
  ASSERT_TRUE(rows.ok());
  std::set<std::string> keys, pairs;
  for (const nlohmann::json& r : rows->rows) {
    ASSERT_TRUE(r["valid"].get<bool>()) << r.dump();
    EXPECT_TRUE(keys.insert(r["key"].get<std::string>()).second);
    const bool itself = !r.contains("second_model");  // a model with itself: keyed as without --pairs all
    if (!itself) {
      EXPECT_NE(r["model"], r["second_model"]);
    }
    pairs.insert(r["model"].get<std::string>() + "+" + r.value("second_model", r["model"].get<std::string>()));
    int placed = 0;
    for (const auto& [name, d] : r["devices"].items()) placed += d["operators"].get<int>();
    EXPECT_EQ(placed, r["operators"].get<int>() + r.value("second_operators", r["operators"].get<int>()));
    EXPECT_NE(r["key"].get<std::string>().find(itself ? r["model_sha256"].get<std::string>() + "|"
                                                       : r["model_sha256"].get<std::string>() + "+" +
                                                             r["second_model_sha256"].get<std::string>()),
              std::string::npos);
    const double makespan = r["makespan_us"].get<double>();
    if (r["solver"] == "pair_serial") {
      EXPECT_NEAR(makespan, r["best_serial_us"].get<double>(), 1e-6 * makespan);
    }
    if (r["solver"] == "map_concurrent") {
      // BIDENT's search has both baselines' plans in its space.
      EXPECT_LE(makespan, r["best_serial_us"].get<double>() * (1 + 1e-9)) << r.dump();
      EXPECT_LE(makespan, r["naive_multi_pu_us"].get<double>() * (1 + 1e-9)) << r.dump();
    }
  }
  EXPECT_EQ(pairs, (std::set<std::string>{"resnet18+resnet18", "resnet18+kan", "resnet18+hyena", "kan+kan",
                                          "kan+hyena", "hyena+hyena"}));
  spec.resume = true;  // the pair keys resume like any other
  auto again = RunDse(spec);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->ran, 0);
  EXPECT_EQ(again->resumed, 18);
}

// ---------------------------------------------------------------------------
// The real binary: a sweep killed with SIGKILL resumes, and the report draws.

int RunBinary(const std::vector<std::string>& args, const std::string& log) {
  std::string cmd = std::string("'") + HETPLAN_BINARY + "'";
  for (const std::string& a : args) cmd += " '" + a + "'";
  cmd += " >'" + log + "' 2>&1";
  return std::system(cmd.c_str());
}

TEST(DseCli, KilledSweepResumesAndReports) {
  if (!ZooPresent()) GTEST_SKIP() << "zoo not built";
  const std::string out = Fresh("cli.jsonl");
  const std::string cache = CacheDir();
  std::vector<std::string> args = {"dse",         kResnet18,
                                   "--platform",  "klein-arm",
                                   "--sweep",     "cim.crossbars=20,30,40,60,80,100,120,150,200",
                                   "--sweep",     "cim.mvm_latency_ns=50,100,500,1000",
                                   "--solvers",   "ilp",
                                   "--jobs",      "1",
                                   "--warmup",    "2",
                                   "--runs",      "5",
                                   "--cache-dir", cache,
                                   "--out",       out};
  // Profile first (shared cache), so that the kill lands among the points.
  {
    DseSpec warm = MiniSpec(Fresh("warm.jsonl"));
    ASSERT_TRUE(RunDse(warm).ok());
  }
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = open((TempDir() / "killed.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv = {const_cast<char*>(HETPLAN_BINARY)};
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(HETPLAN_BINARY, argv.data());
    _exit(127);
  }
  // Kill it once a few points are in the file.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (Lines(out).size() >= 3) break;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  const std::vector<std::string> before = Lines(out);
  ASSERT_GE(before.size(), 1u);
  EXPECT_LT(before.size(), 36u) << "the sweep finished before it could be killed";

  args.push_back("--resume");
  const std::string log = (TempDir() / "resume.log").string();
  ASSERT_EQ(RunBinary(args, log), 0) << std::ifstream(log).rdbuf();
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  EXPECT_NE(text.str().find("points    36"), std::string::npos) << text.str();
  const std::vector<std::string> after = Lines(out);
  ASSERT_EQ(after.size(), 36u);
  // Every whole line written before the kill is still there, unchanged.
  size_t whole = 0;
  for (const std::string& l : before) {
    if (!nlohmann::json::parse(l, nullptr, false).is_discarded()) {
      EXPECT_EQ(after[whole], l);
      ++whole;
    }
  }
  std::set<std::string> keys;
  for (const std::string& l : after) keys.insert(nlohmann::json::parse(l)["key"].get<std::string>());
  EXPECT_EQ(keys.size(), 36u);

  // The report of the sweep.
  const std::string report = Fresh("report");
  ASSERT_EQ(RunBinary({"report", out, "--out", report}, log), 0) << std::ifstream(log).rdbuf();
  for (const char* f : {"index.html", "report.md"}) {
    ASSERT_TRUE(fs::exists(fs::path(report) / f)) << f;
    EXPECT_GT(fs::file_size(fs::path(report) / f), 1000u) << f;
  }
  std::stringstream html;
  html << std::ifstream(fs::path(report) / "index.html").rdbuf();
  EXPECT_NE(html.str().find("measured here"), std::string::npos);
  EXPECT_NE(html.str().find("(paper)"), std::string::npos);
  if (GnuplotAvailable()) {
    for (const char* stem : {"fig3_speedup_resnet18", "fig4_speedup_models_50ns", "fig5_latency_split_resnet18"}) {
      for (const char* ext : {".png", ".svg", ".gp", ".dat"}) {
        const fs::path p = fs::path(report) / (std::string(stem) + ext);
        ASSERT_TRUE(fs::exists(p)) << p;
        EXPECT_GT(fs::file_size(p), 100u) << p;
      }
      EXPECT_NE(html.str().find(std::string(stem) + ".png"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace hetplan
