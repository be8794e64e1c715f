// List-scheduling simulator: turns an assignment (and optionally a priority
// order) into a timed schedule. Operators are taken in priority order (a
// topological order); each starts as soon as its inputs have arrived
// (predecessor finish + transfer when on another PU) and, on a serial PU, the
// PU is free. Spatial PUs run operators concurrently. Baselines, heuristics
// and warm starts use it.
#pragma once

#include <vector>

#include "hetplan/solve/problem.h"

namespace hetplan {

// `assignment[v]` = PU of v (must be supported). `order`, when given, is a
// topological order used as the dispatch order; otherwise the graph's.
Schedule ListSchedule(const Problem& p, const std::vector<int>& assignment,
                      const std::vector<int>* order = nullptr);

// Checks the capacity of spatial PUs for an assignment.
bool FitsCapacity(const Problem& p, const std::vector<int>& assignment);

}  // namespace hetplan
