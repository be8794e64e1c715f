// The ONNX Runtime profiler on a tiny residual block built here:
//   x → Conv → Relu → Conv(weight via Identity) → Add(x) → Mul(Constant) → y
// Few runs keep it fast; the checks are on shape and sanity of the numbers,
// the cache, and the errors, not on how fast this machine is.
#include "hetplan/cost/profiler.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "cost/ort_profiler_internal.h"
#include "cost/profiler_internal.h"
#include "hetplan/app/costs.h"
#include "hetplan/util/io.h"
#include "testing/helpers.h"

namespace hetplan {
namespace {

using test_util::AddNode;
using test_util::AddTensor;
using test_util::Floats;
using test_util::CmdResult;
using test_util::Pads;

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    static int n = 0;
    path_ = fs::temp_directory_path() /
            ("hetplan_profiler_test_" + std::to_string(getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Writes the residual block to `dir`/block.onnx and returns the path.
std::string WriteBlock(const fs::path& dir, int channels = 8, int hw = 16) {
  onnx::ModelProto m = test_util::ResidualBlock(channels, hw);
  auto* g = m.mutable_graph();
  // A Constant node's value must come along too.
  auto* k = AddNode(g, "Constant", {}, {"half"}, "/half/Constant");
  auto* a = k->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = Floats("half_value", {1}, 0.0f);
  a->mutable_t()->set_float_data(0, 0.5f);
  AddNode(g, "Mul", {"s", "half"}, {"y"}, "/scale/Mul");
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  std::string path = (dir / "block.onnx").string();
  EXPECT_TRUE(WriteFileAtomic(path, bytes).ok());
  return path;
}

LoadedModel Load(const std::string& path, FusionLevel fusion = FusionLevel::kNone) {
  ImportOptions io;
  io.fusion = fusion;
  auto m = LoadOnnxModel(path, io);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(m).value();
}

ProfileOptions Quick() {
  ProfileOptions o;
  o.warmup = 2;
  o.runs = 10;
  o.model_runs = 5;
  o.boundary_runs = 3;
  return o;
}

TEST(Profiler, MeasuresEveryOperatorAndTheWholeModel) {
  TempDir dir;
  LoadedModel m = Load(WriteBlock(dir.path()));
  ASSERT_EQ(m.graph.size(), 5);  // Conv, Relu, Conv, Add, Mul
  std::vector<std::pair<int, int>> progress;
  ProfileOptions o = Quick();
  o.progress = [&](int done, int total) { progress.emplace_back(done, total); };
  auto t = ProfileOnnxRuntime(m, "cpu", o);
  ASSERT_TRUE(t.ok()) << t.status().message();

  ASSERT_EQ(t->ops.size(), 5u);
  int with_context = 0;
  for (const Operator& op : m.graph.operators()) {
    const OpCost* c = t->Find(op.name, "cpu");
    ASSERT_NE(c, nullptr) << op.name;
    EXPECT_EQ(c->op_id, op.id);
    EXPECT_GT(c->exec_us, 0) << op.name;
    ASSERT_TRUE(c->p10_us && c->p90_us) << op.name;
    EXPECT_LE(*c->p10_us, c->exec_us) << op.name;
    EXPECT_LE(c->exec_us, *c->p90_us) << op.name;
    EXPECT_EQ(c->dispatch_us, 0);
    if (c->in_context_us) {
      ++with_context;
      EXPECT_GE(*c->in_context_us, 0);
      // The executor's share comes with the kernel time, and the planners
      // charge both.
      ASSERT_TRUE(c->framework_us.has_value()) << op.name;
      EXPECT_GE(*c->framework_us, 0);
      EXPECT_DOUBLE_EQ(c->PlannedUs(), *c->in_context_us + *c->framework_us);
    } else {
      EXPECT_FALSE(c->framework_us.has_value());
      EXPECT_DOUBLE_EQ(c->PlannedUs(), c->exec_us);
    }
  }
  EXPECT_GE(with_context, 4) << "ORT's profile should attribute most operators";
  // One whole-model Run, taken apart: the kernels lie inside ORT's model_run
  // event, which lies inside the wall time around Session::Run.
  const double wall = std::stod(t->meta.at("in_context_wall_us"));
  const double run = std::stod(t->meta.at("in_context_run_us"));
  const double kernels = std::stod(t->meta.at("in_context_kernel_sum_us"));
  EXPECT_GT(kernels, 0);
  EXPECT_LE(kernels, run + 1.0);  // ORT's timestamps are whole µs
  EXPECT_LE(run, wall + 1.0);
  EXPECT_GE(std::stod(t->meta.at("framework_per_kernel_us")), 0);
  EXPECT_GE(std::stod(t->meta.at("in_context_kernels")), 4);
  // The boundary cost: fitted from the block cut into 1, 2 and 4 segments.
  ASSERT_EQ(t->boundary_us.count("cpu"), 1u);
  EXPECT_GE(t->boundary_us.at("cpu"), 0);
  EXPECT_EQ(t->meta.at("boundary_points").substr(0, 2), "1:");
  EXPECT_NE(t->meta.at("boundary_points").find(" 4:"), std::string::npos) << t->meta.at("boundary_points");
  EXPECT_TRUE(t->meta.count("boundary_r2"));
  EXPECT_TRUE(t->meta.count("boundary_method"));
  ASSERT_TRUE(t->model_median_us.has_value());
  EXPECT_GT(*t->model_median_us, 0);
  EXPECT_LE(*t->model_p10_us, *t->model_median_us);
  EXPECT_LE(*t->model_median_us, *t->model_p90_us);

  for (const char* key : {"source", "model_sha256", "model_file", "fusion", "host", "cpu", "threads",
                          "runtime", "warmup", "runs", "model_runs", "created", "sum_of_op_medians_us",
                          "relative_error", "in_context_unmapped_share", "cache"}) {
    EXPECT_TRUE(t->meta.count(key)) << key;
  }
  EXPECT_EQ(t->meta["source"], "measured");
  EXPECT_EQ(t->meta["model_sha256"], m.sha256);
  EXPECT_EQ(t->meta["model_file"], "block.onnx");
  EXPECT_EQ(t->meta["fusion"], "none");
  EXPECT_EQ(t->meta["threads"], "1");
  EXPECT_EQ(t->meta["runtime"], "onnxruntime " + OnnxRuntimeVersion());
  EXPECT_EQ(t->meta["cache"], "off");
  EXPECT_FALSE(t->meta.count("in_context_error")) << t->meta["in_context_error"];
  EXPECT_NE(OnnxRuntimeVersion(), "unknown");
  EXPECT_FALSE(CpuModelName().empty());

  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.front(), std::make_pair(0, 5));
  EXPECT_EQ(progress.back(), std::make_pair(5, 5));
  EXPECT_TRUE(CheckCostTable(*t, m.graph, "profile").ok());
  EXPECT_TRUE(CheckProvenance(*t, m.sha256, "profile").ok());

  // No ORT profile file is left behind.
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path())) {
    EXPECT_EQ(e.path().filename().string().rfind("hetplan_ort_profile_" + std::to_string(getpid()), 0),
              std::string::npos)
        << e.path();
  }
}

// The correction for ORT's profiler, by hand: a tiny operator (1 µs kernel,
// 4 µs executor share), a large one (100 + 4 µs) and one of two kernels
// (10 + 8 µs); profiled they add up to 127 µs.
TEST(Profiler, ProfilerCostComesOffEveryKernelBeforeTheScale) {
  using cost_internal::CorrectInContext;
  const std::vector<int> kernels = {1, 1, 2, 0};
  auto shares = [] {
    return std::pair{std::vector<std::optional<double>>{1.0, 100.0, 10.0, std::nullopt},
                     std::vector<std::optional<double>>{4.0, 4.0, 8.0, std::nullopt}};
  };
  {
    // 5 µs per kernel: the tiny one loses all of its 5, the two-kernel one
    // 10 of its 18, the large one 5 of its 104 (its executor share, then a
    // µs of kernel); 107 µs left, and the plain Run is 96.3: scale 0.9.
    auto [ic, fw] = shares();
    const auto c = CorrectInContext(96.3, 5.0, kernels, &ic, &fw);
    EXPECT_DOUBLE_EQ(c.per_kernel_us, 5.0);
    EXPECT_NEAR(c.scale, 0.9, 1e-12);
    EXPECT_DOUBLE_EQ(*ic[0] + *fw[0], 0.0);
    EXPECT_NEAR(*fw[1], 0.0, 1e-12);
    EXPECT_NEAR(*ic[1], 99.0 * 0.9, 1e-9);
    EXPECT_NEAR(*ic[2] + *fw[2], 8.0 * 0.9, 1e-9);
    EXPECT_NEAR(*fw[2], 0.0, 1e-12);  // the executor's share goes first
    EXPECT_FALSE(ic[3].has_value());
    EXPECT_NEAR(*ic[0] + *fw[0] + *ic[1] + *fw[1] + *ic[2] + *fw[2], 96.3, 1e-9);
  }
  {
    // One factor alone (no probe) keeps the tiny operator's 5 µs scaled:
    // the over-prediction of small operators that the probe removes.
    auto [ic, fw] = shares();
    const auto c = CorrectInContext(96.3, 0.0, kernels, &ic, &fw);
    EXPECT_NEAR(c.scale, 96.3 / 127.0, 1e-12);
    EXPECT_NEAR(*ic[0] + *fw[0], 5.0 * 96.3 / 127.0, 1e-9);
  }
  {
    // Never more per kernel than the excess (127 − 119 = 8 µs over 4
    // kernels): then no factor is needed.
    auto [ic, fw] = shares();
    const auto c = CorrectInContext(119.0, 5.0, kernels, &ic, &fw);
    EXPECT_DOUBLE_EQ(c.per_kernel_us, 2.0);
    EXPECT_NEAR(c.scale, 1.0, 1e-12);
    EXPECT_NEAR(*ic[0] + *fw[0] + *ic[1] + *fw[1] + *ic[2] + *fw[2], 119.0, 1e-9);
  }
  {
    // A plain Run slower than the profiled shares: left as measured.
    auto [ic, fw] = shares();
    const auto c = CorrectInContext(130.0, 5.0, kernels, &ic, &fw);
    EXPECT_DOUBLE_EQ(c.per_kernel_us, 0.0);
    EXPECT_DOUBLE_EQ(c.scale, 1.0);
    EXPECT_DOUBLE_EQ(*ic[1], 100.0);
  }
}

// A chain of many tiny kernels, where ORT's profiler costs more than the
// kernels it times: the probe's cost per kernel and a factor take it out of
// the in-context shares, so that a one-segment plan is predicted as the
// model runs without it.
TEST(Profiler, InContextSharesAddUpToThePlainRunNotTheProfiledOne) {
  TempDir dir;
  onnx::ModelProto mp = test_util::NewModel("tiny_chain");
  auto* g = mp.mutable_graph();
  AddTensor(g->add_input(), "x", {1, 8});
  std::string in = "x";
  constexpr int kOps = 160;
  for (int i = 0; i < kOps; ++i) {
    const std::string out = i + 1 == kOps ? "y" : "t" + std::to_string(i);
    AddNode(g, i % 2 ? "Tanh" : "Sigmoid", {in}, {out}, "/n" + std::to_string(i));
    in = out;
  }
  AddTensor(g->add_output(), "y", {1, 8});
  std::string bytes;
  ASSERT_TRUE(mp.SerializeToString(&bytes));
  const std::string path = (dir.path() / "chain.onnx").string();
  ASSERT_TRUE(WriteFileAtomic(path, bytes).ok());
  LoadedModel m = Load(path);
  ASSERT_EQ(m.graph.size(), kOps);
  ProfileOptions o = Quick();
  o.boundary_runs = 0;
  o.runs = 3;
  o.model_runs = 15;
  auto t = ProfileOnnxRuntime(m, "cpu", o);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_FALSE(t->meta.count("in_context_error")) << t->meta["in_context_error"];
  const double scale = std::stod(t->meta.at("in_context_scale"));
  const double plain = std::stod(t->meta.at("in_context_plain_us"));
  const double run = std::stod(t->meta.at("in_context_run_us"));
  const double outside = std::stod(t->meta.at("run_overhead_us"));
  const double probe = std::stod(t->meta.at("profiler_per_kernel_us"));
  const double per_kernel = std::stod(t->meta.at("in_context_per_kernel_us"));
  EXPECT_GT(scale, 0);
  EXPECT_LE(scale, 1);
  // The plain runs are the model row's runs.
  ASSERT_TRUE(t->model_median_us.has_value());
  EXPECT_DOUBLE_EQ(plain, *t->model_median_us);
  // The profiler costs µs per kernel; these kernels take well under one, so
  // a profiled Run is far longer than a plain one, and the probe's cost
  // per kernel is taken off (up to the excess).
  EXPECT_GT(run, 1.2 * plain) << "profiled model_run " << run << " µs, plain Run " << plain << " µs";
  EXPECT_GT(probe, 0.1);
  EXPECT_GT(per_kernel, 0);
  EXPECT_LE(per_kernel, probe);
  double planned = 0, without = 0;
  int with_context = 0;
  for (const OpCost& c : t->ops) {
    planned += c.PlannedUs();
    with_context += c.in_context_us.has_value();
    if (!c.in_context_us) without += c.PlannedUs();
  }
  EXPECT_GE(with_context, kOps * 9 / 10);
  // Σ planned is the plain model_run (what ORT's profile attributes of it),
  // the operators the profile did not show on top.
  EXPECT_NEAR(planned - without, plain - outside, 1e-6 * plain + 1e-6)
      << "scale " << scale << ", per kernel " << per_kernel << " µs";
}

// The whole model is timed again after the operators: how far the machine's
// speed moved during the profile, and what the hypervisor took meanwhile.
// The whole-model and boundary repetitions follow the operators' budget
// (issue 47: a 2.4 s model profiled with --runs 10 spent minutes on 50 + 50
// whole-model runs), and each stage says what it measures and how long the
// rest will take.
TEST(Profiler, TheBudgetFollowsRunsAndEachStageSaysWhatIsLeft) {
  EXPECT_EQ(DefaultModelRuns(200), 50);
  EXPECT_EQ(DefaultBoundaryRuns(200), 10);
  EXPECT_EQ(DefaultModelRuns(10), 5);
  EXPECT_EQ(DefaultBoundaryRuns(10), 1);
  EXPECT_EQ(DefaultModelRuns(1), 3);
  TempDir dir;
  LoadedModel m = Load(WriteBlock(dir.path(), 32, 32));
  ProfileOptions o;
  o.warmup = 2;
  o.runs = 10;
  o.model_runs = DefaultModelRuns(o.runs);
  o.boundary_runs = DefaultBoundaryRuns(o.runs);
  // Whole model 2 x (2 + 5), end check 2 + 5, boundary cuts 1, 2, 4 of the 5 operators x (2 + 1).
  ASSERT_EQ(m.graph.size(), 5);
  EXPECT_EQ(ProfileWholeModelRuns(o, m.graph.size()), 14 + 7 + 9);
  std::vector<std::pair<std::string, double>> stages;
  o.stage = [&](const std::string& what, double left) { stages.emplace_back(what, left); };
  auto t = ProfileOnnxRuntime(m, "cpu", o);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->meta.at("model_runs"), "5");
  EXPECT_EQ(t->meta.at("boundary_runs"), "1");
  EXPECT_EQ(t->meta.at("model_end_runs"), "5");
  ASSERT_EQ(stages.size(), 4u);
  EXPECT_NE(stages[0].first.find("whole model, 2 warm-up and 5 timed runs"), std::string::npos) << stages[0].first;
  EXPECT_NE(stages[0].first.find("30 whole-model runs in all"), std::string::npos) << stages[0].first;
  EXPECT_NE(stages[1].first.find("5 operators, 2 warm-up and 10 timed runs each"), std::string::npos);
  EXPECT_NE(stages[2].first.find("whole model again, 5 runs"), std::string::npos);
  EXPECT_NE(stages[3].first.find("boundary fit"), std::string::npos);
  // Estimates from the whole model's time: positive, shrinking stage by stage.
  for (size_t s = 0; s < stages.size(); ++s) {
    EXPECT_GT(stages[s].second, 0) << stages[s].first;
    if (s > 0) {
      EXPECT_LT(stages[s].second, stages[s - 1].second) << stages[s].first;
    }
  }
  // The last stage's estimate: 9 boundary passes of the median whole model.
  EXPECT_NEAR(stages[3].second, 9 * *t->model_median_us * 1e-6, 1e-9);
}

TEST(Profiler, RecordsTheWholeModelAgainAtTheEnd) {
  TempDir dir;
  LoadedModel m = Load(WriteBlock(dir.path()));
  ProfileOptions o = Quick();
  o.boundary_runs = 0;
  o.model_runs = 10;
  auto t = ProfileOnnxRuntime(m, "cpu", o);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_TRUE(t->model_median_us.has_value());
  const double end = std::stod(t->meta.at("model_end_median_us"));
  EXPECT_GT(end, 0);
  EXPECT_EQ(t->meta.at("model_end_runs"), "5");  // at least 5, a fifth of model_runs
  EXPECT_NEAR(std::stod(t->meta.at("model_drift")), end / *t->model_median_us - 1.0, 1e-9);
  if (std::ifstream("/proc/stat")) {
    const double steal = std::stod(t->meta.at("cpu_steal_share"));
    EXPECT_GE(steal, 0);
    EXPECT_LE(steal, 1);
  }
}

TEST(Profiler, StabilityWarningNamesTheDriftAndTheFix) {
  CostTable t;
  EXPECT_EQ(ProfileStabilityWarning(t, "cpu"), "");  // nothing recorded: nothing to say
  t.meta["created"] = "2026-12-04T00:54:09Z";
  t.meta["model_drift"] = "-0.152";
  t.meta["cpu_steal_share"] = "0.001";
  const std::string w = ProfileStabilityWarning(t, "cpu");
  EXPECT_NE(w.find("cpu:"), std::string::npos) << w;
  EXPECT_NE(w.find("15.2 % faster"), std::string::npos) << w;
  EXPECT_NE(w.find("2026-12-04T00:54:09Z"), std::string::npos) << w;
  EXPECT_NE(w.find("--no-cache"), std::string::npos) << w;
  EXPECT_EQ(w.find('\n'), std::string::npos) << w;
  t.meta["model_drift"] = "0.03";  // within the limit, little steal
  EXPECT_EQ(ProfileStabilityWarning(t, "cpu"), "");
  t.meta["cpu_steal_share"] = "0.064";  // the hypervisor took 6.4 %
  EXPECT_NE(ProfileStabilityWarning(t, "cpu").find("6.4 %"), std::string::npos);
  t.meta["cpu_steal_share"] = "0";
  t.meta["model_drift"] = "0.08";
  EXPECT_NE(ProfileStabilityWarning(t, "cpu").find("8.0 % slower"), std::string::npos);
  t.meta["model_drift"] = "garbage";  // unreadable: no claim either way
  EXPECT_EQ(ProfileStabilityWarning(t, "cpu"), "");
  // Within the start's own spread it is noise, not drift.
  t.model_median_us = 100.0;
  t.model_p10_us = 80.0;
  t.model_p90_us = 130.0;
  t.meta["model_drift"] = "0.2";
  t.meta["model_end_median_us"] = "120";
  EXPECT_EQ(ProfileStabilityWarning(t, "cpu"), "");
  t.meta["model_end_median_us"] = "135";
  t.meta["model_drift"] = "0.35";
  EXPECT_NE(ProfileStabilityWarning(t, "cpu").find("35.0 % slower"), std::string::npos);
}

// A profile whose machine drifted warns in the notes every schedule made from
// it carries; a steady one does not.
TEST(Profiler, PlansFromADriftedProfileCarryTheWarning) {
  TempDir dir;
  LoadedModel m = Load(WriteBlock(dir.path()));
  auto platform = LoadPlatform("klein-arm");
  ASSERT_TRUE(platform.ok()) << platform.status().message();
  CostInputs in;
  in.profile = Quick();
  in.profile.boundary_runs = 0;
  in.profile.cache_dir = (dir.path() / "cache").string();
  auto warnings = [&](const ResolvedCosts& r) {
    return std::count_if(r.notes.begin(), r.notes.end(),
                         [](const std::string& n) { return n.rfind("warning: cpu: ", 0) == 0; });
  };
  auto first = ResolveCosts(m, *platform, in);
  ASSERT_TRUE(first.ok()) << first.status().message();
  const CostTable& measured = first->sources.tables.at("cpu");
  ASSERT_TRUE(measured.meta.count("model_drift"));
  EXPECT_EQ(warnings(*first), ProfileStabilityWarning(measured, "cpu").empty() ? 0 : 1);

  // The cached table as if the machine had slowed down by a fifth meanwhile.
  const ProcessingUnit& cpu = platform->pus[static_cast<size_t>(platform->FindPu("cpu"))];
  const fs::path cached = fs::path(in.profile.cache_dir) / (ProfileCacheKey(m, "cpu", ForPu(in.profile, cpu)) + ".json");
  auto t = LoadCostTable(cached.string());
  ASSERT_TRUE(t.ok()) << cached << ": " << t.status().message();
  t->meta["model_drift"] = "0.2";
  ASSERT_TRUE(t->model_median_us && t->model_p90_us);
  t->meta["model_end_median_us"] = std::to_string(std::max(*t->model_median_us * 1.2, *t->model_p90_us + 1.0));
  t->meta["cpu_steal_share"] = "0";
  ASSERT_TRUE(SaveCostTable(*t, (fs::path(cached).replace_extension(".csv")).string(), cached.string()).ok());
  auto again = ResolveCosts(m, *platform, in);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->sources.tables.at("cpu").meta.at("cache"), "hit");
  ASSERT_EQ(warnings(*again), 1);
  for (const std::string& n : again->notes) {
    if (n.rfind("warning:", 0) == 0) {
      EXPECT_NE(n.find("20.0 % slower"), std::string::npos) << n;
    }
  }
}

TEST(Profiler, FusedOperatorsWithAllOptimisations) {
  TempDir dir;
  LoadedModel m = Load(WriteBlock(dir.path()), FusionLevel::kActivation);
  ASSERT_EQ(m.graph.size(), 4);  // Conv+Relu, Conv, Add, Mul
  auto t = ProfileOnnxRuntime(m, "host", Quick());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->meta["graph_optimization"], "all");
  EXPECT_EQ(t->meta["fusion"], "activation");
  ASSERT_EQ(t->ops.size(), 4u);
  for (const OpCost& c : t->ops) {
    EXPECT_EQ(c.pu, "host");
    EXPECT_GT(c.exec_us, 0);
  }
  EXPECT_TRUE(t->meta.count("in_context_unmapped_share"));
}

TEST(Profiler, CacheHitReturnsTheSameTableAndCorruptCacheIsRemeasured) {
  TempDir dir;
  LoadedModel m = Load(WriteBlock(dir.path()));
  ProfileOptions o = Quick();
  o.in_context = false;
  o.cache_dir = (dir.path() / "cache" / "nested").string();
  auto first = ProfileOnnxRuntime(m, "cpu", o);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->meta["cache"], "miss");
  EXPECT_FALSE(first->meta.count("cache_error")) << first->meta["cache_error"];
  EXPECT_FALSE(first->ops[0].in_context_us.has_value());
  const std::string key = ProfileCacheKey(m, "cpu", o);
  const fs::path json = fs::path(o.cache_dir) / (key + ".json");
  ASSERT_TRUE(fs::exists(json));
  ASSERT_TRUE(fs::exists(fs::path(o.cache_dir) / (key + ".csv")));

  int calls = 0;
  o.progress = [&](int, int) { ++calls; };
  auto second = ProfileOnnxRuntime(m, "cpu", o);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(second->meta["cache"], "hit");
  EXPECT_EQ(calls, 0) << "a hit runs nothing";
  ASSERT_EQ(second->ops.size(), first->ops.size());
  for (size_t i = 0; i < first->ops.size(); ++i) {
    EXPECT_EQ(second->ops[i].op_name, first->ops[i].op_name);
    EXPECT_EQ(second->ops[i].exec_us, first->ops[i].exec_us);
    EXPECT_EQ(second->ops[i].p10_us, first->ops[i].p10_us);
    EXPECT_EQ(second->ops[i].p90_us, first->ops[i].p90_us);
  }
  EXPECT_EQ(second->model_median_us, first->model_median_us);
  EXPECT_EQ(second->boundary_us, first->boundary_us);
  EXPECT_EQ(first->boundary_us.count("cpu"), 1u);
  EXPECT_EQ(second->meta["created"], first->meta["created"]);
  EXPECT_EQ(second->meta["sum_of_op_medians_us"], first->meta["sum_of_op_medians_us"]);

  // Other settings are another key: no hit.
  ProfileOptions other = o;
  other.runs = 11;
  EXPECT_NE(ProfileCacheKey(m, "cpu", other), key);
  EXPECT_NE(ProfileCacheKey(m, "npu", o), key);
  other = o;
  other.boundary_runs = 0;
  EXPECT_NE(ProfileCacheKey(m, "cpu", other), key);

  // A corrupt cache file is measured again (and rewritten), never a crash.
  for (const std::string& junk : {std::string("{\"rows\": [{\"kind\": \"op\""), std::string("[]"),
                                  std::string("{\"rows\": []}"), std::string()}) {
    ASSERT_TRUE(WriteFileAtomic(json.string(), junk).ok());
    auto third = ProfileOnnxRuntime(m, "cpu", o);
    ASSERT_TRUE(third.ok()) << third.status().message();
    EXPECT_EQ(third->meta["cache"], "miss") << junk;
    EXPECT_EQ(third->ops.size(), 5u);
  }
  auto fourth = ProfileOnnxRuntime(m, "cpu", o);
  ASSERT_TRUE(fourth.ok());
  EXPECT_EQ(fourth->meta["cache"], "hit");

  // The cached table of one model, loaded explicitly for another, is refused.
  auto loaded = LoadCostTable(json.string());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(CheckProvenance(*loaded, m.sha256, json.string()).ok());
  Status st = CheckProvenance(*loaded, std::string(64, '0'), json.string());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("measured on another model"), std::string::npos) << st.message();
}

TEST(Profiler, RefusesBadOptions) {
  TempDir dir;
  LoadedModel m = Load(WriteBlock(dir.path(), 2, 4));
  ProfileOptions o = Quick();
  o.threads = 0;
  EXPECT_EQ(ProfileOnnxRuntime(m, "cpu", o).status().code(), ErrorCode::kInvalidArgument);
  o = Quick();
  o.runs = 0;
  EXPECT_EQ(ProfileOnnxRuntime(m, "cpu", o).status().code(), ErrorCode::kInvalidArgument);
  o = Quick();
  o.boundary_runs = -1;
  EXPECT_EQ(ProfileOnnxRuntime(m, "cpu", o).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ProfileOnnxRuntime(m, "", Quick()).status().code(), ErrorCode::kInvalidArgument);
  LoadedModel empty;
  EXPECT_FALSE(ProfileOnnxRuntime(empty, "cpu", Quick()).ok());
}

// x → (Conv 3×3 → Relu) × `layers` at 1×16×hw×hw: every activation 4 MiB at
// hw 256, so that a profile's sessions hold far more than its weights.
std::string WriteActivationHeavyChain(const fs::path& dir, int layers, int64_t hw) {
  onnx::ModelProto m = test_util::NewModel("chain");
  auto* g = m.mutable_graph();
  AddTensor(g->add_input(), "x", {1, 16, hw, hw});
  std::string in = "x";
  for (int i = 0; i < layers; ++i) {
    const std::string p = "/l" + std::to_string(i);
    *g->add_initializer() = Floats(p + "_w", {16, 16, 3, 3}, 0.02f);
    Pads(AddNode(g, "Conv", {in, p + "_w"}, {p + "_c"}, p + "/Conv"));
    AddNode(g, "Relu", {p + "_c"}, {p + "_r"}, p + "/Relu");
    in = p + "_r";
  }
  AddTensor(g->add_output(), in, {1, 16, hw, hw});
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  std::string path = (dir / "chain.onnx").string();
  EXPECT_TRUE(WriteFileAtomic(path, bytes).ok());
  return path;
}

// The estimate counts what a session holds: the weights, the part's inputs
// and outputs, twice the activations alive at once.
TEST(ProfileMemory, TheFootprintFollowsTheActivationsAliveAtOnce) {
  TempDir dir;
  LoadedModel m = Load(WriteActivationHeavyChain(dir.path(), 4, 64));  // 256 KiB activations
  const std::vector<int>& order = m.graph.topological_order();
  const int64_t act = 16 * 64 * 64 * 4, weights = 16 * 16 * 9 * 4;
  // Conv → Relu → … → Relu: the input and the output bound, two internal tensors alive at once.
  EXPECT_EQ(ort_profiler_internal::FootprintEstimator(m).Bytes(order),
            4 * weights + 2 * act + static_cast<int64_t>(ort_profiler_internal::kArenaFactor * 2 * act) +
                ort_profiler_internal::kSessionOverheadBytes);
  // One operator alone: its input and output bound, nothing internal.
  EXPECT_EQ(ort_profiler_internal::FootprintEstimator(m).Bytes({order[0]}),
            weights + 2 * act + ort_profiler_internal::kSessionOverheadBytes);
}

// A profile under --max-memory: the boundary fit leaves out the cuts that do
// not fit and says so, the table records the budget and the peak, and the
// peak stays under the budget. The model's 32 operators with 4 MiB
// activations: its six cuts (1 to 32 segments) alive together need more than
// 1 GiB by the estimate.
TEST(ProfileMemory, AProfileStaysUnderItsBudgetAndSaysWhatItLeftOut) {
  TempDir dir;
  const std::string model = WriteActivationHeavyChain(dir.path(), 16, 256);
  const fs::path table = dir.path() / "t.csv", json = dir.path() / "t.json";
  const int64_t budget = int64_t{600} << 20;
  CmdResult r = test_util::Hetplan("profile " + model + " --warmup 1 --runs 3 --boundary-runs 2 --cache-dir " +
                                   (dir.path() / "cache").string() + " --max-memory 600M --out " + table.string() +
                                   " --json " + json.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("memory         profile memory: peak "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("budget 600.0 MiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("left out"), std::string::npos) << r.out;
  auto t = LoadCostTable(json.string());
  ASSERT_TRUE(t.ok()) << t.status().message();
  const int64_t peak = std::stoll(t->meta.at("memory_peak_bytes"));
  EXPECT_EQ(std::stoll(t->meta.at("memory_budget_bytes")), budget);
  EXPECT_LT(peak, budget) << r.out;
  EXPECT_NE(t->meta.at("boundary_memory").find("left under the memory budget"), std::string::npos);
  EXPECT_GE(t->boundary_us.count("cpu"), 1u) << "the cuts that fit still give a fit";
  // Cut short by the budget: used, not cached for a later run with more memory.
  EXPECT_EQ(t->meta.at("cache"), "off");
  EXPECT_NE(t->meta.at("cache_error").find("not cached"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path() / "cache") && !fs::is_empty(dir.path() / "cache"));
  // A budget below one whole-model session: refused in one line naming the fix.
  CmdResult tiny = test_util::Hetplan("profile " + model + " --warmup 1 --runs 3 --no-cache --max-memory 64M --out " +
                                      (dir.path() / "u.csv").string());
  EXPECT_NE(tiny.code, 0);
  EXPECT_NE(tiny.out.find("over the memory budget of 64.0 MiB; give a larger --max-memory"), std::string::npos)
      << tiny.out;
  EXPECT_FALSE(fs::exists(dir.path() / "u.csv"));
  CmdResult bad = test_util::Hetplan("profile " + model + " --max-memory lots --out " + (dir.path() / "v.csv").string());
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("'lots' is not a size"), std::string::npos) << bad.out;
}

TEST(Profiler, ModelOnnxRuntimeCannotLoadIsAOneLineError) {
  // Erf on float64 is valid ONNX, but ORT's CPU provider has no kernel for it.
  TempDir dir;
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("erf64");
  AddTensor(g->add_input(), "x", {1, 4});
  AddTensor(g->add_output(), "y", {1, 4});
  g->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::DOUBLE);
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::DOUBLE);
  AddNode(g, "Relu", {"x"}, {"r"}, "/relu/Relu");
  AddNode(g, "Erf", {"r"}, {"y"}, "/erf/Erf");
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  std::string path = (dir.path() / "erf64.onnx").string();
  ASSERT_TRUE(WriteFileAtomic(path, bytes).ok());
  auto model = LoadOnnxModel(path);
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto t = ProfileOnnxRuntime(*model, "cpu", Quick());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), ErrorCode::kUnsupported);
  const std::string& msg = t.status().message();
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_NE(msg.find("erf64.onnx: ONNX Runtime"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cannot load the model"), std::string::npos) << msg;
  EXPECT_NE(msg.find("/erf/Erf"), std::string::npos) << "ORT's message names the node: " << msg;
}

}  // namespace
}  // namespace hetplan
