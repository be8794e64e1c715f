// Baselines from the two papers' evaluations (docs/baselines.md), priced with
// the same CostModel as every solver. Each picks an operator→PU assignment by
// its own rule and is list-scheduled (sim/simulator.h, ListSchedule) into a
// Schedule that passes the independent validator; none claims optimality
// (status kHeuristic).
//
//  single:<pu>   every operator on one PU (when it supports all and they fit)
//  best_single   the best of the single-PU schedules under the objective
//  greedy        each operator on its fastest PU (lowest energy with the
//                energy objective), spatial capacity repaired, list-scheduled
//  type_policy   each operator type on the PU that wins for that type over
//                this model (static per-type policy), capacity repaired
//  neurosurgeon  one split point on a topological order: prefix on the host,
//                suffix offloaded to one other PU (best split and PU)
//  hetero        OpenVINO HETERO: each operator to the first PU of a priority
//                list that can take it; every ordering tried, best reported
//  haxconn       HaX-CoNN: at most one PU switch (prefix on PU a, suffix on
//                PU b, any ordered pair), chosen under model-level contention
//                factors
//  axonn         AxoNN: contiguous layer blocks over the two fastest PUs, at
//                most `axonn_max_switches` switches, minimum energy (needs
//                power_w on both PUs)
//
// Operators a rule would put on a PU that cannot run them (unsupported, or
// more crossbars than the PU has left) fall back as docs/baselines.md says.
#pragma once

#include <string>
#include <vector>

#include "hetplan/solve/problem.h"
#include "hetplan/util/status.h"

namespace hetplan {

struct BaselineOptions {
  int axonn_max_switches = 2;  // AxoNN: block boundaries between the two PUs
  int hetero_max_pus = 7;      // HETERO tries K! orderings; refuse larger K
};

// The baseline names RunBaseline accepts, besides "single:<pu>".
std::vector<std::string> BaselineNames();
// True for a name RunBaseline accepts (including "single:<pu>" for any pu).
bool IsBaselineName(const std::string& name);

// Runs baseline `name` on `problem` (which must pass ValidateProblem). The
// result has status kHeuristic, a schedule, objective = makespan (latency)
// or energy (energy objective), solver = name and notes that say what was
// chosen (split point, ordering, PU pair). With the energy objective and a
// latency cap, candidates over the cap are discarded; when none is left the
// status is kNoSolution with a note. Errors: an unknown name
// (kInvalidArgument), or a baseline that does not apply to this problem
// (kUnsupported: e.g. single:cim on a platform whose CIM cannot run every
// operator, axonn without power_w, hetero with more than hetero_max_pus PUs);
// the message says why.
Result<SolveResult> RunBaseline(const std::string& name, const Problem& problem, const BaselineOptions& options = {});

// BIDENT's two-request baselines (§IV-A), on a problem that holds both
// requests in one graph: request 0's operators are ids [0, n0), request 1's
// ids [n0, n) (MapConcurrent's ConcurrentPlan graph and costs, whose operator
// costs already include their copies):
//  pair_serial          both requests back to back on the one PU that
//                       minimises the objective (homogeneous serial)
//  pair_naive_multi_pu  each request whole on one PU, the two running
//                       concurrently (the same PU serialises them), the best
//                       ordered pair; priced without contention, as BIDENT
//                       prices it
// The schedule's operators carry their request. Errors: an unknown name or
// n0 out of range (kInvalidArgument); no PU runs a whole request
// (kUnsupported).
std::vector<std::string> PairBaselineNames();
Result<SolveResult> RunPairBaseline(const std::string& name, const Problem& both, int n0);

// Registers every name of BaselineNames() with the solver registry (so that
// Solve("greedy", ...) and `hetplan partition --solver greedy` work).
// Idempotent and thread-safe.
void RegisterBaselineSolvers();

// The greedy capacity repair shared by greedy and type_policy: while a
// spatial PU holds more crossbars than its capacity, it keeps the operators
// with the highest saving per crossbar (objective saving over their best
// other PU) and moves the rest to their best other PU with room. Exposed for
// tests. `assignment` must be supported everywhere.
void RepairCapacity(const Problem& problem, std::vector<int>& assignment);

}  // namespace hetplan
