// The plan → split → run → refit loop (app/refine.h).
#include "hetplan/app/refine.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "hetplan/cost/build.h"
#include "hetplan/deploy/manifest.h"
#include "hetplan/deploy/split.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/solve/list_schedule.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

// scale only, the boundary held at b: Σ x (y − b f) / Σ x².
double ScaleGiven(const std::vector<SegmentSample>& s, double b) {
  double xy = 0, xx = 0;
  for (const SegmentSample& p : s) {
    xy += p.predicted_us * (p.run_us - (p.entered ? b : 0.0));
    xx += p.predicted_us * p.predicted_us;
  }
  return xx > 0 ? xy / xx : 1.0;
}

// A folder that is removed when the loop ends, unless the caller named one.
class WorkDir {
 public:
  explicit WorkDir(const std::string& dir) : keep_(!dir.empty()) {
    path_ = keep_ ? fs::path(dir)
                  : fs::temp_directory_path() /
                        fmt::format("hetplan_refine_{}_{}", static_cast<long>(getpid()),
                                    std::chrono::steady_clock::now().time_since_epoch().count());
  }
  ~WorkDir() {
    if (keep_) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  std::string Round(int r) const { return (path_ / fmt::format("round-{}", r)).string(); }

 private:
  bool keep_;
  fs::path path_;
};

nlohmann::json FitJson(const SegmentFit& f) {
  return {{"scale", f.scale}, {"boundary_us", f.boundary_us}, {"samples", f.samples},
          {"boundary_fitted", f.boundary_fitted}};
}

}  // namespace

SegmentFit FitSegments(const std::vector<SegmentSample>& samples, double prior_boundary_us) {
  std::vector<SegmentSample> s;
  for (const SegmentSample& p : samples) {
    if (p.predicted_us > 0 && std::isfinite(p.run_us)) s.push_back(p);
  }
  SegmentFit fit;
  fit.samples = static_cast<int>(s.size());
  fit.boundary_us = std::max(0.0, prior_boundary_us);
  if (s.empty()) return fit;
  // Normal equations of min Σ (y − a x − b f)².
  double xx = 0, xf = 0, ff = 0, xy = 0, fy = 0;
  for (const SegmentSample& p : s) {
    const double f = p.entered ? 1.0 : 0.0;
    xx += p.predicted_us * p.predicted_us;
    xf += p.predicted_us * f;
    ff += f * f;
    xy += p.predicted_us * p.run_us;
    fy += f * p.run_us;
  }
  const double det = xx * ff - xf * xf;
  if (ff > 0 && det > 1e-9 * xx * ff) {
    const double a = (xy * ff - xf * fy) / det;
    const double b = (xx * fy - xf * xy) / det;
    if (b >= 0 && a > 0) {
      fit.scale = a;
      fit.boundary_us = b;
      fit.boundary_fitted = true;
      return fit;
    }
    if (b < 0) {  // no measurable boundary: 0, and the scale alone
      fit.boundary_us = 0;
      fit.boundary_fitted = true;
    }
  }
  fit.scale = ScaleGiven(s, fit.boundary_us);
  if (!(fit.scale > 0)) fit.scale = 1;  // a segment measured at 0 µs: keep the model
  return fit;
}

CostModel ApplySegmentFits(const CostModel& base, const std::map<int, SegmentFit>& fits) {
  CostModel c = base;
  for (const auto& [p, f] : fits) {
    for (int v = 0; v < c.num_ops(); ++v) {
      if (c.supported(v, p)) c.set_latency(v, p, base.latency_us(v, p) * f.scale);
    }
    c.ChargeBoundary(p, f.boundary_us - base.boundary_us(p));
  }
  return c;
}

namespace {

// The PUs whose costs are measurements of this machine: only those are
// refitted to what runs here. A roofline CPU models another chip; its
// segments run here functionally, but their times say nothing about it.
Result<std::vector<bool>> FittablePus(const PreparedProblem& pp) {
  const CostModel& base = pp.costs;
  std::vector<bool> fittable(static_cast<size_t>(base.num_pus()), false);
  std::string modelled;
  for (int p = 0; p < base.num_pus(); ++p) {
    const int i = pp.platform.FindPu(base.pu(p).name);
    if (i < 0) continue;
    const ProcessingUnit& pu = pp.platform.pus[static_cast<size_t>(i)];
    fittable[static_cast<size_t>(p)] = TableCosted(pu);
    if (!TableCosted(pu)) {
      modelled += fmt::format("{}{}: {}", modelled.empty() ? "" : ", ", pu.name, ToString(pu.cost_source));
    }
  }
  if (std::find(fittable.begin(), fittable.end(), true) == fittable.end()) {
    return Error(ErrorCode::kUnsupported,
                 "--refine: platform {} has no PU whose costs are measured on this machine ({}); refine calibrates "
                 "measured costs: give a PU cost: profile or cost: table",
                 pp.platform.name, modelled);
  }
  return fittable;
}

// The samples of one round: each measured segment against the unrefined
// costs of its operators, per fittable PU.
void AddSamples(const CostModel& base, const std::vector<bool>& fittable, const RunReport& report,
                const Manifest& manifest, std::map<int, std::vector<SegmentSample>>& samples) {
  for (size_t s = 0; s < report.segments.size() && s < manifest.segments.size(); ++s) {
    const SegmentRun& sr = report.segments[s];
    const ManifestSegment& seg = manifest.segments[s];
    if (!sr.measured) continue;
    const int p = base.FindPu(seg.device);
    if (p < 0 || !fittable[static_cast<size_t>(p)]) continue;
    SegmentSample x;
    for (int v : seg.operators) x.predicted_us += base.latency_us(v, p);
    x.entered = sr.boundary_in;
    x.run_us = sr.run_us;
    samples[p].push_back(x);
  }
}

// Every round, as the schedule file's refine.rounds.
nlohmann::json HistoryJson(const std::vector<RefineRound>& rounds) {
  nlohmann::json history = nlohmann::json::array();
  for (const RefineRound& round : rounds) {
    nlohmann::json fitted = nlohmann::json::object();
    for (const auto& [name, f] : round.fits) fitted[name] = FitJson(f);
    history.push_back({{"round", round.round},
                       {"status", round.status},
                       {"makespan_us", round.makespan_us},
                       {"segments", round.segments},
                       {"predicted_host_us", round.predicted_host_us},
                       {"measured_host_us", round.measured_host_us},
                       {"host_error", round.host_error},
                       {"calibrated_makespan_us", round.calibrated_makespan_us},
                       {"fits", fitted}});
  }
  return history;
}

}  // namespace

Result<RefineOutput> Refine(const PreparedProblem& pp, const PlanSpec& spec, const RefineOptions& o) {
  if (o.rounds < 0 || o.rounds > 100) {
    return Error(ErrorCode::kInvalidArgument, "--refine {}: give 0 to 100 re-plans", o.rounds);
  }
  if (!(o.tolerance >= 0) || !std::isfinite(o.tolerance)) {
    return Error(ErrorCode::kInvalidArgument, "--refine-tolerance {}: give a fraction ≥ 0, e.g. 0.05", o.tolerance);
  }
  if (spec.objective != Objective::kLatency) {
    return Error(ErrorCode::kUnsupported,
                 "--refine: calibrates latencies against measured runs; plan with --objective latency");
  }
  const CostModel& base = pp.costs;
  HETPLAN_ASSIGN_OR_RETURN(const std::vector<bool> fittable, FittablePus(pp));
  WorkDir work(o.work_dir);
  RunOptions run = o.run;
  if (run.model_path.empty()) run.model_path = pp.model.path;

  RefineOutput out;
  std::map<int, std::vector<SegmentSample>> samples;  // per measured PU
  std::map<int, SegmentFit> fits;
  std::vector<PlanOutput> plans;
  CostModel costs = base;
  for (int r = 0; r <= o.rounds; ++r) {
    PlanSubject subject{&pp.model, &pp.platform, &costs, &pp.notes};
    HETPLAN_ASSIGN_OR_RETURN(PlanOutput plan, Plan(subject, spec));
    if (plan.schedule.is_null()) {
      return Error(plan.result.status == SolveStatus::kInfeasible ? ErrorCode::kInfeasible : ErrorCode::kLimitExceeded,
                   "--refine round {}: {} found no schedule ({}); nothing to measure; give it more --time-limit", r,
                   plan.result.solver, ToString(plan.result.status));
    }
    const std::string dir = work.Round(r);
    const std::string label = fmt::format("refine round {}", r);
    HETPLAN_ASSIGN_OR_RETURN(PlanFile file, ReadPlanFile(plan.schedule, label));
    SplitOptions split_options;
    split_options.schedule_violations = static_cast<int>(plan.validation.violations.size());
    auto split = SplitModel(pp.model, file, label, split_options);
    if (!split.ok()) return Error(split.status().code(), "--refine round {}: {}", r, split.status().message());
    HETPLAN_RETURN_IF_ERROR(WriteSplit(*split, dir));
    auto report = RunDeployment(dir, run);
    if (!report.ok()) return Error(report.status().code(), "--refine round {}: {}", r, report.status().message());
    HETPLAN_ASSIGN_OR_RETURN(Manifest manifest, LoadManifest(dir));

    RefineRound round;
    round.round = r;
    round.plan = std::move(file);
    round.status = ToString(plan.result.status);
    round.makespan_us = plan.result.schedule->makespan_us;
    round.segments = static_cast<int>(report->segments.size());
    round.predicted_host_us = report->predicted_host_us;
    round.measured_host_us = report->measured_host_us;
    round.host_error = report->predicted_host_us > 0 ? report->measured_host_us / report->predicted_host_us - 1 : 0;
    for (const auto& [p, f] : fits) round.fits[costs.pu(p).name] = f;
    if (o.progress) o.progress(r, round.predicted_host_us, round.measured_host_us);

    AddSamples(base, fittable, *report, manifest, samples);
    out.rounds.push_back(std::move(round));
    plans.push_back(std::move(plan));
    if (std::abs(out.rounds.back().host_error) <= o.tolerance) {
      out.converged = true;
      out.stopped = fmt::format("host prediction within ±{:.1f} % of the measurement after {} round{}",
                                100 * o.tolerance, r + 1, r ? "s" : "");
      break;
    }
    if (r == o.rounds) {
      out.stopped = fmt::format("{} re-plan{} spent; the last host prediction is {:+.1f} % off", o.rounds,
                                o.rounds == 1 ? "" : "s", 100 * out.rounds.back().host_error);
      break;
    }
    fits.clear();
    for (const auto& [p, list] : samples) fits[p] = FitSegments(list, base.boundary_us(p));
    costs = ApplySegmentFits(base, fits);
  }

  // Every round's plan on one calibration (all samples), in its own order:
  // the comparison that picks the plan to keep.
  std::map<int, SegmentFit> final_fits;
  for (const auto& [p, list] : samples) final_fits[p] = FitSegments(list, base.boundary_us(p));
  const CostModel calibrated = ApplySegmentFits(base, final_fits);
  const Problem problem{&pp.model.graph, &calibrated, Objective::kLatency, std::nullopt};
  for (size_t r = 0; r < out.rounds.size(); ++r) {
    std::vector<int> device, order;
    ScheduleOrder(*plans[r].result.schedule, &device, &order);
    out.rounds[r].calibrated_makespan_us = ListSchedule(problem, device, &order).makespan_us;
  }
  for (size_t r = 1; r < out.rounds.size(); ++r) {
    if (out.rounds[r].calibrated_makespan_us < out.rounds[static_cast<size_t>(out.best)].calibrated_makespan_us) {
      out.best = static_cast<int>(r);
    }
  }

  out.plan = std::move(plans[static_cast<size_t>(out.best)]);
  nlohmann::json history = HistoryJson(out.rounds);
  nlohmann::json calibration = nlohmann::json::object();
  for (const auto& [p, f] : final_fits) calibration[base.pu(p).name] = FitJson(f);
  out.plan.schedule["refine"] = {{"rounds", history},
                                 {"kept_round", out.best},
                                 {"converged", out.converged},
                                 {"tolerance", o.tolerance},
                                 {"stopped", out.stopped},
                                 {"calibration", calibration},
                                 {"runs", run.runs},
                                 {"warmup", run.warmup}};
  return out;
}

}  // namespace hetplan
