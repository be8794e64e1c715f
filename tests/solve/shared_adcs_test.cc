// A spatial PU whose operators share an ADC pool (PuInfo::adc_pool): the list
// scheduler waits for the pool, the exact search equals brute force over
// every assignment and order, the independent validator catches an
// over-held pool from the schedule alone, and the methods that do not model
// the pool refuse it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "hetplan/solve/list_schedule.h"
#include "hetplan/solve/solver.h"
#include "hetplan/validate/validator.h"
#include "solve/ilp_test_support.h"

namespace hetplan {
namespace {

using namespace ilp_test;  // NOLINT(google-build-using-namespace): the shared test helpers

// The same instance with a pool of `pool` ADCs on the spatial PU, every
// operator there holding 1..pool of them, or with `crowded` more than half
// the pool (no two at once), drawn from `rng`.
CostModel WithPool(const CostModel& base, int cim, int64_t pool, std::mt19937& rng, bool crowded = false) {
  CostModel c = base;
  c.mutable_pu(cim).adc_pool = pool;
  const int64_t least = crowded ? pool / 2 + 1 : 1;
  for (int v = 0; v < c.num_ops(); ++v) {
    if (c.supported(v, cim)) c.set_adcs(v, cim, least + static_cast<int64_t>(rng() % (pool - least + 1)));
  }
  return c;
}

// A wide DAG (few edges) whose operators the CIM runs several times faster
// with few crossbars and cheap transfers: the CIM wants to run many at once.
Instance WideInstance(std::mt19937& rng, int n, const std::vector<PuInfo>& pus) {
  Instance inst{MakeGraph(n, RandomDagEdges(rng, n, {0.1, 0.2})), CostModel()};
  const int k = static_cast<int>(pus.size());
  inst.costs = CostModel(n, pus, static_cast<int>(inst.graph.edges().size()));
  CostModel& c = inst.costs;
  for (int v = 0; v < n; ++v) {
    c.set_latency(v, 0, static_cast<double>(20 + rng() % 80));
    for (int p = 1; p < k; ++p) {
      if (rng() % 5 == 0) continue;
      c.set_latency(v, p, static_cast<double>(pus[p].spatial ? 1 + rng() % 20 : 10 + rng() % 60));
      if (pus[p].spatial) c.set_crossbars(v, p, 1 + static_cast<int64_t>(rng() % 3));
    }
  }
  for (int e = 0; e < c.num_edges(); ++e) {
    for (int p = 0; p < k; ++p) {
      for (int q = 0; q < k; ++q) {
        if (p != q) c.set_transfer(e, p, q, static_cast<double>(rng() % 6));
      }
    }
  }
  return inst;
}

// Three independent 10 µs operators on the CIM only, 2 ADCs each of a pool
// of 4: two run at once, the third after them.
Instance ThreeOnAPoolOfFour() {
  Instance inst{MakeGraph(3, {}), CostModel()};
  inst.costs = CostModel(3, {Serial("cpu"), Spatial("cim", 100)}, 0);
  inst.costs.mutable_pu(1).adc_pool = 4;
  for (int v = 0; v < 3; ++v) {
    inst.costs.set_latency(v, 1, 10);
    inst.costs.set_crossbars(v, 1, 1);
    inst.costs.set_adcs(v, 1, 2);
  }
  return inst;
}

TEST(SharedAdcs, ListScheduleWaitsForThePool) {
  const Instance inst = ThreeOnAPoolOfFour();
  const Schedule s = ListSchedule(inst.problem(), {1, 1, 1});
  EXPECT_DOUBLE_EQ(s.ops[0].start_us, 0);
  EXPECT_DOUBLE_EQ(s.ops[1].start_us, 0);
  EXPECT_DOUBLE_EQ(s.ops[2].start_us, 10);
  EXPECT_DOUBLE_EQ(s.makespan_us, 20);
  const SolveResult r = MustSolve(inst.problem(), ExactToZeroGap());
  EXPECT_EQ(r.status, SolveStatus::kOptimal) << Notes(r);
  EXPECT_DOUBLE_EQ(r.objective, 20);
  ExpectValid(inst.problem(), r);
}

TEST(SharedAdcs, ProfileFitsIntoAGapAndNeverPastThePool) {
  CumulativeProfile pool(4);
  pool.Add(0, 10, 3);
  pool.Add(20, 30, 3);
  EXPECT_DOUBLE_EQ(pool.EarliestFit(0, 5, 1), 0);     // 3 + 1 fit
  EXPECT_DOUBLE_EQ(pool.EarliestFit(0, 5, 2), 10);    // the gap [10, 20)
  EXPECT_DOUBLE_EQ(pool.EarliestFit(0, 15, 2), 30);   // too long for the gap
  EXPECT_DOUBLE_EQ(pool.EarliestFit(12, 8, 4), 12);   // ends as the next hold starts
  EXPECT_TRUE(std::isinf(pool.EarliestFit(0, 1, 5))); // more than the pool
  EXPECT_DOUBLE_EQ(pool.EarliestFit(3, 0, 4), 3);     // takes no time: holds nothing
}

TEST(SharedAdcs, ValidatorCatchesAnOverHeldPoolFromTheFile) {
  const Instance inst = ThreeOnAPoolOfFour();
  const Problem p = inst.problem();
  Schedule s = ListSchedule(p, {1, 1, 1});
  EXPECT_TRUE(ValidateScheduleJson(ToScheduleJson(p, s)).ok());
  // All three at once: 6 ADCs of 4.
  s.ops[2].start_us = 0;
  s.ops[2].finish_us = 10;
  s.makespan_us = 10;
  ValidationReport rep = ValidateScheduleJson(ToScheduleJson(p, s));
  ASSERT_EQ(rep.violations.size(), 1u);
  EXPECT_NE(rep.violations[0].find("hold 6 ADCs, more than its 4"), std::string::npos) << rep.violations[0];
  // An operator on the pool without its share is named.
  nlohmann::json j = ToScheduleJson(p, ListSchedule(p, {1, 1, 1}));
  j["operators"][1].erase("adcs");
  rep = ValidateScheduleJson(j);
  ASSERT_FALSE(rep.ok());
  EXPECT_NE(rep.violations[0].find("'op1' on it has no adcs['cim']"), std::string::npos) << rep.violations[0];
}

TEST(SharedAdcs, ExactMatchesBruteForceOnRandomInstances) {
  std::mt19937 rng(20261206);
  int binds = 0;
  for (int i = 0; i < 300; ++i) {
    // Brute force branches on every order of the pool's operators: at most 7 operators on two PUs, 6 on three.
    const int n = 1 + static_cast<int>(rng() % (i % 2 == 0 ? 7 : 6));
    const int64_t capacity = 4 + static_cast<int64_t>(rng() % 20);
    const std::vector<PuInfo> pus = i % 2 == 0 ? TwoPus(capacity) : ThreePus(capacity);
    Instance inst = i % 4 < 2 ? WideInstance(rng, n, pus) : RandomInstance(rng, n, pus, i % 4 != 3);
    const int cim = inst.costs.num_pus() - 1;
    const double free = BruteForceLatency(inst.problem());
    inst.costs = WithPool(inst.costs, cim, 1 + static_cast<int64_t>(rng() % 5), rng, /*crowded=*/i % 3 == 0);
    const Problem p = inst.problem();
    const double brute = BruteForceLatency(p);
    const SolveResult r = MustSolve(p, ExactToZeroGap());
    ASSERT_EQ(r.status, SolveStatus::kOptimal) << "instance " << i << ": " << Notes(r) << "\n" << Describe(inst);
    ExpectValid(p, r);
    EXPECT_TRUE(Near(r.objective, brute)) << "instance " << i << ": exact " << r.objective << " brute force "
                                          << brute << "\n"
                                          << Describe(inst);
    EXPECT_TRUE(Near(r.bound, r.objective)) << "instance " << i;
    EXPECT_GE(brute, free - 1e-9) << "instance " << i;  // a pool never helps
    binds += brute > free + 1e-9;
  }
  // The pool changes the optimum often enough for the comparison to mean something.
  EXPECT_GT(binds, 40);
  RecordProperty("pool_binds", binds);
}

TEST(SharedAdcs, BaselinesKeepWithinThePool) {
  std::mt19937 rng(77);
  for (int i = 0; i < 30; ++i) {
    Instance inst = RandomInstance(rng, 2 + static_cast<int>(rng() % 8), TwoPus(30), true);
    inst.costs = WithPool(inst.costs, 1, 1 + static_cast<int64_t>(rng() % 3), rng);
    const Problem p = inst.problem();
    for (const char* method : {"greedy", "best_single", "neurosurgeon", "type_policy"}) {
      TestOptions o;
      o.solver = method;
      const SolveResult r = MustSolve(p, o);
      SCOPED_TRACE(std::string(method) + " instance " + std::to_string(i));
      ExpectValid(p, r);
    }
  }
}

TEST(SharedAdcs, MethodsWithoutThePoolRefuseIt) {
  const Instance inst = ThreeOnAPoolOfFour();
  for (const char* method : {"mip", "map"}) {
    auto r = Solve(method, inst.problem(), SolveOptions{});
    ASSERT_FALSE(r.ok()) << method;
    EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported) << method;
  }
  auto mip = Solve("mip", inst.problem(), SolveOptions{});
  EXPECT_NE(mip.status().message().find("does not model a shared ADC pool, and PU 'cim' has one (shared_adcs: 4)"),
            std::string::npos)
      << mip.status().message();
  Instance powered = ThreeOnAPoolOfFour();
  powered.costs.mutable_pu(0).power_w = 1;
  powered.costs.mutable_pu(1).power_w = 1;
  auto energy = Solve("exact", powered.problem(Objective::kEnergy), SolveOptions{});
  ASSERT_FALSE(energy.ok());
  EXPECT_NE(energy.status().message().find("latency objective only"), std::string::npos) << energy.status().message();
}

TEST(SharedAdcs, TimeLimitNeverClaimsOptimalityWithoutTheProof) {
  std::mt19937 rng(5);
  Instance inst = RandomInstance(rng, 40, TwoPus(200), true);
  inst.costs = WithPool(inst.costs, 1, 3, rng);
  TestOptions o = ExactToZeroGap();
  o.time_limit_s = 0.05;
  const SolveResult r = MustSolve(inst.problem(), o);
  ExpectValid(inst.problem(), r);
  if (r.status == SolveStatus::kOptimal) {
    EXPECT_TRUE(Near(r.bound, r.objective)) << Notes(r);
  } else {
    EXPECT_EQ(r.status, SolveStatus::kFeasible) << Notes(r);
    EXPECT_LT(r.bound, r.objective) << Notes(r);
    EXPECT_GT(r.bound, 0) << Notes(r);
  }
}

}  // namespace
}  // namespace hetplan
