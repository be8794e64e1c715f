// MappingCosts and how it is built from the solver-facing cost model.
#include <cmath>

#include "hetplan/util/limits.h"
#include "hetplan/solve/mapping.h"

namespace hetplan {
namespace {


}  // namespace

MappingCosts::MappingCosts(int num_ops, std::vector<PuInfo> pus)
    : n_(num_ops),
      k_(static_cast<int>(pus.size())),
      pus_(std::move(pus)),
      accelerator_(static_cast<size_t>(k_), 0),
      power_w_(static_cast<size_t>(k_), kNaN),
      latency_(static_cast<size_t>(n_) * k_, kNaN),
      h2d_(static_cast<size_t>(n_) * k_, 0.0),
      d2h_(static_cast<size_t>(n_) * k_, 0.0),
      slowdown_(static_cast<size_t>(k_) * k_, 1.0),
      boundary_(static_cast<size_t>(k_), 0.0) {
  for (int p = 0; p < k_; ++p) {
    accelerator_[p] = pus_[p].accelerator() ? 1 : 0;
    if (pus_[p].power_w) power_w_[p] = *pus_[p].power_w;
  }
}

Result<MappingCosts> BuildMappingCosts(const OpGraph& g, const CostModel& costs) {
  const int n = g.size();
  const int k = costs.num_pus();
  if (costs.num_ops() != n) {
    return Error(ErrorCode::kInvalidArgument, "cost model has {} operators but graph '{}' has {}", costs.num_ops(),
                 g.name(), n);
  }
  for (const PuInfo& pu : costs.pus()) {
    if (pu.spatial) {
      return Error(ErrorCode::kUnsupported,
                   "PU '{}' is spatial (a crossbar budget); BIDENT mapping models serial CPU/GPU/NPU-style PUs "
                   "only; use `hetplan partition` for CIM platforms",
                   pu.name);
    }
  }
  if (costs.has_op_energy()) {
    for (int p = 0; p < k; ++p) {
      for (int v = 0; v < n; ++v) {
        if (costs.op_energy_uj(v, p) == 0.0) continue;
        return Error(ErrorCode::kUnsupported,
                     "PU '{}' prices each operator's energy (a CIM circuit's per-MVM energies); BIDENT mapping "
                     "prices energy as time × power only; use `hetplan partition`, or remove the PU's energy keys",
                     costs.pu(p).name);
      }
    }
  }
  MappingCosts mc(n, costs.pus());
  for (int v = 0; v < n; ++v) {
    for (int p = 0; p < k; ++p) {
      if (costs.supported(v, p)) mc.set_latency(v, p, costs.latency_us(v, p));
      mc.set_h2d(v, p, costs.h2d_us(v, p));
      mc.set_d2h(v, p, costs.d2h_us(v, p));
    }
  }
  for (int p = 0; p < k; ++p) {
    for (int q = 0; q < k; ++q) mc.set_slowdown(p, q, costs.slowdown(p, q));
    mc.set_boundary(p, costs.boundary_us(p));
  }
  return mc;
}

}  // namespace hetplan
