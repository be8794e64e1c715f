// `hetplan frontier` (app/frontier.h).
#include "hetplan/app/frontier.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "hetplan/report/schedule_file.h"
#include "hetplan/solve/references.h"

namespace hetplan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

nlohmann::json NumOrNull(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string StepStatus(const FrontierStep& s) { return s.optimal ? "optimal" : "feasible"; }

// The spatial PU the spec names, or the platform's only one.
Result<int> SweptPu(const CostModel& c, const Platform& platform, const std::string& name) {
  std::vector<int> spatial;
  for (int p = 0; p < c.num_pus(); ++p) {
    if (c.pu(p).spatial) spatial.push_back(p);
  }
  if (!name.empty()) {
    const int p = platform.FindPu(name);
    if (p < 0) {
      return Error(ErrorCode::kInvalidArgument, "{}: --pu {}: no such PU; the platform has {}", platform.source, name,
                   fmt::join([&] {
                     std::vector<std::string> names;
                     for (int q = 0; q < c.num_pus(); ++q) names.push_back(c.pu(q).name);
                     return names;
                   }(),
                             ", "));
    }
    if (!c.pu(p).spatial) {
      return Error(ErrorCode::kInvalidArgument,
                   "{}: --pu {}: a serial PU has no crossbar capacity to sweep; name a spatial (CIM) PU",
                   platform.source, name);
    }
    return p;
  }
  if (spatial.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: no crossbar capacity to sweep (no PU is spatial); use a platform with a CIM PU",
                 platform.source);
  }
  if (spatial.size() > 1) {
    return Error(ErrorCode::kInvalidArgument, "{}: {} spatial PUs; name the one to sweep with --pu",
                 platform.source, spatial.size());
  }
  return spatial[0];
}

}  // namespace

Result<FrontierOutput> PlanFrontier(const PlanSubject& subject, const FrontierSpec& spec) {
  const CostModel& costs = *subject.costs;
  const Platform& platform = *subject.platform;
  HETPLAN_ASSIGN_OR_RETURN(const int pu, SweptPu(costs, platform, spec.pu));
  if (spec.min_crossbars < 0) {
    return Error(ErrorCode::kInvalidArgument, "--crossbars: the smallest budget is {}; budgets are ≥ 0",
                 spec.min_crossbars);
  }
  if (spec.max_crossbars && *spec.max_crossbars < spec.min_crossbars) {
    return Error(ErrorCode::kInvalidArgument, "--crossbars {}:{} is an empty range; write LO:HI with LO ≤ HI",
                 spec.min_crossbars, *spec.max_crossbars);
  }
  if (spec.min_crossbars_for_speedup && !(*spec.min_crossbars_for_speedup > 0)) {
    return Error(ErrorCode::kInvalidArgument, "--min-crossbars-for-speedup {}: a speedup is a factor > 0",
                 *spec.min_crossbars_for_speedup);
  }
  HETPLAN_RETURN_IF_ERROR(ValidateSolveOptions(spec.options));
  const Problem problem{&subject.model->graph, &costs, Objective::kLatency, std::nullopt};
  const References refs = ComputeReferences(problem);
  auto cpu = refs.values.find("cpu_only_us");
  if (cpu == refs.values.end()) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: the speedups are against the CPU-only plan, and no CPU runs every operator; "
                 "use a platform whose CPU supports the whole model",
                 platform.source);
  }
  FrontierOutput out;
  out.cpu_only_us = cpu->second;
  HETPLAN_ASSIGN_OR_RETURN(out.frontier, SolveCrossbarFrontier(problem, pu, spec.options, spec.max_crossbars));
  const CrossbarFrontier& f = out.frontier;
  const std::string pu_name = costs.pu(pu).name;
  auto speedup = [&](double makespan) { return makespan > 0 ? out.cpu_only_us / makespan : kInf; };
  if (spec.min_crossbars > f.max_crossbars && !f.steps.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 "--crossbars {}: starts past saturation: every operator fits in {} crossbars of {}, so every budget "
                 "from {} on has makespan {:.3f} µs; give a smallest budget ≤ {}",
                 spec.min_crossbars, f.max_crossbars, pu_name, f.steps.back().crossbars, f.steps.back().makespan_us,
                 f.max_crossbars);
  }

  // The steps within [min, max]: the one holding at `min` starts there.
  std::vector<FrontierStep> shown;
  for (size_t i = 0; i < f.steps.size(); ++i) {
    const int64_t next = i + 1 < f.steps.size() ? f.steps[i + 1].crossbars : f.max_crossbars + 1;
    if (next <= spec.min_crossbars) continue;
    FrontierStep s = f.steps[i];
    s.crossbars = std::max(s.crossbars, spec.min_crossbars);
    shown.push_back(std::move(s));
  }

  nlohmann::json& j = out.json;
  j["format"] = "hetplan-frontier";
  j["version"] = 1;
  j["model"] = {{"file", subject.model->path}, {"sha256", subject.model->sha256}, {"operators",
                                                                                     subject.model->graph.size()}};
  j["platform"] = {{"name", platform.name}, {"source", platform.source}, {"overrides", platform.overrides}};
  j["pu"] = pu_name;
  j["objective"] = "latency";
  j["crossbars_range"] = {spec.min_crossbars, f.max_crossbars};
  j["crossbars_for_all"] = f.crossbars_for_all;
  j["cpu_only_us"] = out.cpu_only_us;
  j["relative_gap"] = spec.options.relative_gap;
  j["solver"] = {{"name", "exact"},
                 {"complete", f.complete},
                 {"termination", ToString(f.termination)},
                 {"segments", f.stats.segments},
                 {"searches", f.stats.searches},
                 {"nodes", f.stats.nodes},
                 {"seconds", f.seconds}};
  // Budgets below the first breakpoint have no schedule: proven infeasible
  // when the search finished.
  j["feasible_from"] = shown.empty() ? nlohmann::json(nullptr) : nlohmann::json(shown.front().crossbars);
  nlohmann::json& bps = j["breakpoints"] = nlohmann::json::array();
  out.csv = "crossbars,makespan_us,speedup,status,lower_bound_us\n";
  for (const FrontierStep& s : shown) {
    bps.push_back({{"crossbars", s.crossbars},
                   {"makespan_us", s.makespan_us},
                   {"speedup", NumOrNull(speedup(s.makespan_us))},
                   {"status", StepStatus(s)},
                   {"lower_bound_us", s.lower_bound_us}});
    out.csv += fmt::format("{},{},{},{},{}\n", s.crossbars, s.makespan_us, speedup(s.makespan_us), StepStatus(s),
                           s.lower_bound_us);
  }
  // The proven bounds between breakpoints, where the search did not finish.
  nlohmann::json& bounds = j["lower_bounds"] = nlohmann::json::array();
  if (!f.complete) {
    for (const FrontierBound& b : f.bounds) {
      if (b.crossbars > f.max_crossbars) break;
      bounds.push_back({{"crossbars", b.crossbars}, {"lower_bound_us", NumOrNull(b.lower_bound_us)}});
    }
  }

  // The inverse questions, each with whether the curve proves its answer.
  // A budget b is proven to reach makespan z when its step is optimal; no
  // smaller budget reaches it when the bound below exceeds z.
  auto proven_first = [&](int64_t b, double z) {
    const FrontierStep* s = f.StepAt(b);
    if (s == nullptr || !s->optimal) return false;
    if (b <= spec.min_crossbars) return true;
    return f.LowerBoundAt(b - 1) > z * (1 + spec.options.relative_gap) + 1e-9;
  };
  if (spec.min_crossbars_for_speedup) {
    const double x = *spec.min_crossbars_for_speedup;
    nlohmann::json a = {{"speedup", x}, {"target_makespan_us", out.cpu_only_us / x}};
    const FrontierStep* hit = nullptr;
    for (const FrontierStep& s : shown) {
      if (speedup(s.makespan_us) >= x * (1 - 1e-12)) {
        hit = &s;
        break;
      }
    }
    if (hit != nullptr) {
      a["crossbars"] = hit->crossbars;
      a["makespan_us"] = hit->makespan_us;
      a["status"] = proven_first(hit->crossbars, out.cpu_only_us / x) ? "optimal" : "feasible";
    } else {
      a["crossbars"] = nullptr;
      a["makespan_us"] = nullptr;
      // Unreachable is proven when even the bound at the largest budget is
      // longer than the target.
      a["status"] = f.LowerBoundAt(f.max_crossbars) > out.cpu_only_us / x ? "unreachable" : "not found";
    }
    j["min_crossbars_for_speedup"] = std::move(a);
  }
  if (spec.saturation && !shown.empty()) {
    // The last breakpoint: no larger budget improved. Proven when its step
    // is optimal to the end of the range and the budget before it is
    // proven slower.
    const FrontierStep& last = shown.back();
    // Below every operator's crossbars at once a larger budget might still help.
    const bool whole = f.max_crossbars >= f.crossbars_for_all;
    const bool proven = whole && last.optimal && proven_first(last.crossbars, last.makespan_us);
    j["saturation"] = {{"crossbars", last.crossbars},
                       {"makespan_us", last.makespan_us},
                       {"speedup", NumOrNull(speedup(last.makespan_us))},
                       {"status", proven ? "optimal" : "feasible"},
                       {"range_covers_all", whole}};
  } else if (spec.saturation) {
    j["saturation"] = nullptr;
  }

  // Each breakpoint's schedule at its own budget, through the same writer
  // and validator as `partition`.
  for (const FrontierStep& s : shown) {
    Platform at = platform;
    HETPLAN_RETURN_IF_ERROR(ApplyOverride(at, fmt::format("{}.crossbars={}", pu_name, s.crossbars)));
    CostModel c = costs;
    c.mutable_pu(pu).capacity = s.crossbars;
    Problem pr = problem;
    pr.costs = &c;
    SolveResult r;
    r.solver = "exact";
    r.formulation = "frontier";
    r.status = s.optimal ? SolveStatus::kOptimal : SolveStatus::kFeasible;
    r.termination = s.optimal ? Termination::kOptimal : f.termination;
    r.schedule = s.schedule;
    r.objective = s.makespan_us;
    r.bound = s.lower_bound_us;
    r.gap = s.makespan_us > 0 ? (s.makespan_us - s.lower_bound_us) / s.makespan_us : 0.0;
    r.seconds = f.seconds;
    r.exact = f.stats;
    r.notes.push_back(fmt::format("breakpoint of the crossbar frontier of PU {} (hetplan frontier)", pu_name));
    static const std::vector<std::string> kNoNotes;
    std::map<std::string, double> baselines = ComputeReferences(pr).values;
    ScheduleContext ctx{subject.model, &at, &pr, &r, "partition", baselines,
                        subject.notes ? *subject.notes : kNoNotes, {}};
    nlohmann::json file = ScheduleToJson(ctx);
    const ValidationReport v = ValidateScheduleJson(file);
    if (!v.ok()) {
      return Error(ErrorCode::kInternal, "the frontier's schedule at {} crossbars fails validation (a bug in hetplan): {}",
                   s.crossbars, v.violations.front());
    }
    out.schedules.push_back(std::move(file));
  }
  return out;
}

}  // namespace hetplan
