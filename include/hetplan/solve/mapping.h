// BIDENT operator-level mapping (docs/mapping.md): each operator goes to one
// processing unit of a shared-memory SoC, chosen by shortest-path search over
// a weighted execution graph built from per-(operator, PU) costs.
//
//  * Sequential: nodes v_{i,j} for each supported (operator O_i, PU P_j) along
//    a topological order, virtual s and t; solved by topological DP in
//    O(N·K²) and by Dijkstra on the explicit layered graph (a cross-check).
//  * Intra-model parallel: fork/join phases, sequential search per branch,
//    contention slowdowns SF(run, interfere) applied after the search; a
//    phase-wise heuristic.
//  * Two-request concurrent: Dijkstra over aligned states (ℓ, d0, d1) for two
//    instances of one model, or joint states (i, j) for two models, priced
//    with measured co-execution costs.
// Every mode minimises latency (µs) or energy (µJ, e = t·p̄_j).
//
// The search works on MappingCosts (flat arrays, no graph), so that it runs on
// chains far larger than an OpGraph with its reachability bitsets would hold.
// The Map* functions wrap it for a whole model and return a timed Schedule
// that passes the independent validator.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hetplan/cost/cost_model.h"
#include "hetplan/cost/cost_table.h"
#include "hetplan/graph/op_graph.h"
#include "hetplan/plan/options.h"
#include "hetplan/plan/problem.h"
#include "hetplan/plan/result.h"
#include "hetplan/util/status.h"

namespace hetplan {

// The option enums (TransferAccounting, ChainAlgorithm, ConcurrentSpace) are
// in plan/options.h.

// The costs the mapping search reads, flat and row-major by operator:
// w(O_i, P_j) = dispatch + execution (NaN = unsupported), the operator's H2D
// (its inputs to P_j) and D2H (its outputs back to the host), PU powers and
// kinds, and the slowdown matrix SF(run, interfere).
class MappingCosts {
 public:
  MappingCosts() = default;
  // Every pair unsupported, copies 0, SF 1. A PU is an accelerator unless it
  // is a CPU (PuInfo::accelerator).
  MappingCosts(int num_ops, std::vector<PuInfo> pus);

  int num_ops() const { return n_; }
  int num_pus() const { return k_; }
  const std::vector<PuInfo>& pus() const { return pus_; }
  bool accelerator(int p) const { return accelerator_[p] != 0; }
  // NaN when the PU has no power.
  double power_w(int p) const { return power_w_[p]; }

  bool supported(int v, int p) const { return latency_[Idx(v, p)] == latency_[Idx(v, p)]; }
  double latency_us(int v, int p) const { return latency_[Idx(v, p)]; }
  // 0 on the host: only accelerators are charged copies.
  double h2d_us(int v, int p) const { return h2d_[Idx(v, p)]; }
  double d2h_us(int v, int p) const { return d2h_[Idx(v, p)]; }
  // w + H2D + D2H: BIDENT's conservative per-operator total.
  double total_us(int v, int p) const { return latency_[Idx(v, p)] + h2d_[Idx(v, p)] + d2h_[Idx(v, p)]; }
  double slowdown(int run, int interfere) const { return slowdown_[static_cast<size_t>(run) * k_ + interfere]; }
  // What one more segment on p costs (CostModel::boundary_us): charged on
  // every switch into p, in either accounting.
  double boundary_us(int p) const { return boundary_[p]; }

  void set_latency(int v, int p, double us) { latency_[Idx(v, p)] = us; }
  void set_unsupported(int v, int p) { latency_[Idx(v, p)] = std::numeric_limits<double>::quiet_NaN(); }
  // Ignored (kept 0) on a host PU.
  void set_h2d(int v, int p, double us) { h2d_[Idx(v, p)] = accelerator(p) ? us : 0.0; }
  void set_d2h(int v, int p, double us) { d2h_[Idx(v, p)] = accelerator(p) ? us : 0.0; }
  void set_slowdown(int run, int interfere, double f) { slowdown_[static_cast<size_t>(run) * k_ + interfere] = f; }
  void set_boundary(int p, double us) { boundary_[p] = us; }

 private:
  size_t Idx(int v, int p) const { return static_cast<size_t>(v) * k_ + p; }
  int n_ = 0, k_ = 0;
  std::vector<PuInfo> pus_;
  std::vector<uint8_t> accelerator_;
  std::vector<double> power_w_;
  std::vector<double> latency_, h2d_, d2h_, slowdown_, boundary_;
};

// Flattens the solver-facing cost model (latencies, the per-operator H2D/D2H
// copies of CostModel, powers, slowdowns). Refuses spatial PUs (kUnsupported:
// crossbar capacity is not part of BIDENT's model; use `hetplan partition`).
Result<MappingCosts> BuildMappingCosts(const OpGraph& g, const CostModel& costs);

// ---------------------------------------------------------------------------
// Sequential search on a chain of operators.

struct ChainOptions {
  Objective objective = Objective::kLatency;
  TransferAccounting accounting = TransferAccounting::kConservative;
};

struct ChainMapping {
  std::vector<int> pu;                                     // per chain position
  double cost = std::numeric_limits<double>::quiet_NaN();  // s–t path cost: µs or µJ
  int64_t nodes = 0;                                       // execution-graph size searched (s and t included)
  int64_t edges = 0;
};

// Checks the chain's ids, that each operator is supported somewhere and, for
// the energy objective, that every PU that supports an operator has a power.
Status CheckChain(const MappingCosts& c, std::span<const int> chain, Objective objective);

// Topological DP over the layered execution graph, O(N·K²) time, O(N·K)
// bytes of back-pointers. Ties go to the lowest PU index.
Result<ChainMapping> MapChainDp(const MappingCosts& c, std::span<const int> chain, const ChainOptions& o);
// Dijkstra on the explicit layered graph (s, v_{i,j}, t) in CSR form,
// O(N·K² log(N·K)).
Result<ChainMapping> MapChainDijkstra(const MappingCosts& c, std::span<const int> chain, const ChainOptions& o);
// Each operator on the PU with the smallest node cost (ignoring edges). Under
// conservative accounting edges are free, so this equals the DP (BIDENT §IV-E).
Result<ChainMapping> MapChainGreedy(const MappingCosts& c, std::span<const int> chain, const ChainOptions& o);
// The s–t path cost of a given mapping (pu per chain position); NaN when a
// pair is unsupported or a needed power is missing.
double ChainCost(const MappingCosts& c, std::span<const int> chain, std::span<const int> pu, const ChainOptions& o);

// ---------------------------------------------------------------------------
// Whole-model modes.

using MapOptions = MappingOptions;

struct MapResult {
  // result.schedule: the mapping, timed so that it validates (docs/mapping.md
  // "written timing"); result.objective: the search's predicted value of the
  // objective; result.status/notes: what is exact and what is heuristic.
  SolveResult result;
  std::vector<int> device;  // per operator id
  // The mapping's predicted latency and energy under the mode's accounting
  // (energy null when a used PU has no power). For the parallel mode the
  // latency is BIDENT's Σ over phases of the max adjusted branch.
  double predicted_latency_us = 0;
  std::optional<double> predicted_energy_uj;
  // Best single PU (whole model on one PU) under the same accounting:
  // "<pu>_only_us", "<pu>_only_uj", "best_single_us", "best_single_uj",
  // "cpu_only_us"; names in best_latency_pu / best_energy_pu.
  std::map<std::string, double> baselines;
  std::string best_latency_pu, best_energy_pu;
  bool chain = false;  // the graph is a chain (every topological neighbour pair is its only edge)
  int parallel_phases = 0;
  int shared_pu_phases = 0;  // parallel mode: phases whose branches share a PU
};

// Sequential mapping along the graph's topological order. Exact for a chain;
// on another DAG the neighbour accounting charges switches between
// topological neighbours rather than along data edges: status heuristic and
// a note say so.
Result<MapResult> MapSequential(const Problem& problem, const MappingCosts& c, const MapOptions& o);
// Intra-model parallel mapping (phase-wise heuristic, status heuristic).
Result<MapResult> MapParallel(const Problem& problem, const MappingCosts& c, const MapOptions& o);

// ---------------------------------------------------------------------------
// Two-request concurrent search.

// Measured co-execution makespans between request 0's and request 1's
// operators (BIDENT's barrier-synchronised pairs), indexed by chain position.
class CoexecCosts {
 public:
  struct Entry {
    int i = 0, j = 0;  // chain positions in request 0 and 1
    int p = 0, q = 0;  // their PUs
    double makespan_us = 0;
  };
  CoexecCosts() = default;
  // Sorts and indexes; duplicates (i, p, j, q) are averaged.
  CoexecCosts(int n0, std::vector<Entry> entries);
  std::optional<double> Find(int i, int p, int j, int q) const;
  // Whether any entry involves request 0's position i (a fast path for the search).
  bool HasAny(int i) const {
    return i >= 0 && static_cast<size_t>(i) + 1 < first_.size() && first_[i] != first_[i + 1];
  }
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }

 private:
  std::vector<Entry> entries_;   // sorted by (i, j, p, q)
  std::vector<uint32_t> first_;  // CSR over i
};

// Matches `rows` by operator and PU names: a row (a on p, b on q) prices
// request 0's a with request 1's b, and also, read the other way round,
// request 0's b with request 1's a. When both readings exist for one pair
// they are averaged (the symmetric average BIDENT uses for same-model pairs).
// Rows naming unknown operators or PUs are skipped.
// g0 and g1 may be one combined graph with chain0/chain1 its requests' ids.
CoexecCosts BuildCoexecCosts(const OpGraph& g0, std::span<const int> chain0, const OpGraph& g1,
                             std::span<const int> chain1, const std::vector<PuInfo>& pus,
                             const std::vector<CoExecution>& rows);

struct ConcurrentOptions {
  Objective objective = Objective::kLatency;
  ConcurrentSpace space = ConcurrentSpace::kJoint;
  ChainAlgorithm algorithm = ChainAlgorithm::kDijkstra;
  // Joint space only. false: BIDENT's literal transitions, both requests
  // advance together until one finishes, then the other runs alone. true:
  // also a step where one request runs an operator alone while the other
  // waits, which lets the search stagger the requests (docs/mapping.md).
  bool solo_steps = true;
};

// One step of the concurrent schedule: op0/op1 are chain positions (−1 when
// that request is idle or finished in this step).
struct ConcurrentStep {
  int op0 = -1, pu0 = -1, op1 = -1, pu1 = -1;
  double latency_us = 0;  // the step's makespan as priced
  double energy_uj = 0;   // additive solo-power model
  double slowdown = 1;    // stretch σ ≥ 1 applied to both operators' solo costs in the written timing
};

struct ConcurrentMapping {
  std::vector<ConcurrentStep> steps;
  double cost = std::numeric_limits<double>::quiet_NaN();  // µs or µJ
  double latency_us = 0;
  std::optional<double> energy_uj;
  int64_t states = 0;       // states in the space
  int64_t expanded = 0;     // states the search settled
  int64_t transitions = 0;  // relaxations
};

// Pricing (per operator, solo cost t = w + H2D + D2H: BIDENT's concurrent
// search charges no separate transfers). Both on PU p: measured makespan, else
// t0 + t1 (the PU serialises them). On p ≠ q: measured, else max(t0, t1).
// Energy: σ·(t0·p̄_p + t1·p̄_q) with σ the stretch max(1, M / (t0 + t1)) on one
// PU or max(1, M / max(t0, t1)) across PUs. Alone: t and t·p̄.
Result<ConcurrentMapping> SearchConcurrent(const MappingCosts& c0, std::span<const int> chain0, const MappingCosts& c1,
                                           std::span<const int> chain1, const CoexecCosts& coexec,
                                           const ConcurrentOptions& o);

struct ConcurrentPlan {
  // Both requests in one graph: request 0's operators keep their ids, request
  // 1's are offset by g0.size(); each keeps its own edges.
  OpGraph graph;
  // Costs on `graph`: w + H2D + D2H per operator (transfers included, so
  // edges carry none), the PUs of c0.
  CostModel costs;
  ConcurrentMapping mapping;
  SolveResult result;  // schedule on `graph` with `request` set; objective = predicted value
  double predicted_latency_us = 0;
  std::optional<double> predicted_energy_uj;
  // The two-request references (solve/references.h): "<pu>_serial_us" (both
  // back to back on one PU), "best_serial_us", "naive_multi_pu_us" (whole
  // models on the best PU pair), "cpu_only_us", and the _uj counterparts;
  // best_serial_pu names the PU.
  std::map<std::string, double> baselines;
  std::string best_serial_pu, best_serial_energy_pu;
};

// Two requests (the same graph twice, or two graphs) on the PUs of c0 (c1 must
// list the same PUs). kAligned needs the same number of operators.
Result<ConcurrentPlan> MapConcurrent(const OpGraph& g0, const MappingCosts& c0, const OpGraph& g1,
                                     const MappingCosts& c1, const CoexecCosts& coexec, const ConcurrentOptions& o);

// The concurrent search on a problem that already holds both requests
// (Problem::requests; operator costs w + H2D + D2H, co-execution rows in its
// cost model): the "map_concurrent" method. The schedule is on that graph,
// with `request` set; result.concurrent has the search's statistics.
Result<SolveResult> SolveConcurrent(const Problem& both, const ConcurrentOptions& o);

}  // namespace hetplan
