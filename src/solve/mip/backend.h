// Internal to solve/: one entry point for the MIP solvers behind the paper's
// MIP, the throughput MIPs and the exact search's fallback. The backend is
// SolveOptions::mip.backend: COIN-OR CBC (mip/cbc_driver.h) or HiGHS
// (mip/highs_driver.h, only in a build that found it: HETPLAN_HAVE_HIGHS).
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/plan/deadline.h"
#include "hetplan/plan/options.h"
#include "solve/mip/model.h"

namespace hetplan::mip_internal {

// What a MIP solver returned, in the same terms for every backend.
struct MipOutcome {
  std::string solver;       // "CBC 2.10.8", "HiGHS 1.16.0": name and version
  std::string status_text;  // the solver's own status words, for the notes
  std::optional<std::vector<double>> solution;
  bool proven_optimal = false;  // finished, not on a limit, within the gap tolerance
  bool proven_infeasible = false;
  double objective = std::numeric_limits<double>::quiet_NaN();
  double bound = std::numeric_limits<double>::quiet_NaN();
  // CBC: status and secondary status of CbcModel; HiGHS: its model status, -1.
  int status = -1, secondary = -1;
  bool warm_taken = false;
  bool time_limit_reached = false;  // stopped on its time limit
  bool interrupted = false;         // SolveOptions::interrupt stopped it
  int threads = 1;                  // threads the solver was given
};

// Whether this build has `backend`.
bool MipBackendAvailable(MipBackend backend);
// "CBC 2.10.8", "HiGHS 1.16.0"; for a backend this build lacks, its name.
std::string MipBackendVersion(MipBackend backend);
// An error naming the fix when options.mip.backend is not in this build.
Status CheckMipBackend(const SolveOptions& options);

// `options` with auto resolved to CBC: the throughput MIPs, whose exact
// re-timing is tuned to CBC's tolerances (on HiGHS the re-timed II can end
// 1e-8 above HiGHS' bound, tests/solve/throughput_latency_test.cc), run on
// CBC unless HiGHS is asked for by name.
SolveOptions AutoOnCbc(const SolveOptions& options);

// Solves `mb` with options.mip.backend until `deadline` to
// options.relative_gap, from the full solution `warm` when given, with
// options.threads threads (0: one per core; CBC built without threads: 1).
// Writes the LP/MPS files options.mip asks for first.
Result<MipOutcome> RunMip(const ModelBuilder& mb, const SolveOptions& options, const std::vector<double>* warm,
                          const Deadline& deadline);

}  // namespace hetplan::mip_internal
