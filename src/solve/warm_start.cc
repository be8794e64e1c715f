// Warm-start heuristics (warm_start.h).
#include "solve/warm_start.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>

#include "hetplan/solve/baselines.h"
#include "hetplan/solve/list_schedule.h"

namespace hetplan::warm_start {
namespace {

// Per-operator best PU by `cost` among the candidates, then the shared
// capacity repair (baselines.h); nullopt when it cannot make the capacities fit.
std::optional<std::vector<int>> GreedyWithRepair(const Problem& pr, const std::vector<std::vector<int>>& cand,
                                                 const std::function<double(int, int)>& cost) {
  const CostModel& c = *pr.costs;
  const int n = c.num_ops();
  std::vector<int> a(n);
  for (int v = 0; v < n; ++v) {
    a[v] = *std::min_element(cand[v].begin(), cand[v].end(), [&](int p, int q) { return cost(v, p) < cost(v, q); });
  }
  RepairCapacity(pr, a, [&](int v, int p) {
    return c.supported(v, p) ? cost(v, p) : std::numeric_limits<double>::infinity();
  });
  if (!FitsCapacity(pr, a)) return std::nullopt;
  return a;
}

// Earliest-finish-time list scheduling in topological order, respecting capacity.
std::optional<std::vector<int>> EarliestFinish(const Problem& pr, const std::vector<std::vector<int>>& cand) {
  const OpGraph& g = *pr.graph;
  const CostModel& c = *pr.costs;
  std::vector<int> a(g.size(), -1);
  std::vector<double> finish(g.size(), 0.0), free_at(c.num_pus(), 0.0);
  std::vector<int64_t> used(c.num_pus(), 0);
  for (int v : g.topological_order()) {
    int best = -1;
    double best_finish = std::numeric_limits<double>::infinity();
    for (int p : cand[v]) {
      if (c.pu(p).spatial && used[p] + c.crossbars(v, p) > c.pu(p).capacity) continue;
      double start = c.pu(p).spatial ? 0.0 : free_at[p];
      for (int e : g.in_edges(v)) {
        const int u = g.edges()[e].from;
        start = std::max(start, finish[u] + (a[u] != p ? c.transfer_us(e, a[u], p) : 0.0));
      }
      const double f = start + c.latency_us(v, p);
      if (f < best_finish) {
        best_finish = f;
        best = p;
      }
    }
    if (best < 0) return std::nullopt;
    a[v] = best;
    finish[v] = best_finish;
    if (c.pu(best).spatial) {
      used[best] += c.crossbars(v, best);
    } else {
      free_at[best] = best_finish;
    }
  }
  return a;
}

// Lexicographic score of a heuristic schedule; nullopt when it breaks the latency cap.
std::optional<std::pair<double, double>> Score(const Problem& pr, const Schedule& s) {
  if (pr.objective == Objective::kEnergy) {
    if (pr.latency_cap_us && s.makespan_us > *pr.latency_cap_us) return std::nullopt;
    return std::make_pair(s.energy_uj.value_or(std::numeric_limits<double>::infinity()), s.makespan_us);
  }
  return std::make_pair(s.makespan_us, 0.0);
}

}  // namespace

std::vector<int> BottomLevelOrder(const Problem& pr, const std::vector<int>& a) {
  const OpGraph& g = *pr.graph;
  const CostModel& c = *pr.costs;
  std::vector<double> level(g.size(), 0.0);
  const auto& topo = g.topological_order();
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const int v = *it;
    double tail = 0;
    for (int e : g.out_edges(v)) {
      const int w = g.edges()[e].to;
      const double tr = a[v] != a[w] ? c.transfer_us(e, a[v], a[w]) : 0.0;
      tail = std::max(tail, tr + level[w]);
    }
    level[v] = c.latency_us(v, a[v]) + tail;
  }
  return PriorityTopoOrder(g, [&](int v) { return std::make_pair(-level[v], g.topo_position(v)); });
}

Candidate FromSchedule(const Problem& pr, const Schedule& s, std::string label) {
  const OpGraph& g = *pr.graph;
  std::vector<int> a(g.size());
  for (int v = 0; v < g.size(); ++v) a[v] = s.ops[v].device;
  std::vector<int> order = PriorityTopoOrder(g, [&](int v) {
    return std::make_pair(s.ops[v].start_us + s.ops[v].finish_us, g.topo_position(v));
  });
  Schedule retimed = ListSchedule(pr, a, &order);
  return Candidate{std::move(label), std::move(a), std::move(order), std::move(retimed)};
}

std::optional<Candidate> BestHeuristic(const Problem& pr, const std::vector<std::vector<int>>& all_cand) {
  const CostModel& c = *pr.costs;
  const int n = c.num_ops();
  // The heuristics keep every operator resident: PUs an operator may only be
  // rewritten on are left out.
  std::vector<std::vector<int>> cand = all_cand;
  for (int v = 0; v < n; ++v) {
    std::erase_if(cand[static_cast<size_t>(v)], [&](int q) { return c.rewrite_only(v, q); });
    if (cand[static_cast<size_t>(v)].empty()) return std::nullopt;
  }
  std::vector<std::pair<std::string, std::vector<int>>> assignments;
  // Everything on one PU that can run everything.
  for (int p = 0; p < c.num_pus(); ++p) {
    std::vector<int> a(n, p);
    bool all = true;
    for (int v = 0; v < n && all; ++v) all = std::find(cand[v].begin(), cand[v].end(), p) != cand[v].end();
    if (all && FitsCapacity(pr, a)) assignments.emplace_back("all on " + c.pu(p).name, std::move(a));
  }
  auto latency = [&](int v, int p) { return c.latency_us(v, p); };
  if (auto a = GreedyWithRepair(pr, cand, latency)) assignments.emplace_back("fastest PU per operator", *a);
  if (auto a = EarliestFinish(pr, cand)) assignments.emplace_back("earliest finish", *a);
  if (pr.objective == Objective::kEnergy) {
    auto energy = [&](int v, int p) { return c.energy_uj(v, p).value_or(0.0); };
    if (auto a = GreedyWithRepair(pr, cand, energy)) assignments.emplace_back("lowest energy per operator", *a);
  }

  std::optional<Candidate> best;
  std::optional<std::pair<double, double>> best_score;
  for (auto& [label, a] : assignments) {
    for (int variant = 0; variant < 2; ++variant) {
      std::vector<int> order = variant == 0 ? pr.graph->topological_order() : BottomLevelOrder(pr, a);
      Schedule s = ListSchedule(pr, a, &order);
      auto score = Score(pr, s);
      if (!score || (best_score && !(*score < *best_score))) continue;
      best_score = score;
      best = Candidate{label + (variant == 0 ? "" : ", bottom-level order"), a, std::move(order), std::move(s)};
    }
  }
  return best;
}


double ObjectiveOf(const Problem& pr, const Schedule& s) {
  if (pr.objective == Objective::kEnergy) return s.energy_uj.value_or(std::numeric_limits<double>::quiet_NaN());
  return s.makespan_us;
}

namespace {

// `c` re-timed on `a` with `rewritten`, in its order, when that fits the
// crossbars and the endurance budget and is shorter; whether it was.
bool TakeIfShorter(const Problem& pr, Candidate* c, std::vector<int> a, const std::vector<char>& rewritten) {
  if (!FitsCapacity(pr, a, &rewritten)) return false;
  Schedule s = ListSchedule(pr, a, &c->order, &rewritten);
  if (!(s.makespan_us < c->schedule.makespan_us)) return false;
  c->assignment = std::move(a);
  c->schedule = std::move(s);
  return true;
}

// Greedy rewrites from `base` (its rewritten operators `rewritten`) on PU rw.
Candidate GreedyFrom(const Problem& pr, int rw, Candidate base, std::vector<char> rewritten) {
  const CostModel& c = *pr.costs;
  const int n = c.num_ops();
  // Operators not on rw yet, by what rewriting could save at most.
  std::vector<std::pair<double, int>> gain;
  for (int v = 0; v < n; ++v) {
    const int at = base.assignment[static_cast<size_t>(v)];
    if (at == rw || !c.supported(v, rw) || c.crossbars(v, rw) == 0 || c.no_rewrite(v, rw)) continue;
    const double saved = c.latency_us(v, at) - c.latency_us(v, rw) - c.write_us(v, rw);
    if (saved > 0) gain.emplace_back(-saved, v);
  }
  std::sort(gain.begin(), gain.end());
  int taken = 0;
  for (const auto& [neg, v] : gain) {
    std::vector<int> a = base.assignment;
    a[static_cast<size_t>(v)] = rw;
    rewritten[static_cast<size_t>(v)] = 1;
    if (TakeIfShorter(pr, &base, std::move(a), rewritten)) {
      ++taken;
    } else {
      rewritten[static_cast<size_t>(v)] = 0;
    }
  }
  if (taken > 0) base.label += fmt::format(", {} more operator{} rewritten", taken, taken == 1 ? "" : "s");
  return base;
}

// Rewritten operators of `c` on rw made resident again, one at a time, those
// with the longest writes first, each kept when the list schedule gets
// shorter within the crossbars (the residents and what the rewrites hold at
// once) and the endurance budget.
Candidate SettleResidents(const Problem& pr, int rw, Candidate c) {
  const CostModel& cm = *pr.costs;
  std::vector<char> rewritten;
  std::vector<std::pair<double, int>> by_write;
  for (size_t v = 0; v < c.schedule.ops.size(); ++v) {
    rewritten.push_back(c.schedule.ops[v].rewritten ? 1 : 0);
    if (rewritten.back()) by_write.emplace_back(-cm.write_us(static_cast<int>(v), rw), static_cast<int>(v));
  }
  std::sort(by_write.begin(), by_write.end());
  int settled = 0;
  for (const auto& [neg, v] : by_write) {
    rewritten[static_cast<size_t>(v)] = 0;
    if (!cm.rewrite_only(v, rw) && TakeIfShorter(pr, &c, c.assignment, rewritten)) {
      ++settled;
    } else {
      rewritten[static_cast<size_t>(v)] = 1;
    }
  }
  if (settled > 0) c.label += fmt::format(", {} made resident again", settled);
  return c;
}

}  // namespace

Candidate WithGreedyRewrites(const Problem& pr, Candidate base) {
  const CostModel& c = *pr.costs;
  int rw = -1;
  for (int q = 0; q < c.num_pus(); ++q) {
    if (c.pu(q).reprogram) rw = q;
  }
  if (rw < 0 || pr.objective != Objective::kLatency) return base;
  const size_t n = static_cast<size_t>(c.num_ops());
  Candidate kept = GreedyFrom(pr, rw, base, std::vector<char>(n, 0));
  // From base with its operators on rw rewritten instead of resident: their
  // crossbars then serve every rewritten operator in turn; then those whose
  // writes cost most made resident again where that pays.
  std::vector<char> rewritten(n, 0);
  bool any = false;
  for (size_t v = 0; v < n; ++v) {
    if (base.assignment[v] == rw && c.crossbars(static_cast<int>(v), rw) > 0 && !c.no_rewrite(static_cast<int>(v), rw)) {
      rewritten[v] = 1;
      any = true;
    }
  }
  if (!any || !FitsCapacity(pr, base.assignment, &rewritten)) return kept;
  base.schedule = ListSchedule(pr, base.assignment, &base.order, &rewritten);
  base.label += ", rewritten instead of resident";
  Candidate turned = SettleResidents(pr, rw, GreedyFrom(pr, rw, std::move(base), std::move(rewritten)));
  return turned.schedule.makespan_us < kept.schedule.makespan_us ? turned : kept;
}

}  // namespace hetplan::warm_start
