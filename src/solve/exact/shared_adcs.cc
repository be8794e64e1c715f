// The exact search when operators on a spatial PU share an ADC pool
// (exact/search.h, SolveSharedAdcsBySearch). The pool is a cumulative
// resource over time, which the series decomposition and the sequencing
// search of the other files do not model, so this is a search of its own:
// a depth-first branch-and-bound over the serial schedule-generation scheme.
//
// Why it is exact: some optimal schedule is active (no operator can start
// earlier without moving another), and an active schedule is what the
// serial scheme builds from its operators sorted by start, each placed at
// the earliest time its inputs, its serial PU and the pool allow given the
// operators placed before it. The search places operators one at a time,
// choosing the operator and its PU, and keeps only placements whose
// (start, rank) follows the previous one's and where the operator could not
// have started earlier (a gap on its serial PU or in the pool): every
// sequence it skips is not such a sorted list, so the optimum's is explored.
// Ties in start are broken by the rank in the graph's topological order, not
// by id, so that an operator that takes no time and its successor starting
// with it stay in their order.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "hetplan/util/limits.h"
#include "hetplan/solve/list_schedule.h"
#include "solve/exact/search_internal.h"
#include "solve/warm_start.h"

namespace hetplan::exact_internal {
namespace {


// The earliest t ≥ ready at which [t, t + dur) is free on a serial PU whose
// busy intervals are `busy` (disjoint, sorted by start).
double EarliestGap(const std::vector<std::pair<double, double>>& busy, double ready, double dur) {
  double t = ready;
  for (const auto& [s, f] : busy) {
    if (f <= t) continue;
    // [t, t + dur) misses [s, f); an instant (dur 0) may sit at s itself.
    if (dur > 0 ? t + dur <= s : t <= s) return t;
    t = f;
  }
  return t;
}

class SharedAdcSearch {
 public:
  SharedAdcSearch(const Problem& pr, const std::vector<std::vector<int>>& cand, Clock::time_point deadline,
                  double relative_gap, int64_t node_limit, const std::atomic<bool>* interrupt)
      : pr_(pr), g_(*pr.graph), c_(*pr.costs), cand_(cand), n_(g_.size()), k_(c_.num_pus()), deadline_(deadline),
        gap_(relative_gap), node_limit_(node_limit), interrupt_(interrupt) {
    // rem_[v]: v's shortest time plus its longest chain of successors at
    // their shortest times, no transfers: a lower bound from v's start on.
    rem_.assign(n_, 0.0);
    const std::vector<int>& topo = g_.topological_order();
    rank_.assign(n_, 0);
    for (int i = 0; i < n_; ++i) rank_[topo[i]] = i;
    for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
      const int v = *it;
      double after = 0;
      for (int e : g_.out_edges(v)) after = std::max(after, rem_[g_.edges()[e].to]);
      rem_[v] = MinDur(v) + after;
    }
  }

  SearchOutcome Run() {
    SearchOutcome out;
    out.stats.segments = 1;
    out.stats.largest_segment = n_;
    if (auto warm = warm_start::BestHeuristic(pr_, cand_)) {
      warm = warm_start::WithGreedyRewrites(pr_, std::move(*warm));  // base itself without a reprogramming PU
      best_ = warm->schedule;
      upper_ = warm->schedule.makespan_us;
    }
    pu_.assign(n_, -1);
    rewritten_.assign(n_, 0);
    start_.assign(n_, 0.0);
    finish_.assign(n_, 0.0);
    preds_left_.assign(n_, 0);
    for (int v = 0; v < n_; ++v) preds_left_[v] = static_cast<int>(g_.in_edges(v).size());
    busy_.assign(k_, {});
    used_.assign(k_, 0);
    for (int q = 0; q < k_; ++q) pools_.emplace_back(c_.pu(q).adc_pool);
    root_ = Bound(0.0, 0.0);
    // One pass per budget of resident crossbars on the reprogramming PU (the
    // rewritten operators take turns in what it leaves), largest first; one
    // pass without one.
    for (int q = 0; q < k_; ++q) {
      if (c_.pu(q).reprogram) rw_pu_ = q;
    }
    for (int64_t budget : ResidentBudgets()) {
      if (Stop()) break;
      // Writes spent elsewhere (another phase's) need the crossbars this budget leaves.
      if (rw_pu_ >= 0 && !WithinEndurance(c_.pu(rw_pu_), 0, c_.pu(rw_pu_).capacity - budget)) continue;
      ++out.stats.searches;
      resident_budget_ = budget;
      rewrite_ = CumulativeProfile(rw_pu_ >= 0 ? c_.pu(rw_pu_).capacity - budget : 0);
      Rec(0.0, -1, 0.0);
    }
    out.stats.nodes = nodes_;
    out.stats.budget_exhausted = node_limit_ > 0 && nodes_ > node_limit_;
    out.stats.interrupted = interrupted_;
    out.complete = !stopped_;
    if (!best_) {
      out.infeasible = out.complete;
      out.bound = out.complete ? kInf : root_;
      return out;
    }
    out.schedule = best_;
    out.objective = best_->makespan_us;
    // Every completion not searched is at least the least bound it was left
    // with (at a stop) or pruned with (within the gap tolerance); every
    // other one is at least the incumbent.
    out.bound = std::max(root_, std::min(out.objective, open_bound_));
    return out;
  }

 private:
  // The budgets of resident crossbars on the reprogramming PU worth a pass:
  // every sum of its operators' crossbars up to its capacity, largest first
  // (its capacity alone without reprogramming: the usual knapsack).
  std::vector<int64_t> ResidentBudgets() const {
    if (rw_pu_ < 0) return {std::numeric_limits<int64_t>::max()};
    const int64_t cap = c_.pu(rw_pu_).capacity;
    int64_t total = 0;
    const auto resident_xb = [&](int v) {
      return c_.supported(v, rw_pu_) && !c_.rewrite_only(v, rw_pu_) ? c_.crossbars(v, rw_pu_) : 0;
    };
    for (int v = 0; v < n_; ++v) total += resident_xb(v);
    std::vector<char> sum(static_cast<size_t>(std::min(cap, total)) + 1, 0);
    sum[0] = 1;
    for (int v = 0; v < n_; ++v) {
      const int64_t x = resident_xb(v);
      if (x <= 0) continue;
      for (int64_t b = static_cast<int64_t>(sum.size()) - 1; b >= x; --b) sum[b] = sum[b] || sum[b - x];
    }
    std::vector<int64_t> budgets;
    for (int64_t b = static_cast<int64_t>(sum.size()) - 1; b >= 0; --b) {
      if (sum[b]) budgets.push_back(b);
    }
    return budgets;
  }

  double MinDur(int v) const {
    double d = kInf;
    for (int q : cand_[v]) d = std::min(d, c_.latency_us(v, q));
    return d;
  }

  // A lower bound on every completion when the operators placed so far end
  // by `makespan` and the next one starts no earlier than `last_start`.
  double Bound(double last_start, double makespan) const {
    double lb = makespan;
    std::vector<double> serial_load(k_, 0.0);
    for (int v = 0; v < n_; ++v) {
      if (pu_[v] >= 0) continue;
      double est = last_start;
      for (int e : g_.in_edges(v)) {
        const int u = g_.edges()[e].from;
        if (pu_[u] >= 0) est = std::max(est, finish_[u]);
      }
      lb = std::max(lb, est + rem_[v]);
      if (cand_[v].size() == 1 && !c_.pu(cand_[v][0]).spatial) serial_load[cand_[v][0]] += MinDur(v);
    }
    for (int q = 0; q < k_; ++q) {
      if (serial_load[q] == 0) continue;
      const double free_at = busy_[q].empty() ? 0.0 : busy_[q].back().second;
      lb = std::max(lb, std::max(free_at, last_start) + serial_load[q]);
    }
    return lb;
  }

  bool Stop() {
    if (stopped_) return true;
    if ((nodes_ & 255) == 0) {
      if (Clock::now() > deadline_) stopped_ = true;
      if (interrupt_ != nullptr && interrupt_->load(std::memory_order_relaxed)) stopped_ = interrupted_ = true;
    }
    if (node_limit_ > 0 && nodes_ > node_limit_) stopped_ = true;
    return stopped_;
  }

  // Prunable: no completion below `lb` can improve the incumbent by more
  // than the gap tolerance.
  bool Prune(double lb) const { return std::isfinite(upper_) && lb >= upper_ - gap_ * upper_ - Tol(upper_); }

  struct Child {
    int v = 0, q = 0;
    bool rewrite = false;
    double start = 0, bound = 0;
  };

  // v on q, rewritten or resident, at its earliest start given the placed
  // operators (gaps included): the serial scheme's placement; false when it
  // does not fit.
  bool Placement(int v, int q, bool rewrite, Child* ch) const {
    const PuInfo& pu = c_.pu(q);
    const int64_t xb = c_.crossbars(v, q);
    if (!rewrite && c_.rewrite_only(v, q)) return false;
    if (rewrite) {
      const int64_t free = pu.capacity - resident_budget_;
      if (xb > free || !WithinEndurance(pu, written_ + xb, free)) return false;
    } else if (pu.spatial && used_[q] + xb > std::min(pu.capacity, q == rw_pu_ ? resident_budget_ : pu.capacity)) {
      return false;
    }
    double ready = 0;
    for (int e : g_.in_edges(v)) {
      const int u = g_.edges()[e].from;
      ready = std::max(ready, finish_[u] + (pu_[u] != q ? c_.transfer_us(e, pu_[u], q) : 0.0));
    }
    const double dur = c_.latency_us(v, q) + (rewrite ? c_.write_us(v, q) : 0.0);
    double t = pu.spatial ? ready : EarliestGap(busy_[q], ready, dur);
    t = EarliestFitBoth(rewrite_, rewrite ? xb : 0, pools_[q], c_.adcs(v, q), t, dur);
    *ch = Child{v, q, rewrite, t, 0.0};
    return std::isfinite(t);
  }

  void Rec(double last_start, int last_rank, double makespan) {
    ++nodes_;
    if (placed_ == n_) {
      if (!std::isfinite(upper_) || makespan < upper_ - Tol(upper_)) Record(makespan);
      return;
    }
    std::vector<Child> children;
    for (int v = 0; v < n_; ++v) {
      if (pu_[v] >= 0 || preds_left_[v] > 0) continue;
      for (int q : cand_[v]) {
        for (bool rewrite : {false, true}) {
          if (rewrite && (q != rw_pu_ || c_.crossbars(v, q) == 0 || c_.no_rewrite(v, q))) continue;
          // Placed before last_start, this order is not a start-sorted list.
          Child ch;
          if (!Placement(v, q, rewrite, &ch)) continue;
          if (ch.start < last_start || (ch.start == last_start && rank_[v] < last_rank)) continue;
          ch.bound = std::max(ch.start + rem_[v], makespan);
          children.push_back(ch);
        }
      }
    }
    for (Child& ch : children) {
      Place(ch);
      ch.bound = std::max(ch.bound, Bound(ch.start, std::max(makespan, finish_[ch.v])));
      Unplace(ch);
    }
    std::sort(children.begin(), children.end(), [](const Child& a, const Child& b) {
      return a.bound != b.bound ? a.bound < b.bound : a.start < b.start;
    });
    for (size_t i = 0; i < children.size(); ++i) {
      const Child& ch = children[i];
      if (Stop()) {
        for (size_t j = i; j < children.size(); ++j) open_bound_ = std::min(open_bound_, children[j].bound);
        return;
      }
      if (Prune(ch.bound)) {
        // Pruned by the tolerance, not by the incumbent itself: its bound stays open.
        if (ch.bound < upper_) open_bound_ = std::min(open_bound_, ch.bound);
        continue;
      }
      Place(ch);
      Rec(ch.start, rank_[ch.v], std::max(makespan, finish_[ch.v]));
      Unplace(ch);
    }
  }

  void Place(const Child& ch) {
    const int v = ch.v, q = ch.q;
    pu_[v] = q;
    rewritten_[v] = ch.rewrite;
    start_[v] = ch.start;
    finish_[v] = ch.start + c_.latency_us(v, q) + (ch.rewrite ? c_.write_us(v, q) : 0.0);
    if (ch.rewrite) {
      rewrite_.Add(start_[v], finish_[v], c_.crossbars(v, q));
      written_ += c_.crossbars(v, q);
    } else if (c_.pu(q).spatial) {
      used_[q] += c_.crossbars(v, q);
    } else {
      const std::pair<double, double> run{start_[v], finish_[v]};
      busy_[q].insert(std::upper_bound(busy_[q].begin(), busy_[q].end(), run), run);
    }
    if (c_.adcs(v, q) > 0) pools_[q].Add(start_[v], finish_[v], c_.adcs(v, q));
    for (int e : g_.out_edges(v)) --preds_left_[g_.edges()[e].to];
    ++placed_;
  }

  void Unplace(const Child& ch) {
    const int v = ch.v, q = ch.q;
    for (int e : g_.out_edges(v)) ++preds_left_[g_.edges()[e].to];
    if (c_.adcs(v, q) > 0) pools_[q].Pop();
    if (ch.rewrite) {
      rewrite_.Pop();
      written_ -= c_.crossbars(v, q);
    } else if (c_.pu(q).spatial) {
      used_[q] -= c_.crossbars(v, q);
    } else {
      busy_[q].erase(std::find(busy_[q].begin(), busy_[q].end(), std::make_pair(start_[v], finish_[v])));
    }
    pu_[v] = -1;
    rewritten_[v] = 0;
    --placed_;
  }

  // The complete placement as a schedule (its times are the serial
  // scheme's, so ListSchedule in start order gives the same).
  void Record(double makespan) {
    Schedule s;
    s.ops.resize(n_);
    for (int v = 0; v < n_; ++v) {
      s.ops[v].device = pu_[v];
      s.ops[v].start_us = start_[v];
      s.ops[v].finish_us = finish_[v];
      s.ops[v].rewritten = rewritten_[v] != 0;
    }
    s.makespan_us = makespan;
    s.energy_uj = ScheduleEnergy(pr_, s);
    best_ = std::move(s);
    upper_ = makespan;
  }

  const Problem& pr_;
  const OpGraph& g_;
  const CostModel& c_;
  const std::vector<std::vector<int>>& cand_;
  const int n_, k_;
  const Clock::time_point deadline_;
  const double gap_;
  const int64_t node_limit_;
  const std::atomic<bool>* interrupt_;
  std::vector<double> rem_;
  std::vector<int> rank_;  // position in the graph's topological order: ties in start are taken in it
  std::vector<int> pu_, preds_left_;
  std::vector<double> start_, finish_;
  std::vector<std::vector<std::pair<double, double>>> busy_;  // per serial PU, sorted
  std::vector<int64_t> used_;                                 // crossbars per spatial PU
  std::vector<CumulativeProfile> pools_;
  // Reprogramming: the PU (-1: none), the resident crossbars this pass
  // allows on it, the crossbars rewritten operators take in turn, and what
  // they write.
  int rw_pu_ = -1;
  int64_t resident_budget_ = 0, written_ = 0;
  CumulativeProfile rewrite_;
  std::vector<char> rewritten_;
  int placed_ = 0;
  int64_t nodes_ = 0;
  bool stopped_ = false, interrupted_ = false;
  double root_ = 0, upper_ = kInf, open_bound_ = kInf;
  std::optional<Schedule> best_;
};

}  // namespace

SearchOutcome SolveSharedAdcsBySearch(const Problem& problem, const std::vector<std::vector<int>>& cand,
                                      Clock::time_point deadline, double relative_gap, int64_t node_limit,
                                      const std::atomic<bool>* interrupt) {
  return SharedAdcSearch(problem, cand, deadline, relative_gap, node_limit, interrupt).Run();
}

}  // namespace hetplan::exact_internal
