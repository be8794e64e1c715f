// The throughput objective: the exact search's initiation interval equals
// brute force over every assignment and every replication that fits the
// budgets; its cyclic schedule passes the independent validator, which
// catches a resource used twice within one II, a wrong stage, a transfer
// that leaves early and a budget exceeded by copies, from the file alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "hetplan/plan/requests.h"
#include "hetplan/solve/solver.h"
#include "hetplan/solve/throughput.h"
#include "hetplan/validate/validator.h"
#include "solve/ilp_test_support.h"
#include "solve/stream_test_support.h"

namespace hetplan {
namespace {

using namespace ilp_test;     // NOLINT(google-build-using-namespace): the shared test helpers
using namespace stream_test;  // NOLINT(google-build-using-namespace)

TEST(Throughput, ExactMatchesBruteForceWithReplicas) {
  std::mt19937 rng(20261206);
  int replicated = 0, infeasible = 0, copies_help = 0;
  for (int i = 0; i < 400; ++i) {
    const int n = 1 + static_cast<int>(rng() % 7);
    const int64_t capacity = 2 + static_cast<int64_t>(rng() % 16);
    const std::vector<PuInfo> pus =
        i % 3 == 0 ? TwoPus(capacity) : i % 3 == 1 ? ThreePus(capacity) : FourPus(capacity, 1 + capacity / 2);
    Instance inst = RandomInstance(rng, n, pus, i % 2 == 0);
    AddMvms(&inst, rng);
    if (i % 4 == 1) inst.costs.ChargeBoundary(0, static_cast<double>(1 + rng() % 20));  // --boundary-cost fitted
    const Problem p = inst.problem(Objective::kThroughput);
    const double brute = BruteForceInterval(p);
    const SolveResult r = MustSolve(p, ExactToZeroGap());
    if (!std::isfinite(brute)) {
      EXPECT_EQ(r.status, SolveStatus::kInfeasible) << "instance " << i << "\n" << Describe(inst);
      ++infeasible;
      continue;
    }
    ASSERT_EQ(r.status, SolveStatus::kOptimal) << "instance " << i << ": " << Notes(r) << "\n" << Describe(inst);
    EXPECT_TRUE(Near(r.objective, brute)) << "instance " << i << ": exact " << r.objective << " brute force "
                                          << brute << "\n"
                                          << Describe(inst);
    EXPECT_TRUE(Near(r.bound, r.objective)) << "instance " << i;
    ASSERT_TRUE(r.schedule && r.schedule->initiation_interval_us);
    EXPECT_TRUE(Near(*r.schedule->initiation_interval_us, r.objective)) << "instance " << i;
    const std::string bad = Violations(StreamJson(p, *r.schedule));
    EXPECT_TRUE(bad.empty()) << "instance " << i << ":\n" << bad << Describe(inst);
    for (const ScheduledOp& op : r.schedule->ops) replicated += op.replicas > 1;
    copies_help += brute < BruteForceInterval(p, false) - 1e-9;
  }
  // Copies change the optimum often enough for the comparison to mean something.
  EXPECT_GT(copies_help, 30);
  RecordProperty("replicated_operators", replicated);
  RecordProperty("copies_help", copies_help);
  RecordProperty("infeasible", infeasible);
}

// cpu → cim → cpu, the cim operator 4 MVMs of 10 µs: with 2 crossbars of
// budget 4 it takes two copies and 20 µs; the cpu's 25 µs set the II.
Instance Sandwich() {
  Instance inst{MakeGraph(3, {{0, 1}, {1, 2}}), CostModel()};
  inst.costs = CostModel(3, {Serial("cpu"), Spatial("cim", 4)}, 2);
  CostModel& c = inst.costs;
  c.set_latency(0, 0, 10);
  c.set_latency(1, 0, 90);
  c.set_latency(2, 0, 15);
  c.set_latency(1, 1, 40);
  c.set_crossbars(1, 1, 2);
  c.set_mvms(1, 1, 4, 40);
  for (int e = 0; e < 2; ++e) {
    c.set_transfer(e, 0, 1, 1);
    c.set_transfer(e, 1, 0, 1);
  }
  return inst;
}

TEST(Throughput, CopiesShortenTheBottleneckOperator) {
  const Instance inst = Sandwich();
  const Problem p = inst.problem(Objective::kThroughput);
  const SolveResult r = MustSolve(p, ExactToZeroGap());
  ASSERT_EQ(r.status, SolveStatus::kOptimal) << Notes(r);
  EXPECT_DOUBLE_EQ(r.objective, 25);
  EXPECT_EQ(r.schedule->ops[1].device, 1);
  EXPECT_EQ(r.schedule->ops[1].replicas, 2);
  EXPECT_DOUBLE_EQ(r.schedule->ops[1].finish_us - r.schedule->ops[1].start_us, 20);
  const StreamLoads loads = ComputeStreamLoads(p, {0, 1, 0}, nullptr);
  EXPECT_DOUBLE_EQ(loads.interval_us(), 40);  // one copy: the cim operator's 40 µs
  EXPECT_EQ(loads.Bottleneck(inst.costs), "operator 1 on a spatial PU");
  EXPECT_EQ(Violations(StreamJson(p, *r.schedule)), "");
}

TEST(Throughput, ValidatorCatchesAStreamsViolationsFromTheFile) {
  const Instance inst = Sandwich();
  const Problem p = inst.problem(Objective::kThroughput);
  const SolveResult r = MustSolve(p, ExactToZeroGap());
  ASSERT_TRUE(r.schedule);
  const nlohmann::json good = StreamJson(p, *r.schedule);
  ASSERT_EQ(Violations(good), "");
  auto expect = [&](nlohmann::json j, const std::string& what) {
    const std::string bad = Violations(j);
    EXPECT_NE(bad.find(what), std::string::npos) << "expected '" << what << "' in:\n" << bad;
  };
  // A II shorter than the cpu's 25 µs of work: its two operators overlap in the cycle.
  nlohmann::json j = good;
  j["initiation_interval_us"] = 20;
  for (auto& o : j["operators"]) o["stage"] = static_cast<int>(std::floor(o["start_us"].get<double>() / 20 + 1e-9));
  expect(j, "overlap on serial 'cpu' within one II");
  // A stage that is not floor(start / II).
  j = good;
  j["operators"][2]["stage"] = j["operators"][2]["stage"].get<int>() + 1;
  expect(j, "'stage' must be floor(start_us / II)");
  // Three copies of 2 crossbars in a budget of 4.
  j = good;
  j["operators"][1]["replicas"] = 3;
  j["operators"][1]["finish_us"] = j["operators"][1]["start_us"].get<double>() + 20;
  expect(j, "use 6 crossbars, more than its 4");
  // One copy: the cim operator's 40 µs do not fit the 25 µs II.
  j = good;
  j["operators"][1]["replicas"] = 1;
  expect(j, "finish − start");
  // A transfer that leaves before its producer finishes.
  j = good;
  j["edges"][0]["transfer_start_us"] = j["operators"][0]["finish_us"].get<double>() - 5;
  expect(j, "before it finishes");
  // A file without the transfer's start.
  j = good;
  j["edges"][1].erase("transfer_start_us");
  expect(j, "missing 'transfer_start_us'");
}

TEST(Throughput, TransfersShareTheirLinkWithinTheInterval) {
  // Two independent cpu → cim pairs whose transfers of 30 µs each exceed
  // the cpu's and the cim's work: the link sets the II at 60 µs, or the
  // plan keeps one pair on the cpu.
  Instance inst{MakeGraph(4, {{0, 1}, {2, 3}}), CostModel()};
  inst.costs = CostModel(4, {Serial("cpu"), Spatial("cim", 10)}, 2);
  CostModel& c = inst.costs;
  for (int v = 0; v < 4; ++v) c.set_latency(v, 0, v % 2 == 0 ? 5 : 50);
  for (int v : {1, 3}) {
    c.set_latency(v, 1, 5);
    c.set_crossbars(v, 1, 1);
  }
  for (int e = 0; e < 2; ++e) {
    c.set_transfer(e, 0, 1, 30);
    c.set_transfer(e, 1, 0, 30);
  }
  const Problem p = inst.problem(Objective::kThroughput);
  const SolveResult r = MustSolve(p, ExactToZeroGap());
  ASSERT_EQ(r.status, SolveStatus::kOptimal) << Notes(r);
  EXPECT_DOUBLE_EQ(r.objective, BruteForceInterval(p));
  EXPECT_DOUBLE_EQ(r.objective, 60);  // both on the cim (link 60) or one on the cpu (cpu 60)
  EXPECT_EQ(Violations(StreamJson(p, *r.schedule)), "");
  // Both transfers at the same moment of the cycle are caught.
  const std::vector<int> a = {0, 1, 0, 1};
  Schedule s = CyclicSchedule(p, a, {1, 1, 1, 1}, 60);
  nlohmann::json j = StreamJson(p, s);
  ASSERT_EQ(Violations(j), "");
  j["edges"][1]["transfer_start_us"] = j["edges"][0]["transfer_start_us"];
  j["operators"][3]["start_us"] = j["edges"][0]["transfer_start_us"].get<double>() + 30;
  j["operators"][3]["finish_us"] = j["operators"][3]["start_us"].get<double>() + 5;
  j["operators"][3]["stage"] = static_cast<int>(std::floor(j["operators"][3]["start_us"].get<double>() / 60 + 1e-9));
  j["makespan_us"] = std::max(j["makespan_us"].get<double>(), j["operators"][3]["finish_us"].get<double>());
  EXPECT_NE(Violations(j).find("overlap on link cpu-cim"), std::string::npos) << Violations(j);
}

// The MIP on CBC, written apart from the search, agrees with brute force too.
TEST(Throughput, MipMatchesBruteForce) {
  std::mt19937 rng(45);
  TestOptions mip = ExactToZeroGap();
  mip.solver = "mip";
  for (int i = 0; i < 80; ++i) {
    const int n = 1 + static_cast<int>(rng() % 6);
    const int64_t capacity = 2 + static_cast<int64_t>(rng() % 16);
    Instance inst = RandomInstance(rng, n, i % 2 == 0 ? TwoPus(capacity) : ThreePus(capacity), i % 3 == 0);
    AddMvms(&inst, rng);
    if (i % 4 == 1) inst.costs.ChargeBoundary(0, static_cast<double>(1 + rng() % 20));
    const Problem p = inst.problem(Objective::kThroughput);
    const double brute = BruteForceInterval(p);
    const SolveResult r = MustSolve(p, mip);
    ASSERT_EQ(r.status, SolveStatus::kOptimal) << "instance " << i << ": " << Notes(r) << "\n" << Describe(inst);
    EXPECT_TRUE(Near(r.objective, brute)) << "instance " << i << ": mip " << r.objective << " brute force " << brute
                                          << "\n"
                                          << Describe(inst);
    EXPECT_EQ(Violations(StreamJson(p, *r.schedule)), "") << "instance " << i;
  }
  const Instance sandwich = Sandwich();
  const SolveResult r = MustSolve(sandwich.problem(Objective::kThroughput), mip);
  EXPECT_DOUBLE_EQ(r.objective, 25);
  EXPECT_EQ(r.schedule->ops[1].replicas, 2);
}

TEST(Throughput, OnlyTheExactMethodAndTheMipPlanForIt) {
  const Instance inst = Sandwich();
  const Problem p = inst.problem(Objective::kThroughput);
  for (const MethodInfo& m : ListSolvers()) {
    const bool supports =
        std::find(m.objectives.begin(), m.objectives.end(), Objective::kThroughput) != m.objectives.end();
    EXPECT_EQ(supports, m.name == "exact" || m.name == "mip") << m.name;
    if (supports || m.name.find('<') != std::string::npos) continue;
    auto r = Solve(m.name, p, SolveOptions{});
    ASSERT_FALSE(r.ok()) << m.name;
    EXPECT_NE(r.status().message().find("throughput"), std::string::npos) << r.status().message();
  }
}

// BIDENT's concurrency is two inputs in flight. Where its two-request mode and
// a stream describe the same thing, a two-stage pipeline (one operator pinned
// to the CPU, the next to the GPU, no copies), they agree: the concurrent
// mapping's makespan for two requests is one input's latency plus the II.
TEST(Throughput, TwoRequestsInFlightAreOneLatencyPlusOneInterval) {
  std::mt19937 rng(6);
  for (int i = 0; i < 50; ++i) {
    Instance inst{MakeGraph(2, {{0, 1}}), CostModel()};
    inst.costs = CostModel(2, {Serial("cpu"), Serial("gpu")}, 1);
    inst.costs.set_latency(0, 0, static_cast<double>(1 + rng() % 100));
    inst.costs.set_latency(1, 1, static_cast<double>(1 + rng() % 100));
    const SolveResult stream = MustSolve(inst.problem(Objective::kThroughput), ExactToZeroGap());
    ASSERT_EQ(stream.status, SolveStatus::kOptimal) << Notes(stream);
    auto both = CombineRequests(inst.graph, inst.costs, inst.graph, inst.costs);
    ASSERT_TRUE(both.ok()) << both.status().message();
    TestOptions concurrent;
    concurrent.solver = "map_concurrent";
    const SolveResult pair = MustSolve(both->problem(Objective::kLatency), concurrent);
    ASSERT_TRUE(pair.schedule) << Notes(pair);
    const double a = inst.costs.latency_us(0, 0), b = inst.costs.latency_us(1, 1);
    EXPECT_DOUBLE_EQ(stream.objective, std::max(a, b)) << "instance " << i;
    EXPECT_DOUBLE_EQ(stream.schedule->makespan_us, a + b) << "instance " << i;
    EXPECT_DOUBLE_EQ(pair.schedule->makespan_us, stream.schedule->makespan_us + stream.objective)
        << "instance " << i << ": cpu " << a << " µs, gpu " << b << " µs";
  }
  // Three stages (5, 1, 5 µs on cpu, gpu, npu): a stream overlaps the second
  // input's first stage with the first input's last (latency 11 + II 5 =
  // 16 µs for two inputs); BIDENT's steps start two operators together and
  // end with the longer, so its best interleaving takes 17 µs.
  Instance three{MakeGraph(3, {{0, 1}, {1, 2}}), CostModel()};
  three.costs = CostModel(3, {Serial("cpu"), Serial("gpu"), Serial("npu")}, 2);
  three.costs.set_latency(0, 0, 5);
  three.costs.set_latency(1, 1, 1);
  three.costs.set_latency(2, 2, 5);
  const SolveResult stream = MustSolve(three.problem(Objective::kThroughput), ExactToZeroGap());
  auto both = CombineRequests(three.graph, three.costs, three.graph, three.costs);
  ASSERT_TRUE(both.ok());
  TestOptions concurrent;
  concurrent.solver = "map_concurrent";
  const SolveResult pair = MustSolve(both->problem(Objective::kLatency), concurrent);
  EXPECT_DOUBLE_EQ(stream.schedule->makespan_us + stream.objective, 16);
  EXPECT_DOUBLE_EQ(pair.schedule->makespan_us, 17);
}

}  // namespace
}  // namespace hetplan
