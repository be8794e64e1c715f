// The latency-optimal makespan over every crossbar budget of one spatial PU,
// from one run of the exact search (docs/frontier.md): the search keeps, per
// segment, the best length for every crossbar count, and its dynamic
// programme over segments joins them per total count, so the whole step
// function comes out of the solve that answers one budget.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/plan/options.h"
#include "hetplan/plan/problem.h"
#include "hetplan/plan/result.h"

namespace hetplan {

// One step of the curve: at every budget in [crossbars, next step's
// crossbars) the best schedule found is `schedule`.
struct FrontierStep {
  int64_t crossbars = 0;       // the smallest budget at which `makespan_us` was reached
  double makespan_us = 0;      // of `schedule`
  // A proven lower bound on the optimum at every budget of the step (the
  // bound at its last budget: the bound does not rise with the budget).
  double lower_bound_us = 0;
  // makespan_us is within the relative gap of the optimum at every budget
  // of the step.
  bool optimal = false;
  Schedule schedule;
};

struct FrontierBound {
  int64_t crossbars = 0;  // from this budget on (until the next entry)
  double lower_bound_us = 0;
};

struct CrossbarFrontier {
  int pu = -1;               // the swept PU
  int64_t max_crossbars = 0;  // the largest budget swept
  // Crossbars every operator the PU supports would take at once: beyond it
  // no budget changes anything.
  int64_t crossbars_for_all = 0;
  std::vector<FrontierStep> steps;     // crossbars increasing, makespans decreasing
  std::vector<FrontierBound> bounds;   // the proven lower bound by budget, nonincreasing
  bool complete = false;               // the search finished: every step is optimal
  Termination termination = Termination::kOptimal;  // why it stopped, when not complete
  ExactStats stats;
  double seconds = 0;

  // The best makespan found at budget b (nullopt: no schedule at b).
  std::optional<double> MakespanAt(int64_t b) const;
  // The proven lower bound at budget b (+inf where nothing fits).
  double LowerBoundAt(int64_t b) const;
  // The step that holds at budget b (nullptr: no schedule at b).
  const FrontierStep* StepAt(int64_t b) const;
};

// Sweeps PU `pu` (a spatial PU) of a one-request latency problem over the
// budgets 0..max_crossbars (nullopt: every operator's crossbars at once, the
// budget beyond which nothing can change). The PU's capacity in the problem
// is ignored; the other PUs keep theirs. options: time_limit_s, relative_gap,
// threads, exact.node_limit (spent, the search resumes without it while time
// is left) and interrupt. Errors: not a spatial PU, a negative budget, the
// energy objective, two requests.
Result<CrossbarFrontier> SolveCrossbarFrontier(const Problem& problem, int pu, const SolveOptions& options,
                                               std::optional<int64_t> max_crossbars = std::nullopt);

}  // namespace hetplan
