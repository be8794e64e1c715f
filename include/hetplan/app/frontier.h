// `hetplan frontier` in the application layer (docs/frontier.md): the
// optimal makespan over every crossbar budget of a spatial PU, from one
// exact search (solve/frontier.h), each step's schedule written as a
// schedule file and checked by the independent validator, and the inverse
// questions read off the curve. Nothing here prints or exits.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/app/plan.h"
#include "hetplan/report/frontier_plots.h"
#include "hetplan/solve/frontier.h"

namespace hetplan {

// A second axis: one curve per value of a platform field (`--sweep`).
struct FrontierAxis {
  std::string key;                  // PU.KEY as --set takes it, e.g. cim.mvm_latency_ns
  std::vector<std::string> values;  // as --set takes them
};

struct FrontierSpec {
  std::string pu;  // the spatial PU to sweep; empty: the platform's only one
  // kLatency: the makespan per budget; kThroughput: a stream's II per budget
  // (breakpoints carry initiation_interval_us and inputs_per_s instead of
  // makespan_us; no Pareto front, no makespan target).
  Objective objective = Objective::kLatency;
  // The budgets reported, [min, max]; max absent: up to every operator's
  // crossbars at once (saturation at the latest).
  int64_t min_crossbars = 0;
  std::optional<int64_t> max_crossbars;
  SolveOptions options;  // time_limit_s, relative_gap, threads, exact.node_limit
  // The fewest crossbars whose best plan is at least this much faster than
  // the CPU-only plan.
  std::optional<double> min_crossbars_for_speedup;
  // The fewest crossbars whose best plan has at most this makespan (µs).
  std::optional<double> min_crossbars_for_makespan_us;
  bool saturation = false;  // report the budget beyond which nothing improves
  // The latency–energy Pareto front at the platform's own budget (every PU
  // that runs an operator needs power_w), at most this many points.
  bool pareto = false;
  int pareto_points = 64;
  // The largest MVM latency of the swept PU at which the optimal plan at the
  // platform's own budget is still this much faster than CPU-only
  // (PlanFrontiers only: it re-costs the model per latency).
  std::optional<double> max_mvm_latency_for_speedup;
  std::optional<FrontierAxis> axis;  // PlanFrontiers only
};

// A schedule file the frontier holds: `name` relative to --schedules DIR;
// `pointer` the JSON pointer of the frontier.json item it belongs to (a
// breakpoint or a Pareto point), which gets its "schedule_file".
struct FrontierScheduleFile {
  std::string name;
  std::string pointer;
  nlohmann::json file;
};

struct FrontierOutput {
  CrossbarFrontier frontier;
  double cpu_only_us = 0;          // the reference of `speedup`
  nlohmann::json json;             // frontier.json
  // frontier.json read back as report's reader reads the file: the typed
  // value reproduce and the report take.
  FrontierFile read;
  // crossbars,makespan_us,speedup,status,lower_bound_us (with an axis, the
  // axis key's column first)
  std::string csv;
  // Every schedule file (breakpoints, Pareto points; per curve with an
  // axis), each validated.
  std::vector<FrontierScheduleFile> files;
};

// Checks the spec against the platform before any search (the errors name
// the option and the fix), solves, validates every breakpoint's schedule.
// spec.axis and spec.max_mvm_latency_for_speedup are refused here (they need
// the model re-costed): use PlanFrontiers.
Result<FrontierOutput> PlanFrontier(const PlanSubject& subject, const FrontierSpec& spec);

// What `hetplan frontier` computes: loads the model and the platform once,
// then one PlanFrontier per value of spec.axis (or one without), each
// curve's costs built with its value set; with
// spec.max_mvm_latency_for_speedup also that answer per curve (bisection
// over the MVM latency, one exact solve per probe). With an axis the file
// holds `axis` and `curves` (docs/frontier.md) instead of one curve's fields.
// `progress` (may be empty) is called with one line per stage.
Result<FrontierOutput> PlanFrontiers(const PlanInputs& in, const FrontierSpec& spec,
                                     const std::function<void(const std::string&)>& progress = {});

}  // namespace hetplan
