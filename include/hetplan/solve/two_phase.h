// Two phases of one graph planned together (LLM generation's prefill and
// decode step, docs/generation.md): each phase its own placement and
// schedule, the spatial PUs' crossbars shared: a weight that either phase
// keeps on a spatial PU holds its crossbars for both. Objective: the first
// phase's makespan + weight × the second's, or other coefficients, with an
// optional cap on the second's (TwoPhaseProblem).
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
#include <optional>
#include <string>

#include "hetplan/plan/problem.h"
#include "hetplan/plan/result.h"
#include "hetplan/solve/solver.h"

namespace hetplan {

struct TwoPhaseProblem {
  TwoPhaseProblem(const OpGraph* g, const CostModel* a, const CostModel* b, double n)
      : graph(g), first(a), second(b), weight(n) {}
  const OpGraph* graph = nullptr;
  const CostModel* first = nullptr;   // e.g. the prefill's costs
  const CostModel* second = nullptr;  // e.g. one decode step's; the same PUs, operators and edges
  double weight = 1;                  // the second phase runs this many times (N decode steps) a request
  // The objective: first_coef × the first makespan + second_coef × the
  // second's (default: weight, the request's latency); with second_cap_us,
  // only pairs whose second makespan is at most that (a TPOT bound).
  double first_coef = 1;
  std::optional<double> second_coef;
  std::optional<double> second_cap_us;
  double SecondCoef() const { return second_coef.value_or(weight); }
};

struct TwoPhaseResult {
  // Each phase's schedule, feasible on its own costs; the status, bound and
  // gap those of the phase alone (optimal only when it is optimal alone).
  SolveResult first, second;
  SolveStatus status = SolveStatus::kNoSolution;  // optimal: proven for the two phases together
  Termination termination = Termination::kCompleted;
  double objective = 0;  // first_coef × first makespan + second_coef × second makespan
  double bound = 0;      // a lower bound on every pair of schedules that share the crossbars
  double gap = 0;
  int64_t nodes = 0, solves = 0;
  double seconds = 0;
};

// The operators a schedule rewrites on PU p, the crossbars they write each
// run, and the most they hold at once.
struct Rewrites {
  int64_t operators = 0, written = 0, peak = 0;
};
Rewrites RewritesOn(const Schedule& s, const CostModel& c, int p);

// Only `exact` plans rewrites under the search's branches: any other method
// with a reprogramming PU is refused (one line naming the PU).
Status CheckTwoPhaseMethod(const CostModel& c, const std::string& method);

// Errors: phases whose cost models differ in shape, a method that
// CheckTwoPhaseMethod refuses, a method that plans two
// requests, a phase with no schedule at the root, or a second phase whose
// shortest schedule exceeds second_cap_us (the message gives it).
Result<TwoPhaseResult> SolveTwoPhase(const TwoPhaseProblem& problem, const std::string& method,
                                     const SolveOptions& options);

}  // namespace hetplan
