// The throughput objective of the "exact" method: the smallest initiation
// interval (stream/search.cc), then the cyclic schedule that runs the plan
// at it (stream/cyclic_schedule.cc).
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "hetplan/solve/list_schedule.h"
#include "hetplan/solve/solver.h"
#include "hetplan/solve/throughput.h"
#include "solve/backends.h"
#include "solve/mip/throughput.h"

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

// A plan at interval `ii` (≥ its loads' II) whose one input finishes within
// the cap: the smallest such `ii` a binary search over [lo, hi] finds, the
// cyclic schedule's latency being the quick placements' (not monotone in the
// II, so a heuristic); nullopt when not even `hi` meets the cap.
// `lo_misses`: the caller already knows the schedule at `lo` misses it.
std::optional<Schedule> SmallestIntervalWithin(const Problem& pr, const std::vector<int>& a,
                                               const std::vector<int64_t>& replicas, double lo, double hi,
                                               double cap, bool lo_misses) {
  auto at = [&](double ii, bool improve) -> std::optional<Schedule> {
    Schedule s = CyclicSchedule(pr, a, replicas, ii, improve);
    if (s.makespan_us > cap * (1 + 1e-9)) return std::nullopt;
    return s;
  };
  if (!lo_misses) {
    if (auto s = at(lo, true)) return s;
  }
  std::optional<Schedule> best = at(hi, false);
  if (!best) return std::nullopt;
  for (int step = 0; step < 24 && hi - lo > 1e-6 * hi; ++step) {
    const double mid = 0.5 * (lo + hi);
    if (auto s = at(mid, false)) {
      best = std::move(s);
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return best;
}

// The plans --max-latency tries first: the II-optimal assignment `r` and the
// latency-optimal one (the exact latency search, in the time left), each at
// the smallest interval the binary search finds within the cap.
std::optional<Schedule> HeuristicWithin(const Problem& pr, const SolveOptions& options, const Deadline& deadline,
                                        const ThroughputSearchResult& r, SolveResult* result) {
  const double cap = *pr.latency_cap_us;
  std::optional<Schedule> best;
  auto consider = [&](const std::vector<int>& a, const std::vector<int64_t>& replicas, bool lo_misses) {
    const double lo = ComputeStreamLoads(pr, a, &replicas).interval_us();
    // At an II no shorter than one input's list schedule, inputs need not overlap.
    const double hi = std::max(lo, ListSchedule(pr, a).makespan_us);
    auto s = SmallestIntervalWithin(pr, a, replicas, lo, hi, cap, lo_misses);
    if (s && (!best || *s->initiation_interval_us < *best->initiation_interval_us)) best = std::move(s);
  };
  // The II-optimal plan's schedule at its II is the one that missed the cap.
  consider(r.assignment, r.replicas, true);
  Problem latency = pr;
  latency.objective = Objective::kLatency;
  latency.latency_cap_us.reset();
  SolveOptions left = options;
  left.time_limit_s = std::max(0.01, deadline.SecondsLeft());
  auto fastest = Solve("exact", latency, left);
  if (fastest.ok() && fastest->schedule) {
    std::vector<int> a(pr.graph->size());
    for (int v = 0; v < pr.graph->size(); ++v) a[v] = fastest->schedule->ops[v].device;
    consider(a, std::vector<int64_t>(a.size(), 1), false);
    result->notes.push_back(fmt::format("--max-latency: the latency-optimal plan ({}) takes {:.6g} µs",
                                        ToString(fastest->status), fastest->schedule->makespan_us));
  }
  return best;
}

// The most rows the exact method lets the MIP with a latency bound have
// (about 40 operators on two serial PUs); larger plans keep the heuristic's
// plan with its bound and gap.
constexpr int64_t kModuloRows = 20'000;

// --max-latency: the II-optimal plan's one input takes longer than the cap.
// The unconstrained optimum `bound` stays valid. The heuristic's plans come
// first; where they do not reach the bound, the MIP with the latency bound
// (mip/throughput_modulo.cc) proves the II in the time left, or lifts the bound.
Result<SolveResult> WithinLatency(const Problem& pr, const SolveOptions& options, const Deadline& deadline,
                                  const ThroughputSearchResult& r, double bound, SolveResult result) {
  const double cap = *pr.latency_cap_us;
  std::optional<Schedule> best = HeuristicWithin(pr, options, deadline, r, &result);
  auto gap_of = [&](double value) { return value > 0 ? (value - bound) / value : 0.0; };
  bool proven = best && gap_of(*best->initiation_interval_us) <= options.relative_gap + 1e-12;
  bool infeasible = false;
  Termination stopped = Termination::kCompleted;  // where the MIP does not run
  if (!proven) {
    const double hi = best ? *best->initiation_interval_us : std::max(bound, mip_internal::IntervalCeiling(pr));
    auto mip = mip_internal::SolveModuloMip(pr, options, deadline, bound, hi, kModuloRows);
    if (!mip.ok()) {
      result.notes.push_back("no MIP with the latency bound: " + mip.status().message());
    } else {
      result.notes.insert(result.notes.end(), mip->notes.begin(), mip->notes.end());
      if (mip->schedule && (!best || mip->objective < *best->initiation_interval_us)) best = mip->schedule;
      if (!std::isnan(mip->bound)) bound = std::max(bound, mip->bound);
      stopped = mip->termination;
      infeasible = mip->status == SolveStatus::kInfeasible && !best;
      proven = best && (mip->status == SolveStatus::kOptimal ||
                        gap_of(*best->initiation_interval_us) <= options.relative_gap + 1e-12);
    }
  }
  result.bound = bound;
  if (!best) {
    result.schedule.reset();
    result.objective = result.gap = std::numeric_limits<double>::quiet_NaN();
    result.status = infeasible ? SolveStatus::kInfeasible : SolveStatus::kNoSolution;
    result.termination = infeasible ? Termination::kProvedInfeasible : stopped;
    result.notes.push_back(fmt::format("--max-latency {:.6g} µs: {}", cap,
                                       infeasible ? "no plan meets it (proven)" : "no plan tried meets it"));
    return result;
  }
  result.objective = *best->initiation_interval_us;
  result.bound = std::min(bound, result.objective);
  result.gap = gap_of(result.objective);
  const bool heuristic = stopped == Termination::kCompleted;
  result.status = proven ? SolveStatus::kOptimal : heuristic ? SolveStatus::kHeuristic : SolveStatus::kFeasible;
  result.termination = proven ? Termination::kProved : stopped;
  result.notes.push_back(fmt::format(
      "--max-latency {:.6g} µs: II {:.6g} µs with one input in {:.6g} µs; bound {:.6g} µs{}", cap, result.objective,
      best->makespan_us, result.bound, proven ? "" : " (not proven)"));
  result.schedule = std::move(best);
  return result;
}

}  // namespace

namespace backends {

ThroughputSearchResult SmallestInterval(const Problem& pr, const SolveOptions& options, const Deadline& deadline,
                                        std::vector<std::string>* notes) {
  ThroughputSearchResult r =
      SolveThroughputBySearch(pr, deadline.at(), options.relative_gap, options.interrupt, options.exact.node_limit);
  if (r.complete || r.infeasible || !r.node_limit_reached || deadline.Expired()) return r;
  Problem free = pr;
  free.latency_cap_us.reset();
  auto mip = Solve("mip", free, [&] {
    SolveOptions left = options;
    left.time_limit_s = std::max(0.01, deadline.SecondsLeft());
    return left;
  }());
  if (notes != nullptr) {
    notes->push_back(fmt::format("the search stopped at {} nodes (exact.node_limit); the throughput MIP: {}", r.nodes,
                                 mip.ok() ? ToString(mip->status) : mip.status().message()));
  }
  if (!mip.ok()) return r;
  if (mip->status == SolveStatus::kInfeasible) {
    r.infeasible = true;
    return r;
  }
  if (!std::isnan(mip->bound)) r.bound_us = std::max(r.bound_us, mip->bound);
  if (mip->schedule && (r.assignment.empty() || mip->objective < r.interval_us)) {
    const int n = pr.graph->size();
    r.assignment.assign(n, 0);
    r.replicas.assign(n, 1);
    for (int v = 0; v < n; ++v) {
      r.assignment[v] = mip->schedule->ops[v].device;
      r.replicas[v] = mip->schedule->ops[v].replicas;
    }
    r.interval_us = mip->objective;
  }
  r.complete = mip->status == SolveStatus::kOptimal ||
               (!r.assignment.empty() && r.interval_us - r.bound_us <= options.relative_gap * r.interval_us + 1e-12);
  r.bound_us = std::min(r.bound_us, r.interval_us);
  return r;
}

Result<SolveResult> SolveThroughput(const Problem& pr, const SolveOptions& options, const Deadline& deadline) {
  const CostModel& c = *pr.costs;
  if (c.has_shared_adcs() || c.has_reprogram()) {
    return Error(ErrorCode::kUnsupported,
                 "the throughput objective keeps every CIM operator's weights resident with crossbars and ADCs of "
                 "its own; remove shared_adcs and reprogram, or use --objective latency");
  }
  SolveResult result;
  result.formulation = "throughput";
  result.exact = ExactStats{};
  ThroughputSearchResult r = SmallestInterval(pr, options, deadline, &result.notes);
  result.exact->searches = r.thresholds;
  result.exact->nodes = r.nodes;
  result.exact->node_limit_reached = r.node_limit_reached;
  result.notes.push_back(fmt::format(
      "throughput: II = max(serial PU loads, link loads, longest spatial operator); {} spatial-time thresholds "
      "searched, {} branch-and-bound nodes",
      r.thresholds, r.nodes));
  if (r.infeasible) {
    result.status = SolveStatus::kInfeasible;
    result.termination = Termination::kProvedInfeasible;
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
  result.termination = r.complete      ? Termination::kProved
                       : r.interrupted ? Termination::kInterrupted
                                       : Termination::kTimeLimit;
  if (r.assignment.empty()) {
    result.status = SolveStatus::kNoSolution;
    return result;
  }
  const StreamLoads loads = ComputeStreamLoads(pr, r.assignment, &r.replicas);
  result.schedule = CyclicSchedule(pr, r.assignment, r.replicas, loads.interval_us());
  if (pr.latency_cap_us && result.schedule->makespan_us > *pr.latency_cap_us * (1 + 1e-9)) {
    return WithinLatency(pr, options, deadline, r, loads.interval_us(), std::move(result));
  }
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
