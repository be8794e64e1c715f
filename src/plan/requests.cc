// Two requests as one problem (requests.h).
#include "hetplan/plan/requests.h"

#include <set>
#include <string>
#include <tuple>

namespace hetplan {

Result<CombinedRequests> CombineRequests(const OpGraph& g0, const CostModel& c0, const OpGraph& g1,
                                         const CostModel& c1, const std::vector<CoExecution>& extra_coexec) {
  if (c0.num_ops() != g0.size() || c1.num_ops() != g1.size()) {
    return Error(ErrorCode::kInvalidArgument, "two requests: each request's costs must match its graph");
  }
  const int k = c0.num_pus();
  if (c1.num_pus() != k) {
    return Error(ErrorCode::kInvalidArgument, "two requests: the requests list {} and {} PUs; use one platform", k,
                 c1.num_pus());
  }
  for (int p = 0; p < k; ++p) {
    if (c0.pu(p).name != c1.pu(p).name) {
      return Error(ErrorCode::kInvalidArgument, "two requests: PU {} is '{}' for request 0 but '{}' for request 1", p,
                   c0.pu(p).name, c1.pu(p).name);
    }
  }
  for (int p = 0; p < k; ++p) {
    if (c0.boundary_us(p) > 0 || c1.boundary_us(p) > 0) {
      // The combined model folds copies into operators and leaves edges
      // free; a charged boundary would silently vanish.
      return Error(ErrorCode::kUnsupported,
                   "two requests: PU '{}' is charged a segment boundary cost; the two-request model does not "
                   "carry it (plan with --boundary-cost none)",
                   c0.pu(p).name);
    }
  }
  const int n0 = g0.size(), n1 = g1.size();
  std::vector<Operator> ops;
  ops.reserve(static_cast<size_t>(n0 + n1));
  std::vector<Edge> edges;
  for (const Operator& op : g0.operators()) ops.push_back(op);
  for (const Operator& op : g1.operators()) {
    ops.push_back(op);
    ops.back().id += n0;
  }
  for (const Edge& e : g0.edges()) edges.push_back(e);
  for (const Edge& e : g1.edges()) {
    edges.push_back(e);
    edges.back().from += n0;
    edges.back().to += n0;
  }
  HETPLAN_ASSIGN_OR_RETURN(OpGraph graph,
                           OpGraph::Create(g0.name() + "+" + g1.name(), std::move(ops), std::move(edges)));
  CostModel costs(n0 + n1, c0.pus(), static_cast<int>(graph.edges().size()));
  for (int v = 0; v < n0 + n1; ++v) {
    const CostModel& c = v < n0 ? c0 : c1;
    const int u = v < n0 ? v : v - n0;
    for (int p = 0; p < k; ++p) {
      if (c.supported(u, p)) costs.set_latency(v, p, c.latency_us(u, p) + c.h2d_us(u, p) + c.d2h_us(u, p));
    }
  }
  for (int p = 0; p < k; ++p) {
    for (int q = 0; q < k; ++q) costs.set_slowdown(p, q, c0.slowdown(p, q));
  }
  std::vector<CoExecution> rows;
  std::set<std::tuple<std::string, std::string, std::string, std::string, double>> seen;
  for (const std::vector<CoExecution>* list : {&c0.coexec(), &c1.coexec(), &extra_coexec}) {
    for (const CoExecution& r : *list) {
      if (seen.emplace(r.op_a, r.pu_a, r.op_b, r.pu_b, r.makespan_us).second) rows.push_back(r);
    }
  }
  costs.set_coexec(std::move(rows));
  CombinedRequests out{std::move(graph), std::move(costs), RequestSet{}};
  out.requests.split = n0;
  out.requests.chain0 = g0.topological_order();
  for (int v : g1.topological_order()) out.requests.chain1.push_back(v + n0);
  return out;
}

}  // namespace hetplan
