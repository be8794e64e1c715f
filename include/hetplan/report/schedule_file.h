// The schedule file (docs/schedule-format.md): the contract every solver and
// baseline writes, self-contained so that `hetplan validate` can check it
// alone. Plus its CSV summary and Chrome trace, both derived from the JSON.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "hetplan/graph/onnx_import.h"
#include "hetplan/platform/platform.h"
#include "hetplan/plan/plan_file.h"
#include "hetplan/plan/result.h"
#include "hetplan/validate/validator.h"

namespace hetplan {

struct ScheduleContext {
  const LoadedModel* model = nullptr;
  const Platform* platform = nullptr;
  const Problem* problem = nullptr;
  const SolveResult* result = nullptr;  // result->schedule must be set
  std::string mode = "partition";
  std::map<std::string, double> baselines;  // e.g. cpu_only_us
  std::vector<std::string> notes;
  // Two requests: each request's model (file, hash, operators), in order.
  std::vector<const LoadedModel*> request_models;
};

// "measured", "analytical", ... when every PU agrees, else "mixed: <pu>
// <label> ...": what a plan's numbers rest on.
std::string CostBasis(const std::vector<PuInfo>& pus);

// Fields that vary between identical runs (wall times); everything else is a
// pure function of the inputs. Listed in docs/schedule-format.md.
inline constexpr const char* kNondeterministicFields[] = {"solver.seconds"};

nlohmann::json ScheduleToJson(const ScheduleContext& ctx);

// What a model was planned with, as a schedule's (and a deployment
// manifest's) model block records it (docs/schedule-format.md):
// "input_shapes" (--shape), "input_values" (--value) and "branches" (every
// If resolved). Keys with nothing to say are left out.
void AddPlanAssumptions(const PlanAssumptions& a, nlohmann::json* model_block);
// The inverse; errors name `label` and the key.
Result<PlanAssumptions> ReadPlanAssumptions(const nlohmann::json& model_block, const std::string& label);
// One line per value and branch, for notes and printed summaries:
// "value sr = 16000 (int64[1], --value)", "branch If 'gate': then (assumed with --branch; ...)".
std::vector<std::string> PlanAssumptionLines(const PlanAssumptions& a);
// One row per operator: id,name,type,device,start_us,finish_us,cost_us,crossbars.
std::string ScheduleJsonToCsv(const nlohmann::json& schedule);
// Chrome trace event format (Perfetto, chrome://tracing): one track per PU
// plus one for transfers.
nlohmann::json ScheduleJsonToChromeTrace(const nlohmann::json& schedule);

// The schedule file read back into its type, for every module that reads a
// plan (split, run, report, --refine): the PUs with their runtime
// configuration, each operator at its id with its PU, times and predicted
// cost, the edges, the totals and the baselines. Only what it needs is
// required (format, model.file, devices, each operator's id, device, times
// and cost on its device); errors name `label` and the key. It does not
// validate the plan (ValidateScheduleJson does, from the JSON).
Result<PlanFile> ReadPlanFile(const nlohmann::json& schedule, const std::string& label);

// The schedule file's bytes as every writer writes them (the CLI's --out,
// dse's --schedules, the Python bindings): one-space indent, final newline.
std::string ScheduleFileText(const nlohmann::json& schedule);
// Writes the schedule file, its CSV and its Chrome trace to the paths that
// are not empty, each atomically; the first error stops.
Status WriteScheduleOutputs(const nlohmann::json& schedule, const std::string& json_path,
                            const std::string& csv_path, const std::string& trace_path);

}  // namespace hetplan
