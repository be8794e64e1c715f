// Plans on two PUs that both run here, executed on pinned PU threads: the
// cuts that keep segments at their planned times, a parallel plan whose
// branches run at the same time, two requests at once, and the unsplit
// model's outputs from every one of them. Two cores give each PU its own
// core; on a one-core machine both PUs share core 0 (their segments still
// run at the same time, interleaved by the OS).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <string>

#include "hetplan/app/plan.h"
#include "hetplan/deploy/manifest.h"
#include "hetplan/deploy/run.h"
#include "hetplan/deploy/split.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/util/io.h"
#include "ort/pinning.h"
#include "ort/session.h"
#include "testing/helpers.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

// --- TimedCuts ----------------------------------------------------------------------

OpGraph RandomDag(int n, std::mt19937& rng) {
  std::vector<Operator> ops(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    ops[static_cast<size_t>(i)].id = i;
    ops[static_cast<size_t>(i)].name = "op" + std::to_string(i);
    ops[static_cast<size_t>(i)].type = "Relu";
  }
  std::vector<Edge> es;
  for (int b = 1; b < n; ++b) {
    for (int a = 0; a < b; ++a) {
      if (rng() % 4 == 0) es.push_back(Edge{a, b, {"t" + std::to_string(a)}, 1, 4});
    }
  }
  auto g = OpGraph::Create("g", std::move(ops), std::move(es));
  EXPECT_TRUE(g.ok());
  return std::move(g).value();
}

// On random DAGs, list-scheduled on two serial PUs with a hand-off delay:
// every segment depends only on segments the plan finishes before it starts,
// and each PU's segments come in planned order.
TEST(TimedCuts, SegmentsDependOnlyOnWhatThePlanHasFinished) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 20);
    OpGraph g = RandomDag(n, rng);
    std::vector<int> device(static_cast<size_t>(n));
    std::vector<double> start(static_cast<size_t>(n)), finish(static_cast<size_t>(n));
    double free_at[2] = {0, 0};
    for (int v : g.topological_order()) {
      const int d = static_cast<int>(rng() % 2);
      device[static_cast<size_t>(v)] = d;
      double t = free_at[d];
      for (int u : g.predecessors(v)) {
        t = std::max(t, finish[static_cast<size_t>(u)] + (device[static_cast<size_t>(u)] != d ? 0.5 : 0.0));
      }
      start[static_cast<size_t>(v)] = t;
      finish[static_cast<size_t>(v)] = t + 1 + static_cast<double>(rng() % 5);
      free_at[d] = finish[static_cast<size_t>(v)];
    }
    std::vector<int> order = g.topological_order();
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return start[static_cast<size_t>(a)] != start[static_cast<size_t>(b)]
                 ? start[static_cast<size_t>(a)] < start[static_cast<size_t>(b)]
                 : g.topo_position(a) < g.topo_position(b);
    });
    auto segs = PlanSegments(g, device, order, TimedCuts(g, device, order, start, finish));
    ASSERT_TRUE(segs.ok()) << segs.status().message();
    std::vector<double> seg_start, seg_finish;
    for (const SegmentPlan& s : *segs) {
      double a = 1e300, b = 0;
      for (int v : s.operators) {
        a = std::min(a, start[static_cast<size_t>(v)]);
        b = std::max(b, finish[static_cast<size_t>(v)]);
      }
      seg_start.push_back(a);
      seg_finish.push_back(b);
    }
    for (size_t s = 0; s < segs->size(); ++s) {
      for (int d : (*segs)[s].depends_on) {
        EXPECT_LE(seg_finish[static_cast<size_t>(d)], seg_start[s] + 1e-9) << "trial " << trial;
      }
      for (size_t t = 0; t < s; ++t) {
        if ((*segs)[t].device == (*segs)[s].device) {
          EXPECT_LE(seg_finish[t], seg_start[s] + 1e-9) << "trial " << trial;
        }
      }
    }
  }
}

// a → {b on PU 1, c on PU 0} → d: a's segment ends where PU 1 reads it, and
// d opens a new segment because it reads b.
TEST(TimedCuts, CutWhereAnotherPuReadsOrIsStillRunning) {
  std::mt19937 rng(1);
  std::vector<Operator> ops(4);
  for (int i = 0; i < 4; ++i) {
    ops[static_cast<size_t>(i)].id = i;
    ops[static_cast<size_t>(i)].name = "op" + std::to_string(i);
  }
  auto g = OpGraph::Create("g", std::move(ops),
                           {Edge{0, 1, {"a"}, 1, 4}, Edge{0, 2, {"a"}, 1, 4}, Edge{1, 3, {"b"}, 1, 4},
                            Edge{2, 3, {"c"}, 1, 4}});
  ASSERT_TRUE(g.ok());
  const std::vector<int> device = {0, 1, 0, 0};
  const std::vector<bool> cuts = TimedCuts(*g, device, {0, 1, 2, 3}, {0, 1, 1, 3}, {1, 3, 2, 4});
  EXPECT_EQ(cuts, (std::vector<bool>{true, true, true, true}));
  // Without the other PU, a, c and d are one segment.
  const std::vector<bool> alone = TimedCuts(*g, {0, 0, 0, 0}, {0, 1, 2, 3}, {0, 1, 2, 3}, {1, 2, 3, 4});
  EXPECT_EQ(alone, (std::vector<bool>{true, false, false, false}));
}

// --- plans on two PUs that run here ---------------------------------------------------

class TwoPus : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("hetplan_multipu_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    std::string bytes;
    // Branches of ~10 ms or more: long enough to overlap even when other
    // jobs on the machine delay a PU thread's wake-up by a time slice.
    ASSERT_TRUE(test_util::TwoBranchModel(1024, 512, 3).SerializeToString(&bytes));
    model_path_ = new std::string((*dir_ / "two.onnx").string());
    ASSERT_TRUE(WriteFileAtomic(*model_path_, bytes).ok());
    const std::vector<int>& cores = ort::AvailableCores();
    const int second = cores.size() >= 2 ? cores[1] : cores[0];
    const std::string platform = (*dir_ / "two.yaml").string();
    ASSERT_TRUE(WriteFileAtomic(platform, fmt::format("name: two\npus:\n  - name: cpu0\n    kind: cpu\n    cores: [{}]\n"
                                                      "  - name: cpu1\n    kind: cpu\n    cores: [{}]\n",
                                                      cores[0], second))
                    .ok());
    // Synthetic costs (not measured: they only steer the plans) that make
    // branch a cheaper on cpu0 and branch b on cpu1; the runs are measured.
    std::string csv = "# source=synthetic\nkind,op_name,pu,exec_us\n";
    for (const char* op : {"/stem/Relu", "/join/Add"}) csv += fmt::format("op,{},cpu0,10\nop,{},cpu1,11\n", op, op);
    for (int i = 0; i < 3; ++i) {
      for (const char* kind : {"MatMul", "Relu"}) {
        const double us = kind[0] == 'M' ? 800 : 20;
        csv += fmt::format("op,/a{}/{},cpu0,{}\nop,/a{}/{},cpu1,{}\n", i, kind, us, i, kind, 2 * us);
        csv += fmt::format("op,/b{}/{},cpu0,{}\nop,/b{}/{},cpu1,{}\n", i, kind, 2 * us, i, kind, us);
      }
    }
    const std::string table = (*dir_ / "costs.csv").string();
    ASSERT_TRUE(WriteFileAtomic(table, csv).ok());
    PlanInputs in;
    in.model_path = *model_path_;
    in.platform = platform;
    in.costs.costs_path = table;
    auto pp = PrepareProblem(in);
    ASSERT_TRUE(pp.ok()) << pp.status().message();
    pp_ = new PreparedProblem(std::move(pp).value());
  }
  static void TearDownTestSuite() {
    delete pp_;
    delete model_path_;
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
  }

  static nlohmann::json Schedule(const std::string& solver) {
    PlanSpec spec;
    spec.solver = solver;
    spec.options.time_limit_s = 30;
    spec.options.threads = 1;
    auto plan = Plan(pp_->subject(), spec);
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    if (!plan.ok()) return {};
    EXPECT_TRUE(plan->validation.ok());
    return plan->schedule;
  }

  static SplitResult Split(const nlohmann::json& schedule, const fs::path& out) {
    auto plan = ReadPlanFile(schedule, "test-schedule");
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    if (!plan.ok()) return {};
    auto split = SplitModel(pp_->model, *plan, "test-schedule");
    EXPECT_TRUE(split.ok()) << split.status().message();
    if (!split.ok()) return {};
    EXPECT_TRUE(WriteSplit(*split, out.string()).ok());
    return std::move(split).value();
  }

  static RunReport RunOk(const fs::path& out, int runs = 3) {
    RunOptions o;
    o.runs = runs;
    o.warmup = 1;
    auto r = RunDeployment(out.string(), o);
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (!r.ok()) return {};
    EXPECT_TRUE(r->reference_checked);
    EXPECT_TRUE(r->outputs_match);
    return std::move(r).value();
  }

  static fs::path* dir_;
  static std::string* model_path_;
  static PreparedProblem* pp_;
};
fs::path* TwoPus::dir_ = nullptr;
std::string* TwoPus::model_path_ = nullptr;
PreparedProblem* TwoPus::pp_ = nullptr;

TEST_F(TwoPus, AParallelPlanRunsItsBranchesAtTheSameTime) {
  ASSERT_NE(pp_, nullptr);
  nlohmann::json schedule = Schedule("map_parallel");
  for (const auto& op : schedule["operators"]) {
    const std::string name = op["name"];
    if (name.rfind("/a", 0) == 0) {
      EXPECT_EQ(op["device"], "cpu0") << name;
    }
    if (name.rfind("/b", 0) == 0) {
      EXPECT_EQ(op["device"], "cpu1") << name;
    }
  }
  const fs::path out = *dir_ / "parallel";
  SplitResult split = Split(schedule, out);
  ASSERT_GE(split.segments, 3);
  auto m = LoadManifest(out.string());
  ASSERT_TRUE(m.ok()) << m.status().message();
  for (const ManifestDevice& d : m->devices) {
    EXPECT_TRUE(d.configured);
    EXPECT_EQ(d.cores.size(), 1u);
  }
  RunReport r = RunOk(out);
  ASSERT_TRUE(r.pu_threads.has_value());
  const PuThreadReport& p = *r.pu_threads;
  ASSERT_EQ(p.pus.size(), 2u);
  for (const PuRun& pu : p.pus) EXPECT_GT(pu.busy_us, 0.0) << pu.name;
  EXPECT_GT(p.makespan_us, 0.0);
  EXPECT_EQ(p.predicted_makespan_us, schedule["makespan_us"].get<double>());
  // Timestamps: in every run a segment of branch a (cpu0) and one of branch
  // b (cpu1) were running at the same moment.
  std::vector<int> on0, on1;
  for (const SegmentRun& s : r.segments) {
    (s.device == "cpu0" ? on0 : on1).push_back(s.id);
    EXPECT_GE(s.end_us, s.start_us);
  }
  ASSERT_EQ(p.runs.size(), 3u);
  for (const auto& run : p.runs) {
    bool overlap = false;
    for (int a : on0) {
      for (int b : on1) {
        const auto [s0, e0] = run[static_cast<size_t>(a)];
        const auto [s1, e1] = run[static_cast<size_t>(b)];
        overlap = overlap || (s0 < e1 && s1 < e0);
      }
    }
    std::string timeline;
    for (const SegmentRun& s : r.segments) {
      timeline += fmt::format(" [{} {} {:.0f}-{:.0f}]", s.id, s.device, run[static_cast<size_t>(s.id)].first,
                              run[static_cast<size_t>(s.id)].second);
    }
    EXPECT_TRUE(overlap) << timeline;
  }
  EXPECT_GT(p.overlap_us, 0.0);
  // The branches hand over to the other PU and back.
  int cross = 0;
  for (const BoundaryRun& b : p.boundaries) cross += b.from_device != b.to_device;
  EXPECT_GE(cross, 2);
}

TEST_F(TwoPus, AConcurrentPlanRunsBothRequests) {
  ASSERT_NE(pp_, nullptr);
  nlohmann::json schedule = Schedule("map_concurrent");
  ASSERT_EQ(schedule["requests"].size(), 2u);
  const fs::path out = *dir_ / "concurrent";
  SplitResult split = Split(schedule, out);
  auto m = LoadManifest(out.string());
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->requests, 2);
  std::set<int> requests;
  for (const ManifestSegment& s : m->segments) requests.insert(s.request);
  EXPECT_EQ(requests, (std::set<int>{0, 1}));
  RunReport r = RunOk(out);
  ASSERT_TRUE(r.pu_threads.has_value());
  EXPECT_EQ(r.requests, 2);
  // Both requests' outputs were checked against the unsplit model.
  EXPECT_EQ(r.outputs.size(), 2 * m->outputs.size());
  ASSERT_EQ(r.pu_threads->requests.size(), 2u);
  for (const RequestRun& q : r.pu_threads->requests) {
    EXPECT_GT(q.finish_us, 0.0) << "request " << q.request;
    EXPECT_GT(q.predicted_finish_us, 0.0);
  }
  for (const auto& run : r.pu_threads->runs) {
    for (const auto& [start, end] : run) {
      EXPECT_GE(start, 0.0);
      EXPECT_GT(end, start);
    }
  }
}

// Both requests on cpu0, their operators alternating: every switch between
// requests on the PU is a cut, and the PU runs them in planned order.
TEST_F(TwoPus, InterleavedRequestsOnOnePuRunInPlannedOrder) {
  ASSERT_NE(pp_, nullptr);
  nlohmann::json schedule = Schedule("map_concurrent");
  const int n = pp_->model.graph.size();
  double t = 0;
  for (int v : pp_->model.graph.topological_order()) {
    for (int r = 0; r < 2; ++r) {
      auto& op = schedule["operators"][static_cast<size_t>(v + r * n)];
      ASSERT_EQ(op["id"].get<int>(), v + r * n);
      op["device"] = "cpu0";
      op["start_us"] = t;
      t += op["cost_us"]["cpu0"].get<double>();
      op["finish_us"] = t;
    }
  }
  schedule["makespan_us"] = t;
  const fs::path out = *dir_ / "interleaved";
  SplitResult split = Split(schedule, out);
  ASSERT_EQ(split.segments, 2 * n);
  const auto& segs = split.manifest["segments"];
  for (size_t i = 0; i < segs.size(); ++i) EXPECT_EQ(segs[i]["request"].get<int>(), static_cast<int>(i % 2)) << i;
  RunReport r = RunOk(out, 2);
  ASSERT_TRUE(r.pu_threads.has_value());
  for (const auto& run : r.pu_threads->runs) {
    for (size_t i = 1; i < run.size(); ++i) EXPECT_GE(run[i].first, run[i - 1].second) << "one PU, one at a time";
  }
}

TEST_F(TwoPus, TheExactPlanRunsWithTheUnsplitOutputs) {
  ASSERT_NE(pp_, nullptr);
  nlohmann::json schedule = Schedule("exact");
  const fs::path out = *dir_ / "exact";
  Split(schedule, out);
  RunReport r = RunOk(out);
  EXPECT_TRUE(r.pu_threads.has_value());
}

TEST_F(TwoPus, TwoRequestsNeedThePuThreads) {
  ASSERT_NE(pp_, nullptr);
  const fs::path out = *dir_ / "concurrent_seq";
  Split(Schedule("map_concurrent"), out);
  RunOptions o;
  o.runs = 1;
  o.pu_threads = false;
  auto r = RunDeployment(out.string(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("PU-thread executor"), std::string::npos) << r.status().message();
  // One request, sequentially: the old resident executor, same outputs.
  const fs::path one = *dir_ / "parallel_seq";
  Split(Schedule("map_parallel"), one);
  auto seq = RunDeployment(one.string(), o);
  ASSERT_TRUE(seq.ok()) << seq.status().message();
  EXPECT_FALSE(seq->pu_threads.has_value());
  EXPECT_TRUE(seq->outputs_match);
}

// The whole path as a user runs it: measured profiles of both pinned PUs and
// their co-run costs, a parallel plan, split, run. Few profiler and co-run
// runs (--corun-runs, --corun-rounds): the path is tested, not the numbers.
// A fresh folder holding two.onnx (a two-branch model); the platform of this
// host's two cores (one core twice on a one-core machine).
std::string TwoBranchFolder(const std::string& name, std::string* platform) {
  const fs::path dir = fs::temp_directory_path() / ("hetplan_multipu_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string bytes;
  EXPECT_TRUE(test_util::TwoBranchModel(32, 128, 2).SerializeToString(&bytes));
  EXPECT_TRUE(WriteFileAtomic((dir / "two.onnx").string(), bytes).ok());
  *platform = ort::AvailableCores().size() >= 2 ? "host-2core" : "host-2core --set cpu1.cores=0";
  return dir.string();
}

TEST(MultiPuCli, MapSplitRunOnTwoMeasuredPus) {
  std::string platform;
  const std::string d = TwoBranchFolder("cli", &platform);
  const fs::path dir = d;
  auto map = test_util::Hetplan("map " + d + "/two.onnx --platform " + platform + " --mode parallel --warmup 1 --runs 3 "
                                "--corun-runs 3 --corun-rounds 1 --cache-dir " + d + "/cache --out " + d + "/s.json");
  ASSERT_EQ(map.code, 0) << map.out;
  EXPECT_NE(map.out.find("co-running"), std::string::npos) << map.out;
  auto split = test_util::Hetplan("split " + d + "/s.json --out " + d + "/split");
  ASSERT_EQ(split.code, 0) << split.out;
  auto run = test_util::Hetplan("run " + d + "/split --runs 2 --warmup 1 --json " + d + "/run.json");
  ASSERT_EQ(run.code, 0) << run.out;
  EXPECT_NE(run.out.find("PU-thread executor"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("makespan"), std::string::npos) << run.out;
  auto report = ReadFile(d + "/run.json", 1 << 24);
  ASSERT_TRUE(report.ok());
  nlohmann::json j = nlohmann::json::parse(*report);
  EXPECT_EQ(j["executor"], "pu-threads");
  EXPECT_TRUE(j["pu_threads"]["makespan"]["measured_us"].is_number());
  fs::remove_all(dir);
}

// A stream (docs/throughput.md): the throughput plan on both measured PUs,
// split, and `run --stream` with every input different: each input's
// outputs equal the unsplit model's on it, the report gives the measured II
// against the planned one, and a plan with a segment this machine cannot run
// (a CIM) is refused in one line.
TEST(MultiPuCli, AStreamRunsSeveralInputsAtOnceWithTheUnsplitOutputs) {
  std::string platform;
  const std::string d = TwoBranchFolder("stream", &platform);
  const fs::path dir = d;
  auto plan = test_util::Hetplan("partition " + d + "/two.onnx --platform " + platform + " --objective throughput "
                                 "--warmup 1 --runs 3 --cache-dir " + d + "/cache --out " + d + "/s.json");
  ASSERT_EQ(plan.code, 0) << plan.out;
  ASSERT_EQ(test_util::Hetplan("split " + d + "/s.json --out " + d + "/split").code, 0);
  auto run = test_util::Hetplan("run " + d + "/split --runs 2 --warmup 1 --stream 12 --json " + d + "/run.json");
  ASSERT_EQ(run.code, 0) << run.out;
  EXPECT_NE(run.out.find("stream     12 inputs"), std::string::npos) << run.out;
  auto report = ReadFile(d + "/run.json", 1 << 24);
  ASSERT_TRUE(report.ok());
  const nlohmann::json j = nlohmann::json::parse(*report)["stream"];
  EXPECT_EQ(j["inputs"], 12);
  EXPECT_EQ(j["outputs_checked"], 12);
  EXPECT_EQ(j["outputs_mismatched"], 0);
  EXPECT_GE(j["in_flight"].get<int>(), 2);
  EXPECT_GT(j["inputs_per_s"].get<double>(), 0);
  EXPECT_TRUE(j["predicted_ii_us"].is_number());
  EXPECT_LE(j["latency_median_us"].get<double>(), j["latency_p95_us"].get<double>());
  // A CIM segment cannot stream here.
  auto cim = test_util::Hetplan("partition " + d + "/two.onnx --platform klein-arm --objective throughput "
                                "--warmup 1 --runs 3 --cache-dir " + d + "/cache --out " + d + "/c.json");
  ASSERT_EQ(cim.code, 0) << cim.out;
  ASSERT_EQ(test_util::Hetplan("split " + d + "/c.json --out " + d + "/csplit").code, 0);
  auto refused = test_util::Hetplan("run " + d + "/csplit --runs 1 --warmup 0 --stream 4");
  fs::remove_all(dir);
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.out.find("--stream runs every segment here"), std::string::npos) << refused.out;
}

// A provider this ONNX Runtime lacks stops planning with one line naming it
// and the providers it has.
TEST(MultiPuCli, AMissingProviderIsOneClearLine) {
  const fs::path dir = fs::temp_directory_path() / ("hetplan_multipu_ep_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string bytes;
  ASSERT_TRUE(test_util::TwoBranchModel(8, 16, 1).SerializeToString(&bytes));
  ASSERT_TRUE(WriteFileAtomic((dir / "two.onnx").string(), bytes).ok());
  const std::vector<std::string> providers = ort::AvailableProviders();
  if (std::find(providers.begin(), providers.end(), "CUDAExecutionProvider") != providers.end()) {
    GTEST_SKIP() << "this ONNX Runtime has CUDA";
  }
  auto r = test_util::Hetplan("map " + dir.string() + "/two.onnx --platform cpu-cuda-example --no-cache --out " +
                              dir.string() + "/s.json");
  fs::remove_all(dir);
  EXPECT_NE(r.code, 0);
  EXPECT_FALSE(fs::exists(dir / "s.json"));
  EXPECT_NE(r.out.find("preset:cpu-cuda-example: pus[1] (gpu).provider: execution provider 'cuda'"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("CPUExecutionProvider"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

}  // namespace
}  // namespace hetplan
