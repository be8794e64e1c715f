// Shared by the exact search's and the MIP's tests (ilp_test.cc, ilp_formulations_test.cc):
// small instances, random DAGs, brute force over every assignment and every
// topological order, and the check of a result with the independent
// validator.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/graph/op_graph.h"
#include "hetplan/solve/list_schedule.h"
#include "hetplan/validate/validator.h"
#include "hetplan/solve/solver.h"
#include "hetplan/util/limits.h"
#include "solve/instances.h"

namespace hetplan::ilp_test {

// ---------------------------------------------------------------------------
// Instances (the graph and PU builders are shared with the other solver tests).

using testing_instances::Instance;
using testing_instances::MakeGraph;
using testing_instances::RandomDagEdges;
using testing_instances::Serial;
using testing_instances::Spatial;

// A random DAG over n operators (labels shuffled so that ids are not a
// topological order) with PUs `pus`: serial PUs and one spatial "cim".
// Serial PU 0 supports everything; every other PU a random subset.
inline Instance RandomInstance(std::mt19937& rng, int n, std::vector<PuInfo> pus, bool symmetric) {
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

inline std::vector<PuInfo> TwoPus(int64_t capacity) { return {Serial("cpu", 5.0), Spatial("cim", capacity, 1.0)}; }
inline std::vector<PuInfo> ThreePus(int64_t capacity) {
  return {Serial("cpu", 5.0), Serial("gpu", 12.0), Spatial("cim", capacity, 1.0)};
}

// Serial CPU and GPU, two capacitated spatial PUs.
inline std::vector<PuInfo> FourPus(int64_t a, int64_t b) {
  PuInfo second = Spatial("cim2", b, 2.0);
  return {Serial("cpu", 5.0), Serial("gpu", 12.0), Spatial("cim", a, 1.0), second};
}

// ---------------------------------------------------------------------------
// Brute force.

// Calls f(assignment) for every assignment of supported PUs that fits the capacity.
inline void ForEachAssignment(const Problem& p, const std::function<void(const std::vector<int>&)>& f) {
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
// relative order of operators on serial PUs, and of those holding ADCs of a
// shared pool, changes the list schedule, so any other operator on a spatial
// PU is dispatched as soon as it is ready (no branching).
inline double MinMakespan(const Problem& p, const std::vector<int>& a, const std::vector<char>* rewritten = nullptr) {
  const OpGraph& g = *p.graph;
  const int n = g.size();
  std::vector<int> indeg(n);
  for (int v = 0; v < n; ++v) indeg[v] = static_cast<int>(g.in_edges(v).size());
  std::vector<bool> done(n, false);
  std::vector<int> order;
  double best = std::numeric_limits<double>::infinity();
  std::function<void()> rec = [&]() {
    if (static_cast<int>(order.size()) == n) {
      best = std::min(best, ListSchedule(p, a, &order, rewritten).makespan_us);
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
      if (!done[v] && indeg[v] == 0 && p.costs->pu(a[v]).spatial && p.costs->adcs(v, a[v]) == 0 &&
          !(rewritten != nullptr && (*rewritten)[v])) {
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

inline double BruteForceLatency(const Problem& p) {
  double best = std::numeric_limits<double>::infinity();
  ForEachAssignment(p, [&](const std::vector<int>& a) { best = std::min(best, MinMakespan(p, a)); });
  return best;
}

// Minimum energy over assignments that fit the capacity (and the latency cap).
inline double BruteForceEnergy(const Problem& p) {
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
inline nlohmann::json ToScheduleJson(const Problem& p, const Schedule& s) {
  const OpGraph& g = *p.graph;
  const CostModel& c = *p.costs;
  nlohmann::json j;
  j["format"] = "hetplan-schedule";
  j["version"] = 1;
  j["devices"] = nlohmann::json::array();
  for (const PuInfo& pu : c.pus()) {
    nlohmann::json d = {{"name", pu.name}, {"kind", pu.kind}, {"execution", pu.spatial ? "spatial" : "serial"}};
    if (pu.spatial) d["capacity_crossbars"] = pu.capacity;
    if (pu.adc_pool > 0) d["shared_adcs"] = pu.adc_pool;
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
    if (c.pu(op.device).adc_pool > 0) o["adcs"] = {{c.pu(op.device).name, c.adcs(v, op.device)}};
    if (c.op_energy_uj(v, op.device) != 0.0) o["op_energy_uj"] = {{c.pu(op.device).name, c.op_energy_uj(v, op.device)}};
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

inline void ExpectValid(const Problem& p, const SolveResult& r) {
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

inline bool Near(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max({1.0, std::fabs(a), std::fabs(b)}); }

// Solve options with the method a test pins ("exact" or "mip").
struct TestOptions : SolveOptions {
  std::string solver = "exact";
};

// The exact method on `threads` threads, to a zero gap, with a minute to prove it.
inline TestOptions ExactToZeroGap(int threads = 1) {
  TestOptions o;
  o.solver = "exact";
  o.threads = threads;
  o.relative_gap = 0;
  o.time_limit_s = 60;
  return o;
}

inline SolveResult MustSolve(const Problem& p, const TestOptions& o) {
  auto r = Solve(o.solver, p, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return SolveResult{};
  for (const std::string& note : r->notes) {
    EXPECT_EQ(note.find("a bug"), std::string::npos) << note;
    EXPECT_EQ(note.find("numerical trouble"), std::string::npos) << note;
  }
  return std::move(r).value();
}

inline std::string Notes(const SolveResult& r) {
  std::string s = "status " + ToString(r.status) + ";";
  for (const std::string& n : r.notes) s += " " + n + ";";
  return s;
}

inline std::string Describe(const Instance& inst) {
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

}  // namespace hetplan::ilp_test
