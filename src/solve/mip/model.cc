// The CIM paper's MIP as rows and columns (mip/model.h).
#include "solve/mip/model.h"

#include <fmt/format.h>

#include "hetplan/graph/algorithms.h"

namespace hetplan::mip_internal {

std::vector<std::vector<int>> Candidates(const CostModel& c) {
  std::vector<std::vector<int>> cand(c.num_ops());
  for (int v = 0; v < c.num_ops(); ++v) {
    for (int p = 0; p < c.num_pus(); ++p) {
      if (!c.supported(v, p)) continue;
      if (c.pu(p).spatial && c.crossbars(v, p) > c.pu(p).capacity) continue;
      cand[v].push_back(p);
    }
  }
  return cand;
}

namespace {

// Eq. 13 over the candidate PUs (T_acc,v := 0 where v cannot run on the accelerator).
double BigM(const OpGraph& g, const CostModel& c, const std::vector<std::vector<int>>& cand) {
  const auto& edges = g.edges();
  double big_m = 0;
  for (int v = 0; v < g.size(); ++v) {
    double worst = 0;
    for (int p : cand[v]) worst = std::max(worst, c.latency_us(v, p));
    big_m += worst;
  }
  for (int e = 0; e < static_cast<int>(edges.size()); ++e) {
    double worst = 0;
    for (int p : cand[edges[e].from]) {
      for (int q : cand[edges[e].to]) {
        if (p != q) worst = std::max(worst, c.transfer_us(e, p, q));
      }
    }
    big_m += worst;
  }
  return big_m;
}

// Σ_p T_{v,p} x_{v,p}: the duration part of f_v (eq. 7), substituted.
void DurationTerms(const CostModel& c, const IlpModel& m, int v, double sign, std::vector<Term>& out) {
  for (int p : m.cand[v]) {
    const double t = c.latency_us(v, p);
    if (t != 0) out.push_back({m.x[v][p], sign * t});
  }
}

// Columns x_{v,p} (eq. 5), s_v and T; eq. 5's rows: one PU per operator.
void AddAssignment(const Problem& pr, IlpModel& m) {
  const CostModel& c = *pr.costs;
  const int n = pr.graph->size();
  const bool energy = pr.objective == Objective::kEnergy;
  const double M = m.big_m;
  m.x.assign(n, std::vector<int>(c.num_pus(), -1));
  for (int v = 0; v < n; ++v) {
    for (int p : m.cand[v]) {
      const double obj = energy ? c.energy_uj(v, p).value_or(0.0) : 0.0;
      m.x[v][p] = m.mb.AddCol(fmt::format("x_{}_{}", v, p), 0, 1, obj, true);
    }
  }
  m.s.resize(n);
  for (int v = 0; v < n; ++v) m.s[v] = m.mb.AddCol(fmt::format("s_{}", v), 0, M, 0, false);
  double t_hi = M;
  if (energy && pr.latency_cap_us) t_hi = std::min(t_hi, *pr.latency_cap_us);
  m.makespan = m.mb.AddCol("T", 0, t_hi, energy ? 0.0 : 1.0, false);
  for (int v = 0; v < n; ++v) {
    std::vector<Term> t;
    for (int p : m.cand[v]) t.push_back({m.x[v][p], 1.0});
    m.mb.AddRow(fmt::format("assign_{}", v), std::move(t), 1, 1);
  }
}

// The transfer terms of edge e's precedence row (u → v): the paper's
// z_{u,v} ≥ |x_u − x_v| on two PUs with symmetric transfers, else one y per
// pair of PUs a transfer can cross.
void AddTransfers(const CostModel& c, int e, int u, int v, IlpModel& m, std::vector<Term>& prec) {
  bool possible = false, symmetric = true;
  for (int p : m.cand[u]) {
    for (int q : m.cand[v]) {
      if (p == q) continue;
      if (c.transfer_us(e, p, q) > 0) possible = true;
      if (c.transfer_us(e, p, q) != c.transfer_us(e, q, p)) symmetric = false;
    }
  }
  if (possible && c.num_pus() == 2 && symmetric) {
    // x_w = "w on PU 0" (0 when w cannot run there).
    const double t = c.transfer_us(e, 0, 1);
    const int col = m.mb.AddCol(fmt::format("z_{}", e), 0, 1, 0, false);
    m.z[e] = col;
    m.z_us[e] = t;
    std::vector<Term> a = {{col, 1.0}}, b = {{col, 1.0}};
    if (m.x[u][0] >= 0) {
      a.push_back({m.x[u][0], -1.0});
      b.push_back({m.x[u][0], 1.0});
    }
    if (m.x[v][0] >= 0) {
      a.push_back({m.x[v][0], 1.0});
      b.push_back({m.x[v][0], -1.0});
    }
    m.mb.AddRow(fmt::format("z_{}_a", e), std::move(a), 0, kLpInf);
    m.mb.AddRow(fmt::format("z_{}_b", e), std::move(b), 0, kLpInf);
    prec.push_back({col, -t});
  } else if (possible) {
    for (int p : m.cand[u]) {
      for (int q : m.cand[v]) {
        const double t = c.transfer_us(e, p, q);
        if (p == q || t <= 0) continue;
        const int col = m.mb.AddCol(fmt::format("y_{}_{}_{}", e, p, q), 0, 1, 0, false);
        m.y[e].push_back({p, q, col, t});
        m.mb.AddRow(fmt::format("y_{}_{}_{}", e, p, q), {{col, 1.0}, {m.x[u][p], -1.0}, {m.x[v][q], -1.0}}, -1,
                    kLpInf);
        prec.push_back({col, -t});
      }
    }
  }
}

// Eqs. 8–9: precedence with transfers; eq. 6: T ≥ f_v for sinks.
void AddPrecedence(const OpGraph& g, const CostModel& c, IlpModel& m) {
  const auto& edges = g.edges();
  m.z.assign(edges.size(), -1);
  m.z_us.assign(edges.size(), 0.0);
  m.y.assign(edges.size(), {});
  for (int e = 0; e < static_cast<int>(edges.size()); ++e) {
    const int u = edges[e].from, v = edges[e].to;
    std::vector<Term> prec = {{m.s[v], 1.0}, {m.s[u], -1.0}};
    DurationTerms(c, m, u, -1.0, prec);
    AddTransfers(c, e, u, v, m, prec);
    m.mb.AddRow(fmt::format("prec_{}", e), std::move(prec), 0, kLpInf);
  }
  for (int v = 0; v < g.size(); ++v) {
    if (!g.is_sink(v)) continue;
    std::vector<Term> t = {{m.makespan, 1.0}, {m.s[v], -1.0}};
    DurationTerms(c, m, v, -1.0, t);
    m.mb.AddRow(fmt::format("sink_{}", v), std::move(t), 0, kLpInf);
  }
}

// Eqs. 11–12 on every serial PU both may run on, with one shared o_{u,v}.
void AddSerialOrder(const OpGraph& g, const CostModel& c, IlpModel& m) {
  const double M = m.big_m;
  for (const auto& [u, v] : ParallelPairs(g)) {
    std::vector<int> common;
    for (int p : m.cand[u]) {
      if (!c.pu(p).spatial && m.x[v][p] >= 0) common.push_back(p);
    }
    if (common.empty()) continue;
    const int o = m.mb.AddCol(fmt::format("o_{}_{}", u, v), 0, 1, 0, true);
    m.pairs.push_back({u, v, o});
    for (int p : common) {
      // s_v ≥ f_u − M(3 − x_{u,p} − x_{v,p} − o)
      std::vector<Term> a = {{m.s[v], 1.0}, {m.s[u], -1.0}, {m.x[u][p], -M}, {m.x[v][p], -M}, {o, -M}};
      DurationTerms(c, m, u, -1.0, a);
      m.mb.AddRow(fmt::format("ord_{}_{}_{}_a", u, v, p), std::move(a), -3 * M, kLpInf);
      // s_u ≥ f_v − M(2 − x_{u,p} − x_{v,p} + o)
      std::vector<Term> b = {{m.s[u], 1.0}, {m.s[v], -1.0}, {m.x[u][p], -M}, {m.x[v][p], -M}, {o, M}};
      DurationTerms(c, m, v, -1.0, b);
      m.mb.AddRow(fmt::format("ord_{}_{}_{}_b", u, v, p), std::move(b), -2 * M, kLpInf);
    }
  }
}

// Per PU: not in the paper, valid for every schedule: a serial PU runs its
// operators one at a time, so T ≥ its load (it lifts the LP bound of the
// big-M model considerably on wide graphs); eq. 14: the crossbar capacity of
// each spatial PU, where it can bind.
void AddLoadAndCapacity(int n, const CostModel& c, IlpModel& m) {
  for (int p = 0; p < c.num_pus(); ++p) {
    if (c.pu(p).spatial) continue;
    std::vector<Term> t = {{m.makespan, 1.0}};
    int count = 0;
    for (int v = 0; v < n; ++v) {
      if (m.x[v][p] < 0 || c.latency_us(v, p) == 0) continue;
      t.push_back({m.x[v][p], -c.latency_us(v, p)});
      ++count;
    }
    if (count > 1) m.mb.AddRow(fmt::format("load_{}", p), std::move(t), 0, kLpInf);
  }
  for (int p = 0; p < c.num_pus(); ++p) {
    if (!c.pu(p).spatial) continue;
    std::vector<Term> t;
    int64_t total = 0;
    for (int v = 0; v < n; ++v) {
      if (m.x[v][p] < 0 || c.crossbars(v, p) == 0) continue;
      t.push_back({m.x[v][p], static_cast<double>(c.crossbars(v, p))});
      total += c.crossbars(v, p);
    }
    if (total > c.pu(p).capacity) {
      m.mb.AddRow(fmt::format("cap_{}", p), std::move(t), -kLpInf, static_cast<double>(c.pu(p).capacity));
    }
  }
}

}  // namespace

IlpModel BuildModel(const Problem& pr) {
  const OpGraph& g = *pr.graph;
  const CostModel& c = *pr.costs;
  IlpModel m;
  m.cand = Candidates(c);
  m.big_m = BigM(g, c, m.cand);
  AddAssignment(pr, m);
  AddPrecedence(g, c, m);
  AddSerialOrder(g, c, m);
  AddLoadAndCapacity(g.size(), c, m);
  return m;
}

std::vector<double> ModelValues(const Problem& pr, const IlpModel& m, const std::vector<int>& assignment,
                                const std::vector<int>& order, const Schedule& schedule) {
  const OpGraph& g = *pr.graph;
  std::vector<double> x(m.mb.num_cols(), 0.0);
  const auto& a = assignment;
  for (int v = 0; v < g.size(); ++v) {
    x[m.x[v][a[v]]] = 1.0;
    x[m.s[v]] = schedule.ops[v].start_us;
  }
  x[m.makespan] = schedule.makespan_us;
  for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
    const int u = g.edges()[e].from, v = g.edges()[e].to;
    if (m.z[e] >= 0) x[m.z[e]] = a[u] != a[v] ? 1.0 : 0.0;
    for (const TransferVar& t : m.y[e]) x[t.col] = (a[u] == t.p && a[v] == t.q) ? 1.0 : 0.0;
  }
  std::vector<int> pos(g.size());
  for (int i = 0; i < static_cast<int>(order.size()); ++i) pos[order[i]] = i;
  for (const auto& pair : m.pairs) x[pair.col] = pos[pair.u] < pos[pair.v] ? 1.0 : 0.0;
  return x;
}

}  // namespace hetplan::mip_internal
