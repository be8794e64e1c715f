// Internal to the exact search (exact/search.h): the types its four parts
// share. The parts, one file each:
//  * exact/decompose.cc: the series decomposition into segments, and one
//    segment's operators with local ids (LocalSegment);
//  * exact/sequence.cc: the sequencing search over one complete assignment;
//  * exact/assignment.cc: the branch-and-bound over the PUs of one segment,
//    with its bounds (knapsack, Jackson, Lagrangian);
//  * exact/search.cc: the driver: the searches per segment in two passes,
//    the DPs that join the segments, the sweep over a PU's crossbars.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "hetplan/util/limits.h"
#include "hetplan/util/clock.h"
#include "hetplan/plan/problem.h"
#include "solve/exact/search.h"

namespace hetplan::exact_internal {


// Times within this relative tolerance are equal (the costs are µs floats;
// 1e-9 is far below any cost and far above rounding).
inline double Tol(double x) { return 1e-9 * std::max(1.0, std::fabs(x)); }

// ---------------------------------------------------------------------------
// Series decomposition (exact/decompose.cc).

struct Segment {
  std::vector<int> ops;   // global ids, topological order
  int entry = -1;         // the cut right before the segment, -1 for the first
  bool has_exit = false;  // ops.back() is the cut that closes the segment
};

// Cuts (operators comparable to every other one) that no transferring edge
// jumps over. After such a cut c every PU is free (all other operators
// either finished before c started or start after c finished) and no input
// arrives later than c's own output, so the rest of the schedule depends
// only on c's finish, c's PU and the capacity left.
std::vector<Segment> Decompose(const OpGraph& g, const CostModel& c, const std::vector<std::vector<int>>& cand);

// ---------------------------------------------------------------------------
// What the search of one segment finds and is given.

struct FrontierPoint {
  int64_t usage = 0;       // crossbars of the budget PU used in the segment
  double value = 0;        // latest finish in the segment, relative to the entry's finish
  std::vector<int> pu;     // per local operator
  std::vector<int> order;  // local dispatch order
};

// The frontier's value at budget b: the shortest length with usage ≤ b.
inline double FrontierValueAt(const std::vector<FrontierPoint>& frontier, int64_t b) {
  double v = kInf;
  for (const FrontierPoint& p : frontier) {
    if (p.usage > b) break;
    v = p.value;
  }
  return v;
}

// Adds `point` to a frontier (sorted by usage, values decreasing) unless a
// point with no more usage is no longer; drops the points it beats.
inline void InsertPoint(std::vector<FrontierPoint>* frontier, const FrontierPoint& point) {
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

inline double Threshold(const SearchInput& in, int64_t u) {
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
// min head + Σ dur + min tail. Sorts `jobs`; `heap` is scratch
// (exact/sequence.cc).
double Jackson(std::vector<JacksonJob>* jobs, std::vector<std::pair<double, double>>* heap);

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

// The segment of `in` with local ids, for its entry and exit PUs
// (exact/decompose.cc).
LocalSegment BuildLocal(const SearchInput& in);

// ---------------------------------------------------------------------------
// The sequencing search over one complete assignment (exact/sequence.cc).

struct SequenceOutcome {
  bool complete = false;      // the search finished
  bool found = false;         // a completion shorter than the limits exists
  double value = kInf;        // the best length found
  int64_t usage = 0;          // crossbars of the budget PU the assignment uses
  std::vector<int> order;     // its local dispatch order
  double open_bound = kInf;   // a bound on every completion it may have missed
  int64_t nodes = 0;          // nodes spent
  double slack = 0;           // every completion is at least value (or upper) minus this
};

// Searches the list schedules of `in`'s segment with every operator's PU
// fixed (`pu`, per local operator) for one shorter than in.upper and the
// threshold at its usage.
SequenceOutcome SequenceAssignment(const SearchInput& in, const LocalSegment& l, const std::vector<int>& pu);

// ---------------------------------------------------------------------------
// The branch-and-bound over one segment's PUs (exact/assignment.cc).

struct SegmentSearch {
  std::vector<FrontierPoint> frontier;  // crossbars used → shortest length found
  bool complete = false;                // the search finished: the frontier is exact
  double open_bound = kInf;             // a bound on every completion it may have missed
  double slack = 0;                     // every completion is at least its frontier value minus this
  int64_t nodes = 0;                    // nodes spent
};

// Searches the segment of `in` (in.initial: frontier points kept).
SegmentSearch SearchSegment(const SearchInput& in, const LocalSegment& l);
// The bound at the root of that search, without searching.
double SegmentRootBound(const SearchInput& in, const LocalSegment& l);
// The same with the Lagrangian bound (multipliers tuned here).
double SegmentLagrangianRootBound(const SearchInput& in, const LocalSegment& l);
// The root bound of every completion that uses at most u crossbars of the
// budget PU, for u = 0..in.max_budget (kInf below what the segment must
// use). Nonincreasing in u.
std::vector<double> SegmentRootBoundByBudget(const SearchInput& in, const LocalSegment& l);

}  // namespace hetplan::exact_internal
