// The throughput objective's crossbar frontier (throughput_frontier.h).
#include "solve/throughput_frontier.h"

#include <algorithm>

#include "hetplan/solve/throughput.h"
#include "solve/backends.h"

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
  f.termination = Termination::kOptimal;
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
  f.complete = f.termination == Termination::kOptimal;
  if (down.empty() && f.complete) f.termination = Termination::kInfeasible;
  f.steps.assign(down.rbegin(), down.rend());
  // Where the sweep stopped early, nothing is proven below its last step.
  if (!f.complete) f.bounds.push_back(FrontierBound{0, 0.0});
  for (const FrontierStep& s : f.steps) f.bounds.push_back(FrontierBound{s.crossbars, s.lower_bound_us});
  f.seconds = deadline.ElapsedSeconds();
  return f;
}

}  // namespace hetplan
