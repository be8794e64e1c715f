// The throughput objective's crossbar frontier (frontier/throughput.h) and a
// stream's (II, latency) front (frontier.h).
#include "solve/frontier/throughput.h"

#include <algorithm>

#include "hetplan/solve/solver.h"
#include "hetplan/solve/throughput.h"
#include "solve/backends.h"
#include "solve/mip/throughput.h"

namespace hetplan {

Result<CrossbarFrontier> SolveThroughputFrontier(const Problem& problem, int pu, const SolveOptions& options,
                                                 std::optional<int64_t> max_crossbars, const Deadline& deadline) {
  const CostModel& given = *problem.costs;
  CrossbarFrontier f;
  f.pu = pu;
  // Every operator held with as many copies as shorten it: past this budget
  // nothing changes.
  for (int v = 0; v < given.num_ops(); ++v) {
    if (given.supported(v, pu)) f.crossbars_for_all += given.crossbars(v, pu) * std::max<int64_t>(1, given.max_replicas(v, pu));
  }
  f.max_crossbars = max_crossbars.value_or(f.crossbars_for_all);
  CostModel costs = given;
  Problem swept = problem;
  swept.costs = &costs;
  swept.latency_cap_us.reset();
  if (problem.graph->size() == 0) {
    f.steps.push_back(FrontierStep{0, 0.0, 0.0, true, Schedule{}});
    f.complete = true;
    return f;
  }
  std::vector<FrontierStep> down;  // budgets decreasing
  f.termination = Termination::kProved;
  for (int64_t b = std::min(f.max_crossbars, f.crossbars_for_all); b >= 0;) {
    costs.mutable_pu(pu).capacity = b;
    ThroughputSearchResult r = backends::SmallestInterval(swept, options, deadline, nullptr);
    f.stats.searches += r.thresholds;
    f.stats.nodes += r.nodes;
    f.stats.node_limit_reached = f.stats.node_limit_reached || r.node_limit_reached;
    if (r.infeasible) break;  // nothing fits at b, nor at any smaller budget
    if (r.assignment.empty() || !r.complete) {
      f.termination = r.interrupted ? Termination::kInterrupted : Termination::kTimeLimit;
    }
    if (r.assignment.empty()) break;
    const StreamLoads loads = ComputeStreamLoads(swept, r.assignment, &r.replicas);
    FrontierStep step;
    step.crossbars = loads.crossbars[pu];
    step.makespan_us = loads.interval_us();
    step.lower_bound_us = std::min(r.bound_us, step.makespan_us);
    step.optimal = r.complete;
    // The quick placements only: the frontier has many steps.
    step.schedule = CyclicSchedule(swept, r.assignment, r.replicas, step.makespan_us, false);
    // The same II at fewer crossbars: the step starts lower.
    if (!down.empty() && step.makespan_us <= down.back().makespan_us * (1 + 1e-12)) {
      step.optimal = step.optimal && down.back().optimal;
      down.back() = std::move(step);
    } else {
      down.push_back(std::move(step));
    }
    if (!r.complete) break;
    b = down.back().crossbars - 1;
  }
  f.complete = f.termination == Termination::kProved;
  if (down.empty() && f.complete) f.termination = Termination::kProvedInfeasible;
  f.steps.assign(down.rbegin(), down.rend());
  // Where the sweep stopped early, nothing is proven below its last step.
  if (!f.complete) f.bounds.push_back(FrontierBound{0, 0.0});
  for (const FrontierStep& s : f.steps) f.bounds.push_back(FrontierBound{s.crossbars, s.lower_bound_us});
  f.seconds = deadline.ElapsedSeconds();
  return f;
}

}  // namespace hetplan

namespace hetplan {
namespace {

// Caps between front points: just below the last point's latency.
constexpr double kBelow = 1 - 1e-6;
// The largest MIP with a latency bound the front builds (the exact method's).
constexpr int64_t kFrontRows = 20'000;

}  // namespace

Result<StreamFront> SolveStreamFront(const Problem& problem, const SolveOptions& options, int max_points) {
  const Deadline deadline = Deadline::In(options.time_limit_s);
  HETPLAN_RETURN_IF_ERROR(ValidateProblem(problem));
  if (problem.objective != Objective::kThroughput) {
    return Error(ErrorCode::kInvalidArgument, "the (II, latency) front is a stream's; use the throughput objective");
  }
  auto left = [&] {
    SolveOptions o = options;
    o.time_limit_s = std::max(0.01, deadline.SecondsLeft());
    return o;
  };
  StreamFront front;
  Problem capped = problem;
  capped.latency_cap_us.reset();
  auto r = Solve("exact", capped, left());
  ++front.solves;
  if (!r.ok()) return r.status();
  if (!r->schedule) return Error(ErrorCode::kNotFound, "the (II, latency) front: no stream plan fits the budgets");
  bool complete = true;
  while (static_cast<int>(front.points.size()) < max_points) {
    complete = complete && r->status == SolveStatus::kOptimal;
    // The least latency at this II, one input within the plan found's.
    StreamFrontPoint pt;
    pt.ii_us = r->objective;
    capped.latency_cap_us = r->schedule->makespan_us;
    auto l = mip_internal::SolveModuloMip(capped, left(), deadline, pt.ii_us, pt.ii_us, kFrontRows, true);
    ++front.solves;
    if (!l.ok()) {
      return Error(ErrorCode::kUnsupported,
                   "the exact (II, latency) front: {}; plan one cap at a time with --objective throughput "
                   "--max-latency",
                   l.status().message());
    }
    const bool least = l->schedule && l->status == SolveStatus::kOptimal;
    complete = complete && least;
    pt.schedule = l->schedule ? *l->schedule : *r->schedule;
    pt.latency_us = pt.schedule.makespan_us;
    pt.optimal = r->status == SolveStatus::kOptimal && least;
    front.points.push_back(std::move(pt));
    if (front.points.back().latency_us <= 0) {  // nothing is faster than no time
      front.complete = complete;
      break;
    }
    // The smallest II with one input faster than this point's.
    capped.latency_cap_us = front.points.back().latency_us * kBelow;
    r = Solve("exact", capped, left());
    ++front.solves;
    if (!r.ok()) return r.status();
    if (r->status == SolveStatus::kInfeasible) {
      front.complete = complete;
      break;
    }
    if (!r->schedule || deadline.Expired()) break;
  }
  front.seconds = deadline.ElapsedSeconds();
  return front;
}

}  // namespace hetplan
