// Internal to the exact search (exact/search.cc): incumbents for graphs whose
// segments the branch-and-bound does not finish in its first pass. A
// deterministic local search over assignments (flip one operator's PU, swap
// two across a capacitated spatial PU), each assignment timed by an active
// list schedule (Giffler–Thompson rule, longest tail first). The result only
// ever serves as an upper bound and as frontier points; the search's proof
// does not depend on it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "hetplan/plan/problem.h"

namespace hetplan::exact_internal {

struct Incumbent {
  std::vector<int> assignment;
  std::vector<int> order;  // dispatch order: ListSchedule(assignment, order) reproduces `schedule`
  Schedule schedule;
};

// The active schedule of `assignment`: each serial PU, when it could next
// finish an operator, runs the ready operator with the longest tail among
// those that could start before that finish; spatial PUs start operators as
// soon as their inputs arrive.
Incumbent ActiveSchedule(const Problem& pr, const std::vector<int>& assignment);

// What LocalSearchIncumbent's annealing starts from, as a share of the
// starting makespan: a move that lengthens the schedule by 0.3 % of it is
// first kept with probability 1/e. Measured on the irregular networks
// (docs/ilp.md): shorter schedules than descent alone at 11 of 12 points,
// and than 1 % in a first trial on NASNet.
inline constexpr double kLocalSearchTemperature = 0.003;

// Improves the best of a few starting assignments (the serial PUs' time the
// capacities let move away, found by a knapsack; the fastest PU per operator
// with repair; everything on one PU) by at most `evaluations` moves. The
// first tenth only descend (a move is kept when the active schedule is no
// longer); the rest anneal: a move that lengthens it by Δ is kept too with
// probability exp(-Δ / T), T falling linearly from `temperature` × the
// starting makespan to 0 (0: descent throughout). The best schedule seen is
// the result. Stops early at `deadline`.
// `capacity[p]` is what spatial PU p may use (at most its capacity: a smaller
// one gives schedules at a smaller budget). Repeatable: the moves come from a
// fixed seed. nullopt when no starting assignment fits. `stop` (when given)
// reading true ends it early, like the deadline.
std::optional<Incumbent> LocalSearchIncumbent(const Problem& pr, const std::vector<std::vector<int>>& cand,
                                              const std::vector<int64_t>& capacity, int64_t evaluations,
                                              std::chrono::steady_clock::time_point deadline,
                                              const std::atomic<bool>* stop = nullptr,
                                              double temperature = kLocalSearchTemperature);

}  // namespace hetplan::exact_internal
