#include "plan_call.h"

namespace hetplan::python {
namespace {

Result<PreparedCosts> Costs(const ModelRef& model, const Platform& platform, const CostChoice& choice,
                            const ProfileOptions& profile, bool charge_boundary, const ProfileProgress& progress) {
  CostInputs in;
  in.charge_boundary = charge_boundary;
  in.costs_path = choice.path;
  in.table = choice.table.get();
  in.table_label = choice.table_label;
  in.profile = profile;
  in.progress = progress;
  // Without a profile cache the caller asked for fresh measurements: the
  // tables kept in memory are not used either.
  if (profile.cache_dir.empty()) return PrepareCosts(model.model, platform, in, nullptr);
  std::lock_guard<std::recursive_mutex> lock(model.mu);
  return PrepareCosts(model.model, platform, in, &model.cache);
}

}  // namespace

Result<PlanRun> RunPlan(const PlanCall& call, const std::atomic<bool>* interrupt, const ProfileProgress& progress) {
  PlanRun run;
  run.model = call.model;
  run.second = call.second;
  run.platform = call.platform;
  HETPLAN_ASSIGN_OR_RETURN(run.costs, Costs(*call.model, *call.platform, call.costs, call.profile,
                                            call.charge_boundary, progress));
  const PlanSubject first{&call.model->model, call.platform.get(), &run.costs.costs, &run.costs.notes};
  PlanSubject second;
  if (call.second) {
    HETPLAN_ASSIGN_OR_RETURN(run.second_costs,
                             Costs(*call.second, *call.platform, call.second_costs, call.profile,
                                   call.charge_boundary, progress));
    second = PlanSubject{&call.second->model, call.platform.get(), &run.second_costs.costs,
                         &run.second_costs.notes};
  }
  PlanSpec spec = call.spec;
  spec.options.interrupt = interrupt;
  HETPLAN_ASSIGN_OR_RETURN(run.out, Plan(first, spec, call.second ? &second : nullptr));
  return run;
}

}  // namespace hetplan::python
