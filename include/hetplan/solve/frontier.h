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
  Termination termination = Termination::kProved;  // why it stopped, when not complete
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
// budget beyond which nothing can change). A throughput problem's frontier
// is the smallest II per budget, copies of weights counted against it (its
// steps' makespan_us is the II, their schedules cyclic; docs/throughput.md);
// its budget of saturation counts every operator's useful copies. The PU's capacity in the problem
// is ignored; the other PUs keep theirs. options: time_limit_s, relative_gap,
// threads, exact.node_limit (spent, the search resumes without it while time
// is left) and interrupt. Errors: not a spatial PU, a negative budget, the
// energy objective, two requests, a shared ADC pool or reprogramming.
Result<CrossbarFrontier> SolveCrossbarFrontier(const Problem& problem, int pu, const SolveOptions& options,
                                               std::optional<int64_t> max_crossbars = std::nullopt);

// One point of a stream's (II, latency) front: the smallest II at which one
// input can take at most `latency_us`, and the least latency at that II.
struct StreamFrontPoint {
  double ii_us = 0;
  double latency_us = 0;
  bool optimal = false;  // both proven (within the gap)
  Schedule schedule;     // cyclic, at ii_us, one input in latency_us
};

struct StreamFront {
  // II increasing, latency strictly decreasing: the first point is the
  // smallest II (with the least latency it allows), the last the fastest
  // input any stream allows.
  std::vector<StreamFrontPoint> points;
  // Every point proven and the walk reached the end: no plan's input is
  // faster than the last point's.
  bool complete = false;
  int solves = 0;
  double seconds = 0;
};

// The exact (II, latency) front of a throughput problem at its budgets, by
// alternating solves: the smallest II under a latency cap (the exact method:
// its search, heuristic and the MIP with a latency bound), then the least
// latency at that II (the same MIP minimising the latency), then a cap just
// below it. Needs the MIP with a latency bound: a graph whose model would
// exceed 20,000 rows is refused (kUnsupported, naming the size). At most
// `max_points` points; options.time_limit_s for the whole walk.
Result<StreamFront> SolveStreamFront(const Problem& problem, const SolveOptions& options, int max_points);

// One point of the latency–energy Pareto front: the least energy of any
// schedule whose makespan is at most `latency_cap_us`, attained by
// `schedule` (makespan_us ≤ the cap).
struct EnergyPoint {
  double makespan_us = 0;
  double energy_uj = 0;
  double energy_bound_uj = 0;  // the solver's proven lower bound on the energy at the cap
  std::optional<double> latency_cap_us;  // nullopt: no cap (the front's least-energy end)
  bool optimal = false;                  // the energy is proven least at the cap (within the gap)
  SolveResult result;                    // the solve that found it (schedule, status, bound)
};

struct EnergyFront {
  // Makespans increasing, energies strictly decreasing: the first point is
  // the fastest (the least energy at the latency optimum), the last the
  // least energy of all.
  std::vector<EnergyPoint> points;
  double min_makespan_us = 0;  // the latency-optimal makespan (the front's other end)
  bool min_makespan_optimal = false;
  // Every point was proven and the walk reached the latency-optimal end (or
  // proved no faster schedule exists): the front is exact, no point missing.
  bool complete = false;
  std::string stopped;  // why not complete: "time_limit", "max_points", or empty
  int solves = 0;
  double seconds = 0;
};

// The latency–energy Pareto front of a one-request problem by the
// ε-constraint method: from the least-energy schedule, repeatedly the least
// energy with the makespan capped just below the last point's (relative
// step 1e-6), until no schedule is faster than the latency optimum. Each
// step is one energy-objective solve of `method` (the exact method solves
// the energy objective with the paper's MIP), so each point is exact when
// its solve proves it. Energy = Σ latency × power over operators (one
// request: no slowdowns), so every PU that runs an operator needs power_w.
// At most `max_points` points; options.time_limit_s bounds the whole walk,
// each solve getting half the time left (a point whose solve stops there is
// kept, not optimal, and the walk goes on from it).
Result<EnergyFront> SolveLatencyEnergyFront(const Problem& problem, const SolveOptions& options, int max_points = 64,
                                           const std::string& method = "exact");

}  // namespace hetplan
