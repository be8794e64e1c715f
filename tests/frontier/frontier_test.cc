// The crossbar frontier (solve/frontier.h, app/frontier.h): at every
// breakpoint, one budget below it and budgets between breakpoints, the
// frontier's makespan equals the exact method's optimum with that budget as
// the capacity (random DAGs of the shared generators, two PUs, three PUs,
// two capacitated spatial PUs; two zoo models through the application
// layer); every breakpoint's schedule fits its budget and passes the
// independent validator; the inverse questions agree with the curve.
#include "hetplan/solve/frontier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "hetplan/app/frontier.h"
#include "solve/ilp_test_support.h"
#include "testing/platforms.h"
#include "testing/scratch.h"

namespace hetplan {
namespace {

using namespace ilp_test;  // NOLINT(google-build-using-namespace): the shared test helpers

SolveOptions ExactOptions0() {
  SolveOptions o;
  o.relative_gap = 0;
  o.time_limit_s = 120;
  o.threads = 1;
  return o;
}

// The budgets checked: 0, each breakpoint, one below it, the middle of each
// step, the largest.
std::set<int64_t> BudgetsToCheck(const CrossbarFrontier& f) {
  std::set<int64_t> b = {0, f.max_crossbars};
  for (size_t i = 0; i < f.steps.size(); ++i) {
    const int64_t lo = f.steps[i].crossbars;
    const int64_t hi = i + 1 < f.steps.size() ? f.steps[i + 1].crossbars - 1 : f.max_crossbars;
    b.insert(lo);
    if (lo > 0) b.insert(lo - 1);
    b.insert((lo + hi) / 2);
  }
  return b;
}

// The optimum at budget b by the exact method, with b as the capacity.
std::optional<double> ExactAt(const Problem& p, int pu, int64_t b) {
  CostModel c = *p.costs;
  c.mutable_pu(pu).capacity = b;
  Problem q = p;
  q.costs = &c;
  TestOptions o;
  static_cast<SolveOptions&>(o) = ExactOptions0();
  SolveResult r = MustSolve(q, o);
  if (r.status == SolveStatus::kInfeasible) return std::nullopt;
  EXPECT_EQ(r.status, SolveStatus::kOptimal) << Notes(r);
  return r.objective;
}

// Checks the frontier of `p` over `pu` against the exact method and the
// validator; returns the number of budgets compared.
int CheckFrontier(const Problem& p, int pu, const std::string& what) {
  auto f = SolveCrossbarFrontier(p, pu, ExactOptions0());
  EXPECT_TRUE(f.ok()) << what << ": " << f.status().message();
  if (!f.ok()) return 0;
  EXPECT_TRUE(f->complete) << what;
  // Steps: crossbars increasing, makespans decreasing, each optimal, each
  // schedule within its own budget and valid there.
  for (size_t i = 0; i < f->steps.size(); ++i) {
    const FrontierStep& s = f->steps[i];
    EXPECT_TRUE(s.optimal) << what;
    EXPECT_NEAR(s.lower_bound_us, s.makespan_us, 1e-9 * std::max(1.0, s.makespan_us)) << what;
    if (i > 0) {
      EXPECT_GT(s.crossbars, f->steps[i - 1].crossbars) << what;
      EXPECT_LT(s.makespan_us, f->steps[i - 1].makespan_us) << what;
    }
    int64_t used = 0;
    for (int v = 0; v < p.graph->size(); ++v) {
      if (s.schedule.ops[v].device == pu) used += p.costs->crossbars(v, pu);
    }
    EXPECT_LE(used, s.crossbars) << what;
    CostModel c = *p.costs;
    c.mutable_pu(pu).capacity = s.crossbars;
    Problem q = p;
    q.costs = &c;
    SolveResult r;
    r.schedule = s.schedule;
    r.objective = s.makespan_us;
    ExpectValid(q, r);
  }
  int compared = 0;
  for (int64_t b : BudgetsToCheck(*f)) {
    const std::optional<double> exact = ExactAt(p, pu, b);
    const std::optional<double> curve = f->MakespanAt(b);
    EXPECT_EQ(exact.has_value(), curve.has_value()) << what << " at budget " << b;
    if (exact && curve) {
      EXPECT_TRUE(Near(*exact, *curve)) << what << " at budget " << b << ": exact " << *exact << ", frontier "
                                        << *curve;
    }
    ++compared;
  }
  return compared;
}

int CimIndex(const CostModel& c) {
  for (int p = 0; p < c.num_pus(); ++p) {
    if (c.pu(p).name == "cim") return p;
  }
  return -1;
}

TEST(CrossbarFrontier, EqualsTheExactMethodAtEveryBudgetOnRandomDags) {
  std::mt19937 rng(1616);
  int compared = 0, instances = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 5 + trial % 8;
    // The capacity given is ignored by the sweep.
    Instance inst = RandomInstance(rng, n, trial % 3 == 0 ? ThreePus(3) : TwoPus(5), trial % 2 == 0);
    Problem p{&inst.graph, &inst.costs, Objective::kLatency, std::nullopt};
    compared += CheckFrontier(p, CimIndex(inst.costs), "trial " + std::to_string(trial) + "\n" + Describe(inst));
    ++instances;
  }
  EXPECT_EQ(instances, 40);
  EXPECT_GT(compared, 200);
}

TEST(CrossbarFrontier, SweepsOneSpatialPuWhileAnotherBinds) {
  std::mt19937 rng(77);
  for (int trial = 0; trial < 12; ++trial) {
    Instance inst = RandomInstance(rng, 6 + trial % 4, FourPus(4, 3), true);
    Problem p{&inst.graph, &inst.costs, Objective::kLatency, std::nullopt};
    CheckFrontier(p, CimIndex(inst.costs), "trial " + std::to_string(trial) + "\n" + Describe(inst));
  }
}

TEST(CrossbarFrontier, RefusesWhatItCannotSweep) {
  std::mt19937 rng(5);
  Instance inst = RandomInstance(rng, 6, TwoPus(5), true);
  Problem p{&inst.graph, &inst.costs, Objective::kLatency, std::nullopt};
  auto serial = SolveCrossbarFrontier(p, 0, ExactOptions0());
  ASSERT_FALSE(serial.ok());
  EXPECT_NE(serial.status().message().find("no crossbar capacity"), std::string::npos) << serial.status().message();
  auto negative = SolveCrossbarFrontier(p, 1, ExactOptions0(), -3);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("≥ 0"), std::string::npos);
  Problem energy = p;
  energy.objective = Objective::kEnergy;
  EXPECT_FALSE(SolveCrossbarFrontier(energy, 1, ExactOptions0()).ok());
}

TEST(CrossbarFrontier, AStoppedSearchReportsBoundsNotOptimality) {
  // Out of time at once (the search dives for a first schedule): the curve holds schedules,
  // every bound stays below its makespan, and a step is optimal only where
  // its bound proves it.
  std::mt19937 rng(99);
  Instance inst = RandomInstance(rng, 14, TwoPus(5), true);
  Problem p{&inst.graph, &inst.costs, Objective::kLatency, std::nullopt};
  SolveOptions o = ExactOptions0();
  o.time_limit_s = 1e-6;
  auto f = SolveCrossbarFrontier(p, 1, o);
  ASSERT_TRUE(f.ok()) << f.status().message();
  for (const FrontierStep& s : f->steps) {
    EXPECT_LE(s.lower_bound_us, s.makespan_us + 1e-9);
    if (s.optimal) {
      EXPECT_NEAR(s.lower_bound_us, s.makespan_us, 1e-9 * std::max(1.0, s.makespan_us));
    }
    const std::optional<double> exact = ExactAt(p, 1, s.crossbars);
    ASSERT_TRUE(exact.has_value());
    EXPECT_GE(s.makespan_us, *exact - 1e-9);
    EXPECT_LE(s.lower_bound_us, *exact + 1e-9);
  }
  if (!f->complete) {
    EXPECT_NE(f->termination, Termination::kOptimal);
  }
}

// ---------------------------------------------------------------------------
// Zoo models through the application layer, with analytical CPU costs (a
// roofline CPU beside the paper's CIM) so that nothing is profiled.

const std::filesystem::path& TempDir() { return test_util::ScratchDir("hetplan_frontier_test_"); }
[[maybe_unused]] ::testing::Environment* const kCleanUp =
    ::testing::AddGlobalTestEnvironment(new test_util::RemoveAtExit(TempDir()));

std::string RooflinePlatform() { return test_util::WriteRooflineCimPlatform(TempDir()); }

class ZooFrontier : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooFrontier, EqualsTheExactMethodAtBreakpointsAndBetween) {
  const std::string model = std::string(HETPLAN_ZOO_DIR) + "/" + GetParam() + ".onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "zoo not built";
  PlanInputs in;
  in.model_path = model;
  in.platform = RooflinePlatform();
  auto pp = PrepareProblem(in);
  ASSERT_TRUE(pp.ok()) << pp.status().message();
  FrontierSpec spec;
  spec.options = ExactOptions0();
  spec.saturation = true;
  spec.min_crossbars_for_speedup = 1.5;
  auto out = PlanFrontier(pp->subject(), spec);
  ASSERT_TRUE(out.ok()) << out.status().message();
  const CrossbarFrontier& f = out->frontier;
  ASSERT_TRUE(f.complete);
  ASSERT_FALSE(f.steps.empty());
  EXPECT_EQ(out->schedules.size(), out->json["breakpoints"].size());
  for (const nlohmann::json& s : out->schedules) EXPECT_TRUE(ValidateScheduleJson(s).ok());
  // Budget 0: the CPU-only plan (the CIM holds nothing).
  EXPECT_EQ(f.steps.front().crossbars, 0);
  EXPECT_TRUE(Near(f.steps.front().makespan_us, out->cpu_only_us));
  // Against the exact method at the breakpoints, one below each, and the
  // middle of each step (at most 40 breakpoints, evenly spaced, to keep the
  // test short).
  const Problem problem{&pp->model.graph, &pp->costs, Objective::kLatency, std::nullopt};
  const size_t stride = std::max<size_t>(1, f.steps.size() / 40);
  int compared = 0;
  for (size_t i = 0; i < f.steps.size(); i += stride) {
    const int64_t lo = f.steps[i].crossbars;
    const int64_t hi = i + 1 < f.steps.size() ? f.steps[i + 1].crossbars - 1 : f.max_crossbars;
    for (int64_t b : {lo, lo - 1, (lo + hi) / 2}) {
      if (b < 0) continue;
      const std::optional<double> exact = ExactAt(problem, f.pu, b);
      ASSERT_TRUE(exact.has_value());
      EXPECT_TRUE(Near(*exact, *f.MakespanAt(b))) << GetParam() << " at " << b << ": exact " << *exact
                                                  << ", frontier " << *f.MakespanAt(b);
      ++compared;
    }
  }
  EXPECT_GE(compared, 3);
  // The inverse questions read off the same curve.
  const nlohmann::json& sat = out->json["saturation"];
  EXPECT_EQ(sat["crossbars"].get<int64_t>(), f.steps.back().crossbars);
  EXPECT_EQ(sat["status"], "optimal");
  const nlohmann::json& q = out->json["min_crossbars_for_speedup"];
  if (!q["crossbars"].is_null()) {
    const int64_t b = q["crossbars"].get<int64_t>();
    EXPECT_GE(out->cpu_only_us / *f.MakespanAt(b), 1.5 * (1 - 1e-12));
    if (b > 0) {
      EXPECT_LT(out->cpu_only_us / *f.MakespanAt(b - 1), 1.5);
    }
    EXPECT_EQ(q["status"], "optimal");
  } else {
    EXPECT_LT(out->cpu_only_us / f.steps.back().makespan_us, 1.5);
    EXPECT_EQ(q["status"], "unreachable");
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooFrontier, ::testing::Values("resnet18", "mobilenetv2"));

}  // namespace
}  // namespace hetplan
