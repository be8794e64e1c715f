// The application layer the CLI (and tests, and later bindings) call: model +
// platform + cost sources → problem → solve → validated schedule file.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/cost/build.h"
#include "hetplan/cost/profiler.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/platform/platform.h"
#include "hetplan/sim/validator.h"
#include "hetplan/solve/problem.h"

namespace hetplan {

struct PlanInputs {
  std::string model_path;
  ImportOptions import;
  std::string platform = "klein-arm";
  std::vector<std::string> overrides;  // --set PU.KEY=VALUE
  std::string costs_path;              // --costs TABLE (for `table` PUs)
  ProfileOptions profile;              // for `profile` PUs
};

struct PreparedProblem {
  LoadedModel model;
  Platform platform;
  CostModel costs;
  std::map<std::string, CostTable> tables;  // per PU, as used
  std::vector<std::string> notes;      // deterministic: go into the schedule file
  std::vector<std::string> run_notes;  // about this run only (cache hit/miss): printed, not stored
};

// Loads the model and the platform, applies overrides, profiles `profile` PUs
// (through the cache), reads tables, and builds the cost model.
Result<PreparedProblem> PrepareProblem(const PlanInputs& in);

// The assignment with every operator on `pu` (nullopt if some operator is
// unsupported there), and its list-scheduled makespan.
std::optional<Schedule> SinglePuSchedule(const Problem& p, int pu);

struct PlanOutput {
  SolveResult result;
  nlohmann::json schedule;     // the schedule file
  ValidationReport validation; // of `schedule`, by the independent validator
  std::map<std::string, double> baselines;
};

// Solves, attaches baselines (cpu_only_us, best_single_us), writes nothing.
// A schedule that fails validation is an internal error (a bug).
Result<PlanOutput> PlanPartition(const PreparedProblem& pp, const std::string& solver, Objective objective,
                                 std::optional<double> latency_cap_us, const SolveOptions& options);

}  // namespace hetplan
