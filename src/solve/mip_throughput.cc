// The MIP of the throughput objective on CBC ("mip" with --objective
// throughput): an independent reference for the exact search's initiation
// interval, sharing only the cost model and the cyclic schedule with it.
//  * x_{v,o} binary per option o of v: a serial PU, or a spatial PU with k
//    copies (every k that fits the capacity and gives a shorter time than
//    fewer copies); Σ_o x_{v,o} = 1.
//  * II ≥ Σ_v T_{v,p} x_{v,p} per serial PU p; II ≥ T_{v,q}(k) x_{v,q,k} per
//    spatial option; Σ k × crossbars × x_{v,q,k} ≤ capacity_q.
//  * Per edge (u, v) and ordered PU pair (p, q), p ≠ q, with a positive
//    transfer: y ≥ X_{u,p} + X_{v,q} − 1 (X: Σ of the options on that PU),
//    y continuous in [0, 1]; II ≥ Σ transfers × y per unordered pair.
// Objective: min II.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <thread>

#include "hetplan/solve/throughput.h"
#include "solve/cbc_driver.h"
#include "solve/mip_solver.h"

namespace hetplan::mip_internal {
namespace {

struct MipOption {
  int pu;
  int64_t copies;
  double us;
  int col;
};

// v's options: every serial PU it runs on, and on each spatial PU every
// number of copies that fits and is faster than one fewer.
std::vector<MipOption> OptionsOf(const CostModel& c, int v) {
  std::vector<MipOption> out;
  for (int q = 0; q < c.num_pus(); ++q) {
    if (!c.supported(v, q)) continue;
    if (!c.pu(q).spatial) {
      out.push_back({q, 1, c.latency_us(v, q), -1});
      continue;
    }
    const int64_t xb = std::max<int64_t>(1, c.crossbars(v, q));
    if (c.crossbars(v, q) > c.pu(q).capacity) continue;
    const int64_t most = std::min(c.max_replicas(v, q), std::max<int64_t>(1, c.pu(q).capacity / xb));
    double last = std::numeric_limits<double>::infinity();
    for (int64_t k = 1; k <= most; ++k) {
      const double us = c.replicated_latency_us(v, q, k);
      if (us < last) out.push_back({q, k, us, -1});
      last = us;
    }
  }
  return out;
}

// The links' rows: per edge and ordered PU pair with a positive transfer,
// y ≥ X_{u,p} + X_{v,q} − 1; per unordered pair, II ≥ Σ transfers × y.
// A segment-boundary cost (--boundary-cost fitted) is also the receiving
// serial PU's time: b_q × y joins `serial[q]`.
void AddLinks(const Problem& pr, const std::vector<std::vector<MipOption>>& opt, int ii, ModelBuilder* mb_,
              std::vector<std::vector<Term>>* serial) {
  ModelBuilder& mb = *mb_;
  const CostModel& c = *pr.costs;
  const OpGraph& g = *pr.graph;
  const int k = c.num_pus();
  std::map<std::pair<int, int>, std::vector<Term>> link;
  for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
    const int u = g.edges()[e].from, v = g.edges()[e].to;
    for (int p = 0; p < k; ++p) {
      for (int q = 0; q < k; ++q) {
        const double us = p == q ? 0.0 : c.transfer_us(e, p, q);
        if (us <= 0 || !c.supported(u, p) || !c.supported(v, q)) continue;
        const int y = mb.AddCol(fmt::format("y_{}_{}_{}", e, p, q), 0, 1, 0, false);
        std::vector<Term> row = {{y, 1}};
        for (const MipOption& o : opt[u]) {
          if (o.pu == p) row.push_back({o.col, -1});
        }
        for (const MipOption& o : opt[v]) {
          if (o.pu == q) row.push_back({o.col, -1});
        }
        mb.AddRow(fmt::format("cut_{}_{}_{}", e, p, q), row, -1, kLpInf);
        link[{std::min(p, q), std::max(p, q)}].push_back({y, us});
        if (!c.pu(q).spatial && c.boundary_us(q) > 0) (*serial)[q].push_back({y, c.boundary_us(q)});
      }
    }
  }
  for (auto& [pq, terms] : link) {
    terms.push_back({ii, -1});
    mb.AddRow(fmt::format("link_{}_{}", pq.first, pq.second), terms, -kLpInf, 0);
  }
}

}  // namespace

Result<SolveResult> SolveThroughputMip(const Problem& pr, const SolveOptions& options, const Deadline& deadline) {
  const CostModel& c = *pr.costs;
  const OpGraph& g = *pr.graph;
  const int n = g.size(), k = c.num_pus();
  SolveResult result;
  result.formulation = "throughput";
  if (c.has_shared_adcs() || c.has_reprogram() || pr.latency_cap_us) {
    return Error(ErrorCode::kUnsupported,
                 "solver 'mip' plans a stream without a latency bound, a shared ADC pool or reprogramming; use "
                 "--solver exact");
  }
  ModelBuilder mb;
  const int ii = mb.AddCol("II", 0, kLpInf, 1, false);
  std::vector<std::vector<MipOption>> opt(n);
  std::vector<std::vector<Term>> serial(k), budget(k);
  for (int v = 0; v < n; ++v) {
    opt[v] = OptionsOf(c, v);
    std::vector<Term> one;
    for (MipOption& o : opt[v]) {
      o.col = mb.AddCol(fmt::format("x_{}_{}_{}", v, o.pu, o.copies), 0, 1, 0, true);
      one.push_back({o.col, 1});
      if (!c.pu(o.pu).spatial) {
        serial[o.pu].push_back({o.col, o.us});
      } else {
        mb.AddRow(fmt::format("time_{}_{}_{}", v, o.pu, o.copies), {{o.col, o.us}, {ii, -1}}, -kLpInf, 0);
        budget[o.pu].push_back({o.col, static_cast<double>(o.copies * c.crossbars(v, o.pu))});
      }
    }
    mb.AddRow(fmt::format("assign_{}", v), one, 1, 1);
  }
  AddLinks(pr, opt, ii, &mb, &serial);
  for (int p = 0; p < k; ++p) {
    if (!serial[p].empty()) {
      serial[p].push_back({ii, -1});
      mb.AddRow(fmt::format("load_{}", p), serial[p], -kLpInf, 0);
    }
    if (!budget[p].empty()) mb.AddRow(fmt::format("budget_{}", p), budget[p], -kLpInf, static_cast<double>(c.pu(p).capacity));
  }
  result.mip = MipStats{mb.num_cols(), mb.num_rows(), 0};
  // Nothing to choose: every operator has one option (CBC's presolve would
  // remove every row, which its crunch step does not survive).
  const bool forced = std::all_of(opt.begin(), opt.end(), [](const auto& o) { return o.size() <= 1; });
  if (forced) {
    if (std::any_of(opt.begin(), opt.end(), [](const auto& o) { return o.empty(); })) {
      result.status = SolveStatus::kInfeasible;
      result.termination = Termination::kInfeasible;
      return result;
    }
    std::vector<int> a(n);
    std::vector<int64_t> copies(n);
    for (int v = 0; v < n; ++v) {
      a[v] = opt[v][0].pu;
      copies[v] = opt[v][0].copies;
    }
    const double value = ComputeStreamLoads(pr, a, &copies).interval_us();
    result.schedule = CyclicSchedule(pr, a, copies, value);
    result.objective = result.bound = value;
    result.gap = 0;
    result.status = SolveStatus::kOptimal;
    result.termination = Termination::kOptimal;
    result.notes.push_back("throughput MIP: every operator has one option; nothing for CBC to decide");
    return result;
  }
  int threads = options.threads > 0 ? options.threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (threads > 1 && !CbcHasThreads()) threads = 1;
  auto run = RunCbc(mb, options, threads, nullptr, deadline);
  if (!run.ok()) return run.status();
  const CbcOutcome& out = *run;
  result.notes.push_back(fmt::format("throughput MIP: {} columns, {} rows; CBC status {} / {}", mb.num_cols(),
                                     mb.num_rows(), out.status, out.secondary));
  if (std::isfinite(out.bound) && std::fabs(out.bound) < 1e29) result.bound = out.bound;
  // Why CBC stopped short of a proof.
  const Termination stopped = out.interrupted          ? Termination::kInterrupted
                              : out.time_limit_reached ? Termination::kTimeLimit
                                                       : Termination::kNumerical;
  if (!out.solution) {
    result.status = out.proven_infeasible ? SolveStatus::kInfeasible : SolveStatus::kNoSolution;
    result.termination = out.proven_infeasible ? Termination::kInfeasible : stopped;
    return result;
  }
  std::vector<int> a(n, -1);
  std::vector<int64_t> copies(n, 1);
  for (int v = 0; v < n; ++v) {
    for (const MipOption& o : opt[v]) {
      if ((*out.solution)[o.col] > 0.5) {
        a[v] = o.pu;
        copies[v] = o.copies;
      }
    }
  }
  const double value = ComputeStreamLoads(pr, a, &copies).interval_us();
  result.schedule = CyclicSchedule(pr, a, copies, value);
  result.objective = value;
  if (!std::isnan(result.bound)) result.bound = std::min(result.bound, value);
  result.gap = value > 0 && !std::isnan(result.bound) ? (value - result.bound) / value : 0.0;
  result.status = out.proven_optimal ? SolveStatus::kOptimal : SolveStatus::kFeasible;
  result.termination = out.proven_optimal ? Termination::kOptimal : stopped;
  return result;
}

}  // namespace hetplan::mip_internal
