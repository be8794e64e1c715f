// Issue 47, item 7: the references a two-request plan is compared with are
// priced with the plan's own cost model, and no mapping is predicted slower
// than a candidate it can evaluate. On a 139-operator Inception-style DAG on
// two cores with contention (measured co-execution makespans above the solo
// costs, as on a busy machine): the naive multi-PU reference equals an
// independent evaluation of that placement under the concurrent pricing (not
// max(Σ request 0, Σ request 1)), and the concurrent mapping, in every state
// space, and the parallel mapping are never predicted slower than the naive
// or single-PU references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "hetplan/plan/requests.h"
#include "hetplan/solve/mapping.h"
#include "hetplan/solve/references.h"
#include "hetplan/solve/solver.h"
#include "hetplan/util/limits.h"

namespace hetplan {
namespace {

// A stem of 3 operators, then 17 Inception blocks: four branches of 1, 2, 2
// and 2 operators from the previous block's output, joined by a concat:
// 3 + 17·8 = 139 operators, ids in topological order.
OpGraph InceptionGraph() {
  std::vector<std::pair<int, int>> edges{{0, 1}, {1, 2}};
  int next = 3, out = 2;
  for (int block = 0; block < 17; ++block) {
    std::vector<int> ends;
    for (int len : {1, 2, 2, 2}) {
      int prev = out;
      for (int i = 0; i < len; ++i) {
        edges.emplace_back(prev, next);
        prev = next++;
      }
      ends.push_back(prev);
    }
    for (int e : ends) edges.emplace_back(e, next);
    out = next++;
  }
  std::vector<Operator> ops(static_cast<size_t>(next));
  for (int v = 0; v < next; ++v) {
    ops[v].id = v;
    ops[v].name = "op" + std::to_string(v);
    ops[v].type = "Conv";
  }
  std::vector<Edge> es;
  for (auto [u, v] : edges) es.push_back(Edge{u, v, {"t"}, 1, 4});
  auto g = OpGraph::Create("inception", std::move(ops), std::move(es));
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

PuInfo Core(const std::string& name, double power_w) {
  PuInfo p;
  p.name = name;
  p.kind = PuKind::kCpu;
  p.power_w = power_w;
  return p;
}

// Two cores, core1 about 30 % slower; every operator on both.
CostModel TwoCoreCosts(const OpGraph& g, std::mt19937& rng) {
  CostModel c(g.size(), {Core("core0", 2.0), Core("core1", 1.6)}, static_cast<int>(g.edges().size()));
  std::uniform_int_distribution<int> w(20, 400);
  for (int v = 0; v < g.size(); ++v) {
    const double us = w(rng);
    c.set_latency(v, 0, us);
    c.set_latency(v, 1, std::round(us * (1.1 + 0.4 * static_cast<double>(rng() % 100) / 100.0)));
  }
  return c;
}

// Measured co-execution rows for every operator pair of the model with
// itself: across the cores `cross` × the longer solo cost, on one core
// `same` × the serial sum (a busy machine).
std::vector<CoExecution> ContentionRows(const OpGraph& g, const CostModel& c, double cross, double same) {
  std::vector<CoExecution> rows;
  for (int a = 0; a < g.size(); ++a) {
    for (int b = 0; b < g.size(); ++b) {
      for (int p = 0; p < 2; ++p) {
        for (int q = 0; q < 2; ++q) {
          const double ta = c.latency_us(a, p), tb = c.latency_us(b, q);
          const double m = p == q ? same * (ta + tb) : cross * std::max(ta, tb);
          rows.push_back({g.op(a).name, c.pu(p).name, g.op(b).name, c.pu(q).name, m});
        }
      }
    }
  }
  return rows;
}

// The concurrent pricing written from docs/mapping.md, independently of the
// library: the cheapest interleaving of request 0 whole on p and request 1
// whole on q (steps: both, measured makespan; either alone, its solo cost),
// by a DP over (i, j). Rows are read both ways and averaged.
double NaiveUnderThePlansModel(const Problem& both, const std::vector<CoExecution>& rows, int p, int q) {
  const CostModel& c = *both.costs;
  const RequestSet& req = *both.requests;
  const size_t n0 = req.chain0.size(), n1 = req.chain1.size();
  const OpGraph& g = *both.graph;
  // (op, pu, op, pu) → (Σ makespans, count); a row also counts read the other way round.
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::pair<double, int>> index;
  for (const CoExecution& r : rows) {
    for (const auto& key : {std::tuple(r.op_a, r.pu_a, r.op_b, r.pu_b), std::tuple(r.op_b, r.pu_b, r.op_a, r.pu_a)}) {
      index[key].first += r.makespan_us;
      ++index[key].second;
    }
  }
  auto measured = [&](int a, int b) {
    const auto it = index.find({g.op(a).name, c.pu(p).name, g.op(b).name, c.pu(q).name});
    const double ta = c.latency_us(a, p), tb = c.latency_us(b, q);
    if (it != index.end()) return it->second.first / it->second.second;
    return p == q ? ta + tb : std::max(ta, tb);
  };
  std::vector<std::vector<double>> pair(n0, std::vector<double>(n1));
  for (size_t i = 0; i < n0; ++i) {
    for (size_t j = 0; j < n1; ++j) pair[i][j] = measured(req.chain0[i], req.chain1[j]);
  }
  std::vector<std::vector<double>> d(n0 + 1, std::vector<double>(n1 + 1, kInf));
  d[0][0] = 0;
  for (size_t i = 0; i <= n0; ++i) {
    for (size_t j = 0; j <= n1; ++j) {
      if (i > 0) d[i][j] = std::min(d[i][j], d[i - 1][j] + c.latency_us(req.chain0[i - 1], p));
      if (j > 0) d[i][j] = std::min(d[i][j], d[i][j - 1] + c.latency_us(req.chain1[j - 1], q));
      if (i > 0 && j > 0) d[i][j] = std::min(d[i][j], d[i - 1][j - 1] + pair[i - 1][j - 1]);
    }
  }
  return d[n0][n1];
}

double MaxOfSums(const Problem& both, int p, int q) {
  double s0 = 0, s1 = 0;
  for (int v : both.requests->chain0) s0 += both.costs->latency_us(v, p);
  for (int v : both.requests->chain1) s1 += both.costs->latency_us(v, q);
  return p == q ? s0 + s1 : std::max(s0, s1);
}

struct Space {
  const char* name;
  ConcurrentSpace space;
  bool solo_steps;
};
const Space kSpaces[] = {{"aligned", ConcurrentSpace::kAligned, true},
                         {"joint", ConcurrentSpace::kJoint, true},
                         {"joint-lockstep", ConcurrentSpace::kJoint, false}};

bool Returned(const SolveResult& r) {
  return std::any_of(r.notes.begin(), r.notes.end(),
                     [](const std::string& n) { return n.find("; returned it") != std::string::npos; });
}

class ConcurrentReferences : public ::testing::TestWithParam<double> {};

// GetParam(): the cross-core contention factor (1.3: moderate, pairing still
// pays; 2.2: pairing never pays, running one request at a time is cheapest).
TEST_P(ConcurrentReferences, PlansAreNeverPredictedSlowerThanTheirReferences) {
  std::mt19937 rng(47);
  const OpGraph g = InceptionGraph();
  ASSERT_EQ(g.size(), 139);
  CostModel costs = TwoCoreCosts(g, rng);
  costs.set_coexec(ContentionRows(g, costs, GetParam(), 1.15));
  auto combined = CombineRequests(g, costs, g, costs);
  ASSERT_TRUE(combined.ok()) << combined.status().message();
  const Problem both = combined->problem(Objective::kLatency);
  const References refs = ComputeReferences(both);
  ASSERT_TRUE(refs.values.contains("naive_multi_pu_us"));
  ASSERT_TRUE(refs.values.contains("best_serial_us"));

  // The naive reference is the placement's price under the plan's model.
  double naive = kInf, old_naive = kInf;
  for (int p = 0; p < 2; ++p) {
    for (int q = 0; q < 2; ++q) {
      naive = std::min(naive, NaiveUnderThePlansModel(both, both.costs->coexec(), p, q));
      old_naive = std::min(old_naive, MaxOfSums(both, p, q));
    }
  }
  const double naive_us = refs.values.at("naive_multi_pu_us");
  EXPECT_NEAR(naive_us, naive, 1e-9 * naive);
  EXPECT_GT(naive_us, old_naive * 1.01) << "contention must price the naive placement above max(Σ0, Σ1)";
  // The naive baseline's plan is that placement, written as the mapping writes its plans.
  auto baseline = Solve("pair_naive_multi_pu", both, SolveOptions{});
  ASSERT_TRUE(baseline.ok()) << baseline.status().message();
  ASSERT_TRUE(baseline->schedule);
  EXPECT_NEAR(baseline->schedule->makespan_us, naive_us, 1e-9 * naive_us);

  for (const Space& s : kSpaces) {
    for (Objective objective : {Objective::kLatency, Objective::kEnergy}) {
      SolveOptions o;
      o.concurrent.space = s.space;
      o.concurrent.solo_steps = s.solo_steps;
      for (ChainAlgorithm alg : {ChainAlgorithm::kDp, ChainAlgorithm::kDijkstra}) {
        o.concurrent.algorithm = alg;
        auto r = Solve("map_concurrent", combined->problem(objective), o);
        ASSERT_TRUE(r.ok()) << r.status().message();
        ASSERT_TRUE(r->concurrent);
        const ConcurrentStats& st = *r->concurrent;
        SCOPED_TRACE(std::string(s.name) + (objective == Objective::kLatency ? " latency" : " energy"));
        if (objective == Objective::kLatency) {
          EXPECT_LE(st.predicted_latency_us, naive_us * (1 + 1e-9));
          EXPECT_LE(st.predicted_latency_us, refs.values.at("best_serial_us") * (1 + 1e-9));
          EXPECT_NEAR(r->objective, st.predicted_latency_us, 1e-9 * r->objective);
        } else {
          ASSERT_TRUE(st.predicted_energy_uj);
          EXPECT_LE(*st.predicted_energy_uj, refs.values.at("naive_multi_pu_uj") * (1 + 1e-9));
          EXPECT_LE(*st.predicted_energy_uj, refs.values.at("best_serial_uj") * (1 + 1e-9));
        }
        ASSERT_TRUE(r->schedule);
        // The written schedule is never shorter than the prediction.
        EXPECT_GE(r->schedule->makespan_us, st.predicted_latency_us * (1 - 1e-12));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Contention, ConcurrentReferences, ::testing::Values(1.3, 2.2));

// Strong contention: the aligned space pairs operator ℓ with ℓ at every step
// and so pays it throughout; running the requests one after the other (a
// placement, outside that space) is cheaper. The mapper returns it and says so.
TEST(ConcurrentReferencesNotes, AlignedSpaceReturnsTheCheaperPlacementAndSaysSo) {
  std::mt19937 rng(7);
  const OpGraph g = InceptionGraph();
  CostModel costs = TwoCoreCosts(g, rng);
  costs.set_coexec(ContentionRows(g, costs, 2.2, 1.15));
  auto combined = CombineRequests(g, costs, g, costs);
  ASSERT_TRUE(combined.ok());
  SolveOptions o;
  o.concurrent.space = ConcurrentSpace::kAligned;
  auto r = Solve("map_concurrent", combined->problem(Objective::kLatency), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(Returned(*r));
  // Still an honest optimum: within the widened space, which the note names.
  EXPECT_EQ(r->status, SolveStatus::kOptimal);
  EXPECT_TRUE(std::any_of(r->notes.begin(), r->notes.end(), [](const std::string& n) {
    return n.find("widened by the 4 whole-request placements") != std::string::npos;
  }));
  // The joint space with solo steps already holds every placement: nothing to return.
  o.concurrent.space = ConcurrentSpace::kJoint;
  auto joint = Solve("map_concurrent", combined->problem(Objective::kLatency), o);
  ASSERT_TRUE(joint.ok());
  EXPECT_FALSE(Returned(*joint));
  EXPECT_LE(joint->objective, r->objective * (1 + 1e-9));
}

// The parallel (one-request) mapping on the same DAG with strong contention
// between the cores: never predicted slower than the best single core.
TEST(ParallelReferences, NeverPredictedSlowerThanASingleCore) {
  std::mt19937 rng(11);
  const OpGraph g = InceptionGraph();
  for (double sf : {1.0, 1.5, 3.0}) {
    CostModel costs = TwoCoreCosts(g, rng);
    costs.set_slowdown(0, 1, sf);
    costs.set_slowdown(1, 0, sf);
    for (Objective objective : {Objective::kLatency, Objective::kEnergy}) {
      const Problem p{&g, &costs, objective, std::nullopt};
      auto r = Solve("map_parallel", p, SolveOptions{});
      ASSERT_TRUE(r.ok()) << r.status().message();
      ASSERT_TRUE(r->mapping);
      const MappingStats& st = *r->mapping;
      if (objective == Objective::kLatency) {
        EXPECT_LE(st.predicted_latency_us, st.references.at("best_single_us") * (1 + 1e-9)) << "sf " << sf;
        EXPECT_LE(r->schedule->makespan_us, st.references.at("best_single_us") * (1 + 1e-9)) << "sf " << sf;
      } else {
        ASSERT_TRUE(st.predicted_energy_uj);
        EXPECT_LE(*st.predicted_energy_uj, st.references.at("best_single_uj") * (1 + 1e-9)) << "sf " << sf;
      }
    }
  }
}

}  // namespace
}  // namespace hetplan
