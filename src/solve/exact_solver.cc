// The "exact" method: the exact search of exact_search.h for the latency
// objective, with the paper's MIP on CBC as its fallback when the node budget
// runs out, and for the energy objective (which the search does not cover).
// "optimal" means a proven bound is within options.relative_gap, whichever
// method proved it; at a time limit it returns its best schedule and the
// best valid bound.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "hetplan/solve/solver.h"
#include "solve/backends.h"
#include "solve/cbc_driver.h"
#include "solve/exact_search.h"
#include "solve/mip_model.h"
#include "solve/mip_solver.h"
#include "solve/warm_start.h"

namespace hetplan {
namespace {

using Clock = std::chrono::steady_clock;
using mip_internal::BuildModel;
using mip_internal::Candidates;
using mip_internal::IlpModel;
using mip_internal::WriteModels;
using warm_start::BestHeuristic;

double SecondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The exact search for the latency objective (exact_search.h: series
// decomposition, assignment-first branch-and-bound, sequencing search). No
// MIP is solved unless the node budget runs out; --write-lp/--write-mps still
// export the paper's model of the instance.
Result<SolveResult> SolveStrong(const Problem& pr, const SolveOptions& options, Clock::time_point t0) {
  const CostModel& c = *pr.costs;
  SolveResult result;
  result.formulation = "strong";
  result.exact = ExactStats{};
  if (!options.mip.write_lp.empty() || !options.mip.write_mps.empty()) {
    IlpModel m = BuildModel(pr);
    HETPLAN_RETURN_IF_ERROR(WriteModels(m.mb, options));
    result.notes.push_back("the exported LP/MPS model is the paper's formulation of this instance");
  }
  const std::vector<std::vector<int>> cand = Candidates(c);
  Clock::time_point deadline = Clock::time_point::max();
  if (std::isfinite(options.time_limit_s)) {
    const double left = std::max(options.time_limit_s - SecondsSince(t0), 0.0);
    if (left < 1e6) {
      deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(left));
    }
  }
  bool interrupted = false;
  // Threads for independent segment searches and the local search beside
  // them (0 = every core); the result does not depend on how many.
  const int threads =
      options.threads > 0 ? options.threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  auto search = [&](int64_t node_limit) {
    exact_internal::SearchOutcome out = exact_internal::SolveLatencyBySearch(
        pr, cand, deadline, options.relative_gap, node_limit, options.interrupt, threads);
    ExactStats& st = *result.exact;
    st.segments = out.stats.segments;
    st.largest_segment = out.stats.largest_segment;
    st.searches += out.stats.searches;
    st.nodes += out.stats.nodes;
    st.node_limit_reached = st.node_limit_reached || out.stats.budget_exhausted;
    interrupted = interrupted || out.stats.interrupted;
    result.notes.push_back(fmt::format(
        "strong: {} segment{} (largest {} operators), {} searches, {} branch-and-bound nodes{}", out.stats.segments,
        out.stats.segments == 1 ? "" : "s", out.stats.largest_segment, out.stats.searches, out.stats.nodes,
        out.stats.budget_exhausted ? fmt::format(", stopped at the node limit ({})", node_limit) : ""));
    return out;
  };
  exact_internal::SearchOutcome out = search(options.exact.node_limit);
  if (out.infeasible) {
    result.status = SolveStatus::kInfeasible;
    result.termination = Termination::kInfeasible;
    result.seconds = SecondsSince(t0);
    return result;
  }
  std::optional<Schedule> schedule = out.schedule;
  double bound = std::isfinite(out.bound) ? out.bound : std::numeric_limits<double>::quiet_NaN();
  bool complete = out.complete;
  if (!complete && options.warm_start) {
    // Stopped early: the best heuristic schedule may still beat the search's.
    auto warm = BestHeuristic(pr, cand);
    if (warm && (!schedule || warm->schedule.makespan_us < schedule->makespan_us)) {
      schedule = warm->schedule;
      result.notes.push_back(fmt::format("heuristic schedule ({}) better than the search's so far", warm->label));
    }
  }
  auto proven = [&]() {
    if (!schedule || std::isnan(bound)) return false;
    const double z = schedule->makespan_us;
    return z - bound <= options.relative_gap * std::max(z, 1e-12) + 1e-9;
  };
  auto time_left = [&]() {
    return std::isfinite(options.time_limit_s) ? options.time_limit_s - SecondsSince(t0)
                                               : std::numeric_limits<double>::infinity();
  };
  // The search spent its node budget without a proof: graphs with many
  // parallel branches on one serial PU can be easier for the MIP's LP
  // bound. The paper's MIP gets a share of the time left (half of it, at
  // most four times what the search took and at least 5 s), warm-started
  // from the best schedule so far; if it does not settle the instance
  // either, the search resumes without a node limit for the rest. Every
  // bound either method proves is valid for the same problem, so the best
  // is kept.
  const bool fallback = out.stats.budget_exhausted && !proven() && time_left() > 0.05;
  if (fallback) {
    result.exact->mip_fallback = true;
    SolveOptions paper = options;
    const double left = time_left();
    const double share = std::min(left / 2, std::max(5.0, 4 * SecondsSince(t0)));
    paper.time_limit_s = SecondsSince(t0) + share;
    auto mip = mip_internal::SolvePaperMip(pr, paper, t0, SolveResult{}, schedule ? &*schedule : nullptr);
    if (!mip.ok()) return mip.status();
    for (const std::string& note : mip->notes) result.notes.push_back("paper MIP fallback: " + note);
    result.mip = mip->mip;
    if (mip->schedule && (!schedule || mip->schedule->makespan_us < schedule->makespan_us)) {
      schedule = mip->schedule;
    }
    if (!std::isnan(mip->bound)) bound = std::isnan(bound) ? mip->bound : std::max(bound, mip->bound);
    if (mip->status == SolveStatus::kInfeasible) {
      result.status = SolveStatus::kInfeasible;
      result.termination = Termination::kInfeasible;
      result.seconds = SecondsSince(t0);
      return result;
    }
    if (!proven() && time_left() > 0.05 && !interrupted) {
      exact_internal::SearchOutcome again = search(0);
      // A finished search's schedule is taken on a tie: it does not depend
      // on where a time limit stopped CBC.
      if (again.schedule && (!schedule || again.schedule->makespan_us < schedule->makespan_us ||
                             (again.complete && again.schedule->makespan_us <= schedule->makespan_us))) {
        schedule = again.schedule;
      }
      if (std::isfinite(again.bound)) bound = std::isnan(bound) ? again.bound : std::max(bound, again.bound);
      complete = again.complete;
    }
    result.notes.push_back(fmt::format("the exact search stopped at its node limit ({}; --search-nodes); {}",
                                       options.exact.node_limit,
                                       proven() ? "the paper's MIP on CBC completed the proof"
                                                : "neither method proved the gap in time"));
  }
  // Why it stopped, when it did not prove the gap.
  const Termination stopped = interrupted                                           ? Termination::kInterrupted
                              : out.stats.budget_exhausted && !fallback            ? Termination::kNodeLimit
                                                                                   : Termination::kTimeLimit;
  if (!schedule) {
    result.status = SolveStatus::kNoSolution;
    result.termination = stopped;
    result.bound = bound;
    result.seconds = SecondsSince(t0);
    return result;
  }
  result.objective = schedule->makespan_us;
  if (!std::isnan(bound)) {
    bound = std::min(bound, result.objective);
    if (complete && result.objective - bound <= 1e-9 * std::max(1.0, result.objective)) {
      bound = result.objective;  // the same schedule, summed two ways
    }
    result.bound = bound;
    result.gap = result.objective > 1e-12 ? (result.objective - bound) / result.objective
                                          : (result.objective - bound <= 1e-12 ? 0.0 : 1.0);
  }
  // Optimal when a proven bound is within the gap, whichever method proved it.
  result.status = proven() ? SolveStatus::kOptimal : SolveStatus::kFeasible;
  result.termination = proven() ? Termination::kOptimal : stopped;
  result.schedule = std::move(schedule);
  result.seconds = SecondsSince(t0);
  return result;
}


class ExactSolver final : public Solver {
 public:
  ExactSolver() {
    info_.name = "exact";
    info_.summary =
        "exact search: series decomposition, branch-and-bound, sequencing search (energy: the paper's MIP on CBC)";
    info_.family = MethodFamily::kExact;
    info_.objectives = {Objective::kLatency, Objective::kEnergy};
    info_.proves_optimality = true;
    info_.time_limit = true;
    info_.docs = "docs/ilp.md";
  }
  const MethodInfo& info() const override { return info_; }
  // Energy is the paper's MIP on CBC; latency falls back to it when the
  // search spends a node limit without a proof (options.exact.node_limit 0:
  // the search alone).
  bool UsesCbc(Objective objective, const SolveOptions& options) const override {
    return objective == Objective::kEnergy || options.exact.node_limit > 0;
  }
  Result<SolveResult> SolveValidated(const Problem& pr, const SolveOptions& options) const override {
    const auto t0 = Clock::now();
    if (pr.objective == Objective::kEnergy) HETPLAN_RETURN_IF_ERROR(mip_internal::CheckPowers(pr));
    if (pr.graph->size() == 0) return mip_internal::EmptyProblemResult("strong");
    if (pr.objective == Objective::kLatency) return SolveStrong(pr, options, t0);
    SolveResult result;
    result.notes.push_back("the strong formulation covers the latency objective; energy is solved with the paper's");
    return mip_internal::SolvePaperMip(pr, options, t0, std::move(result), nullptr);
  }

 private:
  MethodInfo info_;
};

}  // namespace

namespace backends {
std::unique_ptr<Solver> MakeExactSolver() { return std::make_unique<ExactSolver>(); }
}  // namespace backends
}  // namespace hetplan
