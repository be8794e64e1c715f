// The application layer (app/plan.h).
#include "hetplan/app/plan.h"

#include "hetplan/report/schedule_file.h"

namespace hetplan {

Result<PreparedCosts> PrepareCosts(const LoadedModel& model, const Platform& platform, const CostInputs& in,
                                   TableCache* cache) {
  HETPLAN_ASSIGN_OR_RETURN(ResolvedCosts resolved, ResolveCosts(model, platform, in, cache));
  HETPLAN_ASSIGN_OR_RETURN(CostModel costs, BuildCostModel(model.graph, platform, resolved.sources));
  return PreparedCosts{std::move(costs), std::move(resolved.notes), std::move(resolved.run_notes)};
}

Result<PreparedProblem> PrepareProblem(const PlanInputs& in, TableCache* cache) {
  HETPLAN_ASSIGN_OR_RETURN(Platform platform, LoadPlatform(in.platform, in.overrides));
  HETPLAN_ASSIGN_OR_RETURN(LoadedModel model, LoadOnnxModel(in.model_path, in.import));
  HETPLAN_ASSIGN_OR_RETURN(PreparedCosts prepared, PrepareCosts(model, platform, in.costs, cache));
  return PreparedProblem{std::move(model), std::move(platform), std::move(prepared.costs), std::move(prepared.notes),
                         std::move(prepared.run_notes)};
}

nlohmann::json MethodInfoToJson(const MethodInfo& m) {
  nlohmann::json objectives = nlohmann::json::array();
  for (Objective o : m.objectives) objectives.push_back(ToString(o));
  return {{"name", m.name},
          {"family", ToString(m.family)},
          {"summary", m.summary},
          {"objectives", objectives},
          {"requests", m.requests},
          {"spatial_pus", m.spatial_pus},
          {"shared_adcs", m.shared_adcs},
          {"reprogram", m.reprogram},
          {"proves_optimality", m.proves_optimality},
          {"time_limit", m.time_limit},
          {"schedule_mode", m.schedule_mode},
          {"docs", m.docs}};
}

std::vector<std::string> ExpandSolverNames(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& n : names) {
    if (n == "baselines") {
      for (const std::string& b : SolverNames(MethodFamily::kBaseline, 1)) out.push_back(b);
    } else {
      out.push_back(n);
    }
  }
  return out;
}

Result<MapMode> ParseMapMode(std::string_view text) {
  if (text == "sequential") return MapMode::kSequential;
  if (text == "parallel") return MapMode::kParallel;
  if (text == "concurrent") return MapMode::kConcurrent;
  return Error(ErrorCode::kInvalidArgument, "mode '{}' is unknown; use sequential, parallel or concurrent", text);
}

std::string ToString(MapMode mode) {
  switch (mode) {
    case MapMode::kSequential:
      return "sequential";
    case MapMode::kParallel:
      return "parallel";
    case MapMode::kConcurrent:
      return "concurrent";
  }
  return "?";
}

Result<PlanSpec> MapPlanSpec(const MapSettings& s) {
  PlanSpec spec;
  spec.objective = s.objective;
  if (s.mode != MapMode::kConcurrent) {
    if (s.second_model || s.joint || s.lockstep || !s.coexec.empty()) {
      return Error(ErrorCode::kInvalidArgument,
                   "mode {}: a second model, co-execution rows, joint and lockstep apply to the concurrent mode "
                   "only; use mode concurrent or drop them",
                   ToString(s.mode));
    }
    spec.solver = s.mode == MapMode::kParallel ? "map_parallel" : "map";
    spec.options.mapping = MappingOptions{s.accounting.value_or(TransferAccounting::kConservative), s.algorithm};
    spec.method_references = true;  // BIDENT's single-PU totals under the same accounting
    return spec;
  }
  if (s.accounting && *s.accounting != TransferAccounting::kConservative) {
    return Error(ErrorCode::kInvalidArgument,
                 "accounting {}: the concurrent mode charges every operator its full H2D and D2H (BIDENT); "
                 "neighbour accounting applies to the sequential and parallel modes",
                 ToString(*s.accounting));
  }
  spec.solver = "map_concurrent";
  spec.options.concurrent.space = !s.second_model && !s.joint ? ConcurrentSpace::kAligned : ConcurrentSpace::kJoint;
  spec.options.concurrent.algorithm = s.algorithm;
  spec.options.concurrent.solo_steps = !s.lockstep;
  spec.extra_coexec = s.coexec;
  return spec;
}

namespace {

// The references, the schedule file and its validation of `out->result`
// (solved on `problem`, first's or the combined requests').
Status WriteSchedule(const PlanSubject& first, const Problem& problem, const MethodInfo& info, const PlanSpec& spec,
                     const std::vector<const LoadedModel*>& request_models, PlanOutput* out_ptr) {
  PlanOutput& out = *out_ptr;
  out.references = ComputeReferences(problem);
  out.baselines = spec.method_references && out.result.mapping ? out.result.mapping->references
                                                               : out.references.values;
  if (!out.result.schedule) return Status::Ok();
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
  return Status::Ok();
}

}  // namespace

Result<PlanOutput> PlanFromResult(const PlanSubject& subject, const PlanSpec& spec, SolveResult result) {
  HETPLAN_ASSIGN_OR_RETURN(ResolvedName name, ResolveSolverName(spec.solver));
  const MethodInfo& info = FindSolver(name.canonical)->info();
  if (info.requests == 2) {
    return Error(ErrorCode::kInvalidArgument, "solver '{}' plans two requests; give a one-request method", info.name);
  }
  PlanOutput out;
  out.result = std::move(result);
  const Problem problem{&subject.model->graph, subject.costs, spec.objective, spec.latency_cap_us};
  HETPLAN_RETURN_IF_ERROR(WriteSchedule(subject, problem, info, spec, {}, &out));
  return out;
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
  HETPLAN_RETURN_IF_ERROR(WriteSchedule(first, problem, info, spec, request_models, &out));
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
