#include "hetplan/solve/list_schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace hetplan {

int64_t CumulativeProfile::Held(double t) const {
  int64_t held = 0;
  for (const Hold& h : holds_) {
    if (h.start <= t && t < h.finish) held += h.amount;
  }
  return held;
}

double CumulativeProfile::EarliestFit(double ready, double dur, int64_t amount) const {
  if (amount <= 0 || dur <= 0) return ready;
  if (amount > pool_) return std::numeric_limits<double>::infinity();
  // What is held only changes where a hold starts or ends: [t, t + dur) fits
  // when it fits at t and at every start inside; the candidates for t are
  // ready and the finishes after it.
  std::vector<double> candidates{ready};
  for (const Hold& h : holds_) {
    if (h.finish > ready) candidates.push_back(h.finish);
  }
  std::sort(candidates.begin(), candidates.end());
  for (double t : candidates) {
    bool fits = Held(t) + amount <= pool_;
    for (size_t i = 0; fits && i < holds_.size(); ++i) {
      if (holds_[i].start > t && holds_[i].start < t + dur) fits = Held(holds_[i].start) + amount <= pool_;
    }
    if (fits) return t;
  }
  return std::numeric_limits<double>::infinity();  // unreachable: after the last finish everything is free
}

double EarliestFitBoth(const CumulativeProfile& xb, int64_t crossbars, const CumulativeProfile& adc, int64_t adcs,
                       double ready, double dur) {
  double t = ready;
  for (;;) {
    double next = crossbars > 0 ? xb.EarliestFit(t, dur, crossbars) : t;
    if (adcs > 0 && std::isfinite(next)) next = adc.EarliestFit(next, dur, adcs);
    if (next == t || !std::isfinite(next)) return next;
    t = next;
  }
}

bool WithinEndurance(const PuInfo& pu, int64_t written, int64_t free) {
  return pu.lifetime_inferences * static_cast<double>(written) + pu.other_lifetime_writes <=
         pu.endurance_writes * static_cast<double>(free);
}

int64_t RewritableCrossbars(const Problem& p, int q, const std::vector<int>& assignment,
                            const std::vector<char>* rewritten) {
  int64_t left = p.costs->pu(q).capacity;
  for (int v = 0; v < static_cast<int>(assignment.size()); ++v) {
    if (assignment[v] == q && !(rewritten != nullptr && (*rewritten)[v])) left -= p.costs->crossbars(v, q);
  }
  return left;
}

Schedule ListSchedule(const Problem& p, const std::vector<int>& assignment, const std::vector<int>* order,
                      const std::vector<char>* rewritten) {
  const OpGraph& g = *p.graph;
  const CostModel& c = *p.costs;
  const std::vector<int>& seq = order ? *order : g.topological_order();
  Schedule s;
  s.ops.assign(g.size(), ScheduledOp{});
  std::vector<double> free_at(c.num_pus(), 0.0);
  std::vector<CumulativeProfile> adcs, crossbars;
  for (int q = 0; q < c.num_pus(); ++q) {
    adcs.emplace_back(c.pu(q).adc_pool);
    crossbars.emplace_back(rewritten != nullptr && c.pu(q).reprogram ? RewritableCrossbars(p, q, assignment, rewritten)
                                                                     : 0);
  }
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
    op.rewritten = rewritten != nullptr && (*rewritten)[v] && c.pu(dv).reprogram;
    const double dur = ScheduledDuration(c, v, op);
    const int64_t held = op.rewritten ? c.crossbars(v, dv) : 0;
    if (held > 0 || c.adcs(v, dv) > 0) {
      ready = EarliestFitBoth(crossbars[dv], held, adcs[dv], c.adcs(v, dv), ready, dur);
      if (held > 0) crossbars[dv].Add(ready, ready + dur, held);
      if (c.adcs(v, dv) > 0) adcs[dv].Add(ready, ready + dur, c.adcs(v, dv));
    }
    op.start_us = ready;
    op.finish_us = ready + dur;
    if (!c.pu(dv).spatial) free_at[dv] = op.finish_us;
    s.makespan_us = std::max(s.makespan_us, op.finish_us);
  }
  s.energy_uj = ScheduleEnergy(p, s);
  return s;
}

bool FitsCapacity(const Problem& p, const std::vector<int>& assignment, const std::vector<char>* rewritten) {
  const CostModel& c = *p.costs;
  std::vector<int64_t> used(c.num_pus(), 0), largest(c.num_pus(), 0), written(c.num_pus(), 0);
  for (int v = 0; v < static_cast<int>(assignment.size()); ++v) {
    const int q = assignment[v];
    if (rewritten != nullptr && (*rewritten)[v] && c.pu(q).reprogram) {
      largest[q] = std::max(largest[q], c.crossbars(v, q));
      written[q] += c.crossbars(v, q);
    } else {
      used[q] += c.crossbars(v, q);
    }
  }
  for (int q = 0; q < c.num_pus(); ++q) {
    const PuInfo& pu = c.pu(q);
    if (!pu.spatial) continue;
    const int64_t free = pu.capacity - used[q];
    if (free < 0 || largest[q] > free) return false;
    if ((written[q] > 0 || pu.other_lifetime_writes > 0) && !WithinEndurance(pu, written[q], free)) return false;
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

void ScheduleOrder(const Schedule& schedule, std::vector<int>* device, std::vector<int>* order) {
  device->assign(schedule.ops.size(), 0);
  std::vector<std::tuple<double, double, int>> by_start;
  for (size_t v = 0; v < schedule.ops.size(); ++v) {
    const ScheduledOp& op = schedule.ops[v];
    (*device)[v] = std::max(0, op.device);
    by_start.emplace_back(op.start_us, op.finish_us, static_cast<int>(v));
  }
  std::sort(by_start.begin(), by_start.end());
  order->clear();
  for (const auto& t : by_start) order->push_back(std::get<2>(t));
}

}  // namespace hetplan
