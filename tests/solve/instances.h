// Small solver instances written inline, shared by the tests of tests/solve:
// a graph from an edge list, serial and spatial PUs, and an Instance that
// owns its graph and costs and hands out a Problem over them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/cost/cost_model.h"
#include "hetplan/graph/op_graph.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/solve/solver.h"
#include "hetplan/validate/validator.h"

namespace hetplan::testing_instances {

struct Instance {
  OpGraph graph;
  CostModel costs;
  Problem problem(Objective objective = Objective::kLatency) const {
    Problem p;
    p.graph = &graph;
    p.costs = &costs;
    p.objective = objective;
    return p;
  }
};

// Operators op0..op{n-1} of `types` (all "Conv" when empty); each edge
// carries one 4-byte tensor.
inline OpGraph MakeGraph(int n, const std::vector<std::pair<int, int>>& edges,
                         const std::vector<std::string>& types = {}) {
  std::vector<Operator> ops(n);
  for (int i = 0; i < n; ++i) {
    ops[i].id = i;
    ops[i].name = "op" + std::to_string(i);
    ops[i].type = types.empty() ? "Conv" : types[i];
  }
  std::vector<Edge> es;
  for (auto [u, v] : edges) es.push_back(Edge{u, v, {"t" + std::to_string(u)}, 1, 4});
  auto g = OpGraph::Create("test", std::move(ops), std::move(es));
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

// A serial PU; its kind is its name when that is a kind (cpu, gpu, npu), else cpu.
inline PuInfo Serial(const std::string& name, std::optional<double> power = std::nullopt) {
  PuInfo p;
  p.name = name;
  p.kind = name == "gpu" ? PuKind::kGpu : name == "npu" ? PuKind::kNpu : PuKind::kCpu;
  p.power_w = power;
  return p;
}

// A spatial CIM PU with a crossbar budget.
inline PuInfo Spatial(const std::string& name, int64_t capacity, std::optional<double> power = std::nullopt) {
  PuInfo p;
  p.name = name;
  p.kind = PuKind::kCim;
  p.spatial = true;
  p.capacity = capacity;
  p.power_w = power;
  return p;
}

// A random DAG's edges over n operators: each pair (i < j) of a shuffled
// order is an edge with a probability drawn from `densities`, so that ids are
// not a topological order.
inline std::vector<std::pair<int, int>> RandomDagEdges(std::mt19937& rng, int n, const std::vector<double>& densities) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<int> perm(n);
  for (int i = 0; i < n; ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  const double density = densities[rng() % densities.size()];
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      if (unit(rng) < density) edges.emplace_back(perm[i], perm[j]);
    }
  }
  return edges;
}

// Random costs for every operator and edge of `c`: PU 0 runs every operator,
// in 1..100 µs; each other PU supports an operator with probability `support`,
// in 1..`acc_max` µs (on a spatial PU with 1..6 crossbars); a transfer between
// two different PUs costs 0..`transfer_max` - 1 µs, each direction drawn
// separately.
inline void FillRandomCosts(std::mt19937& rng, const std::vector<PuInfo>& pus, double support, int acc_max,
                            int transfer_max, CostModel& c) {
  std::uniform_real_distribution<double> unit(0, 1);
  const int k = static_cast<int>(pus.size());
  for (int v = 0; v < c.num_ops(); ++v) {
    c.set_latency(v, 0, static_cast<double>(1 + rng() % 100));
    for (int p = 1; p < k; ++p) {
      if (unit(rng) < support) {
        c.set_latency(v, p, static_cast<double>(1 + rng() % acc_max));
        if (pus[p].spatial) c.set_crossbars(v, p, 1 + rng() % 6);
      }
    }
  }
  for (int e = 0; e < c.num_edges(); ++e) {
    for (int p = 0; p < k; ++p) {
      for (int q = 0; q < k; ++q) {
        if (p != q) c.set_transfer(e, p, q, static_cast<double>(rng() % transfer_max));
      }
    }
  }
}

// The schedule of `r` through the schedule file (ScheduleToJson) and the
// independent validator: its violations, none when it is valid.
// A platform whose PUs are the cost model's (name, kind, execution, power, a
// spatial PU's crossbars, ADC pool and writes): the platform block the
// validator compares a schedule file's devices with.
inline Platform PlatformOf(const CostModel& c, const std::string& name) {
  Platform platform;
  platform.name = name;
  for (int q = 0; q < c.num_pus(); ++q) {
    ProcessingUnit pu;
    pu.name = c.pu(q).name;
    pu.kind = c.pu(q).kind;
    pu.execution = c.pu(q).spatial ? Execution::kSpatial : Execution::kSerial;
    if (c.pu(q).spatial) pu.cim.crossbars = c.pu(q).capacity;
    pu.power_w = c.pu(q).power_w;
    if (c.pu(q).adc_pool > 0) pu.cim.shared_adcs = c.pu(q).adc_pool;
    pu.cim.reprogram = c.pu(q).reprogram;
    pu.cim.write_ns_per_row = c.pu(q).write_ns_per_row;
    pu.cim.write_energy_pj_per_row = c.pu(q).write_energy_pj_per_row;
    pu.cim.endurance_writes = c.pu(q).endurance_writes;
    pu.cim.lifetime_inferences = c.pu(q).lifetime_inferences;
    platform.pus.push_back(std::move(pu));
  }
  return platform;
}

inline std::vector<std::string> ScheduleViolations(const Problem& p, const SolveResult& r) {
  LoadedModel model;
  model.graph = *p.graph;
  model.path = "test.onnx";
  model.sha256 = "0";
  Platform platform = PlatformOf(*p.costs, "test");
  ScheduleContext ctx{&model, &platform, &p, &r, "partition", {}, {}, {}};
  return ValidateScheduleJson(ScheduleToJson(ctx)).violations;
}

}  // namespace hetplan::testing_instances
