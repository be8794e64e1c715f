// The baselines (docs/baselines.md): hand-checked results on small instances,
// every schedule through the independent validator, and the exact ILP never
// worse than any baseline on random instances.
#include "hetplan/solve/baselines.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "hetplan/solve/solver.h"
#include "solve/instances.h"

namespace hetplan {
namespace {

using testing_instances::Instance;
using testing_instances::ScheduleViolations;
using testing_instances::MakeGraph;
using testing_instances::RandomDagEdges;
using testing_instances::Serial;
using testing_instances::Spatial;


// A baseline through the planner facade, as every command calls it.
Result<SolveResult> RunBaseline(const std::string& name, const Problem& p, const BaselineOptions& o = {}) {
  SolveOptions so;
  so.baseline = o;
  return Solve(name, p, so);
}

SolveResult RunChecked(const std::string& name, const Problem& p) {
  auto r = RunBaseline(name, p);
  EXPECT_TRUE(r.ok()) << name << ": " << r.status().message();
  if (!r.ok()) return {};
  EXPECT_EQ(r->status, SolveStatus::kHeuristic) << name;
  EXPECT_EQ(r->solver, name);
  EXPECT_TRUE(r->schedule.has_value()) << name;
  if (r->schedule) {
    auto v = ScheduleViolations(p, *r);
    EXPECT_TRUE(v.empty()) << name << ": " << (v.empty() ? "" : v.front());
  }
  return std::move(r).value();
}

double Makespan(const SolveResult& r) { return r.schedule ? r.schedule->makespan_us : NAN; }

// a → b → c on cpu/gpu: cpu 10 each; gpu 2, 20, 2; every transfer 1 µs.
Instance Chain3(std::optional<double> cpu_w = std::nullopt, std::optional<double> gpu_w = std::nullopt) {
  Instance inst{MakeGraph(3, {{0, 1}, {1, 2}}), CostModel()};
  inst.costs = CostModel(3, {Serial("cpu", cpu_w), Serial("gpu", gpu_w)}, 2);
  const double gpu[3] = {2, 20, 2};
  for (int v = 0; v < 3; ++v) {
    inst.costs.set_latency(v, 0, 10);
    inst.costs.set_latency(v, 1, gpu[v]);
  }
  for (int e = 0; e < 2; ++e) {
    inst.costs.set_transfer(e, 0, 1, 1);
    inst.costs.set_transfer(e, 1, 0, 1);
  }
  return inst;
}

TEST(Baselines, NamesAreRegistered) {
  const std::vector<std::string> one = SolverNames(MethodFamily::kBaseline, 1);
  EXPECT_EQ(one, (std::vector<std::string>{"best_single", "greedy", "type_policy", "neurosurgeon", "hetero", "haxconn",
                                           "axonn"}));
  EXPECT_EQ(SolverNames(MethodFamily::kBaseline, 2), (std::vector<std::string>{"pair_serial", "pair_naive_multi_pu"}));
  for (const std::string& n : one) EXPECT_NE(FindSolver(n), nullptr) << n;
  ASSERT_NE(FindSolver("single:cpu"), nullptr);
  EXPECT_EQ(FindSolver("single:cpu")->info().name, "single:cpu");
  EXPECT_EQ(FindSolver("single:cpu"), FindSolver("single:cpu"));  // made once
  EXPECT_EQ(FindSolver("single:"), nullptr);
  EXPECT_EQ(FindSolver("single"), nullptr);
  Instance inst = Chain3();
  auto r = RunBaseline("no-such", inst.problem());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(r.status().message().find("greedy"), std::string::npos);
}

TEST(Baselines, HandCheckedChain) {
  Instance inst = Chain3();
  const Problem p = inst.problem();
  EXPECT_DOUBLE_EQ(Makespan(RunChecked("single:cpu", p)), 30);
  EXPECT_DOUBLE_EQ(Makespan(RunChecked("single:gpu", p)), 24);
  EXPECT_DOUBLE_EQ(Makespan(RunChecked("best_single", p)), 24);
  // a gpu 2, transfer 1, b cpu 10, transfer 1, c gpu 2.
  EXPECT_DOUBLE_EQ(Makespan(RunChecked("greedy", p)), 16);
  // One type: the gpu wins it (24 < 30).
  EXPECT_DOUBLE_EQ(Makespan(RunChecked("type_policy", p)), 24);
  // Host prefix, gpu suffix: k=0 24, k=1 10+1+20+2=33, k=2 10+10+1+2=23, k=3 30.
  SolveResult ns = RunChecked("neurosurgeon", p);
  EXPECT_DOUBLE_EQ(Makespan(ns), 23);
  EXPECT_EQ(ns.schedule->ops[2].device, 1);
  // Priority lists: cpu first → 30, gpu first → 24.
  EXPECT_DOUBLE_EQ(Makespan(RunChecked("hetero", p)), 24);
  // One switch either way: best 23 (cpu,cpu,gpu or gpu,cpu,cpu).
  EXPECT_DOUBLE_EQ(Makespan(RunChecked("haxconn", p)), 23);
  auto cim = RunBaseline("single:npu", p);
  EXPECT_FALSE(cim.ok());
  EXPECT_EQ(cim.status().code(), ErrorCode::kInvalidArgument);
}

TEST(Baselines, AxonnMinimisesEnergyAndNeedsPower) {
  Instance no_power = Chain3();
  auto r = RunBaseline("axonn", no_power.problem());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.status().message().find("power_w"), std::string::npos);

  // cpu 1 W: 10 µJ per operator; gpu 2 W: 4, 40, 4 µJ. Two switches:
  // gpu, cpu, gpu = 18 µJ (makespan 16).
  Instance inst = Chain3(1.0, 2.0);
  SolveResult a = RunChecked("axonn", inst.problem(Objective::kEnergy));
  EXPECT_DOUBLE_EQ(a.objective, 18);
  EXPECT_DOUBLE_EQ(Makespan(a), 16);
  ASSERT_TRUE(a.schedule->energy_uj.has_value());
  EXPECT_DOUBLE_EQ(*a.schedule->energy_uj, 18);
  // With at most one switch: cpu,cpu,gpu or gpu,cpu,cpu = 24 µJ.
  BaselineOptions one;
  one.axonn_max_switches = 1;
  auto b = RunBaseline("axonn", inst.problem(Objective::kEnergy), one);
  ASSERT_TRUE(b.ok());
  EXPECT_DOUBLE_EQ(b->objective, 24);
  // Under the latency objective the objective reported is the makespan.
  SolveResult c = RunChecked("axonn", inst.problem(Objective::kLatency));
  EXPECT_DOUBLE_EQ(c.objective, 16);
}

TEST(Baselines, EnergyObjectiveAndLatencyCap) {
  Instance inst = Chain3(1.0, 2.0);
  Problem p = inst.problem(Objective::kEnergy);
  // Per operator lowest energy: gpu 4, cpu 10, gpu 4 = 18 µJ.
  EXPECT_DOUBLE_EQ(RunChecked("greedy", p).objective, 18);
  // Whole model: cpu 30 µJ, gpu 48 µJ.
  EXPECT_DOUBLE_EQ(RunChecked("best_single", p).objective, 30);
  // A cap of 20 µs rules out the all-cpu schedule (30 µs).
  p.latency_cap_us = 20;
  auto r = RunBaseline("best_single", p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, SolveStatus::kNoSolution);
  EXPECT_FALSE(r->schedule.has_value());
  Instance no_power = Chain3();
  auto e = RunBaseline("greedy", no_power.problem(Objective::kEnergy));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), ErrorCode::kUnsupported);
}

// cpu 10 µs per operator; cim 1 µs and 2 crossbars per operator, capacity 3:
// only one operator fits on the CIM.
Instance CimChain(int64_t capacity) {
  Instance inst{MakeGraph(3, {{0, 1}, {1, 2}}, {"Conv", "Relu", "Conv"}), CostModel()};
  inst.costs = CostModel(3, {Serial("cpu"), Spatial("cim", capacity)}, 2);
  for (int v = 0; v < 3; ++v) {
    inst.costs.set_latency(v, 0, 10);
    if (v != 1) {
      inst.costs.set_latency(v, 1, 1);
      inst.costs.set_crossbars(v, 1, 2);
    }
  }
  return inst;
}

TEST(Baselines, CapacityRepairAndFallback) {
  Instance inst = CimChain(3);
  const Problem p = inst.problem();
  // Greedy wants both Convs on the CIM (4 crossbars > 3): one stays.
  SolveResult g = RunChecked("greedy", p);
  EXPECT_DOUBLE_EQ(Makespan(g), 21);
  int on_cim = 0;
  for (const ScheduledOp& op : g.schedule->ops) on_cim += op.device == 1;
  EXPECT_EQ(on_cim, 1);
  std::vector<int> a = {1, 0, 1};
  RepairCapacity(p, a);
  EXPECT_EQ(a, (std::vector<int>{1, 0, 0}));
  // The CIM cannot run the Relu nor the whole model.
  auto single = RunBaseline("single:cim", p);
  ASSERT_FALSE(single.ok());
  EXPECT_EQ(single.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(single.status().message().find("op1"), std::string::npos);
  EXPECT_DOUBLE_EQ(Makespan(RunChecked("best_single", p)), 30);
  // HETERO cim-first: op0 on cim (2 of 3 crossbars), op1 falls back, op2
  // finds too few crossbars left: 1 + 10 + 10.
  EXPECT_DOUBLE_EQ(Makespan(RunChecked("hetero", p)), 21);
  // With room for both Convs every rule offloads them.
  Instance big = CimChain(4);
  for (const char* name : {"greedy", "type_policy", "neurosurgeon", "hetero", "haxconn"}) {
    EXPECT_DOUBLE_EQ(Makespan(RunChecked(name, big.problem())), 12) << name;
  }
}

TEST(Baselines, RegisteredWithTheFacade) {
  Instance inst = Chain3();
  auto r = Solve("greedy", inst.problem(), SolveOptions{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_DOUBLE_EQ(r->schedule->makespan_us, 16);
  EXPECT_GE(r->seconds, 0);
}

// Two requests in one graph: request 0 = ops 0 → 1, request 1 = ops 2 → 3.
// Request 0 costs 10 per op on the cpu, 4 on the gpu; request 1 5 and 6.
Instance TwoRequests(std::optional<double> cpu_w = std::nullopt, std::optional<double> gpu_w = std::nullopt) {
  Instance inst{MakeGraph(4, {{0, 1}, {2, 3}}), CostModel()};
  inst.costs = CostModel(4, {Serial("cpu", cpu_w), Serial("gpu", gpu_w)}, 2);
  const double cpu[4] = {10, 10, 5, 5}, gpu[4] = {4, 4, 6, 6};
  for (int v = 0; v < 4; ++v) {
    inst.costs.set_latency(v, 0, cpu[v]);
    inst.costs.set_latency(v, 1, gpu[v]);
  }
  return inst;
}

// A pair baseline on `inst` with request 1 starting at operator `split`.
Result<SolveResult> RunPairBaseline(const std::string& name, const Problem& both, int split) {
  RequestSet requests;
  requests.split = split;
  for (int v = 0; v < both.graph->size(); ++v) (v < split ? requests.chain0 : requests.chain1).push_back(v);
  Problem p = both;
  p.requests = &requests;
  return Solve(name, p, SolveOptions{});
}

TEST(PairBaselines, HandCheckedAndValid) {
  const Instance inst = TwoRequests();
  const Problem p = inst.problem();
  RequestSet requests{2, {0, 1}, {2, 3}};
  Problem both = p;
  both.requests = &requests;
  // Back to back: cpu 20 + 10 = 30, gpu 8 + 12 = 20.
  auto serial = RunPairBaseline("pair_serial", p, 2);
  ASSERT_TRUE(serial.ok()) << serial.status().message();
  EXPECT_DOUBLE_EQ(serial->schedule->makespan_us, 20);
  EXPECT_EQ(serial->status, SolveStatus::kHeuristic);
  // Request 0 on the gpu (8) beside request 1 on the cpu (10).
  auto naive = RunPairBaseline("pair_naive_multi_pu", p, 2);
  ASSERT_TRUE(naive.ok()) << naive.status().message();
  EXPECT_DOUBLE_EQ(naive->schedule->makespan_us, 10);
  EXPECT_EQ(naive->schedule->ops[0].device, 1);
  EXPECT_EQ(naive->schedule->ops[2].device, 0);
  for (const SolveResult* r : {&*serial, &*naive}) {
    EXPECT_EQ(r->schedule->ops[1].request, 0);
    EXPECT_EQ(r->schedule->ops[3].request, 1);
    const auto v = ScheduleViolations(both, *r);
    EXPECT_TRUE(v.empty()) << r->solver << ": " << (v.empty() ? "" : v.front());
  }
  // Back to back on one PU: request 1 starts when request 0 has finished.
  EXPECT_DOUBLE_EQ(serial->schedule->ops[2].start_us, 8);

  // Energy: gpu at 1 W, cpu at 3 W: serial on the gpu (20 µJ) beats the cpu (90 µJ).
  const Instance powered = TwoRequests(3.0, 1.0);
  auto e = RunPairBaseline("pair_serial", powered.problem(Objective::kEnergy), 2);
  ASSERT_TRUE(e.ok());
  EXPECT_DOUBLE_EQ(*e->schedule->energy_uj, 20);

  EXPECT_EQ(RunPairBaseline("pair_nope", p, 2).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(RunPairBaseline("pair_serial", p, 5).status().code(), ErrorCode::kInvalidArgument);
  // A pair baseline needs two requests, a one-request baseline one.
  EXPECT_EQ(Solve("pair_serial", p, SolveOptions{}).status().code(), ErrorCode::kUnsupported);
  EXPECT_EQ(Solve("greedy", both, SolveOptions{}).status().code(), ErrorCode::kUnsupported);
  // Request 0 only on the cpu, request 1 only on the gpu: no homogeneous serial.
  Instance split = TwoRequests();
  split.costs.set_unsupported(0, 1);
  split.costs.set_unsupported(2, 0);
  EXPECT_EQ(RunPairBaseline("pair_serial", split.problem(), 2).status().code(), ErrorCode::kUnsupported);
  auto forced = RunPairBaseline("pair_naive_multi_pu", split.problem(), 2);
  ASSERT_TRUE(forced.ok());
  EXPECT_DOUBLE_EQ(forced->schedule->makespan_us, 20);  // request 0 on the cpu
}

// ---------------------------------------------------------------------------
// Random instances: every baseline validates, and the exact ILP is never worse.

Instance RandomBaselineInstance(std::mt19937& rng, int n, std::vector<PuInfo> pus) {
  std::uniform_real_distribution<double> unit(0, 1);
  const std::vector<std::pair<int, int>> edges = RandomDagEdges(rng, n, {0.2, 0.35, 0.5});
  std::vector<std::string> types(n);
  for (int v = 0; v < n; ++v) types[v] = std::vector<std::string>{"Conv", "Relu", "Add"}[rng() % 3];
  Instance inst{MakeGraph(n, edges, types), CostModel()};
  const int k = static_cast<int>(pus.size());
  inst.costs = CostModel(n, pus, static_cast<int>(inst.graph.edges().size()));
  CostModel& c = inst.costs;
  testing_instances::FillRandomCosts(rng, pus, /*support=*/0.7, /*acc_max=*/70, /*transfer_max=*/20, c);
  for (int p = 0; p < k; ++p) {
    for (int q = 0; q < k; ++q) {
      if (p != q && unit(rng) < 0.3) c.set_slowdown(p, q, 1.0 + unit(rng));
    }
  }
  return inst;
}

std::vector<std::string> AllBaselines(const CostModel& c) {
  std::vector<std::string> names = SolverNames(MethodFamily::kBaseline, 1);
  for (const PuInfo& pu : c.pus()) names.push_back("single:" + pu.name);
  return names;
}

void CheckIlpNeverWorse(const Instance& inst, Objective objective, const std::string& label) {
  const Problem p = inst.problem(objective);
  SolveOptions exact;
  exact.threads = 1;
  exact.relative_gap = 0;
  exact.time_limit_s = 60;
  auto ilp = Solve("exact", p, exact);
  ASSERT_TRUE(ilp.ok()) << ilp.status().message();
  ASSERT_EQ(ilp->status, SolveStatus::kOptimal) << label;
  for (const std::string& name : AllBaselines(inst.costs)) {
    auto r = RunBaseline(name, p);
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported) << label << " " << name << ": " << r.status().message();
      continue;
    }
    ASSERT_TRUE(r->schedule.has_value()) << label << " " << name;
    auto v = ScheduleViolations(p, *r);
    EXPECT_TRUE(v.empty()) << label << " " << name << ": " << (v.empty() ? "" : v.front());
    const double value = objective == Objective::kLatency ? r->schedule->makespan_us : *r->schedule->energy_uj;
    EXPECT_LE(ilp->objective, value * (1 + 1e-6) + 1e-9) << label << " " << name;
  }
}

TEST(Baselines, IlpNeverWorseOnRandomInstancesLatency) {
  std::mt19937 rng(20240611);
  for (int i = 0; i < 24; ++i) {
    const int n = 4 + static_cast<int>(rng() % 5);
    std::vector<PuInfo> pus = i % 2 ? std::vector<PuInfo>{Serial("cpu"), Spatial("cim", 2 + rng() % 10)}
                                    : std::vector<PuInfo>{Serial("cpu"), Serial("gpu"), Spatial("cim", 2 + rng() % 10)};
    Instance inst = RandomBaselineInstance(rng, n, pus);
    CheckIlpNeverWorse(inst, Objective::kLatency, "instance " + std::to_string(i));
  }
}

TEST(Baselines, IlpNeverWorseOnRandomInstancesEnergy) {
  std::mt19937 rng(777);
  for (int i = 0; i < 12; ++i) {
    const int n = 4 + static_cast<int>(rng() % 4);
    Instance inst = RandomBaselineInstance(
        rng, n, {Serial("cpu", 1 + rng() % 5), Serial("gpu", 1 + rng() % 9), Serial("npu", 1.5)});
    CheckIlpNeverWorse(inst, Objective::kEnergy, "instance " + std::to_string(i));
  }
}

}  // namespace
}  // namespace hetplan
