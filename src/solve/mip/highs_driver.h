// Internal to solve/: HiGHS behind mip/backend.h. This pair of files is the
// only place that includes HiGHS' headers, and it is compiled only when the
// build found HiGHS (HETPLAN_HAVE_HIGHS; scripts/setup_highs.sh).
#pragma once

#include <string>
#include <vector>

#include "solve/mip/backend.h"

namespace hetplan::mip_internal {

// "HiGHS 1.16.0".
std::string HighsVersionText();

// Solves `mb` with HiGHS' branch-and-cut (presolve, cuts, heuristics on) with
// `threads` threads until `deadline` to options.relative_gap, from `warm`
// when given. Calls are serialised process-wide (HiGHS' task scheduler is
// global and sized once per thread count).
Result<MipOutcome> RunHighs(const ModelBuilder& mb, const SolveOptions& options, int threads,
                            const std::vector<double>* warm, const Deadline& deadline);

}  // namespace hetplan::mip_internal
