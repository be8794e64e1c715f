// The throughput objective's crossbar frontier: at every budget, the step
// that holds there has the II brute force finds with the PU's capacity set
// to that budget (copies counted), each step's cyclic schedule fits its own
// budget and passes the validator, and the steps fall strictly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "hetplan/solve/frontier.h"
#include "solve/ilp_test_support.h"
#include "solve/stream_test_support.h"

namespace hetplan {
namespace {

using namespace ilp_test;     // NOLINT(google-build-using-namespace): the shared test helpers
using namespace stream_test;  // NOLINT(google-build-using-namespace)

TEST(ThroughputFrontier, EveryBudgetMatchesBruteForce) {
  std::mt19937 rng(4545);
  int budgets = 0, steps = 0;
  for (int i = 0; i < 60; ++i) {
    const int n = 1 + static_cast<int>(rng() % 5);
    Instance inst = RandomInstance(rng, n, i % 2 == 0 ? TwoPus(1) : ThreePus(1), i % 3 == 0);
    AddMvms(&inst, rng);
    if (i % 4 == 1) inst.costs.ChargeBoundary(0, static_cast<double>(1 + rng() % 10));
    const int cim = inst.costs.num_pus() - 1;
    const Problem p = inst.problem(Objective::kThroughput);
    SolveOptions o;
    o.relative_gap = 0;
    o.threads = 1;
    auto f = SolveCrossbarFrontier(p, cim, o);
    ASSERT_TRUE(f.ok()) << f.status().message();
    ASSERT_TRUE(f->complete) << "instance " << i;
    ASSERT_FALSE(f->steps.empty());
    EXPECT_EQ(f->steps.front().crossbars, 0) << "a serial PU runs every operator of these instances";
    for (size_t s = 0; s < f->steps.size(); ++s) {
      const FrontierStep& step = f->steps[s];
      ++steps;
      EXPECT_TRUE(step.optimal);
      if (s > 0) {
        EXPECT_GT(step.crossbars, f->steps[s - 1].crossbars);
        EXPECT_LT(step.makespan_us, f->steps[s - 1].makespan_us);
      }
      // The step's plan fits its own budget and passes the validator there.
      CostModel at = inst.costs;
      at.mutable_pu(cim).capacity = step.crossbars;
      Problem q = p;
      q.costs = &at;
      EXPECT_EQ(Violations(StreamJson(q, step.schedule)), "") << "instance " << i << " step " << s;
      EXPECT_DOUBLE_EQ(*step.schedule.initiation_interval_us, step.makespan_us);
    }
    for (int64_t b = 0; b <= f->max_crossbars + 2; ++b) {
      CostModel at = inst.costs;
      at.mutable_pu(cim).capacity = b;
      Problem q = p;
      q.costs = &at;
      const double brute = BruteForceInterval(q);
      const FrontierStep* step = f->StepAt(b);
      ASSERT_NE(step, nullptr);
      EXPECT_TRUE(Near(step->makespan_us, brute))
          << "instance " << i << " budget " << b << ": frontier " << step->makespan_us << " brute force " << brute
          << "\n"
          << Describe(inst);
      ++budgets;
    }
  }
  EXPECT_GT(steps, 120);  // copies and operators give many steps
  EXPECT_GT(budgets, 500);
}

TEST(ThroughputFrontier, RefusesWhatItDoesNotModel) {
  std::mt19937 rng(7);
  Instance inst = RandomInstance(rng, 3, TwoPus(4), true);
  const Problem p = inst.problem(Objective::kThroughput);
  EXPECT_FALSE(SolveCrossbarFrontier(p, 0, SolveOptions{}).ok());  // the CPU has no crossbars
  inst.costs.mutable_pu(1).reprogram = true;
  auto r = SolveCrossbarFrontier(p, 1, SolveOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("reprogramming"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace hetplan
