// The "ilp" backend against brute force on many small random instances, its
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
#include "hetplan/sim/simulator.h"
#include "hetplan/sim/validator.h"
#include "hetplan/solve/problem.h"
#include "hetplan/solve/solvers.h"
#include "solve/instances.h"

namespace hetplan {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------------------
// Instances.

using testing_instances::Instance;
using testing_instances::MakeGraph;
using testing_instances::RandomDagEdges;
using testing_instances::Serial;
using testing_instances::Spatial;

// A random DAG over n operators (labels shuffled so that ids are not a
// topological order) with PUs `pus`: serial PUs and one spatial "cim".
// Serial PU 0 supports everything; every other PU a random subset.
Instance RandomInstance(std::mt19937& rng, int n, std::vector<PuInfo> pus, bool symmetric) {
  std::uniform_real_distribution<double> unit(0, 1);
  const std::vector<std::pair<int, int>> edges = RandomDagEdges(rng, n, {0.15, 0.3, 0.5});
  Instance inst{MakeGraph(n, edges), CostModel()};
  const int k = static_cast<int>(pus.size());
  inst.costs = CostModel(n, pus, static_cast<int>(inst.graph.edges().size()));
  CostModel& c = inst.costs;
  auto latency = [&](int hi) { return unit(rng) < 0.05 ? 0.0 : static_cast<double>(1 + rng() % hi); };
  for (int v = 0; v < n; ++v) {
    c.set_latency(v, 0, latency(100));
    for (int p = 1; p < k; ++p) {
      if (unit(rng) < 0.6) {
        c.set_latency(v, p, latency(pus[p].spatial ? 60 : 80));
        if (pus[p].spatial) c.set_crossbars(v, p, 1 + rng() % 8);
      }
    }
  }
  for (int e = 0; e < c.num_edges(); ++e) {
    for (int p = 0; p < k; ++p) {
      for (int q = p + 1; q < k; ++q) {
        const double t = static_cast<double>(rng() % 31) + (unit(rng) < 0.5 ? 0.25 : 0.0);
        c.set_transfer(e, p, q, t);
        c.set_transfer(e, q, p, symmetric ? t : static_cast<double>(rng() % 31));
      }
    }
  }
  return inst;
}

std::vector<PuInfo> TwoPus(int64_t capacity) { return {Serial("cpu", 5.0), Spatial("cim", capacity, 1.0)}; }
std::vector<PuInfo> ThreePus(int64_t capacity) {
  return {Serial("cpu", 5.0), Serial("gpu", 12.0), Spatial("cim", capacity, 1.0)};
}

// ---------------------------------------------------------------------------
// Brute force.

// Calls f(assignment) for every assignment of supported PUs that fits the capacity.
void ForEachAssignment(const Problem& p, const std::function<void(const std::vector<int>&)>& f) {
  const CostModel& c = *p.costs;
  std::vector<int> a(c.num_ops(), -1);
  std::function<void(int)> rec = [&](int v) {
    if (v == c.num_ops()) {
      if (FitsCapacity(p, a)) f(a);
      return;
    }
    for (int q = 0; q < c.num_pus(); ++q) {
      if (!c.supported(v, q)) continue;
      a[v] = q;
      rec(v + 1);
    }
  };
  rec(0);
}

// The smallest makespan of any list schedule of `a`, over every topological
// order. Exact: an optimal schedule's start-time order is a topological
// order, and list scheduling in it starts no operator later. Only the
// relative order of operators on serial PUs changes the list schedule, so an
// operator on a spatial PU is dispatched as soon as it is ready (no branching).
double MinMakespan(const Problem& p, const std::vector<int>& a) {
  const OpGraph& g = *p.graph;
  const int n = g.size();
  std::vector<int> indeg(n);
  for (int v = 0; v < n; ++v) indeg[v] = static_cast<int>(g.in_edges(v).size());
  std::vector<bool> done(n, false);
  std::vector<int> order;
  double best = std::numeric_limits<double>::infinity();
  std::function<void()> rec = [&]() {
    if (static_cast<int>(order.size()) == n) {
      best = std::min(best, ListSchedule(p, a, &order).makespan_us);
      return;
    }
    auto take = [&](int v) {
      done[v] = true;
      order.push_back(v);
      for (int e : g.out_edges(v)) --indeg[g.edges()[e].to];
      rec();
      for (int e : g.out_edges(v)) ++indeg[g.edges()[e].to];
      order.pop_back();
      done[v] = false;
    };
    for (int v = 0; v < n; ++v) {
      if (!done[v] && indeg[v] == 0 && p.costs->pu(a[v]).spatial) {
        take(v);
        return;
      }
    }
    for (int v = 0; v < n; ++v) {
      if (!done[v] && indeg[v] == 0) take(v);
    }
  };
  rec();
  return best;
}

double BruteForceLatency(const Problem& p) {
  double best = std::numeric_limits<double>::infinity();
  ForEachAssignment(p, [&](const std::vector<int>& a) { best = std::min(best, MinMakespan(p, a)); });
  return best;
}

// Minimum energy over assignments that fit the capacity (and the latency cap).
double BruteForceEnergy(const Problem& p) {
  double best = std::numeric_limits<double>::infinity();
  ForEachAssignment(p, [&](const std::vector<int>& a) {
    double e = 0;
    for (int v = 0; v < p.costs->num_ops(); ++v) e += *p.costs->energy_uj(v, a[v]);
    if (e >= best) return;
    if (p.latency_cap_us && MinMakespan(p, a) > *p.latency_cap_us) return;
    best = e;
  });
  return best;
}

// ---------------------------------------------------------------------------
// Checks.

// The schedule in the schedule-file format, for the independent validator.
nlohmann::json ToScheduleJson(const Problem& p, const Schedule& s) {
  const OpGraph& g = *p.graph;
  const CostModel& c = *p.costs;
  nlohmann::json j;
  j["format"] = "hetplan-schedule";
  j["version"] = 1;
  j["devices"] = nlohmann::json::array();
  for (const PuInfo& pu : c.pus()) {
    nlohmann::json d = {{"name", pu.name}, {"kind", pu.kind}, {"execution", pu.spatial ? "spatial" : "serial"}};
    if (pu.spatial) d["capacity_crossbars"] = pu.capacity;
    d["power_w"] = pu.power_w ? nlohmann::json(*pu.power_w) : nlohmann::json(nullptr);
    j["devices"].push_back(d);
  }
  j["operators"] = nlohmann::json::array();
  for (int v = 0; v < g.size(); ++v) {
    const ScheduledOp& op = s.ops[v];
    nlohmann::json o = {{"id", v},
                        {"name", g.op(v).name},
                        {"device", c.pu(op.device).name},
                        {"start_us", op.start_us},
                        {"finish_us", op.finish_us},
                        {"slowdown", op.slowdown}};
    nlohmann::json cost = nlohmann::json::object();
    for (int q = 0; q < c.num_pus(); ++q) {
      cost[c.pu(q).name] = c.supported(v, q) ? nlohmann::json(c.latency_us(v, q)) : nlohmann::json(nullptr);
    }
    o["cost_us"] = cost;
    if (c.pu(op.device).spatial) o["crossbars"] = c.crossbars(v, op.device);
    j["operators"].push_back(o);
  }
  j["edges"] = nlohmann::json::array();
  for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
    const Edge& edge = g.edges()[e];
    const int du = s.ops[edge.from].device, dv = s.ops[edge.to].device;
    j["edges"].push_back({{"from", edge.from}, {"to", edge.to}, {"transfer_us", c.transfer_us(e, du, dv)}});
  }
  j["makespan_us"] = s.makespan_us;
  j["energy_uj"] = s.energy_uj ? nlohmann::json(*s.energy_uj) : nlohmann::json(nullptr);
  return j;
}

void ExpectValid(const Problem& p, const SolveResult& r) {
  ASSERT_TRUE(r.schedule.has_value());
  const Schedule& s = *r.schedule;
  ASSERT_EQ(static_cast<int>(s.ops.size()), p.graph->size());
  ValidationReport rep = ValidateScheduleJson(ToScheduleJson(p, s));
  std::string all;
  for (const std::string& v : rep.violations) all += v + "\n";
  EXPECT_TRUE(rep.ok()) << all;
  double latest = 0;
  for (const ScheduledOp& op : s.ops) latest = std::max(latest, op.finish_us);
  EXPECT_EQ(latest, s.makespan_us);
  const double objective = p.objective == Objective::kEnergy ? s.energy_uj.value_or(kNaN) : s.makespan_us;
  EXPECT_NEAR(r.objective, objective, 1e-9 * std::max(1.0, objective));
  if (p.objective == Objective::kEnergy && p.latency_cap_us) {
    EXPECT_LE(s.makespan_us, *p.latency_cap_us * (1 + 1e-9));
  }
  if (!std::isnan(r.bound)) {
    EXPECT_LE(r.bound, r.objective);
  }
}

bool Near(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max({1.0, std::fabs(a), std::fabs(b)}); }

SolveOptions Exact() {
  SolveOptions o;
  o.threads = 1;
  o.relative_gap = 0;
  o.time_limit_s = 60;
  return o;
}

SolveResult MustSolve(const Problem& p, const SolveOptions& o) {
  auto r = Solve("ilp", p, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return SolveResult{};
  for (const std::string& note : r->notes) {
    EXPECT_EQ(note.find("a bug"), std::string::npos) << note;
    EXPECT_EQ(note.find("numerical trouble"), std::string::npos) << note;
  }
  return std::move(r).value();
}

std::string Notes(const SolveResult& r) {
  std::string s = "status " + ToString(r.status) + ";";
  for (const std::string& n : r.notes) s += " " + n + ";";
  return s;
}

std::string Describe(const Instance& inst) {
  std::ostringstream os;
  const CostModel& c = inst.costs;
  os << "n=" << inst.graph.size() << " edges:";
  for (const Edge& e : inst.graph.edges()) os << " " << e.from << "->" << e.to;
  for (int q = 0; q < c.num_pus(); ++q) {
    os << "\n" << c.pu(q).name << (c.pu(q).spatial ? " cap " + std::to_string(c.pu(q).capacity) : "") << ":";
    for (int v = 0; v < c.num_ops(); ++v) {
      os << " " << c.latency_us(v, q);
      if (c.pu(q).spatial && c.supported(v, q)) os << "/" << c.crossbars(v, q) << "xb";
    }
  }
  return os.str();
}

// ---------------------------------------------------------------------------
// Facade.

TEST(SolverRegistry, IlpIsRegistered) {
  std::vector<std::string> names = SolverNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "ilp"), names.end());
  ASSERT_NE(FindSolver("ilp"), nullptr);
  EXPECT_EQ(FindSolver("ilp")->name(), "ilp");
  EXPECT_EQ(FindSolver("no-such-solver"), nullptr);
  RegisterBuiltinSolvers();  // idempotent
  EXPECT_EQ(SolverNames(), names);
}

TEST(SolverRegistry, UnknownSolverIsNotFound) {
  Instance inst{MakeGraph(1, {}), CostModel(1, {Serial("cpu")}, 0)};
  inst.costs.set_latency(0, 0, 1);
  auto r = Solve("nope", inst.problem(), SolveOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(r.status().message().find("ilp"), std::string::npos) << r.status().message();
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
  auto r = Solve("ilp", inst.problem(), SolveOptions{});
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
  SolveResult r = MustSolve(inst.problem(), Exact());
  EXPECT_EQ(r.status, SolveStatus::kOptimal);
  EXPECT_EQ(r.solver, "ilp");
  EXPECT_EQ(r.formulation, "paper");
  ExpectValid(inst.problem(), r);
  EXPECT_DOUBLE_EQ(r.objective, 1 + 12 + 1);  // cpu-only: 1 + 10 + 10 + 1 = 22
  EXPECT_EQ(r.schedule->ops[2].device, 1);
  // Eq. 13: Σ max latency + Σ max transfer = (1 + 10 + 10 + 1) + 4 · 1 (only edges touching op 2 can transfer).
  EXPECT_DOUBLE_EQ(r.big_m, 22 + 2);
  EXPECT_GT(r.variables, 0);
  EXPECT_GT(r.constraints, 0);
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
  SolveResult r = MustSolve(inst.problem(), Exact());
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
  SolveResult r = MustSolve(inst.problem(), Exact());
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
  SolveResult r = MustSolve(p, Exact());
  EXPECT_EQ(r.status, SolveStatus::kOptimal);
  ASSERT_TRUE(r.schedule.has_value());
  EXPECT_TRUE(r.schedule->ops.empty());
  EXPECT_EQ(r.objective, 0);
}

TEST(Ilp, NothingSupportedOnTheCim) {
  Instance inst{MakeGraph(4, {{0, 1}, {0, 2}, {2, 3}}), CostModel(4, TwoPus(100), 3)};
  for (int v = 0; v < 4; ++v) inst.costs.set_latency(v, 0, 1 + v);
  SolveResult r = MustSolve(inst.problem(), Exact());
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
    SolveOptions o = Exact();
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
  SolveResult r = MustSolve(inst.problem(), Exact());
  ExpectValid(inst.problem(), r);
  EXPECT_DOUBLE_EQ(r.objective, 30);
  c.set_transfer(1, 1, 0, 3);  // now the round trip pays: 10 + 1 + 2 + 3 + 10 = 26
  r = MustSolve(inst.problem(), Exact());
  ExpectValid(inst.problem(), r);
  EXPECT_DOUBLE_EQ(r.objective, 26);
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
    SolveOptions o = Exact();
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
    SolveOptions o = Exact();
    o.warm_start = i % 2 == 1;
    SolveResult r = MustSolve(p, o);
    ASSERT_EQ(r.status, SolveStatus::kOptimal) << "instance " << i << ": " << Notes(r) << "\n" << Describe(inst);
    ExpectValid(p, r);
    EXPECT_TRUE(Near(r.objective, brute))
        << "instance " << i << ": ilp " << r.objective << " brute force " << brute << "\n"
        << Describe(inst);
  }
}

TEST(Ilp, EnergyMatchesBruteForce) {
  std::mt19937 rng(99);
  for (int i = 0; i < 40; ++i) {
    const int n = 1 + static_cast<int>(rng() % 6);
    Instance inst = RandomInstance(rng, n, i % 2 ? ThreePus(rng() % 16) : TwoPus(rng() % 16), true);
    Problem p = inst.problem();
    p.objective = Objective::kEnergy;
    if (i % 4 == 3) {
      // A cap between the fastest schedule and the all-CPU one.
      const double fastest = BruteForceLatency(p);
      Schedule cpu = ListSchedule(p, std::vector<int>(n, 0));
      p.latency_cap_us = fastest + 0.5 * (cpu.makespan_us - fastest);
    }
    const double brute = BruteForceEnergy(p);
    SolveResult r = MustSolve(p, Exact());
    ASSERT_EQ(r.status, SolveStatus::kOptimal) << "instance " << i << ": " << Notes(r) << "\n" << Describe(inst);
    ExpectValid(p, r);
    EXPECT_TRUE(Near(r.objective, brute))
        << "instance " << i << ": ilp " << r.objective << " brute force " << brute << "\n"
        << Describe(inst);
  }
}

TEST(Ilp, EnergyCapBelowTheFastestScheduleIsInfeasible) {
  std::mt19937 rng(5);
  Instance inst = RandomInstance(rng, 5, TwoPus(10), true);
  Problem p = inst.problem();
  p.objective = Objective::kEnergy;
  p.latency_cap_us = 0.5 * BruteForceLatency(p);
  SolveResult r = MustSolve(p, Exact());
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
  auto r = Solve("ilp", p, Exact());
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
    SolveOptions o;
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
      SolveOptions o;
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
  SolveOptions one = Exact();
  SolveOptions two = Exact();
  two.threads = 2;
  SolveResult a = MustSolve(inst.problem(), one);
  SolveResult b = MustSolve(inst.problem(), two);
  EXPECT_EQ(a.status, SolveStatus::kOptimal);
  EXPECT_EQ(b.status, SolveStatus::kOptimal);
  ExpectValid(inst.problem(), b);
  EXPECT_TRUE(Near(a.objective, b.objective)) << a.objective << " vs " << b.objective;
  SolveOptions all = Exact();
  all.threads = 0;  // every core
  SolveResult c = MustSolve(inst.problem(), all);
  EXPECT_TRUE(Near(a.objective, c.objective));
}

TEST(Ilp, ThreadedSearchIsRepeatable) {
  std::mt19937 rng(29);
  Instance inst = RandomInstance(rng, 12, ThreePus(15), false);
  SolveOptions o = Exact();
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
  SolveOptions o = Exact();
  o.write_lp = (dir / "model.lp").string();
  o.write_mps = (dir / "model").string();  // no extension: nothing may be appended
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

  SolveOptions bad = Exact();
  bad.write_lp = (dir / "missing-folder" / "model.lp").string();
  auto err = Solve("ilp", inst.problem(), bad);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.status().code(), ErrorCode::kIoError);
  std::filesystem::remove_all(dir);
}

TEST(Ilp, SilentOnStdoutUnlessLogging) {
  Instance inst = HardInstance();
  SolveOptions o;
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
  SolveOptions o = Exact();
  o.log = true;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  SolveResult r = MustSolve(inst.problem(), o);
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find("CBC"), std::string::npos);
  EXPECT_EQ(r.status, SolveStatus::kOptimal);
}

TEST(Ilp, ConcurrentSolvesAgreeWithSequentialOnes) {
  // CBC's driver keeps global state; the backend serialises it.
  std::mt19937 rng(23);
  std::vector<Instance> instances;
  instances.reserve(8);
  for (int i = 0; i < 8; ++i) instances.push_back(RandomInstance(rng, 7, TwoPus(10), true));
  std::vector<double> sequential(8), concurrent(8);
  for (int i = 0; i < 8; ++i) sequential[i] = MustSolve(instances[i].problem(), Exact()).objective;
  std::vector<std::thread> threads;
  std::vector<Result<SolveResult>> results(8, Status(ErrorCode::kInternal, "not run"));
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] { results[i] = Solve("ilp", instances[i].problem(), Exact()); });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status().message();
    EXPECT_TRUE(Near(results[i]->objective, sequential[i])) << i;
    ExpectValid(instances[i].problem(), *results[i]);
  }
}

TEST(Ilp, RejectsUnknownFormulationAndBadOptions) {
  Instance inst{MakeGraph(1, {}), CostModel(1, TwoPus(4), 0)};
  inst.costs.set_latency(0, 0, 1);
  SolveOptions o = Exact();
  o.formulation = "compact";
  EXPECT_EQ(Solve("ilp", inst.problem(), o).status().code(), ErrorCode::kInvalidArgument);
  o = Exact();
  o.time_limit_s = 0;
  EXPECT_EQ(Solve("ilp", inst.problem(), o).status().code(), ErrorCode::kInvalidArgument);
  o = Exact();
  o.relative_gap = -1;
  EXPECT_EQ(Solve("ilp", inst.problem(), o).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace hetplan
