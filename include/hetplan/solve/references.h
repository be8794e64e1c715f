// The reference schedules every plan is compared with, computed one way for
// every method and command: for one request, each PU running the whole model
// (list-scheduled, the same simulator as the baselines); for two requests
// (BIDENT §IV-A), both back to back on one PU and each whole on its own PU.
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
  // "best_serial_us", "best_serial_uj", "naive_multi_pu_us",
  // "naive_multi_pu_uj". Keys are absent where no PU qualifies.
  std::map<std::string, double> values;
  std::string best_pu;         // the PU of best_single_us / best_serial_us
  std::string best_energy_pu;  // of best_single_uj / best_serial_uj
};

References ComputeReferences(const Problem& problem);

}  // namespace hetplan
