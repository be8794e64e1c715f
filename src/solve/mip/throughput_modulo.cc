// The throughput objective's MIP with --max-latency: the unbounded model
// (mip/throughput.cc) plus a cyclic schedule of one input, so that CBC
// chooses the assignment, the copies and the schedule together.
//  * s_v ∈ [0, cap] per operator, t_e ∈ [0, cap] per edge (its transfer's
//    start); d_v = Σ_o T_o x_{v,o}.
//  * s_v + d_v ≤ cap; t_e ≥ s_u + d_u; s_v ≥ t_e + Σ_{p≠q} transfer × y_{e,p,q}.
//  * Per pair of operators i < j that may share a serial PU p, and per pair
//    of edges that may cross the same link: an integer m (the other's slot
//    in IIs from this one's), s_i + d_i ≤ s_j + m II and s_j + m II + d_j ≤
//    s_i + II, relaxed by M unless both are on that resource (x_{i,p} and
//    x_{j,p}; the two transfers' y). m = m_lo + Σ_b 2^b z_b, and each z_b ×
//    II is a column w_b with McCormick's four inequalities (exact, z binary,
//    II bounded).
//  * m's range: |s_i − s_j| ≤ cap and II ≥ ii_lo bound it.
// Objective: min II over [ii_lo, ii_hi]. The schedule returned is re-timed
// from CBC's offsets by ScheduleWithPairs (exact earliest starts), so CBC's
// tolerances never reach the file.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "hetplan/solve/throughput.h"
#include "solve/mip/backend.h"
#include "solve/mip/solver.h"
#include "solve/mip/throughput.h"

namespace hetplan::mip_internal {
namespace {

// Two tasks that may share a serial resource, under the conditions `when`
// (columns that are all 1 when they do): task ids as ModuloPair's.
struct Clash {
  int i, j;
  double di, dj;
  std::vector<int> when;
  // Where each runs when they clash: an operator's PU twice, a transfer's
  // from and to PUs.
  std::pair<int, int> at_i, at_j;
};

struct Offset {
  int i, j;
  int64_t lo;
  std::vector<int> z, w;
};

// The pairs of tasks that may share a resource: operators on a serial PU
// both run on, transfers on a link both may cross. Zero-length tasks take no
// slot.
std::vector<Clash> Clashes(const Problem& pr, const ThroughputModel& m) {
  const CostModel& c = *pr.costs;
  const OpGraph& g = *pr.graph;
  const int n = g.size(), edges = static_cast<int>(g.edges().size());
  std::vector<Clash> out;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      for (const MipOption& oi : m.opt[i]) {
        if (c.pu(oi.pu).spatial || oi.us <= 0) continue;
        for (const MipOption& oj : m.opt[j]) {
          if (oj.pu != oi.pu || oj.us <= 0) continue;
          out.push_back({i, j, oi.us, oj.us, {oi.col, oj.col}, {oi.pu, oi.pu}, {oj.pu, oj.pu}});
        }
      }
    }
  }
  for (int e = 0; e < edges; ++e) {
    for (int f = e + 1; f < edges; ++f) {
      for (const MipCut& a : m.cuts[e]) {
        for (const MipCut& b : m.cuts[f]) {
          if (std::min(a.p, a.q) != std::min(b.p, b.q) || std::max(a.p, a.q) != std::max(b.p, b.q)) continue;
          out.push_back({n + e, n + f, a.us, b.us, {a.col, b.col}, {a.p, a.q}, {b.p, b.q}});
        }
      }
    }
  }
  return out;
}

// m's range for a pair: m II ∈ [s_i − s_j + d_i, s_i − s_j + II − d_j] with
// s_i − s_j ∈ [d_j − cap, cap − d_i] and II ∈ [lo, hi].
std::pair<int64_t, int64_t> OffsetRange(double di, double dj, double cap, double lo, double hi) {
  const double below = di + dj - cap, above = cap - di - dj;
  const double m_lo = std::ceil(std::min(below / lo, below / hi) - 1e-9);
  const double m_hi = std::floor(std::max(above / lo, above / hi) + 1e-9) + 1;
  return {static_cast<int64_t>(m_lo), static_cast<int64_t>(std::max(m_lo, m_hi))};
}

int Bits(int64_t span) {
  int b = 0;
  while ((int64_t{1} << b) <= span) ++b;
  return b;
}


// The MIP being built: the unbounded model, the pairs, their offsets, and
// the start columns (s per operator, t per edge).
struct ModuloModel {
  ThroughputModel m;
  std::vector<Clash> clashes;
  std::vector<Offset> offsets;
  std::vector<int> s, t;
  int start(int task) const { return task < static_cast<int>(s.size()) ? s[task] : t[task - s.size()]; }
};

// Starts, the cap on every finish, and precedences through each transfer.
void AddStarts(const Problem& pr, double cap, ModuloModel* mm) {
  const OpGraph& g = *pr.graph;
  const int n = g.size(), edges = static_cast<int>(g.edges().size());
  ModelBuilder& mb = mm->m.mb;
  auto duration = [&](int v, double sign, std::vector<Term>* row) {
    for (const MipOption& o : mm->m.opt[v]) row->push_back({o.col, sign * o.us});
  };
  mm->s.resize(n);
  mm->t.resize(edges);
  for (int v = 0; v < n; ++v) {
    mm->s[v] = mb.AddCol(fmt::format("s_{}", v), 0, cap, 0, false);
    std::vector<Term> row = {{mm->s[v], 1}};
    duration(v, 1, &row);
    mb.AddRow(fmt::format("latency_{}", v), row, -kLpInf, cap);
  }
  for (int e = 0; e < edges; ++e) {
    const int u = g.edges()[e].from, v = g.edges()[e].to;
    mm->t[e] = mb.AddCol(fmt::format("t_{}", e), 0, cap, 0, false);
    std::vector<Term> out = {{mm->t[e], 1}, {mm->s[u], -1}};
    duration(u, -1, &out);
    mb.AddRow(fmt::format("sent_{}", e), out, 0, kLpInf);
    std::vector<Term> in = {{mm->s[v], 1}, {mm->t[e], -1}};
    for (const MipCut& k : mm->m.cuts[e]) in.push_back({k.col, -k.us});
    mb.AddRow(fmt::format("received_{}", e), in, 0, kLpInf);
  }
}

// The offset m of the pair of clashes[at, …) (those with the same two tasks):
// its range the union over every resource they may share, its bits z and
// the products w = z × II.
Offset AddOffset(const std::vector<Clash>& clashes, size_t at, double cap, double ii_lo, double ii_hi,
                 ThroughputModel* m) {
  ModelBuilder& mb = m->mb;
  const Clash& k = clashes[at];
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (size_t b = at; b < clashes.size() && clashes[b].i == k.i && clashes[b].j == k.j; ++b) {
    const auto range = OffsetRange(clashes[b].di, clashes[b].dj, cap, ii_lo, ii_hi);
    lo = std::min(lo, range.first);
    hi = std::max(hi, range.second);
  }
  Offset o{k.i, k.j, lo, {}, {}};
  const int bits = Bits(hi - lo);
  std::vector<Term> range;
  for (int b = 0; b < bits; ++b) {
    const int z = mb.AddCol(fmt::format("z_{}_{}_{}", k.i, k.j, b), 0, 1, 0, true);
    const int w = mb.AddCol(fmt::format("w_{}_{}_{}", k.i, k.j, b), 0, ii_hi, 0, false);
    mb.AddRow(fmt::format("wz_{}_{}_{}", k.i, k.j, b), {{w, 1}, {z, -ii_hi}}, -kLpInf, 0);
    mb.AddRow(fmt::format("wii_{}_{}_{}", k.i, k.j, b), {{w, 1}, {m->ii, -1}}, -kLpInf, 0);
    mb.AddRow(fmt::format("wlo_{}_{}_{}", k.i, k.j, b), {{w, 1}, {m->ii, -1}, {z, -ii_hi}}, -ii_hi, kLpInf);
    range.push_back({z, static_cast<double>(int64_t{1} << b)});
    o.z.push_back(z);
    o.w.push_back(w);
  }
  if (!range.empty()) mb.AddRow(fmt::format("m_{}_{}", k.i, k.j), range, -kLpInf, static_cast<double>(hi - lo));
  return o;
}

// Per clash: s_i + d_i ≤ s_j + m II and s_j + m II + d_j ≤ s_i + II, each
// relaxed by M × (|when| − Σ when).
void AddPairs(double cap, double ii_lo, double ii_hi, ModuloModel* mm) {
  ThroughputModel& m = mm->m;
  for (size_t at = 0; at < mm->clashes.size(); ++at) {
    const Clash& k = mm->clashes[at];
    if (mm->offsets.empty() || mm->offsets.back().i != k.i || mm->offsets.back().j != k.j) {
      mm->offsets.push_back(AddOffset(mm->clashes, at, cap, ii_lo, ii_hi, &m));
    }
    const Offset& o = mm->offsets.back();
    // m II as terms: m_lo II + Σ 2^b w_b.
    std::vector<Term> shift = {{m.ii, static_cast<double>(o.lo)}};
    for (size_t b = 0; b < o.w.size(); ++b) shift.push_back({o.w[b], static_cast<double>(int64_t{1} << b)});
    const double big = cap + std::max(k.di, k.dj) +
                       (static_cast<double>(std::llabs(o.lo)) + static_cast<double>(int64_t{1} << o.w.size()) + 1) * ii_hi;
    std::vector<Term> after = shift;  // s_j + m II − s_i ≥ d_i − M (…)
    after.push_back({mm->start(k.j), 1});
    after.push_back({mm->start(k.i), -1});
    std::vector<Term> before;  // s_i + II − s_j − m II ≥ d_j − M (…)
    for (const Term& x : shift) before.push_back({x.col, -x.coef});
    before.push_back({m.ii, 1});
    before.push_back({mm->start(k.i), 1});
    before.push_back({mm->start(k.j), -1});
    for (int col : k.when) {
      after.push_back({col, -big});
      before.push_back({col, -big});
    }
    const double slack = big * static_cast<double>(k.when.size());
    m.mb.AddRow(fmt::format("after_{}_{}_{}", k.i, k.j, k.when[0]), after, k.di - slack, kLpInf);
    m.mb.AddRow(fmt::format("before_{}_{}_{}", k.i, k.j, k.when[0]), before, k.dj - slack, kLpInf);
  }
}

// The offsets of the pairs that do share a resource in the solution `x`
// with assignment `a` (read from the assignment: a transfer's y may be 1
// where nothing crosses).
std::vector<ModuloPair> ActivePairs(const Problem& pr, const ModuloModel& mm, const std::vector<double>& x,
                                    const std::vector<int>& a) {
  const OpGraph& g = *pr.graph;
  const int n = g.size();
  auto placed = [&](int task) {
    if (task < n) return std::pair<int, int>{a[task], a[task]};
    return std::pair<int, int>{a[g.edges()[task - n].from], a[g.edges()[task - n].to]};
  };
  std::vector<ModuloPair> pairs;
  size_t next = 0;
  for (const Clash& k : mm.clashes) {
    while (mm.offsets[next].i != k.i || mm.offsets[next].j != k.j) ++next;
    if (placed(k.i) != k.at_i || placed(k.j) != k.at_j) continue;
    const Offset& o = mm.offsets[next];
    int64_t shift = o.lo;
    for (size_t b = 0; b < o.z.size(); ++b) shift += x[o.z[b]] > 0.5 ? int64_t{1} << b : 0;
    pairs.push_back({k.i, k.j, shift});
  }
  return pairs;
}

}  // namespace

double IntervalCeiling(const Problem& pr) {
  const CostModel& c = *pr.costs;
  double boundary = 0;
  for (int q = 0; q < c.num_pus(); ++q) boundary = std::max(boundary, c.boundary_us(q));
  return *pr.latency_cap_us + boundary * static_cast<double>(pr.graph->edges().size());
}

Result<SolveResult> SolveModuloMip(const Problem& pr, const SolveOptions& options, const Deadline& deadline,
                                   double ii_lo, double ii_hi, int64_t max_rows, bool min_latency) {
  const int n = pr.graph->size(), edges = static_cast<int>(pr.graph->edges().size());
  const double cap = *pr.latency_cap_us;
  ii_lo = std::max(ii_lo, 1e-9 * std::max(cap, 1.0));
  ii_hi = std::max(ii_hi, ii_lo);
  ModuloModel mm{BuildThroughputModel(pr, ii_lo, ii_hi), {}, {}, {}, {}};
  mm.clashes = Clashes(pr, mm.m);
  int64_t rows = mm.m.mb.num_rows() + n + 2 * static_cast<int64_t>(edges);
  for (const Clash& k : mm.clashes) {
    const auto [lo, hi] = OffsetRange(k.di, k.dj, cap, ii_lo, ii_hi);
    rows += 2 + 3 * Bits(hi - lo);
  }
  if (rows > max_rows) {
    return Error(ErrorCode::kUnsupported,
                 "the throughput MIP with a latency bound would have about {} rows (more than {}) for {} pairs of "
                 "tasks that may share a resource",
                 rows, max_rows, mm.clashes.size());
  }
  AddStarts(pr, cap, &mm);
  AddPairs(cap, ii_lo, ii_hi, &mm);
  if (min_latency) {
    // L ≥ every finish; min L.
    ModelBuilder& mb = mm.m.mb;
    mb.SetObjective(mm.m.ii, 0);
    const int latency = mb.AddCol("L", 0, cap, 1, false);
    for (int v = 0; v < n; ++v) {
      std::vector<Term> row = {{mm.s[v], 1}, {latency, -1}};
      for (const MipOption& o : mm.m.opt[v]) row.push_back({o.col, o.us});
      mb.AddRow(fmt::format("finish_{}", v), row, -kLpInf, 0);
    }
  }
  mm.m.mb.integer_tolerance = 1e-9;
  const ModelBuilder& mb = mm.m.mb;
  SolveResult result;
  result.formulation = "throughput";
  result.mip = MipStats{mb.num_cols(), mb.num_rows(), 0, ""};
  // On HiGHS (by name only) a re-timed II 1e-8 above its bound is reported
  // feasible, not optimal (below).
  auto run = RunMip(mb, AutoOnCbc(options), nullptr, deadline);
  if (!run.ok()) return run.status();
  const MipOutcome& out = *run;
  result.mip->backend = out.solver;
  result.notes.push_back(fmt::format(
      "throughput MIP with a latency bound: {} columns, {} rows, {} pairs of tasks that may share a resource, II in "
      "[{:.6g}, {:.6g}] µs; {} status {}",
      mb.num_cols(), mb.num_rows(), mm.offsets.size(), ii_lo, ii_hi, out.solver, out.status_text));
  if (!TakeOutcome(out, &result)) return result;
  if (!std::isnan(result.bound) && !min_latency) result.bound = std::max(result.bound, ii_lo);
  const std::vector<double>& x = *out.solution;
  std::vector<int> a;
  std::vector<int64_t> copies;
  ReadAssignment(mm.m, x, &a, &copies);
  const std::vector<ModuloPair> pairs = ActivePairs(pr, mm, x, a);
  // CBC's II within its tolerances (a relative 1e-6 either way): the
  // smallest nearby one, no shorter than the plan's loads, whose exact
  // earliest starts keep every pair and the cap.
  const double loads = ComputeStreamLoads(pr, a, &copies).interval_us();
  for (const double f : {-1e-6, -1e-7, -1e-8, 0.0, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4}) {
    auto sched = ScheduleWithPairs(pr, a, copies, std::max(loads, x[mm.m.ii] * (1 + f)), pairs);
    if (sched && sched->makespan_us <= cap * (1 + 1e-9)) {
      result.schedule = std::move(sched);
      break;
    }
  }
  if (!result.schedule) {
    result.status = SolveStatus::kNoSolution;
    result.termination = Termination::kNumerical;
    result.notes.push_back(out.solver + "'s schedule does not keep every pair and the cap once re-timed exactly");
    return result;
  }
  result.objective = min_latency ? result.schedule->makespan_us : *result.schedule->initiation_interval_us;
  if (!std::isnan(result.bound)) result.bound = std::min(result.bound, result.objective);
  result.gap = result.objective > 0 && !std::isnan(result.bound) ? (result.objective - result.bound) / result.objective
                                                                 : 0.0;
  if (result.status == SolveStatus::kOptimal && result.gap > options.relative_gap + 1e-9) {
    // The solver's optimum, re-timed exactly, sits above its bound by more
    // than the gap (its tolerances): a plan, not a proof.
    result.status = SolveStatus::kFeasible;
    result.termination = Termination::kNumerical;
    result.notes.push_back(fmt::format("the re-timed plan is {:.3g} above {}'s bound (its tolerances); not claimed "
                                       "optimal",
                                       result.gap, out.solver));
  }
  return result;
}

}  // namespace hetplan::mip_internal
