// The exact search of the method "exact" for the latency objective; see
// exact/search.h for the method and docs/ilp.md for why each rule is exact.
// This file is its driver: the searches per segment (exact/assignment.cc) in
// two passes, the DPs that join the segments, and the sweep over a PU's
// crossbars.
#include "solve/exact/search.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "hetplan/solve/list_schedule.h"
#include "solve/exact/incumbent.h"
#include "solve/exact/search_internal.h"

namespace hetplan::exact_internal {
namespace {

// Pass 2 builds tables over (PU, crossbars used) per segment up to this many
// columns; beyond, it runs without thresholds (valid, slower).
constexpr int64_t kMaxThresholdColumns = 1 << 15;

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
// matching open search's frontier. Better incumbents tighten the thresholds
// of pass 2; the proof never rests on them.
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

// Local-search schedules of the whole graph (exact/incumbent.h) at several
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

// Lower bounds over (PU of a cut, crossbars): slot 0 is "no cut yet". Empty
// (no cells) when pass 2 runs without thresholds.
class UsageTable {
 public:
  UsageTable(int pus, int64_t cols, bool build)
      : cols_(cols), cells_(build ? static_cast<size_t>(pus + 1) * cols : 0, kInf) {}
  double& at(int pu, int64_t r) { return cells_[static_cast<size_t>(pu + 1) * cols_ + r]; }
  double at(int pu, int64_t r) const { return cells_[static_cast<size_t>(pu + 1) * cols_ + r]; }

 private:
  int64_t cols_;
  std::vector<double> cells_;
};

// SolveLatencyBySearch, one stage per method.
class LatencySearch {
 public:
  LatencySearch(const Problem& pr, const std::vector<std::vector<int>>& cand, Clock::time_point deadline,
                double relative_gap, int64_t node_limit, const std::atomic<bool>* interrupt, int threads, int sweep_pu)
      : pr_(pr),
        cand_(cand),
        c_(*pr.costs),
        n_(pr.graph->size()),
        k_(c_.num_pus()),
        deadline_(deadline),
        relative_gap_(relative_gap),
        node_limit_(node_limit),
        interrupt_(interrupt),
        threads_(std::max(1, threads)),
        sweep_pu_(sweep_pu),
        sweep_(sweep_pu >= 0) {}

  SearchOutcome Solve() {
    ChooseSegments();
    MakeJobs();
    const double lower = RootLowerBound();
    tolerance_left_ = relative_gap_ > 0 && lower < kInf ? 0.9 * relative_gap_ * lower : 0.0;
    PassOne();
    if (!again_.empty()) PassTwo();
    if (seeder_.joinable()) seeder_.join();
    return Finish();
  }

 private:
  // Spatial PUs whose capacity can bind. With one, the segments are joined
  // by a DP over its usage; with more, the graph is searched whole.
  void ChooseSegments() {
    const OpGraph& g = *pr_.graph;
    capacity_.assign(k_, std::numeric_limits<int64_t>::max());
    std::vector<int> binding;
    for (int p = 0; p < k_; ++p) {
      if (!c_.pu(p).spatial) continue;
      capacity_[p] = c_.pu(p).capacity;
      int64_t total = 0;
      for (int v = 0; v < n_; ++v) {
        if (std::find(cand_[v].begin(), cand_[v].end(), p) != cand_[v].end()) total += c_.crossbars(v, p);
      }
      // A swept PU is tracked whether or not its capacity binds.
      if (total > c_.pu(p).capacity || p == sweep_pu_) binding.push_back(p);
    }
    if (binding.size() <= 1) {
      segments_ = Decompose(g, c_, cand_);
      if (binding.size() == 1) {
        budget_pu_ = binding[0];
        budget_ = c_.pu(budget_pu_).capacity;
      }
    } else {
      Segment whole;
      whole.ops = g.topological_order();
      segments_.push_back(std::move(whole));
      if (sweep_) {
        // One segment: the search tracks the swept PU's usage, the others'
        // capacities bound it as constraints.
        budget_pu_ = sweep_pu_;
        budget_ = c_.pu(sweep_pu_).capacity;
      }
    }
    num_segments_ = static_cast<int>(segments_.size());
    stats_.segments = num_segments_;
    for (const Segment& s : segments_) {
      stats_.largest_segment = std::max(stats_.largest_segment, static_cast<int>(s.ops.size()));
    }
  }

  // One job per segment and pair of PUs its cuts can take.
  void MakeJobs() {
    jobs_of_.assign(num_segments_, {});
    for (int si = 0; si < num_segments_; ++si) {
      ForEachCutPair(segments_, static_cast<size_t>(si), cand_, [&](int a, int b) {
        Job job;
        job.segment = si;
        job.in = SegmentInput(pr_, cand_, segments_[si], a, b, budget_pu_, budget_, capacity_);
        job.in.deadline = deadline_;
        job.record = SearchRecord{a, b, {}, false, 0, 0, {}};
        jobs_of_[si].push_back(static_cast<int>(jobs_.size()));
        jobs_.push_back(std::move(job));
      });
    }
  }

  // A lower bound on the optimum: each segment costs at least its cheapest
  // root bound. The gap tolerance is spent against it, so it stays honest.
  double RootLowerBound() {
    double lower = 0;
    for (int si = 0; si < num_segments_; ++si) {
      double cheapest = kInf;
      for (int ji : jobs_of_[si]) {
        Job& job = jobs_[ji];
        job.local = BuildLocal(job.in);
        job.root = SegmentRootBound(job.in, job.local);
        cheapest = std::min(cheapest, job.root);
      }
      if (cheapest < kInf) lower += cheapest;
    }
    return lower;
  }

  // Nodes a search may spend: pass 1 shares a third of the budget among the
  // searches, pass 2 shares what is left among those that did not finish.
  int64_t Allowance(int64_t pool, size_t searches) const {
    return node_limit_ > 0 ? std::max<int64_t>(pool, 0) / static_cast<int64_t>(std::max<size_t>(searches, 1))
                           : std::numeric_limits<int64_t>::max();
  }

  // One search of a job with its own node allowance: jobs share nothing
  // mutable, so they may run on several threads with the same result.
  void RunJob(Job& job, Clock::time_point until, double tolerance, const std::vector<double>* threshold,
              int64_t nodes, bool lagrangian) const {
    WorkBudget work;
    work.interrupt = interrupt_;
    work.limit = nodes;
    SearchInput in = job.in;
    in.work = &work;
    in.deadline = std::min(until, deadline_);
    in.dive_only = Clock::now() > deadline_;
    in.tolerance = tolerance;
    in.threshold = threshold;
    in.lagrangian = lagrangian;
    in.initial = &job.record.frontier;
    SegmentSearch search = SearchSegment(in, job.local);
    job.nodes += search.nodes;
    ++job.searches;
    job.record = SearchRecord{job.in.entry_pu,  job.in.exit_pu,     std::move(search.frontier),
                              search.complete, search.open_bound, search.slack, {}};
    if (!search.complete) {
      // What the search left open, by crossbars used: the whole budget may
      // not go to every segment at once (budget_pu < 0: one step).
      if (budget_pu_ >= 0 && job.root_by_budget.empty() && budget_ <= kMaxThresholdColumns) {
        job.root_by_budget = SegmentRootBoundByBudget(job.in, job.local);
      }
      job.record.open = OpenSteps(job.record.open_bound, job.root_by_budget);
    }
    job.ran = true;
  }

  // The DPs over segments: ub with schedules, lb over lower bounds (frontier
  // values less the slack their search allowed itself; what a search did not
  // cover counts at its open bound with any usage).
  void RunDps() {
    ub_.assign(num_segments_ + 1, {});
    lb_.clear();
    ub_[0].push_back(DpState{});
    lb_.push_back(DpState{});
    for (int si = 0; si < num_segments_; ++si) {
      std::vector<DpState> next_ub, next_lb;
      for (int ji : jobs_of_[si]) {
        const SearchRecord& rec = jobs_[ji].record;
        const int a = rec.entry_pu, b = rec.exit_pu;
        for (int prev = 0; prev < static_cast<int>(ub_[si].size()); ++prev) {
          const DpState& s = ub_[si][prev];
          if (s.pu != a) continue;
          for (int pi = 0; pi < static_cast<int>(rec.frontier.size()); ++pi) {
            const FrontierPoint& pt = rec.frontier[pi];
            if (budget_pu_ >= 0 && s.usage + pt.usage > budget_) break;
            next_ub.push_back(DpState{b, s.usage + pt.usage, s.time + pt.value, prev, ji, pi});
          }
        }
        for (const DpState& s : lb_) {
          if (s.pu != a) continue;
          for (const FrontierPoint& pt : rec.frontier) {
            if (budget_pu_ >= 0 && s.usage + pt.usage > budget_) break;
            next_lb.push_back(DpState{b, s.usage + pt.usage, s.time + pt.value - rec.slack, -1, -1, -1});
          }
          for (const BoundStep& st : rec.open) {
            if (budget_pu_ >= 0 && s.usage + st.usage > budget_) break;
            next_lb.push_back(DpState{b, s.usage + st.usage, s.time + st.value, -1, -1, -1});
          }
        }
      }
      KeepNondominated(&next_ub);
      KeepNondominated(&next_lb);
      ub_[si + 1] = std::move(next_ub);
      lb_ = std::move(next_lb);
    }
  }

  // Pass 1, smallest segments first, exactly, each with a share of a third
  // of the time: nearly all finish at once.
  void PassOne() {
    std::vector<int> order(jobs_.size());
    for (size_t i = 0; i < jobs_.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
      return segments_[jobs_[x].segment].ops.size() < segments_[jobs_[y].segment].ops.size();
    });
    t1_ = Clock::now();
    const auto first_share = (deadline_ - t1_) / 3 / std::max<size_t>(1, jobs_.size());
    // The local search for incumbents runs beside the searches when there is
    // a second thread, alone after pass 2 otherwise; its schedules are added
    // to the frontiers only when pass 2 too leaves a search open (so graphs
    // the searches finish never pay for it), and do not depend on when it ran.
    seed_until_ = t1_ + (deadline_ - t1_) / 8;
    // Alone, the searches leave the local search its eighth of the time.
    search_deadline_ = threads_ > 1 ? deadline_ : deadline_ - (deadline_ - t1_) / 8;
    if (threads_ > 1 && !jobs_.empty()) {
      seeder_ = std::thread(
          [this] { seeds_ = LocalSearchSchedules(pr_, cand_, budget_pu_, seed_until_, &stop_seeding_); });
    }
    const int64_t first_nodes = Allowance(node_limit_ / 3, jobs_.size());
    ParallelFor(threads_ > 1 && seeder_.joinable() ? threads_ - 1 : threads_, order.size(), [&](size_t i) {
      RunJob(jobs_[order[i]], Clock::now() + first_share, 0.0, nullptr, first_nodes, false);
    });
    segment_again_.assign(num_segments_, false);
    for (int ji : order) {
      if (!jobs_[ji].record.complete) {
        again_.push_back(ji);
        segment_again_[jobs_[ji].segment] = true;
      }
    }
    if (again_.empty()) stop_seeding_ = true;
    // The best whole schedule so far: a later search must beat it.
    RunDps();
    for (const DpState& s : ub_.back()) incumbent_ = std::min(incumbent_, s.time);
  }

  // Adds to `to` (the cut after rec's segment) the bounds through rec from
  // `from` (the cut before it), per PU and crossbars used so far.
  static void SegmentLower(const SearchRecord& rec, int64_t cols, const UsageTable& from, UsageTable* to) {
    for (int64_t r = 0; r < cols; ++r) {
      const double base = from.at(rec.entry_pu, r);
      if (base == kInf) continue;
      for (const FrontierPoint& pt : rec.frontier) {
        if (r + pt.usage >= cols) break;
        double& cell = to->at(rec.exit_pu, r + pt.usage);
        cell = std::min(cell, base + pt.value - rec.slack);
      }
      for (const BoundStep& st : rec.open) {
        if (r + st.usage >= cols) break;
        double& cell = to->at(rec.exit_pu, r + st.usage);
        cell = std::min(cell, base + st.value);
      }
    }
  }

  // Per job of pass 2 and usage u of its segment, a threshold: the incumbent
  // less a lower bound on the other segments with the crossbars left (prefix
  // and suffix DPs over lower bounds). pre[s]: lower bound on the finish of
  // the cut before segment s, per PU and crossbars used so far; suf[s]: on
  // the time from that cut to the end, per PU and crossbars still used. Both
  // made monotone in the usage. Tables over a very large capacity are not
  // built, nor for a sweep, which needs every budget exact while the
  // thresholds hold at the full one only (empty thresholds: still exact,
  // only slower).
  std::vector<std::vector<double>> Thresholds() const {
    const int64_t cols = budget_ + 1;
    const bool use_thresholds = cols <= kMaxThresholdColumns && !sweep_;
    std::vector<UsageTable> pre(num_segments_ + 1, UsageTable(k_, cols, use_thresholds));
    std::vector<UsageTable> suf(num_segments_ + 1, UsageTable(k_, cols, use_thresholds));
    for (int64_t r = 0; r < cols && use_thresholds; ++r) pre[0].at(-1, r) = 0;
    for (int si = 0; si < num_segments_ && use_thresholds; ++si) {
      for (int ji : jobs_of_[si]) SegmentLower(jobs_[ji].record, cols, pre[si], &pre[si + 1]);
      for (int pu = -1; pu < k_; ++pu) {
        for (int64_t r = 1; r < cols; ++r)
          pre[si + 1].at(pu, r) = std::min(pre[si + 1].at(pu, r), pre[si + 1].at(pu, r - 1));
      }
    }
    for (int pu = -1; pu < k_ && use_thresholds; ++pu) {
      for (int64_t r = 0; r < cols; ++r) suf[num_segments_].at(pu, r) = 0;
    }
    for (int si = num_segments_ - 1; si >= 0 && use_thresholds; --si) {
      for (int ji : jobs_of_[si]) {
        const SearchRecord& rec = jobs_[ji].record;
        for (int64_t r = 0; r < cols; ++r) {
          double best = kInf;
          for (const FrontierPoint& pt : rec.frontier) {
            if (pt.usage > r) break;
            best = std::min(best, pt.value - rec.slack + suf[si + 1].at(rec.exit_pu, r - pt.usage));
          }
          for (const BoundStep& st : rec.open) {
            if (st.usage > r) break;
            best = std::min(best, st.value + suf[si + 1].at(rec.exit_pu, r - st.usage));
          }
          double& cell = suf[si].at(rec.entry_pu, r);
          cell = std::min(cell, best);
        }
      }
    }
    std::vector<std::vector<double>> thresholds(jobs_.size());
    for (int ji : again_) {
      const Job& job = jobs_[ji];
      std::vector<double>& thr = thresholds[ji];
      if (incumbent_ == kInf || !use_thresholds) continue;  // empty: no threshold
      thr.assign(cols, kInf);
      for (int64_t u = 0; u < cols; ++u) {
        double rest = kInf;
        for (int64_t r1 = 0; r1 + u < cols; ++r1) {
          rest = std::min(rest, pre[job.segment].at(job.in.entry_pu, r1) +
                                    suf[job.segment + 1].at(job.in.exit_pu, budget_ - u - r1));
        }
        thr[u] = rest == kInf ? -1.0 : incumbent_ - rest;  // -1: nothing can help
      }
    }
    return thresholds;
  }

  // Pass 2: what did not finish gets the rest of the time and the gap
  // tolerance (shared among its segments), and its thresholds.
  void PassTwo() {
    const std::vector<std::vector<double>> thresholds = Thresholds();
    const int hard_segments = static_cast<int>(std::count(segment_again_.begin(), segment_again_.end(), true));
    // Equal node shares fixed before the searches start, so that they may run
    // in parallel with the same result; time shares by the threads.
    int64_t used = 0;
    for (const Job& job : jobs_) used += job.nodes;
    const int64_t second_nodes = Allowance(node_limit_ - used, again_.size());
    const auto t2 = Clock::now();
    const int64_t width = std::max(1, std::min(threads_, static_cast<int>(again_.size())));
    ParallelFor(threads_, again_.size(), [&](size_t r) {
      const auto now = Clock::now();
      const auto share = now < search_deadline_
                             ? (search_deadline_ - t2) * width / static_cast<int64_t>(again_.size())
                             : Clock::duration(0);
      RunJob(jobs_[again_[r]], now + share, tolerance_left_ / hard_segments, &thresholds[again_[r]], second_nodes,
             true);
    });
    // A search of pass 2 prunes a completion whose bound is within its
    // tolerance of its threshold; the whole schedule through such a
    // completion is then at least the incumbent less that search's slack.
    for (int ji : again_) threshold_slack_ = std::max(threshold_slack_, jobs_[ji].record.slack);
    bool open = false;
    for (int ji : again_) open = open || !jobs_[ji].record.complete;
    if (!open) stop_seeding_ = true;
    if (seeder_.joinable()) seeder_.join();
    if (open) {
      if (threads_ <= 1) {
        const auto now = Clock::now();
        seeds_ = LocalSearchSchedules(pr_, cand_, budget_pu_,
                                      std::min(deadline_, std::max(seed_until_, now + (deadline_ - t1_) / 8)), nullptr);
      }
      for (const Incumbent& inc : seeds_) SeedFrontiers(pr_, inc, segments_, jobs_of_, budget_pu_, &jobs_);
    }
    RunDps();
  }

  // The statistics, the bound and the best schedule (and the sweep's curves).
  SearchOutcome Finish() {
    SearchOutcome out;
    out.stats = stats_;
    bool complete = true;
    for (const Job& job : jobs_) {
      complete = complete && job.record.complete;
      out.stats.nodes += job.nodes;
      out.stats.searches += job.searches;
    }
    // Not finished although time is left: the node budget stopped it.
    out.stats.interrupted = interrupt_ != nullptr && interrupt_->load(std::memory_order_relaxed);
    out.stats.budget_exhausted = !complete && !out.stats.interrupted && node_limit_ > 0 && Clock::now() <= deadline_;

    // A completion the thresholds cut off is no better than the incumbent
    // (less the slack its search allowed itself).
    out.bound = incumbent_ - threshold_slack_;
    for (const DpState& s : lb_) out.bound = std::min(out.bound, s.time);
    const std::vector<DpState>& last = ub_.back();
    if (last.empty()) {
      out.complete = complete;
      out.infeasible = complete;
      return out;
    }
    int best = 0;
    for (int i = 1; i < static_cast<int>(last.size()); ++i) {
      if (last[i].time < last[best].time) best = i;
    }
    if (sweep_) SweepCurves(&out);
    Schedule schedule = WalkBack(best);
    out.objective = schedule.makespan_us;
    out.schedule = std::move(schedule);
    // The list schedule of the DP's choices is the DP's schedule; should
    // rounding make it longer, the bound below keeps the report honest.
    out.complete = complete;
    out.bound = std::min(out.bound, out.objective);
    return out;
  }

  // Walks back through the segments from a final state: PUs and the
  // dispatch order, list-scheduled.
  Schedule WalkBack(int final_state) const {
    std::vector<int> assignment(n_, -1), order_all;
    std::vector<std::vector<int>> pieces(num_segments_);
    int at = final_state;
    for (int si = num_segments_; si >= 1; --si) {
      const DpState& s = ub_[si][at];
      const FrontierPoint& pt = jobs_[s.search].record.frontier[s.point];
      const Segment& seg = segments_[si - 1];
      for (int i = 0; i < static_cast<int>(seg.ops.size()); ++i) assignment[seg.ops[i]] = pt.pu[i];
      for (int i : pt.order) pieces[si - 1].push_back(seg.ops[i]);
      at = s.prev;
    }
    for (const auto& piece : pieces) order_all.insert(order_all.end(), piece.begin(), piece.end());
    return ListSchedule(pr_, assignment, &order_all);
  }

  // The final states by usage, each kept when shorter than every state with
  // less usage: the steps of the best makespan over the budget. The schedule
  // of each step is list-scheduled again, so the curve holds the makespans
  // of real schedules.
  void SweepCurves(SearchOutcome* out) const {
    const std::vector<DpState>& last = ub_.back();
    std::vector<int> by_usage(last.size());
    for (size_t i = 0; i < last.size(); ++i) by_usage[i] = static_cast<int>(i);
    std::sort(by_usage.begin(), by_usage.end(), [&](int x, int y) {
      return std::tie(last[x].usage, last[x].time) < std::tie(last[y].usage, last[y].time);
    });
    double shortest = kInf;
    for (int i : by_usage) {
      if (last[i].time >= shortest - Tol(last[i].time)) continue;
      Schedule s = WalkBack(i);
      if (s.makespan_us >= shortest - Tol(s.makespan_us)) continue;
      shortest = s.makespan_us;
      out->curve.push_back(SearchOutcome::CurvePoint{last[i].usage, std::move(s)});
    }
    // The lower-bound states the same way: the bound at budget b is the
    // least over states with usage ≤ b.
    std::vector<DpState> lows = lb_;
    std::sort(lows.begin(), lows.end(),
              [](const DpState& a, const DpState& b) { return std::tie(a.usage, a.time) < std::tie(b.usage, b.time); });
    for (const DpState& s : lows) {
      // The thresholds were off, so no completion was cut against the
      // incumbent: the lower-bound DP alone bounds every budget.
      if (out->lower_curve.empty() || s.time < out->lower_curve.back().bound) {
        out->lower_curve.push_back(SearchOutcome::BoundPoint{s.usage, s.time});
      }
    }
  }

  const Problem& pr_;
  const std::vector<std::vector<int>>& cand_;
  const CostModel& c_;
  const int n_, k_;
  const Clock::time_point deadline_;
  const double relative_gap_;
  const int64_t node_limit_;
  const std::atomic<bool>* interrupt_;
  const int threads_;
  const int sweep_pu_;
  const bool sweep_;

  std::vector<int64_t> capacity_;
  std::vector<Segment> segments_;
  int num_segments_ = 0;
  int budget_pu_ = -1;
  int64_t budget_ = 0;
  SearchStats stats_;
  std::vector<Job> jobs_;
  std::vector<std::vector<int>> jobs_of_;
  double tolerance_left_ = 0;
  std::vector<std::vector<DpState>> ub_;
  std::vector<DpState> lb_;
  std::vector<int> again_;  // jobs pass 1 left open
  std::vector<bool> segment_again_;
  double incumbent_ = kInf;
  double threshold_slack_ = 0;
  // The local search for incumbents and its clock.
  Clock::time_point t1_, seed_until_, search_deadline_;
  std::vector<Incumbent> seeds_;
  std::atomic<bool> stop_seeding_{false};
  std::thread seeder_;
};

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
      plain = std::min(plain, SegmentRootBound(in, local));
      lagrangian = std::min(lagrangian, SegmentLagrangianRootBound(in, local));
      if (budget_pu >= 0) {
        const std::vector<double> f = SegmentRootBoundByBudget(in, local);
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
  return LatencySearch(pr, cand, deadline, relative_gap, node_limit, interrupt, threads, sweep_pu).Solve();
}

}  // namespace hetplan::exact_internal
