// The exact search behind the "strong" formulation of the "ilp" backend for
// the latency objective; see exact_search.h for the method and docs/ilp.md for
// why each rule is exact.
#include "solve/exact_search.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <queue>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hetplan/graph/algorithms.h"
#include "hetplan/solve/list_schedule.h"
#include "solve/exact_incumbent.h"

namespace hetplan::exact_internal {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Times within this relative tolerance are equal (the costs are µs floats;
// 1e-9 is far below any cost and far above rounding).
double Tol(double x) { return 1e-9 * std::max(1.0, std::fabs(x)); }

// Tables indexed by the crossbars left are kept up to this many columns;
// beyond, the bounds ignore the budget (still valid, weaker).
constexpr int64_t kMaxBudgetColumns = 4096;
// Pass 2 builds tables over (PU, crossbars used) per segment up to this many
// columns; beyond, it runs without thresholds (valid, slower).
constexpr int64_t kMaxThresholdColumns = 1 << 15;
// Dominance labels kept per search; beyond, no new ones are stored (valid).
constexpr size_t kMaxLabels = 3'000'000;
constexpr size_t kMaxLabelsPerKey = 64;
// Best-first assignment search: open nodes kept at most, and the first node
// allowance of a sequencing search.
constexpr size_t kMaxQueue = 200'000;
constexpr int64_t kFirstAllowance = 4096;

// ---------------------------------------------------------------------------
// Series decomposition.

struct Segment {
  std::vector<int> ops;   // global ids, topological order
  int entry = -1;         // the cut right before the segment, -1 for the first
  bool has_exit = false;  // ops.back() is the cut that closes the segment
};

// An edge may carry a transfer when its ends can run on different PUs with a
// positive transfer time between them.
bool MayTransfer(const CostModel& c, const std::vector<std::vector<int>>& cand, int e, int u, int w) {
  for (int p : cand[u]) {
    for (int q : cand[w]) {
      if (p != q && c.transfer_us(e, p, q) > 0) return true;
    }
  }
  return false;
}

// Cuts (operators comparable to every other one) that no transferring edge
// jumps over. After such a cut c every PU is free (all other operators
// either finished before c started or start after c finished) and no input
// arrives later than c's own output, so the rest of the schedule depends
// only on c's finish, c's PU and the capacity left.
std::vector<Segment> Decompose(const OpGraph& g, const CostModel& c, const std::vector<std::vector<int>>& cand) {
  const int n = g.size();
  std::vector<bool> cut = CutOperators(g);
  std::vector<int> jumped(n + 1, 0);  // difference array over topological positions
  for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
    const int u = g.edges()[e].from, w = g.edges()[e].to;
    if (!MayTransfer(c, cand, e, u, w)) continue;
    ++jumped[g.topo_position(u) + 1];
    --jumped[g.topo_position(w)];
  }
  std::vector<Segment> segments(1);
  int depth = 0;
  for (int i = 0; i < n; ++i) {
    depth += jumped[i];
    const int v = g.topological_order()[i];
    segments.back().ops.push_back(v);
    if (cut[v] && depth == 0 && i + 1 < n) {
      segments.back().has_exit = true;
      segments.push_back(Segment{{}, v, false});
    }
  }
  if (n > 0 && cut[g.topological_order()[n - 1]]) segments.back().has_exit = true;
  return segments;
}

// ---------------------------------------------------------------------------
// The branch-and-bound over one segment.

struct FrontierPoint {
  int64_t usage = 0;       // crossbars of the budget PU used in the segment
  double value = 0;        // latest finish in the segment, relative to the entry's finish
  std::vector<int> pu;     // per local operator
  std::vector<int> order;  // local dispatch order
};

// The frontier's value at budget b: the shortest length with usage ≤ b.
double FrontierValueAt(const std::vector<FrontierPoint>& frontier, int64_t b) {
  double v = kInf;
  for (const FrontierPoint& p : frontier) {
    if (p.usage > b) break;
    v = p.value;
  }
  return v;
}

// Adds `point` to a frontier (sorted by usage, values decreasing) unless a
// point with no more usage is no longer; drops the points it beats.
void InsertPoint(std::vector<FrontierPoint>* frontier, const FrontierPoint& point) {
  if (point.value >= FrontierValueAt(*frontier, point.usage) - Tol(point.value)) return;
  std::erase_if(*frontier, [&](const FrontierPoint& p) {
    return p.usage >= point.usage && p.value >= point.value - Tol(point.value);
  });
  auto it = std::lower_bound(frontier->begin(), frontier->end(), point.usage,
                             [](const FrontierPoint& p, int64_t u) { return p.usage < u; });
  frontier->insert(it, point);
}

// Nodes spent by the searches of one solve, and where the running search
// must stop: unlike the deadline, where a node budget stops a search does not
// depend on the machine's speed or load.
struct WorkBudget {
  int64_t used = 0;
  int64_t limit = std::numeric_limits<int64_t>::max();
  const std::atomic<bool>* interrupt = nullptr;  // SolveOptions::interrupt
  bool exhausted() const { return used > limit; }
  bool interrupted() const { return interrupt != nullptr && interrupt->load(std::memory_order_relaxed); }
};

struct SearchInput {
  const Problem* problem = nullptr;
  const std::vector<std::vector<int>>* cand = nullptr;
  const Segment* segment = nullptr;
  int entry_pu = -1;              // PU of segment->entry
  int exit_pu = -1;               // PU the exit cut must take, -1 = any
  int budget_pu = -1;             // the spatial PU whose usage the frontier tracks
  int64_t max_budget = 0;         // crossbars of budget_pu the segment may use
  std::vector<int64_t> capacity;  // per PU: what the segment may use (spatial PUs)
  Clock::time_point deadline;
  WorkBudget* work = nullptr;  // shared node budget (nullptr: none)
  // Out of time, or of the node budget (a dive for a first schedule is not
  // stopped by the budget, only by the deadline).
  bool Expired() const {
    return Clock::now() > deadline ||
           (work != nullptr && (work->interrupted() || (!dive_only && work->exhausted())));
  }
  // Counts one node against the shared budget.
  void Tick() const {
    if (work != nullptr) ++work->used;
  }
  bool dive_only = false;                                   // stop at the first complete schedule
  double upper = kInf;                                      // only shorter completions are of interest
  int64_t max_nodes = std::numeric_limits<int64_t>::max();  // then stop as on the deadline
  double lower = 0;                                         // a bound already proven for every completion
  double tolerance = 0;                                     // prune nodes whose bound is within this of the frontier
  bool lagrangian = false;                                  // the root bound with AssignmentSearch::Lagrangian too
  // Per usage u of the budget PU (0..max_budget): only completions shorter
  // than threshold[u] can improve the whole schedule.
  const std::vector<double>* threshold = nullptr;
  const std::vector<FrontierPoint>* initial = nullptr;  // known points, kept
};

double Threshold(const SearchInput& in, int64_t u) {
  if (in.threshold == nullptr || in.threshold->empty()) return kInf;
  const auto i = static_cast<size_t>(std::clamp<int64_t>(u, 0, static_cast<int64_t>(in.threshold->size()) - 1));
  return (*in.threshold)[i];
}

// A job of the one-machine relaxation: earliest start, duration, and the
// time that must follow it to the end.
struct JacksonJob {
  double head, dur, tail;
};

// The makespan of the preemptive Jackson schedule (at any time run the
// released job with the longest tail) of `jobs`: a lower bound for the
// non-preemptive problem, equal to max over job sets S of
// min head + Σ dur + min tail. Sorts `jobs`; `heap` is scratch.
double Jackson(std::vector<JacksonJob>* jobs, std::vector<std::pair<double, double>>* heap) {
  if (jobs->empty()) return 0;
  std::sort(jobs->begin(), jobs->end(), [](const JacksonJob& a, const JacksonJob& b) { return a.head < b.head; });
  heap->clear();  // (tail, work left), max-heap on the tail
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

// One directed dependency inside a segment: edge id and the local id of the
// operator at its other end (-1 = the entry cut).
struct Arc {
  int edge;
  int other;
};

// The operators of one segment with local ids 0..m-1 (topological order),
// their candidate PUs, durations, crossbars and arcs, for one entry PU and
// one exit PU.
struct LocalSegment {
  int m = 0;
  std::vector<int> serial, spatial;
  std::vector<std::vector<int>> cand;
  std::vector<double> dur;  // [i * K + p], kInf off the candidates
  std::vector<int64_t> xb;  // [i * K + p], crossbars on spatial PUs
  std::vector<std::vector<Arc>> in, out;
};

LocalSegment BuildLocal(const SearchInput& in) {
  const OpGraph& g = *in.problem->graph;
  const CostModel& c = *in.problem->costs;
  const Segment& seg = *in.segment;
  const int k = c.num_pus();
  LocalSegment l;
  l.m = static_cast<int>(seg.ops.size());
  std::vector<int> local(g.size(), -1);
  for (int i = 0; i < l.m; ++i) local[seg.ops[i]] = i;
  for (int p = 0; p < k; ++p) (c.pu(p).spatial ? l.spatial : l.serial).push_back(p);
  l.cand.resize(l.m);
  l.dur.assign(static_cast<size_t>(l.m) * k, kInf);
  l.xb.assign(static_cast<size_t>(l.m) * k, 0);
  l.in.resize(l.m);
  l.out.resize(l.m);
  for (int i = 0; i < l.m; ++i) {
    const int v = seg.ops[i];
    for (int p : (*in.cand)[v]) {
      if (seg.has_exit && i == l.m - 1 && in.exit_pu >= 0 && p != in.exit_pu) continue;
      if (c.pu(p).spatial && c.crossbars(v, p) > in.capacity[p]) continue;
      l.cand[i].push_back(p);
      l.dur[static_cast<size_t>(i) * k + p] = c.latency_us(v, p);
      l.xb[static_cast<size_t>(i) * k + p] = c.pu(p).spatial ? c.crossbars(v, p) : 0;
    }
    for (int e : g.in_edges(v)) {
      const int u = g.edges()[e].from;
      if (local[u] >= 0) {
        l.in[i].push_back({e, local[u]});
      } else if (u == seg.entry) {
        l.in[i].push_back({e, -1});
      }
      // Any other predecessor finished before the entry and sends no
      // transfer across it (Decompose): it never delays this operator.
    }
    for (int e : g.out_edges(v)) {
      const int w = g.edges()[e].to;
      if (local[w] >= 0) l.out[i].push_back({e, local[w]});
    }
  }
  return l;
}

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
    SequenceSearch search(in, l_, decided_);
    search.Run();
    nodes_ += search.nodes();
    slack_ = std::max(slack_, search.slack());
    if (search.found()) Insert(FrontierPoint{search.usage(), search.value(), decided_, search.order()});
    return Sequenced{search.complete(), search.found() ? search.value() : in.upper, search.open_bound()};
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

// ---------------------------------------------------------------------------
// The dynamic programme over segments.

struct DpState {
  int pu = -1;        // PU of the cut that ends the previous segment (-1 before the first)
  int64_t usage = 0;  // crossbars of the budget PU used so far
  double time = 0;    // finish of that cut (upper-bound DP) or a bound on it (lower-bound DP)
  int prev = -1;      // index in the previous segment's states
  int search = -1;    // which search, and which point of its frontier
  int point = -1;
};

// Keeps the states no other state beats (same PU, no more usage, no later).
void KeepNondominated(std::vector<DpState>* states) {
  std::sort(states->begin(), states->end(), [](const DpState& a, const DpState& b) {
    return std::tie(a.pu, a.usage, a.time) < std::tie(b.pu, b.usage, b.time);
  });
  std::vector<DpState> kept;
  for (const DpState& s : *states) {
    if (!kept.empty() && kept.back().pu == s.pu && kept.back().time <= s.time + Tol(s.time)) continue;
    kept.push_back(s);
  }
  // Within one PU, sorted by usage: a later state survives only if faster.
  *states = std::move(kept);
}

// A lower bound on the completions a search has not explored, as steps:
// every one that uses at least `usage` crossbars of the budget PU (and fewer
// than the next step's) is at least `value` long.
struct BoundStep {
  int64_t usage;
  double value;
};

struct SearchRecord {
  int entry_pu, exit_pu;
  std::vector<FrontierPoint> frontier;
  bool complete;
  double open_bound;  // valid at every usage (kInf when complete)
  double slack;
  std::vector<BoundStep> open;  // the open bound by usage; empty when complete
};

// The steps of max(open_bound, root[u]) over u (root nonincreasing): a
// completion with usage u is at least as long as both, because the root
// bound at budget u holds for every completion within it.
std::vector<BoundStep> OpenSteps(double open_bound, const std::vector<double>& root) {
  std::vector<BoundStep> steps;
  if (open_bound == kInf) return steps;
  if (root.empty()) return {BoundStep{0, open_bound}};
  for (size_t u = 0; u < root.size(); ++u) {
    const double v = std::max(open_bound, root[u]);
    if (v == kInf) continue;
    if (steps.empty() || v < steps.back().value) steps.push_back(BoundStep{static_cast<int64_t>(u), v});
  }
  return steps;
}

// Seeds the frontiers of the searches still open with the segments of a
// local-search schedule of the whole graph (exact_incumbent.h): a schedule
// of the whole graph is, cut by cut, one frontier point per segment (at a cut
// every PU is idle and no transfer jumps over it, so each segment's timing
// relative to its entry is its own). Better incumbents tighten the
// thresholds of pass 2; the proof never rests on them.
// Calls f(0..count-1) on `threads` threads (the calling one included); each
// index once. f must not share mutable state across indices.
template <typename F>
void ParallelFor(int threads, size_t count, F f) {
  const size_t width = std::min<size_t>(std::max(threads, 1), count);
  if (width <= 1) {
    for (size_t i = 0; i < count; ++i) f(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++) f(i);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < width; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

// A schedule of the whole graph, cut by cut, as one frontier point per
// segment (at a cut every PU is idle and no transfer jumps over it, so each
// segment's timing relative to its entry is its own), each added to the
// matching open search's frontier.
template <typename Job>
void SeedFrontiers(const Problem& pr, const Incumbent& inc, const std::vector<Segment>& segments,
                   const std::vector<std::vector<int>>& jobs_of, int budget_pu, std::vector<Job>* jobs) {
  const CostModel& c = *pr.costs;
  const Schedule& s = inc.schedule;
  std::vector<int> position(pr.graph->size());
  for (int i = 0; i < static_cast<int>(inc.order.size()); ++i) position[inc.order[i]] = i;
  for (int si = 0; si < static_cast<int>(segments.size()); ++si) {
    const Segment& seg = segments[si];
    const int entry_pu = seg.entry >= 0 ? inc.assignment[seg.entry] : -1;
    const int exit_pu = seg.has_exit ? inc.assignment[seg.ops.back()] : -1;
    FrontierPoint point;
    const double start = seg.entry >= 0 ? s.ops[seg.entry].finish_us : 0.0;
    for (int v : seg.ops) {
      point.pu.push_back(inc.assignment[v]);
      point.value = std::max(point.value, s.ops[v].finish_us - start);
      if (budget_pu >= 0 && inc.assignment[v] == budget_pu) point.usage += c.crossbars(v, budget_pu);
    }
    point.order.resize(seg.ops.size());
    for (int i = 0; i < static_cast<int>(seg.ops.size()); ++i) point.order[i] = i;
    std::sort(point.order.begin(), point.order.end(),
              [&](int x, int y) { return position[seg.ops[x]] < position[seg.ops[y]]; });
    for (int ji : jobs_of[si]) {
      Job& job = (*jobs)[ji];
      if (job.record.complete || job.record.entry_pu != entry_pu || job.record.exit_pu != exit_pu) continue;
      InsertPoint(&job.record.frontier, point);
    }
  }
}

// Local-search schedules of the whole graph (exact_incumbent.h) at several
// budgets of the budget PU (its whole capacity and fractions of it), so that
// the open searches get frontier points at many usages for the DP to combine.
// Repeatable: a fixed number of moves per budget (400 per choice operator,
// at most 200,000 over all budgets: ten times the descent that came before
// the annealing, which was measured to stop short of it); `until` only cuts
// it short, the annealing first, the descent at its start seldom.
std::vector<Incumbent> LocalSearchSchedules(const Problem& pr, const std::vector<std::vector<int>>& cand, int budget_pu,
                                            Clock::time_point until, const std::atomic<bool>* stop) {
  const CostModel& c = *pr.costs;
  int64_t choices = 0;
  for (const auto& cv : cand) choices += cv.size() > 1 ? 1 : 0;
  std::vector<int64_t> capacity(c.num_pus(), 0);
  for (int p = 0; p < c.num_pus(); ++p) capacity[p] = c.pu(p).spatial ? c.pu(p).capacity : 0;
  constexpr int kLevels = 6;
  const int levels = budget_pu >= 0 ? kLevels : 1;
  const int64_t moves = std::min<int64_t>(400 * choices, 200000) / levels;
  std::vector<Incumbent> found;
  for (int j = levels; j >= 1; --j) {
    if (stop != nullptr && stop->load()) break;
    std::vector<int64_t> cap = capacity;
    if (budget_pu >= 0) cap[budget_pu] = capacity[budget_pu] * j / levels;
    const auto now = Clock::now();
    const auto share = now < until ? now + (until - now) / j : now;
    if (auto inc = LocalSearchIncumbent(pr, cand, cap, moves, share, stop)) found.push_back(std::move(*inc));
  }
  return found;
}

// The input of the search of one segment between the cut PUs `entry` and
// `exit` (-1: the graph's start or end), tracking budget_pu's usage (-1:
// none) up to `budget`.
SearchInput SegmentInput(const Problem& pr, const std::vector<std::vector<int>>& cand, const Segment& seg, int entry,
                         int exit, int budget_pu, int64_t budget, const std::vector<int64_t>& capacity) {
  SearchInput in;
  in.problem = &pr;
  in.cand = &cand;
  in.segment = &seg;
  in.entry_pu = entry;
  in.exit_pu = exit;
  in.budget_pu = budget_pu;
  in.max_budget = budget_pu >= 0 ? budget : 0;
  in.capacity = capacity;
  return in;
}

// Calls f(entry, exit) for every pair of PUs the cuts around segment si can
// take (-1 where the segment starts or ends the graph).
template <typename F>
void ForEachCutPair(const std::vector<Segment>& segments, size_t si, const std::vector<std::vector<int>>& cand, F f) {
  const Segment& seg = segments[si];
  const std::vector<int> entries = si == 0 ? std::vector<int>{-1} : cand[seg.entry];
  const std::vector<int> exits = seg.has_exit ? cand[seg.ops.back()] : std::vector<int>{-1};
  for (int a : entries) {
    for (int b : exits) f(a, b);
  }
}

}  // namespace

RootBounds SegmentRootBounds(const Problem& pr, const std::vector<std::vector<int>>& cand) {
  const CostModel& c = *pr.costs;
  const int k = c.num_pus();
  RootBounds out;
  std::vector<int64_t> capacity(k, std::numeric_limits<int64_t>::max());
  int budget_pu = -1;
  for (int p = 0; p < k; ++p) {
    if (!c.pu(p).spatial) continue;
    capacity[p] = c.pu(p).capacity;
    if (budget_pu < 0) budget_pu = p;
  }
  const std::vector<Segment> segments = Decompose(*pr.graph, c, cand);
  out.segments = static_cast<int>(segments.size());
  if (budget_pu >= 0) out.by_budget.assign(static_cast<size_t>(c.pu(budget_pu).capacity) + 1, 0.0);
  for (size_t si = 0; si < segments.size(); ++si) {
    double plain = kInf, lagrangian = kInf;
    std::vector<double> by_budget(out.by_budget.size(), kInf);
    const int64_t budget = budget_pu >= 0 ? c.pu(budget_pu).capacity : 0;
    ForEachCutPair(segments, si, cand, [&](int a, int b) {
      const SearchInput in = SegmentInput(pr, cand, segments[si], a, b, budget_pu, budget, capacity);
      const LocalSegment local = BuildLocal(in);
      plain = std::min(plain, AssignmentSearch(in, local).RootBound());
      lagrangian = std::min(lagrangian, AssignmentSearch(in, local).LagrangianRootBound());
      if (budget_pu >= 0) {
        const std::vector<double> f = AssignmentSearch(in, local).RootBoundByBudget();
        for (size_t u = 0; u < f.size(); ++u) by_budget[u] = std::min(by_budget[u], f[u]);
      }
    });
    out.plain += plain;
    out.lagrangian += lagrangian;
    for (size_t u = 0; u < by_budget.size(); ++u) out.by_budget[u] += by_budget[u];
  }
  return out;
}

SearchOutcome SolveLatencyBySearch(const Problem& pr, const std::vector<std::vector<int>>& cand,
                                   Clock::time_point deadline, double relative_gap, int64_t node_limit,
                                   const std::atomic<bool>* interrupt, int threads, int sweep_pu) {
  threads = std::max(1, threads);
  const bool sweep = sweep_pu >= 0;
  const OpGraph& g = *pr.graph;
  const CostModel& c = *pr.costs;
  const int n = g.size(), k = c.num_pus();
  SearchOutcome out;

  // Spatial PUs whose capacity can bind. With one, the segments are joined
  // by a DP over its usage; with more, the graph is searched whole.
  std::vector<int64_t> capacity(k, std::numeric_limits<int64_t>::max());
  std::vector<int> binding;
  for (int p = 0; p < k; ++p) {
    if (!c.pu(p).spatial) continue;
    capacity[p] = c.pu(p).capacity;
    int64_t total = 0;
    for (int v = 0; v < n; ++v) {
      if (std::find(cand[v].begin(), cand[v].end(), p) != cand[v].end()) total += c.crossbars(v, p);
    }
    // A swept PU is tracked whether or not its capacity binds.
    if (total > c.pu(p).capacity || p == sweep_pu) binding.push_back(p);
  }
  std::vector<Segment> segments;
  int budget_pu = -1;
  int64_t budget = 0;
  if (binding.size() <= 1) {
    segments = Decompose(g, c, cand);
    if (binding.size() == 1) {
      budget_pu = binding[0];
      budget = c.pu(budget_pu).capacity;
    }
  } else {
    Segment whole;
    whole.ops = g.topological_order();
    segments.push_back(std::move(whole));
    if (sweep) {
      // One segment: the search tracks the swept PU's usage, the others'
      // capacities bound it as constraints.
      budget_pu = sweep_pu;
      budget = c.pu(sweep_pu).capacity;
    }
  }
  const int num_segments = static_cast<int>(segments.size());
  out.stats.segments = num_segments;
  for (const Segment& s : segments) {
    out.stats.largest_segment = std::max(out.stats.largest_segment, static_cast<int>(s.ops.size()));
  }

  // One search per segment, PU of the cut before it and PU of the cut that
  // closes it, each over the whole crossbar budget.
  struct Job {
    int segment;
    SearchInput in;
    LocalSegment local;
    double root = 0;
    std::vector<double> root_by_budget;  // filled when a search stays open
    SearchRecord record;
    bool ran = false;
    int64_t nodes = 0;  // spent by its searches
    int searches = 0;
  };
  std::vector<Job> jobs;
  std::vector<std::vector<int>> jobs_of(num_segments);
  for (int si = 0; si < num_segments; ++si) {
    ForEachCutPair(segments, static_cast<size_t>(si), cand, [&](int a, int b) {
      Job job;
      job.segment = si;
      job.in = SegmentInput(pr, cand, segments[si], a, b, budget_pu, budget, capacity);
      job.in.deadline = deadline;
      job.record = SearchRecord{a, b, {}, false, 0, 0, {}};
      jobs_of[si].push_back(static_cast<int>(jobs.size()));
      jobs.push_back(std::move(job));
    });
  }
  // A lower bound on the optimum: each segment costs at least its cheapest
  // root bound. The gap tolerance is spent against it, so it stays honest.
  double lower = 0;
  for (int si = 0; si < num_segments; ++si) {
    double cheapest = kInf;
    for (int ji : jobs_of[si]) {
      Job& job = jobs[ji];
      job.local = BuildLocal(job.in);
      AssignmentSearch probe(job.in, job.local);
      job.root = probe.RootBound();
      cheapest = std::min(cheapest, job.root);
    }
    if (cheapest < kInf) lower += cheapest;
  }
  double tolerance_left = relative_gap > 0 && lower < kInf ? 0.9 * relative_gap * lower : 0.0;

  // Nodes a search may spend: pass 1 shares a third of the budget among the
  // searches, pass 2 shares what is left among those that did not finish.
  const int64_t kNoLimit = std::numeric_limits<int64_t>::max();
  auto allowance = [&](int64_t pool, size_t searches) {
    return node_limit > 0 ? std::max<int64_t>(pool, 0) / static_cast<int64_t>(std::max<size_t>(searches, 1))
                          : kNoLimit;
  };
  // One search of a job with its own node allowance: jobs share nothing
  // mutable, so they may run on several threads with the same result.
  auto run = [&](Job& job, Clock::time_point until, double tolerance, const std::vector<double>* threshold,
                 int64_t nodes, bool lagrangian) {
    WorkBudget work;
    work.interrupt = interrupt;
    work.limit = nodes;
    SearchInput in = job.in;
    in.work = &work;
    in.deadline = std::min(until, deadline);
    in.dive_only = Clock::now() > deadline;
    in.tolerance = tolerance;
    in.threshold = threshold;
    in.lagrangian = lagrangian;
    in.initial = &job.record.frontier;
    AssignmentSearch search(in, job.local);
    search.Run();
    job.nodes += search.nodes();
    ++job.searches;
    job.record = SearchRecord{job.in.entry_pu,   job.in.exit_pu,      search.frontier(),
                              search.complete(), search.open_bound(), search.slack(), {}};
    if (!search.complete()) {
      // What the search left open, by crossbars used: the whole budget may
      // not go to every segment at once (budget_pu < 0: one step).
      if (budget_pu >= 0 && job.root_by_budget.empty() && budget <= kMaxThresholdColumns) {
        AssignmentSearch probe(job.in, job.local);
        job.root_by_budget = probe.RootBoundByBudget();
      }
      job.record.open = OpenSteps(job.record.open_bound, job.root_by_budget);
    }
    job.ran = true;
  };

  // The DPs over segments: ub with schedules, lb over lower bounds (frontier
  // values less the slack their search allowed itself; what a search did not
  // cover counts at its open bound with any usage).
  std::vector<std::vector<DpState>> ub(num_segments + 1);
  std::vector<DpState> lb;
  auto run_dps = [&]() {
    for (auto& states : ub) states.clear();
    lb.clear();
    ub[0].push_back(DpState{});
    lb.push_back(DpState{});
    for (int si = 0; si < num_segments; ++si) {
      std::vector<DpState> next_ub, next_lb;
      for (int ji : jobs_of[si]) {
        const SearchRecord& rec = jobs[ji].record;
        const int a = rec.entry_pu, b = rec.exit_pu;
        for (int prev = 0; prev < static_cast<int>(ub[si].size()); ++prev) {
          const DpState& s = ub[si][prev];
          if (s.pu != a) continue;
          for (int pi = 0; pi < static_cast<int>(rec.frontier.size()); ++pi) {
            const FrontierPoint& pt = rec.frontier[pi];
            if (budget_pu >= 0 && s.usage + pt.usage > budget) break;
            next_ub.push_back(DpState{b, s.usage + pt.usage, s.time + pt.value, prev, ji, pi});
          }
        }
        for (const DpState& s : lb) {
          if (s.pu != a) continue;
          for (const FrontierPoint& pt : rec.frontier) {
            if (budget_pu >= 0 && s.usage + pt.usage > budget) break;
            next_lb.push_back(DpState{b, s.usage + pt.usage, s.time + pt.value - rec.slack, -1, -1, -1});
          }
          for (const BoundStep& st : rec.open) {
            if (budget_pu >= 0 && s.usage + st.usage > budget) break;
            next_lb.push_back(DpState{b, s.usage + st.usage, s.time + st.value, -1, -1, -1});
          }
        }
      }
      KeepNondominated(&next_ub);
      KeepNondominated(&next_lb);
      ub[si + 1] = std::move(next_ub);
      lb = std::move(next_lb);
    }
  };

  // Pass 1, smallest segments first, exactly, each with a share of a third
  // of the time: nearly all finish at once.
  std::vector<int> order(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
    return segments[jobs[x].segment].ops.size() < segments[jobs[y].segment].ops.size();
  });
  const auto t1 = Clock::now();
  const auto first_share = (deadline - t1) / 3 / std::max<size_t>(1, jobs.size());
  // The local search for incumbents runs beside the searches when there is
  // a second thread, alone after pass 2 otherwise; its schedules are added to
  // the frontiers only when pass 2 too leaves a search open (so graphs the
  // searches finish never pay for it), and do not depend on when it ran.
  std::vector<Incumbent> seeds;
  std::atomic<bool> stop_seeding{false};
  const auto seed_until = t1 + (deadline - t1) / 8;
  // Alone, the searches leave the local search its eighth of the time.
  const auto search_deadline = threads > 1 ? deadline : deadline - (deadline - t1) / 8;
  std::thread seeder;
  if (threads > 1 && jobs.size() > 0) {
    seeder = std::thread([&] { seeds = LocalSearchSchedules(pr, cand, budget_pu, seed_until, &stop_seeding); });
  }
  const int64_t first_nodes = allowance(node_limit / 3, jobs.size());
  ParallelFor(threads > 1 && seeder.joinable() ? threads - 1 : threads, order.size(), [&](size_t i) {
    run(jobs[order[i]], Clock::now() + first_share, 0.0, nullptr, first_nodes, false);
  });
  std::vector<int> again;
  std::vector<bool> segment_again(num_segments, false);
  for (int ji : order) {
    if (!jobs[ji].record.complete) {
      again.push_back(ji);
      segment_again[jobs[ji].segment] = true;
    }
  }
  if (again.empty()) stop_seeding = true;
  // The best whole schedule so far: a later search must beat it.
  run_dps();
  double incumbent = kInf;
  for (const DpState& s : ub.back()) incumbent = std::min(incumbent, s.time);
  // A search of pass 2 prunes a completion whose bound is within its
  // tolerance of its threshold; the whole schedule through such a completion
  // is then at least the incumbent less that search's slack.
  double threshold_slack = 0;

  if (!again.empty()) {
    // Pass 2: what did not finish gets the rest of the time and the gap
    // tolerance (shared among its segments), and per usage u of its segment
    // a threshold: the incumbent less a lower bound on the other segments
    // with the crossbars left (prefix and suffix DPs over lower bounds).
    const int slots = k + 1;  // PU + 1: slot 0 is "no cut yet"
    const int64_t cols = budget + 1;
    auto at = [&](std::vector<double>& t, int pu, int64_t r) -> double& {
      return t[static_cast<size_t>(pu + 1) * cols + r];
    };
    auto segment_lower = [&](const SearchRecord& rec, const std::vector<double>& from, std::vector<double>& to) {
      for (int64_t r = 0; r < cols; ++r) {
        const double base = at(const_cast<std::vector<double>&>(from), rec.entry_pu, r);
        if (base == kInf) continue;
        for (const FrontierPoint& pt : rec.frontier) {
          if (r + pt.usage >= cols) break;
          double& cell = at(to, rec.exit_pu, r + pt.usage);
          cell = std::min(cell, base + pt.value - rec.slack);
        }
        for (const BoundStep& st : rec.open) {
          if (r + st.usage >= cols) break;
          double& cell = at(to, rec.exit_pu, r + st.usage);
          cell = std::min(cell, base + st.value);
        }
      }
    };
    // pre[s]: lower bound on the finish of the cut before segment s, per PU
    // and crossbars used so far; suf[s]: on the time from that cut to the
    // end, per PU and crossbars still used. Both made monotone in the usage.
    // Tables over a very large capacity are not built (no thresholds then:
    // still exact, only slower).
    // A sweep needs every budget exact: the thresholds hold at the full one only.
    const bool use_thresholds = cols <= kMaxThresholdColumns && !sweep;
    const size_t table = use_thresholds ? static_cast<size_t>(slots * cols) : 0;
    std::vector<std::vector<double>> pre(num_segments + 1, std::vector<double>(table, kInf));
    std::vector<std::vector<double>> suf(num_segments + 1, std::vector<double>(table, kInf));
    for (int64_t r = 0; r < cols && use_thresholds; ++r) at(pre[0], -1, r) = 0;
    for (int si = 0; si < num_segments && use_thresholds; ++si) {
      for (int ji : jobs_of[si]) segment_lower(jobs[ji].record, pre[si], pre[si + 1]);
      for (int pu = -1; pu < k; ++pu) {
        for (int64_t r = 1; r < cols; ++r)
          at(pre[si + 1], pu, r) = std::min(at(pre[si + 1], pu, r), at(pre[si + 1], pu, r - 1));
      }
    }
    for (int pu = -1; pu < k && use_thresholds; ++pu) {
      for (int64_t r = 0; r < cols; ++r) at(suf[num_segments], pu, r) = 0;
    }
    for (int si = num_segments - 1; si >= 0 && use_thresholds; --si) {
      for (int ji : jobs_of[si]) {
        const SearchRecord& rec = jobs[ji].record;
        for (int64_t r = 0; r < cols; ++r) {
          double best = kInf;
          for (const FrontierPoint& pt : rec.frontier) {
            if (pt.usage > r) break;
            best = std::min(best, pt.value - rec.slack + at(suf[si + 1], rec.exit_pu, r - pt.usage));
          }
          for (const BoundStep& st : rec.open) {
            if (st.usage > r) break;
            best = std::min(best, st.value + at(suf[si + 1], rec.exit_pu, r - st.usage));
          }
          double& cell = at(suf[si], rec.entry_pu, r);
          cell = std::min(cell, best);
        }
      }
    }
    std::vector<std::vector<double>> thresholds(jobs.size());
    for (int ji : again) {
      const Job& job = jobs[ji];
      std::vector<double>& thr = thresholds[ji];
      if (incumbent == kInf || !use_thresholds) continue;  // empty: no threshold
      thr.assign(cols, kInf);
      for (int64_t u = 0; u < cols; ++u) {
        double rest = kInf;
        for (int64_t r1 = 0; r1 + u < cols; ++r1) {
          rest = std::min(rest, at(pre[job.segment], job.in.entry_pu, r1) +
                                    at(suf[job.segment + 1], job.in.exit_pu, budget - u - r1));
        }
        thr[u] = rest == kInf ? -1.0 : incumbent - rest;  // -1: nothing can help
      }
    }
    const int hard_segments = static_cast<int>(std::count(segment_again.begin(), segment_again.end(), true));
    // Equal node shares fixed before the searches start, so that they may run
    // in parallel with the same result; time shares by the threads.
    int64_t used = 0;
    for (const Job& job : jobs) used += job.nodes;
    const int64_t second_nodes = allowance(node_limit - used, again.size());
    const auto t2 = Clock::now();
    const int64_t width = std::max(1, std::min(threads, static_cast<int>(again.size())));
    ParallelFor(threads, again.size(), [&](size_t r) {
      const auto now = Clock::now();
      const auto share = now < search_deadline ? (search_deadline - t2) * width / static_cast<int64_t>(again.size())
                                               : Clock::duration(0);
      run(jobs[again[r]], now + share, tolerance_left / hard_segments, &thresholds[again[r]], second_nodes, true);
    });
    for (int ji : again) threshold_slack = std::max(threshold_slack, jobs[ji].record.slack);
    bool open = false;
    for (int ji : again) open = open || !jobs[ji].record.complete;
    if (!open) stop_seeding = true;
    if (seeder.joinable()) seeder.join();
    if (open) {
      if (threads <= 1) {
        const auto now = Clock::now();
        seeds = LocalSearchSchedules(pr, cand, budget_pu, std::min(deadline, std::max(seed_until, now + (deadline - t1) / 8)),
                                     nullptr);
      }
      for (const Incumbent& inc : seeds) SeedFrontiers(pr, inc, segments, jobs_of, budget_pu, &jobs);
    }
    run_dps();
  }
  if (seeder.joinable()) seeder.join();
  bool complete = true;
  for (const Job& job : jobs) {
    complete = complete && job.record.complete;
    out.stats.nodes += job.nodes;
    out.stats.searches += job.searches;
  }
  // Not finished although time is left: the node budget stopped it.
  out.stats.interrupted = interrupt != nullptr && interrupt->load(std::memory_order_relaxed);
  out.stats.budget_exhausted = !complete && !out.stats.interrupted && node_limit > 0 && Clock::now() <= deadline;

  // A completion the thresholds cut off is no better than the incumbent
  // (less the slack its search allowed itself).
  out.bound = incumbent - threshold_slack;
  for (const DpState& s : lb) out.bound = std::min(out.bound, s.time);
  const std::vector<DpState>& last = ub.back();
  if (last.empty()) {
    out.complete = complete;
    out.infeasible = complete;
    return out;
  }
  int best = 0;
  for (int i = 1; i < static_cast<int>(last.size()); ++i) {
    if (last[i].time < last[best].time) best = i;
  }
  // Walk back through the segments from a final state: PUs and the dispatch
  // order.
  auto walk_back = [&](int final_state) {
    std::vector<int> assignment(n, -1), order_all;
    std::vector<std::vector<int>> pieces(num_segments);
    int at = final_state;
    for (int si = num_segments; si >= 1; --si) {
      const DpState& s = ub[si][at];
      const FrontierPoint& pt = jobs[s.search].record.frontier[s.point];
      const Segment& seg = segments[si - 1];
      for (int i = 0; i < static_cast<int>(seg.ops.size()); ++i) assignment[seg.ops[i]] = pt.pu[i];
      for (int i : pt.order) pieces[si - 1].push_back(seg.ops[i]);
      at = s.prev;
    }
    for (const auto& piece : pieces) order_all.insert(order_all.end(), piece.begin(), piece.end());
    return ListSchedule(pr, assignment, &order_all);
  };
  if (sweep) {
    // The final states by usage, each kept when shorter than every state
    // with less usage: the steps of the best makespan over the budget. The
    // schedule of each step is list-scheduled again, so the curve holds
    // the makespans of real schedules.
    std::vector<int> by_usage(last.size());
    for (size_t i = 0; i < last.size(); ++i) by_usage[i] = static_cast<int>(i);
    std::sort(by_usage.begin(), by_usage.end(), [&](int x, int y) {
      return std::tie(last[x].usage, last[x].time) < std::tie(last[y].usage, last[y].time);
    });
    double shortest = kInf;
    for (int i : by_usage) {
      if (last[i].time >= shortest - Tol(last[i].time)) continue;
      Schedule s = walk_back(i);
      if (s.makespan_us >= shortest - Tol(s.makespan_us)) continue;
      shortest = s.makespan_us;
      out.curve.push_back(SearchOutcome::CurvePoint{last[i].usage, std::move(s)});
    }
    // The lower-bound states the same way: the bound at budget b is the
    // least over states with usage ≤ b.
    std::vector<DpState> lows = lb;
    std::sort(lows.begin(), lows.end(),
              [](const DpState& a, const DpState& b) { return std::tie(a.usage, a.time) < std::tie(b.usage, b.time); });
    for (const DpState& s : lows) {
      // The thresholds were off, so no completion was cut against the
      // incumbent: the lower-bound DP alone bounds every budget.
      if (out.lower_curve.empty() || s.time < out.lower_curve.back().bound) {
        out.lower_curve.push_back(SearchOutcome::BoundPoint{s.usage, s.time});
      }
    }
  }
  Schedule schedule = walk_back(best);
  out.objective = schedule.makespan_us;
  out.schedule = std::move(schedule);
  // The list schedule of the DP's choices is the DP's schedule; should
  // rounding make it longer, the bound below keeps the report honest.
  out.complete = complete;
  out.bound = std::min(out.bound, out.objective);
  return out;
}

}  // namespace hetplan::exact_internal
