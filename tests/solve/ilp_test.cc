// The paper's MIP on CBC ("mip") against brute force on many small random instances, its
// edge cases and options, and the solver facade. Every schedule a test gets
// is checked with the independent validator.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hetplan/graph/algorithms.h"
#include "hetplan/solve/list_schedule.h"
#include "hetplan/validate/validator.h"
#include "hetplan/solve/solver.h"
#include "solve/ilp_test_support.h"

namespace hetplan {
namespace {

using namespace ilp_test;  // NOLINT(google-build-using-namespace): the shared test helpers

// These tests pin the paper's formulation (the "strong" one has its own
// tests in ilp_formulations_test.cc), whatever the default.
TestOptions Paper() {
  TestOptions o;
  o.solver = "mip";
  return o;
}

// The paper's MIP on one thread, to a zero gap, with a minute to prove it.
TestOptions PaperToZeroGap() {
  TestOptions o = Paper();
  o.threads = 1;
  o.relative_gap = 0;
  o.time_limit_s = 60;
  return o;
}

// ---------------------------------------------------------------------------
// Facade.

TEST(SolverRegistry, ExactAndMipAreRegisteredAndIlpIsAnAlias) {
  std::vector<std::string> names = SolverNames();
  for (const char* n : {"exact", "mip", "map", "map_parallel", "map_concurrent"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  }
  EXPECT_EQ(std::find(names.begin(), names.end(), "ilp"), names.end());  // an alias, not listed
  ASSERT_NE(FindSolver("exact"), nullptr);
  EXPECT_EQ(FindSolver("exact")->info().name, "exact");
  EXPECT_EQ(FindSolver("ilp"), FindSolver("exact"));
  EXPECT_EQ(FindSolver("pair:map"), FindSolver("map_concurrent"));
  auto old = ResolveSolverName("ilp");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->canonical, "exact");
  ASSERT_TRUE(old->notice.has_value());
  EXPECT_NE(old->notice->find("exact"), std::string::npos);
  EXPECT_FALSE(ResolveSolverName("mip")->notice.has_value());
  EXPECT_EQ(FindSolver("no-such-solver"), nullptr);
  EXPECT_EQ(SolverNames(), names);  // stable
}

TEST(SolverRegistry, UnknownSolverIsNotFound) {
  Instance inst{MakeGraph(1, {}), CostModel(1, {Serial("cpu")}, 0)};
  inst.costs.set_latency(0, 0, 1);
  auto r = Solve("nope", inst.problem(), SolveOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(r.status().message().find("exact"), std::string::npos) << r.status().message();
}

TEST(SolverRegistry, NamesRoundTrip) {
  EXPECT_EQ(ToString(Objective::kLatency), "latency");
  EXPECT_EQ(ToString(Objective::kEnergy), "energy");
  EXPECT_EQ(*ParseObjective("latency"), Objective::kLatency);
  EXPECT_EQ(*ParseObjective("energy"), Objective::kEnergy);
  EXPECT_FALSE(ParseObjective("speed").ok());
  EXPECT_EQ(ToString(SolveStatus::kOptimal), "optimal");
  EXPECT_EQ(ToString(SolveStatus::kFeasible), "feasible");
  EXPECT_EQ(ToString(SolveStatus::kInfeasible), "infeasible");
  EXPECT_EQ(ToString(SolveStatus::kNoSolution), "no_solution");
  EXPECT_EQ(ToString(SolveStatus::kHeuristic), "heuristic");
}

TEST(ValidateProblem, OperatorSupportedNowhereIsNamed) {
  Instance inst{MakeGraph(2, {{0, 1}}), CostModel(2, TwoPus(10), 1)};
  inst.costs.set_latency(0, 0, 1);
  Status st = ValidateProblem(inst.problem());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kInfeasible);
  EXPECT_NE(st.message().find("'op1'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("cpu: unsupported"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("cim: unsupported"), std::string::npos) << st.message();
  auto r = Solve("mip", inst.problem(), SolveOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInfeasible);
}

TEST(ValidateProblem, OperatorTooBigForTheOnlyPuIsInfeasible) {
  Instance inst{MakeGraph(1, {}), CostModel(1, TwoPus(3), 0)};
  inst.costs.set_latency(0, 1, 1);
  inst.costs.set_crossbars(0, 1, 5);
  Status st = ValidateProblem(inst.problem());
  EXPECT_EQ(st.code(), ErrorCode::kInfeasible);
  EXPECT_NE(st.message().find("needs 5 crossbars, capacity 3"), std::string::npos) << st.message();
}

TEST(ValidateProblem, RejectsBadCostsAndSizes) {
  Instance inst{MakeGraph(2, {{0, 1}}), CostModel(2, TwoPus(10), 1)};
  inst.costs.set_latency(0, 0, 1);
  inst.costs.set_latency(1, 0, 1);
  EXPECT_TRUE(ValidateProblem(inst.problem()).ok());
  inst.costs.set_latency(1, 0, -1);
  EXPECT_EQ(ValidateProblem(inst.problem()).code(), ErrorCode::kInvalidArgument);
  inst.costs.set_latency(1, 0, std::numeric_limits<double>::infinity());
  EXPECT_EQ(ValidateProblem(inst.problem()).code(), ErrorCode::kInvalidArgument);
  inst.costs.set_latency(1, 0, 1);
  inst.costs.set_transfer(0, 0, 1, -2);
  EXPECT_EQ(ValidateProblem(inst.problem()).code(), ErrorCode::kInvalidArgument);
  inst.costs.set_transfer(0, 0, 1, 2);
  inst.costs.mutable_pu(1).capacity = -1;
  EXPECT_EQ(ValidateProblem(inst.problem()).code(), ErrorCode::kInvalidArgument);
  inst.costs.mutable_pu(1).capacity = 10;
  CostModel wrong(3, TwoPus(10), 1);
  Problem p = inst.problem();
  p.costs = &wrong;
  EXPECT_EQ(ValidateProblem(p).code(), ErrorCode::kInvalidArgument);
  p.costs = nullptr;
  EXPECT_EQ(ValidateProblem(p).code(), ErrorCode::kInvalidArgument);
}

TEST(ScheduleEnergy, SumsLatencyTimesPower) {
  Instance inst{MakeGraph(2, {{0, 1}}), CostModel(2, TwoPus(10), 1)};
  inst.costs.set_latency(0, 0, 4);
  inst.costs.set_latency(1, 1, 3);
  Schedule s = ListSchedule(inst.problem(), {0, 1});
  ASSERT_TRUE(s.energy_uj.has_value());
  EXPECT_DOUBLE_EQ(*s.energy_uj, 4 * 5.0 + 3 * 1.0);
  inst.costs.mutable_pu(1).power_w.reset();
  EXPECT_FALSE(ScheduleEnergy(inst.problem(), s).has_value());
}

// ---------------------------------------------------------------------------
// Hand-worked instances.

TEST(Ilp, DiamondRunsBranchesInParallelOnCpuAndCim) {
  // 0 → {1, 2} → 3. Both branches take 10 µs on the CPU; branch 2 takes 10 µs
  // on the CIM with transfers of 1 µs each way: 1 + 10 ‖ 1 + 10 + 1.
  Instance inst{MakeGraph(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}}), CostModel(4, TwoPus(10), 4)};
  CostModel& c = inst.costs;
  for (int v = 0; v < 4; ++v) c.set_latency(v, 0, v == 1 || v == 2 ? 10 : 1);
  c.set_latency(2, 1, 10);
  c.set_crossbars(2, 1, 4);
  for (int e = 0; e < 4; ++e) {
    c.set_transfer(e, 0, 1, 1);
    c.set_transfer(e, 1, 0, 1);
  }
  SolveResult r = MustSolve(inst.problem(), PaperToZeroGap());
  EXPECT_EQ(r.status, SolveStatus::kOptimal);
  EXPECT_EQ(r.solver, "mip");
  EXPECT_EQ(r.formulation, "paper");
  EXPECT_EQ(r.termination, Termination::kProved);
  ExpectValid(inst.problem(), r);
  EXPECT_DOUBLE_EQ(r.objective, 1 + 12 + 1);  // cpu-only: 1 + 10 + 10 + 1 = 22
  EXPECT_EQ(r.schedule->ops[2].device, 1);
  // Eq. 13: Σ max latency + Σ max transfer = (1 + 10 + 10 + 1) + 4 · 1 (only edges touching op 2 can transfer).
  ASSERT_TRUE(r.mip.has_value());
  EXPECT_DOUBLE_EQ(r.mip->big_m, 22 + 2);
  EXPECT_GT(r.mip->variables, 0);
  EXPECT_GT(r.mip->constraints, 0);
  EXPECT_DOUBLE_EQ(r.gap, 0);
  EXPECT_GT(r.seconds, 0);
}

TEST(Ilp, CapacityZeroPutsEverythingOnTheCpu) {
  std::mt19937 rng(7);
  Instance inst = RandomInstance(rng, 7, TwoPus(0), true);
  // Make the CIM attractive: it would win if it had crossbars.
  for (int v = 0; v < 7; ++v) {
    if (inst.costs.supported(v, 1)) inst.costs.set_latency(v, 1, 0.5);
  }
  SolveResult r = MustSolve(inst.problem(), PaperToZeroGap());
  EXPECT_EQ(r.status, SolveStatus::kOptimal);
  ExpectValid(inst.problem(), r);
  double sum = 0;
  for (int v = 0; v < 7; ++v) {
    EXPECT_EQ(r.schedule->ops[v].device, 0);
    sum += inst.costs.latency_us(v, 0);
  }
  EXPECT_DOUBLE_EQ(r.objective, sum);
}

TEST(Ilp, SingleOperator) {
  Instance inst{MakeGraph(1, {}), CostModel(1, TwoPus(4), 0)};
  inst.costs.set_latency(0, 0, 8);
  inst.costs.set_latency(0, 1, 3);
  inst.costs.set_crossbars(0, 1, 4);
  SolveResult r = MustSolve(inst.problem(), PaperToZeroGap());
  EXPECT_EQ(r.status, SolveStatus::kOptimal);
  ExpectValid(inst.problem(), r);
  EXPECT_DOUBLE_EQ(r.objective, 3);
  EXPECT_EQ(r.schedule->ops[0].device, 1);
  EXPECT_DOUBLE_EQ(r.schedule->ops[0].start_us, 0);
}

TEST(Ilp, EmptyGraph) {
  auto g = OpGraph::Create("empty", {}, {});
  if (!g.ok()) GTEST_SKIP() << "OpGraph rejects empty graphs: " << g.status().message();
  CostModel c(0, TwoPus(4), 0);
  Problem p;
  p.graph = &*g;
  p.costs = &c;
  SolveResult r = MustSolve(p, PaperToZeroGap());
  EXPECT_EQ(r.status, SolveStatus::kOptimal);
  ASSERT_TRUE(r.schedule.has_value());
  EXPECT_TRUE(r.schedule->ops.empty());
  EXPECT_EQ(r.objective, 0);
}

TEST(Ilp, NothingSupportedOnTheCim) {
  Instance inst{MakeGraph(4, {{0, 1}, {0, 2}, {2, 3}}), CostModel(4, TwoPus(100), 3)};
  for (int v = 0; v < 4; ++v) inst.costs.set_latency(v, 0, 1 + v);
  SolveResult r = MustSolve(inst.problem(), PaperToZeroGap());
  EXPECT_EQ(r.status, SolveStatus::kOptimal);
  ExpectValid(inst.problem(), r);
  EXPECT_DOUBLE_EQ(r.objective, 1 + 2 + 3 + 4);
  for (const ScheduledOp& op : r.schedule->ops) EXPECT_EQ(op.device, 0);
}

TEST(Ilp, CapacityThatCannotHoldTheCimOnlyOperatorsIsInfeasible) {
  Instance inst{MakeGraph(2, {}), CostModel(2, TwoPus(10), 0)};
  for (int v = 0; v < 2; ++v) {
    inst.costs.set_latency(v, 1, 1);
    inst.costs.set_crossbars(v, 1, 6);  // each fits alone, not both
  }
  for (bool warm : {true, false}) {
    TestOptions o = PaperToZeroGap();
    o.warm_start = warm;
    SolveResult r = MustSolve(inst.problem(), o);
    EXPECT_EQ(r.status, SolveStatus::kInfeasible);
    EXPECT_FALSE(r.schedule.has_value());
  }
}

TEST(Ilp, AsymmetricTransfersUseTheDirectionTaken) {
  // 0 (cpu only) → 1 → 2 (cpu only). Op 1 is faster on the CIM; going there
  // costs 1 µs, coming back 20 µs, so it stays on the CPU.
  Instance inst{MakeGraph(3, {{0, 1}, {1, 2}}), CostModel(3, TwoPus(10), 2)};
  CostModel& c = inst.costs;
  for (int v = 0; v < 3; ++v) c.set_latency(v, 0, 10);
  c.set_latency(1, 1, 2);
  c.set_crossbars(1, 1, 1);
  for (int e = 0; e < 2; ++e) {
    c.set_transfer(e, 0, 1, 1);
    c.set_transfer(e, 1, 0, 20);
  }
  SolveResult r = MustSolve(inst.problem(), PaperToZeroGap());
  ExpectValid(inst.problem(), r);
  EXPECT_DOUBLE_EQ(r.objective, 30);
  c.set_transfer(1, 1, 0, 3);  // now the round trip pays: 10 + 1 + 2 + 3 + 10 = 26
  r = MustSolve(inst.problem(), PaperToZeroGap());
  ExpectValid(inst.problem(), r);
  EXPECT_DOUBLE_EQ(r.objective, 26);
}

TEST(Ilp, ZeroDurationOperatorTiedWithAnotherStartIsRetimedInOrder) {
  // CBC put op 3 (0 µs on the CPU) a rounding error after the start of op 0
  // on the CPU; re-timing by start time alone then ran op 3 after op 0 and
  // delayed its CIM successor op 2: 157 µs returned as "optimal" for 133.
  Instance inst{MakeGraph(5, {{4, 0}, {4, 3}, {4, 1}, {3, 2}}), CostModel(5, TwoPus(15), 4)};
  CostModel& c = inst.costs;
  const double cpu[] = {48, 66, 95, 0, 68}, cim[] = {48, kNaN, 18, 0, 15};
  const int64_t xb[] = {6, 0, 2, 7, 8};
  for (int v = 0; v < 5; ++v) {
    c.set_latency(v, 0, cpu[v]);
    if (!std::isnan(cim[v])) {
      c.set_latency(v, 1, cim[v]);
      c.set_crossbars(v, 1, xb[v]);
    }
  }
  const double to_cim[] = {22.25, 27.25, 18, 6}, to_cpu[] = {14, 10, 4, 9};
  for (int e = 0; e < 4; ++e) {
    const Edge& edge = inst.graph.edges()[e];
    const int k = edge.from == 4 ? (edge.to == 0 ? 0 : edge.to == 3 ? 1 : 2) : 3;
    c.set_transfer(e, 0, 1, to_cim[k]);
    c.set_transfer(e, 1, 0, to_cpu[k]);
  }
  ASSERT_EQ(BruteForceLatency(inst.problem()), 133);
  for (bool warm : {true, false}) {
    TestOptions o = PaperToZeroGap();
    o.warm_start = warm;
    SolveResult r = MustSolve(inst.problem(), o);
    EXPECT_EQ(r.status, SolveStatus::kOptimal) << Notes(r);
    ExpectValid(inst.problem(), r);
    EXPECT_DOUBLE_EQ(r.objective, 133) << Notes(r);
  }
}

// ---------------------------------------------------------------------------
// Random instances against brute force.

TEST(Ilp, MatchesBruteForceOnRandomCpuCimInstances) {
  std::mt19937 rng(20240601);
  int optimal = 0, uses_cim = 0, beats_cpu = 0, overlaps = 0;
  for (int i = 0; i < 300; ++i) {
    const int n = 1 + static_cast<int>(rng() % 8);
    const int64_t capacity = static_cast<int64_t>(rng() % 21);
    Instance inst = RandomInstance(rng, n, TwoPus(capacity), /*symmetric=*/i % 4 != 3);
    const Problem p = inst.problem();
    const double brute = BruteForceLatency(p);
    TestOptions o = PaperToZeroGap();
    o.warm_start = i % 2 == 0;
    SolveResult r = MustSolve(p, o);
    ASSERT_EQ(r.status, SolveStatus::kOptimal) << "instance " << i << ": " << Notes(r) << "\n" << Describe(inst);
    ExpectValid(p, r);
    EXPECT_TRUE(Near(r.objective, brute))
        << "instance " << i << ": ilp " << r.objective << " brute force " << brute << "\n"
        << Describe(inst);
    EXPECT_TRUE(Near(r.bound, r.objective)) << "instance " << i;
    optimal += r.status == SolveStatus::kOptimal;
    // How demanding the instances are: CIM used, better than CPU only, CPU and CIM overlapping in time.
    const Schedule& s = *r.schedule;
    bool cim = false, overlap = false;
    for (int v = 0; v < n; ++v) {
      cim = cim || s.ops[v].device == 1;
      for (int w = 0; w < n; ++w) {
        overlap = overlap || (s.ops[v].device == 0 && s.ops[w].device == 1 && s.ops[v].start_us < s.ops[w].finish_us &&
                              s.ops[w].start_us < s.ops[v].finish_us);
      }
    }
    uses_cim += cim;
    overlaps += overlap;
    beats_cpu += r.objective < ListSchedule(p, std::vector<int>(n, 0)).makespan_us - 1e-9;
  }
  EXPECT_EQ(optimal, 300);
  EXPECT_GT(uses_cim, 100);
  EXPECT_GT(beats_cpu, 100);
  EXPECT_GT(overlaps, 30);
  RecordProperty("uses_cim", uses_cim);
  RecordProperty("beats_cpu", beats_cpu);
  RecordProperty("overlaps", overlaps);
}

TEST(Ilp, MatchesBruteForceOnRandomThreePuInstances) {
  std::mt19937 rng(424242);
  for (int i = 0; i < 100; ++i) {
    const int n = 1 + static_cast<int>(rng() % 7);
    const int64_t capacity = static_cast<int64_t>(rng() % 21);
    Instance inst = RandomInstance(rng, n, ThreePus(capacity), /*symmetric=*/i % 3 != 0);
    const Problem p = inst.problem();
    const double brute = BruteForceLatency(p);
    TestOptions o = PaperToZeroGap();
    o.warm_start = i % 2 == 1;
    SolveResult r = MustSolve(p, o);
    ASSERT_EQ(r.status, SolveStatus::kOptimal) << "instance " << i << ": " << Notes(r) << "\n" << Describe(inst);
    ExpectValid(p, r);
    EXPECT_TRUE(Near(r.objective, brute))
        << "instance " << i << ": ilp " << r.objective << " brute force " << brute << "\n"
        << Describe(inst);
  }
}

// Solves `inst` for energy with the paper's MIP, capped between the fastest
// and the all-CPU schedule when `cap`, and checks the result against brute
// force; returns the schedule.
Schedule ExpectEnergyMatchesBruteForce(const Instance& inst, bool cap, int i) {
  Problem p = inst.problem();
  p.objective = Objective::kEnergy;
  if (cap) {
    const double fastest = BruteForceLatency(p);
    Schedule cpu = ListSchedule(p, std::vector<int>(static_cast<size_t>(inst.graph.size()), 0));
    p.latency_cap_us = fastest + 0.5 * (cpu.makespan_us - fastest);
  }
  const double brute = BruteForceEnergy(p);
  SolveResult r = MustSolve(p, PaperToZeroGap());
  EXPECT_EQ(r.status, SolveStatus::kOptimal) << "instance " << i << ": " << Notes(r) << "\n" << Describe(inst);
  if (!r.schedule) return {};
  ExpectValid(p, r);
  EXPECT_TRUE(Near(r.objective, brute))
      << "instance " << i << ": ilp " << r.objective << " brute force " << brute << "\n"
      << Describe(inst);
  EXPECT_TRUE(r.schedule->energy_uj && Near(*r.schedule->energy_uj, brute)) << "instance " << i;
  return *r.schedule;
}

TEST(Ilp, EnergyMatchesBruteForce) {
  std::mt19937 rng(99);
  for (int i = 0; i < 40; ++i) {
    const int n = 1 + static_cast<int>(rng() % 6);
    Instance inst = RandomInstance(rng, n, i % 2 ? ThreePus(rng() % 16) : TwoPus(rng() % 16), true);
    ExpectEnergyMatchesBruteForce(inst, i % 4 == 3, i);
  }
}

// An operator's own energy on a PU (a CIM circuit's per-MVM energies, issue
// 44) beside power × time: the paper's MIP (the energy objective of `exact`
// too), its warm start and greedy minimise the sum, and the MIP equals brute
// force, with and without a latency cap.
TEST(Ilp, EnergyWithOperatorEnergiesMatchesBruteForce) {
  std::mt19937 rng(4444);
  std::uniform_real_distribution<double> uj(0.0, 300.0);
  int cim_chosen = 0;
  for (int i = 0; i < 40; ++i) {
    const int n = 1 + static_cast<int>(rng() % 6);
    Instance inst = RandomInstance(rng, n, TwoPus(static_cast<int64_t>(rng() % 16)), true);
    const int cim = 1;
    inst.costs.mutable_pu(cim).power_w = i % 2 ? 0.0 : 0.5;  // static power, or none beyond the MVMs
    for (int v = 0; v < n; ++v) {
      if (inst.costs.supported(v, cim)) inst.costs.set_op_energy(v, cim, uj(rng));
    }
    const Schedule s = ExpectEnergyMatchesBruteForce(inst, i % 4 == 3, i);
    for (const ScheduledOp& op : s.ops) cim_chosen += op.device == cim ? 1 : 0;
  }
  EXPECT_GT(cim_chosen, 10);  // the operator energies decide, not only the powers
}

TEST(Ilp, EnergyCapBelowTheFastestScheduleIsInfeasible) {
  std::mt19937 rng(5);
  Instance inst = RandomInstance(rng, 5, TwoPus(10), true);
  Problem p = inst.problem();
  p.objective = Objective::kEnergy;
  p.latency_cap_us = 0.5 * BruteForceLatency(p);
  SolveResult r = MustSolve(p, PaperToZeroGap());
  EXPECT_EQ(r.status, SolveStatus::kInfeasible);
}

TEST(Ilp, EnergyNeedsThePowerOfEveryUsablePu) {
  Instance inst{MakeGraph(2, {{0, 1}}), CostModel(2, {Serial("cpu", 5.0), Spatial("cim", 10)}, 1)};
  inst.costs.set_latency(0, 0, 1);
  inst.costs.set_latency(1, 0, 1);
  inst.costs.set_latency(1, 1, 1);
  inst.costs.set_crossbars(1, 1, 1);
  Problem p = inst.problem();
  p.objective = Objective::kEnergy;
  auto r = Solve("mip", p, PaperToZeroGap());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("'cim'"), std::string::npos) << r.status().message();
}

// ---------------------------------------------------------------------------
// Options.

// A wide instance with many parallel pairs: hard enough that CBC cannot
// finish in a few milliseconds.
Instance HardInstance() {
  std::mt19937 rng(3);
  const int n = 36;
  std::vector<std::pair<int, int>> edges;
  for (int v = 1; v < n; ++v) {
    if (rng() % 3 == 0) edges.emplace_back(static_cast<int>(rng() % v), v);
  }
  Instance inst{MakeGraph(n, edges), CostModel()};
  inst.costs = CostModel(n, ThreePus(40), static_cast<int>(inst.graph.edges().size()));
  CostModel& c = inst.costs;
  for (int v = 0; v < n; ++v) {
    c.set_latency(v, 0, 10 + rng() % 90);
    c.set_latency(v, 1, 10 + rng() % 90);
    if (rng() % 2) {
      c.set_latency(v, 2, 5 + rng() % 40);
      c.set_crossbars(v, 2, 1 + rng() % 8);
    }
  }
  for (int e = 0; e < c.num_edges(); ++e) {
    for (int p = 0; p < 3; ++p) {
      for (int q = 0; q < 3; ++q) {
        if (p != q) c.set_transfer(e, p, q, 1 + rng() % 10);
      }
    }
  }
  return inst;
}

TEST(Ilp, TinyTimeLimitNeverClaimsOptimalityWithoutTheGap) {
  Instance inst = HardInstance();
  for (bool warm : {true, false}) {
    TestOptions o = Paper();
    o.threads = 1;
    o.time_limit_s = 0.05;
    o.warm_start = warm;
    const auto t0 = std::chrono::steady_clock::now();
    SolveResult r = MustSolve(inst.problem(), o);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(wall, 10.0);
    EXPECT_GT(r.seconds, 0);
    if (r.status == SolveStatus::kOptimal) {
      EXPECT_LE(r.gap, o.relative_gap) << "claims optimality with gap " << r.gap;
    } else {
      EXPECT_TRUE(r.status == SolveStatus::kFeasible || r.status == SolveStatus::kNoSolution) << ToString(r.status);
    }
    if (warm) {
      // The warm start is an incumbent from the start.
      ASSERT_TRUE(r.schedule.has_value());
      EXPECT_NE(r.status, SolveStatus::kNoSolution);
    }
    if (r.schedule) {
      ExpectValid(inst.problem(), r);
      if (!std::isnan(r.gap)) {
        EXPECT_GE(r.gap, 0);
      }
    }
  }
}

// CBC 2.10.8 crashed or lost its incumbent when a time limit ended the search
// right after a MIP start with preprocessing on; sweep the limit across that window.
TEST(Ilp, TimeLimitSweepKeepsAnIncumbentAndNeverCrashes) {
  Instance inst = HardInstance();
  for (double limit : {0.001, 0.005, 0.01, 0.02, 0.04, 0.08}) {
    for (bool warm : {true, false}) {
      TestOptions o = Paper();
      o.threads = 1;
      o.time_limit_s = limit;
      o.warm_start = warm;
      SolveResult r = MustSolve(inst.problem(), o);
      EXPECT_NE(r.status, SolveStatus::kInfeasible) << "limit " << limit << ": " << Notes(r);
      if (warm) {
        EXPECT_EQ(r.status, SolveStatus::kFeasible) << "limit " << limit << ": " << Notes(r);
      }
      if (r.schedule) ExpectValid(inst.problem(), r);
    }
  }
}

TEST(Ilp, ThreadsAgreeWithOneThread) {
  std::mt19937 rng(11);
  Instance inst = RandomInstance(rng, 8, ThreePus(12), true);
  TestOptions one = PaperToZeroGap();
  TestOptions two = PaperToZeroGap();
  two.threads = 2;
  SolveResult a = MustSolve(inst.problem(), one);
  SolveResult b = MustSolve(inst.problem(), two);
  EXPECT_EQ(a.status, SolveStatus::kOptimal);
  EXPECT_EQ(b.status, SolveStatus::kOptimal);
  ExpectValid(inst.problem(), b);
  EXPECT_TRUE(Near(a.objective, b.objective)) << a.objective << " vs " << b.objective;
  TestOptions all = PaperToZeroGap();
  all.threads = 0;  // every core
  SolveResult c = MustSolve(inst.problem(), all);
  EXPECT_TRUE(Near(a.objective, c.objective));
}

TEST(Ilp, ThreadedSearchIsRepeatable) {
  std::mt19937 rng(29);
  Instance inst = RandomInstance(rng, 12, ThreePus(15), false);
  TestOptions o = PaperToZeroGap();
  o.threads = 2;
  SolveResult a = MustSolve(inst.problem(), o);
  SolveResult b = MustSolve(inst.problem(), o);
  ASSERT_TRUE(a.schedule && b.schedule);
  EXPECT_EQ(a.status, SolveStatus::kOptimal);
  for (int v = 0; v < inst.graph.size(); ++v) {
    EXPECT_EQ(a.schedule->ops[v].device, b.schedule->ops[v].device) << v;
    EXPECT_EQ(a.schedule->ops[v].start_us, b.schedule->ops[v].start_us) << v;
  }
}

TEST(Ilp, WritesLpAndMpsExactlyWhereAsked) {
  std::mt19937 rng(13);
  Instance inst = RandomInstance(rng, 5, TwoPus(6), true);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "hetplan_ilp_test_export";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  TestOptions o = PaperToZeroGap();
  o.mip.write_lp = (dir / "model.lp").string();
  o.mip.write_mps = (dir / "model").string();  // no extension: nothing may be appended
  SolveResult r = MustSolve(inst.problem(), o);
  EXPECT_EQ(r.status, SolveStatus::kOptimal);
  ASSERT_TRUE(std::filesystem::exists(dir / "model.lp"));
  ASSERT_TRUE(std::filesystem::exists(dir / "model"));
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 2);
  auto slurp = [](const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const std::string lp = slurp(dir / "model.lp"), mps = slurp(dir / "model");
  EXPECT_NE(lp.find("Minimize"), std::string::npos);
  EXPECT_NE(lp.find("x_0_0"), std::string::npos);
  EXPECT_NE(lp.find("assign_0"), std::string::npos);
  EXPECT_NE(mps.find("ROWS"), std::string::npos);
  EXPECT_NE(mps.find("x_0_0"), std::string::npos);

  TestOptions bad = PaperToZeroGap();
  bad.mip.write_lp = (dir / "missing-folder" / "model.lp").string();
  auto err = Solve(bad.solver, inst.problem(), bad);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.status().code(), ErrorCode::kIoError);
  std::filesystem::remove_all(dir);
}

TEST(Ilp, SilentOnStdoutUnlessLogging) {
  Instance inst = HardInstance();
  TestOptions o = Paper();
  o.threads = 1;
  o.time_limit_s = 0.2;
  testing::internal::CaptureStdout();
  SolveResult r = MustSolve(inst.problem(), o);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out, "");
  EXPECT_TRUE(r.schedule.has_value());
}

TEST(Ilp, LogGoesToStderrOnly) {
  std::mt19937 rng(17);
  Instance inst = RandomInstance(rng, 6, TwoPus(8), true);
  for (const MipBackendInfo& backend : ListMipBackends()) {
    TestOptions o = PaperToZeroGap();
    o.log = true;
    o.mip.backend = backend.backend;
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    SolveResult r = MustSolve(inst.problem(), o);
    const std::string out = testing::internal::GetCapturedStdout();
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(out, "") << backend.version;
    EXPECT_NE(err.find(backend.backend == MipBackend::kCbc ? "CBC" : "HiGHS"), std::string::npos) << err;
    EXPECT_EQ(r.status, SolveStatus::kOptimal);
  }
}

TEST(Ilp, ConcurrentSolvesAgreeWithSequentialOnes) {
  // CBC's driver keeps global state; the backend serialises it.
  std::mt19937 rng(23);
  std::vector<Instance> instances;
  instances.reserve(8);
  for (int i = 0; i < 8; ++i) instances.push_back(RandomInstance(rng, 7, TwoPus(10), true));
  std::vector<double> sequential(8), concurrent(8);
  for (int i = 0; i < 8; ++i) sequential[i] = MustSolve(instances[i].problem(), PaperToZeroGap()).objective;
  std::vector<std::thread> threads;
  std::vector<Result<SolveResult>> results(8, Status(ErrorCode::kInternal, "not run"));
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] { results[i] = Solve("mip", instances[i].problem(), PaperToZeroGap()); });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status().message();
    EXPECT_TRUE(Near(results[i]->objective, sequential[i])) << i;
    ExpectValid(instances[i].problem(), *results[i]);
  }
}

TEST(Ilp, RejectsBadOptions) {
  Instance inst{MakeGraph(1, {}), CostModel(1, TwoPus(4), 0)};
  inst.costs.set_latency(0, 0, 1);
  TestOptions o = PaperToZeroGap();
  o.time_limit_s = 0;
  EXPECT_EQ(Solve(o.solver, inst.problem(), o).status().code(), ErrorCode::kInvalidArgument);
  o = PaperToZeroGap();
  o.relative_gap = -1;
  EXPECT_EQ(Solve(o.solver, inst.problem(), o).status().code(), ErrorCode::kInvalidArgument);
  o = PaperToZeroGap();
  o.exact.node_limit = -1;
  EXPECT_EQ(Solve("exact", inst.problem(), o).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace hetplan
