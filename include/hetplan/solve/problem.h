// The solver facade: a Problem (graph + costs + objective), the Schedule every
// solver returns, and the Solver interface with a registry by name (OR-Tools
// math_opt style). The facade validates a Problem before any backend sees it.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/cost/cost_model.h"
#include "hetplan/graph/op_graph.h"
#include "hetplan/util/status.h"

namespace hetplan {

enum class Objective { kLatency, kEnergy };
Result<Objective> ParseObjective(std::string_view text);
std::string ToString(Objective o);

struct Problem {
  const OpGraph* graph = nullptr;
  const CostModel* costs = nullptr;
  Objective objective = Objective::kLatency;
  // With the energy objective: makespan ≤ cap.
  std::optional<double> latency_cap_us;
};

// Checks sizes agree, every operator is supported somewhere (the error names
// the operator), costs are finite and ≥ 0, capacities ≥ 0.
Status ValidateProblem(const Problem& p);

struct ScheduledOp {
  int device = -1;
  double start_us = 0;
  double finish_us = 0;
  double slowdown = 1.0;  // finish − start = cost × slowdown
  int request = 0;        // concurrent mode: which request the operator belongs to
};

struct Schedule {
  std::vector<ScheduledOp> ops;
  double makespan_us = 0;
  std::optional<double> energy_uj;  // null when a used PU has no power
};

// Σ latency × power over operators; nullopt when any used PU lacks power_w.
std::optional<double> ScheduleEnergy(const Problem& p, const Schedule& s);

enum class SolveStatus {
  kOptimal,     // proven optimal within the gap tolerance
  kFeasible,    // a limit was reached with an incumbent; see gap
  kInfeasible,  // proven infeasible
  kNoSolution,  // a limit was reached without any incumbent
  kHeuristic,   // produced by a heuristic: no optimality claim
};
std::string ToString(SolveStatus s);

struct SolveOptions {
  double time_limit_s = 600;   // the CIM paper's limit
  double relative_gap = 1e-4;  // stop when (z_inc − z_bound)/|z_inc| ≤ this
  int threads = 0;             // 0 = all cores
  bool warm_start = true;      // start from the best heuristic schedule
  // "ilp" backend: "strong" (exact search, latency objective; the default) or
  // "paper" (the CIM paper's MIP on CBC); see solvers.h.
  std::string formulation = "strong";
  // "strong": branch-and-bound nodes the exact search may spend before the
  // paper's MIP is tried on the instance too (0: no limit, search only).
  // A node count, not a time, so that where it stops is repeatable.
  int64_t search_node_limit = 100000;
  std::string write_lp;        // export the model (for Gurobi, HiGHS, SCIP)
  std::string write_mps;
  bool log = false;            // solver log on stderr
};

struct SolveResult {
  std::string solver;
  SolveStatus status = SolveStatus::kNoSolution;
  std::optional<Schedule> schedule;
  double objective = std::numeric_limits<double>::quiet_NaN();
  double bound = std::numeric_limits<double>::quiet_NaN();
  double gap = std::numeric_limits<double>::quiet_NaN();
  double seconds = 0;
  int variables = 0;
  int constraints = 0;
  double big_m = 0;
  std::string formulation;
  std::vector<std::string> notes;  // e.g. which parts are heuristic
};

class Solver {
 public:
  virtual ~Solver() = default;
  virtual std::string name() const = 0;
  // `problem` has passed ValidateProblem.
  virtual Result<SolveResult> SolveValidated(const Problem& problem, const SolveOptions& options) const = 0;
};

// Registry of solvers by name ("ilp", ...). Backends register themselves.
void RegisterSolver(std::unique_ptr<Solver> solver);
const Solver* FindSolver(const std::string& name);
std::vector<std::string> SolverNames();

// The facade: validates, then calls the named backend.
Result<SolveResult> Solve(const std::string& solver, const Problem& problem, const SolveOptions& options);

}  // namespace hetplan
