// Internal to solve/: the CIM paper's MIP solved on CBC, shared by the "mip"
// method and the exact search's fallback (exact/solver.cc).
#pragma once

#include "hetplan/plan/deadline.h"
#include "hetplan/plan/options.h"
#include "hetplan/plan/problem.h"
#include "hetplan/plan/result.h"

namespace hetplan::mip_internal {

// A graph without operators: the empty schedule, optimal.
SolveResult EmptyProblemResult(const std::string& formulation);

// The energy objective prices every PU an operator may run on; refuses a PU
// without power_w (kInvalidArgument naming it and the fix).
Status CheckPowers(const Problem& pr);

// The MIP on CBC, warm-started from the best heuristic schedule or from
// `incumbent` when that is better; `result` carries the notes so far. The
// returned schedule is CBC's, or the same assignment and order re-timed by
// the list scheduler when that is no longer. Status optimal only when CBC
// finished within the gap; the bound never exceeds the returned objective.
// The throughput objective's MIP (mip/throughput.cc).
Result<SolveResult> SolveThroughputMip(const Problem& pr, const SolveOptions& options, const Deadline& deadline);

Result<SolveResult> SolvePaperMip(const Problem& pr, const SolveOptions& options, const Deadline& deadline,
                                  SolveResult result, const Schedule* incumbent);

}  // namespace hetplan::mip_internal
