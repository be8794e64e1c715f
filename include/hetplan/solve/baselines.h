// Baselines from the two papers' evaluations (docs/baselines.md), registered
// as planners (solve/solver.h) and priced with the same CostModel as every
// other method. Each picks an operator→PU assignment by its own rule and is
// list-scheduled (solve/list_schedule.h) into a Schedule that passes the
// independent validator; none claims optimality (status heuristic).
//
// One request:
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
// Two requests (BIDENT §IV-A), on a problem whose graph holds both requests
// (Problem::requests) and whose operator costs already include their copies:
//  pair_serial          both requests back to back on the one PU that
//                       minimises the objective (homogeneous serial)
//  pair_naive_multi_pu  each request whole on one PU, the two running
//                       concurrently (the same PU serialises them), the best
//                       ordered pair at its best interleaving; priced with
//                       the concurrent mapping's co-execution cost model, as
//                       the plans it is compared with are
//
// Operators a rule would put on a PU that cannot run them (unsupported, or
// more crossbars than the PU has left) fall back as docs/baselines.md says.
// A rule that does not apply to a problem (single:cim when the CIM cannot run
// every operator, axonn without power_w, hetero with more than
// hetero_max_pus PUs, no PU that runs a whole request) is a kUnsupported
// error that says why.
#pragma once

#include <functional>
#include <vector>

#include "hetplan/plan/problem.h"

namespace hetplan {

// The capacity repair of the greedy rules (greedy, type_policy, and the warm
// starts of the exact search and the MIP): while a spatial PU holds more
// crossbars than its capacity, it keeps the operators with the highest
// saving per crossbar (saving by `cost` over their best other PU) and moves
// the rest to their best other PU with room; what still overflows goes to
// the cheapest serial PU that runs it. `cost(v, p)` prices v on p (+inf where
// it cannot run); without it, the problem's objective (latency or energy).
// `assignment` must be supported everywhere. The result may still exceed a
// capacity when no serial PU can take the overflow (check FitsCapacity).
void RepairCapacity(const Problem& problem, std::vector<int>& assignment,
                    const std::function<double(int, int)>& cost = {});

}  // namespace hetplan
