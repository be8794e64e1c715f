// What a planning call returns. As in HiGHS, the outcome of a run is kept
// apart from failure: "the time limit stopped it at a 3 % gap" is a
// SolveResult; "the problem is malformed" is an error Status. The status says
// what the returned schedule is worth, the termination why the method
// stopped; per-family statistics sit in their own sub-structs.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/plan/options.h"
#include "hetplan/plan/problem.h"

namespace hetplan {

enum class SolveStatus {
  kOptimal,     // proven optimal within the gap tolerance
  kFeasible,    // a limit was reached with an incumbent; see gap
  kInfeasible,  // proven infeasible
  kNoSolution,  // a limit was reached without any incumbent
  kHeuristic,   // produced by a heuristic: no optimality claim
};
std::string ToString(SolveStatus s);

// Why the method stopped. Its names (docs/schedule-format.md, solver.termination) share none with SolveStatus's
// since schedule format version 3: a status says what the schedule is, a termination why the method stopped.
enum class Termination {
  kProved,           // "proved": the search finished and proved the gap (or the model's optimum)
  kTimeLimit,        // "time_limit": SolveOptions::time_limit_s ran out
  kNodeLimit,        // "node_limit": ExactOptions::node_limit ran out with no time left to go on
  kCompleted,        // "completed": a heuristic ran to completion, with nothing to prove
  kProvedInfeasible, // "proved_infeasible": no schedule exists
  kInterrupted,      // "interrupted": stopped on request (SolveOptions::interrupt)
  kNumerical,        // "numerical": the solver stopped on numerical trouble (the notes say what)
};
std::string ToString(Termination t);

// The CIM paper's MIP as built for CBC ("mip", or the exact search's fallback).
struct MipStats {
  int variables = 0;
  int constraints = 0;
  double big_m = 0;
  std::string backend;  // the MIP solver that ran, with its version ("CBC 2.10.8", "HiGHS 1.16.0")
};

// The exact search's effort ("exact").
struct ExactStats {
  int segments = 0;         // after the series decomposition
  int largest_segment = 0;  // operators in the largest one
  int searches = 0;         // segment searches
  int64_t nodes = 0;        // branch-and-bound nodes over all searches
  bool node_limit_reached = false;
  bool mip_fallback = false;  // the paper's MIP was run on the instance too
};

// BIDENT's mapping: the search's own prediction under its accounting.
struct MappingStats {
  TransferAccounting accounting = TransferAccounting::kConservative;
  ChainAlgorithm algorithm = ChainAlgorithm::kDp;
  // Parallel mode: BIDENT's Σ over phases of the max adjusted branch.
  double predicted_latency_us = 0;
  std::optional<double> predicted_energy_uj;
  // Whole model on one PU under the same accounting: "<pu>_only_us",
  // "<pu>_only_uj", "best_single_us", "best_single_uj", "cpu_only_us".
  std::map<std::string, double> references;
  std::string best_latency_pu, best_energy_pu;
  bool parallel = false;     // the intra-model parallel mode (else sequential)
  bool chain = false;        // the graph is a chain
  int parallel_phases = 0;
  int shared_pu_phases = 0;  // parallel mode: phases whose branches share a PU
};

// BIDENT's two-request search ("map_concurrent").
struct ConcurrentStats {
  ConcurrentSpace space = ConcurrentSpace::kJoint;
  ChainAlgorithm algorithm = ChainAlgorithm::kDijkstra;
  bool solo_steps = false;
  int64_t states = 0;       // states in the space
  int64_t expanded = 0;     // states the search settled
  int64_t transitions = 0;  // relaxations
  int64_t coexec_entries = 0;
  double predicted_latency_us = 0;
  std::optional<double> predicted_energy_uj;
};

struct SolveResult {
  std::string solver;  // the method's canonical name
  SolveStatus status = SolveStatus::kNoSolution;
  Termination termination = Termination::kCompleted;
  std::optional<Schedule> schedule;
  double objective = std::numeric_limits<double>::quiet_NaN();
  double bound = std::numeric_limits<double>::quiet_NaN();
  double gap = std::numeric_limits<double>::quiet_NaN();
  double seconds = 0;
  // The method's variant as written to the schedule file ("strong", "paper",
  // "sequential dp", ...); empty for the baselines.
  std::string formulation;
  std::vector<std::string> notes;  // e.g. which parts are heuristic

  std::optional<MipStats> mip;
  std::optional<ExactStats> exact;
  std::optional<MappingStats> mapping;
  std::optional<ConcurrentStats> concurrent;
};

}  // namespace hetplan
