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
// Objective: min II. With --max-latency, the unbounded optimum bounds the
// II from below and mip/throughput_modulo.cc adds the cyclic schedule of one input.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "hetplan/solve/throughput.h"
#include "solve/mip/backend.h"
#include "solve/mip/solver.h"
#include "solve/mip/throughput.h"

namespace hetplan::mip_internal {
namespace {

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
void AddLinks(const Problem& pr, ThroughputModel* m, std::vector<std::vector<Term>>* serial) {
  ModelBuilder& mb = m->mb;
  const auto& opt = m->opt;
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
        m->cuts[e].push_back({p, q, us, y});
        if (!c.pu(q).spatial && c.boundary_us(q) > 0) (*serial)[q].push_back({y, c.boundary_us(q)});
      }
    }
  }
  for (auto& [pq, terms] : link) {
    terms.push_back({m->ii, -1});
    mb.AddRow(fmt::format("link_{}_{}", pq.first, pq.second), terms, -kLpInf, 0);
  }
}

// The most rows the MIP with a latency bound may have on the "mip" method.
constexpr int64_t kMaxModuloRows = 400'000;

// --max-latency on the MIP: the unbounded MIP's optimum (or its bound) is the
// II's lower end, IntervalCeiling its upper one; where the unbounded optimum's
// cyclic schedule already meets the cap, that plan is optimal.
Result<SolveResult> SolveCappedMip(const Problem& pr, const SolveOptions& options, const Deadline& deadline) {
  Problem free = pr;
  free.latency_cap_us.reset();
  auto unbounded = SolveThroughputMip(free, options, deadline);
  if (!unbounded.ok() || unbounded->status == SolveStatus::kInfeasible) return unbounded;
  const bool proven = unbounded->status == SolveStatus::kOptimal;
  if (proven && unbounded->schedule && unbounded->schedule->makespan_us <= *pr.latency_cap_us * (1 + 1e-9)) {
    unbounded->notes.push_back("the II-optimal plan's one input meets --max-latency");
    return unbounded;
  }
  const double lo = proven ? unbounded->objective : std::isnan(unbounded->bound) ? 0.0 : unbounded->bound;
  auto r = SolveModuloMip(pr, options, deadline, lo, std::max(lo, IntervalCeiling(pr)), kMaxModuloRows);
  if (r.ok()) r->notes.insert(r->notes.begin(), unbounded->notes.begin(), unbounded->notes.end());
  return r;
}

}  // namespace

bool TakeOutcome(const MipOutcome& out, SolveResult* result) {
  if (std::isfinite(out.bound) && std::fabs(out.bound) < 1e29) result->bound = out.bound;
  // Why CBC stopped short of a proof.
  const Termination stopped = out.interrupted          ? Termination::kInterrupted
                              : out.time_limit_reached ? Termination::kTimeLimit
                                                       : Termination::kNumerical;
  result->status = out.proven_optimal         ? SolveStatus::kOptimal
                   : out.solution             ? SolveStatus::kFeasible
                   : out.proven_infeasible    ? SolveStatus::kInfeasible
                                              : SolveStatus::kNoSolution;
  result->termination = out.proven_optimal ? Termination::kProved
                        : out.proven_infeasible && !out.solution ? Termination::kProvedInfeasible
                                                                 : stopped;
  return out.solution.has_value();
}

ThroughputModel BuildThroughputModel(const Problem& pr, double ii_lo, double ii_hi) {
  const CostModel& c = *pr.costs;
  const int n = pr.graph->size(), k = c.num_pus();
  ThroughputModel m;
  ModelBuilder& mb = m.mb;
  m.ii = mb.AddCol("II", ii_lo, ii_hi, 1, false);
  m.opt.resize(n);
  m.cuts.resize(pr.graph->edges().size());
  std::vector<std::vector<Term>> serial(k), budget(k);
  for (int v = 0; v < n; ++v) {
    m.opt[v] = OptionsOf(c, v);
    std::vector<Term> one;
    for (MipOption& o : m.opt[v]) {
      o.col = mb.AddCol(fmt::format("x_{}_{}_{}", v, o.pu, o.copies), 0, 1, 0, true);
      one.push_back({o.col, 1});
      if (!c.pu(o.pu).spatial) {
        serial[o.pu].push_back({o.col, o.us});
      } else {
        mb.AddRow(fmt::format("time_{}_{}_{}", v, o.pu, o.copies), {{o.col, o.us}, {m.ii, -1}}, -kLpInf, 0);
        budget[o.pu].push_back({o.col, static_cast<double>(o.copies * c.crossbars(v, o.pu))});
      }
    }
    mb.AddRow(fmt::format("assign_{}", v), one, 1, 1);
  }
  AddLinks(pr, &m, &serial);
  for (int p = 0; p < k; ++p) {
    if (!serial[p].empty()) {
      serial[p].push_back({m.ii, -1});
      mb.AddRow(fmt::format("load_{}", p), serial[p], -kLpInf, 0);
    }
    if (!budget[p].empty()) mb.AddRow(fmt::format("budget_{}", p), budget[p], -kLpInf, static_cast<double>(c.pu(p).capacity));
  }
  return m;
}

void ReadAssignment(const ThroughputModel& m, const std::vector<double>& x, std::vector<int>* a,
                    std::vector<int64_t>* copies) {
  const int n = static_cast<int>(m.opt.size());
  a->assign(n, -1);
  copies->assign(n, 1);
  for (int v = 0; v < n; ++v) {
    for (const MipOption& o : m.opt[v]) {
      if (x[o.col] > 0.5) {
        (*a)[v] = o.pu;
        (*copies)[v] = o.copies;
      }
    }
  }
}

Result<SolveResult> SolveThroughputMip(const Problem& pr, const SolveOptions& options, const Deadline& deadline) {
  const int n = pr.graph->size();
  SolveResult result;
  result.formulation = "throughput";
  if (pr.costs->has_shared_adcs() || pr.costs->has_reprogram()) {
    return Error(ErrorCode::kUnsupported,
                 "solver 'mip' plans a stream without a shared ADC pool or reprogramming; remove shared_adcs and "
                 "reprogram, or use --objective latency");
  }
  if (pr.latency_cap_us) return SolveCappedMip(pr, options, deadline);
  ThroughputModel m = BuildThroughputModel(pr, 0, kLpInf);
  const auto& opt = m.opt;
  result.mip = MipStats{m.mb.num_cols(), m.mb.num_rows(), 0, ""};
  // Nothing to choose: every operator has one option (CBC's presolve would
  // remove every row, which its crunch step does not survive).
  const bool forced = std::all_of(opt.begin(), opt.end(), [](const auto& o) { return o.size() <= 1; });
  if (forced) {
    if (std::any_of(opt.begin(), opt.end(), [](const auto& o) { return o.empty(); })) {
      result.status = SolveStatus::kInfeasible;
      result.termination = Termination::kProvedInfeasible;
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
    result.termination = Termination::kProved;
    result.notes.push_back("throughput MIP: every operator has one option; nothing for CBC to decide");
    return result;
  }
  auto run = RunMip(m.mb, AutoOnCbc(options), nullptr, deadline);
  if (!run.ok()) return run.status();
  const MipOutcome& out = *run;
  result.mip->backend = out.solver;
  result.notes.push_back(fmt::format("throughput MIP: {} columns, {} rows; {} status {}", m.mb.num_cols(),
                                     m.mb.num_rows(), out.solver, out.status_text));
  if (!TakeOutcome(out, &result)) return result;
  std::vector<int> a;
  std::vector<int64_t> copies;
  ReadAssignment(m, *out.solution, &a, &copies);
  const double value = ComputeStreamLoads(pr, a, &copies).interval_us();
  result.schedule = CyclicSchedule(pr, a, copies, value);
  result.objective = value;
  if (!std::isnan(result.bound)) result.bound = std::min(result.bound, value);
  result.gap = value > 0 && !std::isnan(result.bound) ? (value - result.bound) / value : 0.0;
  return result;
}

}  // namespace hetplan::mip_internal
