// BIDENT mapping (include/hetplan/solve/mapping.h): the sequential search by
// DP and Dijkstra against brute force, the greedy property BIDENT states for
// conservative accounting, phases and contention on hand-worked DAGs, the
// concurrent search against brute force, and `hetplan map` end to end. Every
// schedule is checked with the independent validator.
#include "hetplan/solve/mapping.h"

#include <gtest/gtest.h>

#include "solve/instances.h"
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "hetplan/cost/build.h"
#include "hetplan/graph/algorithms.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/solve/solver.h"
#include "hetplan/util/limits.h"
#include "hetplan/validate/validator.h"
#include "testing/helpers.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;
using testing_instances::MakeGraph;

// ---------------------------------------------------------------------------
// Instances.

PuInfo Pu(const std::string& name, std::optional<double> power) {
  PuInfo p;
  p.name = name;
  // "cpu" is the host, the rest accelerators
  p.kind = name == "cpu" ? PuKind::kCpu : name == "npu" ? PuKind::kNpu : PuKind::kGpu;
  p.power_w = power;
  return p;
}

std::vector<PuInfo> SocPus(bool with_power = true) {
  return {Pu("cpu", with_power ? std::optional(3.0) : std::nullopt),
          Pu("gpu", with_power ? std::optional(4.5) : std::nullopt),
          Pu("npu", with_power ? std::optional(2.0) : std::nullopt)};
}

// Integer-valued costs so that ties and sums are exact. The CPU supports
// everything; the accelerators a random 70 %.
MappingCosts RandomCosts(std::mt19937& rng, int n) {
  MappingCosts c(n, SocPus());
  std::uniform_int_distribution<int> w(1, 60), copy(0, 15);
  for (int v = 0; v < n; ++v) {
    c.set_latency(v, 0, w(rng));
    for (int p = 1; p < 3; ++p) {
      if (rng() % 10 < 7) {
        c.set_latency(v, p, w(rng));
        c.set_h2d(v, p, copy(rng));
        c.set_d2h(v, p, copy(rng));
      }
    }
  }
  return c;
}

std::vector<int> Iota(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

// The path cost, written from the rules of the issue independently of the library.
double ReferenceCost(const MappingCosts& c, const std::vector<int>& chain, const std::vector<int>& pu, Objective obj,
                     TransferAccounting acc) {
  auto power = [&](int p) { return obj == Objective::kEnergy ? *c.pus()[p].power_w : 1.0; };
  auto is_acc = [&](int p) { return c.pus()[p].accelerator(); };
  double sum = 0;
  for (size_t i = 0; i < chain.size(); ++i) {
    const int v = chain[i], p = pu[i];
    if (!c.supported(v, p)) return kInf;
    // A switch starts a segment on p: its boundary cost, in either accounting.
    if (i > 0 && pu[i - 1] != p) sum += c.boundary_us(p) * power(p);
    if (acc == TransferAccounting::kConservative) {
      sum += (c.latency_us(v, p) + (is_acc(p) ? c.h2d_us(v, p) + c.d2h_us(v, p) : 0.0)) * power(p);
      continue;
    }
    sum += c.latency_us(v, p) * power(p);
    if (i == 0 && is_acc(p)) sum += c.h2d_us(v, p) * power(p);
    if (i > 0 && pu[i - 1] != p) {
      const int u = chain[i - 1], q = pu[i - 1];
      if (is_acc(q)) sum += c.d2h_us(u, q) * power(q);
      if (is_acc(p)) sum += c.h2d_us(v, p) * power(p);
    }
    if (i + 1 == chain.size() && is_acc(p)) sum += c.d2h_us(v, p) * power(p);
  }
  return sum;
}

double BruteForceChain(const MappingCosts& c, const std::vector<int>& chain, Objective obj, TransferAccounting acc) {
  const int n = static_cast<int>(chain.size()), k = c.num_pus();
  std::vector<int> pu(static_cast<size_t>(n), 0);
  double best = kInf;
  while (true) {
    best = std::min(best, ReferenceCost(c, chain, pu, obj, acc));
    int i = 0;
    while (i < n && ++pu[i] == k) pu[i++] = 0;
    if (i == n) break;
  }
  return best;
}

// A cost model for `g` from mapping costs: latency w, and on an edge between
// PUs the producer's D2H plus the consumer's H2D (BIDENT's shared-memory SoC,
// as BuildCostModel does without links).
CostModel ToCostModel(const OpGraph& g, const MappingCosts& c) {
  CostModel m(g.size(), c.pus(), static_cast<int>(g.edges().size()));
  for (int v = 0; v < g.size(); ++v) {
    for (int p = 0; p < c.num_pus(); ++p) {
      if (c.supported(v, p)) m.set_latency(v, p, c.latency_us(v, p));
    }
  }
  for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
    for (int p = 0; p < c.num_pus(); ++p) {
      for (int q = 0; q < c.num_pus(); ++q) {
        if (p != q) m.set_transfer(e, p, q, c.d2h_us(g.edges()[e].from, p) + c.h2d_us(g.edges()[e].to, q));
      }
    }
  }
  for (int p = 0; p < c.num_pus(); ++p) {
    for (int q = 0; q < c.num_pus(); ++q) m.set_slowdown(p, q, c.slowdown(p, q));
  }
  return m;
}

// The independent validator's violations of `r` in a `map` schedule file.
std::vector<std::string> MapViolations(const Problem& p, const SolveResult& r) {
  LoadedModel model;
  model.path = "test.onnx";
  Platform platform = testing_instances::PlatformOf(*p.costs, "test");
  ScheduleContext ctx{&model, &platform, &p, &r, "map", {}, {}, {}};
  return ValidateScheduleJson(ScheduleToJson(ctx)).violations;
}

// A random DAG with ids in topological order.
std::vector<std::pair<int, int>> RandomDag(std::mt19937& rng, int n) {
  std::vector<std::pair<int, int>> edges;
  for (int v = 1; v < n; ++v) {
    edges.emplace_back(static_cast<int>(rng() % v), v);
    if (v > 1 && rng() % 3 == 0) edges.emplace_back(static_cast<int>(rng() % v), v);
  }
  return edges;
}

const std::array<Objective, 2> kObjectives = {Objective::kLatency, Objective::kEnergy};
const std::array<TransferAccounting, 2> kAccountings = {TransferAccounting::kConservative,
                                                        TransferAccounting::kNeighbour};

// ---------------------------------------------------------------------------
// Sequential search.

TEST(MappingChain, DpDijkstraAndBruteForceAgreeOnRandomChains) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 120; ++trial) {
    const int n = 1 + trial % 10;
    MappingCosts c = RandomCosts(rng, n);
    // Every third chain pays a boundary cost per segment (--boundary-cost fitted).
    if (trial % 3 == 2) {
      for (int p = 0; p < 3; ++p) c.set_boundary(p, static_cast<double>(rng() % 12));
    }
    const std::vector<int> chain = Iota(n);
    for (Objective obj : kObjectives) {
      for (TransferAccounting acc : kAccountings) {
        const ChainOptions o{obj, acc};
        auto dp = MapChainDp(c, chain, o);
        auto dj = MapChainDijkstra(c, chain, o);
        ASSERT_TRUE(dp.ok() && dj.ok());
        const double brute = BruteForceChain(c, chain, obj, acc);
        const double tol = 1e-9 * std::max(1.0, brute);
        EXPECT_NEAR(dp->cost, brute, tol) << "trial " << trial << " " << ToString(obj) << " " << ToString(acc);
        EXPECT_NEAR(dj->cost, brute, tol) << "trial " << trial;
        // The returned mappings cost what they claim, and use supported pairs only.
        EXPECT_NEAR(ReferenceCost(c, chain, dp->pu, obj, acc), dp->cost, tol);
        EXPECT_NEAR(ReferenceCost(c, chain, dj->pu, obj, acc), dj->cost, tol);
        EXPECT_NEAR(ChainCost(c, chain, dp->pu, o), dp->cost, tol);
        for (int i = 0; i < n; ++i) {
          EXPECT_TRUE(c.supported(chain[i], dp->pu[i]));
          EXPECT_TRUE(c.supported(chain[i], dj->pu[i]));
        }
        EXPECT_EQ(dp->nodes, dj->nodes);
        EXPECT_EQ(dp->edges, dj->edges);
      }
    }
  }
}

// The boundary cost decides: op1 is 8 µs faster on the gpu, which costs
// 1 + 1 µs of copies (neighbour) and, once charged, 4 µs per segment on each
// side; without the charge the gpu wins (24 < 30 µs), with it it loses
// (30 < 32 µs), and the written schedule keeps the gap.
TEST(MappingChain, BoundaryCostIsChargedOnEverySwitch) {
  const OpGraph g = MakeGraph(3, {{0, 1}, {1, 2}});
  MappingCosts c(3, SocPus());
  for (int v = 0; v < 3; ++v) c.set_latency(v, 0, 10);
  c.set_latency(1, 1, 2);
  c.set_h2d(1, 1, 1);
  c.set_d2h(1, 1, 1);
  for (ChainAlgorithm algorithm : {ChainAlgorithm::kDp, ChainAlgorithm::kDijkstra}) {
    for (double boundary : {0.0, 4.0}) {
      MappingCosts charged = c;
      CostModel cm = ToCostModel(g, c);
      for (int p = 0; p < 2; ++p) {
        charged.set_boundary(p, boundary);
        cm.ChargeBoundary(p, boundary);
      }
      const Problem p{&g, &cm, Objective::kLatency, std::nullopt};
      auto r = MapSequential(p, charged, MapOptions{TransferAccounting::kNeighbour, algorithm});
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_EQ(r->device[1], boundary == 0 ? 1 : 0) << "boundary " << boundary;
      EXPECT_DOUBLE_EQ(r->predicted_latency_us, boundary == 0 ? 24 : 30);
      EXPECT_EQ(MapViolations(p, r->result), std::vector<std::string>{});
      // Forced onto the gpu, the prediction pays both boundaries.
      const std::vector<int> on_gpu = {0, 1, 0};
      EXPECT_DOUBLE_EQ(
          ChainCost(charged, Iota(3), on_gpu, ChainOptions{Objective::kLatency, TransferAccounting::kNeighbour}),
          24 + 2 * boundary);
    }
  }
  // From the cost model: BuildMappingCosts carries the charge.
  CostModel cm = ToCostModel(g, c);
  cm.ChargeBoundary(1, 5);
  auto mc = BuildMappingCosts(g, cm);
  ASSERT_TRUE(mc.ok());
  EXPECT_DOUBLE_EQ(mc->boundary_us(1), 5);
  EXPECT_DOUBLE_EQ(mc->boundary_us(0), 0);
}

// BIDENT §IV-E: under conservative accounting a greedy per-operator mapper
// coincides with the sequential optimum. It holds because that accounting
// puts every cost inside the nodes, leaving all edges at 0.
TEST(MappingChain, ConservativeOptimumIsTheGreedyChoice) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 40);
    const MappingCosts c = RandomCosts(rng, n);
    for (Objective obj : kObjectives) {
      const ChainOptions o{obj, TransferAccounting::kConservative};
      auto dp = MapChainDp(c, Iota(n), o);
      auto greedy = MapChainGreedy(c, Iota(n), o);
      ASSERT_TRUE(dp.ok() && greedy.ok());
      EXPECT_DOUBLE_EQ(dp->cost, greedy->cost);
      EXPECT_EQ(dp->pu, greedy->pu) << "trial " << trial;
    }
  }
}

// ... and it does not hold under neighbour accounting: staying on the GPU
// saves copies that a per-operator choice cannot see.
TEST(MappingChain, NeighbourOptimumCanBeatGreedy) {
  MappingCosts c(3, SocPus());
  for (int v = 0; v < 3; ++v) {
    c.set_latency(v, 0, 10);
    c.set_latency(v, 1, 2);
    c.set_h2d(v, 1, 3);
    c.set_d2h(v, 1, 4);
  }
  const ChainOptions o{Objective::kLatency, TransferAccounting::kNeighbour};
  auto dp = MapChainDp(c, Iota(3), o);
  auto greedy = MapChainGreedy(c, Iota(3), o);
  ASSERT_TRUE(dp.ok() && greedy.ok());
  // All on the GPU: H2D 3 + 3·2 + D2H 4 = 13; all on the CPU: 30.
  EXPECT_DOUBLE_EQ(dp->cost, 13);
  EXPECT_EQ(dp->pu, (std::vector<int>{1, 1, 1}));
  // Conservative: each GPU operator 2 + 3 + 4 = 9 < 10, so 27.
  auto cons = MapChainDp(c, Iota(3), ChainOptions{Objective::kLatency, TransferAccounting::kConservative});
  ASSERT_TRUE(cons.ok());
  EXPECT_DOUBLE_EQ(cons->cost, 27);
  // Energy, neighbour: 13 µs on the GPU at 4.5 W = 58.5 µJ < 90 µJ on the CPU.
  auto energy = MapChainDijkstra(c, Iota(3), ChainOptions{Objective::kEnergy, TransferAccounting::kNeighbour});
  ASSERT_TRUE(energy.ok());
  EXPECT_DOUBLE_EQ(energy->cost, 58.5);
  // A chain where greedy picks the GPU for one operator in the middle of CPU work.
  MappingCosts d(3, SocPus());
  for (int v = 0; v < 3; ++v) d.set_latency(v, 0, 10);
  d.set_latency(1, 1, 8);
  d.set_h2d(1, 1, 2);
  d.set_d2h(1, 1, 2);
  auto dg = MapChainGreedy(d, Iota(3), o);
  auto dd = MapChainDp(d, Iota(3), o);
  ASSERT_TRUE(dg.ok() && dd.ok());
  EXPECT_EQ(dg->pu, (std::vector<int>{0, 1, 0}));
  EXPECT_DOUBLE_EQ(dg->cost, 32);  // 10 + (2 + 8 + 2) + 10
  EXPECT_DOUBLE_EQ(dd->cost, 30);
}

TEST(MappingChain, UnsupportedPairsAreNeverChosen) {
  // The NPU would be free but cannot run operator 1.
  MappingCosts c(3, SocPus());
  for (int v = 0; v < 3; ++v) {
    c.set_latency(v, 0, 100);
    c.set_latency(v, 2, 1);
  }
  c.set_unsupported(1, 2);
  for (Objective obj : kObjectives) {
    for (TransferAccounting acc : kAccountings) {
      for (auto* search : {&MapChainDp, &MapChainDijkstra, &MapChainGreedy}) {
        auto m = (*search)(c, Iota(3), ChainOptions{obj, acc});
        ASSERT_TRUE(m.ok());
        EXPECT_EQ(m->pu, (std::vector<int>{2, 0, 2}));
      }
    }
  }
  EXPECT_TRUE(std::isnan(ChainCost(c, Iota(3), std::vector<int>{2, 2, 2}, ChainOptions{})));
}

TEST(MappingChain, ErrorsNameTheProblem) {
  MappingCosts c(2, SocPus(/*with_power=*/false));
  c.set_latency(0, 0, 1);
  auto m = MapChainDp(c, Iota(2), ChainOptions{});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::kInfeasible);
  EXPECT_NE(m.status().message().find("operator 1"), std::string::npos) << m.status().message();
  c.set_latency(1, 1, 1);
  EXPECT_TRUE(MapChainDijkstra(c, Iota(2), ChainOptions{}).ok());
  auto e = MapChainDp(c, Iota(2), ChainOptions{Objective::kEnergy, TransferAccounting::kConservative});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(e.status().message().find("power_w"), std::string::npos) << e.status().message();
  // Empty chain: cost 0.
  auto empty = MapChainDijkstra(c, std::vector<int>{}, ChainOptions{});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->cost, 0);
}

TEST(MappingChain, ParseNames) {
  EXPECT_EQ(*ParseTransferAccounting("Neighbor"), TransferAccounting::kNeighbour);
  EXPECT_EQ(*ParseTransferAccounting("conservative"), TransferAccounting::kConservative);
  EXPECT_FALSE(ParseTransferAccounting("lazy").ok());
  EXPECT_EQ(*ParseChainAlgorithm("dijkstra"), ChainAlgorithm::kDijkstra);
  EXPECT_FALSE(ParseChainAlgorithm("astar").ok());
}

// ---------------------------------------------------------------------------
// Whole-model modes and their written schedules.

TEST(MapSequential, ChainScheduleValidatesAndMatchesThePrediction) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    const int n = 1 + trial % 12;
    std::vector<std::pair<int, int>> edges;
    for (int v = 1; v < n; ++v) edges.emplace_back(v - 1, v);
    const OpGraph g = MakeGraph(n, edges);
    const MappingCosts c = RandomCosts(rng, n);
    const CostModel cm = ToCostModel(g, c);
    for (Objective obj : kObjectives) {
      for (TransferAccounting acc : kAccountings) {
        const Problem p{&g, &cm, obj, std::nullopt};
        auto r = MapSequential(p, c, MapOptions{acc, trial % 2 ? ChainAlgorithm::kDp : ChainAlgorithm::kDijkstra});
        ASSERT_TRUE(r.ok()) << r.status().message();
        EXPECT_EQ(r->result.status, SolveStatus::kOptimal);
        EXPECT_TRUE(r->chain);
        EXPECT_NEAR(r->result.objective, BruteForceChain(c, Iota(n), obj, acc), 1e-9 * (1 + r->result.objective));
        EXPECT_EQ(MapViolations(p, r->result), std::vector<std::string>{});
        // On a chain the written timing is the prediction less the final D2H.
        const int last = g.topological_order().back();
        const double exit = c.d2h_us(last, r->device[last]);
        EXPECT_NEAR(r->result.schedule->makespan_us, r->predicted_latency_us - exit, 1e-9 * (1 + exit));
      }
    }
  }
}

TEST(MapSequential, RandomDagsValidateAndNeighbourIsFlaggedApproximate) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 30; ++trial) {
    const int n = 3 + trial % 15;
    const OpGraph g = MakeGraph(n, RandomDag(rng, n));
    const MappingCosts c = RandomCosts(rng, n);
    const CostModel cm = ToCostModel(g, c);
    for (Objective obj : kObjectives) {
      for (TransferAccounting acc : kAccountings) {
        const Problem p{&g, &cm, obj, std::nullopt};
        for (auto* mode : {&MapSequential, &MapParallel}) {
          auto r = (*mode)(p, c, MapOptions{acc, ChainAlgorithm::kDp});
          ASSERT_TRUE(r.ok()) << r.status().message();
          EXPECT_EQ(MapViolations(p, r->result), std::vector<std::string>{}) << "trial " << trial;
          for (int v = 0; v < n; ++v) EXPECT_TRUE(c.supported(v, r->device[v]));
        }
        auto seq = MapSequential(p, c, MapOptions{acc, ChainAlgorithm::kDp});
        if (!seq->chain && acc == TransferAccounting::kNeighbour) {
          EXPECT_EQ(seq->result.status, SolveStatus::kHeuristic);
          bool flagged = false;
          for (const auto& note : seq->result.notes) flagged |= note.find("approximation") != std::string::npos;
          EXPECT_TRUE(flagged);
        }
      }
    }
  }
}

TEST(MapSequential, SinglePuBaselines) {
  const OpGraph g = MakeGraph(2, {{0, 1}});
  MappingCosts c(2, SocPus());
  c.set_latency(0, 0, 10);
  c.set_latency(1, 0, 10);
  c.set_latency(0, 1, 4);
  c.set_latency(1, 1, 4);
  c.set_latency(0, 2, 1);  // the NPU cannot run operator 1: no NPU-only baseline
  const CostModel cm = ToCostModel(g, c);
  const Problem p{&g, &cm, Objective::kLatency, std::nullopt};
  auto r = MapSequential(p, c, MapOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->baselines.at("cpu_only_us"), 20);
  EXPECT_DOUBLE_EQ(r->baselines.at("gpu_only_us"), 8);
  EXPECT_DOUBLE_EQ(r->baselines.at("best_single_us"), 8);
  EXPECT_DOUBLE_EQ(r->baselines.at("gpu_only_uj"), 36);
  EXPECT_DOUBLE_EQ(r->baselines.at("best_single_uj"), 36);
  EXPECT_EQ(r->best_latency_pu, "gpu");
  EXPECT_EQ(r->baselines.count("npu_only_us"), 0u);
  EXPECT_DOUBLE_EQ(r->predicted_latency_us, 5);  // npu 1 + gpu 4
}

// Diamond 0 → {1, 2} → 3 with the branches preferring GPU and NPU.
struct DiamondInstance {
  OpGraph g = MakeGraph(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  MappingCosts c{4, SocPus()};
  CostModel cm;
  DiamondInstance(double op2_gpu, double op2_npu) {
    const double w[4][3] = {{5, 10, 10}, {50, 10, 40}, {50, op2_gpu, op2_npu}, {5, 10, 10}};
    for (int v = 0; v < 4; ++v) {
      for (int p = 0; p < 3; ++p) c.set_latency(v, p, w[v][p]);
    }
    c.set_slowdown(1, 2, 1.1);  // GPU under NPU interference
    c.set_slowdown(2, 1, 1.5);  // NPU under GPU interference
    c.set_slowdown(2, 0, 1.17);
    cm = ToCostModel(g, c);
  }
};

TEST(MapParallel, DiamondOnGpuAndNpuWithContention) {
  DiamondInstance d(40, 20);
  const std::vector<Phase> phases = Phases(d.g);
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_EQ(phases[1].branches, (std::vector<std::vector<int>>{{1}, {2}}));
  const Problem p{&d.g, &d.cm, Objective::kLatency, std::nullopt};
  auto r = MapParallel(p, d.c, MapOptions{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->device, (std::vector<int>{0, 1, 2, 0}));
  // Phase 2: max(10 · 1.1, 20 · 1.5) = 30; total 5 + 30 + 5.
  EXPECT_DOUBLE_EQ(r->predicted_latency_us, 40);
  EXPECT_DOUBLE_EQ(r->result.schedule->makespan_us, 40);
  EXPECT_DOUBLE_EQ(r->result.schedule->ops[1].slowdown, 1.1);
  EXPECT_DOUBLE_EQ(r->result.schedule->ops[2].slowdown, 1.5);
  EXPECT_DOUBLE_EQ(r->result.schedule->ops[0].slowdown, 1.0);
  // Energy: 5·3 + 11·4.5 + 30·2 + 5·3.
  ASSERT_TRUE(r->predicted_energy_uj);
  EXPECT_DOUBLE_EQ(*r->predicted_energy_uj, 139.5);
  EXPECT_DOUBLE_EQ(*r->result.schedule->energy_uj, 139.5);
  EXPECT_EQ(r->result.status, SolveStatus::kHeuristic);
  EXPECT_EQ(r->parallel_phases, 1);
  EXPECT_EQ(r->shared_pu_phases, 0);
  EXPECT_DOUBLE_EQ(r->baselines.at("best_single_us"), 70);  // CPU: 5 + 50 + 50 + 5 = 110; GPU 70
  EXPECT_EQ(MapViolations(p, r->result), std::vector<std::string>{});
  // The sequential mapping of the same graph: 5 + 10 + 20 + 5.
  auto s = MapSequential(p, d.c, MapOptions{});
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->predicted_latency_us, 40);
}

TEST(MapParallel, BranchesOnOnePuAreSerialisedInTheSchedule) {
  DiamondInstance d(20, 40);  // both branches prefer the GPU
  const Problem p{&d.g, &d.cm, Objective::kLatency, std::nullopt};
  auto r = MapParallel(p, d.c, MapOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->device, (std::vector<int>{0, 1, 1, 0}));
  EXPECT_DOUBLE_EQ(r->result.schedule->ops[1].slowdown, 1.0);     // sharing a PU is not interference
  EXPECT_DOUBLE_EQ(r->predicted_latency_us, 5 + 20 + 5);          // BIDENT's max-branch formula
  EXPECT_DOUBLE_EQ(r->result.schedule->makespan_us, 5 + 30 + 5);  // the GPU runs 10 then 20
  EXPECT_EQ(r->shared_pu_phases, 1);
  EXPECT_EQ(MapViolations(p, r->result), std::vector<std::string>{});
}

TEST(MapParallel, LargestSlowdownOverInterferingPus) {
  // 0 → {1 cpu, 2 gpu, 3 npu} → 4; BIDENT's NPU factors: 1.17 under the CPU, 1.09 under the GPU.
  const OpGraph g = MakeGraph(5, {{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}, {3, 4}});
  MappingCosts c(5, SocPus());
  for (int v : {0, 4}) c.set_latency(v, 0, 1);
  c.set_latency(1, 0, 10);
  c.set_latency(2, 1, 10);
  c.set_latency(3, 2, 100);
  c.set_slowdown(2, 0, 1.17);
  c.set_slowdown(2, 1, 1.09);
  c.set_slowdown(0, 1, 1.01);
  const CostModel cm = ToCostModel(g, c);
  const Problem p{&g, &cm, Objective::kLatency, std::nullopt};
  auto r = MapParallel(p, c, MapOptions{TransferAccounting::kNeighbour, ChainAlgorithm::kDijkstra});
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->result.schedule->ops[3].slowdown, 1.17);
  EXPECT_DOUBLE_EQ(r->result.schedule->ops[1].slowdown, 1.01);
  EXPECT_DOUBLE_EQ(r->result.schedule->ops[2].slowdown, 1.0);
  EXPECT_DOUBLE_EQ(r->predicted_latency_us, 1 + 117 + 1);
  EXPECT_EQ(MapViolations(p, r->result), std::vector<std::string>{});
}

TEST(MapParallel, PhaseWithCopiesUsesTheAccounting) {
  // Chain 0 → 1 → 2 on the GPU with copies: one phase, neighbour = H2D + Σw + D2H.
  const OpGraph g = MakeGraph(3, {{0, 1}, {1, 2}});
  MappingCosts c(3, SocPus());
  for (int v = 0; v < 3; ++v) {
    c.set_latency(v, 0, 10);
    c.set_latency(v, 1, 2);
    c.set_h2d(v, 1, 3);
    c.set_d2h(v, 1, 4);
  }
  const CostModel cm = ToCostModel(g, c);
  const Problem p{&g, &cm, Objective::kLatency, std::nullopt};
  auto r = MapParallel(p, c, MapOptions{TransferAccounting::kNeighbour, ChainAlgorithm::kDp});
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->predicted_latency_us, 13);
  EXPECT_DOUBLE_EQ(r->result.schedule->makespan_us, 9);  // 3 + 6; the final D2H is not an operator
  EXPECT_DOUBLE_EQ(r->result.schedule->ops[0].start_us, 3);
}

// Two CPU cores as two PUs (host-2core): no H2D/D2H for the branch search to
// price, but the cost model's hand-off on every edge between the cores. The
// diamond's branches each prefer one core by 1 µs.
struct TwoCores {
  OpGraph g = MakeGraph(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  CostModel cm;
  explicit TwoCores(double handoff_us) {
    PuInfo a, b;
    a.name = "cpu0";
    b.name = "cpu1";
    a.kind = b.kind = PuKind::kCpu;
    cm = CostModel(g.size(), {a, b}, static_cast<int>(g.edges().size()));
    const double w[4][2] = {{10, 11}, {20, 21}, {21, 20}, {10, 11}};
    for (int v = 0; v < 4; ++v) {
      for (int p = 0; p < 2; ++p) cm.set_latency(v, p, w[v][p]);
    }
    for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
      cm.set_transfer(e, 0, 1, handoff_us);
      cm.set_transfer(e, 1, 0, handoff_us);
    }
  }
};

TEST(MapParallel, NeverPredictedSlowerThanTheBestSinglePu) {
  // Free hand-offs: the branches run on both cores, 10 + max(20, 20) + 10.
  {
    TwoCores t(0);
    auto c = BuildMappingCosts(t.g, t.cm);
    ASSERT_TRUE(c.ok()) << c.status().message();
    const Problem p{&t.g, &t.cm, Objective::kLatency, std::nullopt};
    auto r = MapParallel(p, *c, MapOptions{});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->device, (std::vector<int>{0, 0, 1, 0}));
    EXPECT_DOUBLE_EQ(r->result.schedule->makespan_us, 40);
    EXPECT_EQ(MapViolations(p, r->result), std::vector<std::string>{});
  }
  // 100 µs per hand-off: the same branches would be written 10 + (100 + 20) +
  // 100 + 10 = 240 µs against 61 on cpu0 alone; the plan is cpu0 alone.
  TwoCores t(100);
  auto c = BuildMappingCosts(t.g, t.cm);
  ASSERT_TRUE(c.ok());
  for (auto algorithm : {ChainAlgorithm::kDp, ChainAlgorithm::kDijkstra}) {
    const Problem p{&t.g, &t.cm, Objective::kLatency, std::nullopt};
    auto r = MapParallel(p, *c, MapOptions{TransferAccounting::kNeighbour, algorithm});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->device, (std::vector<int>{0, 0, 0, 0}));
    EXPECT_DOUBLE_EQ(r->result.schedule->makespan_us, 61);
    EXPECT_LE(r->result.schedule->makespan_us, r->baselines.at("best_single_us"));
    EXPECT_DOUBLE_EQ(r->predicted_latency_us, 61);
    EXPECT_DOUBLE_EQ(r->result.objective, 61);
    bool noted = false;
    for (const std::string& n : r->result.notes) noted = noted || n.find("single-PU fallback") != std::string::npos;
    EXPECT_TRUE(noted);
    EXPECT_EQ(MapViolations(p, r->result), std::vector<std::string>{});
  }
  // Through the registered solver as `hetplan map --mode parallel` calls it.
  const Problem p{&t.g, &t.cm, Objective::kLatency, std::nullopt};
  auto solved = Solve("map_parallel", p, SolveOptions{});
  ASSERT_TRUE(solved.ok()) << solved.status().message();
  ASSERT_TRUE(solved->schedule);
  EXPECT_DOUBLE_EQ(solved->schedule->makespan_us, 61);
}

// ---------------------------------------------------------------------------
// BuildMappingCosts.

// cpu and gpu priced by cost tables, the npu by a roofline (1 TFLOP/s).
Platform TableSoc() {
  Platform platform;
  platform.name = "soc";
  platform.source = "soc.yaml";
  const char* names[] = {"cpu", "gpu", "npu"};
  const PuKind kinds[] = {PuKind::kCpu, PuKind::kGpu, PuKind::kNpu};
  for (int p = 0; p < 3; ++p) {
    ProcessingUnit pu;
    pu.name = names[p];
    pu.kind = kinds[p];
    pu.cost_source = p == 2 ? CostSource::kRoofline : CostSource::kTable;
    pu.roofline.peak_gflops = {{"float32", 1e12}};
    platform.pus.push_back(pu);
  }
  return platform;
}

TEST(BuildMappingCosts, CopiesFromTablesThenLinks) {
  std::vector<Operator> ops(2);
  for (int i = 0; i < 2; ++i) {
    ops[i].id = i;
    ops[i].name = "op" + std::to_string(i);
    ops[i].type = "Relu";
    TensorInfo t;
    t.elements = 250;  // 1000 bytes at 4 bytes each
    ops[i].inputs = {t};
    ops[i].outputs = {t, t};
  }
  auto g = OpGraph::Create("g", ops, {Edge{0, 1, {"t"}, 250, 1000}});
  ASSERT_TRUE(g.ok());
  // The copies are part of the solver-facing cost model (BuildCostModel):
  // cpu and gpu priced by tables, the npu by a roofline without a table.
  Platform platform = TableSoc();
  for (int p = 0; p < 3; ++p) {
    platform.pus[static_cast<size_t>(p)].power_w = std::vector<double>{3.0, 4.5, 2.0}[p];
    platform.pus[static_cast<size_t>(p)].roofline.dispatch_us = 10;
  }
  platform.links.push_back(Link{"cpu", "npu", 1.0, 2.0, std::nullopt});  // 1 GB/s = 1000 bytes/µs, 2 µs
  CostSources sources;
  auto row = [](const std::string& op, const std::string& pu, double exec, double h2d, double d2h) {
    OpCost r;
    r.op_name = op;
    r.pu = pu;
    r.exec_us = exec;
    r.h2d_us = h2d;
    r.d2h_us = d2h;
    return r;
  };
  CostTable cpu_table, gpu_table;
  cpu_table.ops = {row("op0", "cpu", 10, 0, 0), row("op1", "cpu", 10, 0, 0)};
  // Measured in context: the planners charge the kernels there plus the
  // executor's share, not the operator timed alone.
  cpu_table.ops[1].in_context_us = 7;
  cpu_table.ops[1].framework_us = 0.5;
  cpu_table.slowdowns.push_back(Slowdown{"npu", "cpu", 1.2});
  gpu_table.ops = {row("op0", "gpu", 5, 7, 8)};
  gpu_table.ops.back().dispatch_us = 1;
  sources.tables = {{"cpu", cpu_table}, {"gpu", gpu_table}};
  auto cm = BuildCostModel(*g, platform, sources);
  ASSERT_TRUE(cm.ok()) << cm.status().message();
  auto mc = BuildMappingCosts(*g, *cm);
  ASSERT_TRUE(mc.ok()) << mc.status().message();
  EXPECT_DOUBLE_EQ(mc->latency_us(0, 1), 6);
  EXPECT_DOUBLE_EQ(mc->latency_us(0, 0), 10);   // isolated: no in-context time
  EXPECT_DOUBLE_EQ(mc->latency_us(1, 0), 7.5);  // in context + executor
  EXPECT_DOUBLE_EQ(mc->h2d_us(0, 1), 7);  // the table's row
  EXPECT_DOUBLE_EQ(mc->d2h_us(0, 1), 8);
  EXPECT_FALSE(mc->supported(1, 1));      // no row: unsupported on the gpu
  EXPECT_DOUBLE_EQ(mc->h2d_us(1, 1), 0);  // and no copies (no row, no GPU link)
  EXPECT_DOUBLE_EQ(mc->h2d_us(0, 2), 3);  // link: 2 + 1000 / 1000
  EXPECT_DOUBLE_EQ(mc->d2h_us(0, 2), 4);  // 2 + 2000 / 1000
  EXPECT_DOUBLE_EQ(mc->h2d_us(0, 0), 0);  // the host pays no copies
  EXPECT_NEAR(mc->total_us(0, 2), 17, 1e-6);  // roofline 10 µs (+ a few ps) + 3 + 4
  EXPECT_DOUBLE_EQ(mc->slowdown(2, 0), 1.2);
  EXPECT_DOUBLE_EQ(mc->power_w(1), 4.5);

  PuInfo cim = Pu("cim", std::nullopt);
  cim.kind = PuKind::kCim;
  cim.spatial = true;
  cim.capacity = 10;
  CostModel spatial(2, {Pu("cpu", std::nullopt), cim}, 1);
  auto refused = BuildMappingCosts(*g, spatial);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(refused.status().message().find("partition"), std::string::npos);
}

// --boundary-cost fitted (CostSources::charge_boundary): each table PU's
// boundary row joins the transfer of every edge into it from another PU; a
// modelled PU pays none; off, nothing changes; a table without the row is a
// one-line error that names the PU and the ways out.
TEST(BuildCostModel, ChargesEachTablePusBoundaryOnEdgesIntoIt) {
  auto g = OpGraph::Create("g", [] {
    std::vector<Operator> ops(2);
    for (int i = 0; i < 2; ++i) {
      ops[i].id = i;
      ops[i].name = "op" + std::to_string(i);
      ops[i].type = "Relu";
      ops[i].nodes = {ops[i].name};
    }
    return ops;
  }(), {Edge{0, 1, {"t"}, 250, 1000}});
  ASSERT_TRUE(g.ok());
  Platform platform = TableSoc();
  CostSources sources;
  for (int p = 0; p < 2; ++p) {
    CostTable t;
    for (int v = 0; v < 2; ++v) {
      OpCost r;
      r.op_name = "op" + std::to_string(v);
      r.pu = platform.pus[static_cast<size_t>(p)].name;
      r.exec_us = 10;
      r.h2d_us = p == 1 ? 1 : 0;
      r.d2h_us = p == 1 ? 2 : 0;
      t.ops.push_back(r);
    }
    t.boundary_us[platform.pus[static_cast<size_t>(p)].name] = p == 0 ? 6 : 2.5;
    sources.tables[platform.pus[static_cast<size_t>(p)].name] = t;
  }
  auto plain = BuildCostModel(*g, platform, sources);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  sources.charge_boundary = true;
  auto charged = BuildCostModel(*g, platform, sources);
  ASSERT_TRUE(charged.ok()) << charged.status().message();
  const double into[3] = {6, 2.5, 0};
  for (int q = 0; q < 3; ++q) {
    EXPECT_EQ(plain->boundary_us(q), 0);
    EXPECT_EQ(charged->boundary_us(q), into[q]);
    for (int p = 0; p < 3; ++p) {
      if (p == q) continue;
      EXPECT_DOUBLE_EQ(charged->transfer_us(0, p, q), plain->transfer_us(0, p, q) + into[q]) << p << " -> " << q;
    }
    for (int v = 0; v < 2; ++v) EXPECT_EQ(charged->latency_us(v, q), plain->latency_us(v, q));
  }
  sources.tables["gpu"].boundary_us.clear();
  auto missing = BuildCostModel(*g, platform, sources);
  ASSERT_FALSE(missing.ok());
  const std::string m = missing.status().message();
  EXPECT_NE(m.find("soc.yaml"), std::string::npos) << m;
  EXPECT_NE(m.find("'gpu'"), std::string::npos) << m;
  EXPECT_NE(m.find("--boundary-cost none"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}

// ---------------------------------------------------------------------------
// Concurrent search.

TEST(CoexecCosts, LookupAndSymmetricAverage) {
  const OpGraph g = MakeGraph(2, {{0, 1}});
  const std::vector<CoExecution> rows = {{"op0", "gpu", "op0", "npu", 10},
                                         {"op0", "npu", "op0", "gpu", 14},
                                         {"op1", "cpu", "op0", "cpu", 30},
                                         {"opX", "cpu", "op0", "cpu", 99},
                                         {"op1", "tpu", "op0", "cpu", 99}};
  const CoexecCosts cc = BuildCoexecCosts(g, Iota(2), g, Iota(2), SocPus(), rows);
  EXPECT_DOUBLE_EQ(*cc.Find(0, 1, 0, 2), 12);  // both orders measured: averaged
  EXPECT_DOUBLE_EQ(*cc.Find(0, 2, 0, 1), 12);
  EXPECT_DOUBLE_EQ(*cc.Find(1, 0, 0, 0), 30);  // read as written
  EXPECT_DOUBLE_EQ(*cc.Find(0, 0, 1, 0), 30);  // and the other way round
  EXPECT_FALSE(cc.Find(1, 0, 1, 0));
  EXPECT_FALSE(cc.Find(5, 0, 0, 0));
  EXPECT_EQ(cc.size(), 4u);
}

// The concurrent pricing rules, written independently of the library.
struct RefPricer {
  const MappingCosts& c0;
  const MappingCosts& c1;
  std::map<std::array<int, 4>, double> measured;
  Objective obj;
  double Power(int p) const { return *c0.pus()[p].power_w; }
  double Both(int i, int p, int j, int q) const {
    if (!c0.supported(i, p) || !c1.supported(j, q)) return kInf;
    const double a = c0.total_us(i, p), b = c1.total_us(j, q);
    const double floor = p == q ? a + b : std::max(a, b);
    auto it = measured.find({i, p, j, q});
    const double m = it == measured.end() ? floor : it->second;
    if (obj == Objective::kLatency) return m;
    return std::max(1.0, m / floor) * (a * Power(p) + b * Power(q));
  }
  double Solo(const MappingCosts& c, int i, int p) const {
    if (!c.supported(i, p)) return kInf;
    return c.total_us(i, p) * (obj == Objective::kLatency ? 1.0 : Power(p));
  }
};

// Every move sequence and PU choice, enumerated.
double BruteJoint(const RefPricer& r, int i, int j, int n0, int n1, bool solo) {
  if (i == n0 && j == n1) return 0;
  double best = kInf;
  for (int p = 0; p < 3; ++p) {
    if (i < n0 && j < n1) {
      for (int q = 0; q < 3; ++q) best = std::min(best, r.Both(i, p, j, q) + BruteJoint(r, i + 1, j + 1, n0, n1, solo));
    }
    if (i < n0 && (solo || j == n1)) best = std::min(best, r.Solo(r.c0, i, p) + BruteJoint(r, i + 1, j, n0, n1, solo));
    if (j < n1 && (solo || i == n0)) best = std::min(best, r.Solo(r.c1, j, p) + BruteJoint(r, i, j + 1, n0, n1, solo));
  }
  return best;
}

std::vector<CoexecCosts::Entry> RandomCoexec(std::mt19937& rng, const MappingCosts& c0, const MappingCosts& c1) {
  std::vector<CoexecCosts::Entry> entries;
  for (int i = 0; i < c0.num_ops(); ++i) {
    for (int j = 0; j < c1.num_ops(); ++j) {
      for (int p = 0; p < 3; ++p) {
        for (int q = 0; q < 3; ++q) {
          if (!c0.supported(i, p) || !c1.supported(j, q) || rng() % 4 != 0) continue;
          // Measured makespans around the fallback: some faster, some slower.
          const double a = c0.total_us(i, p), b = c1.total_us(j, q);
          const double floor = p == q ? a + b : std::max(a, b);
          entries.push_back({i, j, p, q, floor * (0.7 + 0.1 * static_cast<double>(rng() % 7))});
        }
      }
    }
  }
  return entries;
}

TEST(MapConcurrent, JointSearchEqualsBruteForceOnTinyPairs) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 40; ++trial) {
    const int n0 = 1 + static_cast<int>(rng() % 3), n1 = 1 + static_cast<int>(rng() % 3);
    const MappingCosts c0 = RandomCosts(rng, n0), c1 = RandomCosts(rng, n1);
    const std::vector<CoexecCosts::Entry> entries = RandomCoexec(rng, c0, c1);
    const CoexecCosts cc(n0, entries);
    for (Objective obj : kObjectives) {
      RefPricer ref{c0, c1, {}, obj};
      for (const auto& e : entries) ref.measured[{e.i, e.p, e.j, e.q}] = e.makespan_us;
      for (bool solo : {false, true}) {
        const double brute = BruteJoint(ref, 0, 0, n0, n1, solo);
        for (auto alg : {ChainAlgorithm::kDijkstra, ChainAlgorithm::kDp}) {
          ConcurrentOptions o{obj, ConcurrentSpace::kJoint, alg, solo};
          auto m = SearchConcurrent(c0, Iota(n0), c1, Iota(n1), cc, o);
          ASSERT_TRUE(m.ok()) << m.status().message();
          EXPECT_NEAR(m->cost, brute, 1e-9 * std::max(1.0, brute)) << "trial " << trial << " solo " << solo;
          // The steps cover each request's operators once, in order, on supported PUs.
          int next0 = 0, next1 = 0;
          double sum = 0;
          for (const ConcurrentStep& s : m->steps) {
            if (s.op0 >= 0) {
              EXPECT_EQ(s.op0, next0++);
              EXPECT_TRUE(c0.supported(s.op0, s.pu0));
            }
            if (s.op1 >= 0) {
              EXPECT_EQ(s.op1, next1++);
              EXPECT_TRUE(c1.supported(s.op1, s.pu1));
            }
            if (!solo && s.op0 >= 0 && s.op1 < 0) {
              EXPECT_EQ(next1, n1);  // lockstep: alone only after the other ends
            }
            sum += obj == Objective::kLatency ? s.latency_us : s.energy_uj;
          }
          EXPECT_EQ(next0, n0);
          EXPECT_EQ(next1, n1);
          EXPECT_NEAR(sum, m->cost, 1e-9 * std::max(1.0, sum));
        }
      }
    }
  }
}

TEST(MapConcurrent, AlignedSearchEqualsBruteForce) {
  std::mt19937 rng(19);
  for (int trial = 0; trial < 30; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 3);
    const MappingCosts c = RandomCosts(rng, n);
    const std::vector<CoexecCosts::Entry> entries = RandomCoexec(rng, c, c);
    const CoexecCosts cc(n, entries);
    for (Objective obj : kObjectives) {
      RefPricer ref{c, c, {}, obj};
      for (const auto& e : entries) ref.measured[{e.i, e.p, e.j, e.q}] = e.makespan_us;
      // Every sequence of PU pairs, (K²)^n of them.
      double brute = kInf;
      std::vector<int> pair(static_cast<size_t>(n), 0);
      while (true) {
        double sum = 0;
        for (int l = 0; l < n; ++l) sum += ref.Both(l, pair[l] / 3, l, pair[l] % 3);
        brute = std::min(brute, sum);
        int l = 0;
        while (l < n && ++pair[l] == 9) pair[l++] = 0;
        if (l == n) break;
      }
      for (auto alg : {ChainAlgorithm::kDijkstra, ChainAlgorithm::kDp}) {
        auto m = SearchConcurrent(c, Iota(n), c, Iota(n), cc, ConcurrentOptions{obj, ConcurrentSpace::kAligned, alg});
        ASSERT_TRUE(m.ok()) << m.status().message();
        EXPECT_NEAR(m->cost, brute, 1e-9 * std::max(1.0, brute)) << "trial " << trial;
        EXPECT_EQ(m->states, 1 + n * 9);
      }
    }
  }
  MappingCosts two(2, SocPus());
  two.set_latency(0, 0, 1);
  two.set_latency(1, 0, 1);
  auto bad = SearchConcurrent(two, Iota(2), two, Iota(1), CoexecCosts(),
                              ConcurrentOptions{Objective::kLatency, ConcurrentSpace::kAligned});
  EXPECT_FALSE(bad.ok());
}

TEST(MapConcurrent, DijkstraAndDpAgreeOnLargerPairs) {
  std::mt19937 rng(23);
  for (int trial = 0; trial < 10; ++trial) {
    const int n0 = 20 + static_cast<int>(rng() % 30), n1 = 5 + static_cast<int>(rng() % 30);
    const MappingCosts c0 = RandomCosts(rng, n0), c1 = RandomCosts(rng, n1);
    const CoexecCosts cc(n0, RandomCoexec(rng, c0, c1));
    for (Objective obj : kObjectives) {
      auto a = SearchConcurrent(c0, Iota(n0), c1, Iota(n1), cc, ConcurrentOptions{obj});
      auto b = SearchConcurrent(c0, Iota(n0), c1, Iota(n1), cc,
                                ConcurrentOptions{obj, ConcurrentSpace::kJoint, ChainAlgorithm::kDp});
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_NEAR(a->cost, b->cost, 1e-9 * a->cost);
      EXPECT_LE(a->expanded, a->states);
    }
  }
}

TEST(MapConcurrent, HandWorkedPairAndItsSchedule) {
  // Request 0: one operator, GPU 10 or CPU 30. Request 1: one operator, GPU 10 or CPU 12.
  // Both on the GPU: no measurement → serial 20. GPU + CPU: max(10, 12) = 12. The
  // measured CPU/GPU pair makes it 13.5 (contention): σ = 13.5/12 = 1.125.
  const OpGraph g0 = MakeGraph(1, {}), g1 = MakeGraph(2, {{0, 1}});
  MappingCosts c0(1, SocPus()), c1(2, SocPus());
  c0.set_latency(0, 0, 30);
  c0.set_latency(0, 1, 10);
  c1.set_latency(0, 0, 12);
  c1.set_latency(0, 1, 10);
  c1.set_latency(1, 0, 5);  // request 1's second operator: CPU only, runs alone
  {
    auto plan = MapConcurrent(g0, c0, g1, c1, CoexecCosts(), ConcurrentOptions{});
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_DOUBLE_EQ(plan->predicted_latency_us, 12 + 5);
    ASSERT_EQ(plan->mapping.steps.size(), 2u);
    EXPECT_EQ(plan->mapping.steps[0].pu0, 1);
    EXPECT_EQ(plan->mapping.steps[0].pu1, 0);
  }
  const CoexecCosts measured(1, {{0, 0, 1, 0, 13.5}});
  auto plan = MapConcurrent(g0, c0, g1, c1, measured, ConcurrentOptions{});
  ASSERT_TRUE(plan.ok());
  EXPECT_DOUBLE_EQ(plan->predicted_latency_us, 13.5 + 5);
  EXPECT_DOUBLE_EQ(plan->mapping.steps[0].slowdown, 1.125);
  // Energy: 1.125 · (10 · 4.5 + 12 · 3) + 5 · 3.
  ASSERT_TRUE(plan->predicted_energy_uj);
  EXPECT_DOUBLE_EQ(*plan->predicted_energy_uj, 1.125 * (45 + 36) + 15);
  const Schedule& s = *plan->result.schedule;
  EXPECT_EQ(plan->graph.size(), 3);
  EXPECT_EQ(s.ops[0].request, 0);
  EXPECT_EQ(s.ops[1].request, 1);
  EXPECT_EQ(s.ops[2].request, 1);
  EXPECT_DOUBLE_EQ(s.ops[0].finish_us, 11.25);
  EXPECT_DOUBLE_EQ(s.ops[1].finish_us, 13.5);
  EXPECT_DOUBLE_EQ(s.makespan_us, 18.5);
  EXPECT_DOUBLE_EQ(*s.energy_uj, *plan->predicted_energy_uj);
  EXPECT_DOUBLE_EQ(plan->baselines.at("best_serial_us"), 30 + 17);  // CPU can run all; GPU cannot
  // Request 0 on GPU, 1 on CPU, priced like the plan: the measured pair 13.5, then 5 alone.
  EXPECT_DOUBLE_EQ(plan->baselines.at("naive_multi_pu_us"), 13.5 + 5);
  const Problem p{&plan->graph, &plan->costs, Objective::kLatency, std::nullopt};
  EXPECT_EQ(MapViolations(p, plan->result), std::vector<std::string>{});
}

TEST(MapConcurrent, RandomSchedulesValidate) {
  std::mt19937 rng(29);
  for (int trial = 0; trial < 20; ++trial) {
    const int n0 = 2 + static_cast<int>(rng() % 10), n1 = 2 + static_cast<int>(rng() % 10);
    const OpGraph g0 = MakeGraph(n0, RandomDag(rng, n0)), g1 = MakeGraph(n1, RandomDag(rng, n1));
    const MappingCosts c0 = RandomCosts(rng, n0), c1 = RandomCosts(rng, n1);
    const CoexecCosts cc(n0, RandomCoexec(rng, c0, c1));
    for (Objective obj : kObjectives) {
      for (bool solo : {false, true}) {
        auto plan = MapConcurrent(
            g0, c0, g1, c1, cc, ConcurrentOptions{obj, ConcurrentSpace::kJoint, ChainAlgorithm::kDijkstra, solo});
        ASSERT_TRUE(plan.ok()) << plan.status().message();
        const Problem p{&plan->graph, &plan->costs, obj, std::nullopt};
        EXPECT_EQ(MapViolations(p, plan->result), std::vector<std::string>{}) << "trial " << trial;
        // The written makespan is never below the prediction (it can only serialise).
        EXPECT_GE(plan->result.schedule->makespan_us, plan->predicted_latency_us * (1 - 1e-12));
      }
    }
    // Same model twice, aligned.
    const CoexecCosts self(n0, RandomCoexec(rng, c0, c0));
    auto aligned =
        MapConcurrent(g0, c0, g0, c0, self, ConcurrentOptions{Objective::kLatency, ConcurrentSpace::kAligned});
    ASSERT_TRUE(aligned.ok());
    const Problem p{&aligned->graph, &aligned->costs, Objective::kLatency, std::nullopt};
    EXPECT_EQ(MapViolations(p, aligned->result), std::vector<std::string>{});
  }
}

// ---------------------------------------------------------------------------
// `hetplan map` end to end on a small model built here.

using test_util::CmdResult;
using test_util::Hetplan;
using test_util::NewModel;

void AddValue(onnx::GraphProto* g, bool input, const std::string& name, const std::vector<int64_t>& dims) {
  auto* vi = input ? g->add_input() : g->add_output();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

void AddWeight(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  for (int64_t i = 0; i < n; ++i) t->add_float_data(0.01f);
}

void AddNode(onnx::GraphProto* g, const std::string& name, const std::string& op, std::vector<std::string> in,
             const std::string& out, int64_t pad = -1) {
  auto* n = g->add_node();
  n->set_name(name);
  n->set_op_type(op);
  for (const auto& s : in) n->add_input(s);
  n->add_output(out);
  if (pad >= 0) {
    auto* a = n->add_attribute();
    a->set_name("pads");
    a->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) a->add_ints(pad);
  }
}

// stem (Conv 3×3) → stem_relu → {a_conv → a_relu, b_conv (1×1)} → join (Add) → head (Conv 3×3).
// With `chain`, just stem → stem_relu → head.
void WriteModel(const fs::path& path, bool chain) {
  onnx::ModelProto m = NewModel(chain ? "chain" : "branchy");
  auto* g = m.mutable_graph();
  AddValue(g, true, "x", {1, 8, 16, 16});
  AddWeight(g, "w3", {8, 8, 3, 3});
  AddWeight(g, "w1", {8, 8, 1, 1});
  AddNode(g, "stem", "Conv", {"x", "w3"}, "s", 1);
  AddNode(g, "stem_relu", "Relu", {"s"}, "r");
  if (chain) {
    AddNode(g, "head", "Conv", {"r", "w3"}, "y", 1);
  } else {
    AddNode(g, "a_conv", "Conv", {"r", "w3"}, "a", 1);
    AddNode(g, "a_relu", "Relu", {"a"}, "ar");
    AddNode(g, "b_conv", "Conv", {"r", "w1"}, "b", 0);
    AddNode(g, "join", "Add", {"ar", "b"}, "j");
    AddNode(g, "head", "Conv", {"j", "w3"}, "y", 1);
  }
  AddValue(g, false, "y", {1, 8, 16, 16});
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
}

class MapCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hetplan_map_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    model_ = (dir_ / "branchy.onnx").string();
    chain_ = (dir_ / "chain.onnx").string();
    WriteModel(model_, false);
    WriteModel(chain_, true);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  nlohmann::json Json(const std::string& name) const {
    std::ifstream f(dir_ / name);
    return nlohmann::json::parse(f);
  }
  void ExpectValid(const std::string& name) const {
    CmdResult v = Hetplan("validate " + Path(name));
    EXPECT_EQ(v.code, 0) << v.out;
  }
  fs::path dir_;
  std::string model_, chain_;
};

TEST_F(MapCli, AllModesOnSocExampleWriteValidSchedules) {
  CmdResult r = Hetplan("map " + model_ + " --platform soc-example --mode sequential --out " + Path("seq.json") +
                        " --trace " + Path("seq.trace.json"));
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* want : {"predicted latency", "best single PU", "speedup", "analytical", "validate  ok"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("measured"), std::string::npos) << r.out;
  ExpectValid("seq.json");
  auto s = Json("seq.json");
  EXPECT_EQ(s["mode"], "map-sequential");
  EXPECT_EQ(s["operators"].size(), 7u);
  EXPECT_EQ(s["mapping"]["cost_basis"], "analytical");
  EXPECT_GT(Json("seq.trace.json")["traceEvents"].size(), 7u);

  // Neighbour accounting on a DAG that is not a chain is labelled an approximation.
  r = Hetplan("map " + model_ + " --accounting neighbour --algorithm dijkstra --out " + Path("nb.json"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("approximation"), std::string::npos) << r.out;
  ExpectValid("nb.json");
  EXPECT_EQ(Json("nb.json")["solver"]["status"], "heuristic");

  r = Hetplan("map " + model_ + " --mode parallel --objective energy --out " + Path("par.json"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("lowest-energy single PU"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("heuristic"), std::string::npos) << r.out;
  ExpectValid("par.json");

  r = Hetplan("map " + model_ + " --mode concurrent --out " + Path("con.json"));
  ASSERT_EQ(r.code, 0) << r.out;
  ExpectValid("con.json");
  auto c = Json("con.json");
  EXPECT_EQ(c["operators"].size(), 14u);
  int tagged = 0;
  for (const auto& op : c["operators"]) tagged += op.value("request", 0);
  EXPECT_EQ(tagged, 7);
  EXPECT_EQ(c["mapping"]["space"], "aligned");

  r = Hetplan("map " + model_ + " --mode concurrent --second-model " + chain_ + " --objective energy --out " +
              Path("con2.json"));
  ASSERT_EQ(r.code, 0) << r.out;
  ExpectValid("con2.json");
  EXPECT_EQ(Json("con2.json")["operators"].size(), 10u);
  EXPECT_EQ(Json("con2.json")["mapping"]["space"], "joint");
}

TEST_F(MapCli, ChainIsExactAndIlpComparisonIsOffered) {
  CmdResult r = Hetplan("map " + chain_ + " --accounting neighbour --compare-ilp --ilp-time-limit 20 --out " +
                        Path("chain.json"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("approximation"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ilp "), std::string::npos) << r.out;
  EXPECT_EQ(Json("chain.json")["solver"]["status"], "optimal");
  ExpectValid("chain.json");
}

TEST_F(MapCli, SyntheticTableWithCoexecutionAndSlowdowns) {
  const std::string table = std::string(HETPLAN_TEST_DATA_DIR) + "/data/bident-synthetic.csv";
  std::ofstream(dir_ / "soc-table.yaml") << "name: soc-table\n"
                                            "description: synthetic CPU+GPU+NPU for tests\n"
                                            "pus:\n"
                                            "  - {name: cpu, kind: cpu, execution: serial, cost: table, table: "
                                         << table
                                         << "}\n"
                                            "  - {name: gpu, kind: gpu, execution: serial, cost: table, table: "
                                         << table
                                         << "}\n"
                                            "  - {name: npu, kind: npu, execution: serial, cost: table, table: "
                                         << table << "}\n";
  const std::string common = "map " + model_ + " --platform " + Path("soc-table.yaml");
  for (const std::string mode : {"sequential", "parallel", "concurrent"}) {
    CmdResult r = Hetplan(common + " --mode " + mode + " --out " + Path(mode + ".json"));
    ASSERT_EQ(r.code, 0) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find("synthetic"), std::string::npos) << r.out;
    ExpectValid(mode + ".json");
  }
  // The NPU has no Add: `join` never goes there.
  for (const auto& op : Json("sequential.json")["operators"]) {
    if (op["name"] == "join") {
      EXPECT_NE(op["device"], "npu");
    }
  }
  EXPECT_GT(Json("concurrent.json")["mapping"]["coexec_entries"].get<int>(), 0);
  CmdResult bad = Hetplan(common + " --mode concurrent --accounting neighbour");
  EXPECT_EQ(bad.code, 2) << bad.out;
  bad = Hetplan(common + " --mode sequential --second-model " + chain_);
  EXPECT_EQ(bad.code, 2) << bad.out;
}

}  // namespace
}  // namespace hetplan
