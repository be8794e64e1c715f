// The reference schedules (references.h).
#include "hetplan/solve/references.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "hetplan/solve/list_schedule.h"
#include "hetplan/solve/mapping.h"
#include "hetplan/util/limits.h"
#include "solve/mapping/internal.h"

namespace hetplan {
namespace {


References OneRequest(const Problem& problem) {
  const CostModel& c = *problem.costs;
  References r;
  std::optional<double> best_uj;
  for (int p = 0; p < c.num_pus(); ++p) {
    auto s = SinglePuSchedule(problem, p);
    if (!s) continue;
    const std::string& name = c.pu(p).name;
    r.values[name + "_only_us"] = s->makespan_us;
    if (c.pu(p).kind == PuKind::kCpu && !r.values.contains("cpu_only_us")) r.values["cpu_only_us"] = s->makespan_us;
    if (!r.values.contains("best_single_us") || s->makespan_us < r.values["best_single_us"]) {
      r.values["best_single_us"] = s->makespan_us;
      r.best_pu = name;
    }
    if (s->energy_uj) {
      r.values[name + "_only_uj"] = *s->energy_uj;
      if (!best_uj || *s->energy_uj < *best_uj) {
        best_uj = *s->energy_uj;
        r.best_energy_pu = name;
      }
    }
  }
  if (best_uj) r.values["best_single_uj"] = *best_uj;
  return r;
}

// The naive multi-PU references: every placement (request 0 whole on p,
// request 1 whole on q) priced by the concurrent search's own model
// (mapping_internal::BestPlacement), the best latency and the best energy.
// Absent when the cost model cannot be flattened for the mapping search.
void AddNaive(const Problem& problem, const CoexecCosts* given, References& r) {
  const RequestSet& req = *problem.requests;
  Result<MappingCosts> mc = BuildMappingCosts(*problem.graph, *problem.costs);
  if (!mc.ok()) return;
  const CoexecCosts own = given != nullptr ? CoexecCosts()
                                           : BuildCoexecCosts(*problem.graph, req.chain0, *problem.graph, req.chain1,
                                                              mc->pus(), problem.costs->coexec());
  const CoexecCosts& coexec = given != nullptr ? *given : own;
  double naive_us = kInf, naive_uj = kInf;
  for (int p = 0; p < mc->num_pus(); ++p) {
    for (int q = 0; q < mc->num_pus(); ++q) {
      auto by_latency = mapping_internal::BestPlacement(*mc, req.chain0, *mc, req.chain1, coexec,
                                                        Objective::kLatency, p, q);
      if (by_latency) naive_us = std::min(naive_us, by_latency->latency_us);
      auto by_energy =
          mapping_internal::BestPlacement(*mc, req.chain0, *mc, req.chain1, coexec, Objective::kEnergy, p, q);
      if (by_energy && by_energy->energy_uj) naive_uj = std::min(naive_uj, *by_energy->energy_uj);
    }
  }
  if (naive_us < kInf) r.values["naive_multi_pu_us"] = naive_us;
  if (naive_uj < kInf) r.values["naive_multi_pu_uj"] = naive_uj;
}

References TwoRequests(const Problem& problem, const CoexecCosts* coexec) {
  const CostModel& c = *problem.costs;
  const RequestSet& req = *problem.requests;
  const int k = c.num_pus();
  References r;
  std::vector<double> sum0(static_cast<size_t>(k), 0.0), sum1(static_cast<size_t>(k), 0.0);
  std::vector<double> own_uj(static_cast<size_t>(k), 0.0);  // energy beyond power × time
  for (int p = 0; p < k; ++p) {
    for (int v : req.chain0) sum0[p] += c.supported(v, p) ? c.latency_us(v, p) : kInf;
    for (int v : req.chain1) sum1[p] += c.supported(v, p) ? c.latency_us(v, p) : kInf;
    for (int v = 0; v < c.num_ops(); ++v) own_uj[p] += c.op_energy_uj(v, p);
  }
  auto power = [&](int p) {
    return c.pu(p).power_w ? *c.pu(p).power_w : std::numeric_limits<double>::quiet_NaN();
  };
  double best_us = kInf, best_uj = kInf;
  bool have_cpu = false;
  for (int p = 0; p < k; ++p) {
    const std::string& name = c.pu(p).name;
    const double serial = sum0[p] + sum1[p];
    if (serial < kInf) {
      r.values[name + "_serial_us"] = serial;
      if (!have_cpu && !c.pu(p).accelerator()) {
        r.values["cpu_only_us"] = serial;
        have_cpu = true;
      }
      if (serial < best_us) {
        best_us = serial;
        r.best_pu = name;
      }
      if (std::isfinite(power(p))) {
        const double uj = serial * power(p) + own_uj[p];
        r.values[name + "_serial_uj"] = uj;
        if (uj < best_uj) {
          best_uj = uj;
          r.best_energy_pu = name;
        }
      }
    }
  }
  if (best_us < kInf) r.values["best_serial_us"] = best_us;
  if (best_uj < kInf) r.values["best_serial_uj"] = best_uj;
  AddNaive(problem, coexec, r);
  return r;
}

}  // namespace

References ComputeReferences(const Problem& problem) {
  return problem.requests == nullptr ? OneRequest(problem) : TwoRequests(problem, nullptr);
}

References ComputeReferences(const Problem& problem, const CoexecCosts& coexec) {
  return problem.requests == nullptr ? OneRequest(problem) : TwoRequests(problem, &coexec);
}

}  // namespace hetplan
