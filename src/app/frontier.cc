// `hetplan frontier` (app/frontier.h).
#include "hetplan/app/frontier.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "hetplan/platform/platform.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/solve/solver.h"
#include "hetplan/solve/references.h"
#include "hetplan/util/limits.h"

namespace hetplan {
namespace {


nlohmann::json NumOrNull(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string StepStatus(const FrontierStep& s) { return s.optimal ? "optimal" : "feasible"; }

// What a step's value is called in frontier.json: the makespan, or a
// stream's II.
std::string ValueKey(const FrontierSpec& spec) {
  return spec.objective == Objective::kThroughput ? "initiation_interval_us" : "makespan_us";
}

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

// The schedule file of `r` on `pr` at platform `at`, through the same writer
// and validator as `partition`.
Result<nlohmann::json> ValidatedScheduleFile(const PlanSubject& subject, const Platform& at, const Problem& pr,
                                             const SolveResult& r, const std::string& what) {
  static const std::vector<std::string> kNoNotes;
  std::map<std::string, double> baselines = ComputeReferences(pr).values;
  ScheduleContext ctx{subject.model, &at, &pr, &r, "partition", baselines,
                      subject.notes ? *subject.notes : kNoNotes, {}};
  nlohmann::json file = ScheduleToJson(ctx);
  const ValidationReport v = ValidateScheduleJson(file);
  if (!v.ok()) {
    return Error(ErrorCode::kInternal, "the frontier's schedule {} fails validation (a bug in hetplan): {}", what,
                 v.violations.front());
  }
  return file;
}

// Point i of a front (`pareto`): its schedule file, validated, into `files`.
Status AddParetoPointFile(const PlanSubject& subject, const Problem& pr, const SolveResult& r, size_t i,
                          FrontierOutput* out) {
  HETPLAN_ASSIGN_OR_RETURN(nlohmann::json file,
                           ValidatedScheduleFile(subject, *subject.platform, pr, r, fmt::format("pareto {}", i)));
  out->files.push_back({fmt::format("pareto_{}.json", i), fmt::format("/pareto/points/{}", i), std::move(file)});
  return Status::Ok();
}

// The latency–energy front at the platform's own budget (spec.pareto), as
// frontier.json's `pareto`, each point's schedule validated into `files`.
Status AddParetoFront(const PlanSubject& subject, const Problem& problem, int pu, const FrontierSpec& spec,
                      double cpu_only_us, FrontierOutput* out) {
  HETPLAN_ASSIGN_OR_RETURN(EnergyFront ef, SolveLatencyEnergyFront(problem, spec.options, spec.pareto_points));
  nlohmann::json points = nlohmann::json::array();
  for (size_t i = 0; i < ef.points.size(); ++i) {
    const EnergyPoint& pt = ef.points[i];
    points.push_back({{"makespan_us", pt.makespan_us},
                      {"energy_uj", pt.energy_uj},
                      {"energy_bound_uj", pt.energy_bound_uj},
                      {"latency_cap_us", pt.latency_cap_us ? nlohmann::json(*pt.latency_cap_us) : nlohmann::json()},
                      {"speedup", NumOrNull(pt.makespan_us > 0 ? cpu_only_us / pt.makespan_us : kInf)},
                      {"status", pt.optimal ? "optimal" : "feasible"}});
    Problem pr = problem;
    pr.objective = Objective::kEnergy;
    pr.latency_cap_us = pt.latency_cap_us;
    SolveResult r = pt.result;
    r.notes.push_back(fmt::format("point {} of the latency–energy front at {} crossbars (hetplan frontier --pareto)",
                                  i, problem.costs->pu(pu).capacity));
    HETPLAN_RETURN_IF_ERROR(AddParetoPointFile(subject, pr, r, i, out));
  }
  out->json["pareto"] = {{"crossbars", problem.costs->pu(pu).capacity},
                         {"method",
                          "exact: the energy objective by the paper's MIP (on HiGHS or CBC, --mip-backend), one solve "
                          "per latency cap"},
                         {"points", std::move(points)},
                         {"min_makespan_us", ef.min_makespan_us},
                         {"complete", ef.complete},
                         {"stopped", ef.stopped.empty() ? nlohmann::json() : nlohmann::json(ef.stopped)},
                         {"solves", ef.solves},
                         {"seconds", ef.seconds}};
  return Status::Ok();
}

// A stream's (II, latency) front at the platform's own budget (spec.pareto
// with the throughput objective), as frontier.json's `pareto`, each point's
// cyclic schedule validated into `files`.
Status AddStreamFront(const PlanSubject& subject, const Problem& problem, int pu, const FrontierSpec& spec,
                      double cpu_only_us, FrontierOutput* out) {
  HETPLAN_ASSIGN_OR_RETURN(StreamFront sf, SolveStreamFront(problem, spec.options, spec.pareto_points));
  nlohmann::json points = nlohmann::json::array();
  for (size_t i = 0; i < sf.points.size(); ++i) {
    const StreamFrontPoint& pt = sf.points[i];
    points.push_back({{"initiation_interval_us", pt.ii_us},
                      {"inputs_per_s", NumOrNull(pt.ii_us > 0 ? 1e6 / pt.ii_us : kInf)},
                      {"latency_us", pt.latency_us},
                      {"speedup", NumOrNull(pt.ii_us > 0 ? cpu_only_us / pt.ii_us : kInf)},
                      {"status", pt.optimal ? "optimal" : "feasible"}});
    Problem pr = problem;
    pr.latency_cap_us = pt.latency_us;
    SolveResult r;
    r.solver = "exact";
    r.formulation = "throughput";
    r.status = pt.optimal ? SolveStatus::kOptimal : SolveStatus::kFeasible;
    r.termination = pt.optimal ? Termination::kProved : Termination::kTimeLimit;
    r.schedule = pt.schedule;
    r.objective = pt.ii_us;
    r.notes.push_back(fmt::format("point {} of the (II, latency) front at {} crossbars (hetplan frontier --objective "
                                  "throughput --pareto)",
                                  i, problem.costs->pu(pu).capacity));
    HETPLAN_RETURN_IF_ERROR(AddParetoPointFile(subject, pr, r, i, out));
  }
  out->json["pareto"] = {{"crossbars", problem.costs->pu(pu).capacity},
                         {"objective", "throughput"},
                         {"method", "exact: the smallest II under a latency cap, then the least latency at that II "
                                    "(the MIP with a latency bound on CBC), one cap below the last latency each step"},
                         {"points", std::move(points)},
                         {"complete", sf.complete},
                         {"solves", sf.solves},
                         {"seconds", sf.seconds}};
  return Status::Ok();
}

// The spec's own consistency, before anything is solved.
Status CheckFrontierSpec(const FrontierSpec& spec) {
  if (spec.min_crossbars < 0) {
    return Error(ErrorCode::kInvalidArgument, "--crossbars: the smallest budget is {}; budgets are ≥ 0",
                 spec.min_crossbars);
  }
  if (spec.max_crossbars && *spec.max_crossbars < spec.min_crossbars) {
    return Error(ErrorCode::kInvalidArgument, "--crossbars {}:{} is an empty range; write LO:HI with LO ≤ HI",
                 spec.min_crossbars, *spec.max_crossbars);
  }
  if (spec.min_crossbars_for_makespan_us && !(*spec.min_crossbars_for_makespan_us > 0)) {
    return Error(ErrorCode::kInvalidArgument, "--min-crossbars-for-makespan {}: a makespan is > 0 µs",
                 *spec.min_crossbars_for_makespan_us);
  }
  if (spec.min_crossbars_for_speedup && !(*spec.min_crossbars_for_speedup > 0)) {
    return Error(ErrorCode::kInvalidArgument, "--min-crossbars-for-speedup {}: a speedup is a factor > 0",
                 *spec.min_crossbars_for_speedup);
  }
  if (spec.pareto_points < 1) {
    return Error(ErrorCode::kInvalidArgument, "--pareto-points {}: a front has at least one point", spec.pareto_points);
  }
  if (spec.axis || spec.max_mvm_latency_for_speedup) {
    return Error(ErrorCode::kInvalidArgument,
                 "a second axis and the MVM-latency question re-cost the model: call PlanFrontiers");
  }
  if (spec.objective == Objective::kEnergy) {
    return Error(ErrorCode::kInvalidArgument, "--objective energy: the frontier's objectives are latency and "
                                              "throughput; for energy use --pareto");
  }
  if (spec.objective == Objective::kThroughput && spec.min_crossbars_for_makespan_us) {
    return Error(ErrorCode::kInvalidArgument,
                 "--objective throughput: --min-crossbars-for-makespan answers a question about one inference's "
                 "makespan; drop it, or ask --min-crossbars-for-speedup (inputs per second against the CPU-only "
                 "model's)");
  }
  return Status::Ok();
}

// The inverse questions (the fewest crossbars for a makespan or a speedup,
// the saturation), each with whether the curve proves its answer.
void AddInverseQuestions(const CrossbarFrontier& f, const std::vector<FrontierStep>& shown, const FrontierSpec& spec,
                         double cpu_only_us, nlohmann::json& j) {
  auto speedup = [&](double makespan) { return makespan > 0 ? cpu_only_us / makespan : kInf; };
  // A budget b is proven to reach makespan z when its step is optimal; no
  // smaller budget reaches it when the bound below exceeds z.
  auto proven_first = [&](int64_t b, double z) {
    const FrontierStep* s = f.StepAt(b);
    if (s == nullptr || !s->optimal) return false;
    if (b <= spec.min_crossbars) return true;
    return f.LowerBoundAt(b - 1) > z * (1 + spec.options.relative_gap) + 1e-9;
  };
  // The fewest crossbars whose makespan is at most z (a speedup target is
  // z = cpu-only / X).
  auto fewest = [&](double z) {
    const std::string key = ValueKey(spec);
    nlohmann::json a = {{"speedup", cpu_only_us / z}, {"target_" + key, z}};
    const FrontierStep* hit = nullptr;
    for (const FrontierStep& s : shown) {
      if (s.makespan_us <= z * (1 + 1e-12)) {
        hit = &s;
        break;
      }
    }
    if (hit != nullptr) {
      a["crossbars"] = hit->crossbars;
      a[key] = hit->makespan_us;
      a["status"] = proven_first(hit->crossbars, z) ? "optimal" : "feasible";
    } else {
      a["crossbars"] = nullptr;
      a[key] = nullptr;
      // Unreachable is proven when even the bound at the largest budget is
      // longer than the target.
      a["status"] = f.LowerBoundAt(f.max_crossbars) > z ? "unreachable" : "not found";
    }
    return a;
  };
  if (spec.min_crossbars_for_speedup) {
    j["min_crossbars_for_speedup"] = fewest(cpu_only_us / *spec.min_crossbars_for_speedup);
    j["min_crossbars_for_speedup"]["speedup"] = *spec.min_crossbars_for_speedup;
  }
  if (spec.min_crossbars_for_makespan_us) j["min_crossbars_for_makespan"] = fewest(*spec.min_crossbars_for_makespan_us);
  if (spec.saturation && !shown.empty()) {
    // The last breakpoint: no larger budget improved. Proven when its step
    // is optimal to the end of the range and the budget before it is
    // proven slower.
    const FrontierStep& last = shown.back();
    // Below every operator's crossbars at once a larger budget might still help.
    const bool whole = f.max_crossbars >= f.crossbars_for_all;
    const bool proven = whole && last.optimal && proven_first(last.crossbars, last.makespan_us);
    j["saturation"] = {{"crossbars", last.crossbars},
                       {ValueKey(spec), last.makespan_us},
                       {"speedup", NumOrNull(speedup(last.makespan_us))},
                       {"status", proven ? "optimal" : "feasible"},
                       {"range_covers_all", whole}};
  } else if (spec.saturation) {
    j["saturation"] = nullptr;
  }

}

// Each breakpoint's schedule at its own budget, through the same writer
// and validator as `partition`.
Status AddBreakpointFiles(const PlanSubject& subject, const Problem& problem, int pu, const CrossbarFrontier& f,
                          const std::vector<FrontierStep>& shown, FrontierOutput* out) {
  const std::string pu_name = subject.costs->pu(pu).name;
  for (size_t i = 0; i < shown.size(); ++i) {
    const FrontierStep& s = shown[i];
    Platform at = *subject.platform;
    HETPLAN_RETURN_IF_ERROR(ApplyOverride(at, fmt::format("{}.crossbars={}", pu_name, s.crossbars)));
    CostModel c = *subject.costs;
    c.mutable_pu(pu).capacity = s.crossbars;
    Problem pr = problem;
    pr.costs = &c;
    SolveResult r;
    r.solver = "exact";
    r.formulation = "frontier";
    r.status = s.optimal ? SolveStatus::kOptimal : SolveStatus::kFeasible;
    r.termination = s.optimal ? Termination::kProved : f.termination;
    r.schedule = s.schedule;
    r.objective = s.makespan_us;
    r.bound = s.lower_bound_us;
    r.gap = s.makespan_us > 0 ? (s.makespan_us - s.lower_bound_us) / s.makespan_us : 0.0;
    r.seconds = f.seconds;
    r.exact = f.stats;
    r.notes.push_back(fmt::format("breakpoint of the crossbar frontier of PU {} (hetplan frontier)", pu_name));
    HETPLAN_ASSIGN_OR_RETURN(nlohmann::json file,
                             ValidatedScheduleFile(subject, at, pr, r, fmt::format("at {} crossbars", s.crossbars)));
    out->files.push_back(
        {fmt::format("crossbars_{}.json", s.crossbars), fmt::format("/breakpoints/{}", i), std::move(file)});
  }
  return Status::Ok();
}

}  // namespace

Result<FrontierOutput> PlanFrontier(const PlanSubject& subject, const FrontierSpec& spec) {
  const CostModel& costs = *subject.costs;
  const Platform& platform = *subject.platform;
  HETPLAN_ASSIGN_OR_RETURN(const int pu, SweptPu(costs, platform, spec.pu));
  HETPLAN_RETURN_IF_ERROR(CheckFrontierSpec(spec));
  HETPLAN_RETURN_IF_ERROR(ValidateSolveOptions(spec.options));
  const Problem problem{&subject.model->graph, &costs, spec.objective, std::nullopt};
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
  // First, so that a platform without powers is refused before the search.
  if (spec.pareto) {
    HETPLAN_RETURN_IF_ERROR(spec.objective == Objective::kThroughput
                                ? AddStreamFront(subject, problem, pu, spec, out.cpu_only_us, &out)
                                : AddParetoFront(subject, problem, pu, spec, out.cpu_only_us, &out));
  }
  HETPLAN_ASSIGN_OR_RETURN(out.frontier, SolveCrossbarFrontier(problem, pu, spec.options, spec.max_crossbars));
  const CrossbarFrontier& f = out.frontier;
  const std::string pu_name = costs.pu(pu).name;
  auto speedup = [&](double makespan) { return makespan > 0 ? out.cpu_only_us / makespan : kInf; };
  if (spec.min_crossbars > f.max_crossbars && !f.steps.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 "--crossbars {}: starts past saturation: every operator fits in {} crossbars of {}, so every budget "
                 "from {} on has {} {:.3f} µs; give a smallest budget ≤ {}",
                 spec.min_crossbars, f.max_crossbars, pu_name, f.steps.back().crossbars,
                 spec.objective == Objective::kThroughput ? "II" : "makespan", f.steps.back().makespan_us,
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
  j["objective"] = ToString(spec.objective);
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
  const std::string key = ValueKey(spec);
  const bool stream = spec.objective == Objective::kThroughput;
  out.csv = fmt::format("crossbars,{},speedup,status,lower_bound_us{}\n", key, stream ? ",inputs_per_s,latency_us" : "");
  for (const FrontierStep& s : shown) {
    nlohmann::json bp = {{"crossbars", s.crossbars},
                         {key, s.makespan_us},
                         {"speedup", NumOrNull(speedup(s.makespan_us))},
                         {"status", StepStatus(s)},
                         {"lower_bound_us", s.lower_bound_us}};
    out.csv += fmt::format("{},{},{},{},{}", s.crossbars, s.makespan_us, speedup(s.makespan_us), StepStatus(s),
                           s.lower_bound_us);
    if (stream) {
      // One input's latency in the stream (the cyclic schedule's, heuristic).
      bp["inputs_per_s"] = NumOrNull(s.makespan_us > 0 ? 1e6 / s.makespan_us : kInf);
      bp["latency_us"] = s.schedule.makespan_us;
      out.csv += fmt::format(",{},{}", s.makespan_us > 0 ? 1e6 / s.makespan_us : kInf, s.schedule.makespan_us);
    }
    out.csv += "\n";
    bps.push_back(std::move(bp));
  }
  // The proven bounds between breakpoints, where the search did not finish.
  nlohmann::json& bounds = j["lower_bounds"] = nlohmann::json::array();
  if (!f.complete) {
    for (const FrontierBound& b : f.bounds) {
      if (b.crossbars > f.max_crossbars) break;
      bounds.push_back({{"crossbars", b.crossbars}, {"lower_bound_us", NumOrNull(b.lower_bound_us)}});
    }
  }

  AddInverseQuestions(f, shown, spec, out.cpu_only_us, j);

  HETPLAN_RETURN_IF_ERROR(AddBreakpointFiles(subject, problem, pu, f, shown, &out));
  HETPLAN_ASSIGN_OR_RETURN(out.read, ParseFrontierJson(out.json, "frontier.json"));
  return out;
}

namespace {

// One probe of the MVM-latency question: the optimal plan at latency t.
struct MvmProbe {
  double t_ns = 0;
  double makespan_us = kInf;  // of the best schedule found (inf: none)
  double bound_us = 0;        // proven lower bound on the optimum
  double cpu_only_us = 0;
  bool optimal = false;
};

// The largest MVM latency of PU `pu` at which the best plan at the
// platform's budget is still `x` times faster than CPU-only. The optimum is
// nondecreasing in the MVM latency (every CIM cost is), so bisection over it
// is exact up to the tolerance; a probe "gains" when a schedule reaches the
// target and is proven not to when its bound exceeds it.
Result<nlohmann::json> MaxMvmLatency(const LoadedModel& model, const Platform& platform, const CostInputs& ci,
                                     TableCache* cache, const std::string& pu, double x, const SolveOptions& options,
                                     const std::function<void(const std::string&)>& progress) {
  constexpr double kTolerance = 1e-3;  // relative width of the final bracket
  constexpr double kMaxNs = 1e9, kMinNs = 1e-3;
  const int p = platform.FindPu(pu);
  const double t0 = platform.pus[p].cim.MvmLatencyNs();
  const auto start = std::chrono::steady_clock::now();
  auto left = [&] {
    return options.time_limit_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int probes = 0;
  auto probe = [&](double t) -> Result<MvmProbe> {
    Platform at = platform;
    HETPLAN_RETURN_IF_ERROR(ApplyOverride(at, fmt::format("{}.mvm_latency_ns={}", pu, t)));
    HETPLAN_ASSIGN_OR_RETURN(PreparedCosts pc, PrepareCosts(model, at, ci, cache));
    const Problem pr{&model.graph, &pc.costs, Objective::kLatency, std::nullopt};
    MvmProbe m;
    m.t_ns = t;
    m.cpu_only_us = ComputeReferences(pr).values.at("cpu_only_us");
    SolveOptions o = options;
    o.time_limit_s = std::max(0.0, left());
    HETPLAN_ASSIGN_OR_RETURN(SolveResult r, Solve("exact", pr, o));
    ++probes;
    if (r.schedule) m.makespan_us = r.schedule->makespan_us;
    m.bound_us = std::isfinite(r.bound) ? r.bound : 0.0;
    m.optimal = r.status == SolveStatus::kOptimal;
    if (progress) {
      progress(fmt::format("mvm latency {} ns: {:.2f}x ({})", t, m.cpu_only_us / m.makespan_us,
                           m.optimal ? "optimal" : ToString(r.status)));
    }
    return m;
  };
  auto gains = [&](const MvmProbe& m) { return m.makespan_us * x <= m.cpu_only_us * (1 + 1e-12); };
  auto proven_not = [&](const MvmProbe& m) { return m.bound_us * x > m.cpu_only_us * (1 + 1e-12); };

  HETPLAN_ASSIGN_OR_RETURN(MvmProbe first, probe(t0));
  std::optional<MvmProbe> lo, hi;  // lo gains, hi does not
  (gains(first) ? lo : hi) = first;
  std::string status;
  // Bracket: double up from a gaining latency, halve down from a losing one.
  while (lo && !hi && lo->t_ns < kMaxNs && left() > 0) {
    HETPLAN_ASSIGN_OR_RETURN(MvmProbe m, probe(std::min(kMaxNs, lo->t_ns * 2)));
    (gains(m) ? lo : hi) = m;
  }
  while (hi && !lo && hi->t_ns > kMinNs && left() > 0) {
    HETPLAN_ASSIGN_OR_RETURN(MvmProbe m, probe(std::max(kMinNs, hi->t_ns / 2)));
    (gains(m) ? lo : hi) = m;
  }
  while (lo && hi && hi->t_ns - lo->t_ns > kTolerance * lo->t_ns && left() > 0) {
    HETPLAN_ASSIGN_OR_RETURN(MvmProbe m, probe((lo->t_ns + hi->t_ns) / 2));
    (gains(m) ? lo : hi) = m;
  }
  const bool bracketed = lo && hi && hi->t_ns - lo->t_ns <= kTolerance * lo->t_ns;
  if (lo && !hi) {
    status = lo->t_ns >= kMaxNs ? "unbounded" : "feasible";
  } else if (hi && !lo) {
    status = hi->t_ns <= kMinNs && proven_not(*hi) ? "unreachable" : "not found";
  } else {
    // The answer is proven when the latency above it is proven not to gain
    // (the one below gains by its schedule).
    status = bracketed && proven_not(*hi) ? "optimal" : "feasible";
  }
  auto speedup = [](const MvmProbe& m) { return NumOrNull(m.cpu_only_us / m.makespan_us); };
  nlohmann::json a = {{"speedup", x},
                      {"crossbars", platform.pus[p].cim.crossbars},
                      {"status", status},
                      {"relative_tolerance", kTolerance},
                      {"probes", probes}};
  a["mvm_latency_ns"] = lo ? nlohmann::json(lo->t_ns) : nlohmann::json();
  a["speedup_at"] = lo ? speedup(*lo) : nlohmann::json();
  a["not_reached_ns"] = hi ? nlohmann::json(hi->t_ns) : nlohmann::json();
  a["speedup_above"] = hi ? speedup(*hi) : nlohmann::json();
  return a;
}

// A --sweep value as JSON: a number where it reads as one.
nlohmann::json AxisValue(const std::string& v) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (!v.empty() && end == v.c_str() + v.size() && std::isfinite(d)) {
    if (d == std::floor(d) && std::fabs(d) < 1e15) return static_cast<int64_t>(d);
    return d;
  }
  return v;
}

}  // namespace

Result<FrontierOutput> PlanFrontiers(const PlanInputs& in, const FrontierSpec& spec,
                                     const std::function<void(const std::string&)>& progress) {
  HETPLAN_ASSIGN_OR_RETURN(Platform platform, LoadPlatform(in.platform, in.overrides));
  std::vector<std::string> values = {""};
  if (spec.axis) {
    const FrontierAxis& ax = *spec.axis;
    if (ax.values.empty()) {
      return Error(ErrorCode::kInvalidArgument, "--sweep {}: no values; write PU.KEY=V1,V2,…", ax.key);
    }
    values = ax.values;
    for (const std::string& v : values) {
      Platform probe = platform;
      if (Status st = ApplyOverride(probe, ax.key + "=" + v); !st.ok()) {
        return Error(ErrorCode::kInvalidArgument, "--sweep {}={}: {}", ax.key, v, st.message());
      }
    }
    if (ax.key.size() > 10 && ax.key.substr(ax.key.size() - 10) == ".crossbars") {
      return Error(ErrorCode::kInvalidArgument,
                   "--sweep {}: the crossbars are the frontier's own axis; sweep another field, e.g. "
                   "cim.mvm_latency_ns",
                   ax.key);
    }
  }
  if (spec.max_mvm_latency_for_speedup) {
    if (!(*spec.max_mvm_latency_for_speedup > 0)) {
      return Error(ErrorCode::kInvalidArgument, "--max-mvm-latency-for-speedup {}: a speedup is a factor > 0",
                   *spec.max_mvm_latency_for_speedup);
    }
    if (spec.axis && spec.axis->key.find(".mvm_latency_ns") != std::string::npos) {
      return Error(ErrorCode::kInvalidArgument,
                   "--max-mvm-latency-for-speedup searches the MVM latency itself; do not --sweep {} with it",
                   spec.axis->key);
    }
  }
  HETPLAN_ASSIGN_OR_RETURN(LoadedModel model, LoadOnnxModel(in.model_path, in.import));
  TableCache cache;
  FrontierSpec one = spec;
  one.axis.reset();
  one.max_mvm_latency_for_speedup.reset();
  std::vector<FrontierOutput> curves;
  for (const std::string& v : values) {
    Platform at = platform;
    if (spec.axis) HETPLAN_RETURN_IF_ERROR(ApplyOverride(at, spec.axis->key + "=" + v));
    HETPLAN_ASSIGN_OR_RETURN(PreparedCosts pc, PrepareCosts(model, at, in.costs, &cache));
    const PlanSubject subject{&model, &at, &pc.costs, &pc.notes};
    if (progress) progress(spec.axis ? fmt::format("curve {}={}", spec.axis->key, v) : std::string("curve"));
    HETPLAN_ASSIGN_OR_RETURN(FrontierOutput f, PlanFrontier(subject, one));
    if (spec.max_mvm_latency_for_speedup) {
      const std::string pu = f.json["pu"].get<std::string>();
      const int p = at.FindPu(pu);
      if (at.pus[p].cost_source != CostSource::kCim) {
        return Error(ErrorCode::kInvalidArgument,
                     "{}: --max-mvm-latency-for-speedup: PU {} has no MVM latency (its costs are not cost: cim)",
                     at.source, pu);
      }
      HETPLAN_ASSIGN_OR_RETURN(f.json["max_mvm_latency_for_speedup"],
                               MaxMvmLatency(model, at, in.costs, &cache, pu, *spec.max_mvm_latency_for_speedup,
                                             spec.options, progress));
      HETPLAN_ASSIGN_OR_RETURN(f.read, ParseFrontierJson(f.json, "frontier.json"));
    }
    curves.push_back(std::move(f));
  }
  if (!spec.axis) return std::move(curves.front());

  // One file: what the curves share on top, each curve's own fields under
  // `curves`, its schedule files in a folder per value.
  FrontierOutput out;
  out.frontier = curves.front().frontier;
  out.cpu_only_us = curves.front().cpu_only_us;
  nlohmann::json& j = out.json;
  const nlohmann::json& first = curves.front().json;
  for (const char* k : {"format", "version", "model", "pu", "objective"}) j[k] = first[k];
  j["platform"] = {{"name", platform.name}, {"source", platform.source}, {"overrides", platform.overrides}};
  j["axis"] = {{"key", spec.axis->key}, {"values", nlohmann::json::array()}};
  j["curves"] = nlohmann::json::array();
  out.csv = spec.axis->key + ",crossbars,makespan_us,speedup,status,lower_bound_us\n";
  for (size_t c = 0; c < curves.size(); ++c) {
    nlohmann::json curve = std::move(curves[c].json);
    for (const char* k : {"format", "version", "model", "pu", "objective"}) curve.erase(k);
    curve["value"] = AxisValue(values[c]);
    j["axis"]["values"].push_back(curve["value"]);
    j["curves"].push_back(std::move(curve));
    // The CSV: each curve's rows with the value in front.
    const std::string& csv = curves[c].csv;
    for (size_t pos = csv.find('\n') + 1; pos < csv.size();) {
      const size_t end = csv.find('\n', pos);
      out.csv += values[c] + "," + csv.substr(pos, end - pos) + "\n";
      pos = end + 1;
    }
    for (FrontierScheduleFile& file : curves[c].files) {
      file.name = fmt::format("{}={}/{}", spec.axis->key, values[c], file.name);
      file.pointer = fmt::format("/curves/{}{}", c, file.pointer);
      out.files.push_back(std::move(file));
    }
  }
  HETPLAN_ASSIGN_OR_RETURN(out.read, ParseFrontierJson(out.json, "frontier.json"));
  return out;
}

}  // namespace hetplan
