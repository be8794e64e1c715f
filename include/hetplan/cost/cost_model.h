// The solver-facing cost model: for every (operator, PU) a latency (absent =
// unsupported), crossbars on spatial PUs, energy, and the host↔device copies
// BIDENT's mapping charges; for every edge and PU pair a transfer time; PU
// capacities, powers, contention and measured co-execution. Built from a
// platform, a graph and cost sources (see BuildCostModel in cost/build.h);
// solvers see only this.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/cost/cost_table.h"
#include "hetplan/graph/op_graph.h"
#include "hetplan/platform/platform.h"

namespace hetplan {

struct PuInfo {
  std::string name;
  PuKind kind = PuKind::kCpu;
  bool spatial = false;            // spatial: concurrent operators, capacity in crossbars
  int64_t capacity = -1;           // crossbar budget C of a spatial PU; -1 when serial
  // ADCs shared by the operators running on the PU at one time (CimParams::
  // shared_adcs); 0: none shared (each operator has its own).
  int64_t adc_pool = 0;
  std::optional<double> power_w;
  std::string cost_label = "measured";  // measured | analytical | table | synthetic
  // Reprogramming (CimParams::reprogram): an operator may be rewritten into
  // free crossbars every inference (CostModel::write_us) instead of staying
  // resident, within the endurance budget: lifetime_inferences × Σ crossbars
  // rewritten ≤ endurance_writes × crossbars no resident operator holds.
  bool reprogram = false;
  double write_ns_per_row = 0;
  std::optional<double> write_energy_pj_per_row;
  double endurance_writes = 0, lifetime_inferences = 0;
  // Crossbar writes the rest of a larger problem spends on this PU's free
  // crossbars over the lifetime (LLM generation: the other phase's,
  // solve/two_phase.h); the endurance budget is then lifetime × Σ crossbars
  // rewritten + this ≤ endurance_writes × crossbars no resident operator
  // holds. 0 for one inference.
  double other_lifetime_writes = 0;

  // Every PU but a CPU is an accelerator: BIDENT charges it host↔device copies.
  bool accelerator() const { return kind != PuKind::kCpu; }
};

class CostModel {
 public:
  CostModel() = default;
  CostModel(int num_ops, std::vector<PuInfo> pus, int num_edges)
      : n_(num_ops), k_(static_cast<int>(pus.size())), pus_(std::move(pus)),
        latency_(static_cast<size_t>(n_) * k_, std::numeric_limits<double>::quiet_NaN()),
        crossbars_(static_cast<size_t>(n_) * k_, 0),
        h2d_(static_cast<size_t>(n_) * k_, 0.0),
        d2h_(static_cast<size_t>(n_) * k_, 0.0),
        transfer_(static_cast<size_t>(num_edges) * k_ * k_, 0.0),
        slowdown_(static_cast<size_t>(k_) * k_, 1.0),
        boundary_(static_cast<size_t>(k_), 0.0) {}

  int num_ops() const { return n_; }
  int num_pus() const { return k_; }
  int num_edges() const { return k_ == 0 ? 0 : static_cast<int>(transfer_.size() / (k_ * k_)); }
  const std::vector<PuInfo>& pus() const { return pus_; }
  const PuInfo& pu(int p) const { return pus_[p]; }
  int FindPu(const std::string& name) const {
    for (int p = 0; p < k_; ++p) {
      if (pus_[p].name == name) return p;
    }
    return -1;
  }

  bool supported(int v, int p) const { return !std::isnan(latency_[Idx(v, p)]); }
  // Execution time of v on p (dispatch included); NaN when unsupported.
  double latency_us(int v, int p) const { return latency_[Idx(v, p)]; }
  int64_t crossbars(int v, int p) const { return crossbars_[Idx(v, p)]; }
  // Transfer time on edge e when its source runs on p and its target on q.
  double transfer_us(int e, int p, int q) const { return transfer_[(static_cast<size_t>(e) * k_ + p) * k_ + q]; }
  // BIDENT's per-operator copies to (H2D, its inputs) and from (D2H, its
  // outputs) an accelerator p; 0 on a CPU.
  double h2d_us(int v, int p) const { return h2d_[Idx(v, p)]; }
  double d2h_us(int v, int p) const { return d2h_[Idx(v, p)]; }
  double slowdown(int run, int interfere) const { return slowdown_[run * k_ + interfere]; }
  // What a segment starting on p costs beyond its operators (a Session::Run
  // invocation, its bindings, cold caches; the profiler fits it from split
  // executions), where it is charged (ChargeBoundary); 0 otherwise.
  double boundary_us(int p) const { return boundary_[p]; }
  // Measured makespans of operator pairs run together (BIDENT's co-execution
  // rows, by operator and PU name, as the cost tables give them).
  const std::vector<CoExecution>& coexec() const { return coexec_; }
  // Energy of v on p at no slowdown: the PU's power over the operator's time
  // plus the operator's own energy (a CIM circuit's per-MVM energies; 0
  // elsewhere). Null when p has no power or cannot run v.
  std::optional<double> energy_uj(int v, int p) const {
    if (!pus_[p].power_w || !supported(v, p)) return std::nullopt;
    return latency_us(v, p) * *pus_[p].power_w + op_energy_uj(v, p);
  }
  // The energy v spends on p beyond power × time (µJ), independent of the
  // time it takes: a CIM's conversions, reads and buffer accesses.
  double op_energy_uj(int v, int p) const { return op_energy_.empty() ? 0.0 : op_energy_[Idx(v, p)]; }
  bool has_op_energy() const { return !op_energy_.empty(); }
  // ADCs of p's shared pool that v holds while it runs on p (0 without a pool).
  int64_t adcs(int v, int p) const { return adcs_.empty() ? 0 : adcs_[Idx(v, p)]; }
  // True when some PU has a shared ADC pool: operators on it that run at the
  // same time hold at most adc_pool ADCs together.
  bool has_shared_adcs() const {
    for (const PuInfo& pu : pus_) {
      if (pu.adc_pool > 0) return true;
    }
    return false;
  }

  void set_latency(int v, int p, double us) { latency_[Idx(v, p)] = us; }
  void set_unsupported(int v, int p) { latency_[Idx(v, p)] = std::numeric_limits<double>::quiet_NaN(); }
  void set_crossbars(int v, int p, int64_t n) { crossbars_[Idx(v, p)] = n; }
  void set_op_energy(int v, int p, double uj) {
    if (op_energy_.empty()) op_energy_.assign(static_cast<size_t>(n_) * k_, 0.0);
    op_energy_[Idx(v, p)] = uj;
  }
  // Rewriting v's weights on a reprogramming PU p: rows programmed in
  // sequence, rows in all, the time (µs) and energy (µJ); all 0 elsewhere.
  struct Write {
    int64_t rows = 0, rows_written = 0;
    double us = 0, uj = 0;
  };
  const Write& write(int v, int p) const {
    static const Write kNone;
    return writes_.empty() ? kNone : writes_[Idx(v, p)];
  }
  double write_us(int v, int p) const { return write(v, p).us; }
  bool has_reprogram() const {
    for (const PuInfo& pu : pus_) {
      if (pu.reprogram) return true;
    }
    return false;
  }
  void set_write(int v, int p, const Write& w) {
    if (writes_.empty()) writes_.assign(static_cast<size_t>(n_) * k_, Write{});
    writes_[Idx(v, p)] = w;
  }
  // v may run on reprogramming PU p only rewritten, never resident; or only
  // resident, never rewritten (branches of the two-phase search:
  // solve/two_phase.h). The exact search honours both; its heuristic starts
  // keep every operator resident and leave rewrite-only PUs out.
  bool rewrite_only(int v, int p) const { return !rewrite_mode_.empty() && rewrite_mode_[Idx(v, p)] == 1; }
  bool no_rewrite(int v, int p) const { return !rewrite_mode_.empty() && rewrite_mode_[Idx(v, p)] == 2; }
  void set_rewrite_only(int v, int p) { SetRewriteMode(v, p, 1); }
  void set_no_rewrite(int v, int p) { SetRewriteMode(v, p, 2); }
  // v's matrix-vector products on spatial p (the analytical CIM model's
  // N_mvm and their N_mvm × T_mvm); 0 where the costs do not say (a cost
  // table), so v cannot be replicated there.
  int64_t mvms(int v, int p) const { return mvms_.empty() ? 0 : mvms_[Idx(v, p)]; }
  double mvm_us(int v, int p) const { return mvm_us_.empty() ? 0.0 : mvm_us_[Idx(v, p)]; }
  void set_mvms(int v, int p, int64_t count, double us) {
    if (mvms_.empty()) {
      mvms_.assign(static_cast<size_t>(n_) * k_, 0);
      mvm_us_.assign(static_cast<size_t>(n_) * k_, 0.0);
    }
    mvms_[Idx(v, p)] = count;
    mvm_us_[Idx(v, p)] = us;
  }
  // The most copies of v's weights worth holding on p: one per MVM (more
  // would idle), 1 where v's MVMs are unknown or p is not spatial.
  int64_t max_replicas(int v, int p) const { return pus_[p].spatial ? std::max<int64_t>(1, mvms(v, p)) : 1; }
  // v's time on spatial p with its weights held `replicas` times (weight
  // duplication): the copies share its MVMs, ceil(N_mvm / replicas) each in
  // turn, while its loads and stores over the CIM's bandwidth take as long
  // as before. latency_us(v, p) for one copy.
  double replicated_latency_us(int v, int p, int64_t replicas) const {
    const int64_t n = mvms(v, p);
    if (replicas <= 1 || n <= 1) return latency_us(v, p);
    const int64_t each = (n + replicas - 1) / replicas;
    return latency_us(v, p) - mvm_us(v, p) + mvm_us(v, p) * static_cast<double>(each) / static_cast<double>(n);
  }
  void set_adcs(int v, int p, int64_t n) {
    if (adcs_.empty()) adcs_.assign(static_cast<size_t>(n_) * k_, 0);
    adcs_[Idx(v, p)] = n;
  }
  void set_transfer(int e, int p, int q, double us) { transfer_[(static_cast<size_t>(e) * k_ + p) * k_ + q] = us; }
  void set_h2d(int v, int p, double us) { h2d_[Idx(v, p)] = us; }
  void set_d2h(int v, int p, double us) { d2h_[Idx(v, p)] = us; }
  void set_slowdown(int run, int interfere, double f) { slowdown_[run * k_ + interfere] = f; }
  void set_coexec(std::vector<CoExecution> rows) { coexec_ = std::move(rows); }
  // Charges `us` per segment on p: a segment on p starts where an operator
  // on p reads a tensor from another PU, so `us` joins the transfer time of
  // every edge into p from another PU, and every planner, the brute-force
  // oracle and the schedule file (whose edges carry transfer_us) see it
  // through transfer_us. Charged as the edge's latency: p may run another
  // ready operator meanwhile, and two edges into one segment overlap.
  void ChargeBoundary(int p, double us) {
    boundary_[p] += us;
    for (int e = 0; e < num_edges(); ++e) {
      for (int q = 0; q < k_; ++q) {
        if (q != p) transfer_[(static_cast<size_t>(e) * k_ + q) * k_ + p] += us;
      }
    }
  }
  PuInfo& mutable_pu(int p) { return pus_[p]; }

 private:
  size_t Idx(int v, int p) const { return static_cast<size_t>(v) * k_ + p; }
  void SetRewriteMode(int v, int p, char mode) {
    if (rewrite_mode_.empty()) rewrite_mode_.assign(static_cast<size_t>(n_) * k_, 0);
    rewrite_mode_[Idx(v, p)] = mode;
  }
  int n_ = 0, k_ = 0;
  std::vector<PuInfo> pus_;
  std::vector<double> latency_;
  std::vector<int64_t> crossbars_;
  std::vector<double> op_energy_;  // empty: none anywhere
  std::vector<int64_t> adcs_;      // empty: no shared ADC pool anywhere
  std::vector<int64_t> mvms_;      // empty: no MVM counts anywhere
  std::vector<double> mvm_us_;
  std::vector<Write> writes_;      // empty: no reprogramming PU
  std::vector<char> rewrite_mode_;  // empty: none; 1 rewrite only, 2 never rewritten
  std::vector<double> h2d_, d2h_;
  std::vector<double> transfer_;
  std::vector<double> slowdown_;
  std::vector<CoExecution> coexec_;
  std::vector<double> boundary_;
};

}  // namespace hetplan
