// Internal to solve/: the crossbar frontier of the throughput objective
// (SolveCrossbarFrontier with Objective::kThroughput).
#pragma once

#include <cstdint>
#include <optional>

#include "hetplan/plan/deadline.h"
#include "hetplan/solve/frontier.h"

namespace hetplan {

// The smallest II at every budget of spatial PU `pu` (copies count against
// it), one exact II search per step from the largest budget down: the plan
// found at budget b uses u ≤ b crossbars, so its II is the optimum on every
// budget of [u, b] (the optimum never rises with the budget), and the next
// search is at u − 1. A step's makespan_us is its II, its schedule the
// cyclic one. Stops where nothing fits, at budget 0, or at the deadline
// (then the budgets below the last step are unknown: complete false).
Result<CrossbarFrontier> SolveThroughputFrontier(const Problem& problem, int pu, const SolveOptions& options,
                                                 std::optional<int64_t> max_crossbars, const Deadline& deadline);

}  // namespace hetplan
