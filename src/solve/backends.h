// Internal to solve/: the built-in backends, one factory per file, which
// RegisterBuiltinSolvers() (registry.cc) registers. Backends live in a static
// library, so they are registered by an explicit call rather than by static
// initialisers (which the linker drops when no symbol of the object file is
// referenced).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hetplan/solve/solver.h"
#include "hetplan/solve/throughput.h"

namespace hetplan::backends {

std::unique_ptr<Solver> MakeExactSolver();  // exact/solver.cc
// The exact method's throughput objective (stream/solver.cc).
Result<SolveResult> SolveThroughput(const Problem& pr, const SolveOptions& options, const Deadline& deadline);
// Its smallest II without a latency bound: the search until
// options.exact.node_limit nodes, then, where it has not proven the II, the
// throughput MIP on CBC in the time left; the better plan and the stronger
// bound of the two. `notes` (may be null) gets a line on what ran.
ThroughputSearchResult SmallestInterval(const Problem& pr, const SolveOptions& options,
                                               const Deadline& deadline, std::vector<std::string>* notes);
std::unique_ptr<Solver> MakeMipSolver();    // mip/solver.cc
// map, map_parallel, map_concurrent (mapping/solvers.cc).
std::vector<std::unique_ptr<Solver>> MakeMappingSolvers();
// best_single, greedy, ..., pair_serial, pair_naive_multi_pu (baselines/baselines.cc).
std::vector<std::unique_ptr<Solver>> MakeBaselineSolvers();
// single:<pu> (baselines/baselines.cc).
MethodInfo SingleFamilyInfo();
std::unique_ptr<Solver> MakeSingleSolver(const std::string& pu);

}  // namespace hetplan::backends
