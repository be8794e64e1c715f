// The exact search's series decomposition (exact/search_internal.h): the
// segments between cuts, and one segment's operators with local ids.
#include <vector>

#include "hetplan/graph/algorithms.h"
#include "solve/exact/search_internal.h"

namespace hetplan::exact_internal {
namespace {

// An edge may carry a transfer when its ends can run on different PUs with a
// positive transfer time between them.
bool MayTransfer(const CostModel& c, const std::vector<std::vector<int>>& cand, int e, int u, int w) {
  for (int p : cand[u]) {
    for (int q : cand[w]) {
      if (p != q && c.transfer_us(e, p, q) > 0) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<Segment> Decompose(const OpGraph& g, const CostModel& c, const std::vector<std::vector<int>>& cand) {
  const int n = g.size();
  std::vector<bool> cut = CutOperators(g);
  std::vector<int> jumped(n + 1, 0);  // difference array over topological positions
  for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
    const int u = g.edges()[e].from, w = g.edges()[e].to;
    if (!MayTransfer(c, cand, e, u, w)) continue;
    ++jumped[g.topo_position(u) + 1];
    --jumped[g.topo_position(w)];
  }
  std::vector<Segment> segments(1);
  int depth = 0;
  for (int i = 0; i < n; ++i) {
    depth += jumped[i];
    const int v = g.topological_order()[i];
    segments.back().ops.push_back(v);
    if (cut[v] && depth == 0 && i + 1 < n) {
      segments.back().has_exit = true;
      segments.push_back(Segment{{}, v, false});
    }
  }
  if (n > 0 && cut[g.topological_order()[n - 1]]) segments.back().has_exit = true;
  return segments;
}

LocalSegment BuildLocal(const SearchInput& in) {
  const OpGraph& g = *in.problem->graph;
  const CostModel& c = *in.problem->costs;
  const Segment& seg = *in.segment;
  const int k = c.num_pus();
  LocalSegment l;
  l.m = static_cast<int>(seg.ops.size());
  std::vector<int> local(g.size(), -1);
  for (int i = 0; i < l.m; ++i) local[seg.ops[i]] = i;
  for (int p = 0; p < k; ++p) (c.pu(p).spatial ? l.spatial : l.serial).push_back(p);
  l.cand.resize(l.m);
  l.dur.assign(static_cast<size_t>(l.m) * k, kInf);
  l.xb.assign(static_cast<size_t>(l.m) * k, 0);
  l.in.resize(l.m);
  l.out.resize(l.m);
  for (int i = 0; i < l.m; ++i) {
    const int v = seg.ops[i];
    for (int p : (*in.cand)[v]) {
      if (seg.has_exit && i == l.m - 1 && in.exit_pu >= 0 && p != in.exit_pu) continue;
      if (c.pu(p).spatial && c.crossbars(v, p) > in.capacity[p]) continue;
      l.cand[i].push_back(p);
      l.dur[static_cast<size_t>(i) * k + p] = c.latency_us(v, p);
      l.xb[static_cast<size_t>(i) * k + p] = c.pu(p).spatial ? c.crossbars(v, p) : 0;
    }
    for (int e : g.in_edges(v)) {
      const int u = g.edges()[e].from;
      if (local[u] >= 0) {
        l.in[i].push_back({e, local[u]});
      } else if (u == seg.entry) {
        l.in[i].push_back({e, -1});
      }
      // Any other predecessor finished before the entry and sends no
      // transfer across it (Decompose): it never delays this operator.
    }
    for (int e : g.out_edges(v)) {
      const int w = g.edges()[e].to;
      if (local[w] >= 0) l.out[i].push_back({e, local[w]});
    }
  }
  return l;
}

}  // namespace hetplan::exact_internal
