// Two phases of one graph planned together (LLM generation's prefill and
// decode step, docs/generation.md): each phase its own placement and
// schedule, the spatial PUs' crossbars shared: a weight that either phase
// keeps on a spatial PU holds its crossbars for both. Objective: the first
// phase's makespan + weight × the second's.
//
// Exact by branch and bound over the shared weights, with any registered
// one-request method solving the phases (the exact search proves them): a
// node fixes some (operator, spatial PU) pairs resident (their crossbars
// reserved, free to both phases) and some excluded; its relaxation plans each
// phase alone within what is left, so the sum of their bounds bounds every
// request below the node. When the weights the two phases keep fit together
// the node is solved; otherwise it branches on a weight one phase keeps:
// resident, or excluded. Nodes are taken lowest bound first.
#pragma once

#include <cstdint>
#include <string>

#include "hetplan/plan/problem.h"
#include "hetplan/plan/result.h"
#include "hetplan/solve/solver.h"

namespace hetplan {

struct TwoPhaseProblem {
  const OpGraph* graph = nullptr;
  const CostModel* first = nullptr;   // e.g. the prefill's costs
  const CostModel* second = nullptr;  // e.g. one decode step's; the same PUs, operators and edges
  double weight = 1;                  // the second phase counts this many times (N decode steps)
};

struct TwoPhaseResult {
  // Each phase's schedule, feasible on its own costs; the status, bound and
  // gap those of the phase alone (optimal only when it is optimal alone).
  SolveResult first, second;
  SolveStatus status = SolveStatus::kNoSolution;  // optimal: proven for the two phases together
  Termination termination = Termination::kCompleted;
  double objective = 0;  // first makespan + weight × second makespan
  double bound = 0;      // a lower bound on every pair of schedules that share the crossbars
  double gap = 0;
  int64_t nodes = 0, solves = 0;
  double seconds = 0;
};

// Errors: phases whose cost models differ in shape, a method that plans two
// requests, or a phase with no schedule at the root.
Result<TwoPhaseResult> SolveTwoPhase(const TwoPhaseProblem& problem, const std::string& method,
                                     const SolveOptions& options);

}  // namespace hetplan
