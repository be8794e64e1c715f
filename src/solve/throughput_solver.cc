// The throughput objective of the "exact" method: the smallest initiation
// interval (throughput_search.cc), then the cyclic schedule that runs the plan
// at it (cyclic_schedule.cc).
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "hetplan/solve/throughput.h"
#include "solve/backends.h"

namespace hetplan {
namespace {

// Every operator on one serial PU: the plan to return when the search ran
// out of time before it found any.
std::optional<std::vector<int>> OneSerialPu(const Problem& pr) {
  const CostModel& c = *pr.costs;
  std::optional<std::vector<int>> best;
  double best_ii = std::numeric_limits<double>::infinity();
  for (int q = 0; q < c.num_pus(); ++q) {
    if (c.pu(q).spatial) continue;
    std::vector<int> a(pr.graph->size(), q);
    bool ok = true;
    for (int v = 0; v < pr.graph->size() && ok; ++v) ok = c.supported(v, q);
    if (!ok) continue;
    const double ii = ComputeStreamLoads(pr, a).interval_us();
    if (ii < best_ii) {
      best_ii = ii;
      best = a;
    }
  }
  return best;
}

}  // namespace

namespace backends {

Result<SolveResult> SolveThroughput(const Problem& pr, const SolveOptions& options, const Deadline& deadline) {
  const CostModel& c = *pr.costs;
  if (c.has_shared_adcs() || c.has_reprogram()) {
    return Error(ErrorCode::kUnsupported,
                 "the throughput objective keeps every CIM operator's weights resident with crossbars and ADCs of "
                 "its own; remove shared_adcs and reprogram, or use --objective latency");
  }
  if (pr.latency_cap_us) {
    return Error(ErrorCode::kUnsupported,
                 "--max-latency with the throughput objective is not built yet; plan without it (the II is "
                 "optimal and the latency of one input is reported)");
  }
  SolveResult result;
  result.formulation = "throughput";
  result.exact = ExactStats{};
  ThroughputSearchResult r = SolveThroughputBySearch(pr, deadline.at(), options.relative_gap, options.interrupt);
  result.exact->searches = r.thresholds;
  result.exact->nodes = r.nodes;
  result.notes.push_back(fmt::format(
      "throughput: II = max(serial PU loads, link loads, longest spatial operator); {} spatial-time thresholds "
      "searched, {} branch-and-bound nodes",
      r.thresholds, r.nodes));
  if (r.infeasible) {
    result.status = SolveStatus::kInfeasible;
    result.termination = Termination::kInfeasible;
    return result;
  }
  if (r.assignment.empty()) {
    if (auto a = OneSerialPu(pr)) {
      r.assignment = *a;
      r.replicas.assign(a->size(), 1);
      r.interval_us = ComputeStreamLoads(pr, *a).interval_us();
      result.notes.push_back("the search found no plan in time: every operator on one serial PU");
    }
  }
  result.termination = r.complete ? Termination::kOptimal
                       : r.interrupted ? Termination::kInterrupted
                                       : Termination::kTimeLimit;
  if (r.assignment.empty()) {
    result.status = SolveStatus::kNoSolution;
    return result;
  }
  const StreamLoads loads = ComputeStreamLoads(pr, r.assignment, &r.replicas);
  result.schedule = CyclicSchedule(pr, r.assignment, r.replicas, loads.interval_us());
  result.status = r.complete ? SolveStatus::kOptimal : SolveStatus::kFeasible;
  result.objective = loads.interval_us();
  result.bound = std::min(r.bound_us, result.objective);
  result.gap = result.objective > 0 ? (result.objective - result.bound) / result.objective : 0.0;
  result.notes.push_back(fmt::format("II {:.6g} µs set by {}; one input's latency {:.6g} µs", loads.interval_us(),
                                     loads.Bottleneck(c), result.schedule->makespan_us));
  return result;
}

}  // namespace backends
}  // namespace hetplan
