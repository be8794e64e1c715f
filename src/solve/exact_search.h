// Internal to the "ilp" backend: the exact combinatorial method behind the
// "strong" formulation for the latency objective (docs/ilp.md).
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
//    Jackson schedule of the operators surely on the serial PU;
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
SearchOutcome SolveLatencyBySearch(const Problem& problem, const std::vector<std::vector<int>>& cand,
                                   std::chrono::steady_clock::time_point deadline, double relative_gap,
                                   int64_t node_limit = 0, const std::atomic<bool>* interrupt = nullptr,
                                   int threads = 1);

}  // namespace hetplan::exact_internal
