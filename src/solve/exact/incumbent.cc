// Incumbents for the exact search (exact/incumbent.h).
#include "solve/exact/incumbent.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>

#include "hetplan/util/limits.h"
#include "hetplan/solve/baselines.h"
#include "hetplan/solve/list_schedule.h"

namespace hetplan::exact_internal {
namespace {


double Transfer(const CostModel& c, int e, int p, int q) { return p == q ? 0.0 : c.transfer_us(e, p, q); }

// Crossbars used per PU by `a`.
std::vector<int64_t> Usage(const CostModel& c, const std::vector<int>& a) {
  std::vector<int64_t> used(c.num_pus(), 0);
  for (int v = 0; v < static_cast<int>(a.size()); ++v) {
    if (c.pu(a[v]).spatial) used[a[v]] += c.crossbars(v, a[v]);
  }
  return used;
}

bool Fits(const CostModel& c, const std::vector<int64_t>& used, const std::vector<int64_t>& capacity) {
  for (int p = 0; p < c.num_pus(); ++p) {
    if (c.pu(p).spatial && used[p] > capacity[p]) return false;
  }
  return true;
}

// With one serial PU P: every operator that P can run stays there except
// the set a 0/1 knapsack picks per capacitated spatial PU (most of P's time
// moved per crossbar budget); uncapacitated alternatives take what is faster.
std::optional<std::vector<int>> KnapsackStart(const Problem& pr, const std::vector<std::vector<int>>& cand,
                                              const std::vector<int64_t>& capacity) {
  const CostModel& c = *pr.costs;
  const int n = c.num_ops();
  int serial = -1;
  for (int p = 0; p < c.num_pus(); ++p) {
    if (c.pu(p).spatial) continue;
    if (serial >= 0) return std::nullopt;
    serial = p;
  }
  if (serial < 0) return std::nullopt;
  std::vector<int> a(n, -1);
  for (int v = 0; v < n; ++v) {
    const bool on_serial = std::find(cand[v].begin(), cand[v].end(), serial) != cand[v].end();
    a[v] = on_serial ? serial : cand[v][0];
  }
  for (int s = 0; s < c.num_pus(); ++s) {
    if (!c.pu(s).spatial) continue;
    const int64_t cap = capacity[s];
    if (cap > (int64_t{1} << 16)) continue;
    std::vector<int> items;
    for (int v = 0; v < n; ++v) {
      if (a[v] == serial && c.crossbars(v, s) <= cap && std::find(cand[v].begin(), cand[v].end(), s) != cand[v].end()) {
        items.push_back(v);
      }
    }
    // best[b]: most serial time moved within b crossbars; take[i][b]: item i used.
    std::vector<double> best(static_cast<size_t>(cap) + 1, 0.0);
    std::vector<std::vector<char>> take(items.size(), std::vector<char>(static_cast<size_t>(cap) + 1, 0));
    for (size_t i = 0; i < items.size(); ++i) {
      const int v = items[i];
      const int64_t w = c.crossbars(v, s);
      const double gain = c.latency_us(v, serial);
      for (int64_t b = cap; b >= w; --b) {
        if (best[b - w] + gain > best[b]) {
          best[b] = best[b - w] + gain;
          take[i][b] = 1;
        }
      }
    }
    int64_t b = cap;
    for (int i = static_cast<int>(items.size()) - 1; i >= 0; --i) {
      if (take[i][b]) {
        a[items[i]] = s;
        b -= c.crossbars(items[i], s);
      }
    }
  }
  return a;
}

}  // namespace

Incumbent ActiveSchedule(const Problem& pr, const std::vector<int>& a) {
  const OpGraph& g = *pr.graph;
  const CostModel& c = *pr.costs;
  const int n = g.size(), k = c.num_pus();
  std::vector<double> dur(n), tail(n, 0.0);
  for (int v = 0; v < n; ++v) dur[v] = c.latency_us(v, a[v]);
  const auto& topo = g.topological_order();
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const int v = *it;
    double after = 0;
    for (int e : g.out_edges(v)) {
      const int w = g.edges()[e].to;
      after = std::max(after, Transfer(c, e, a[v], a[w]) + tail[w]);
    }
    tail[v] = dur[v] + after;
  }
  Incumbent inc;
  inc.assignment = a;
  inc.order.reserve(n);
  std::vector<double> finish(n, 0.0), free_at(k, 0.0);
  std::vector<int> npred(n);
  std::vector<std::vector<int>> pending(k);
  std::vector<int> ready;
  auto arrival = [&](int v) {
    double r = 0;
    for (int e : g.in_edges(v)) {
      const int u = g.edges()[e].from;
      r = std::max(r, finish[u] + Transfer(c, e, a[u], a[v]));
    }
    return r;
  };
  auto dispatch = [&](int v, double start) {
    finish[v] = start + dur[v];
    inc.order.push_back(v);
    if (!c.pu(a[v]).spatial) free_at[a[v]] = finish[v];
    for (int e : g.out_edges(v)) {
      const int w = g.edges()[e].to;
      if (--npred[w] == 0) ready.push_back(w);
    }
  };
  auto settle = [&]() {  // spatial operators start when ready; serial ones wait
    while (!ready.empty()) {
      const int v = ready.back();
      ready.pop_back();
      if (c.pu(a[v]).spatial) {
        dispatch(v, arrival(v));
      } else {
        pending[a[v]].push_back(v);
      }
    }
  };
  for (int v : topo) {
    npred[v] = static_cast<int>(g.in_edges(v).size());
    if (npred[v] == 0) ready.push_back(v);
  }
  std::reverse(ready.begin(), ready.end());
  settle();
  while (static_cast<int>(inc.order.size()) < n) {
    double best_finish = kInf;
    int p_star = -1;
    for (int p = 0; p < k; ++p) {
      for (int v : pending[p]) {
        const double f = std::max(arrival(v), free_at[p]) + dur[v];
        if (f < best_finish) {
          best_finish = f;
          p_star = p;
        }
      }
    }
    if (p_star < 0) break;  // unreachable on a DAG
    int pick = -1;
    double pick_start = 0;
    for (int v : pending[p_star]) {
      const double s = std::max(arrival(v), free_at[p_star]);
      if (s >= best_finish && !(s + dur[v] <= best_finish)) continue;
      if (pick < 0 || tail[v] > tail[pick] || (tail[v] == tail[pick] && g.topo_position(v) < g.topo_position(pick))) {
        pick = v;
        pick_start = s;
      }
    }
    std::vector<int>& pend = pending[p_star];
    pend.erase(std::find(pend.begin(), pend.end(), pick));
    dispatch(pick, pick_start);
    settle();
  }
  inc.schedule = ListSchedule(pr, a, &inc.order);
  return inc;
}

std::optional<Incumbent> LocalSearchIncumbent(const Problem& pr, const std::vector<std::vector<int>>& cand,
                                              const std::vector<int64_t>& capacity, int64_t evaluations,
                                              std::chrono::steady_clock::time_point deadline,
                                              const std::atomic<bool>* stop, double temperature) {
  const CostModel& c = *pr.costs;
  const int n = c.num_ops(), k = c.num_pus();
  std::vector<std::vector<int>> starts;
  if (auto a = KnapsackStart(pr, cand, capacity)) starts.push_back(*a);
  bool full = true;
  for (int p = 0; p < k; ++p) full = full && (!c.pu(p).spatial || capacity[p] >= c.pu(p).capacity);
  if (full) {
    std::vector<int> a(n);
    for (int v = 0; v < n; ++v) {
      a[v] = *std::min_element(cand[v].begin(), cand[v].end(),
                               [&](int p, int q) { return c.latency_us(v, p) < c.latency_us(v, q); });
    }
    RepairCapacity(pr, a, [&](int v, int p) { return c.supported(v, p) ? c.latency_us(v, p) : kInf; });
    starts.push_back(std::move(a));
  }
  for (int p = 0; p < k; ++p) {
    std::vector<int> a(n, p);
    bool all = true;
    for (int v = 0; v < n && all; ++v) all = std::find(cand[v].begin(), cand[v].end(), p) != cand[v].end();
    if (all) starts.push_back(std::move(a));
  }
  std::optional<Incumbent> best;
  for (const std::vector<int>& a : starts) {
    if (!Fits(c, Usage(c, a), capacity)) continue;
    Incumbent inc = ActiveSchedule(pr, a);
    if (!best || inc.schedule.makespan_us < best->schedule.makespan_us) best = std::move(inc);
  }
  if (!best) return std::nullopt;

  std::vector<int> choice;  // operators with more than one PU
  for (int v = 0; v < n; ++v) {
    if (cand[v].size() > 1) choice.push_back(v);
  }
  if (choice.empty()) return best;
  std::mt19937_64 rng(0x5eed);
  std::vector<int> a = best->assignment;
  std::vector<int64_t> used = Usage(c, a);
  double current = best->schedule.makespan_us;
  const double scale = temperature * current;
  const int64_t descent = evaluations / 10;
  for (int64_t it = 0; it < evaluations; ++it) {
    if ((it & 63) == 63 && (std::chrono::steady_clock::now() > deadline || (stop != nullptr && stop->load()))) break;
    // A move: v to another PU; when that overflows a spatial PU, one of the
    // operators there (drawn at random) to another of its PUs as well.
    const int v = choice[rng() % choice.size()];
    const std::vector<int>& cv = cand[v];
    int q = cv[rng() % cv.size()];
    if (q == a[v]) q = cv[(std::find(cv.begin(), cv.end(), q) - cv.begin() + 1) % cv.size()];
    std::vector<std::pair<int, int>> undo = {{v, a[v]}};
    auto move = [&](int u, int to) {
      if (c.pu(a[u]).spatial) used[a[u]] -= c.crossbars(u, a[u]);
      a[u] = to;
      if (c.pu(to).spatial) used[to] += c.crossbars(u, to);
    };
    move(v, q);
    if (c.pu(q).spatial && used[q] > capacity[q]) {
      std::vector<int> there;
      for (int u : choice) {
        if (u != v && a[u] == q) there.push_back(u);
      }
      while (used[q] > capacity[q] && !there.empty()) {
        const size_t j = rng() % there.size();
        const int u = there[j];
        there.erase(there.begin() + static_cast<std::ptrdiff_t>(j));
        int to = -1;
        for (int p : cand[u]) {
          if (p != q && (to < 0 || c.latency_us(u, p) < c.latency_us(u, to))) to = p;
        }
        undo.push_back({u, a[u]});
        move(u, to);
      }
    }
    const bool ok = Fits(c, used, capacity);
    double value = kInf;
    Incumbent trial;
    if (ok) {
      trial = ActiveSchedule(pr, a);
      value = trial.schedule.makespan_us;
    }
    // The first tenth of the moves only descends; then annealing: a longer
    // schedule is kept with probability exp(-Δ / T), T falling linearly to 0
    // over the rest of the moves (not over the time, so that the moves made
    // do not depend on the machine's speed). A deadline that cuts the
    // annealing short still leaves the descent's schedule.
    bool keep = ok && value <= current;
    if (ok && !keep && scale > 0 && it >= descent) {
      const double t = scale * (1.0 - static_cast<double>(it - descent) / static_cast<double>(evaluations - descent));
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // uniform in [0, 1)
      keep = u < std::exp(-(value - current) / t);
    }
    if (keep) {
      current = value;
      if (value < best->schedule.makespan_us) best = std::move(trial);
    } else {
      for (auto r = undo.rbegin(); r != undo.rend(); ++r) move(r->first, r->second);
    }
  }
  return best;
}

}  // namespace hetplan::exact_internal
