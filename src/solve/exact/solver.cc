// The "exact" method: the exact search of exact/search.h for the latency
// objective, with the paper's MIP on CBC as its fallback when the node budget
// runs out, and for the energy objective (which the search does not cover).
// "optimal" means a proven bound is within options.relative_gap, whichever
// method proved it; at a time limit it returns its best schedule and the
// best valid bound.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "hetplan/solve/solver.h"
#include "solve/backends.h"
#include "solve/mip/cbc_driver.h"
#include "solve/exact/search.h"
#include "solve/mip/model.h"
#include "solve/mip/solver.h"
#include "solve/warm_start.h"

namespace hetplan {
namespace {

using mip_internal::BuildModel;
using mip_internal::Candidates;
using mip_internal::IlpModel;
using mip_internal::WriteModels;
using warm_start::BestHeuristic;

// A shared ADC pool or reprogramming: CIM resources over time, which the
// series decomposition and the paper's MIP do not model.
bool TimedResources(const CostModel& c) { return c.has_shared_adcs() || c.has_reprogram(); }


// The exact search for the latency objective (exact/search.h: series
// decomposition, assignment-first branch-and-bound, sequencing search). No
// MIP is solved unless the node budget runs out; --write-lp/--write-mps still
// export the paper's model of the instance.
class StrongSolve {
 public:
  StrongSolve(const Problem& pr, const SolveOptions& options, const Deadline& deadline)
      : pr_(pr), options_(options), deadline_(deadline), cand_(Candidates(*pr.costs)) {
    // Threads for independent segment searches and the local search beside
    // them (0 = every core); the result does not depend on how many.
    threads_ = ThreadCount(options);
  }

  Result<SolveResult> Solve() {
    result_.formulation = "strong";
    result_.exact = ExactStats{};
    if (!options_.mip.write_lp.empty() || !options_.mip.write_mps.empty()) {
      IlpModel m = BuildModel(pr_);
      HETPLAN_RETURN_IF_ERROR(WriteModels(m.mb, options_));
      result_.notes.push_back("the exported LP/MPS model is the paper's formulation of this instance");
    }
    exact_internal::SearchOutcome out = Search(options_.exact.node_limit);
    if (Timed() && out.stats.budget_exhausted && !out.complete && TimeLeft() > 0.05 && !interrupted_) {
      // No MIP to fall back on: the search starts again without the node
      // budget for the time left, keeping the better of the two.
      exact_internal::SearchOutcome again = Search(0);
      if (!again.schedule || (out.schedule && out.schedule->makespan_us < again.schedule->makespan_us)) {
        again.schedule = out.schedule;
      }
      if (again.schedule) again.objective = again.schedule->makespan_us;
      again.bound = std::max(again.bound, out.bound);
      out = std::move(again);
    }
    if (out.infeasible) return Infeasible();
    schedule_ = out.schedule;
    bound_ = std::isfinite(out.bound) ? out.bound : std::numeric_limits<double>::quiet_NaN();
    complete_ = out.complete;
    if (!complete_ && options_.warm_start) {
      // Stopped early: the best heuristic schedule may still beat the search's.
      auto warm = BestHeuristic(pr_, cand_);
      if (warm && (!schedule_ || warm->schedule.makespan_us < schedule_->makespan_us)) {
        schedule_ = warm->schedule;
        result_.notes.push_back(fmt::format("heuristic schedule ({}) better than the search's so far", warm->label));
      }
    }
    const bool fallback =
        out.stats.budget_exhausted && !Proven() && TimeLeft() > 0.05 && !Timed();
    if (fallback) {
      HETPLAN_ASSIGN_OR_RETURN(const bool infeasible, MipFallback());
      if (infeasible) return Infeasible();
    }
    // Why it stopped, when it did not prove the gap.
    const Termination stopped = interrupted_                                       ? Termination::kInterrupted
                                : out.stats.budget_exhausted && !fallback           ? Termination::kNodeLimit
                                                                                    : Termination::kTimeLimit;
    return Conclude(stopped);
  }

 private:
  // One run of the search with `node_limit` nodes (0: none), its statistics
  // added to the result's. CIM resources over time (Timed) take the search of
  // exact/shared_adcs.cc: one thread, and no MIP fallback (the paper's MIP has
  // neither a pool nor rewriting).
  exact_internal::SearchOutcome Search(int64_t node_limit) {
    const bool timed = Timed();
    exact_internal::SearchOutcome out =
        timed ? exact_internal::SolveSharedAdcsBySearch(pr_, cand_, deadline_.at(), options_.relative_gap, node_limit,
                                                        options_.interrupt)
              : exact_internal::SolveLatencyBySearch(pr_, cand_, deadline_.at(), options_.relative_gap, node_limit,
                                                     options_.interrupt, threads_);
    ExactStats& st = *result_.exact;
    st.segments = out.stats.segments;
    st.largest_segment = out.stats.largest_segment;
    st.searches += out.stats.searches;
    st.nodes += out.stats.nodes;
    st.node_limit_reached = st.node_limit_reached || out.stats.budget_exhausted;
    interrupted_ = interrupted_ || out.stats.interrupted;
    const std::string stopped =
        out.stats.budget_exhausted ? fmt::format(", stopped at the node limit ({})", node_limit) : "";
    if (timed) {
      const bool reprogram = pr_.costs->has_reprogram();
      result_.formulation = reprogram ? "reprogram" : "shared-adc";
      result_.notes.push_back(fmt::format(
          "{}: branch-and-bound over start-sorted placements, {} pass{}, {} nodes{}; no series decomposition and no "
          "MIP fallback (the paper's MIP has neither)",
          reprogram ? "reprogramming" : "shared ADC pool", out.stats.searches, out.stats.searches == 1 ? "" : "es",
          out.stats.nodes, stopped));
    } else {
      result_.notes.push_back(fmt::format("strong: {} segment{} (largest {} operators), {} searches, {} "
                                          "branch-and-bound nodes{}",
                                          out.stats.segments, out.stats.segments == 1 ? "" : "s",
                                          out.stats.largest_segment, out.stats.searches, out.stats.nodes, stopped));
    }
    return out;
  }

  bool Timed() const { return TimedResources(*pr_.costs); }

  bool Proven() const {
    if (!schedule_ || std::isnan(bound_)) return false;
    const double z = schedule_->makespan_us;
    return z - bound_ <= options_.relative_gap * std::max(z, 1e-12) + 1e-9;
  }

  double TimeLeft() const { return deadline_.SecondsLeft(); }

  // The search spent its node budget without a proof: graphs with many
  // parallel branches on one serial PU can be easier for the MIP's LP
  // bound. The paper's MIP gets a share of the time left (half of it, at
  // most four times what the search took and at least 5 s), warm-started
  // from the best schedule so far; if it does not settle the instance
  // either, the search resumes without a node limit for the rest. Every
  // bound either method proves is valid for the same problem, so the best
  // is kept. True when the MIP proves the instance infeasible.
  Result<bool> MipFallback() {
    result_.exact->mip_fallback = true;
    const double left = TimeLeft();
    const double share = std::min(left / 2, std::max(5.0, 4 * deadline_.ElapsedSeconds()));
    auto mip = mip_internal::SolvePaperMip(pr_, options_, deadline_.Within(share), SolveResult{},
                                           schedule_ ? &*schedule_ : nullptr);
    if (!mip.ok()) return mip.status();
    for (const std::string& note : mip->notes) result_.notes.push_back("paper MIP fallback: " + note);
    result_.mip = mip->mip;
    if (mip->schedule && (!schedule_ || mip->schedule->makespan_us < schedule_->makespan_us)) {
      schedule_ = mip->schedule;
    }
    if (!std::isnan(mip->bound)) bound_ = std::isnan(bound_) ? mip->bound : std::max(bound_, mip->bound);
    if (mip->status == SolveStatus::kInfeasible) return true;
    if (!Proven() && TimeLeft() > 0.05 && !interrupted_) {
      exact_internal::SearchOutcome again = Search(0);
      // A finished search's schedule is taken on a tie: it does not depend
      // on where a time limit stopped CBC.
      if (again.schedule && (!schedule_ || again.schedule->makespan_us < schedule_->makespan_us ||
                             (again.complete && again.schedule->makespan_us <= schedule_->makespan_us))) {
        schedule_ = again.schedule;
      }
      if (std::isfinite(again.bound)) bound_ = std::isnan(bound_) ? again.bound : std::max(bound_, again.bound);
      complete_ = again.complete;
    }
    result_.notes.push_back(fmt::format("the exact search stopped at its node limit ({}; --search-nodes); {}",
                                        options_.exact.node_limit,
                                        Proven() ? fmt::format("the paper's MIP on {} completed the proof",
                                                               result_.mip ? result_.mip->backend : "CBC")
                                                 : std::string("neither method proved the gap in time")));
    return false;
  }

  SolveResult Infeasible() {
    result_.status = SolveStatus::kInfeasible;
    result_.termination = Termination::kProvedInfeasible;
    result_.seconds = deadline_.ElapsedSeconds();
    return std::move(result_);
  }

  // Status, objective, bound and gap of the best schedule: optimal when a
  // proven bound is within the gap, whichever method proved it.
  SolveResult Conclude(Termination stopped) {
    if (!schedule_) {
      result_.status = SolveStatus::kNoSolution;
      result_.termination = stopped;
      result_.bound = bound_;
      result_.seconds = deadline_.ElapsedSeconds();
      return std::move(result_);
    }
    result_.objective = schedule_->makespan_us;
    if (!std::isnan(bound_)) {
      bound_ = std::min(bound_, result_.objective);
      if (complete_ && result_.objective - bound_ <= 1e-9 * std::max(1.0, result_.objective)) {
        bound_ = result_.objective;  // the same schedule, summed two ways
      }
      result_.bound = bound_;
      result_.gap = result_.objective > 1e-12 ? (result_.objective - bound_) / result_.objective
                                              : (result_.objective - bound_ <= 1e-12 ? 0.0 : 1.0);
    }
    result_.status = Proven() ? SolveStatus::kOptimal : SolveStatus::kFeasible;
    result_.termination = Proven() ? Termination::kProved : stopped;
    result_.schedule = std::move(schedule_);
    result_.seconds = deadline_.ElapsedSeconds();
    return std::move(result_);
  }

  const Problem& pr_;
  const SolveOptions& options_;
  const Deadline& deadline_;
  const std::vector<std::vector<int>> cand_;
  int threads_ = 1;
  SolveResult result_;
  std::optional<Schedule> schedule_;
  double bound_ = std::numeric_limits<double>::quiet_NaN();
  bool complete_ = false;
  bool interrupted_ = false;
};

Result<SolveResult> SolveStrong(const Problem& pr, const SolveOptions& options, const Deadline& deadline) {
  return StrongSolve(pr, options, deadline).Solve();
}

class ExactSolver final : public Solver {
 public:
  ExactSolver() {
    info_.name = "exact";
    info_.summary =
        "exact search: series decomposition, branch-and-bound, sequencing search (energy: the paper's MIP)";
    info_.family = MethodFamily::kExact;
    info_.objectives = {Objective::kLatency, Objective::kEnergy, Objective::kThroughput};
    info_.proves_optimality = true;
    info_.time_limit = true;
    info_.shared_adcs = true;
    info_.reprogram = true;
    info_.docs = "docs/ilp.md";
  }
  const MethodInfo& info() const override { return info_; }
  // Energy is the paper's MIP on CBC; latency falls back to it when the
  // search spends a node limit without a proof (options.exact.node_limit 0:
  // the search alone).
  bool UsesCbc(Objective objective, const SolveOptions& options) const override {
    return objective == Objective::kEnergy || (objective == Objective::kLatency && options.exact.node_limit > 0);
  }
  Result<SolveResult> SolveValidated(const Problem& pr, const SolveOptions& options,
                                     const Deadline& deadline) const override {
    HETPLAN_RETURN_IF_ERROR(mip_internal::CheckMipBackend(options));
    if (pr.objective == Objective::kEnergy) HETPLAN_RETURN_IF_ERROR(mip_internal::CheckPowers(pr));
    if (pr.objective == Objective::kEnergy && TimedResources(*pr.costs)) {
      return Error(ErrorCode::kUnsupported,
                   "solver 'exact' plans a shared ADC pool or reprogramming for the latency objective only (energy "
                   "goes through the paper's MIP, which has neither); use --objective latency, a one-request "
                   "baseline, or remove shared_adcs and reprogram");
    }
    if (pr.graph->size() == 0) return mip_internal::EmptyProblemResult("strong");
    if (pr.objective == Objective::kThroughput) return backends::SolveThroughput(pr, options, deadline);
    if (pr.objective == Objective::kLatency) return SolveStrong(pr, options, deadline);
    SolveResult result;
    result.notes.push_back("the strong formulation covers the latency objective; energy is solved with the paper's");
    return mip_internal::SolvePaperMip(pr, options, deadline, std::move(result), nullptr);
  }

 private:
  MethodInfo info_;
};

}  // namespace

namespace backends {
std::unique_ptr<Solver> MakeExactSolver() { return std::make_unique<ExactSolver>(); }
}  // namespace backends
}  // namespace hetplan
