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
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "hetplan/app/frontier.h"
#include "hetplan/solve/list_schedule.h"
#include "hetplan/solve/references.h"
#include "hetplan/solve/solver.h"
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
    EXPECT_NE(f->termination, Termination::kProved);
  }
  // The CPU runs every operator, using no crossbars: the curve starts at 0
  // however early the search stopped, no slower than the CPU-only plan.
  ASSERT_FALSE(f->steps.empty());
  EXPECT_EQ(f->steps.front().crossbars, 0);
  const std::optional<Schedule> cpu_only = SinglePuSchedule(p, 0);
  ASSERT_TRUE(cpu_only.has_value());
  EXPECT_LE(f->steps.front().makespan_us, cpu_only->makespan_us + 1e-9);
  for (size_t i = 1; i < f->steps.size(); ++i) EXPECT_LT(f->steps[i].makespan_us, f->steps[i - 1].makespan_us);
}

// ---------------------------------------------------------------------------
// The latency–energy front against brute force: every assignment that fits,
// its least makespan over every order and its energy; the non-dominated
// pairs are the front.

std::vector<std::pair<double, double>> BruteForceFront(const Problem& p) {
  std::vector<std::pair<double, double>> all;
  ForEachAssignment(p, [&](const std::vector<int>& a) {
    double e = 0;
    for (int v = 0; v < p.costs->num_ops(); ++v) e += *p.costs->energy_uj(v, a[v]);
    all.emplace_back(MinMakespan(p, a), e);
  });
  std::sort(all.begin(), all.end());
  std::vector<std::pair<double, double>> front;
  for (const auto& [m, e] : all) {
    if (!front.empty() && e >= front.back().second * (1 - 1e-9)) continue;  // dominated or equal energy
    // Within the walk's step (1e-6 of the makespan) two points are one: the
    // one with less energy stands for both.
    if (!front.empty() && m <= front.back().first * (1 + 1e-6)) front.pop_back();
    front.emplace_back(m, e);
  }
  return front;
}

TEST(LatencyEnergyFront, EqualsBruteForceOnRandomDags) {
  std::mt19937 rng(2525);
  int points = 0, tradeoffs = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 4 + trial % 4;
    Instance inst = RandomInstance(rng, n, trial % 3 == 0 ? ThreePus(3) : TwoPus(2 + trial % 4), trial % 2 == 0);
    // A CIM that costs more energy per µs than the CPU on some operators and
    // less on others: a front with more than one point.
    inst.costs.mutable_pu(CimIndex(inst.costs)).power_w = std::uniform_real_distribution<double>(1, 60)(rng);
    Problem p{&inst.graph, &inst.costs, Objective::kLatency, std::nullopt};
    const std::string what = "trial " + std::to_string(trial) + "\n" + Describe(inst);
    auto f = SolveLatencyEnergyFront(p, ExactOptions0());
    ASSERT_TRUE(f.ok()) << what << f.status().message();
    EXPECT_TRUE(f->complete) << what;
    EXPECT_TRUE(f->stopped.empty()) << what;
    const auto brute = BruteForceFront(p);
    ASSERT_EQ(f->points.size(), brute.size()) << what;
    for (size_t i = 0; i < brute.size(); ++i) {
      const EnergyPoint& pt = f->points[i];
      EXPECT_TRUE(Near(pt.makespan_us, brute[i].first)) << what << " point " << i << ": " << pt.makespan_us
                                                        << " vs " << brute[i].first;
      EXPECT_TRUE(Near(pt.energy_uj, brute[i].second)) << what << " point " << i << ": " << pt.energy_uj << " vs "
                                                       << brute[i].second;
      EXPECT_TRUE(pt.optimal) << what;
      if (pt.latency_cap_us) {
        EXPECT_LE(pt.makespan_us, *pt.latency_cap_us * (1 + 1e-9)) << what;
      }
      // Each point's schedule is valid with its own cap.
      Problem q = p;
      q.objective = Objective::kEnergy;
      q.latency_cap_us = pt.latency_cap_us;
      ExpectValid(q, pt.result);
    }
    EXPECT_TRUE(Near(f->points.front().makespan_us, BruteForceLatency(p))) << what;
    points += static_cast<int>(brute.size());
    tradeoffs += brute.size() > 1;
  }
  EXPECT_GT(tradeoffs, 10);  // the instances do trade latency for energy
  EXPECT_GT(points, 60);
}

TEST(LatencyEnergyFront, RefusesAPuWithoutPowerAndStopsAtMaxPoints) {
  std::mt19937 rng(8);
  Instance inst = RandomInstance(rng, 6, TwoPus(3), true);
  Problem p{&inst.graph, &inst.costs, Objective::kLatency, std::nullopt};
  CostModel no_power = inst.costs;
  no_power.mutable_pu(1).power_w.reset();
  Problem q = p;
  q.costs = &no_power;
  auto bad = SolveLatencyEnergyFront(q, ExactOptions0());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("no power_w"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(SolveLatencyEnergyFront(p, ExactOptions0(), 0).ok());
  // Find an instance with a front of ≥ 2 points, then stop it after one.
  for (int trial = 0; trial < 50; ++trial) {
    Instance t = RandomInstance(rng, 6, TwoPus(3), trial % 2 == 0);
    t.costs.mutable_pu(1).power_w = 30;
    Problem tp{&t.graph, &t.costs, Objective::kLatency, std::nullopt};
    auto full = SolveLatencyEnergyFront(tp, ExactOptions0());
    ASSERT_TRUE(full.ok());
    if (full->points.size() < 2) continue;
    auto one = SolveLatencyEnergyFront(tp, ExactOptions0(), 1);
    ASSERT_TRUE(one.ok());
    EXPECT_FALSE(one->complete);
    EXPECT_EQ(one->stopped, "max_points");
    ASSERT_EQ(one->points.size(), 1u);
    // The walk starts at the least energy: that point is on the full front.
    EXPECT_TRUE(Near(one->points[0].energy_uj, full->points.back().energy_uj));
    return;
  }
  FAIL() << "no instance with a two-point front";
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
  // Per breakpoint, the schedule file at its own budget, validated.
  size_t breakpoint_files = 0;
  for (const FrontierScheduleFile& file : out->files) {
    if (file.pointer.rfind("/breakpoints/", 0) != 0) continue;
    ++breakpoint_files;
    EXPECT_TRUE(ValidateScheduleJson(file.file).ok()) << file.name;
  }
  EXPECT_EQ(breakpoint_files, out->json["breakpoints"].size());
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
  // A makespan target halfway down the curve: the first budget that reaches it.
  const double z = (f.steps.front().makespan_us + f.steps.back().makespan_us) / 2;
  spec.min_crossbars_for_makespan_us = z;
  auto again = PlanFrontier(pp->subject(), spec);
  ASSERT_TRUE(again.ok()) << again.status().message();
  const nlohmann::json& m = again->json["min_crossbars_for_makespan"];
  ASSERT_FALSE(m["crossbars"].is_null()) << m.dump();
  const int64_t b = m["crossbars"].get<int64_t>();
  EXPECT_LE(*f.MakespanAt(b), z);
  ASSERT_GT(b, 0);
  EXPECT_GT(*f.MakespanAt(b - 1), z);
  EXPECT_EQ(m["status"], "optimal");
  EXPECT_EQ(m["target_makespan_us"].get<double>(), z);
}

// A second axis (MVM latency): each curve equals the frontier of the
// platform with that value set; the Pareto front's points each equal an
// energy-objective solve of the paper's MIP with the same latency cap; the
// MVM-latency answer brackets partition's speedup.
TEST(ZooFrontierAxis, CurvesParetoAndMvmQuestionAgreeWithSeparateSolves) {
  const std::string model = std::string(HETPLAN_ZOO_DIR) + "/resnet18.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "zoo not built";
  PlanInputs in;
  in.model_path = model;
  in.platform = RooflinePlatform();
  in.overrides = {"cpu.power_w=5", "cim.power_w=40"};
  FrontierSpec spec;
  spec.options = ExactOptions0();
  spec.axis = FrontierAxis{"cim.mvm_latency_ns", {"50", "1000"}};
  spec.pareto = true;
  auto out = PlanFrontiers(in, spec);
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->json["curves"].size(), 2u);
  for (size_t c = 0; c < 2; ++c) {
    const nlohmann::json& curve = out->json["curves"][c];
    PlanInputs one = in;
    one.overrides.push_back(c == 0 ? "cim.mvm_latency_ns=50" : "cim.mvm_latency_ns=1000");
    auto pp = PrepareProblem(one);
    ASSERT_TRUE(pp.ok()) << pp.status().message();
    FrontierSpec plain;
    plain.options = ExactOptions0();
    auto single = PlanFrontier(pp->subject(), plain);
    ASSERT_TRUE(single.ok()) << single.status().message();
    ASSERT_EQ(curve["breakpoints"].size(), single->json["breakpoints"].size());
    for (size_t i = 0; i < curve["breakpoints"].size(); ++i) {
      EXPECT_EQ(curve["breakpoints"][i]["crossbars"], single->json["breakpoints"][i]["crossbars"]);
      EXPECT_TRUE(Near(curve["breakpoints"][i]["makespan_us"].get<double>(),
                       single->json["breakpoints"][i]["makespan_us"].get<double>()));
    }
    // Pareto points: an energy solve with the same cap by the paper's MIP.
    const nlohmann::json& pf = curve["pareto"];
    ASSERT_FALSE(pf["points"].empty());
    EXPECT_TRUE(pf["complete"].get<bool>());
    double last_e = std::numeric_limits<double>::infinity();
    for (const nlohmann::json& pt : pf["points"]) {
      EXPECT_LT(pt["energy_uj"].get<double>(), last_e);
      last_e = pt["energy_uj"].get<double>();
      Problem q{&pp->model.graph, &pp->costs, Objective::kEnergy, std::nullopt};
      if (!pt["latency_cap_us"].is_null()) q.latency_cap_us = pt["latency_cap_us"].get<double>();
      SolveOptions o = ExactOptions0();
      auto r = Solve("mip", q, o);
      ASSERT_TRUE(r.ok()) << r.status().message();
      ASSERT_EQ(r->status, SolveStatus::kOptimal);
      EXPECT_TRUE(Near(r->objective, pt["energy_uj"].get<double>())) << r->objective << " vs " << pt.dump();
    }
    // The fastest point is the latency optimum at the platform's budget.
    EXPECT_TRUE(Near(pf["points"][0]["makespan_us"].get<double>(), *single->frontier.MakespanAt(100)));
  }
  int pareto_files = 0;
  for (const FrontierScheduleFile& f : out->files) {
    EXPECT_TRUE(ValidateScheduleJson(f.file).ok()) << f.name;
    pareto_files += f.name.find("/pareto_") != std::string::npos;
  }
  EXPECT_EQ(pareto_files,
            static_cast<int>(out->json["curves"][0]["pareto"]["points"].size() +
                             out->json["curves"][1]["pareto"]["points"].size()));

  // The largest MVM latency at which the plan at 100 crossbars is still 1.5x faster.
  FrontierSpec mvm;
  mvm.options = ExactOptions0();
  mvm.max_mvm_latency_for_speedup = 1.5;
  PlanInputs base = in;
  auto m = PlanFrontiers(base, mvm);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const nlohmann::json& a = m->json["max_mvm_latency_for_speedup"];
  ASSERT_EQ(a["status"], "optimal") << a.dump();
  auto speedup_at = [&](double t) {
    PlanInputs at = in;
    at.overrides.push_back("cim.mvm_latency_ns=" + std::to_string(t));
    auto pp = PrepareProblem(at);
    EXPECT_TRUE(pp.ok());
    const Problem pr{&pp->model.graph, &pp->costs, Objective::kLatency, std::nullopt};
    auto r = Solve("exact", pr, ExactOptions0());
    EXPECT_TRUE(r.ok());
    return ComputeReferences(pr).values.at("cpu_only_us") / r->objective;
  };
  const double t = a["mvm_latency_ns"].get<double>(), above = a["not_reached_ns"].get<double>();
  EXPECT_LE(above - t, 1e-3 * t * (1 + 1e-9));
  EXPECT_GE(speedup_at(t), 1.5 * (1 - 1e-9));
  EXPECT_LT(speedup_at(above), 1.5);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooFrontier, ::testing::Values("resnet18", "mobilenetv2"));

}  // namespace
}  // namespace hetplan
