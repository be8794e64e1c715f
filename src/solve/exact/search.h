// Internal to the method "exact" (exact/solver.cc): the exact search for the
// latency objective (docs/ilp.md). Older names, still accepted on input with
// a notice: the "strong" formulation of the "ilp" backend.
//
// A serial PU runs one operator at a time; a spatial PU runs any number at
// once within its capacity. Every schedule can be turned into a list schedule
// (operators dispatched in a topological order, each as early as its inputs
// and its serial PU allow) that is no longer, so the method searches list
// schedules, in three levels:
//  * series decomposition: an operator c comparable to every other one (a
//    cut) splits the graph; when no transfer can jump over c, the schedule
//    after c depends only on c's finish, c's PU and the crossbars left, so
//    each segment between consecutive cuts is solved on its own, as a Pareto
//    frontier (crossbars used → segment length) per PU of its two cuts, and a
//    dynamic programme over (PU of the cut, crossbars used) joins them;
//  * per segment, a best-first branch-and-bound over the PUs of the
//    operators that have a choice, bounded by the critical path, the serial
//    load with an exact knapsack over the crossbars left, and the preemptive
//    Jackson schedule of the operators surely on the serial PU; the root of
//    a search the first pass leaves open, and its bounds by crossbars used,
//    are also bounded by a Lagrangian bound (paths and serial loads
//    weighted, minimised over the assignments with the knapsack);
//  * per promising complete assignment, a depth-first search over the order
//    on each serial PU (Giffler–Thompson conflict sets, critical-path and
//    Jackson bounds, dominance between partial schedules over the same
//    operators).
// Segments still open after a first, exact pass are searched again with a
// threshold per crossbar count (the incumbent less a lower bound on the
// other segments) and a share of the gap tolerance.
// It is exact: "complete" means the search finished, which proves the bound.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/solve/solver.h"

namespace hetplan::exact_internal {

struct SearchStats {
  int segments = 0;         // segments after the series decomposition
  int largest_segment = 0;  // operators in the largest one
  int searches = 0;         // segment searches (one per entry/exit PU pair)
  int64_t nodes = 0;        // branch-and-bound nodes over all searches
  bool budget_exhausted = false;  // stopped by the node limit, not finished
  bool interrupted = false;       // stopped by SolveOptions::interrupt
};

struct SearchOutcome {
  bool complete = false;             // every search finished: `schedule` is optimal
  std::optional<Schedule> schedule;  // the best schedule found
  double objective = 0;              // its makespan
  double bound = 0;                  // a proven lower bound on the optimum
  bool infeasible = false;           // proven: no assignment fits the capacities
  SearchStats stats;
  // With a sweep PU (SolveLatencyBySearch's `sweep_pu`): the best schedule
  // found for every budget of that PU's crossbars, as steps (usage strictly
  // increasing, makespan strictly decreasing: at budgets [usage, next usage)
  // the best is `schedule`), and a proven lower bound on the optimum for every
  // budget, as steps (nonincreasing; budgets below the first step's usage
  // have no schedule at all).
  struct CurvePoint {
    int64_t usage = 0;
    Schedule schedule;
  };
  struct BoundPoint {
    int64_t usage = 0;
    double bound = 0;
  };
  std::vector<CurvePoint> curve;
  std::vector<BoundPoint> lower_curve;
};

// Minimises the makespan of `problem` (latency objective) over the candidate
// PUs `cand[v]` (supported, and fitting a spatial PU's capacity alone) until
// `deadline`, until the searches have spent `node_limit` nodes in all (0: no
// limit), or until `interrupt` (when given) reads true. Never fails: when
// time or nodes run out it returns the best schedule found so far and a
// valid bound.
// Searches end when their bound is within an absolute tolerance of the
// best schedule; the tolerances over all segments add up to at most
// `relative_gap` times a lower bound on the optimum, so the returned bound
// proves a relative gap ≤ `relative_gap` (0: exact).
// `threads` (≥ 1) run independent segment searches, and the local search
// for incumbents, side by side; each search has its own node allowance, fixed
// before it starts, so the result does not depend on the thread count unless
// the deadline stops a search.
// `sweep_pu` (a spatial PU, or -1): also return the curve over every budget
// of its crossbars up to its capacity (SearchOutcome::curve). The segment
// frontiers are exact for every usage already (the DP over segments needs
// them so); the sweep only drops the thresholds of pass 2, which are valid at
// the full capacity alone, and tracks the PU's usage even where its capacity
// does not bind. The gap tolerance is spent against a bound on the optimum at
// the full capacity, which no budget's optimum is below, so each point's gap
// holds at its own budget.
SearchOutcome SolveLatencyBySearch(const Problem& problem, const std::vector<std::vector<int>>& cand,
                                   std::chrono::steady_clock::time_point deadline, double relative_gap,
                                   int64_t node_limit = 0, const std::atomic<bool>* interrupt = nullptr,
                                   int threads = 1, int sweep_pu = -1);

// The exact search when a spatial PU's operators share an ADC pool
// (PuInfo::adc_pool): a branch-and-bound over start-sorted lists of the
// serial schedule-generation scheme, with each operator's PU chosen as it is
// placed (exact/shared_adcs.cc). No series decomposition: the whole graph is one
// search, so it proves small and medium graphs and otherwise returns its best
// schedule (at worst the best list-scheduled heuristic) and the least open
// bound. Same contract as SolveLatencyBySearch without threads and sweep.
SearchOutcome SolveSharedAdcsBySearch(const Problem& problem, const std::vector<std::vector<int>>& cand,
                                      std::chrono::steady_clock::time_point deadline, double relative_gap,
                                      int64_t node_limit = 0, const std::atomic<bool>* interrupt = nullptr);

// For tests: over the segments of the series decomposition, the sum of each
// segment's least root bound over its entry/exit PUs, as the first pass
// bounds a segment (`plain`) and with the Lagrangian bound of the second
// pass (`lagrangian`), and the second pass's bound by crossbars
// (`by_budget[u]`: every completion within u crossbars of the first spatial
// PU; empty without one). Each is a lower bound on the optimum (at capacity
// u for by_budget[u], all other costs equal).
struct RootBounds {
  int segments = 0;
  double plain = 0, lagrangian = 0;
  std::vector<double> by_budget;
};
RootBounds SegmentRootBounds(const Problem& problem, const std::vector<std::vector<int>>& cand);

}  // namespace hetplan::exact_internal
