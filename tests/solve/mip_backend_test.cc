// The MIP backends (--mip-backend cbc | highs): the paper's MIP, its energy
// form and the throughput MIP on HiGHS agree with brute force on small
// graphs; the schedule names the solver and its version; the exact search's
// fallback runs on the backend the options choose, and by default on the one
// docs/planners.md#mip-backends chose by measurement; HiGHS honours the
// interrupt flag and the time limit.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "hetplan/solve/solver.h"
#include "solve/ilp_test_support.h"
#include "solve/stream_test_support.h"

namespace hetplan {
namespace {

using namespace ilp_test;     // NOLINT(google-build-using-namespace): the shared test helpers
using namespace stream_test;  // NOLINT(google-build-using-namespace)

// The version string of `backend` in this build; empty when it lacks it.
std::string VersionOf(MipBackend backend) {
  for (const MipBackendInfo& b : ListMipBackends()) {
    if (b.backend == backend) return b.version;
  }
  return "";
}

TestOptions Mip(MipBackend backend) {
  TestOptions o = ExactToZeroGap();
  o.solver = "mip";
  o.mip.backend = backend;
  return o;
}

#define REQUIRE_HIGHS()                                                        \
  if (VersionOf(MipBackend::kHighs).empty()) {                                 \
    GTEST_SKIP() << "this build has no HiGHS (scripts/setup_highs.sh)";        \
  }                                                                            \
  static_assert(true)

TEST(MipBackend, CbcIsAlwaysThereAndEveryBackendNamesItsVersion) {
  EXPECT_EQ(VersionOf(MipBackend::kCbc).rfind("CBC 2.", 0), 0u) << VersionOf(MipBackend::kCbc);
  const std::string highs = VersionOf(MipBackend::kHighs);
  if (!highs.empty()) {
    EXPECT_EQ(highs.rfind("HiGHS 1.", 0), 0u) << highs;
  }
  EXPECT_EQ(ToString(MipBackend::kHighs), "highs");
  EXPECT_EQ(ParseMipBackend("HiGHS").value(), MipBackend::kHighs);
  EXPECT_EQ(MipOptions{}.backend, MipBackend::kAuto);
  EXPECT_EQ(ResolveMipBackend(MipBackend::kAuto), VersionOf(MipBackend::kHighs).empty() ? MipBackend::kCbc
                                                                                         : MipBackend::kHighs);
  EXPECT_EQ(ResolveMipBackend(MipBackend::kCbc), MipBackend::kCbc);
  auto bad = ParseMipBackend("gurobi");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'auto', 'cbc' or 'highs'"), std::string::npos);
}

TEST(MipBackend, HighsMatchesBruteForceOnRandomInstances) {
  REQUIRE_HIGHS();
  std::mt19937 rng(46);
  for (int i = 0; i < 120; ++i) {
    const int n = 1 + static_cast<int>(rng() % 7);
    const int64_t capacity = static_cast<int64_t>(rng() % 21);
    Instance inst = RandomInstance(rng, n, i % 2 ? ThreePus(capacity) : TwoPus(capacity), i % 4 != 3);
    const Problem p = inst.problem();
    const double brute = BruteForceLatency(p);
    TestOptions o = Mip(MipBackend::kHighs);
    o.warm_start = i % 3 != 0;
    const SolveResult r = MustSolve(p, o);
    ASSERT_EQ(r.status, SolveStatus::kOptimal) << "instance " << i << ": " << Notes(r) << "\n" << Describe(inst);
    ExpectValid(p, r);
    EXPECT_TRUE(Near(r.objective, brute)) << "instance " << i << ": HiGHS " << r.objective << ", brute force "
                                          << brute << "\n"
                                          << Describe(inst);
    ASSERT_TRUE(r.mip.has_value());
    EXPECT_EQ(r.mip->backend, VersionOf(MipBackend::kHighs)) << "instance " << i;
  }
}

TEST(MipBackend, HighsEnergyMatchesBruteForce) {
  REQUIRE_HIGHS();
  std::mt19937 rng(4646);
  for (int i = 0; i < 30; ++i) {
    const int n = 1 + static_cast<int>(rng() % 6);
    Instance inst = RandomInstance(rng, n, i % 2 ? ThreePus(rng() % 16) : TwoPus(rng() % 16), true);
    Problem p = inst.problem();
    p.objective = Objective::kEnergy;
    if (i % 3 == 2) {
      const double fastest = BruteForceLatency(p);
      p.latency_cap_us = fastest * 1.2;
    }
    const double brute = BruteForceEnergy(p);
    const SolveResult r = MustSolve(p, Mip(MipBackend::kHighs));
    ASSERT_EQ(r.status, SolveStatus::kOptimal) << "instance " << i << ": " << Notes(r) << "\n" << Describe(inst);
    ExpectValid(p, r);
    EXPECT_TRUE(Near(r.objective, brute)) << "instance " << i << ": HiGHS " << r.objective << ", brute force "
                                          << brute;
  }
}

// The throughput MIP (copies, no latency bound) on HiGHS against brute force
// over every assignment and number of copies.
TEST(MipBackend, HighsThroughputMipMatchesBruteForce) {
  REQUIRE_HIGHS();
  std::mt19937 rng(464646);
  int infeasible = 0;
  for (int i = 0; i < 80; ++i) {
    const int n = 1 + static_cast<int>(rng() % 6);
    const int64_t capacity = 2 + static_cast<int64_t>(rng() % 16);
    Instance inst = RandomInstance(rng, n, i % 2 ? ThreePus(capacity) : TwoPus(capacity), i % 2 == 0);
    AddMvms(&inst, rng);
    const Problem p = inst.problem(Objective::kThroughput);
    const double brute = BruteForceInterval(p);
    auto r = Solve("mip", p, Mip(MipBackend::kHighs));
    ASSERT_TRUE(r.ok()) << r.status().message();
    if (!std::isfinite(brute)) {
      EXPECT_EQ(r->status, SolveStatus::kInfeasible) << "instance " << i;
      ++infeasible;
      continue;
    }
    ASSERT_EQ(r->status, SolveStatus::kOptimal) << "instance " << i << ": " << Notes(*r) << "\n" << Describe(inst);
    EXPECT_TRUE(Near(r->objective, brute)) << "instance " << i << ": HiGHS " << r->objective << ", brute force "
                                           << brute << "\n"
                                           << Describe(inst);
    const std::string bad = Violations(StreamJson(p, *r->schedule));
    EXPECT_TRUE(bad.empty()) << "instance " << i << ":\n" << bad;
  }
  RecordProperty("infeasible", infeasible);
}

// The exact search hands an instance it cannot close within its node limit
// to the paper's MIP: on the backend the options name, and without one on
// the default, auto: HiGHS where the build has it (the faster of the two on
// the zoo, docs/planners.md#mip-backends), else CBC.
TEST(MipBackend, ExactFallbackRunsOnTheChosenBackend) {
  REQUIRE_HIGHS();
  std::mt19937 rng(7);
  int fallbacks = 0;
  for (int i = 0; i < 30 && fallbacks < 3; ++i) {
    Instance inst = RandomInstance(rng, 14, ThreePus(12), true);
    const Problem p = inst.problem();
    TestOptions o = ExactToZeroGap();
    o.exact.node_limit = 3;
    const SolveResult by_default = MustSolve(p, o);
    if (!by_default.exact->mip_fallback) continue;
    ++fallbacks;
    ASSERT_TRUE(by_default.mip.has_value());
    EXPECT_EQ(by_default.mip->backend, VersionOf(ResolveMipBackend(MipOptions{}.backend))) << i;
    for (MipBackend b : {MipBackend::kCbc, MipBackend::kHighs}) {
      o.mip.backend = b;
      const SolveResult r = MustSolve(p, o);
      ASSERT_TRUE(r.exact->mip_fallback) << i;
      ASSERT_TRUE(r.mip.has_value()) << i;
      EXPECT_EQ(r.mip->backend, VersionOf(b)) << i << ": " << Notes(r);
      EXPECT_EQ(r.status, SolveStatus::kOptimal) << i << ": " << Notes(r);
      EXPECT_TRUE(Near(r.objective, by_default.objective)) << i;
      ExpectValid(p, r);
    }
  }
  EXPECT_EQ(fallbacks, 3) << "too few instances needed the fallback at a node limit of 3";
}

TEST(MipBackend, HighsStopsOnTheInterruptFlagWithTheWarmStart) {
  REQUIRE_HIGHS();
  std::mt19937 rng(11);
  Instance inst = RandomInstance(rng, 30, ThreePus(20), true);
  const Problem p = inst.problem();
  std::atomic<bool> stop{true};
  TestOptions o = Mip(MipBackend::kHighs);
  o.interrupt = &stop;
  auto r = Solve("mip", p, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->termination, Termination::kInterrupted) << Notes(*r);
  EXPECT_NE(r->status, SolveStatus::kOptimal);
  ASSERT_TRUE(r->schedule.has_value());  // the warm start
  ExpectValid(p, *r);
}

TEST(MipBackend, HighsHonoursTheTimeLimitAndNeverClaimsOptimalityAtIt) {
  REQUIRE_HIGHS();
  std::mt19937 rng(12);
  Instance inst = RandomInstance(rng, 60, ThreePus(30), true);
  const Problem p = inst.problem();
  TestOptions o = Mip(MipBackend::kHighs);
  o.time_limit_s = 0.5;
  const auto t0 = std::chrono::steady_clock::now();
  const SolveResult r = MustSolve(p, o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(wall, 3.0);
  if (r.status != SolveStatus::kOptimal) {
    EXPECT_EQ(r.termination, Termination::kTimeLimit) << Notes(r);
    EXPECT_GT(r.gap, 0);
  }
  ExpectValid(p, r);
}

}  // namespace
}  // namespace hetplan
