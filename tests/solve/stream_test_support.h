// Shared by the throughput objective's tests: MVMs that copies shorten, an
// operator's time with its copies (written apart from the cost model), and a
// stream's schedule in the file format for the independent validator.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "hetplan/plan/problem.h"
#include "hetplan/validate/validator.h"
#include "solve/ilp_test_support.h"
#include "solve/instances.h"

namespace hetplan::stream_test {

using testing_instances::Instance;

// Gives every operator a spatial PU runs 1..4 MVMs taking part of its time,
// so that copies of its weights shorten it.
inline void AddMvms(Instance* inst, std::mt19937& rng) {
  CostModel& c = inst->costs;
  for (int v = 0; v < c.num_ops(); ++v) {
    for (int q = 0; q < c.num_pus(); ++q) {
      if (!c.pu(q).spatial || !c.supported(v, q)) continue;
      const int64_t n = 1 + static_cast<int64_t>(rng() % 4);
      const double share = 0.5 + 0.5 * static_cast<double>(rng() % 3) / 2.0;  // 50, 75 or 100 %
      c.set_mvms(v, q, n, c.latency_us(v, q) * share);
    }
  }
}

// The stream's schedule in the file format: ToScheduleJson's plus the II,
// each operator's replicas, stage and MVMs, and each transfer's start.
inline nlohmann::json StreamJson(const Problem& p, const Schedule& s) {
  const CostModel& c = *p.costs;
  nlohmann::json j = ilp_test::ToScheduleJson(p, s);
  j["initiation_interval_us"] = *s.initiation_interval_us;
  for (int v = 0; v < c.num_ops(); ++v) {
    nlohmann::json& o = j["operators"][v];
    o["replicas"] = s.ops[v].replicas;
    o["stage"] = s.ops[v].stage;
    const int q = s.ops[v].device;
    if (c.mvms(v, q) > 0) {
      o["mvms"] = {{c.pu(q).name, c.mvms(v, q)}};
      o["mvm_us"] = {{c.pu(q).name, c.mvm_us(v, q)}};
    }
  }
  const OpGraph& g = *p.graph;
  for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
    if (s.ops[g.edges()[e].from].device != s.ops[g.edges()[e].to].device) {
      j["edges"][e]["transfer_start_us"] = s.transfer_start_us[e];
    }
  }
  return j;
}

inline std::string Violations(const nlohmann::json& j) {
  std::string all;
  for (const std::string& v : ValidateScheduleJson(j).violations) all += v + "\n";
  return all;
}

// v's time on PU q with `copies` copies of its weights: its MVMs shared
// among them, everything else as one copy's.
inline double TimeWithCopies(const CostModel& c, int v, int q, int64_t copies) {
  const int64_t m = c.mvms(v, q);
  if (!c.pu(q).spatial || m == 0) return c.latency_us(v, q);
  const double each = std::ceil(static_cast<double>(m) / static_cast<double>(copies));
  return c.latency_us(v, q) - c.mvm_us(v, q) + c.mvm_us(v, q) * each / static_cast<double>(m);
}

// Calls f(assignment, copies) for every assignment of supported PUs and
// every number of copies 1..N_mvm of each operator on a spatial PU
// (`copies_allowed` false: one copy each); budgets are f's to check.
inline void ForEachPlanWithCopies(const Problem& p, bool copies_allowed,
                                  const std::function<void(const std::vector<int>&, const std::vector<int64_t>&)>& f) {
  const CostModel& c = *p.costs;
  const int n = c.num_ops();
  std::vector<int> a(n);
  std::vector<int64_t> copies(n, 1);
  std::function<void(int)> rec = [&](int v) {
    if (v == n) return f(a, copies);
    for (int q = 0; q < c.num_pus(); ++q) {
      if (!c.supported(v, q)) continue;
      a[v] = q;
      const int64_t most = c.pu(q).spatial && copies_allowed ? std::max<int64_t>(1, c.mvms(v, q)) : 1;
      for (copies[v] = 1; copies[v] <= most; ++copies[v]) rec(v + 1);
      copies[v] = 1;
    }
  };
  rec(0);
}

// The II by brute force, written apart from the planner: every assignment,
// every number of copies 1..N_mvm of each spatial operator within the
// budgets; II = max(Σ time on each serial PU (with a segment-boundary cost
// per edge it receives from another PU), Σ transfers between each pair of
// PUs, each spatial operator's time with its copies).
// `copies_allowed` false: one copy of every operator.
inline double BruteForceInterval(const Problem& p, bool copies_allowed = true) {
  const CostModel& c = *p.costs;
  const OpGraph& g = *p.graph;
  const int n = c.num_ops(), k = c.num_pus();
  double best = std::numeric_limits<double>::infinity();
  ForEachPlanWithCopies(p, copies_allowed, [&](const std::vector<int>& a, const std::vector<int64_t>& copies) {
    std::vector<double> load(static_cast<size_t>(k) * k + k, 0.0);
    std::vector<int64_t> used(k, 0);
    double ii = 0;
    for (int u = 0; u < n; ++u) {
      const double d = TimeWithCopies(c, u, a[u], copies[u]);
      if (c.pu(a[u]).spatial) {
        used[a[u]] += copies[u] * c.crossbars(u, a[u]);
        ii = std::max(ii, d);
      } else {
        load[a[u]] += d;
      }
    }
    for (int q = 0; q < k; ++q) {
      if (c.pu(q).spatial && used[q] > c.pu(q).capacity) return;
    }
    for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
      const int x = a[g.edges()[e].from], y = a[g.edges()[e].to];
      if (x == y) continue;
      load[k + std::min(x, y) * k + std::max(x, y)] += c.transfer_us(e, x, y);
      if (!c.pu(y).spatial) load[y] += c.boundary_us(y);  // the receiving PU starts the segment
    }
    for (double l : load) ii = std::max(ii, l);
    best = std::min(best, ii);
  });
  return best;
}

}  // namespace hetplan::stream_test
