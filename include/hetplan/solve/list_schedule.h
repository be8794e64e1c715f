// The list scheduler: turns an assignment (and optionally a priority order)
// into a timed schedule. Operators are taken in priority order (a
// topological order); each starts as soon as its inputs have arrived
// (predecessor finish + transfer when on another PU) and, on a serial PU, the
// PU is free. Spatial PUs run operators concurrently. Baselines, heuristics,
// warm starts and the reference schedules use it.
#pragma once

#include <optional>
#include <vector>

#include "hetplan/plan/problem.h"

namespace hetplan {

// `assignment[v]` = PU of v (must be supported). `order`, when given, is a
// topological order used as the dispatch order; otherwise the graph's.
Schedule ListSchedule(const Problem& p, const std::vector<int>& assignment,
                      const std::vector<int>* order = nullptr);

// Checks the capacity of spatial PUs for an assignment.
bool FitsCapacity(const Problem& p, const std::vector<int>& assignment);

// Every operator on `pu`, list-scheduled; nullopt when some operator is
// unsupported there or the whole model exceeds its capacity.
std::optional<Schedule> SinglePuSchedule(const Problem& p, int pu);

}  // namespace hetplan
