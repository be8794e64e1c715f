#include "hetplan/solve/list_schedule.h"

#include <algorithm>

namespace hetplan {

Schedule ListSchedule(const Problem& p, const std::vector<int>& assignment, const std::vector<int>* order) {
  const OpGraph& g = *p.graph;
  const CostModel& c = *p.costs;
  const std::vector<int>& seq = order ? *order : g.topological_order();
  Schedule s;
  s.ops.assign(g.size(), ScheduledOp{});
  std::vector<double> free_at(c.num_pus(), 0.0);
  for (int v : seq) {
    const int dv = assignment[v];
    double ready = 0;
    for (int e : g.in_edges(v)) {
      const Edge& edge = g.edges()[e];
      const int du = assignment[edge.from];
      double arrive = s.ops[edge.from].finish_us + (du != dv ? c.transfer_us(e, du, dv) : 0.0);
      ready = std::max(ready, arrive);
    }
    if (!c.pu(dv).spatial) ready = std::max(ready, free_at[dv]);
    ScheduledOp& op = s.ops[v];
    op.device = dv;
    op.start_us = ready;
    op.finish_us = ready + c.latency_us(v, dv);
    if (!c.pu(dv).spatial) free_at[dv] = op.finish_us;
    s.makespan_us = std::max(s.makespan_us, op.finish_us);
  }
  s.energy_uj = ScheduleEnergy(p, s);
  return s;
}

bool FitsCapacity(const Problem& p, const std::vector<int>& assignment) {
  const CostModel& c = *p.costs;
  std::vector<int64_t> used(c.num_pus(), 0);
  for (int v = 0; v < static_cast<int>(assignment.size()); ++v) used[assignment[v]] += c.crossbars(v, assignment[v]);
  for (int q = 0; q < c.num_pus(); ++q) {
    if (c.pu(q).spatial && used[q] > c.pu(q).capacity) return false;
  }
  return true;
}

std::optional<Schedule> SinglePuSchedule(const Problem& p, int pu) {
  const int n = p.graph->size();
  for (int v = 0; v < n; ++v) {
    if (!p.costs->supported(v, pu)) return std::nullopt;
  }
  std::vector<int> assignment(n, pu);
  if (!FitsCapacity(p, assignment)) return std::nullopt;
  return ListSchedule(p, assignment);
}

}  // namespace hetplan
