// The exact search for the smallest initiation interval (throughput.h).
//
// II = max(serial PUs' loads, links' loads, the longest spatial operator
// after replication). Let T be a bound on the spatial operators' times: each
// operator on a spatial PU then takes the fewest copies that bring it within
// T, and F(T) = the least max(serial loads, link loads) over assignments that
// fit the crossbar budgets with those copies. F does not increase with T (a
// larger T needs fewer copies), and the optimal II's spatial term is one of
// the finitely many times an operator takes with some number of copies
// (the thresholds T_0 < T_1 < …). So II* = min_j max(T_j, F(T_j)) =
// min(T_c, F(T_{c−1})) where c is the first threshold with F(T_c) ≤ T_c: a
// binary search of decisions "F(T) ≤ T?" and one minimisation. Each is a
// depth-first branch-and-bound over the assignment whose bound is the larger
// of the loads so far, each undecided operator's cheapest option, and the
// serial work left shared over the serial PUs after a fractional knapsack
// of the crossbars left takes the most of it to the spatial PUs.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "hetplan/util/limits.h"
#include "hetplan/solve/throughput.h"

namespace hetplan {
namespace {


struct Option {
  int pu = -1;
  int64_t replicas = 1;
  double time = 0;     // serial load added, or the spatial operator's time
  int64_t weight = 0;  // crossbars taken on a spatial PU
};

// The fewest copies of v on spatial q that bring its time within t (0: none).
int64_t FewestCopies(const CostModel& c, int v, int q, double t) {
  const int64_t hi = std::min<int64_t>(c.max_replicas(v, q), std::max<int64_t>(1, c.pu(q).capacity));
  if (c.replicated_latency_us(v, q, hi) > t * (1 + 1e-12)) return 0;
  int64_t lo = 1, up = hi;
  while (lo < up) {
    const int64_t mid = lo + (up - lo) / 2;
    if (c.replicated_latency_us(v, q, mid) <= t * (1 + 1e-12)) up = mid;
    else lo = mid + 1;
  }
  return lo;
}

class MinMaxSearch {
 public:
  // `node_limit` > 0: stop after about that many nodes.
  MinMaxSearch(const Problem& p, double threshold, std::chrono::steady_clock::time_point deadline,
               const std::atomic<bool>* interrupt, int64_t node_limit)
      : p_(p),
        c_(*p.costs),
        g_(*p.graph),
        k_(c_.num_pus()),
        deadline_(deadline),
        interrupt_(interrupt),
        node_limit_(node_limit) {
    const int n = g_.size();
    options_.resize(n);
    for (int v = 0; v < n; ++v) {
      for (int q = 0; q < k_; ++q) {
        if (!c_.supported(v, q)) continue;
        if (!c_.pu(q).spatial) {
          options_[v].push_back({q, 1, c_.latency_us(v, q), 0});
          continue;
        }
        const int64_t copies = FewestCopies(c_, v, q, threshold);
        const int64_t w = copies * c_.crossbars(v, q);
        if (copies > 0 && w <= c_.pu(q).capacity) {
          options_[v].push_back({q, copies, c_.replicated_latency_us(v, q, copies), w});
        }
      }
    }
    for (int q = 0; q < k_; ++q) serial_pus_ += c_.pu(q).spatial ? 0 : 1;
    Prepare();
  }

  bool infeasible() const { return infeasible_; }
  int64_t nodes() const { return nodes_; }
  bool stopped() const { return stopped_; }
  bool node_limit_hit() const { return node_limit_hit_; }

  // The least max(serial, link) load below `cutoff` (stopping at the first
  // at or below `accept`); kInf when none is below the cutoff. Sets
  // assignment()/replicas() to the best found.
  double Minimise(double cutoff, double accept, double relative_gap) {
    best_ = cutoff;
    accept_ = accept;
    gap_ = relative_gap;
    found_ = false;
    if (infeasible_) return kInf;
    Dive(0);
    return found_ ? best_ : kInf;
  }
  const std::vector<int>& assignment() const { return best_assignment_; }
  const std::vector<int64_t>& replicas() const { return best_replicas_; }

 private:
  // Branching order: operators with one option first, then by their
  // largest serial time (the big ones decide the loads); the fractional
  // knapsack's order: serial time saved per crossbar.
  void Prepare() {
    const int n = g_.size();
    order_.resize(n);
    std::iota(order_.begin(), order_.end(), 0);
    min_serial_.assign(n, kInf);
    min_weight_.assign(n, std::numeric_limits<int64_t>::max());
    for (int v = 0; v < n; ++v) {
      if (options_[v].empty()) infeasible_ = true;
      for (const Option& o : options_[v]) {
        if (c_.pu(o.pu).spatial) min_weight_[v] = std::min(min_weight_[v], o.weight);
        else min_serial_[v] = std::min(min_serial_[v], o.time);
      }
    }
    auto key = [&](int v) { return std::isfinite(min_serial_[v]) ? min_serial_[v] : 0.0; };
    std::stable_sort(order_.begin(), order_.end(), [&](int u, int v) {
      const bool fu = options_[u].size() == 1, fv = options_[v].size() == 1;
      if (fu != fv) return fu;
      return key(u) > key(v);
    });
    by_ratio_.clear();
    for (int v = 0; v < n; ++v) {
      if (std::isfinite(min_serial_[v]) && min_weight_[v] != std::numeric_limits<int64_t>::max()) {
        by_ratio_.push_back(v);
      }
    }
    std::stable_sort(by_ratio_.begin(), by_ratio_.end(), [&](int u, int v) {
      return min_serial_[u] * static_cast<double>(std::max<int64_t>(1, min_weight_[v])) >
             min_serial_[v] * static_cast<double>(std::max<int64_t>(1, min_weight_[u]));
    });
    for (int q = 0; q < k_; ++q) {
      if (c_.pu(q).spatial) budget_ += std::max<int64_t>(0, c_.pu(q).capacity);
    }
    assignment_.assign(n, -1);
    replicas_.assign(n, 1);
    serial_.assign(k_, 0.0);
    link_.assign(static_cast<size_t>(k_) * k_, 0.0);
    used_.assign(k_, 0);
  }

  bool OutOfTime() {
    if ((++nodes_ & 1023) != 0) return stopped_;
    if (std::chrono::steady_clock::now() > deadline_ ||
        (interrupt_ != nullptr && interrupt_->load(std::memory_order_relaxed))) {
      stopped_ = true;
    }
    if (node_limit_ > 0 && nodes_ >= node_limit_) stopped_ = node_limit_hit_ = true;
    return stopped_;
  }

  double CurrentMax() const {
    double m = 0;
    for (double x : serial_) m = std::max(m, x);
    for (double x : link_) m = std::max(m, x);
    return m;
  }

  // The bound of the text at the top of the file for the operators from
  // order_[depth] on.
  double Bound(int depth) const {
    double lb = CurrentMax();
    double work = std::accumulate(serial_.begin(), serial_.end(), 0.0);
    int64_t left = budget_;
    for (int q = 0; q < k_; ++q) left -= used_[q];
    for (size_t i = depth; i < order_.size(); ++i) {
      const int v = order_[i];
      double cheapest = kInf;
      for (const Option& o : options_[v]) {
        if (c_.pu(o.pu).spatial) {
          if (used_[o.pu] + o.weight <= c_.pu(o.pu).capacity) cheapest = 0;
        } else {
          cheapest = std::min(cheapest, serial_[o.pu] + o.time);
        }
      }
      lb = std::max(lb, cheapest);
      if (std::isfinite(min_serial_[v])) work += min_serial_[v];
      else left -= min_weight_[v];
    }
    if (left < 0) return kInf;
    if (serial_pus_ == 0) return lb;
    for (int v : by_ratio_) {
      if (assignment_[v] >= 0 || left <= 0) continue;
      const int64_t w = min_weight_[v];
      if (w <= left) {
        work -= min_serial_[v];
        left -= w;
      } else {
        work -= min_serial_[v] * static_cast<double>(left) / static_cast<double>(w);
        left = 0;
      }
    }
    return std::max(lb, work / serial_pus_);
  }

  bool Done() const { return stopped_ || (found_ && best_ <= accept_); }

  void Dive(int depth) {
    if (Done() || OutOfTime()) return;
    const double lb = Bound(depth);
    if (lb >= best_ - gap_ * best_ - 1e-12 * std::max(1.0, best_)) return;
    if (depth == static_cast<int>(order_.size())) {
      best_ = CurrentMax();
      found_ = true;
      best_assignment_ = assignment_;
      best_replicas_ = replicas_;
      return;
    }
    const int v = order_[depth];
    // Spatial options first (they take load off the serial PUs), then
    // serial PUs by the load they would leave.
    std::vector<const Option*> tries;
    for (const Option& o : options_[v]) tries.push_back(&o);
    std::stable_sort(tries.begin(), tries.end(), [&](const Option* x, const Option* y) {
      const double kx = c_.pu(x->pu).spatial ? -1 : serial_[x->pu] + x->time;
      const double ky = c_.pu(y->pu).spatial ? -1 : serial_[y->pu] + y->time;
      return kx < ky;
    });
    for (const Option* o : tries) {
      if (c_.pu(o->pu).spatial && used_[o->pu] + o->weight > c_.pu(o->pu).capacity) continue;
      Assign(v, *o, +1);
      Dive(depth + 1);
      Assign(v, *o, -1);
      if (Done()) return;
    }
  }

  // Adds (sign +1) or removes (-1) v's choice and the transfers to and from
  // its decided neighbours.
  void Assign(int v, const Option& o, int sign) {
    if (sign > 0) {
      assignment_[v] = o.pu;
      replicas_[v] = o.replicas;
    }
    if (c_.pu(o.pu).spatial) used_[o.pu] += sign * o.weight;
    else serial_[o.pu] += sign * o.time;
    auto charge = [&](int e, int from, int to) {
      const int pa = assignment_[from], pb = assignment_[to];
      if (pa < 0 || pb < 0 || pa == pb) return;
      link_[static_cast<size_t>(std::min(pa, pb)) * k_ + std::max(pa, pb)] += sign * c_.transfer_us(e, pa, pb);
      if (!c_.pu(pb).spatial) serial_[pb] += sign * c_.boundary_us(pb);  // the receiving PU starts the segment
    };
    for (int e : g_.in_edges(v)) charge(e, g_.edges()[e].from, v);
    for (int e : g_.out_edges(v)) charge(e, v, g_.edges()[e].to);
    if (sign < 0) {
      assignment_[v] = -1;
      replicas_[v] = 1;
      if (!c_.pu(o.pu).spatial) serial_[o.pu] = std::max(0.0, serial_[o.pu]);
    }
  }

  const Problem& p_;
  const CostModel& c_;
  const OpGraph& g_;
  const int k_;
  std::chrono::steady_clock::time_point deadline_;
  const std::atomic<bool>* interrupt_;
  int64_t node_limit_;
  bool node_limit_hit_ = false;
  std::vector<std::vector<Option>> options_;
  std::vector<int> order_, by_ratio_;
  std::vector<double> min_serial_;
  std::vector<int64_t> min_weight_;
  int serial_pus_ = 0;
  int64_t budget_ = 0;
  bool infeasible_ = false;
  std::vector<int> assignment_, best_assignment_;
  std::vector<int64_t> replicas_, best_replicas_;
  std::vector<double> serial_, link_;
  std::vector<int64_t> used_;
  double best_ = kInf, accept_ = 0, gap_ = 0;
  bool found_ = false, stopped_ = false;
  int64_t nodes_ = 0;
};

// Every time an operator takes on a spatial PU with some number of copies
// that fits its capacity, ascending and distinct, after 0.
std::vector<double> Thresholds(const Problem& p) {
  const CostModel& c = *p.costs;
  std::vector<double> t = {0.0};
  for (int v = 0; v < c.num_ops(); ++v) {
    for (int q = 0; q < c.num_pus(); ++q) {
      if (!c.pu(q).spatial || !c.supported(v, q)) continue;
      const int64_t xb = std::max<int64_t>(1, c.crossbars(v, q));
      const int64_t most = std::min(c.max_replicas(v, q), std::max<int64_t>(1, c.pu(q).capacity / xb));
      const int64_t n = std::max<int64_t>(1, c.mvms(v, q));
      // Copies k and k' give the same time when ceil(n / k) agrees: the
      // fewest copies for each distinct ceil(n / k).
      for (int64_t k = 1; k <= most;) {
        t.push_back(c.replicated_latency_us(v, q, k));
        const int64_t each = (n + k - 1) / k;
        if (each <= 1) break;
        k = (n + each - 2) / (each - 1);
      }
    }
  }
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return t;
}

}  // namespace

ThroughputSearchResult SolveThroughputBySearch(const Problem& p, std::chrono::steady_clock::time_point deadline,
                                               double relative_gap, const std::atomic<bool>* interrupt,
                                               int64_t node_limit) {
  ThroughputSearchResult r;
  const std::vector<double> t = Thresholds(p);
  // Keeps the plan `s` found when it runs at a smaller II than the best so far.
  auto keep = [&](const MinMaxSearch& s) {
    const double ii = ComputeStreamLoads(p, s.assignment(), &s.replicas()).interval_us();
    if (!r.assignment.empty() && ii >= r.interval_us) return;
    r.assignment = s.assignment();
    r.replicas = s.replicas();
    r.interval_us = ii;
  };
  // One search at threshold j; `decide`: stop at the first plan at or below
  // the cutoff. proven: the answer holds (it finished, or found such a plan).
  struct Out {
    double f;
    bool proven;
  };
  auto run = [&](int j, double cutoff, bool decide, double gap) {
    // What is left of the node budget (at least one node: 0 means none).
    const int64_t left = node_limit > 0 ? std::max<int64_t>(1, node_limit - r.nodes) : 0;
    MinMaxSearch s(p, t[j], deadline, interrupt, left);
    ++r.thresholds;
    const double f = s.Minimise(cutoff, decide ? cutoff : 0.0, gap);
    r.nodes += s.nodes();
    r.node_limit_reached = r.node_limit_reached || s.node_limit_hit();
    r.interrupted = r.interrupted || (interrupt != nullptr && interrupt->load());
    if (std::isfinite(f)) keep(s);
    return Out{f, !s.stopped() || (decide && std::isfinite(f))};
  };
  // Decisions F(T_j) ≤ T_j? over j in [lo, hi]: the first true is c.
  int lo = 0, hi = static_cast<int>(t.size()) - 1, c = static_cast<int>(t.size());
  double proven_below = 0;  // no plan runs at an II ≤ this (strictly below is not claimed)
  bool complete = true;
  while (lo <= hi) {
    const int mid = lo + (hi - lo) / 2;
    const auto out = run(mid, t[mid] * (1 + 1e-12) + 1e-12, true, 0.0);
    if (std::isfinite(out.f)) {
      c = mid;
      hi = mid - 1;
    } else if (out.proven) {
      proven_below = std::max(proven_below, t[mid]);
      lo = mid + 1;
    } else {
      complete = false;
      break;
    }
  }
  if (complete && c > 0) {
    // F(T_{c−1}) below T_c, if any plan has one.
    const double cutoff = c < static_cast<int>(t.size()) ? t[c] : kInf;
    const auto out = run(c - 1, cutoff, false, relative_gap);
    complete = out.proven;
  }
  if (r.assignment.empty()) {
    r.infeasible = complete;
    r.bound_us = proven_below;
    return r;
  }
  r.complete = complete;
  r.bound_us = complete ? r.interval_us * (1 - relative_gap) : proven_below;
  return r;
}

}  // namespace hetplan
