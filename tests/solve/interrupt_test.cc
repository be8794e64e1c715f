// SolveOptions::interrupt: the exact search and the paper's MIP on CBC stop
// early with their best schedule so far (status feasible, termination
// interrupted) — set before the call (deterministic), or by another thread
// while CBC searches (its event handler, solve/mip/cbc_driver.cc).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "hetplan/solve/solver.h"
#include "solve/instances.h"

namespace hetplan {
namespace {

using testing_instances::FillRandomCosts;
using testing_instances::Instance;
using testing_instances::MakeGraph;
using testing_instances::ScheduleViolations;
using testing_instances::Serial;

// A stem, `branches` parallel chains of `depth` and a join, on three serial
// PUs with random costs: many orderings to choose between, which neither the
// exact search without its node budget nor CBC finishes in seconds.
Instance Wide(int branches, int depth) {
  const int n = 2 + branches * depth;
  std::vector<std::pair<int, int>> edges;
  for (int b = 0; b < branches; ++b) {
    int prev = 0;
    for (int d = 0; d < depth; ++d) {
      const int v = 1 + b * depth + d;
      edges.emplace_back(prev, v);
      prev = v;
    }
    edges.emplace_back(prev, n - 1);
  }
  OpGraph g = MakeGraph(n, edges);
  std::vector<PuInfo> pus = {Serial("cpu"), Serial("gpu"), Serial("npu")};
  CostModel c(n, pus, static_cast<int>(g.edges().size()));
  std::mt19937 rng(7);
  FillRandomCosts(rng, pus, 1.0, 100, 20, c);
  return Instance{std::move(g), std::move(c)};
}

void ExpectInterruptedWithASchedule(const Problem& p, const Result<SolveResult>& r) {
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, SolveStatus::kFeasible);
  EXPECT_EQ(r->termination, Termination::kInterrupted);
  ASSERT_TRUE(r->schedule.has_value());
  EXPECT_TRUE(ScheduleViolations(p, *r).empty());
}

TEST(Interrupt, SetBeforeTheCallEveryProvingMethodReturnsItsStartingSchedule) {
  const Instance in = Wide(4, 3);
  const Problem p = in.problem();
  std::atomic<bool> stop{true};
  SolveOptions o;
  o.threads = 1;
  o.exact.node_limit = 0;
  o.interrupt = &stop;
  for (const char* method : {"exact", "mip"}) {
    SCOPED_TRACE(method);
    const auto t0 = std::chrono::steady_clock::now();
    auto r = Solve(method, p, o);
    ExpectInterruptedWithASchedule(p, r);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
  }
}

TEST(Interrupt, AnotherThreadStopsCbcMidSearch) {
  const Instance in = Wide(10, 5);
  const Problem p = in.problem();
  std::atomic<bool> stop{false};
  SolveOptions o;
  o.threads = 1;
  o.time_limit_s = 300;
  o.interrupt = &stop;
  std::thread stopper([&]() {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    stop.store(true);
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto r = Solve("mip", p, o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stopper.join();
  ASSERT_TRUE(r.ok()) << r.status().message();
  if (r->status == SolveStatus::kOptimal && seconds < 0.5) GTEST_SKIP() << "CBC proved it before the interrupt";
  ExpectInterruptedWithASchedule(p, r);
  // CBC looks at the interrupt from its first node on: after the root LP and
  // cuts, seconds here, far below the 300 s limit.
  EXPECT_LT(seconds, 120);
}

}  // namespace
}  // namespace hetplan
