// The throughput objective with --max-latency: the exact method and the MIP
// find the smallest II whose cyclic schedule keeps one input within the cap,
// equal to brute force over every assignment, every number of copies and
// every cyclic schedule on small graphs; "no plan meets the cap" is proven
// where brute force finds none; every schedule passes the validator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "hetplan/solve/frontier.h"
#include "hetplan/solve/solver.h"
#include "solve/ilp_test_support.h"
#include "solve/stream_test_support.h"

namespace hetplan {
namespace {

using namespace ilp_test;     // NOLINT(google-build-using-namespace): the shared test helpers
using namespace stream_test;  // NOLINT(google-build-using-namespace)

// start[to] ≥ start[from] + c + k × II.
struct Arc {
  int from, to;
  double c;
  int64_t k;
};

// The smallest II in [lo, hi] at which the difference constraints `arcs`
// over `nodes` nodes (node 0 the origin, every start ≥ it) hold, or nullopt:
// Bellman–Ford finds a positive cycle at the current II; if its weight falls
// as the II grows, the II moves to where the cycle weighs 0 (no smaller II
// can break it), else no larger II helps.
std::optional<double> SmallestInterval(int nodes, const std::vector<Arc>& arcs, double lo, double hi) {
  double ii = lo;
  for (int iter = 0; iter < 10'000; ++iter) {
    std::vector<double> dist(nodes, 0.0);
    std::vector<int> pred(nodes, -1);  // the arc that set it
    int last = -1;
    for (int round = 0; round <= nodes; ++round) {
      last = -1;
      for (int a = 0; a < static_cast<int>(arcs.size()); ++a) {
        const Arc& x = arcs[a];
        const double w = x.c + static_cast<double>(x.k) * ii;
        if (dist[x.from] + w > dist[x.to] + 1e-9 * std::max(1.0, std::fabs(dist[x.to]))) {
          dist[x.to] = dist[x.from] + w;
          pred[x.to] = a;
          last = x.to;
        }
      }
      if (last < 0) return ii;
    }
    // Walk back into the cycle, then around it.
    int v = last;
    for (int i = 0; i < nodes; ++i) v = arcs[pred[v]].from;
    double c = 0;
    int64_t k = 0;
    int u = v;
    do {
      c += arcs[pred[u]].c;
      k += arcs[pred[u]].k;
      u = arcs[pred[u]].from;
    } while (u != v);
    if (k >= 0) return std::nullopt;
    const double next = c / static_cast<double>(-k);
    if (next <= ii * (1 + 1e-12) || next > hi * (1 + 1e-9)) return std::nullopt;
    ii = next;
  }
  ADD_FAILURE() << "SmallestInterval did not converge";
  return std::nullopt;
}

// Brute force of the II under a latency cap, written apart from the planner:
// every assignment, every number of copies within the budgets; for each,
// every integer offset m of every pair of tasks that share a serial PU or a
// link (j's slot m IIs after i's in the cycle), depth first, a branch cut
// as soon as its constraints admit no II below the best; for each, the
// smallest II by SmallestInterval. Infinity: no plan meets the cap.
double BruteForceWithin(const Problem& p, double cap) {
  const CostModel& c = *p.costs;
  const OpGraph& g = *p.graph;
  const int n = c.num_ops(), k = c.num_pus(), edges = static_cast<int>(g.edges().size());
  double best = std::numeric_limits<double>::infinity();
  // One plan: its tasks (node 1 + v for operator v, 1 + n + e for edge e's
  // transfer), their arcs, and the pairs sharing a resource.
  ForEachPlanWithCopies(p, true, [&](const std::vector<int>& a, const std::vector<int64_t>& copies) {
    std::vector<double> d(1 + n + edges, 0.0);
    std::vector<int> resource(1 + n + edges, -1);  // serial PU q, or link k + p × k + q
    std::vector<Arc> arcs;
    std::vector<double> load(static_cast<size_t>(k) * k + k, 0.0);
    std::vector<int64_t> used(k, 0);
    double lb = 0;
    for (int v = 0; v < n; ++v) {
      d[1 + v] = TimeWithCopies(c, v, a[v], copies[v]);
      if (c.pu(a[v]).spatial) {
        used[a[v]] += copies[v] * c.crossbars(v, a[v]);
        lb = std::max(lb, d[1 + v]);
      } else {
        load[a[v]] += d[1 + v];
        resource[1 + v] = a[v];
      }
      arcs.push_back({0, 1 + v, 0, 0});
      arcs.push_back({1 + v, 0, d[1 + v] - cap, 0});
    }
    for (int q = 0; q < k; ++q) {
      if (c.pu(q).spatial && used[q] > c.pu(q).capacity) return;
    }
    for (int e = 0; e < edges; ++e) {
      const int u = g.edges()[e].from, v = g.edges()[e].to, x = a[u], y = a[v];
      if (x == y) {
        arcs.push_back({1 + u, 1 + v, d[1 + u], 0});
        continue;
      }
      const int t = 1 + n + e;
      d[t] = c.transfer_us(e, x, y);
      resource[t] = k + std::min(x, y) * k + std::max(x, y);
      load[resource[t]] += d[t];
      if (!c.pu(y).spatial) load[y] += c.boundary_us(y);
      arcs.push_back({1 + u, t, d[1 + u], 0});
      arcs.push_back({t, 1 + v, d[t], 0});
    }
    for (double l : load) lb = std::max(lb, l);
    struct Pair {
      int i, j;
      int64_t lo, hi;
    };
    std::vector<Pair> pairs;
    for (int i = 1; i < 1 + n + edges; ++i) {
      for (int j = i + 1; j < 1 + n + edges; ++j) {
        if (resource[i] < 0 || resource[i] != resource[j] || d[i] <= 0 || d[j] <= 0) continue;
        if (d[i] + d[j] > cap * (1 + 1e-9)) return;  // one input's two tasks do not fit
        // m II ∈ [d_i + d_j − cap, cap − d_i − d_j + II] and II ≥ lb.
        pairs.push_back({i, j, static_cast<int64_t>(std::ceil((d[i] + d[j] - cap) / lb - 1e-9)),
                         static_cast<int64_t>(std::floor((cap - d[i] - d[j]) / lb + 1e-9)) + 1});
      }
    }
    std::function<void(size_t)> rec = [&](size_t at) {
      auto ii = SmallestInterval(1 + n + edges, arcs, lb, best);
      if (!ii || *ii >= best * (1 - 1e-9)) return;
      if (at == pairs.size()) {
        best = *ii;
        return;
      }
      const Pair& q = pairs[at];
      for (int64_t m = q.lo; m <= q.hi; ++m) {
        arcs.push_back({q.i, q.j, d[q.i], -m});
        arcs.push_back({q.j, q.i, d[q.j], m - 1});
        rec(at + 1);
        arcs.resize(arcs.size() - 2);
      }
    };
    rec(0);
  });
  return best;
}

TEST(ThroughputWithinLatency, ExactAndMipMatchBruteForce) {
  std::mt19937 rng(20261207);
  TestOptions mip = ExactToZeroGap();
  mip.solver = "mip";
  int bound_binds = 0, none = 0, heuristic_short = 0;
  for (int i = 0; i < 300; ++i) {
    const int n = 2 + static_cast<int>(rng() % 5);
    const int64_t capacity = 2 + static_cast<int64_t>(rng() % 16);
    Instance inst = RandomInstance(rng, n, i % 2 == 0 ? TwoPus(capacity) : ThreePus(capacity), i % 3 == 0);
    AddMvms(&inst, rng);
    if (i % 5 == 1) inst.costs.ChargeBoundary(0, static_cast<double>(1 + rng() % 10));
    Problem p = inst.problem(Objective::kThroughput);
    // Caps between the fastest plan's latency and the II-optimal plan's; one
    // in ten below the fastest.
    const SolveResult fastest = MustSolve(inst.problem(Objective::kLatency), ExactToZeroGap());
    const SolveResult free = MustSolve(p, ExactToZeroGap());
    const double lo = fastest.objective, hi = std::max(lo, free.schedule->makespan_us);
    const double u = static_cast<double>(rng() % 1000) / 1000.0;
    const double cap = i % 10 == 0 ? std::floor(0.95 * lo) : std::ceil(lo + (hi - lo) * u);
    if (cap <= 0) continue;
    p.latency_cap_us = cap;
    const double brute = BruteForceWithin(p, cap);
    bound_binds += std::isfinite(brute) && brute > free.objective * (1 + 1e-9);
    none += !std::isfinite(brute);
    for (const TestOptions& o : {ExactToZeroGap(), mip}) {
      const SolveResult r = MustSolve(p, o);
      const std::string what = fmt::format("instance {} ({}), cap {}: brute force {}\n{}{}", i, o.solver, cap, brute,
                                           Notes(r), Describe(inst));
      if (!std::isfinite(brute)) {
        EXPECT_EQ(r.status, SolveStatus::kInfeasible) << what;
        continue;
      }
      ASSERT_EQ(r.status, SolveStatus::kOptimal) << what;
      heuristic_short += o.solver == "exact" && Notes(r).find("MIP with a latency bound:") != std::string::npos;
      EXPECT_TRUE(Near(r.objective, brute)) << what << "planner " << r.objective;
      EXPECT_LE(r.schedule->makespan_us, cap * (1 + 1e-9)) << what;
      EXPECT_EQ(Violations(StreamJson(p, *r.schedule)), "") << what;
    }
  }
  std::cout << bound_binds << " caps change the optimum; " << none << " admit no plan; the exact method ran its MIP "
            << heuristic_short << " times\n";
  // The cap changes the optimum often, and sometimes no plan meets it.
  EXPECT_GE(bound_binds, 40);
  EXPECT_GE(none, 5);
}

// The (II, latency) front: each point's II is brute force's smallest II under
// its latency, and a cap just below its latency gives the next point's II
// (infinity after the last): no point is missing, none is dominated.
TEST(ThroughputWithinLatency, TheStreamFrontMatchesBruteForce) {
  std::mt19937 rng(46);
  int points = 0, incomplete = 0;
  for (int i = 0; i < 60; ++i) {
    const int n = 2 + static_cast<int>(rng() % 4);
    const int64_t capacity = 2 + static_cast<int64_t>(rng() % 16);
    Instance inst = RandomInstance(rng, n, i % 2 == 0 ? TwoPus(capacity) : ThreePus(capacity), i % 3 == 0);
    AddMvms(&inst, rng);
    const Problem p = inst.problem(Objective::kThroughput);
    SolveOptions o;
    o.relative_gap = 0;
    o.threads = 1;
    auto front = SolveStreamFront(p, o, 100);
    ASSERT_TRUE(front.ok()) << front.status().message();
    ASSERT_FALSE(front->points.empty());
    // CBC's tolerances can leave a solve unproven (a solution feasible only
    // within them is refused when re-timed exactly): that front is checked
    // up to its first unproven point.
    incomplete += !front->complete;
    EXPECT_TRUE(Near(front->points[0].ii_us, BruteForceInterval(p))) << "instance " << i;
    for (size_t k = 0; k < front->points.size(); ++k) {
      const StreamFrontPoint& pt = front->points[k];
      ++points;
      const std::string what = fmt::format("instance {} point {}\n{}", i, k, Describe(inst));
      EXPECT_EQ(Violations(StreamJson(p, pt.schedule)), "") << what;
      EXPECT_DOUBLE_EQ(pt.schedule.makespan_us, pt.latency_us);
      EXPECT_GE(pt.ii_us, BruteForceWithin(p, pt.latency_us) * (1 - 1e-9)) << what;  // never below the optimum
      if (!pt.optimal) break;
      EXPECT_TRUE(Near(BruteForceWithin(p, pt.latency_us), pt.ii_us)) << what;
      const double next = BruteForceWithin(p, pt.latency_us * (1 - 1e-6));
      if (k + 1 < front->points.size()) {
        if (front->points[k + 1].optimal) {
          EXPECT_TRUE(Near(next, front->points[k + 1].ii_us)) << what << next;
        }
        EXPECT_LT(front->points[k + 1].latency_us, pt.latency_us) << what;
      } else if (pt.latency_us > 0 && front->complete) {
        EXPECT_FALSE(std::isfinite(next)) << what << "brute force " << next;
      }
    }
  }
  std::cout << points << " points; " << incomplete << " of 60 fronts not proven to the end\n";
  EXPECT_GT(points, 70);  // many graphs trade II for latency
  EXPECT_LE(incomplete, 3);
}

}  // namespace
}  // namespace hetplan
