// Closing the loop between the planner's host model and what `hetplan run`
// measures (`hetplan partition|map --refine N`, docs/deployment.md#refine): plan,
// split, run, fit the measured PUs' costs to the measured segments, plan
// again, until the host prediction agrees with the measurement or N
// re-plans are spent. Every round's plan, prediction and measurement is kept.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hetplan/app/plan.h"
#include "hetplan/deploy/run.h"
#include "hetplan/plan/plan_file.h"

namespace hetplan {

// One measured segment on a measured PU, as the fit sees it.
struct SegmentSample {
  double predicted_us = 0;  // Σ of its operators' costs in the unrefined cost model
  bool entered = false;     // it reads a tensor from another PU (a boundary the cost model charges)
  double run_us = 0;        // measured Session::Run (median)
};

// run_us ≈ scale × predicted_us + boundary_us × entered, by least squares
// over every sample of one PU so far, with scale > 0 and boundary ≥ 0. Where
// the samples cannot separate the two (no entered segment, or entered ones
// only and all of one predicted size), the boundary stays `prior_boundary_us` and
// only the scale is fitted.
struct SegmentFit {
  double scale = 1;
  double boundary_us = 0;
  int samples = 0;
  bool boundary_fitted = false;  // false: boundary_us is the prior
};
SegmentFit FitSegments(const std::vector<SegmentSample>& samples, double prior_boundary_us);

// `base` with each fitted PU's operator costs multiplied by its scale and its
// boundary cost set to the fitted one (CostModel::ChargeBoundary by the
// difference). PUs without a fit keep their costs.
CostModel ApplySegmentFits(const CostModel& base, const std::map<int, SegmentFit>& fits);

struct RefineOptions {
  int rounds = 1;           // re-plans after the first plan (--refine N)
  double tolerance = 0.05;  // converged when |measured host / predicted host − 1| ≤ this
  RunOptions run;           // how each round's split plan is run
  std::string work_dir;     // each round's split goes to work_dir/round-<r>; empty: a temporary folder, removed
  // Called after each round is measured (from the calling thread).
  std::function<void(int round, double predicted_host_us, double measured_host_us)> progress;
};

struct RefineRound {
  int round = 0;
  PlanFile plan;            // this round's plan, on this round's costs
  std::string status;       // the solver's
  double makespan_us = 0;   // as planned on this round's costs
  int segments = 0;
  double predicted_host_us = 0, measured_host_us = 0;
  double host_error = 0;    // measured / predicted − 1
  // The plan's makespan list-scheduled in its own order on the final
  // calibration (every round's samples): how the rounds compare with each other.
  double calibrated_makespan_us = 0;
  std::map<std::string, SegmentFit> fits;  // the calibration this round's costs came from (empty: round 0)
};

struct RefineOutput {
  std::vector<RefineRound> rounds;
  int best = 0;            // the round with the least calibrated makespan (ties: the earlier one)
  bool converged = false;  // the last round's host prediction is within the tolerance
  std::string stopped;     // why the loop ended, in words
  PlanOutput plan;         // the best round's plan; its schedule carries the history (schedule["refine"])
};

// The loop (latency objective only). `pp` holds the first round's costs.
// Only PUs whose costs were measured here (`cost: profile` or a table) are
// refitted; modelled ones (CIM, roofline) keep theirs. Errors: no measured
// PU, a plan without a schedule, a split or run failure (naming the round),
// a bad option.
Result<RefineOutput> Refine(const PreparedProblem& pp, const PlanSpec& spec, const RefineOptions& options);

}  // namespace hetplan
