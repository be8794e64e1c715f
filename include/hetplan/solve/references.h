// The reference schedules every plan is compared with, computed one way for
// every method and command: for one request, each PU running the whole model
// (list-scheduled, the same simulator as the baselines); for two requests
// (BIDENT §IV-A), both back to back on one PU and each whole on its own PU,
// the latter priced by the concurrent mapping's own cost model (measured
// co-execution makespans while both run), so that a two-request plan and its
// references are on one scale.
#pragma once

#include <map>
#include <string>

#include "hetplan/plan/problem.h"

namespace hetplan {

struct References {
  // One request: "<pu>_only_us", "<pu>_only_uj" (with power), "cpu_only_us"
  // (the first CPU), "best_single_us", "best_single_uj".
  // Two requests (costs per operator as the problem gives them, summed along
  // each request's chain): "<pu>_serial_us", "<pu>_serial_uj", "cpu_only_us",
  // "best_serial_us", "best_serial_uj"; and "naive_multi_pu_us",
  // "naive_multi_pu_uj": request 0 whole on one PU, request 1 whole on one
  // (the same PU allowed), the best such placement at its best interleaving
  // under the concurrent search's pricing (a paired step costs its measured
  // co-execution makespan, else t0 + t1 on one PU or max(t0, t1) across PUs;
  // mapping_internal::BestPlacement). Keys are absent where no PU qualifies.
  std::map<std::string, double> values;
  std::string best_pu;         // the PU of best_single_us / best_serial_us
  std::string best_energy_pu;  // of best_single_uj / best_serial_uj
};

class CoexecCosts;  // solve/mapping.h

// Two requests: co-execution costs from the problem's cost model (its coexec
// rows matched to the requests' chains).
References ComputeReferences(const Problem& problem);
// Two requests, priced with these co-execution costs instead (indexed by the
// requests' chain positions, as MapConcurrent searches with them).
References ComputeReferences(const Problem& problem, const CoexecCosts& coexec);

}  // namespace hetplan
