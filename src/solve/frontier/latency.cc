// The crossbar frontier (frontier.h): one run of the exact search with the
// swept PU's capacity raised to the largest budget, its per-usage curve read
// off the final states of the DP over segments.
#include "hetplan/plan/deadline.h"
#include "hetplan/solve/frontier.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <iterator>

#include "hetplan/solve/list_schedule.h"
#include "hetplan/solve/solver.h"
#include "hetplan/util/limits.h"
#include "solve/exact/search.h"
#include "solve/frontier/throughput.h"
#include "solve/mip/model.h"

namespace hetplan {
namespace {


// What both objectives' frontiers refuse: see SolveCrossbarFrontier.
Status CheckSweep(const Problem& problem, int pu, std::optional<int64_t> max_crossbars) {
  const CostModel& given = *problem.costs;
  if (problem.objective == Objective::kEnergy) {
    return Error(ErrorCode::kInvalidArgument,
                 "the crossbar frontier minimises the makespan or a stream's II; use the latency or the throughput "
                 "objective");
  }
  if (problem.num_requests() != 1) {
    return Error(ErrorCode::kInvalidArgument, "the crossbar frontier plans one request; drop the second model");
  }
  if (pu < 0 || pu >= given.num_pus() || !given.pu(pu).spatial) {
    return Error(ErrorCode::kInvalidArgument,
                 "PU {} has no crossbar capacity to sweep; choose a spatial PU (execution: spatial)",
                 pu >= 0 && pu < given.num_pus() ? "'" + given.pu(pu).name + "'" : std::to_string(pu));
  }
  for (const PuInfo& shared : given.pus()) {
    if (shared.reprogram) {
      return Error(ErrorCode::kUnsupported,
                   "the crossbar frontier does not model PU '{}''s reprogramming; plan each budget with --solver exact "
                   "and --set {}.crossbars=N, or remove {}.reprogram",
                   shared.name, shared.name, shared.name);
    }
    if (shared.adc_pool == 0) continue;
    return Error(ErrorCode::kUnsupported,
                 "the crossbar frontier does not model PU '{}''s shared ADC pool (shared_adcs: {}); plan each budget "
                 "with --solver exact and --set {}.crossbars=N, or remove {}.shared_adcs",
                 shared.name, shared.adc_pool, shared.name, shared.name);
  }
  if (max_crossbars && *max_crossbars < 0) {
    return Error(ErrorCode::kInvalidArgument, "the largest crossbar budget is {}; budgets are ≥ 0", *max_crossbars);
  }
  return Status::Ok();
}

}  // namespace

const FrontierStep* CrossbarFrontier::StepAt(int64_t b) const {
  const FrontierStep* at = nullptr;
  for (const FrontierStep& s : steps) {
    if (s.crossbars > b) break;
    at = &s;
  }
  return at;
}

std::optional<double> CrossbarFrontier::MakespanAt(int64_t b) const {
  const FrontierStep* s = StepAt(b);
  if (s == nullptr) return std::nullopt;
  return s->makespan_us;
}

double CrossbarFrontier::LowerBoundAt(int64_t b) const {
  double v = kInf;
  for (const FrontierBound& s : bounds) {
    if (s.crossbars > b) break;
    v = s.lower_bound_us;
  }
  return v;
}

Result<CrossbarFrontier> SolveCrossbarFrontier(const Problem& problem, int pu, const SolveOptions& options,
                                               std::optional<int64_t> max_crossbars) {
  const Deadline deadline = Deadline::In(options.time_limit_s);
  HETPLAN_RETURN_IF_ERROR(ValidateProblem(problem));
  HETPLAN_RETURN_IF_ERROR(ValidateSolveOptions(options));
  const CostModel& given = *problem.costs;
  HETPLAN_RETURN_IF_ERROR(CheckSweep(problem, pu, max_crossbars));
  if (problem.objective == Objective::kThroughput) {
    return SolveThroughputFrontier(problem, pu, options, max_crossbars, deadline);
  }
  CrossbarFrontier f;
  f.pu = pu;
  for (int v = 0; v < given.num_ops(); ++v) {
    if (given.supported(v, pu)) f.crossbars_for_all += given.crossbars(v, pu);
  }
  f.max_crossbars = max_crossbars.value_or(f.crossbars_for_all);
  // Budgets past every operator's crossbars at once are all the same: the
  // search runs at no more than that.
  CostModel costs = given;
  costs.mutable_pu(pu).capacity = std::min(f.max_crossbars, f.crossbars_for_all);
  Problem swept = problem;
  swept.costs = &costs;

  if (problem.graph->size() == 0) {
    f.steps.push_back(FrontierStep{0, 0.0, 0.0, true, Schedule{}});
    f.bounds.push_back(FrontierBound{0, 0.0});
    f.complete = true;
    f.seconds = deadline.ElapsedSeconds();
    return f;
  }
  const std::vector<std::vector<int>> cand = mip_internal::Candidates(costs);
  const int threads = ThreadCount(options);
  auto search = [&](int64_t node_limit) {
    exact_internal::SearchOutcome out = exact_internal::SolveLatencyBySearch(
        swept, cand, deadline.at(), options.relative_gap, node_limit, options.interrupt, threads, pu);
    f.stats.segments = out.stats.segments;
    f.stats.largest_segment = out.stats.largest_segment;
    f.stats.searches += out.stats.searches;
    f.stats.nodes += out.stats.nodes;
    f.stats.node_limit_reached = f.stats.node_limit_reached || out.stats.budget_exhausted;
    return out;
  };
  exact_internal::SearchOutcome out = search(options.exact.node_limit);
  // The node budget spent with time left: the search resumes without it
  // (no MIP fallback here: the paper's MIP answers one budget per solve).
  if (out.stats.budget_exhausted && !deadline.Expired() && !out.stats.interrupted) out = search(0);

  f.complete = out.complete;
  f.termination = out.complete                 ? Termination::kProved
                  : out.stats.interrupted      ? Termination::kInterrupted
                  : out.stats.budget_exhausted ? Termination::kNodeLimit
                                               : Termination::kTimeLimit;
  if (out.infeasible) f.termination = Termination::kProvedInfeasible;
  for (const auto& b : out.lower_curve) f.bounds.push_back(FrontierBound{b.usage, b.bound});
  for (size_t i = 0; i < out.curve.size(); ++i) {
    FrontierStep step;
    step.crossbars = out.curve[i].usage;
    step.schedule = out.curve[i].schedule;
    step.makespan_us = step.schedule.makespan_us;
    f.steps.push_back(std::move(step));
  }
  // A schedule on one serial PU uses no crossbars, so it holds at every
  // budget: where the search stopped before it found one as fast at the
  // small budgets (a complete search always has), it is the curve's first
  // step, and the steps it beats go.
  std::optional<Schedule> serial;
  for (int p = 0; p < costs.num_pus(); ++p) {
    if (costs.pu(p).spatial) continue;
    std::optional<Schedule> s = SinglePuSchedule(swept, p);
    if (s && (!serial || s->makespan_us < serial->makespan_us)) serial = std::move(s);
  }
  if (serial && (f.steps.empty() || f.steps.front().crossbars > 0 ||
                 f.steps.front().makespan_us > serial->makespan_us * (1 + 1e-12))) {
    std::vector<FrontierStep> steps;
    FrontierStep zero;
    zero.crossbars = 0;
    zero.makespan_us = serial->makespan_us;
    zero.schedule = std::move(*serial);
    steps.push_back(std::move(zero));
    for (FrontierStep& s : f.steps) {
      if (s.makespan_us < steps.front().makespan_us * (1 - 1e-12)) steps.push_back(std::move(s));
    }
    f.steps = std::move(steps);
  }
  // Each step's bound at its last budget (the weakest of the step); the
  // last step runs to max_crossbars.
  for (size_t i = 0; i < f.steps.size(); ++i) {
    FrontierStep& s = f.steps[i];
    const int64_t last = i + 1 < f.steps.size() ? f.steps[i + 1].crossbars - 1 : f.max_crossbars;
    s.lower_bound_us = std::min(f.LowerBoundAt(last), s.makespan_us);
    s.optimal = s.makespan_us - s.lower_bound_us <= options.relative_gap * std::max(s.makespan_us, 1e-12) + 1e-9;
  }
  f.seconds = deadline.ElapsedSeconds();
  return f;
}

}  // namespace hetplan

namespace hetplan {

Result<EnergyFront> SolveLatencyEnergyFront(const Problem& problem, const SolveOptions& options, int max_points,
                                           const std::string& method) {
  const Deadline deadline = Deadline::In(options.time_limit_s);
  HETPLAN_RETURN_IF_ERROR(ValidateProblem(problem));
  HETPLAN_RETURN_IF_ERROR(ValidateSolveOptions(options));
  if (problem.num_requests() != 1) {
    return Error(ErrorCode::kInvalidArgument, "the latency–energy front plans one request; drop the second model");
  }
  if (max_points < 1) {
    return Error(ErrorCode::kInvalidArgument, "--pareto-points {}: a front has at least one point", max_points);
  }
  const CostModel& c = *problem.costs;
  for (int p = 0; p < c.num_pus(); ++p) {
    bool runs_something = false;
    for (int v = 0; v < c.num_ops() && !runs_something; ++v) runs_something = c.supported(v, p);
    if (runs_something && !c.pu(p).power_w) {
      return Error(ErrorCode::kInvalidArgument,
                   "PU '{}' has no power_w: the latency–energy front needs the power of every PU that runs an "
                   "operator; add power_w to the platform or pass --set {}.power_w=W",
                   c.pu(p).name, c.pu(p).name);
    }
  }
  EnergyFront front;
  auto left = [&] { return deadline.SecondsLeft(); };
  // Each solve gets half the time left, so that one hard cap (near the
  // latency optimum the MIP's bound closes slowly) does not take the whole
  // walk: the points after it are still found, labelled by their status.
  auto with_time_left = [&] {
    SolveOptions o = options;
    o.time_limit_s = std::max(0.0, left() / 2);
    return o;
  };
  // The latency end: no schedule is faster than this, so the walk stops
  // there.
  Problem lat = problem;
  lat.objective = Objective::kLatency;
  lat.latency_cap_us.reset();
  HETPLAN_ASSIGN_OR_RETURN(SolveResult fastest, Solve(method, lat, with_time_left()));
  ++front.solves;
  if (!fastest.schedule) {
    front.seconds = deadline.ElapsedSeconds();
    front.stopped = fastest.status == SolveStatus::kInfeasible ? "" : "time_limit";
    front.complete = fastest.status == SolveStatus::kInfeasible;
    return front;  // no schedule at all: an empty front
  }
  front.min_makespan_us = fastest.schedule->makespan_us;
  front.min_makespan_optimal = fastest.status == SolveStatus::kOptimal;
  // The bound the faster end is proven by: below it no schedule exists.
  const double floor_us = std::isfinite(fastest.bound) ? fastest.bound : front.min_makespan_us;

  constexpr double kStep = 1e-6;  // points whose makespans differ by less are one point
  std::vector<EnergyPoint> walk;  // least energy first
  std::optional<double> cap;      // none: the least energy of all
  bool all_proven = front.min_makespan_optimal;
  while (true) {
    if (left() <= 0 || (options.interrupt != nullptr && options.interrupt->load())) {
      front.stopped = "time_limit";
      break;
    }
    if (static_cast<int>(walk.size()) >= max_points) {
      front.stopped = "max_points";
      break;
    }
    Problem q = problem;
    q.objective = Objective::kEnergy;
    q.latency_cap_us = cap;
    HETPLAN_ASSIGN_OR_RETURN(SolveResult r, Solve(method, q, with_time_left()));
    ++front.solves;
    if (r.status == SolveStatus::kInfeasible) break;  // nothing is faster than the last point
    if (!r.schedule) {
      front.stopped = "time_limit";
      break;
    }
    EnergyPoint pt;
    pt.makespan_us = r.schedule->makespan_us;
    pt.energy_uj = r.objective;
    pt.energy_bound_uj = std::isfinite(r.bound) ? r.bound : 0.0;
    pt.latency_cap_us = cap;
    pt.optimal = r.status == SolveStatus::kOptimal;
    all_proven = all_proven && pt.optimal;
    pt.result = std::move(r);
    // The same least energy at a lower cap: the earlier point was slower for
    // nothing (weakly dominated); keep the faster one.
    if (!walk.empty() && pt.energy_uj <= walk.back().energy_uj * (1 + 1e-9) + 1e-12) walk.pop_back();
    const double m = pt.makespan_us;
    walk.push_back(std::move(pt));
    if (m <= front.min_makespan_us * (1 + kStep) || m < floor_us) break;  // reached the latency end
    cap = m * (1 - kStep);
    if (*cap < floor_us * (1 - 1e-12)) break;  // below the proven bound: nothing faster exists
  }
  front.points.assign(std::make_move_iterator(walk.rbegin()), std::make_move_iterator(walk.rend()));
  front.complete = front.stopped.empty() && all_proven;
  front.seconds = deadline.ElapsedSeconds();
  return front;
}

}  // namespace hetplan
