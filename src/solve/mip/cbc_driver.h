// Internal to solve/: COIN-OR CBC 2.10 behind a small interface. This pair of
// files is the only place that includes CBC's headers. The MIP is solved
// through CBC's command-line driver (CbcMain0/CbcMain1) so that
// preprocessing, cuts, heuristics and threads are on; calls are serialised
// process-wide, because CbcMain1 parses its arguments through global state.
#pragma once

#include <string>
#include <vector>

#include "hetplan/plan/deadline.h"
#include "hetplan/plan/options.h"
#include "solve/mip/backend.h"
#include "solve/mip/model.h"

namespace hetplan::mip_internal {

// Writes the model where options.mip.write_lp / write_mps ask, without solving.
Status WriteModels(const ModelBuilder& mb, const SolveOptions& options);

// "CBC 2.10.8".
std::string CbcVersionText();

// Whether this CBC was built with threads.
bool CbcHasThreads();

// The CBC threads to run: options.threads (0: one per core), 1 where this
// CBC has no threads.
int CbcThreads(const SolveOptions& options);

// Solves `mb` with `threads` CBC threads (repeatable search) until
// `deadline` to options.relative_gap, from the full solution `warm` when
// given. Also writes the LP/MPS files asked for.
Result<MipOutcome> RunCbc(const ModelBuilder& mb, const SolveOptions& options, int threads,
                          const std::vector<double>* warm, const Deadline& deadline);

}  // namespace hetplan::mip_internal
