// The built-in solver backends and their registration.
//
// Backends live in a static library, so they are registered by an explicit
// call rather than by static initialisers (which the linker drops when no
// symbol of the object file is referenced).
#pragma once

#include <memory>

#include "hetplan/solve/problem.h"

namespace hetplan {

// Registers every built-in backend ("ilp", ...) exactly once. Thread-safe and
// idempotent; FindSolver, SolverNames and Solve call it first, so callers
// never need to.
void RegisterBuiltinSolvers();

// "ilp": the CIM paper's ILP (Klein et al., §IV-B, eqs. 5–14) generalised to
// K processing units, solved with COIN-OR CBC (formulation "paper"), and an
// exact search for the same problem (formulation "strong").
//  * x_{v,p} binary for each (v, p) where v is supported on p and, on a
//    spatial PU, fits its capacity alone; Σ_p x_{v,p} = 1.
//  * s_v ≥ 0 continuous; f_v = s_v + Σ_p T_{v,p} x_{v,p} is substituted.
//  * Edge (u, v): s_v ≥ f_u + transfer. With two PUs and a symmetric transfer,
//    the paper's z_e ≥ |x_u − x_v|; otherwise y_{e,p,q} ≥ x_{u,p} + x_{v,q} − 1
//    per ordered PU pair with a positive transfer. z and y are continuous in
//    [0, 1]: they are only bounded from below by integral expressions, so
//    they take 0/1 values in every optimal vertex.
//  * Parallelizable pairs {u, v} with a common serial PU: one ordering binary
//    o_{u,v} shared by all serial PUs (the order only matters on the PU both
//    run on; eqs. 11–12 are relaxed by M on every other PU).
//  * Spatial capacity: Σ_v crossbars(v, p) x_{v,p} ≤ capacity (eq. 14).
//  * M = Σ_v max_p T_{v,p} + Σ_e max_{p≠q} transfer (eq. 13); s_v, T ≤ M.
//  * Added valid inequality (not in the paper): T ≥ Σ_v T_{v,p} x_{v,p} for
//    each serial PU p, which lifts the LP bound on wide graphs.
// Objectives: latency min T (T ≥ f_v for sinks); energy min Σ x T power,
// with T ≤ latency_cap_us when the problem gives one.
// Formulation "strong" (latency objective; energy falls back to "paper"):
// the same optimisation problem solved exactly without a MIP (docs/ilp.md):
// the graph is cut at operators that every other operator precedes or
// follows and no transfer jumps over, each segment is searched by a
// branch-and-bound over PU assignments (critical-path, serial-load with a
// crossbar knapsack, and preemptive Jackson bounds) whose promising leaves
// get an exact list-schedule search (Giffler–Thompson branching, dominance
// between partial schedules), and a DP over (PU of the cut, crossbars used)
// joins the segments. "optimal" means the search finished within
// options.relative_gap, which the reported bound proves; at a time limit it
// returns its best schedule and a valid bound. Single-threaded, no CBC.
// Warm start: the best of a few list-scheduled heuristics, handed to CBC as
// its incumbent. The returned schedule is re-timed with ListSchedule, so it
// satisfies every constraint exactly. Calls into CBC's command-line driver
// are serialised process-wide (its argument parser keeps global state); each
// solve uses options.threads CBC threads (repeatable parallel search). CBC's
// preprocessing is off (it crashes CBC 2.10.8 when a time limit ends the
// search right after a warm start).
std::unique_ptr<Solver> MakeIlpCbcSolver();

}  // namespace hetplan
