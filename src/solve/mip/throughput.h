// Internal to solve/: the throughput objective's MIP on CBC, shared by the
// unbounded model (mip/throughput.cc) and the one with a latency bound
// (mip/throughput_modulo.cc), which adds start times and the modulo pairs to it.
#pragma once

#include <cstdint>
#include <vector>

#include "hetplan/plan/deadline.h"
#include "hetplan/plan/options.h"
#include "hetplan/plan/problem.h"
#include "hetplan/plan/result.h"
#include "solve/mip/backend.h"
#include "solve/mip/model.h"

namespace hetplan::mip_internal {

// One way to run operator v: a serial PU, or a spatial PU with `copies`
// copies of its weights taking `us` per input; `col` its binary.
struct MipOption {
  int pu;
  int64_t copies;
  double us;
  int col;
};

// A transfer the model may charge: edge e's from PU p to PU q (p ≠ q,
// positive time), its column y ≥ X_{u,p} + X_{v,q} − 1.
struct MipCut {
  int p, q;
  double us;
  int col;
};

// The model of the II without a latency bound: options, loads, links,
// budgets; II's column bounded to [ii_lo, ii_hi].
struct ThroughputModel {
  ModelBuilder mb;
  int ii = -1;
  std::vector<std::vector<MipOption>> opt;  // per operator
  std::vector<std::vector<MipCut>> cuts;    // per edge
};
ThroughputModel BuildThroughputModel(const Problem& pr, double ii_lo, double ii_hi);

// The assignment and the copies a solution of `m` chooses.
void ReadAssignment(const ThroughputModel& m, const std::vector<double>& x, std::vector<int>* a,
                    std::vector<int64_t>* copies);

// CBC's bound into `result`; where CBC found no solution, also its status and
// why it stopped, and false.
bool TakeOutcome(const MipOutcome& out, SolveResult* result);

// The MIP with --max-latency (mip/throughput_modulo.cc): start times, transfer starts
// and one integer per pair of tasks that may share a serial resource (its
// offset in IIs, times the II by binary expansion), so that CBC chooses the
// assignment, the copies and the cyclic schedule together. The II is sought
// in [ii_lo, ii_hi]: ii_lo a proven bound, ii_hi a plan's II or a bound on
// every plan that meets the cap. kUnsupported when the model would be
// larger than `max_rows`.
// `min_latency`: minimise one input's latency instead, the II kept within
// [ii_lo, ii_hi] (the result's objective is then the latency).
Result<SolveResult> SolveModuloMip(const Problem& pr, const SolveOptions& options, const Deadline& deadline,
                                   double ii_lo, double ii_hi, int64_t max_rows, bool min_latency = false);

// An II no plan that meets the cap needs to exceed: one input's schedule run
// without overlap keeps every load within its latency, save the fitted
// boundary costs.
double IntervalCeiling(const Problem& pr);

}  // namespace hetplan::mip_internal
