// The exact search's assignment level (exact/search_internal.h): the
// branch-and-bound over the PUs of one segment's operators.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <queue>
#include <utility>
#include <vector>

#include "solve/exact/search_internal.h"

namespace hetplan::exact_internal {
namespace {

// Tables indexed by the crossbars left are kept up to this many columns;
// beyond, the bounds ignore the budget (still valid, weaker).
constexpr int64_t kMaxBudgetColumns = 4096;
// Best-first assignment search: open nodes kept at most, and the first node
// allowance of a sequencing search.
constexpr size_t kMaxQueue = 200'000;
constexpr int64_t kFirstAllowance = 4096;

// ---------------------------------------------------------------------------
// Assignments first.
//
// Most of a segment's difficulty is which PU each choice operator takes;
// once that is fixed, the sequencing search is fast because its bounds use
// the true durations. So the segment is searched in two levels: a
// branch-and-bound over the PUs of the choice operators (bounded by the
// critical path, the serial load with a knapsack over the crossbars left,
// and the preemptive Jackson bound of the operators surely on the serial
// PU), and, at each complete assignment whose bound can still improve the
// frontier, the exact sequencing search with those PUs fixed.

class AssignmentSearch {
 public:
  // An item of the knapsacks over the crossbars left: an operator moved to
  // the budget PU, its crossbars and what that takes off the bound.
  struct KnapItem {
    int64_t weight;
    double gain;
    int op;
  };

  AssignmentSearch(const SearchInput& in, const LocalSegment& l)
      : in_(in), l_(l), c_(*in.problem->costs), k_(c_.num_pus()) {
    decided_.assign(l.m, -1);
    for (int i = 0; i < l.m; ++i) {
      if (l.cand[i].size() == 1) {
        decided_[i] = l.cand[i][0];
      } else if (l.cand[i].size() > 1) {
        choice_.push_back(i);
      }
    }
    used_.assign(k_, 0);
    for (int i = 0; i < l.m; ++i) {
      if (decided_[i] >= 0 && c_.pu(decided_[i]).spatial) used_[decided_[i]] += l_.xb[Idx(i, decided_[i])];
    }
    if (in.initial != nullptr) {
      for (const FrontierPoint& p : *in.initial) Insert(p);
    }
  }

  void Run() {
    if (SomeOperatorFitsNoPu()) {
      complete_ = true;
      return;
    }
    for (int p : l_.spatial) {
      if (used_[p] > Cap(p)) {
        complete_ = true;
        return;
      }
    }
    if (in_.lagrangian) TuneMultipliers(in_.max_budget - Usage());
    root_bound_ = Bound(in_.max_budget - Usage());
    // Below the root, nodes are bounded as in the first pass (and inherit
    // the root's bound): the Lagrangian at every node cut the nodes per
    // second by up to 1.7× on the irregular networks and, at 10 s, gave no
    // better bound or schedule (docs/ilp.md).
    if (lag_) lag_->active = false;
    if (in_.dive_only) {
      Rec(0, root_bound_);
    } else {
      BestFirst();
    }
    complete_ = !stopped_;
  }

  const std::vector<FrontierPoint>& frontier() const { return frontier_; }
  bool complete() const { return complete_; }
  double open_bound() const { return complete_ ? kInf : std::min(open_bound_, root_bound_); }
  double root_bound() const { return root_bound_; }
  // The root bound with the Lagrangian bound (multipliers tuned here).
  double LagrangianRootBound() {
    if (SomeOperatorFitsNoPu()) return kInf;
    TuneMultipliers(in_.max_budget - Usage());
    return Bound(in_.max_budget - Usage());
  }
  int64_t nodes() const { return nodes_; }
  // Every completion is at least its frontier value minus this.
  double slack() const { return slack_; }
  // The bound at the root, without searching.
  double RootBound() {
    if (SomeOperatorFitsNoPu()) return kInf;
    return Bound(in_.max_budget - Usage());
  }
  // The root bound of every completion that uses at most u crossbars of the
  // budget PU, for u = 0..max_budget (kInf below what the segment must use).
  // Nonincreasing in u.
  std::vector<double> RootBoundByBudget() {
    std::vector<double> f(static_cast<size_t>(in_.max_budget) + 1, kInf);
    if (SomeOperatorFitsNoPu()) return f;
    TuneMultipliers(in_.max_budget - Usage());
    for (int64_t u = Usage(); u <= in_.max_budget; ++u) f[u] = Bound(u - Usage());
    // Multipliers tuned for the whole budget are weak at a small one, where
    // the serial load weighs more: tune them again at kLevels budgets; a
    // bound at budget b holds for every completion that uses less.
    constexpr int kLevels = 16;
    const int64_t span = in_.max_budget - Usage();
    double later = -kInf;
    for (int j = kLevels - 1; j >= 1 && span >= kLevels; --j) {
      const int64_t b = Usage() + span * j / kLevels;
      TuneMultipliers(b - Usage());
      later = std::max(later, Bound(b - Usage()));
      for (int64_t u = Usage() + span * (j - 1) / kLevels + 1; u <= b; ++u) f[u] = std::max(f[u], later);
    }
    for (size_t u = 1; u < f.size(); ++u) f[u] = std::min(f[u], f[u - 1]);
    return f;
  }

 private:
  size_t Idx(int i, int p) const { return static_cast<size_t>(i) * k_ + p; }
  double Transfer(int e, int p, int q) const { return p == q ? 0.0 : c_.transfer_us(e, p, q); }
  int64_t Usage() const { return in_.budget_pu >= 0 ? used_[in_.budget_pu] : 0; }
  // No completion exists: the segment has no schedule at all.
  bool SomeOperatorFitsNoPu() const {
    return std::any_of(l_.cand.begin(), l_.cand.end(), [](const std::vector<int>& c) { return c.empty(); });
  }
  int64_t Cap(int p) const { return p == in_.budget_pu ? in_.max_budget : in_.capacity[p]; }

  // Whether i may still take p with `left` crossbars of the budget PU left.
  bool Allowed(int i, int p, int64_t left) const {
    if (decided_[i] >= 0) return decided_[i] == p;
    if (!c_.pu(p).spatial) return true;
    const int64_t xb = l_.xb[Idx(i, p)];
    return p == in_.budget_pu ? xb <= left : used_[p] + xb <= in_.capacity[p];
  }

  // A lower bound on the segment length of every completion of the current
  // partial assignment that uses at most `left` more crossbars.
  double Bound(int64_t left) {
    const int m = l_.m;
    est_.assign(static_cast<size_t>(m) * k_, kInf);
    tail_.assign(static_cast<size_t>(m) * k_, kInf);
    for (int i = 0; i < m; ++i) {
      for (int p : l_.cand[i]) {
        if (!Allowed(i, p, left)) continue;
        double r = 0;
        for (const Arc& a : l_.in[i]) {
          if (a.other < 0) {
            r = std::max(r, Transfer(a.edge, in_.entry_pu, p));
            continue;
          }
          double best = kInf;
          for (int q : l_.cand[a.other]) {
            const double e = est_[Idx(a.other, q)];
            if (e < kInf) best = std::min(best, e + l_.dur[Idx(a.other, q)] + Transfer(a.edge, q, p));
          }
          r = std::max(r, best);
        }
        est_[Idx(i, p)] = r;
      }
    }
    double lb = 0;
    for (int i = m - 1; i >= 0; --i) {
      double best_path = kInf;
      for (int p : l_.cand[i]) {
        if (est_[Idx(i, p)] == kInf) continue;
        double after = 0;
        for (const Arc& a : l_.out[i]) {
          double best = kInf;
          for (int q : l_.cand[a.other]) {
            const double t = tail_[Idx(a.other, q)];
            if (t < kInf) best = std::min(best, Transfer(a.edge, p, q) + t);
          }
          after = std::max(after, best);
        }
        tail_[Idx(i, p)] = l_.dur[Idx(i, p)] + after;
        best_path = std::min(best_path, est_[Idx(i, p)] + tail_[Idx(i, p)]);
      }
      lb = std::max(lb, best_path);
      if (lb == kInf) return kInf;
    }
    if (lag_ && lag_->active) lb = std::max(lb, Lagrangian(left, false));
    if (l_.serial.size() != 1) return lb;

    // The one serial PU P: its load (what must stay, plus what the knapsack
    // over the crossbars left cannot move away), from the earliest start of
    // any of its operators, then the shortest tail after one of them; and
    // the preemptive Jackson schedule of the operators surely on P.
    const int P = l_.serial[0];
    double start = kInf, load = 0, min_after = kInf;
    bool forced = false;
    items_.clear();
    jobs_.clear();
    for (int i = 0; i < m; ++i) {
      const double e = est_[Idx(i, P)];
      if (e == kInf) continue;
      const double d = l_.dur[Idx(i, P)];
      const double after = tail_[Idx(i, P)] - d;
      start = std::min(start, e);
      min_after = std::min(min_after, after);
      load += d;
      int64_t weight = -1;
      for (int q : l_.cand[i]) {
        if (q == P || est_[Idx(i, q)] == kInf) continue;
        const int64_t w = q == in_.budget_pu ? l_.xb[Idx(i, q)] : 0;
        if (weight < 0 || w < weight) weight = w;
      }
      if (weight < 0) {
        forced = true;
        jobs_.push_back({e, d, after});
      } else if (weight == 0 || in_.budget_pu < 0) {
        load -= d;
      } else if (d > 0) {
        items_.push_back({weight, d, i});
      }
    }
    if (start == kInf) return lb;
    TakeKnapsack(&items_, left, &load, nullptr);
    if (forced || load > Tol(load)) lb = std::max(lb, start + load + std::max(0.0, min_after));
    lb = std::max(lb, Jackson(&jobs_, &heap_));
    return lb;
  }

  // Subtracts from *value the most gain that items fitting into `cap`
  // crossbars give: all of them when they fit, else a 0/1 knapsack, exact up
  // to kMaxBudgetColumns columns and fractional beyond (which takes off no
  // less, so a bound stays a bound). The fractional case reorders `items`.
  // With `chosen`: one flag per item (in their order on return), set for
  // the items taken whole.
  void TakeKnapsack(std::vector<KnapItem>* items, int64_t cap, double* value, std::vector<uint8_t>* chosen) {
    if (chosen != nullptr) chosen->assign(items->size(), 0);
    int64_t weight = 0;
    for (const KnapItem& it : *items) weight += it.weight;
    if (weight <= cap) {
      for (size_t j = 0; j < items->size(); ++j) {
        *value -= (*items)[j].gain;
        if (chosen != nullptr) (*chosen)[j] = 1;
      }
    } else if (cap <= kMaxBudgetColumns) {
      const size_t cols = static_cast<size_t>(cap) + 1;
      knap_.assign(cols, 0.0);
      if (chosen == nullptr) {
        // Branch-free: this runs at every node of the search.
        for (const KnapItem& it : *items) {
          for (int64_t b = cap; b >= it.weight; --b) knap_[b] = std::max(knap_[b], knap_[b - it.weight] + it.gain);
        }
      } else {
        knap_take_.assign(items->size() * cols, 0);
        for (size_t j = 0; j < items->size(); ++j) {
          const KnapItem& it = (*items)[j];
          for (int64_t b = cap; b >= it.weight; --b) {
            const double with = knap_[b - it.weight] + it.gain;
            if (with > knap_[b]) {
              knap_[b] = with;
              knap_take_[j * cols + b] = 1;
            }
          }
        }
      }
      *value -= knap_[cap];
      if (chosen != nullptr) {
        int64_t b = cap;
        for (size_t j = items->size(); j-- > 0;) {
          if (knap_take_[j * cols + b] != 0) {
            (*chosen)[j] = 1;
            b -= (*items)[j].weight;
          }
        }
      }
    } else {
      std::sort(items->begin(), items->end(),
                [](const KnapItem& x, const KnapItem& y) { return x.gain * y.weight > y.gain * x.weight; });
      double left = static_cast<double>(cap);
      for (size_t j = 0; j < items->size(); ++j) {
        const KnapItem& it = (*items)[j];
        const double f = std::min(1.0, left / static_cast<double>(it.weight));
        *value -= it.gain * f;
        left -= static_cast<double>(it.weight) * f;
        if (chosen != nullptr && f >= 1.0) (*chosen)[j] = 1;
        if (left <= 0) break;
      }
    }
  }

  // The Lagrangian bound. Every completion's segment length L is at least
  // the length of any path π (Σ_{i∈π} d_i plus its transfers, of which
  // those on arcs with one end fixed are counted) and at least
  // each serial PU P's load (plus P's earliest start and shortest tail when
  // some operator must run on P). So for weights ν_π, λ_P ≥ 0 summing to
  // one, L ≥ Σ_i μ_i d_i(A_i) + Σ_e ν_e t_e(A) + Σ_P λ_P (load_P(A) + s_P)
  // with μ_i (ν_e) the weight of the paths through operator i (arc e).
  // Minimising the right side over the
  // assignments A still allowed is separable per operator but for the
  // crossbars left: an exact knapsack (fractional beyond kMaxBudgetColumns,
  // still a bound). Any multipliers give a bound; TuneMultipliers picks them
  // at the root. Unlike max(critical path, load), this sees that an
  // operator cannot be both fast on the path and off the serial PU, and
  // that the crossbars cannot shorten every branch at once. Uses est_ and
  // tail_ of the current state (Bound() fills them); with `want_pick`,
  // L.pick gets a minimising assignment.
  double Lagrangian(int64_t left, bool want_pick) {
    LagrangianState& L = *lag_;
    const int m = l_.m;
    const int B = in_.budget_pu;
    double total = 0;
    L.items.clear();
    if (want_pick) L.pick.assign(m, -1);
    // The PU of each operator left only one (-1: a choice).
    L.fixed.assign(m, -1);
    for (int i = 0; i < m; ++i) {
      int count = 0;
      for (int p : l_.cand[i]) {
        if (est_[Idx(i, p)] == kInf) continue;
        L.fixed[i] = p;
        ++count;
      }
      if (count == 0) return kInf;
      if (count > 1) L.fixed[i] = -1;
    }
    for (int i = 0; i < m; ++i) {
      double nb = kInf, cb = kInf;
      int pnb = -1;
      for (int p : l_.cand[i]) {
        if (est_[Idx(i, p)] == kInf) continue;
        // The transfers on the path arcs at i whose other end is fixed (an
        // arc with two choices counts as free: still a bound).
        double cost = (L.mu[i] + L.lam[p]) * l_.dur[Idx(i, p)];
        for (size_t j = 0; j < l_.in[i].size(); ++j) {
          const double w = L.nu[L.arc_off[i] + j];
          if (w <= 0) continue;
          const Arc& a = l_.in[i][j];
          const int from = a.other < 0 ? in_.entry_pu : L.fixed[a.other];
          if (from >= 0) cost += w * Transfer(a.edge, from, p);
        }
        if (L.fixed[i] < 0) {
          for (size_t j = 0; j < l_.out[i].size(); ++j) {
            const Arc& a = l_.out[i][j];
            const double w = L.nu[L.out_arc[L.arc_out_off[i] + j]];
            if (w > 0 && L.fixed[a.other] >= 0) cost += w * Transfer(a.edge, p, L.fixed[a.other]);
          }
        }
        if (p == B && decided_[i] != B) {
          cb = cost;
        } else if (cost < nb) {
          nb = cost;
          pnb = p;
        }
      }
      if (nb == kInf) {
        if (cb == kInf) return kInf;
        total += cb;
        left -= l_.xb[Idx(i, B)];
        if (left < 0) return kInf;
        if (want_pick) L.pick[i] = B;
        continue;
      }
      total += nb;
      if (want_pick) L.pick[i] = pnb;
      if (cb < nb) L.items.push_back({l_.xb[Idx(i, B)], nb - cb, i});
    }
    // The serial PUs' windows, where some operator must run on them.
    L.window.assign(k_, 0.0);
    for (int P : l_.serial) {
      if (L.lam[P] <= 0 && !want_pick) continue;
      double start = kInf, after = kInf;
      bool forced = false;
      for (int i = 0; i < m; ++i) {
        const double e = est_[Idx(i, P)];
        if (e == kInf) continue;
        start = std::min(start, e);
        after = std::min(after, tail_[Idx(i, P)] - l_.dur[Idx(i, P)]);
        forced = forced || L.fixed[i] == P;
      }
      if (forced) L.window[P] = start + std::max(0.0, after);
      total += L.lam[P] * L.window[P];
    }
    TakeKnapsack(&L.items, left, &total, want_pick ? &L.chosen : nullptr);
    if (want_pick) {
      for (size_t j = 0; j < L.items.size(); ++j) {
        if (L.chosen[j] != 0) L.pick[L.items[j].op] = B;
      }
    }
    return total;
  }

  // The longest path under L.pick (durations and transfers): its length,
  // and indicators of its operators in `on` and of its arcs in `on_arc`.
  double LongestPath(std::vector<double>* on, std::vector<double>* on_arc) {
    LagrangianState& L = *lag_;
    const int m = l_.m;
    L.path_finish.assign(m, 0.0);
    L.path_pred.assign(m, -1);
    int last = -1;
    for (int i = 0; i < m; ++i) {
      double start = 0;
      for (size_t j = 0; j < l_.in[i].size(); ++j) {
        const Arc& a = l_.in[i][j];
        const double t = a.other < 0 ? Transfer(a.edge, in_.entry_pu, L.pick[i])
                                     : L.path_finish[a.other] + Transfer(a.edge, L.pick[a.other], L.pick[i]);
        if (t > start) {
          start = t;
          L.path_pred[i] = static_cast<int>(L.arc_off[i] + j);
        }
      }
      L.path_finish[i] = start + l_.dur[Idx(i, L.pick[i])];
      if (last < 0 || L.path_finish[i] > L.path_finish[last]) last = i;
    }
    on->assign(m, 0.0);
    on_arc->assign(L.arc_from.size(), 0.0);
    for (int i = last; i >= 0;) {
      (*on)[i] = 1.0;
      const int arc = L.path_pred[i];
      if (arc < 0) break;
      (*on_arc)[arc] = 1.0;
      i = L.arc_from[arc];
    }
    return last < 0 ? 0.0 : L.path_finish[last];
  }

  // Multipliers for Lagrangian() by fictitious play between the assignment
  // (a best response: the minimiser) and the multipliers (a best response:
  // the path or serial load that the minimiser makes longest), the
  // multipliers the average of their responses; the best found is kept.
  // Deterministic; a fixed number of rounds.
  void TuneMultipliers(int64_t left) {
    if (!lag_) lag_ = std::make_unique<LagrangianState>();
    LagrangianState& L = *lag_;
    constexpr int kRounds = 60;
    const int m = l_.m;
    L.active = false;
    if (m == 0 || Bound(left) == kInf) return;
    if (L.arc_off.empty()) {
      // Flat ids of the arcs (by head, in l_.in order), their tails, and
      // each out-arc's id.
      L.arc_off.assign(m + 1, 0);
      for (int i = 0; i < m; ++i) L.arc_off[i + 1] = L.arc_off[i] + l_.in[i].size();
      L.arc_from.assign(L.arc_off[m], -1);
      L.arc_out_off.assign(m + 1, 0);
      for (int i = 0; i < m; ++i) L.arc_out_off[i + 1] = L.arc_out_off[i] + l_.out[i].size();
      L.out_arc.assign(L.arc_out_off[m], 0);
      for (int i = 0; i < m; ++i) {
        for (size_t j = 0; j < l_.in[i].size(); ++j) L.arc_from[L.arc_off[i] + j] = l_.in[i][j].other;
        for (size_t j = 0; j < l_.out[i].size(); ++j) {
          const Arc& a = l_.out[i][j];
          const auto& back = l_.in[a.other];
          for (size_t r = 0; r < back.size(); ++r) {
            if (back[r].edge == a.edge) L.out_arc[L.arc_out_off[i] + j] = L.arc_off[a.other] + r;
          }
        }
      }
    }
    L.mu.assign(m, 0.0);
    L.nu.assign(L.arc_from.size(), 0.0);
    L.lam.assign(k_, 0.0);
    // Start from the longest path with every operator on its fastest PU.
    L.pick.assign(m, -1);
    for (int i = 0; i < m; ++i) {
      for (int p : l_.cand[i]) {
        if (est_[Idx(i, p)] == kInf) continue;
        if (L.pick[i] < 0 || l_.dur[Idx(i, p)] < l_.dur[Idx(i, L.pick[i])]) L.pick[i] = p;
      }
      if (L.pick[i] < 0) return;
    }
    std::vector<double> on, on_arc;
    LongestPath(&on, &on_arc);
    L.mu = on;
    L.nu = on_arc;
    std::vector<double> best_mu = L.mu, best_nu = L.nu, best_lam = L.lam;
    double best = -kInf;
    for (int round = 1; round <= kRounds; ++round) {
      const double value = Lagrangian(left, true);
      if (value == kInf) return;
      if (value > best) {
        best = value;
        best_mu = L.mu;
        best_nu = L.nu;
        best_lam = L.lam;
      }
      // The response: the longest of the path and the serial loads under L.pick.
      double response = LongestPath(&on, &on_arc);
      int serial = -1;
      for (int P : l_.serial) {
        double load = L.window[P];
        for (int i = 0; i < m; ++i) load += L.pick[i] == P ? l_.dur[Idx(i, P)] : 0.0;
        if (load > response) {
          response = load;
          serial = P;
        }
      }
      if (response <= value + Tol(value)) break;  // no multipliers do better
      const double a = 1.0 / (round + 1);
      for (int i = 0; i < m; ++i) L.mu[i] = (1 - a) * L.mu[i] + (serial < 0 ? a * on[i] : 0.0);
      for (size_t j = 0; j < L.nu.size(); ++j) L.nu[j] = (1 - a) * L.nu[j] + (serial < 0 ? a * on_arc[j] : 0.0);
      for (int P : l_.serial) L.lam[P] = (1 - a) * L.lam[P] + (P == serial ? a : 0.0);
    }
    L.mu = std::move(best_mu);
    L.nu = std::move(best_nu);
    L.lam = std::move(best_lam);
    L.active = true;
  }

  // True when no completion of this node can improve the frontier at any
  // budget: on each step of the frontier (and of the threshold), the bound
  // with the most crossbars of that step is no better. `full` gets the bound
  // with the whole budget left; `inherited` is one already proven (the
  // parent's), valid at every budget.
  bool Prunable(double inherited, double* full) {
    const int64_t u0 = Usage();
    int64_t b = in_.max_budget;
    bool first = true;
    double slack = 0;
    while (true) {
      const double lb = std::max(inherited, Bound(b - u0));
      if (first) {
        *full = lb;
        first = false;
      }
      if (lb == kInf) break;
      // The frontier's value on the step that contains b.
      double phi = kInf;
      int64_t step_lo = 0;
      for (const FrontierPoint& p : frontier_) {
        if (p.usage > b) break;
        phi = p.value;
        step_lo = p.usage;
      }
      // Past the threshold a completion cannot improve the whole schedule.
      phi = std::min(phi, Threshold(in_, std::max(step_lo, u0)));
      if (phi == kInf || lb < phi - std::max(Tol(phi), in_.tolerance)) return false;
      if (lb < phi - Tol(phi)) slack = std::max(slack, phi - lb);
      if (step_lo <= u0 || in_.budget_pu < 0) break;
      b = step_lo - 1;
    }
    slack_ = std::max(slack_, slack);
    return true;
  }

  double FrontierValue(int64_t b) const { return FrontierValueAt(frontier_, b); }
  void Insert(const FrontierPoint& point) { InsertPoint(&frontier_, point); }

  // Runs the sequencing search on the current (complete) assignment, at most
  // `max_nodes` nodes, with `inherited` proven for every completion, and
  // records what it found in the frontier.
  struct Sequenced {
    bool complete;
    double value;  // the best length found, or the upper limit it had to beat
    double open_bound;
  };
  Sequenced Sequence(double inherited, int64_t max_nodes) {
    SearchInput in = in_;
    in.upper = std::min(FrontierValue(Usage()), Threshold(in_, Usage()));
    in.max_nodes = max_nodes;
    in.lower = inherited;
    SequenceOutcome search = SequenceAssignment(in, l_, decided_);
    nodes_ += search.nodes;
    slack_ = std::max(slack_, search.slack);
    if (search.found) Insert(FrontierPoint{search.usage, search.value, decided_, std::move(search.order)});
    return Sequenced{search.complete, search.found ? search.value : in.upper, search.open_bound};
  }

  // Sequences the current (complete) assignment exactly.
  void Leaf(double inherited) {
    const Sequenced search = Sequence(inherited, in_.max_nodes);
    if (!search.complete) {
      stopped_ = true;
      open_bound_ = std::min(open_bound_, std::max(inherited, search.open_bound));
    }
    if (in_.dive_only && !frontier_.empty()) stopped_ = true;
  }

  // Best-first over partial assignments: the assignment with the smallest
  // bound is expanded (or, when complete, sequenced) first, so the first
  // complete assignments give a good frontier and most others are pruned by
  // their bound alone. A sequencing search that needs more than its node
  // allowance goes back into the queue with its improved bound and four
  // times the allowance, so one hard assignment cannot stall the others.
  struct QueueNode {
    double bound;
    double rank;  // the order of expansion: the bound, or more for a hard leaf
    int depth;
    int64_t allowance;    // nodes for the sequencing search of a complete assignment
    std::vector<int> pu;  // PUs of choice_[0..depth)
  };
  struct Later {
    bool operator()(const QueueNode& a, const QueueNode& b) const {
      return a.rank > b.rank || (a.rank == b.rank && a.depth < b.depth);
    }
  };

  void Load(const QueueNode& node) {
    for (size_t j = 0; j < choice_.size(); ++j) {
      if (decided_[choice_[j]] >= 0) Undecide(choice_[j], decided_[choice_[j]]);
    }
    for (int j = 0; j < node.depth; ++j) Decide(choice_[j], node.pu[j]);
  }

  template <typename Queue>
  static double MinBound(Queue* queue) {
    double b = kInf;
    while (!queue->empty()) {
      b = std::min(b, queue->top().bound);
      queue->pop();
    }
    return b;
  }

  void BestFirst() {
    std::priority_queue<QueueNode, std::vector<QueueNode>, Later> queue;
    queue.push(QueueNode{root_bound_, root_bound_, 0, kFirstAllowance, {}});
    while (!queue.empty()) {
      QueueNode node = queue.top();
      queue.pop();
      in_.Tick();
      if ((++nodes_ & 63) == 0 && in_.Expired()) {
        stopped_ = true;
        open_bound_ = std::min(open_bound_, std::min(node.bound, MinBound(&queue)));
        return;
      }
      Load(node);
      double full = kInf;
      if (Prunable(node.bound, &full)) continue;
      if (node.depth == static_cast<int>(choice_.size())) {
        const Sequenced search = Sequence(full, node.allowance);
        if (!search.complete) {
          if (in_.Expired()) {
            stopped_ = true;
            open_bound_ = std::min({open_bound_, std::max(full, search.open_bound), MinBound(&queue)});
            return;
          }
          // Back into the queue, ranked by what it has shown it can reach
          // (its bound stays for pruning): others get their turn first.
          node.bound = std::max(full, search.open_bound);
          node.rank = std::max(node.rank, search.value);
          node.allowance *= 4;
          queue.push(std::move(node));
        }
        continue;
      }
      if (queue.size() > kMaxQueue) {
        // Too many open assignments: finish this one depth-first.
        Rec(node.depth, full);
        if (stopped_) {
          open_bound_ = std::min(open_bound_, MinBound(&queue));
          return;
        }
        continue;
      }
      const int i = choice_[node.depth];
      for (int p : l_.cand[i]) {
        if (!Allowed(i, p, in_.max_budget - Usage())) continue;
        Decide(i, p);
        const double bound = Bound(in_.max_budget - Usage());
        Undecide(i, p);
        if (bound == kInf) continue;
        QueueNode child{std::max(full, bound), std::max(full, bound), node.depth + 1, kFirstAllowance, node.pu};
        child.pu.push_back(p);
        queue.push(std::move(child));
      }
    }
  }

  void Rec(size_t depth, double inherited) {
    in_.Tick();
    if (stopped_ || ((++nodes_ & 255) == 0 && in_.Expired() && !in_.dive_only)) {
      stopped_ = true;
      open_bound_ = std::min(open_bound_, inherited);
      return;
    }
    double full = kInf;
    if (Prunable(inherited, &full)) return;
    if (depth == choice_.size()) {
      Leaf(full);
      return;
    }
    const int i = choice_[depth];
    // Children in the order of their bounds: good assignments first.
    std::vector<std::pair<double, int>> children;
    for (int p : l_.cand[i]) {
      if (!Allowed(i, p, in_.max_budget - Usage())) continue;
      Decide(i, p);
      children.push_back({Bound(in_.max_budget - Usage()), p});
      Undecide(i, p);
    }
    std::sort(children.begin(), children.end());
    for (const auto& [bound, p] : children) {
      if (bound == kInf) continue;
      Decide(i, p);
      Rec(depth + 1, std::max(full, bound));
      Undecide(i, p);
      if (stopped_) {
        open_bound_ = std::min(open_bound_, full);
        return;
      }
    }
  }

  void Decide(int i, int p) {
    decided_[i] = p;
    if (c_.pu(p).spatial) used_[p] += l_.xb[Idx(i, p)];
  }
  void Undecide(int i, int p) {
    decided_[i] = -1;
    if (c_.pu(p).spatial) used_[p] -= l_.xb[Idx(i, p)];
  }

  const SearchInput& in_;
  const LocalSegment& l_;
  const CostModel& c_;
  const int k_;
  std::vector<int> decided_, choice_;
  std::vector<int64_t> used_;
  std::vector<double> est_, tail_, knap_;
  std::vector<uint8_t> knap_take_;
  std::vector<KnapItem> items_;
  // The Lagrangian bound's state (Lagrangian()), made when its multipliers
  // are first tuned: searches that never tune them pay one pointer.
  struct LagrangianState {
    bool active = false;                   // Bound() adds the Lagrangian bound
    std::vector<double> mu, nu, lam;       // multipliers: operators, arcs, serial PUs
    std::vector<double> window;            // per serial PU: earliest start + shortest tail
    std::vector<int> fixed;                // per operator: its one PU left, or -1
    std::vector<int> arc_from;             // per arc (flat, by head): the tail's local id
    std::vector<size_t> arc_off, arc_out_off, out_arc;
    std::vector<int> pick, path_pred;      // a minimising assignment; longest-path scratch
    std::vector<double> path_finish;
    std::vector<KnapItem> items;
    std::vector<uint8_t> chosen;
  };
  std::unique_ptr<LagrangianState> lag_;
  std::vector<JacksonJob> jobs_;
  std::vector<std::pair<double, double>> heap_;
  std::vector<FrontierPoint> frontier_;
  double root_bound_ = 0, open_bound_ = kInf;
  int64_t nodes_ = 0;
  double slack_ = 0;
  bool stopped_ = false, complete_ = false;
};

}  // namespace

SegmentSearch SearchSegment(const SearchInput& in, const LocalSegment& l) {
  AssignmentSearch search(in, l);
  search.Run();
  return SegmentSearch{search.frontier(), search.complete(), search.open_bound(), search.slack(), search.nodes()};
}

double SegmentRootBound(const SearchInput& in, const LocalSegment& l) { return AssignmentSearch(in, l).RootBound(); }

double SegmentLagrangianRootBound(const SearchInput& in, const LocalSegment& l) {
  return AssignmentSearch(in, l).LagrangianRootBound();
}

std::vector<double> SegmentRootBoundByBudget(const SearchInput& in, const LocalSegment& l) {
  return AssignmentSearch(in, l).RootBoundByBudget();
}

}  // namespace hetplan::exact_internal
