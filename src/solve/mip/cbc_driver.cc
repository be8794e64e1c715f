// COIN-OR CBC behind mip/cbc_driver.h.
#include "solve/mip/cbc_driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>

// CBC, Clp, Osi and CoinUtils headers (coinor-libcbc-dev).
#include <CbcConfig.h>
#include <CbcEventHandler.hpp>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <ClpSimplex.hpp>
#include <ClpSolve.hpp>
#include <CoinError.hpp>
#include <CoinMessageHandler.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

namespace hetplan::mip_internal {
namespace {

// CbcMain1 parses its arguments through process-wide globals
// (CbcOrClpRead_mode, ...), so concurrent calls would corrupt each other.
std::mutex& CbcMutex() {
  static std::mutex mu;
  return mu;
}

int CbcCallback(CbcModel* /*model*/, int /*where_from*/) { return 0; }

// Stops the branch-and-bound at its next node or heuristic once
// SolveOptions::interrupt reads true, keeping the incumbent (CBC then reports
// status 5, "stopped on event"). CbcMain1 solves a copy of the model, which
// clones this handler, so the atomic is held by pointer. The events chosen
// are those where CBC checks for "stop"; the rest (cuts, solutions about to
// be accepted) are left alone so that no incumbent is dropped.
class InterruptHandler final : public CbcEventHandler {
 public:
  explicit InterruptHandler(const std::atomic<bool>* interrupt) : interrupt_(interrupt) {}
  CbcAction event(CbcEvent which) override {
    const bool stoppable = which == node || which == treeStatus || which == solution ||
                           which == heuristicSolution || which == afterHeuristic;
    return stoppable && interrupt_->load(std::memory_order_relaxed) ? stop : noAction;
  }
  CbcEventHandler* clone() const override { return new InterruptHandler(*this); }

 private:
  const std::atomic<bool>* interrupt_;
};

Status WriteModelFile(OsiClpSolverInterface& solver, const std::string& path, bool mps) {
  // CBC's writers append extensions and gzip MPS files; write a temporary
  // file and move it, so that the file lands exactly at `path`.
  const std::string tmp = path + ".hetplan-tmp";
  std::error_code ec;
  if (mps) {
    // ClpModel::writeMps writes uncompressed; formatType 1 = extra accuracy.
    if (solver.getModelPtr()->writeMps(tmp.c_str(), 1, 2, 0.0) != 0 || !std::filesystem::exists(tmp, ec)) {
      std::filesystem::remove(tmp, ec);
      return Error(ErrorCode::kIoError, "{}: cannot write the MPS model; check that the folder exists and is writable",
                   path);
    }
  } else {
    std::FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) {
      return Error(ErrorCode::kIoError, "{}: cannot write the LP model; check that the folder exists and is writable",
                   path);
    }
    solver.writeLp(f, /*epsilon=*/1e-300, /*numberAcross=*/8, /*decimals=*/15, /*objSense=*/0.0, /*useRowNames=*/true);
    const bool bad = std::ferror(f) != 0;
    if (std::fclose(f) != 0 || bad) {
      std::filesystem::remove(tmp, ec);
      return Error(ErrorCode::kIoError, "{}: error while writing the LP model (disk full?)", path);
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return Error(ErrorCode::kIoError, "{}: cannot move the model file into place: {}", path, ec.message());
  }
  return Status::Ok();
}

// Loads the model into `solver`: columns, rows, integrality and names.
void LoadModel(const ModelBuilder& mb, OsiClpSolverInterface* solver) {
  // Clp's initialSolve installs its own SIGINT handler for the time of each
  // LP solve unless told not to ("special option 2": interrupt handling off,
  // for thread safety): it would swallow Ctrl-C (the CLI's, and Python's,
  // whose handler then never sees it) and only cut that LP short. Stopping
  // is SolveOptions::interrupt's job (InterruptHandler below).
  ClpSolve no_signal_handler;  // OsiClpSolverInterface's default, but for that option
  no_signal_handler.setSpecialOption(2, 1);
  solver->setSolveOptions(no_signal_handler);
  const int ncols = mb.num_cols(), nrows = mb.num_rows();
  std::vector<int> starts, lengths, indices;
  std::vector<double> values, row_lo, row_hi;
  std::vector<std::string> row_names;
  starts.reserve(nrows + 1);
  for (const Row& r : mb.rows()) {
    starts.push_back(static_cast<int>(indices.size()));
    lengths.push_back(static_cast<int>(r.terms.size()));
    for (const Term& t : r.terms) {
      indices.push_back(t.col);
      values.push_back(t.coef);
    }
    row_lo.push_back(r.lo);
    row_hi.push_back(r.hi);
    row_names.push_back(r.name);
  }
  starts.push_back(static_cast<int>(indices.size()));
  CoinPackedMatrix matrix(/*colordered=*/false, ncols, nrows, static_cast<CoinBigIndex>(indices.size()),
                          values.data(), indices.data(), starts.data(), lengths.data());
  solver->loadProblem(matrix, mb.lo().data(), mb.hi().data(), mb.obj().data(), row_lo.data(), row_hi.data());
  for (int j = 0; j < ncols; ++j) {
    if (mb.integer()[j]) solver->setInteger(j);
  }
  solver->setStrParam(OsiProbName, "hetplan");
  solver->getModelPtr()->copyNames(row_names, mb.names());
}

}  // namespace

Status WriteModels(const ModelBuilder& mb, const SolveOptions& options) {
  try {
    CoinMessageHandler handler(stderr);
    handler.setLogLevel(0);
    OsiClpSolverInterface solver;
    solver.passInMessageHandler(&handler);
    LoadModel(mb, &solver);
    if (!options.mip.write_lp.empty()) HETPLAN_RETURN_IF_ERROR(WriteModelFile(solver, options.mip.write_lp, false));
    if (!options.mip.write_mps.empty()) HETPLAN_RETURN_IF_ERROR(WriteModelFile(solver, options.mip.write_mps, true));
  } catch (const CoinError& e) {
    return Error(ErrorCode::kInternal, "ilp: CBC failed in {}::{}: {}", e.className(), e.methodName(), e.message());
  }
  return Status::Ok();
}

std::string CbcVersionText() { return std::string("CBC ") + CBC_VERSION; }

bool CbcHasThreads() { return CbcModel::haveMultiThreadSupport(); }

int CbcThreads(const SolveOptions& options) {
  const int threads = ThreadCount(options);
  return threads > 1 && !CbcHasThreads() ? 1 : threads;
}

Result<MipOutcome> RunCbc(const ModelBuilder& mb, const SolveOptions& options, int threads,
                          const std::vector<double>* warm, const Deadline& deadline) {
  const int ncols = mb.num_cols();
  try {
    CoinMessageHandler handler(stderr);
    handler.setLogLevel(options.log ? 1 : 0);
    OsiClpSolverInterface solver;
    solver.passInMessageHandler(&handler);
    LoadModel(mb, &solver);
    if (!options.mip.write_lp.empty()) HETPLAN_RETURN_IF_ERROR(WriteModelFile(solver, options.mip.write_lp, false));
    if (!options.mip.write_mps.empty()) HETPLAN_RETURN_IF_ERROR(WriteModelFile(solver, options.mip.write_mps, true));

    std::lock_guard<std::mutex> lock(CbcMutex());
    if (options.interrupt != nullptr && options.interrupt->load()) {
      // Stopped while waiting for the CBC lock (or before): no search at all.
      MipOutcome out;
      out.solver = CbcVersionText();
      out.interrupted = true;
      return out;
    }
    CbcModel model(solver);
    model.passInMessageHandler(&handler);
    bool warm_taken = false;
    if (warm != nullptr) {
      // The full solution as CBC's incumbent. With the check on, CBC
      // verifies it (integers fixed, LP re-solved) and keeps the basis,
      // which in our measurements also halved the time to the first node
      // compared with setMIPStart.
      double obj = 0;
      for (int j = 0; j < ncols; ++j) obj += mb.obj()[j] * (*warm)[j];
      model.setBestSolution(warm->data(), ncols, obj, /*checkSolution=*/true);
      warm_taken = model.bestSolution() != nullptr;
    }
    if (options.interrupt != nullptr) {
      InterruptHandler handler_for_stop(options.interrupt);
      model.passInEventHandler(&handler_for_stop);  // CBC keeps a clone
    }
    // useSignalHandler_ stays false (the default of CbcSolverUsefulData):
    // CbcMain1 would otherwise install its own SIGINT handler and keep it
    // after returning, taking Ctrl-C away from the CLI and from Python.
    CbcSolverUsefulData data;
    data.noPrinting_ = !options.log;
    CbcMain0(model, data);
    // CglPreProcess is off: CBC 2.10.8 crashes in CglPreProcess::postProcess
    // when the time limit ends the search right after a MIP start (and may
    // then also lose the incumbent and report "infeasible"). Preprocessing
    // did not strengthen this big-M model in our measurements.
    // The feasibility pump is off: its mini branch-and-bound preprocesses
    // the LP, and Clp's "crunch" then asserts and aborts the process when
    // that LP shrinks to a couple of rows, as the paper's model of a small
    // graph can (coin-or/Clp#288, coin-or/Cbc#684; CBC 2.10.8 here). Every
    // solve starts from a heuristic schedule anyway.
    std::vector<std::string> args = {"hetplan", "-log",       options.log ? "1" : "0", "-slog", "0", "-preprocess",
                                     "off",     "-feasibilityPump", "off"};
    if (threads > 1) {
      // 100 + n: n threads with a repeatable search (same input, same
      // schedule, unless a time limit cuts the search short).
      args.insert(args.end(), {"-threads", std::to_string(100 + threads)});
    }
    if (deadline.limited()) {
      const double left = std::max(deadline.SecondsLeft(), 1e-3);
      args.insert(args.end(), {"-timeMode", "elapsed", "-sec", fmt::format("{:.6f}", left)});
    }
    if (mb.integer_tolerance > 0) args.insert(args.end(), {"-integerTolerance", fmt::format("{:g}", mb.integer_tolerance)});
    args.insert(args.end(), {"-ratio", fmt::format("{:g}", options.relative_gap), "-solve", "-quit"});
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    CbcMain1(static_cast<int>(argv.size()), argv.data(), model, CbcCallback, data);

    MipOutcome out;
    out.solver = CbcVersionText();
    out.threads = threads;
    out.warm_taken = warm_taken;
    out.status = model.status();
    out.secondary = model.secondaryStatus();
    out.status_text = fmt::format("{} / {}", out.status, out.secondary);
    const double* best = model.bestSolution();
    if (best != nullptr && model.getNumCols() == ncols) {
      out.solution = std::vector<double>(best, best + ncols);
      out.objective = model.getObjValue();
    }
    out.bound = model.getBestPossibleObjValue();
    // Finished (status 0) and not on a limit. Secondary 1 with an incumbent:
    // nothing beats it (the LP is infeasible under the cutoff); 2: stopped
    // on the gap tolerance.
    const bool on_limit =
        model.isSecondsLimitReached() || model.isNodeLimitReached() || model.isSolutionLimitReached();
    out.proven_optimal = out.solution && out.status == 0 && !on_limit &&
                         (out.secondary == 0 || out.secondary == 1 || out.secondary == 2);
    out.proven_infeasible = !out.solution && model.isProvenInfeasible();
    out.time_limit_reached = model.isSecondsLimitReached();
    out.interrupted = options.interrupt != nullptr && options.interrupt->load() && !out.proven_optimal;
    return out;
  } catch (const CoinError& e) {
    return Error(ErrorCode::kInternal, "ilp: CBC failed in {}::{}: {}", e.className(), e.methodName(), e.message());
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, "ilp: CBC failed: {}", e.what());
  }
}

}  // namespace hetplan::mip_internal
