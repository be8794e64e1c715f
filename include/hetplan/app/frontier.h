// `hetplan frontier` in the application layer (docs/frontier.md): the
// optimal makespan over every crossbar budget of a spatial PU, from one
// exact search (solve/frontier.h), each step's schedule written as a
// schedule file and checked by the independent validator, and the inverse
// questions read off the curve. Nothing here prints or exits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/app/plan.h"
#include "hetplan/solve/frontier.h"

namespace hetplan {

struct FrontierSpec {
  std::string pu;  // the spatial PU to sweep; empty: the platform's only one
  // The budgets reported, [min, max]; max absent: up to every operator's
  // crossbars at once (saturation at the latest).
  int64_t min_crossbars = 0;
  std::optional<int64_t> max_crossbars;
  SolveOptions options;  // time_limit_s, relative_gap, threads, exact.node_limit
  // The fewest crossbars whose best plan is at least this much faster than
  // the CPU-only plan.
  std::optional<double> min_crossbars_for_speedup;
  bool saturation = false;  // report the budget beyond which nothing improves
};

struct FrontierOutput {
  CrossbarFrontier frontier;
  double cpu_only_us = 0;          // the reference of `speedup`
  nlohmann::json json;             // frontier.json
  // Per breakpoint (as json["breakpoints"]), the schedule file at its own
  // budget; each has passed the validator.
  std::vector<nlohmann::json> schedules;
  std::string csv;                 // crossbars,makespan_us,speedup,status,lower_bound_us
};

// Checks the spec against the platform before any search (the errors name
// the option and the fix), solves, validates every breakpoint's schedule.
Result<FrontierOutput> PlanFrontier(const PlanSubject& subject, const FrontierSpec& spec);

}  // namespace hetplan
