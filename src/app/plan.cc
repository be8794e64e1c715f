// The application layer (app/plan.h).
#include "hetplan/app/plan.h"

#include "hetplan/report/schedule_file.h"

namespace hetplan {

Result<PreparedProblem> PrepareProblem(const PlanInputs& in, TableCache* cache) {
  HETPLAN_ASSIGN_OR_RETURN(Platform platform, LoadPlatform(in.platform));
  for (const std::string& o : in.overrides) HETPLAN_RETURN_IF_ERROR(ApplyOverride(platform, o));
  HETPLAN_ASSIGN_OR_RETURN(LoadedModel model, LoadOnnxModel(in.model_path, in.import));
  HETPLAN_ASSIGN_OR_RETURN(ResolvedCosts resolved, ResolveCosts(model, platform, in.costs, cache));
  HETPLAN_ASSIGN_OR_RETURN(CostModel costs, BuildCostModel(model.graph, platform, resolved.sources));
  return PreparedProblem{std::move(model), std::move(platform), std::move(costs), std::move(resolved.notes),
                         std::move(resolved.run_notes)};
}

Result<PlanOutput> Plan(const PlanSubject& first, const PlanSpec& spec, const PlanSubject* second) {
  HETPLAN_ASSIGN_OR_RETURN(ResolvedName name, ResolveSolverName(spec.solver));
  const Solver* method = FindSolver(name.canonical);
  const MethodInfo& info = method->info();
  PlanOutput out;
  Problem problem{&first.model->graph, first.costs, spec.objective, spec.latency_cap_us};
  std::vector<const LoadedModel*> request_models;
  if (info.requests == 2) {
    const PlanSubject& other = second != nullptr ? *second : first;
    HETPLAN_ASSIGN_OR_RETURN(CombinedRequests both,
                             CombineRequests(first.model->graph, *first.costs, other.model->graph, *other.costs,
                                             spec.extra_coexec));
    out.combined = std::make_shared<const CombinedRequests>(std::move(both));
    // BIDENT's two-request plans carry no latency cap.
    problem = out.combined->problem(spec.objective);
    request_models = {first.model, other.model};
  } else if (second != nullptr) {
    return Error(ErrorCode::kInvalidArgument, "solver '{}' plans one request; a second model applies to two-request "
                 "methods (hetplan solvers lists them)", info.name);
  }
  HETPLAN_ASSIGN_OR_RETURN(out.result, Solve(name.canonical, problem, spec.options));
  out.references = ComputeReferences(problem);
  out.baselines = spec.method_references && out.result.mapping ? out.result.mapping->references
                                                               : out.references.values;
  if (!out.result.schedule) return out;
  // The schedule's model block names request 0's file for two requests.
  LoadedModel combined_model;
  const LoadedModel* model = first.model;
  if (out.combined) {
    combined_model.path = first.model->path;
    combined_model.sha256 = first.model->sha256;
    combined_model.fusion = first.model->fusion;
    model = &combined_model;
  }
  static const std::vector<std::string> kNoNotes;
  ScheduleContext ctx{model,         first.platform, &problem, &out.result, info.schedule_mode, out.baselines,
                      first.notes ? *first.notes : kNoNotes,  request_models};
  out.schedule = ScheduleToJson(ctx);
  out.validation = ValidateScheduleJson(out.schedule);
  if (!out.validation.ok()) {
    return Error(ErrorCode::kInternal, "the {} schedule fails validation (a bug in hetplan): {}", info.name,
                 out.validation.violations.front());
  }
  return out;
}

Result<PlanOutput> PlanPartition(const PreparedProblem& pp, const std::string& solver, Objective objective,
                                 std::optional<double> latency_cap_us, const SolveOptions& options) {
  PlanSpec spec;
  spec.solver = solver;
  spec.objective = objective;
  spec.latency_cap_us = latency_cap_us;
  spec.options = options;
  return Plan(pp.subject(), spec);
}

}  // namespace hetplan
