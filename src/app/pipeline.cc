#include "hetplan/app/pipeline.h"

#include <limits>

#include "hetplan/report/schedule_file.h"
#include "hetplan/sim/simulator.h"
#include "hetplan/solve/solvers.h"

namespace hetplan {

Result<PreparedProblem> PrepareProblem(const PlanInputs& in) {
  HETPLAN_ASSIGN_OR_RETURN(Platform platform, LoadPlatform(in.platform));
  for (const std::string& o : in.overrides) HETPLAN_RETURN_IF_ERROR(ApplyOverride(platform, o));
  HETPLAN_ASSIGN_OR_RETURN(LoadedModel model, LoadOnnxModel(in.model_path, in.import));

  CostSources sources;
  std::optional<CostTable> user_table;
  if (!in.costs_path.empty()) {
    HETPLAN_ASSIGN_OR_RETURN(CostTable t, LoadCostTable(in.costs_path));
    HETPLAN_RETURN_IF_ERROR(CheckCostTable(t, model.graph, in.costs_path));
    user_table = std::move(t);
  }
  std::vector<std::string> notes, run_notes;
  for (const ProcessingUnit& pu : platform.pus) {
    if (pu.cost_source == CostSource::kProfile) {
      if (user_table && user_table->Find(model.graph.op(0).name, pu.name)) {
        sources.tables[pu.name] = *user_table;
        continue;
      }
      ProfileOptions po = in.profile;
      po.threads = pu.threads;
      HETPLAN_ASSIGN_OR_RETURN(CostTable t, ProfileOnnxRuntime(model, pu.name, po));
      notes.push_back(fmt::format("{}: measured with {} on {} ({} thread{})", pu.name,
                                  t.meta.count("runtime") ? t.meta.at("runtime") : "onnxruntime",
                                  t.meta.count("cpu") ? t.meta.at("cpu") : "this host", pu.threads,
                                  pu.threads == 1 ? "" : "s"));
      run_notes.push_back(fmt::format("{}: profile cache {}", pu.name,
                                      t.meta.count("cache") ? t.meta.at("cache") : "off"));
      sources.tables[pu.name] = std::move(t);
    } else if (pu.cost_source == CostSource::kTable) {
      if (user_table) {
        sources.tables[pu.name] = *user_table;
      } else if (!pu.table.empty()) {
        HETPLAN_ASSIGN_OR_RETURN(CostTable t, LoadCostTable(pu.table));
        HETPLAN_RETURN_IF_ERROR(CheckCostTable(t, model.graph, pu.table));
        sources.tables[pu.name] = std::move(t);
      }
    } else {
      notes.push_back(fmt::format("{}: analytical costs ({})", pu.name, ToString(pu.cost_source)));
    }
  }
  HETPLAN_ASSIGN_OR_RETURN(CostModel costs, BuildCostModel(model.graph, platform, sources));
  PreparedProblem pp{std::move(model), std::move(platform), std::move(costs), std::move(sources.tables),
                     std::move(notes), std::move(run_notes)};
  return pp;
}

std::optional<Schedule> SinglePuSchedule(const Problem& p, int pu) {
  const int n = p.graph->size();
  for (int v = 0; v < n; ++v) {
    if (!p.costs->supported(v, pu)) return std::nullopt;
  }
  std::vector<int> assignment(n, pu);
  if (!FitsCapacity(p, assignment)) return std::nullopt;
  return ListSchedule(p, assignment);
}

Result<PlanOutput> PlanPartition(const PreparedProblem& pp, const std::string& solver, Objective objective,
                                 std::optional<double> latency_cap_us, const SolveOptions& options) {
  Problem problem{&pp.model.graph, &pp.costs, objective, latency_cap_us};
  HETPLAN_ASSIGN_OR_RETURN(SolveResult result, Solve(solver, problem, options));
  PlanOutput out;
  double best_single = std::numeric_limits<double>::infinity();
  for (int p = 0; p < pp.costs.num_pus(); ++p) {
    auto s = SinglePuSchedule(problem, p);
    if (!s) continue;
    out.baselines[pp.costs.pu(p).name + "_only_us"] = s->makespan_us;
    if (pp.costs.pu(p).kind == "cpu" && !out.baselines.count("cpu_only_us")) out.baselines["cpu_only_us"] = s->makespan_us;
    best_single = std::min(best_single, s->makespan_us);
  }
  if (std::isfinite(best_single)) out.baselines["best_single_us"] = best_single;
  out.result = std::move(result);
  if (!out.result.schedule) return out;
  ScheduleContext ctx{&pp.model, &pp.platform, &problem, &out.result, "partition", out.baselines, pp.notes};
  out.schedule = ScheduleToJson(ctx);
  out.validation = ValidateScheduleJson(out.schedule);
  if (!out.validation.ok()) {
    return Error(ErrorCode::kInternal, "the {} schedule fails validation (a bug in hetplan): {}", solver,
                 out.validation.violations.front());
  }
  return out;
}

}  // namespace hetplan
