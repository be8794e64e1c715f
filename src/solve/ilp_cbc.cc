// The "ilp" backend: the CIM paper's ILP (Klein et al., §IV-B, eqs. 5–14)
// generalised to K processing units, solved with COIN-OR CBC 2.10 through its
// command-line driver (CbcMain0/CbcMain1) so that preprocessing, cuts,
// heuristics and threads are on. This is the only file that includes CBC.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "hetplan/graph/algorithms.h"
#include "hetplan/sim/simulator.h"
#include "hetplan/solve/problem.h"
#include "hetplan/solve/solvers.h"
#include "solve/ilp_search.h"

// CBC, Clp, Osi and CoinUtils headers (coinor-libcbc-dev).
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <ClpSimplex.hpp>
#include <CoinError.hpp>
#include <CoinMessageHandler.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

namespace hetplan {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kLpInf = std::numeric_limits<double>::max();  // = COIN_DBL_MAX

double SecondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ---------------------------------------------------------------------------
// A small row-wise model builder: columns with bounds, objective, integrality
// and names; rows as merged sparse terms with bounds.

struct Term {
  int col;
  double coef;
};

struct Row {
  std::string name;
  std::vector<Term> terms;  // sorted by column, no duplicates, no zeros
  double lo, hi;
};

class ModelBuilder {
 public:
  int AddCol(std::string name, double lo, double hi, double obj, bool integer) {
    names_.push_back(std::move(name));
    lo_.push_back(lo);
    hi_.push_back(hi);
    obj_.push_back(obj);
    integer_.push_back(integer);
    return static_cast<int>(lo_.size()) - 1;
  }
  void AddRow(std::string name, std::vector<Term> terms, double lo, double hi) {
    std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) { return a.col < b.col; });
    std::vector<Term> merged;
    for (const Term& t : terms) {
      if (!merged.empty() && merged.back().col == t.col) {
        merged.back().coef += t.coef;
      } else {
        merged.push_back(t);
      }
    }
    std::erase_if(merged, [](const Term& t) { return t.coef == 0.0; });
    rows_.push_back(Row{std::move(name), std::move(merged), lo, hi});
  }

  int num_cols() const { return static_cast<int>(lo_.size()); }
  int num_rows() const { return static_cast<int>(rows_.size()); }
  const std::vector<Row>& rows() const { return rows_; }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<double>& lo() const { return lo_; }
  const std::vector<double>& hi() const { return hi_; }
  const std::vector<double>& obj() const { return obj_; }
  const std::vector<bool>& integer() const { return integer_; }

  // Largest violation of a row or a bound by `x`, relative to the size of
  // the terms involved (max(1, |rhs|, Σ|a_j x_j|)), so big-M rows do not
  // count rounding as violation.
  double MaxViolation(const std::vector<double>& x) const {
    double worst = 0;
    for (int j = 0; j < num_cols(); ++j) {
      worst = std::max(worst, (lo_[j] - x[j]) / std::max(1.0, std::fabs(lo_[j])));
      if (hi_[j] < kLpInf) worst = std::max(worst, (x[j] - hi_[j]) / std::max(1.0, std::fabs(hi_[j])));
      if (integer_[j]) worst = std::max(worst, std::fabs(x[j] - std::round(x[j])));
    }
    for (const Row& r : rows_) {
      double a = 0, size = 1;
      for (const Term& t : r.terms) {
        a += t.coef * x[t.col];
        size += std::fabs(t.coef * x[t.col]);
      }
      if (r.lo > -kLpInf) worst = std::max(worst, (r.lo - a) / std::max(size, std::fabs(r.lo)));
      if (r.hi < kLpInf) worst = std::max(worst, (a - r.hi) / std::max(size, std::fabs(r.hi)));
    }
    return worst;
  }

 private:
  std::vector<std::string> names_;
  std::vector<double> lo_, hi_, obj_;
  std::vector<bool> integer_;
  std::vector<Row> rows_;
};

// ---------------------------------------------------------------------------
// The formulation.

struct TransferVar {
  int p, q;  // source PU, target PU
  int col;
  double us;  // transfer time when u runs on p and v on q
};

struct IlpModel {
  ModelBuilder mb;
  std::vector<std::vector<int>> cand;       // cand[v]: PUs v may run on
  std::vector<std::vector<int>> x;          // x[v][p]: column, -1 when v cannot run on p
  std::vector<int> s;                       // s[v]
  int makespan = -1;                        // T
  std::vector<int> z;                       // z[e] (two PUs, symmetric transfer) or -1
  std::vector<double> z_us;                 // the transfer z[e] pays
  std::vector<std::vector<TransferVar>> y;  // per edge, otherwise
  struct Pair {
    int u, v, col;
  };
  std::vector<Pair> pairs;  // ordering binaries o_{u,v}, u < v
  double big_m = 0;
};

// The candidate PUs of v: supported, and on a spatial PU fitting its capacity alone.
std::vector<std::vector<int>> Candidates(const CostModel& c) {
  std::vector<std::vector<int>> cand(c.num_ops());
  for (int v = 0; v < c.num_ops(); ++v) {
    for (int p = 0; p < c.num_pus(); ++p) {
      if (!c.supported(v, p)) continue;
      if (c.pu(p).spatial && c.crossbars(v, p) > c.pu(p).capacity) continue;
      cand[v].push_back(p);
    }
  }
  return cand;
}

IlpModel BuildModel(const Problem& pr) {
  const OpGraph& g = *pr.graph;
  const CostModel& c = *pr.costs;
  const int n = g.size();
  const int k = c.num_pus();
  const auto& edges = g.edges();
  const bool energy = pr.objective == Objective::kEnergy;
  IlpModel m;
  m.cand = Candidates(c);

  // Eq. 13 over the candidate PUs (T_acc,v := 0 where v cannot run on the accelerator).
  double big_m = 0;
  for (int v = 0; v < n; ++v) {
    double worst = 0;
    for (int p : m.cand[v]) worst = std::max(worst, c.latency_us(v, p));
    big_m += worst;
  }
  for (int e = 0; e < static_cast<int>(edges.size()); ++e) {
    double worst = 0;
    for (int p : m.cand[edges[e].from]) {
      for (int q : m.cand[edges[e].to]) {
        if (p != q) worst = std::max(worst, c.transfer_us(e, p, q));
      }
    }
    big_m += worst;
  }
  m.big_m = big_m;
  const double M = big_m;

  // Columns. x_{v,p} (eq. 5), s_v, T.
  m.x.assign(n, std::vector<int>(k, -1));
  for (int v = 0; v < n; ++v) {
    for (int p : m.cand[v]) {
      const double obj = energy ? c.latency_us(v, p) * c.pu(p).power_w.value_or(0.0) : 0.0;
      m.x[v][p] = m.mb.AddCol(fmt::format("x_{}_{}", v, p), 0, 1, obj, true);
    }
  }
  m.s.resize(n);
  for (int v = 0; v < n; ++v) m.s[v] = m.mb.AddCol(fmt::format("s_{}", v), 0, M, 0, false);
  double t_hi = M;
  if (energy && pr.latency_cap_us) t_hi = std::min(t_hi, *pr.latency_cap_us);
  m.makespan = m.mb.AddCol("T", 0, t_hi, energy ? 0.0 : 1.0, false);

  // Eq. 5: one PU per operator.
  for (int v = 0; v < n; ++v) {
    std::vector<Term> t;
    for (int p : m.cand[v]) t.push_back({m.x[v][p], 1.0});
    m.mb.AddRow(fmt::format("assign_{}", v), std::move(t), 1, 1);
  }

  // Σ_p T_{v,p} x_{v,p}: the duration part of f_v (eq. 7), substituted.
  auto duration_terms = [&](int v, double sign, std::vector<Term>& out) {
    for (int p : m.cand[v]) {
      const double t = c.latency_us(v, p);
      if (t != 0) out.push_back({m.x[v][p], sign * t});
    }
  };

  // Eqs. 8–9: precedence with transfers.
  m.z.assign(edges.size(), -1);
  m.z_us.assign(edges.size(), 0.0);
  m.y.assign(edges.size(), {});
  for (int e = 0; e < static_cast<int>(edges.size()); ++e) {
    const int u = edges[e].from, v = edges[e].to;
    std::vector<Term> prec = {{m.s[v], 1.0}, {m.s[u], -1.0}};
    duration_terms(u, -1.0, prec);
    bool possible = false, symmetric = true;
    for (int p : m.cand[u]) {
      for (int q : m.cand[v]) {
        if (p == q) continue;
        if (c.transfer_us(e, p, q) > 0) possible = true;
        if (c.transfer_us(e, p, q) != c.transfer_us(e, q, p)) symmetric = false;
      }
    }
    if (possible && k == 2 && symmetric) {
      // The paper's z_{u,v} ≥ |x_u − x_v|, x_w = "w on PU 0" (0 when w cannot run there).
      const double t = c.transfer_us(e, 0, 1);
      const int col = m.mb.AddCol(fmt::format("z_{}", e), 0, 1, 0, false);
      m.z[e] = col;
      m.z_us[e] = t;
      std::vector<Term> a = {{col, 1.0}}, b = {{col, 1.0}};
      if (m.x[u][0] >= 0) {
        a.push_back({m.x[u][0], -1.0});
        b.push_back({m.x[u][0], 1.0});
      }
      if (m.x[v][0] >= 0) {
        a.push_back({m.x[v][0], 1.0});
        b.push_back({m.x[v][0], -1.0});
      }
      m.mb.AddRow(fmt::format("z_{}_a", e), std::move(a), 0, kLpInf);
      m.mb.AddRow(fmt::format("z_{}_b", e), std::move(b), 0, kLpInf);
      prec.push_back({col, -t});
    } else if (possible) {
      for (int p : m.cand[u]) {
        for (int q : m.cand[v]) {
          const double t = c.transfer_us(e, p, q);
          if (p == q || t <= 0) continue;
          const int col = m.mb.AddCol(fmt::format("y_{}_{}_{}", e, p, q), 0, 1, 0, false);
          m.y[e].push_back({p, q, col, t});
          m.mb.AddRow(fmt::format("y_{}_{}_{}", e, p, q), {{col, 1.0}, {m.x[u][p], -1.0}, {m.x[v][q], -1.0}}, -1,
                      kLpInf);
          prec.push_back({col, -t});
        }
      }
    }
    m.mb.AddRow(fmt::format("prec_{}", e), std::move(prec), 0, kLpInf);
  }

  // Eq. 6: T ≥ f_v for sinks.
  for (int v = 0; v < n; ++v) {
    if (!g.is_sink(v)) continue;
    std::vector<Term> t = {{m.makespan, 1.0}, {m.s[v], -1.0}};
    duration_terms(v, -1.0, t);
    m.mb.AddRow(fmt::format("sink_{}", v), std::move(t), 0, kLpInf);
  }

  // Eqs. 11–12 on every serial PU both may run on, with one shared o_{u,v}.
  for (const auto& [u, v] : ParallelPairs(g)) {
    std::vector<int> common;
    for (int p : m.cand[u]) {
      if (!c.pu(p).spatial && m.x[v][p] >= 0) common.push_back(p);
    }
    if (common.empty()) continue;
    const int o = m.mb.AddCol(fmt::format("o_{}_{}", u, v), 0, 1, 0, true);
    m.pairs.push_back({u, v, o});
    for (int p : common) {
      // s_v ≥ f_u − M(3 − x_{u,p} − x_{v,p} − o)
      std::vector<Term> a = {{m.s[v], 1.0}, {m.s[u], -1.0}, {m.x[u][p], -M}, {m.x[v][p], -M}, {o, -M}};
      duration_terms(u, -1.0, a);
      m.mb.AddRow(fmt::format("ord_{}_{}_{}_a", u, v, p), std::move(a), -3 * M, kLpInf);
      // s_u ≥ f_v − M(2 − x_{u,p} − x_{v,p} + o)
      std::vector<Term> b = {{m.s[u], 1.0}, {m.s[v], -1.0}, {m.x[u][p], -M}, {m.x[v][p], -M}, {o, M}};
      duration_terms(v, -1.0, b);
      m.mb.AddRow(fmt::format("ord_{}_{}_{}_b", u, v, p), std::move(b), -2 * M, kLpInf);
    }
  }

  // Not in the paper, valid for every schedule: a serial PU runs its
  // operators one at a time, so T ≥ its load. It lifts the LP bound of the
  // big-M model considerably on wide graphs.
  for (int p = 0; p < k; ++p) {
    if (c.pu(p).spatial) continue;
    std::vector<Term> t = {{m.makespan, 1.0}};
    int count = 0;
    for (int v = 0; v < n; ++v) {
      if (m.x[v][p] < 0 || c.latency_us(v, p) == 0) continue;
      t.push_back({m.x[v][p], -c.latency_us(v, p)});
      ++count;
    }
    if (count > 1) m.mb.AddRow(fmt::format("load_{}", p), std::move(t), 0, kLpInf);
  }

  // Eq. 14: crossbar capacity of each spatial PU, where it can bind.
  for (int p = 0; p < k; ++p) {
    if (!c.pu(p).spatial) continue;
    std::vector<Term> t;
    int64_t total = 0;
    for (int v = 0; v < n; ++v) {
      if (m.x[v][p] < 0 || c.crossbars(v, p) == 0) continue;
      t.push_back({m.x[v][p], static_cast<double>(c.crossbars(v, p))});
      total += c.crossbars(v, p);
    }
    if (total > c.pu(p).capacity) {
      m.mb.AddRow(fmt::format("cap_{}", p), std::move(t), -kLpInf, static_cast<double>(c.pu(p).capacity));
    }
  }
  return m;
}

// ---------------------------------------------------------------------------
// Heuristic schedules for the warm start.

struct Candidate {
  std::string label;
  std::vector<int> assignment;
  std::vector<int> order;
  Schedule schedule;
};

// A topological order: among ready operators, the smallest key first.
template <typename Key>
std::vector<int> PriorityTopoOrder(const OpGraph& g, Key key) {
  const int n = g.size();
  std::vector<int> indeg(n);
  for (int v = 0; v < n; ++v) indeg[v] = static_cast<int>(g.in_edges(v).size());
  auto cmp = [&](int a, int b) { return key(b) < key(a); };  // min-heap on key
  std::priority_queue<int, std::vector<int>, decltype(cmp)> ready(cmp);
  for (int v = 0; v < n; ++v) {
    if (indeg[v] == 0) ready.push(v);
  }
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int v = ready.top();
    ready.pop();
    order.push_back(v);
    for (int e : g.out_edges(v)) {
      const int w = g.edges()[e].to;
      if (--indeg[w] == 0) ready.push(w);
    }
  }
  return order;
}

// Bottom level under an assignment: longest path (durations + transfers) to a sink.
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

// Per-operator best PU by `cost`, then moves operators off over-full spatial
// PUs, always the one whose move loses the least per crossbar freed.
std::optional<std::vector<int>> GreedyWithRepair(const Problem& pr, const std::vector<std::vector<int>>& cand,
                                                 const std::function<double(int, int)>& cost) {
  const CostModel& c = *pr.costs;
  const int n = c.num_ops();
  std::vector<int> a(n);
  for (int v = 0; v < n; ++v) {
    a[v] = *std::min_element(cand[v].begin(), cand[v].end(), [&](int p, int q) { return cost(v, p) < cost(v, q); });
  }
  std::vector<int64_t> used(c.num_pus(), 0);
  for (int v = 0; v < n; ++v) used[a[v]] += c.pu(a[v]).spatial ? c.crossbars(v, a[v]) : 0;
  for (int p = 0; p < c.num_pus(); ++p) {
    while (c.pu(p).spatial && used[p] > c.pu(p).capacity) {
      int best_v = -1, best_q = -1;
      double best_ratio = std::numeric_limits<double>::infinity();
      for (int v = 0; v < n; ++v) {
        if (a[v] != p || c.crossbars(v, p) == 0) continue;
        for (int q : cand[v]) {
          if (q == p) continue;
          if (c.pu(q).spatial && used[q] + c.crossbars(v, q) > c.pu(q).capacity) continue;
          const double ratio = (cost(v, q) - cost(v, p)) / static_cast<double>(c.crossbars(v, p));
          if (ratio < best_ratio) {
            best_ratio = ratio;
            best_v = v;
            best_q = q;
          }
        }
      }
      if (best_v < 0) return std::nullopt;
      used[p] -= c.crossbars(best_v, p);
      if (c.pu(best_q).spatial) used[best_q] += c.crossbars(best_v, best_q);
      a[best_v] = best_q;
    }
  }
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

// A schedule as a warm-start candidate: its assignment, and its dispatch
// order by the midpoint of each interval (on a serial PU, u before v means
// f_u ≤ s_v, so midpoints keep that order even for zero-duration operators),
// re-timed as the list schedule of that order, which is no longer.
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

std::optional<Candidate> BestHeuristic(const Problem& pr, const std::vector<std::vector<int>>& cand) {
  const CostModel& c = *pr.costs;
  const int n = c.num_ops();
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
    auto energy = [&](int v, int p) { return c.latency_us(v, p) * c.pu(p).power_w.value_or(0.0); };
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

// The full model solution of a list schedule: x, s, T, z/y and o (o_{u,v} = 1
// iff u was dispatched before v, which on a shared serial PU means u ran first).
std::vector<double> ModelValues(const Problem& pr, const IlpModel& m, const Candidate& h) {
  const OpGraph& g = *pr.graph;
  std::vector<double> x(m.mb.num_cols(), 0.0);
  const auto& a = h.assignment;
  for (int v = 0; v < g.size(); ++v) {
    x[m.x[v][a[v]]] = 1.0;
    x[m.s[v]] = h.schedule.ops[v].start_us;
  }
  x[m.makespan] = h.schedule.makespan_us;
  for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
    const int u = g.edges()[e].from, v = g.edges()[e].to;
    if (m.z[e] >= 0) x[m.z[e]] = a[u] != a[v] ? 1.0 : 0.0;
    for (const TransferVar& t : m.y[e]) x[t.col] = (a[u] == t.p && a[v] == t.q) ? 1.0 : 0.0;
  }
  std::vector<int> pos(g.size());
  for (int i = 0; i < static_cast<int>(h.order.size()); ++i) pos[h.order[i]] = i;
  for (const auto& pair : m.pairs) x[pair.col] = pos[pair.u] < pos[pair.v] ? 1.0 : 0.0;
  return x;
}

// ---------------------------------------------------------------------------
// Schedules from the ILP solution.

// True when `s` satisfies every constraint exactly (no tolerance).
bool ExactlyFeasible(const Problem& pr, const Schedule& s) {
  const OpGraph& g = *pr.graph;
  const CostModel& c = *pr.costs;
  std::vector<int> a(g.size());
  for (int v = 0; v < g.size(); ++v) {
    const ScheduledOp& op = s.ops[v];
    a[v] = op.device;
    if (op.device < 0 || !c.supported(v, op.device) || op.start_us < 0) return false;
    if (op.finish_us != op.start_us + c.latency_us(v, op.device)) return false;
  }
  if (!FitsCapacity(pr, a)) return false;
  for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
    const int u = g.edges()[e].from, v = g.edges()[e].to;
    const double tr = a[u] != a[v] ? c.transfer_us(e, a[u], a[v]) : 0.0;
    if (s.ops[u].finish_us + tr > s.ops[v].start_us) return false;
  }
  for (int p = 0; p < c.num_pus(); ++p) {
    if (c.pu(p).spatial) continue;
    std::vector<int> on;
    for (int v = 0; v < g.size(); ++v) {
      if (a[v] == p) on.push_back(v);
    }
    std::sort(on.begin(), on.end(), [&](int x, int y) {
      return std::tie(s.ops[x].start_us, s.ops[x].finish_us) < std::tie(s.ops[y].start_us, s.ops[y].finish_us);
    });
    for (size_t i = 1; i < on.size(); ++i) {
      if (s.ops[on[i - 1]].finish_us > s.ops[on[i]].start_us) return false;
    }
  }
  double latest = 0;
  for (const ScheduledOp& op : s.ops) latest = std::max(latest, op.finish_us);
  return latest == s.makespan_us;
}

double ObjectiveOf(const Problem& pr, const Schedule& s) {
  if (pr.objective == Objective::kEnergy) return s.energy_uj.value_or(std::numeric_limits<double>::quiet_NaN());
  return s.makespan_us;
}

// ---------------------------------------------------------------------------
// CBC.

// CbcMain1 parses its arguments through process-wide globals
// (CbcOrClpRead_mode, ...), so concurrent calls would corrupt each other.
std::mutex& CbcMutex() {
  static std::mutex mu;
  return mu;
}

int CbcCallback(CbcModel* /*model*/, int /*where_from*/) { return 0; }

Status WriteModelFile(OsiClpSolverInterface& solver, const std::string& path, bool mps) {
  // CBC's writers append extensions and gzip MPS files; write a temporary
  // file and move it, so that the file lands exactly at `path`.
  const std::string tmp = path + ".hetplan-tmp";
  std::error_code ec;
  if (mps) {
    // ClpModel::writeMps writes uncompressed; formatType 1 = extra accuracy.
    if (solver.getModelPtr()->writeMps(tmp.c_str(), 1, 2, 0.0) != 0 || !std::filesystem::exists(tmp, ec)) {
      std::filesystem::remove(tmp, ec);
      return Error(ErrorCode::kIoError, "{}: cannot write the MPS model; check that the folder exists and is writable",
                   path);
    }
  } else {
    std::FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) {
      return Error(ErrorCode::kIoError, "{}: cannot write the LP model; check that the folder exists and is writable",
                   path);
    }
    solver.writeLp(f, /*epsilon=*/1e-300, /*numberAcross=*/8, /*decimals=*/15, /*objSense=*/0.0, /*useRowNames=*/true);
    const bool bad = std::ferror(f) != 0;
    if (std::fclose(f) != 0 || bad) {
      std::filesystem::remove(tmp, ec);
      return Error(ErrorCode::kIoError, "{}: error while writing the LP model (disk full?)", path);
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return Error(ErrorCode::kIoError, "{}: cannot move the model file into place: {}", path, ec.message());
  }
  return Status::Ok();
}

// Loads the model into `solver`: columns, rows, integrality and names.
void LoadModel(const ModelBuilder& mb, OsiClpSolverInterface* solver) {
  const int ncols = mb.num_cols(), nrows = mb.num_rows();
  std::vector<int> starts, lengths, indices;
  std::vector<double> values, row_lo, row_hi;
  std::vector<std::string> row_names;
  starts.reserve(nrows + 1);
  for (const Row& r : mb.rows()) {
    starts.push_back(static_cast<int>(indices.size()));
    lengths.push_back(static_cast<int>(r.terms.size()));
    for (const Term& t : r.terms) {
      indices.push_back(t.col);
      values.push_back(t.coef);
    }
    row_lo.push_back(r.lo);
    row_hi.push_back(r.hi);
    row_names.push_back(r.name);
  }
  starts.push_back(static_cast<int>(indices.size()));
  CoinPackedMatrix matrix(/*colordered=*/false, ncols, nrows, static_cast<CoinBigIndex>(indices.size()),
                          values.data(), indices.data(), starts.data(), lengths.data());
  solver->loadProblem(matrix, mb.lo().data(), mb.hi().data(), mb.obj().data(), row_lo.data(), row_hi.data());
  for (int j = 0; j < ncols; ++j) {
    if (mb.integer()[j]) solver->setInteger(j);
  }
  solver->setStrParam(OsiProbName, "hetplan");
  solver->getModelPtr()->copyNames(row_names, mb.names());
}

// Writes the model where options.write_lp / write_mps ask, without solving.
Status WriteModels(const IlpModel& m, const SolveOptions& options) {
  try {
    CoinMessageHandler handler(stderr);
    handler.setLogLevel(0);
    OsiClpSolverInterface solver;
    solver.passInMessageHandler(&handler);
    LoadModel(m.mb, &solver);
    if (!options.write_lp.empty()) HETPLAN_RETURN_IF_ERROR(WriteModelFile(solver, options.write_lp, false));
    if (!options.write_mps.empty()) HETPLAN_RETURN_IF_ERROR(WriteModelFile(solver, options.write_mps, true));
  } catch (const CoinError& e) {
    return Error(ErrorCode::kInternal, "ilp: CBC failed in {}::{}: {}", e.className(), e.methodName(), e.message());
  }
  return Status::Ok();
}

struct CbcOutcome {
  std::optional<std::vector<double>> solution;
  bool proven_optimal = false;  // finished, not on a limit, within the gap tolerance
  bool proven_infeasible = false;
  double objective = std::numeric_limits<double>::quiet_NaN();
  double bound = std::numeric_limits<double>::quiet_NaN();
  int status = -1, secondary = -1;
  bool warm_taken = false;
};

class IlpCbcSolver final : public Solver {
 public:
  std::string name() const override { return "ilp"; }

  Result<SolveResult> SolveValidated(const Problem& pr, const SolveOptions& options) const override {
    const auto t0 = Clock::now();
    const std::string formulation = options.formulation.empty() ? "strong" : options.formulation;
    if (formulation != "paper" && formulation != "strong") {
      return Error(ErrorCode::kInvalidArgument, "ilp: formulation '{}' is unknown; available: paper, strong",
                   options.formulation);
    }
    const OpGraph& g = *pr.graph;
    const CostModel& c = *pr.costs;
    if (pr.objective == Objective::kEnergy) {
      const auto cand = Candidates(c);
      for (int p = 0; p < c.num_pus(); ++p) {
        bool used = false;
        for (int v = 0; v < g.size() && !used; ++v)
          used = std::find(cand[v].begin(), cand[v].end(), p) != cand[v].end();
        if (used && !c.pu(p).power_w) {
          return Error(ErrorCode::kInvalidArgument,
                       "ilp: the energy objective needs the power of every PU, but PU '{}' has no power_w; set it in "
                       "the platform (e.g. --set {}.power_w=5) or use the latency objective",
                       c.pu(p).name, c.pu(p).name);
        }
      }
    }

    SolveResult result;
    result.solver = name();
    result.formulation = "paper";
    if (g.size() == 0) {  // nothing to place: the empty schedule is optimal
      result.formulation = formulation;
      result.status = SolveStatus::kOptimal;
      result.schedule = Schedule{};
      result.schedule->energy_uj = 0.0;
      result.objective = result.bound = result.gap = 0;
      result.seconds = SecondsSince(t0);
      return result;
    }
    if (formulation == "strong") {
      if (pr.objective == Objective::kLatency) return SolveStrong(pr, options, t0);
      result.notes.push_back("the strong formulation covers the latency objective; energy is solved with the paper's");
    }
    return SolvePaper(pr, options, t0, std::move(result), nullptr);
  }

 private:
  // The CIM paper's MIP on CBC, warm-started from the best heuristic schedule
  // or from `incumbent` when that is better. `result` carries notes so far.
  Result<SolveResult> SolvePaper(const Problem& pr, const SolveOptions& options, Clock::time_point t0,
                                 SolveResult result, const Schedule* incumbent) const {
    const OpGraph& g = *pr.graph;
    const CostModel& c = *pr.costs;
    result.solver = name();
    result.formulation = "paper";
    IlpModel m = BuildModel(pr);
    result.big_m = m.big_m;
    result.variables = m.mb.num_cols();
    result.constraints = m.mb.num_rows();

    std::optional<Candidate> warm;
    std::vector<double> warm_values;
    if (options.warm_start) {
      warm = BestHeuristic(pr, m.cand);
      if (incumbent != nullptr && (!warm || ObjectiveOf(pr, *incumbent) < ObjectiveOf(pr, warm->schedule))) {
        warm = FromSchedule(pr, *incumbent, "the exact search's best schedule");
      }
      if (warm) {
        warm_values = ModelValues(pr, m, *warm);
        const double viol = m.mb.MaxViolation(warm_values);
        if (viol > 1e-9) {
          result.notes.push_back(fmt::format("warm start dropped: violates the model by {:g} (a bug)", viol));
          warm.reset();
        } else {
          result.notes.push_back(fmt::format("warm start: {} ({} {:g})", warm->label,
                                             pr.objective == Objective::kEnergy ? "energy µJ" : "makespan µs",
                                             ObjectiveOf(pr, warm->schedule)));
        }
      }
    }

    int threads = options.threads;
    if (threads == 0) threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    if (threads > 1 && !CbcModel::haveMultiThreadSupport()) {
      result.notes.push_back(fmt::format("this CBC was built without threads; {} requested, 1 used", threads));
      threads = 1;
    }

    auto run = RunCbc(pr, m, options, threads, warm ? &warm_values : nullptr, SecondsSince(t0));
    if (!run.ok()) return run.status();
    const CbcOutcome& out = *run;
    if (warm && !out.warm_taken) result.notes.push_back("CBC rejected the warm start (numerical trouble)");

    // The schedule: the ILP's own, and the same assignment and order re-timed.
    std::optional<Schedule> schedule;
    if (out.solution) {
      const std::vector<double>& sol = *out.solution;
      std::vector<int> a(g.size(), -1);
      Schedule ilp;
      ilp.ops.assign(g.size(), ScheduledOp{});
      bool ok = true;
      for (int v = 0; v < g.size(); ++v) {
        double best = -1;
        for (int p : m.cand[v]) {
          if (sol[m.x[v][p]] > best) {
            best = sol[m.x[v][p]];
            a[v] = p;
          }
        }
        ok = ok && best > 0.5;
        ScheduledOp& op = ilp.ops[v];
        op.device = a[v];
        op.start_us = std::max(0.0, sol[m.s[v]]);
        op.finish_us = op.start_us + c.latency_us(v, a[v]);
        ilp.makespan_us = std::max(ilp.makespan_us, op.finish_us);
      }
      ilp.energy_uj = ScheduleEnergy(pr, ilp);
      if (ok && FitsCapacity(pr, a)) {
        std::vector<int> order =
            // Ordered by the midpoint of each interval: on a serial PU, u before
            // v means f_u ≤ s_v, so the midpoints keep that order even when
            // CBC's rounding puts a zero-duration operator a hair after the
            // start of the operator it precedes (the start alone would not).
            PriorityTopoOrder(g, [&](int v) {
              return std::make_pair(ilp.ops[v].start_us + ilp.ops[v].finish_us, g.topo_position(v));
            });
        Schedule retimed = ListSchedule(pr, a, &order);
        schedule = (ilp.makespan_us < retimed.makespan_us && ExactlyFeasible(pr, ilp)) ? ilp : retimed;
      } else {
        result.notes.push_back("CBC's solution is not a valid assignment (numerical trouble); ignored");
      }
    }

    if (schedule) {
      result.status = out.proven_optimal ? SolveStatus::kOptimal : SolveStatus::kFeasible;
    } else if (warm && !out.proven_infeasible) {
      // CBC stopped before reporting an incumbent: the warm start is one.
      schedule = warm->schedule;
      result.status = SolveStatus::kFeasible;
      result.notes.push_back("CBC returned no incumbent; the schedule is the warm start");
    } else if (warm) {
      schedule = warm->schedule;
      result.status = SolveStatus::kFeasible;
      result.notes.push_back("CBC reported infeasible although the warm start is feasible (numerical trouble)");
    } else if (out.proven_infeasible) {
      result.status = SolveStatus::kInfeasible;
    } else {
      result.status = SolveStatus::kNoSolution;
    }

    if (schedule) {
      result.objective = ObjectiveOf(pr, *schedule);
      double bound = out.bound;
      // Secondary status 1: nothing beats CBC's incumbent; the bound CBC keeps
      // then is stale, the incumbent's value is the proven one.
      if (result.status == SolveStatus::kOptimal && out.secondary == 1 && std::isfinite(out.objective)) {
        bound = out.objective;
      }
      if (!std::isfinite(bound) || std::fabs(bound) >= 1e29) bound = std::numeric_limits<double>::quiet_NaN();
      if (result.status == SolveStatus::kOptimal && std::isnan(bound)) bound = result.objective;
      if (result.status == SolveStatus::kOptimal && std::isfinite(out.objective) &&
          result.objective > out.objective + 1e-6 * std::max(1.0, std::fabs(out.objective))) {
        // Never claim more than the schedule we return proves.
        result.status = SolveStatus::kFeasible;
        result.notes.push_back(fmt::format("the returned schedule is {:g} above CBC's optimum; not claimed optimal",
                                           result.objective - out.objective));
      }
      if (!std::isnan(bound)) bound = std::min(bound, result.objective);
      result.bound = bound;
      if (!std::isnan(bound)) {
        if (std::fabs(result.objective) < 1e-12) {
          result.gap = result.objective - bound <= 1e-12 ? 0.0 : std::numeric_limits<double>::infinity();
        } else {
          result.gap = (result.objective - bound) / std::fabs(result.objective);
        }
      }
      result.schedule = std::move(schedule);
    } else if (std::isfinite(out.bound) && std::fabs(out.bound) < 1e29) {
      result.bound = out.bound;
    }
    result.notes.push_back(fmt::format("CBC status {} / {}", out.status, out.secondary));
    result.seconds = SecondsSince(t0);
    return result;
  }

  // The "strong" formulation for the latency objective: the exact search of
  // ilp_search.cc (series decomposition, assignment-first branch-and-bound,
  // sequencing search). No MIP is solved; --write-lp/--write-mps still export
  // the paper's model of the instance.
  Result<SolveResult> SolveStrong(const Problem& pr, const SolveOptions& options, Clock::time_point t0) const {
    const CostModel& c = *pr.costs;
    SolveResult result;
    result.solver = "ilp";
    result.formulation = "strong";
    if (!options.write_lp.empty() || !options.write_mps.empty()) {
      IlpModel m = BuildModel(pr);
      HETPLAN_RETURN_IF_ERROR(WriteModels(m, options));
      result.notes.push_back("the exported LP/MPS model is the paper's formulation of this instance");
    }
    const std::vector<std::vector<int>> cand = Candidates(c);
    Clock::time_point deadline = Clock::time_point::max();
    if (std::isfinite(options.time_limit_s)) {
      const double left = std::max(options.time_limit_s - SecondsSince(t0), 0.0);
      if (left < 1e6) {
        deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(left));
      }
    }
    auto search = [&](int64_t node_limit) {
      ilp_internal::SearchOutcome out =
          ilp_internal::SolveLatencyBySearch(pr, cand, deadline, options.relative_gap, node_limit);
      result.notes.push_back(fmt::format(
          "strong: {} segment{} (largest {} operators), {} searches, {} branch-and-bound nodes{}", out.stats.segments,
          out.stats.segments == 1 ? "" : "s", out.stats.largest_segment, out.stats.searches, out.stats.nodes,
          out.stats.budget_exhausted ? fmt::format(", stopped at the node limit ({})", node_limit) : ""));
      return out;
    };
    ilp_internal::SearchOutcome out = search(options.search_node_limit);
    if (out.infeasible) {
      result.status = SolveStatus::kInfeasible;
      result.seconds = SecondsSince(t0);
      return result;
    }
    std::optional<Schedule> schedule = out.schedule;
    double bound = std::isfinite(out.bound) ? out.bound : std::numeric_limits<double>::quiet_NaN();
    bool complete = out.complete;
    if (!complete && options.warm_start) {
      // Stopped early: the best heuristic schedule may still beat the search's.
      auto warm = BestHeuristic(pr, cand);
      if (warm && (!schedule || warm->schedule.makespan_us < schedule->makespan_us)) {
        schedule = warm->schedule;
        result.notes.push_back(fmt::format("heuristic schedule ({}) better than the search's so far", warm->label));
      }
    }
    auto proven = [&]() {
      if (!schedule || std::isnan(bound)) return false;
      const double z = schedule->makespan_us;
      return z - bound <= options.relative_gap * std::max(z, 1e-12) + 1e-9;
    };
    auto time_left = [&]() {
      return std::isfinite(options.time_limit_s) ? options.time_limit_s - SecondsSince(t0)
                                                 : std::numeric_limits<double>::infinity();
    };
    // The search spent its node budget without a proof: graphs with many
    // parallel branches on one serial PU can be easier for the MIP's LP
    // bound. The paper's MIP gets a share of the time left (half of it, at
    // most four times what the search took and at least 5 s), warm-started
    // from the best schedule so far; if it does not settle the instance
    // either, the search resumes without a node limit for the rest. Every
    // bound either method proves is valid for the same problem, so the best
    // is kept.
    if (out.stats.budget_exhausted && !proven() && time_left() > 0.05) {
      SolveOptions paper = options;
      paper.formulation = "paper";
      const double left = time_left();
      const double share = std::min(left / 2, std::max(5.0, 4 * SecondsSince(t0)));
      paper.time_limit_s = SecondsSince(t0) + share;
      auto mip = SolvePaper(pr, paper, t0, SolveResult{}, schedule ? &*schedule : nullptr);
      if (!mip.ok()) return mip.status();
      for (const std::string& note : mip->notes) result.notes.push_back("paper MIP fallback: " + note);
      result.variables = mip->variables;
      result.constraints = mip->constraints;
      result.big_m = mip->big_m;
      if (mip->schedule && (!schedule || mip->schedule->makespan_us < schedule->makespan_us)) {
        schedule = mip->schedule;
      }
      if (!std::isnan(mip->bound)) bound = std::isnan(bound) ? mip->bound : std::max(bound, mip->bound);
      if (mip->status == SolveStatus::kInfeasible) {
        result.status = SolveStatus::kInfeasible;
        result.seconds = SecondsSince(t0);
        return result;
      }
      if (!proven() && time_left() > 0.05) {
        ilp_internal::SearchOutcome again = search(0);
        // A finished search's schedule is taken on a tie: it does not depend
        // on where a time limit stopped CBC.
        if (again.schedule && (!schedule || again.schedule->makespan_us < schedule->makespan_us ||
                               (again.complete && again.schedule->makespan_us <= schedule->makespan_us))) {
          schedule = again.schedule;
        }
        if (std::isfinite(again.bound)) bound = std::isnan(bound) ? again.bound : std::max(bound, again.bound);
        complete = again.complete;
      }
      result.notes.push_back(fmt::format("the exact search stopped at its node limit ({}; --search-nodes); {}",
                                         options.search_node_limit,
                                         proven() ? "the paper's MIP on CBC completed the proof"
                                                  : "neither method proved the gap in time"));
    }
    if (!schedule) {
      result.status = SolveStatus::kNoSolution;
      result.bound = bound;
      result.seconds = SecondsSince(t0);
      return result;
    }
    result.objective = schedule->makespan_us;
    if (!std::isnan(bound)) {
      bound = std::min(bound, result.objective);
      if (complete && result.objective - bound <= 1e-9 * std::max(1.0, result.objective)) {
        bound = result.objective;  // the same schedule, summed two ways
      }
      result.bound = bound;
      result.gap = result.objective > 1e-12 ? (result.objective - bound) / result.objective
                                            : (result.objective - bound <= 1e-12 ? 0.0 : 1.0);
    }
    // Optimal when a proven bound is within the gap, whichever method proved it.
    result.status = proven() ? SolveStatus::kOptimal : SolveStatus::kFeasible;
    result.schedule = std::move(schedule);
    result.seconds = SecondsSince(t0);
    return result;
  }

  static Result<CbcOutcome> RunCbc(const Problem& pr, const IlpModel& m, const SolveOptions& options, int threads,
                                   const std::vector<double>* warm, double elapsed_s) {
    const ModelBuilder& mb = m.mb;
    const int ncols = mb.num_cols();
    try {
      CoinMessageHandler handler(stderr);
      handler.setLogLevel(options.log ? 1 : 0);
      OsiClpSolverInterface solver;
      solver.passInMessageHandler(&handler);
      LoadModel(mb, &solver);
      if (!options.write_lp.empty()) HETPLAN_RETURN_IF_ERROR(WriteModelFile(solver, options.write_lp, false));
      if (!options.write_mps.empty()) HETPLAN_RETURN_IF_ERROR(WriteModelFile(solver, options.write_mps, true));

      std::lock_guard<std::mutex> lock(CbcMutex());
      CbcModel model(solver);
      model.passInMessageHandler(&handler);
      bool warm_taken = false;
      if (warm != nullptr) {
        // The full solution as CBC's incumbent. With the check on, CBC
        // verifies it (integers fixed, LP re-solved) and keeps the basis,
        // which in our measurements also halved the time to the first node
        // compared with setMIPStart.
        double obj = 0;
        for (int j = 0; j < ncols; ++j) obj += mb.obj()[j] * (*warm)[j];
        model.setBestSolution(warm->data(), ncols, obj, /*checkSolution=*/true);
        warm_taken = model.bestSolution() != nullptr;
      }
      CbcSolverUsefulData data;
      data.noPrinting_ = !options.log;
      CbcMain0(model, data);
      // CglPreProcess is off: CBC 2.10.8 crashes in CglPreProcess::postProcess
      // when the time limit ends the search right after a MIP start (and may
      // then also lose the incumbent and report "infeasible"). Preprocessing
      // did not strengthen this big-M model in our measurements.
      // The feasibility pump is off: its mini branch-and-bound preprocesses
      // the LP, and Clp's "crunch" then asserts and aborts the process when
      // that LP shrinks to a couple of rows, as the paper's model of a small
      // graph can (coin-or/Clp#288, coin-or/Cbc#684; CBC 2.10.8 here). Every
      // solve starts from a heuristic schedule anyway.
      std::vector<std::string> args = {"hetplan", "-log",       options.log ? "1" : "0", "-slog", "0", "-preprocess",
                                       "off",     "-feasibilityPump", "off"};
      if (threads > 1) {
        // 100 + n: n threads with a repeatable search (same input, same
        // schedule, unless a time limit cuts the search short).
        args.insert(args.end(), {"-threads", std::to_string(100 + threads)});
      }
      if (std::isfinite(options.time_limit_s)) {
        const double left = std::max(options.time_limit_s - elapsed_s, 1e-3);
        args.insert(args.end(), {"-timeMode", "elapsed", "-sec", fmt::format("{:.6f}", left)});
      }
      args.insert(args.end(), {"-ratio", fmt::format("{:g}", options.relative_gap), "-solve", "-quit"});
      std::vector<const char*> argv;
      for (const std::string& a : args) argv.push_back(a.c_str());
      CbcMain1(static_cast<int>(argv.size()), argv.data(), model, CbcCallback, data);

      CbcOutcome out;
      out.warm_taken = warm_taken;
      out.status = model.status();
      out.secondary = model.secondaryStatus();
      const double* best = model.bestSolution();
      if (best != nullptr && model.getNumCols() == ncols) {
        out.solution = std::vector<double>(best, best + ncols);
        out.objective = model.getObjValue();
      }
      out.bound = model.getBestPossibleObjValue();
      // Finished (status 0) and not on a limit. Secondary 1 with an incumbent:
      // nothing beats it (the LP is infeasible under the cutoff); 2: stopped
      // on the gap tolerance.
      const bool on_limit =
          model.isSecondsLimitReached() || model.isNodeLimitReached() || model.isSolutionLimitReached();
      out.proven_optimal = out.solution && out.status == 0 && !on_limit &&
                           (out.secondary == 0 || out.secondary == 1 || out.secondary == 2);
      out.proven_infeasible = !out.solution && model.isProvenInfeasible();
      return out;
    } catch (const CoinError& e) {
      return Error(ErrorCode::kInternal, "ilp: CBC failed in {}::{}: {}", e.className(), e.methodName(), e.message());
    } catch (const std::exception& e) {
      return Error(ErrorCode::kInternal, "ilp: CBC failed: {}", e.what());
    }
  }
};

}  // namespace

std::unique_ptr<Solver> MakeIlpCbcSolver() { return std::make_unique<IlpCbcSolver>(); }

}  // namespace hetplan
