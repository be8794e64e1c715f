// The application layer that the CLI commands, dse, the tests and the
// bindings share (Timeloop's and HiGHS's app/): model + platform + cost
// sources → problem → any registered method → validated schedule file.
// Nothing here prints or exits.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/app/costs.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/plan/requests.h"
#include "hetplan/platform/platform.h"
#include "hetplan/solve/references.h"
#include "hetplan/solve/solver.h"
#include "hetplan/validate/validator.h"

namespace hetplan {

struct PlanInputs {
  std::string model_path;
  ImportOptions import;
  std::string platform = "klein-arm";
  std::vector<std::string> overrides;  // --set PU.KEY=VALUE
  CostInputs costs;                    // --costs, profiling options
};

// One request's inputs, as plain views, so that a sweep can plan many points
// over shared models and platforms without copying them.
struct PlanSubject {
  const LoadedModel* model = nullptr;
  const Platform* platform = nullptr;
  const CostModel* costs = nullptr;
  const std::vector<std::string>* notes = nullptr;  // cost notes (deterministic), may be null
};

struct PreparedProblem {
  LoadedModel model;
  Platform platform;
  CostModel costs;
  std::vector<std::string> notes;      // deterministic: go into the schedule file
  std::vector<std::string> run_notes;  // about this run only (cache hit/miss): printed, not stored

  PlanSubject subject() const { return PlanSubject{&model, &platform, &costs, &notes}; }
};

// Loads the model and the platform, applies overrides, resolves the cost
// sources (app/costs.h) and builds the cost model.
Result<PreparedProblem> PrepareProblem(const PlanInputs& in, TableCache* cache = nullptr);

// The cost half of PrepareProblem, for a model and a platform already
// loaded (the Python bindings keep both across calls).
struct PreparedCosts {
  CostModel costs;
  std::vector<std::string> notes;      // as PreparedProblem's
  std::vector<std::string> run_notes;
};
Result<PreparedCosts> PrepareCosts(const LoadedModel& model, const Platform& platform, const CostInputs& in,
                                   TableCache* cache = nullptr);

struct PlanSpec {
  std::string solver = "exact";  // any name `hetplan solvers` lists (aliases too)
  Objective objective = Objective::kLatency;
  std::optional<double> latency_cap_us;  // energy objective: makespan ≤ this
  SolveOptions options;
  // Co-execution rows beyond the cost tables' (two requests only).
  std::vector<CoExecution> extra_coexec;
  // Which references the schedule file's `baselines` holds: false (the
  // default) the problem's (solve/references.h), the same for every method;
  // true the method's own where it has them (BIDENT's single-PU totals under
  // its accounting), as `hetplan map` reports them.
  bool method_references = false;
};

struct PlanOutput {
  SolveResult result;
  References references;                    // the problem's
  std::map<std::string, double> baselines;  // as written to the schedule file
  nlohmann::json schedule;                  // the schedule file; null when the result has no schedule
  ValidationReport validation;              // of `schedule`, by the independent validator
  // Two requests: the graph and costs the schedule is on.
  std::shared_ptr<const CombinedRequests> combined;
};

// The schedule file of `result`, a one-request method's solved elsewhere on
// `subject`'s problem (spec.solver names the method; spec.objective and
// latency_cap_us the problem): references, file and validation as Plan()'s.
Result<PlanOutput> PlanFromResult(const PlanSubject& subject, const PlanSpec& spec, SolveResult result);

// Plans one request, or two when the method plans two at once
// (MethodInfo::requests): `second` is the second request, or null for the
// same model twice. Solves, attaches references, writes the schedule file
// (in memory) and validates it; a schedule that fails validation is an
// internal error (a bug). Outcomes without a schedule (infeasible, a limit
// hit before any) are results, not errors.
Result<PlanOutput> Plan(const PlanSubject& first, const PlanSpec& spec, const PlanSubject* second = nullptr);

// What `hetplan solvers --json` prints for a method: name, family, summary,
// objectives, requests, spatial_pus, proves_optimality, time_limit,
// schedule_mode, docs.
nlohmann::json MethodInfoToJson(const MethodInfo& method);

// A list of methods as dse takes it: "baselines" stands for every
// one-request baseline; every other name is kept as given (RunDse resolves
// it and names the unknown ones).
std::vector<std::string> ExpandSolverNames(const std::vector<std::string>& names);

// `hetplan map`'s modes (docs/mapping.md): BIDENT's sequential and
// intra-model parallel mapping of one request, and its two-request search.
enum class MapMode { kSequential, kParallel, kConcurrent };
Result<MapMode> ParseMapMode(std::string_view text);
std::string ToString(MapMode mode);

struct MapSettings {
  MapMode mode = MapMode::kSequential;
  Objective objective = Objective::kLatency;
  // Absent: conservative. The concurrent mode accepts only conservative.
  std::optional<TransferAccounting> accounting;
  ChainAlgorithm algorithm = ChainAlgorithm::kDp;
  // The concurrent mode only (errors otherwise):
  bool second_model = false;  // two models; else the same model twice
  bool joint = false;         // same model: the joint (i, j) space instead of the aligned one
  bool lockstep = false;      // joint space: BIDENT's literal transitions only
  std::vector<CoExecution> coexec;  // co-execution rows beyond the cost tables'
};
// The plan a mode makes: method map, map_parallel or map_concurrent with its
// options, and the method's own references (BIDENT's single-PU totals under
// its accounting), as `hetplan map` reports them. Errors name the setting.
Result<PlanSpec> MapPlanSpec(const MapSettings& settings);

// The same with the arguments of earlier releases.
Result<PlanOutput> PlanPartition(const PreparedProblem& pp, const std::string& solver, Objective objective,
                                 std::optional<double> latency_cap_us, const SolveOptions& options);

}  // namespace hetplan
