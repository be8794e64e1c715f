// The "mip" method: the CIM paper's ILP (Klein et al., §IV-B, eqs. 5–14; the
// model in mip/model.h) solved with COIN-OR CBC (mip/cbc_driver.h) or HiGHS
// (mip/highs_driver.h), as options.mip.backend says (mip/backend.h). Warm start:
// the best of a few list-scheduled heuristics (warm_start.h), handed to CBC
// as its incumbent. The returned schedule is re-timed with ListSchedule when
// that is no longer, so it satisfies every constraint exactly. Each solve
// uses options.threads CBC threads (repeatable parallel search). CBC's
// preprocessing is off (it crashes CBC 2.10.8 when a time limit ends the
// search right after a warm start).
#include "solve/mip/solver.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "hetplan/solve/list_schedule.h"
#include "hetplan/solve/solver.h"
#include "solve/backends.h"
#include "solve/mip/cbc_driver.h"
#include "solve/mip/backend.h"
#include "solve/mip/model.h"
#include "solve/warm_start.h"

namespace hetplan::mip_internal {
namespace {

using warm_start::BestHeuristic;
using warm_start::Candidate;
using warm_start::FromSchedule;
using warm_start::ObjectiveOf;
using warm_start::PriorityTopoOrder;


// True when `s` satisfies every constraint exactly (no tolerance).
bool ExactlyFeasible(const Problem& pr, const Schedule& s) {
  const OpGraph& g = *pr.graph;
  const CostModel& c = *pr.costs;
  std::vector<int> a(g.size());
  for (int v = 0; v < g.size(); ++v) {
    const ScheduledOp& op = s.ops[v];
    a[v] = op.device;
    if (op.device < 0 || !c.supported(v, op.device) || op.start_us < 0) return false;
    if (op.finish_us != op.start_us + c.latency_us(v, op.device)) return false;
  }
  if (!FitsCapacity(pr, a)) return false;
  for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
    const int u = g.edges()[e].from, v = g.edges()[e].to;
    const double tr = a[u] != a[v] ? c.transfer_us(e, a[u], a[v]) : 0.0;
    if (s.ops[u].finish_us + tr > s.ops[v].start_us) return false;
  }
  for (int p = 0; p < c.num_pus(); ++p) {
    if (c.pu(p).spatial) continue;
    std::vector<int> on;
    for (int v = 0; v < g.size(); ++v) {
      if (a[v] == p) on.push_back(v);
    }
    std::sort(on.begin(), on.end(), [&](int x, int y) {
      return std::tie(s.ops[x].start_us, s.ops[x].finish_us) < std::tie(s.ops[y].start_us, s.ops[y].finish_us);
    });
    for (size_t i = 1; i < on.size(); ++i) {
      if (s.ops[on[i - 1]].finish_us > s.ops[on[i]].start_us) return false;
    }
  }
  double latest = 0;
  for (const ScheduledOp& op : s.ops) latest = std::max(latest, op.finish_us);
  return latest == s.makespan_us;
}


}  // namespace

SolveResult EmptyProblemResult(const std::string& formulation) {
  SolveResult result;
  result.formulation = formulation;
  result.status = SolveStatus::kOptimal;
  result.termination = Termination::kProved;
  result.schedule = Schedule{};
  result.schedule->energy_uj = 0.0;
  result.objective = result.bound = result.gap = 0;
  return result;
}

Status CheckPowers(const Problem& pr) {
  const OpGraph& g = *pr.graph;
  const CostModel& c = *pr.costs;
  const auto cand = Candidates(c);
  for (int p = 0; p < c.num_pus(); ++p) {
    bool used = false;
    for (int v = 0; v < g.size() && !used; ++v) used = std::find(cand[v].begin(), cand[v].end(), p) != cand[v].end();
    if (used && !c.pu(p).power_w) {
      return Error(ErrorCode::kInvalidArgument,
                   "ilp: the energy objective needs the power of every PU, but PU '{}' has no power_w; set it in "
                   "the platform (e.g. --set {}.power_w=5) or use the latency objective",
                   c.pu(p).name, c.pu(p).name);
    }
  }
  return Status::Ok();
}

namespace {

// The warm start: the best heuristic schedule, or `incumbent` when that is
// better, as model values (empty when there is none or it violates the model).
std::optional<Candidate> WarmStart(const Problem& pr, const IlpModel& m, const Schedule* incumbent,
                                   std::vector<double>* values, SolveResult& result) {
  std::optional<Candidate> warm = BestHeuristic(pr, m.cand);
  if (incumbent != nullptr && (!warm || ObjectiveOf(pr, *incumbent) < ObjectiveOf(pr, warm->schedule))) {
    warm = FromSchedule(pr, *incumbent, "the exact search's best schedule");
  }
  if (!warm) return warm;
  *values = ModelValues(pr, m, warm->assignment, warm->order, warm->schedule);
  const double viol = m.mb.MaxViolation(*values);
  if (viol > 1e-9) {
    result.notes.push_back(fmt::format("warm start dropped: violates the model by {:g} (a bug)", viol));
    warm.reset();
  } else {
    result.notes.push_back(fmt::format("warm start: {} ({} {:g})", warm->label,
                                       pr.objective == Objective::kEnergy ? "energy µJ" : "makespan µs",
                                       ObjectiveOf(pr, warm->schedule)));
  }
  return warm;
}

// The schedule of CBC's solution: the ILP's own, or the same assignment and
// order re-timed when that is shorter or the ILP's timing is not exactly
// feasible; none when the solution is not a valid assignment.
std::optional<Schedule> ScheduleOfSolution(const Problem& pr, const IlpModel& m, const std::vector<double>& sol,
                                           SolveResult& result) {
  const OpGraph& g = *pr.graph;
  const CostModel& c = *pr.costs;
  std::vector<int> a(g.size(), -1);
  Schedule ilp;
  ilp.ops.assign(g.size(), ScheduledOp{});
  bool ok = true;
  for (int v = 0; v < g.size(); ++v) {
    double best = -1;
    for (int p : m.cand[v]) {
      if (sol[m.x[v][p]] > best) {
        best = sol[m.x[v][p]];
        a[v] = p;
      }
    }
    ok = ok && best > 0.5;
    ScheduledOp& op = ilp.ops[v];
    op.device = a[v];
    op.start_us = std::max(0.0, sol[m.s[v]]);
    op.finish_us = op.start_us + c.latency_us(v, a[v]);
    ilp.makespan_us = std::max(ilp.makespan_us, op.finish_us);
  }
  ilp.energy_uj = ScheduleEnergy(pr, ilp);
  if (!ok || !FitsCapacity(pr, a)) {
    result.notes.push_back("CBC's solution is not a valid assignment (numerical trouble); ignored");
    return std::nullopt;
  }
  std::vector<int> order =
      // Ordered by the midpoint of each interval: on a serial PU, u before
      // v means f_u ≤ s_v, so the midpoints keep that order even when
      // CBC's rounding puts a zero-duration operator a hair after the
      // start of the operator it precedes (the start alone would not).
      PriorityTopoOrder(g, [&](int v) {
        return std::make_pair(ilp.ops[v].start_us + ilp.ops[v].finish_us, g.topo_position(v));
      });
  Schedule retimed = ListSchedule(pr, a, &order);
  return (ilp.makespan_us < retimed.makespan_us && ExactlyFeasible(pr, ilp)) ? ilp : retimed;
}

// The objective, bound and gap of the returned schedule, as CBC proved them
// and never more than the schedule proves.
void SetObjectiveAndBound(const Problem& pr, const MipOutcome& out, Schedule schedule, SolveResult& result) {
  result.objective = ObjectiveOf(pr, schedule);
  double bound = out.bound;
  // Secondary status 1: nothing beats CBC's incumbent; the bound CBC keeps
  // then is stale, the incumbent's value is the proven one.
  if (result.status == SolveStatus::kOptimal && out.secondary == 1 && std::isfinite(out.objective)) {
    bound = out.objective;
  }
  if (!std::isfinite(bound) || std::fabs(bound) >= 1e29) bound = std::numeric_limits<double>::quiet_NaN();
  if (result.status == SolveStatus::kOptimal && std::isnan(bound)) bound = result.objective;
  if (result.status == SolveStatus::kOptimal && std::isfinite(out.objective) &&
      result.objective > out.objective + 1e-6 * std::max(1.0, std::fabs(out.objective))) {
    // Never claim more than the schedule we return proves.
    result.status = SolveStatus::kFeasible;
    result.notes.push_back(fmt::format("the returned schedule is {:g} above CBC's optimum; not claimed optimal",
                                       result.objective - out.objective));
  }
  if (!std::isnan(bound)) bound = std::min(bound, result.objective);
  result.bound = bound;
  if (!std::isnan(bound)) {
    if (std::fabs(result.objective) < 1e-12) {
      result.gap = result.objective - bound <= 1e-12 ? 0.0 : std::numeric_limits<double>::infinity();
    } else {
      result.gap = (result.objective - bound) / std::fabs(result.objective);
    }
  }
  result.schedule = std::move(schedule);
}

// The status, schedule, bound and termination from CBC's outcome and the
// warm start.
void Conclude(const Problem& pr, const MipOutcome& out, std::optional<Schedule> schedule,
              const std::optional<Candidate>& warm, SolveResult& result) {
  if (schedule) {
    result.status = out.proven_optimal ? SolveStatus::kOptimal : SolveStatus::kFeasible;
  } else if (warm && !out.proven_infeasible) {
    // CBC stopped before reporting an incumbent: the warm start is one.
    schedule = warm->schedule;
    result.status = SolveStatus::kFeasible;
    result.notes.push_back(out.solver + " returned no incumbent; the schedule is the warm start");
  } else if (warm) {
    schedule = warm->schedule;
    result.status = SolveStatus::kFeasible;
    result.notes.push_back(out.solver + " reported infeasible although the warm start is feasible (numerical trouble)");
  } else if (out.proven_infeasible) {
    result.status = SolveStatus::kInfeasible;
  } else {
    result.status = SolveStatus::kNoSolution;
  }
  if (schedule) {
    SetObjectiveAndBound(pr, out, std::move(*schedule), result);
  } else if (std::isfinite(out.bound) && std::fabs(out.bound) < 1e29) {
    result.bound = out.bound;
  }
  result.notes.push_back(fmt::format("{} status {}", out.solver, out.status_text));
  if (result.status == SolveStatus::kOptimal) {
    result.termination = Termination::kProved;
  } else if (result.status == SolveStatus::kInfeasible) {
    result.termination = Termination::kProvedInfeasible;
  } else if (out.interrupted) {
    result.termination = Termination::kInterrupted;
  } else if (out.time_limit_reached) {
    result.termination = Termination::kTimeLimit;
  } else {
    result.termination = Termination::kNumerical;
  }
}

}  // namespace

// The CIM paper's MIP on CBC, warm-started from the best heuristic schedule
// or from `incumbent` when that is better. `result` carries notes so far.
Result<SolveResult> SolvePaperMip(const Problem& pr, const SolveOptions& options, const Deadline& deadline,
                                  SolveResult result, const Schedule* incumbent) {
  result.formulation = "paper";
  IlpModel m = BuildModel(pr);
  result.mip = MipStats{m.mb.num_cols(), m.mb.num_rows(), m.big_m, ""};

  std::optional<Candidate> warm;
  std::vector<double> warm_values;
  if (options.warm_start) warm = WarmStart(pr, m, incumbent, &warm_values, result);

  auto run = RunMip(m.mb, options, warm ? &warm_values : nullptr, deadline);
  if (!run.ok()) return run.status();
  const MipOutcome& out = *run;
  result.mip->backend = out.solver;
  if (ResolveMipBackend(options.mip.backend) == MipBackend::kCbc && out.threads == 1 && options.threads > 1) {
    result.notes.push_back(fmt::format("this CBC was built without threads; {} requested, 1 used", options.threads));
  }
  if (warm && !out.warm_taken) result.notes.push_back(out.solver + " rejected the warm start (numerical trouble)");

  std::optional<Schedule> schedule;
  if (out.solution) schedule = ScheduleOfSolution(pr, m, *out.solution, result);
  Conclude(pr, out, std::move(schedule), warm, result);
  result.seconds = deadline.ElapsedSeconds();
  return result;
}

}  // namespace hetplan::mip_internal

namespace hetplan {
namespace {

class MipSolver final : public Solver {
 public:
  MipSolver() {
    info_.name = "mip";
    info_.summary = "the CIM paper's MIP (Klein et al. eqs. 5-14) on COIN-OR CBC or HiGHS, warm-started";
    info_.family = MethodFamily::kMip;
    info_.objectives = {Objective::kLatency, Objective::kEnergy, Objective::kThroughput};
    info_.proves_optimality = true;
    info_.time_limit = true;
    info_.docs = "docs/ilp.md";
  }
  const MethodInfo& info() const override { return info_; }
  bool UsesCbc(Objective /*objective*/, const SolveOptions& /*options*/) const override { return true; }
  Result<SolveResult> SolveValidated(const Problem& pr, const SolveOptions& options,
                                     const Deadline& deadline) const override {
    HETPLAN_RETURN_IF_ERROR(mip_internal::CheckMipBackend(options));
    if (pr.objective == Objective::kEnergy) HETPLAN_RETURN_IF_ERROR(mip_internal::CheckPowers(pr));
    if (pr.graph->size() == 0) return mip_internal::EmptyProblemResult("paper");
    if (pr.objective == Objective::kThroughput) return mip_internal::SolveThroughputMip(pr, options, deadline);
    return mip_internal::SolvePaperMip(pr, options, deadline, SolveResult{}, nullptr);
  }

 private:
    MethodInfo info_;
};

}  // namespace

namespace backends {
std::unique_ptr<Solver> MakeMipSolver() { return std::make_unique<MipSolver>(); }
}  // namespace backends
}  // namespace hetplan
