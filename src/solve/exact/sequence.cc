// The exact search's sequencing level (exact/search_internal.h): the list
// schedules of one segment with every operator's PU fixed.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "solve/exact/search_internal.h"

namespace hetplan::exact_internal {

// The preemptive Jackson schedule: the heap holds (tail, work left) of the
// released jobs, the longest tail on top.
double Jackson(std::vector<JacksonJob>* jobs, std::vector<std::pair<double, double>>* heap) {
  if (jobs->empty()) return 0;
  std::sort(jobs->begin(), jobs->end(), [](const JacksonJob& a, const JacksonJob& b) { return a.head < b.head; });
  heap->clear();
  auto cmp = [](const std::pair<double, double>& a, const std::pair<double, double>& b) { return a.first < b.first; };
  double t = 0, lb = 0;
  size_t next = 0;
  while (next < jobs->size() || !heap->empty()) {
    if (heap->empty()) t = std::max(t, (*jobs)[next].head);
    while (next < jobs->size() && (*jobs)[next].head <= t) {
      heap->push_back({(*jobs)[next].tail, (*jobs)[next].dur});
      std::push_heap(heap->begin(), heap->end(), cmp);
      ++next;
    }
    std::pop_heap(heap->begin(), heap->end(), cmp);
    auto [q, work] = heap->back();
    heap->pop_back();
    const double until = next < jobs->size() ? (*jobs)[next].head : kInf;
    if (t + work <= until) {
      t += work;
      lb = std::max(lb, t + q);
    } else {
      work -= until - t;
      t = until;
      heap->push_back({q, work});
      std::push_heap(heap->begin(), heap->end(), cmp);
    }
  }
  return lb;
}

namespace {

// Dominance labels kept per search; beyond, no new ones are stored (valid).
constexpr size_t kMaxLabels = 3'000'000;
constexpr size_t kMaxLabelsPerKey = 64;

// The exact search over list schedules of one segment with every operator's
// PU fixed (`pu`): a depth-first branch-and-bound that dispatches operators
// in a topological order. An operator on a spatial PU starts as soon as its
// inputs arrive (dispatched when it becomes ready: its start does not depend
// on the order); each serial PU takes its next operator from the
// Giffler–Thompson conflict set. Nodes are pruned by the critical path and,
// per serial PU, the preemptive Jackson bound of its operators, and by
// dominance between nodes that dispatched the same operators. Only
// completions shorter than `in.upper` (and `threshold`) are of interest.
class SequenceSearch {
 public:
  SequenceSearch(const SearchInput& in, const LocalSegment& l, const std::vector<int>& pu)
      : in_(in),
        c_(*in.problem->costs),
        k_(c_.num_pus()),
        m_(l.m),
        serial_(l.serial),
        in_arcs_(l.in),
        out_arcs_(l.out),
        pu_(pu) {
    dur_.assign(m_, 0.0);
    for (int i = 0; i < m_; ++i) {
      if (std::find(l.cand[i].begin(), l.cand[i].end(), pu[i]) == l.cand[i].end()) {
        infeasible_ = true;
        return;
      }
      dur_[i] = l.dur[static_cast<size_t>(i) * k_ + pu[i]];
      if (in.budget_pu >= 0 && pu[i] == in.budget_pu) usage_ += l.xb[static_cast<size_t>(i) * k_ + pu[i]];
    }
    // tail_[i]: from the start of i to the end of the segment, without
    // serial conflicts.
    tail_.assign(m_, 0.0);
    for (int i = m_ - 1; i >= 0; --i) {
      double after = 0;
      for (const Arc& a : out_arcs_[i])
        after = std::max(after, Transfer(a.edge, pu_[i], pu_[a.other]) + tail_[a.other]);
      tail_[i] = dur_[i] + after;
    }
  }

  void Run() {
    if (infeasible_) return;
    in_d_.assign(m_, 0);
    finish_.assign(m_, 0);
    npred_.assign(m_, 0);
    free_.assign(k_, 0);  // every PU is free at the entry's finish (time 0)
    pending_.assign(k_, {});
    dset_.assign((m_ + 63) / 64, 0);
    std::vector<int> ready;
    for (int i = 0; i < m_; ++i) {
      for (const Arc& a : in_arcs_[i]) npred_[i] += a.other >= 0 ? 1 : 0;
      if (npred_[i] == 0) ready.push_back(i);
    }
    best_ = Upper();
    root_bound_ = std::max(in_.lower, Bound());
    MakeReady(ready);
    Rec(root_bound_);
    complete_ = !stopped_;
  }

  bool infeasible() const { return infeasible_; }
  bool complete() const { return complete_; }
  bool found() const { return !best_order_.empty(); }
  double value() const { return best_; }
  int64_t usage() const { return usage_; }
  const std::vector<int>& order() const { return best_order_; }
  // A lower bound on every completion the search may have missed (kInf when
  // it finished).
  double open_bound() const { return complete_ ? kInf : std::min(open_bound_, root_bound_); }
  int64_t nodes() const { return nodes_; }
  // Every completion is at least the best value found (or `upper`) minus this.
  double slack() const { return slack_; }

 private:
  double Transfer(int e, int p, int q) const { return p == q ? 0.0 : c_.transfer_us(e, p, q); }
  double Upper() const { return std::min(in_.upper, Threshold(in_, usage_)); }

  double Ready(int i) const {
    double r = 0;
    for (const Arc& a : in_arcs_[i]) {
      r = std::max(r, a.other < 0 ? Transfer(a.edge, in_.entry_pu, pu_[i])
                                  : finish_[a.other] + Transfer(a.edge, pu_[a.other], pu_[i]));
    }
    return r;
  }
  double Start(int i) const {
    const double r = Ready(i);
    return c_.pu(pu_[i]).spatial ? r : std::max(r, free_[pu_[i]]);
  }

  // The critical path from each waiting operator's earliest start, and the
  // preemptive Jackson schedule of each serial PU's operators (a bound for
  // the non-preemptive one; it includes the PU's load from its earliest
  // start plus the shortest tail).
  double Bound() {
    est_.assign(m_, 0.0);
    double lb = mk_;
    for (int i = 0; i < m_; ++i) {
      if (in_d_[i]) continue;
      double r = c_.pu(pu_[i]).spatial ? 0.0 : free_[pu_[i]];
      for (const Arc& a : in_arcs_[i]) {
        const double from = a.other < 0 ? 0.0 : (in_d_[a.other] ? finish_[a.other] : est_[a.other] + dur_[a.other]);
        r = std::max(r, from + Transfer(a.edge, a.other < 0 ? in_.entry_pu : pu_[a.other], pu_[i]));
      }
      est_[i] = r;
      lb = std::max(lb, r + tail_[i]);
    }
    for (int p : serial_) {
      jobs_.clear();
      for (int i = 0; i < m_; ++i) {
        if (!in_d_[i] && pu_[i] == p) jobs_.push_back({est_[i], dur_[i], tail_[i] - dur_[i]});
      }
      lb = std::max(lb, Jackson(&jobs_, &heap_));
    }
    return lb;
  }

  // Dominance between nodes that dispatched the same operators: one whose
  // makespan so far, serial PUs' free times and every arrival at the
  // operators still to come are all no larger dominates. An arrival at a
  // serial PU before its free time, and a makespan so far below the free
  // time of a serial PU with work left, make no difference to any
  // completion: they are raised to it, which lets more nodes dominate.
  bool Dominated() {
    std::string key(reinterpret_cast<const char*>(dset_.data()), dset_.size() * sizeof(uint64_t));
    double mk = mk_;
    for (int i = 0; i < m_; ++i) {
      if (!in_d_[i] && !c_.pu(pu_[i]).spatial) mk = std::max(mk, free_[pu_[i]]);
    }
    label_.clear();
    label_.push_back(mk);
    for (int p : serial_) label_.push_back(free_[p]);
    for (int i = 0; i < m_; ++i) {
      if (!in_d_[i]) continue;
      for (const Arc& a : out_arcs_[i]) {
        if (in_d_[a.other]) continue;
        const int q = pu_[a.other];
        const double arrive = finish_[i] + Transfer(a.edge, pu_[i], q);
        label_.push_back(c_.pu(q).spatial ? arrive : std::max(arrive, free_[q]));
      }
    }
    auto& labels = memo_[key];
    for (const std::vector<double>& other : labels) {
      bool dominates = true;
      for (size_t j = 0; j < label_.size() && dominates; ++j) dominates = other[j] <= label_[j] + Tol(label_[j]);
      if (dominates) return true;
    }
    std::erase_if(labels, [&](const std::vector<double>& other) {
      for (size_t j = 0; j < label_.size(); ++j) {
        if (label_[j] > other[j] + Tol(other[j])) return false;
      }
      return true;
    });
    if (stored_labels_ < kMaxLabels && labels.size() < kMaxLabelsPerKey) {
      labels.push_back(label_);
      ++stored_labels_;
    }
    return false;
  }

  void Dispatch(int i, std::vector<int>* newly) {
    finish_[i] = Start(i) + dur_[i];
    in_d_[i] = 1;
    dset_[i >> 6] |= uint64_t{1} << (i & 63);
    order_.push_back(i);
    mk_ = std::max(mk_, finish_[i]);
    if (!c_.pu(pu_[i]).spatial) free_[pu_[i]] = finish_[i];
    for (const Arc& a : out_arcs_[i]) {
      if (--npred_[a.other] == 0) newly->push_back(a.other);
    }
  }
  void Undispatch(int i, double old_free, double old_mk) {
    in_d_[i] = 0;
    dset_[i >> 6] &= ~(uint64_t{1} << (i & 63));
    order_.pop_back();
    mk_ = old_mk;
    if (!c_.pu(pu_[i]).spatial) free_[pu_[i]] = old_free;
    for (const Arc& a : out_arcs_[i]) ++npred_[a.other];
  }

  // Operators whose inputs are all dispatched: spatial ones are dispatched
  // at once (recursively), serial ones wait in pending_.
  struct Mark {
    size_t dispatched;
    std::vector<size_t> pending;
    double mk;
  };
  Mark Save() const {
    Mark mark{order_.size(), {}, mk_};
    for (int p = 0; p < k_; ++p) mark.pending.push_back(pending_[p].size());
    return mark;
  }
  void MakeReady(std::vector<int> ready) {
    while (!ready.empty()) {
      const int i = ready.back();
      ready.pop_back();
      if (c_.pu(pu_[i]).spatial) {
        Dispatch(i, &ready);
      } else {
        pending_[pu_[i]].push_back(i);
      }
    }
  }
  bool OutOfTime() {
    if (stopped_ || finished_) return true;
    ++nodes_;
    in_.Tick();
    if (nodes_ > in_.max_nodes || ((nodes_ & 255) == 0 && in_.Expired())) stopped_ = true;
    return stopped_;
  }

  // `inherited`: a bound valid for this subtree, recorded if time runs out.
  void Rec(double inherited) {
    if (OutOfTime()) {
      if (stopped_) open_bound_ = std::min(open_bound_, inherited);
      return;
    }
    if (static_cast<int>(order_.size()) == m_) {
      if (mk_ < best_ - Tol(mk_)) {
        best_ = mk_;
        best_order_ = order_;
        if (in_.dive_only) stopped_ = true;
        // A schedule at the root bound ends the search.
        if (best_ <= root_bound_ + std::max(Tol(best_), in_.tolerance)) {
          finished_ = true;
          if (best_ > root_bound_ + Tol(best_)) slack_ = std::max(slack_, best_ - root_bound_);
        }
      }
      return;
    }
    const double lb = std::max(inherited, Bound());
    if (lb >= best_ - std::max(Tol(best_), in_.tolerance)) {
      if (lb < best_ - Tol(best_)) slack_ = std::max(slack_, best_ - lb);
      return;
    }
    if (Dominated()) return;
    // Giffler–Thompson: the serial PU whose next operator can finish first,
    // and its operators that could start before that.
    double t_star = kInf;
    int p_star = -1, j_star = -1;
    for (int p : serial_) {
      for (int i : pending_[p]) {
        const double f = Start(i) + dur_[i];
        if (f < t_star) {
          t_star = f;
          p_star = p;
          j_star = i;
        }
      }
    }
    if (p_star < 0) return;  // unreachable: an operator waits whenever some are left
    // Children: the earliest start first (idle time on the PU is what most
    // often separates a schedule from the bound), then the longest tail.
    struct Child {
      double start, tail;
      int op;
    };
    std::vector<Child> conflict;
    for (int i : pending_[p_star]) {
      const double s = Start(i);
      if (s < t_star || i == j_star) conflict.push_back({s, tail_[i], i});
    }
    std::sort(conflict.begin(), conflict.end(), [](const Child& x, const Child& y) {
      return std::tie(x.start, y.tail, x.op) < std::tie(y.start, x.tail, y.op);
    });
    for (const Child& child : conflict) {
      const Mark mark = Save();
      std::vector<int>& pend = pending_[p_star];
      const auto pos = std::find(pend.begin(), pend.end(), child.op) - pend.begin();
      pend.erase(pend.begin() + pos);
      const double old_free = free_[p_star];
      std::vector<int> newly;
      Dispatch(child.op, &newly);
      MakeReady(std::move(newly));
      Rec(lb);
      // Undo: the spatial operators dispatched after it, then it.
      while (order_.size() > mark.dispatched + 1) Undispatch(order_.back(), 0, mk_);
      Undispatch(child.op, old_free, mark.mk);
      for (int p = 0; p < k_; ++p) pending_[p].resize(p == p_star ? mark.pending[p] - 1 : mark.pending[p]);
      pend.insert(pend.begin() + pos, child.op);
      if (stopped_ || finished_) {
        if (stopped_) open_bound_ = std::min(open_bound_, lb);
        break;
      }
    }
  }

  const SearchInput& in_;
  const CostModel& c_;
  const int k_;
  const int m_;
  const std::vector<int>& serial_;
  const std::vector<std::vector<Arc>>& in_arcs_;
  const std::vector<std::vector<Arc>>& out_arcs_;
  const std::vector<int>& pu_;
  std::vector<double> dur_, tail_;
  int64_t usage_ = 0;

  // Node state.
  std::vector<char> in_d_;
  std::vector<int> npred_, order_;
  std::vector<double> finish_, free_;
  std::vector<std::vector<int>> pending_;
  std::vector<uint64_t> dset_;
  double mk_ = 0;

  // Scratch.
  std::vector<double> est_, label_;
  std::vector<JacksonJob> jobs_;
  std::vector<std::pair<double, double>> heap_;

  std::unordered_map<std::string, std::vector<std::vector<double>>> memo_;
  size_t stored_labels_ = 0;
  double best_ = kInf, root_bound_ = 0, open_bound_ = kInf, slack_ = 0;
  std::vector<int> best_order_;
  int64_t nodes_ = 0;
  bool stopped_ = false, complete_ = false, infeasible_ = false, finished_ = false;
};

}  // namespace

SequenceOutcome SequenceAssignment(const SearchInput& in, const LocalSegment& l, const std::vector<int>& pu) {
  SequenceSearch search(in, l, pu);
  search.Run();
  SequenceOutcome out;
  out.complete = search.complete();
  out.found = search.found();
  out.value = search.value();
  out.usage = search.usage();
  if (out.found) out.order = search.order();
  out.open_bound = search.open_bound();
  out.nodes = search.nodes();
  out.slack = search.slack();
  return out;
}

}  // namespace hetplan::exact_internal
