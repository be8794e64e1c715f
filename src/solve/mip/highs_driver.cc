// HiGHS behind mip/highs_driver.h (compiled only with HETPLAN_HAVE_HIGHS).
#include "solve/mip/highs_driver.h"

#if HETPLAN_HAVE_HIGHS

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <mutex>

#include <Highs.h>

namespace hetplan::mip_internal {
namespace {

// HiGHS' task scheduler is process-wide and sized by the first run's
// `threads`; a run with another count must reset it first, and no run may be
// in flight meanwhile. One run at a time, as with CBC.
std::mutex& HighsMutex() {
  static std::mutex mu;
  return mu;
}
int g_scheduler_threads = 0;  // guarded by HighsMutex(); 0: not started

double ToHighsBound(double x) {
  if (x >= kLpInf) return kHighsInf;
  if (x <= -kLpInf) return -kHighsInf;
  return x;
}

// Columns, rows (row-wise), bounds, objective and integrality.
HighsStatus PassModel(const ModelBuilder& mb, Highs& highs) {
  const HighsInt ncols = mb.num_cols(), nrows = mb.num_rows();
  std::vector<HighsInt> starts, indices, integrality(ncols);
  std::vector<double> values, row_lo, row_hi, col_lo(ncols), col_hi(ncols);
  starts.reserve(nrows + 1);
  for (const Row& r : mb.rows()) {
    starts.push_back(static_cast<HighsInt>(indices.size()));
    for (const Term& t : r.terms) {
      indices.push_back(t.col);
      values.push_back(t.coef);
    }
    row_lo.push_back(ToHighsBound(r.lo));
    row_hi.push_back(ToHighsBound(r.hi));
  }
  starts.push_back(static_cast<HighsInt>(indices.size()));
  for (HighsInt j = 0; j < ncols; ++j) {
    col_lo[j] = ToHighsBound(mb.lo()[j]);
    col_hi[j] = ToHighsBound(mb.hi()[j]);
    integrality[j] = static_cast<HighsInt>(mb.integer()[j] ? HighsVarType::kInteger : HighsVarType::kContinuous);
  }
  return highs.passModel(ncols, nrows, static_cast<HighsInt>(indices.size()),
                         static_cast<HighsInt>(MatrixFormat::kRowwise), static_cast<HighsInt>(ObjSense::kMinimize),
                         /*offset=*/0.0, mb.obj().data(), col_lo.data(), col_hi.data(), row_lo.data(), row_hi.data(),
                         starts.data(), indices.data(), values.data(), integrality.data());
}

// Whether the objective is bounded below by the columns' bounds alone.
bool ObjectiveBoundedBelow(const ModelBuilder& mb) {
  for (int j = 0; j < mb.num_cols(); ++j) {
    if (mb.obj()[j] > 0 && mb.lo()[j] <= -kLpInf) return false;
    if (mb.obj()[j] < 0 && mb.hi()[j] >= kLpInf) return false;
  }
  return true;
}

// The options of one run; false when HiGHS refused one.
bool SetOptions(const ModelBuilder& mb, const SolveOptions& options, int threads, const Deadline& deadline,
                Highs& highs) {
  // The log reaches stderr through the callback (RunHighs), never stdout.
  bool ok = highs.setOptionValue("output_flag", options.log) == HighsStatus::kOk;
  ok = ok && highs.setOptionValue("log_to_console", false) == HighsStatus::kOk;
  ok = ok && highs.setOptionValue("threads", threads) == HighsStatus::kOk;
  ok = ok && highs.setOptionValue("mip_rel_gap", options.relative_gap) == HighsStatus::kOk;
  // HiGHS' absolute gap (default 1e-6) would let it call a solution optimal
  // that is not within options.relative_gap of its bound on small objectives;
  // 1e-10 is CBC's default allowable gap.
  ok = ok && highs.setOptionValue("mip_abs_gap", 1e-10) == HighsStatus::kOk;
  if (deadline.limited()) {
    ok = ok && highs.setOptionValue("time_limit", std::max(deadline.SecondsLeft(), 1e-3)) == HighsStatus::kOk;
  }
  // The rows in µs are met to 1e-9 (HiGHS' default, 1e-6 and 1e-7, lets T
  // sit 1e-6 µs below the schedule's makespan, which then shows as a gap
  // above a zero tolerance once the schedule is re-timed exactly).
  ok = ok && highs.setOptionValue("primal_feasibility_tolerance", 1e-9) == HighsStatus::kOk;
  ok = ok && highs.setOptionValue("mip_feasibility_tolerance",
                                  mb.integer_tolerance > 0 ? mb.integer_tolerance : 1e-9) == HighsStatus::kOk;
  return ok;
}

MipOutcome Outcome(const Highs& highs, const SolveOptions& options, int ncols, bool bounded_below) {
  MipOutcome out;
  out.solver = HighsVersionText();
  const HighsModelStatus status = highs.getModelStatus();
  out.status = static_cast<int>(status);
  out.status_text = highs.modelStatusToString(status);
  const HighsInfo& info = highs.getInfo();
  const HighsSolution& sol = highs.getSolution();
  if (info.primal_solution_status == kSolutionStatusFeasible && sol.value_valid &&
      static_cast<int>(sol.col_value.size()) == ncols) {
    out.solution = sol.col_value;
    out.objective = info.objective_function_value;
  }
  if (std::isfinite(info.mip_dual_bound)) out.bound = info.mip_dual_bound;
  out.proven_optimal = out.solution && status == HighsModelStatus::kOptimal;
  // Presolve may only tell "unbounded or infeasible"; with the objective
  // bounded below by the columns' bounds (every model here), that is
  // infeasible.
  out.proven_infeasible = !out.solution && (status == HighsModelStatus::kInfeasible ||
                                            (status == HighsModelStatus::kUnboundedOrInfeasible && bounded_below));
  out.time_limit_reached = status == HighsModelStatus::kTimeLimit;
  out.interrupted = status == HighsModelStatus::kInterrupt ||
                    (options.interrupt != nullptr && options.interrupt->load() && !out.proven_optimal);
  return out;
}

}  // namespace

std::string HighsVersionText() { return fmt::format("HiGHS {}", highsVersion()); }

Result<MipOutcome> RunHighs(const ModelBuilder& mb, const SolveOptions& options, int threads,
                            const std::vector<double>* warm, const Deadline& deadline) {
  try {
    std::lock_guard<std::mutex> lock(HighsMutex());
    if (options.interrupt != nullptr && options.interrupt->load()) {
      MipOutcome out;  // stopped while waiting for the lock (or before): no search at all
      out.solver = HighsVersionText();
      out.interrupted = true;
      return out;
    }
    if (g_scheduler_threads != 0 && g_scheduler_threads != threads) Highs::resetThreadScheduler();
    g_scheduler_threads = threads;
    Highs highs;
    if (!SetOptions(mb, options, threads, deadline, highs)) {
      return Error(ErrorCode::kInternal, "mip: HiGHS refused an option (threads {}, gap {})", threads,
                   options.relative_gap);
    }
    if (PassModel(mb, highs) == HighsStatus::kError) {
      return Error(ErrorCode::kInternal, "mip: HiGHS refused the model ({} columns, {} rows)", mb.num_cols(),
                   mb.num_rows());
    }
    bool warm_taken = false;
    if (warm != nullptr) {
      HighsSolution start;
      start.col_value = *warm;
      start.value_valid = true;
      warm_taken = highs.setSolution(start) != HighsStatus::kError;
    }
    if (options.interrupt != nullptr || options.log) {
      const std::atomic<bool>* interrupt = options.interrupt;
      highs.setCallback([interrupt](int type, const std::string& message, const HighsCallbackOutput* /*out*/,
                                    HighsCallbackInput* in, void* /*data*/) {
        if (type == kCallbackLogging) {
          std::fputs(message.c_str(), stderr);
          return;
        }
        const bool interruptible = type == kCallbackMipInterrupt || type == kCallbackSimplexInterrupt;
        if (interruptible && interrupt != nullptr && in != nullptr && interrupt->load(std::memory_order_relaxed)) {
          in->user_interrupt = true;
        }
      });
      if (options.log) highs.startCallback(kCallbackLogging);
      if (interrupt != nullptr) {
        // Between nodes, and inside the LP solves (the root's can be long).
        highs.startCallback(kCallbackMipInterrupt);
        highs.startCallback(kCallbackSimplexInterrupt);
      }
    }
    const HighsStatus run = highs.run();
    MipOutcome out = Outcome(highs, options, mb.num_cols(), ObjectiveBoundedBelow(mb));
    if (run == HighsStatus::kError && !out.solution && !out.proven_infeasible) {
      return Error(ErrorCode::kInternal, "mip: HiGHS failed (model status '{}')", out.status_text);
    }
    out.warm_taken = warm_taken;
    out.threads = threads;
    return out;
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, "mip: HiGHS failed: {}", e.what());
  }
}

}  // namespace hetplan::mip_internal

#endif  // HETPLAN_HAVE_HIGHS
