// A CIM PU whose costs come from a table (a simulator's per-layer results):
// the crossbar budget (eq. 14) binds as it does for the analytical model
// (issue 44: such a PU got 0 crossbars per operator, so plans did not fit).
// Crossbars come from the table's `crossbars` column, else from eq. 1 with the
// PU's crossbar geometry.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "hetplan/cost/build.h"
#include "hetplan/cost/cim_model.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/platform/platform.h"
#include "hetplan/solve/solver.h"

namespace hetplan {
namespace {

// The zoo's ResNet-18 as imported; an error naming the file when the zoo is not built.
Result<LoadedModel> ResNet18() {
  const std::string path = std::string(HETPLAN_ZOO_DIR) + "/resnet18.onnx";
  if (!std::filesystem::exists(path)) return Error(ErrorCode::kNotFound, "{} is missing: build the `zoo` target", path);
  return LoadOnnxModel(path, {});
}

// The CPU and the CIM both priced by tables: every operator 100 µs on the
// CPU, 1 µs on the CIM where it has weights.
CostTable Tables(const OpGraph& g) {
  CostTable t;
  for (const Operator& op : g.operators()) {
    OpCost cpu;
    cpu.op_name = op.name;
    cpu.pu = "cpu";
    cpu.exec_us = 100;
    t.ops.push_back(cpu);
    if (!op.has_weight) continue;
    OpCost cim = cpu;
    cim.pu = "cim";
    cim.exec_us = 1;
    t.ops.push_back(cim);
  }
  return t;
}

Platform TablePlatform(int crossbars) {
  auto p = ParsePlatformYaml(
      "name: table-cim\npus:\n  - {name: cpu, kind: cpu, cost: table, table: t.csv}\n"
      "  - {name: cim, kind: cim, execution: spatial, cost: table, table: t.csv, crossbar_rows: 256, "
      "crossbar_cols: 256, crossbars: " + std::to_string(crossbars) + "}\n"
      "links:\n  - {between: [cpu, cim], bandwidth_gbps: 10.24, latency_us: 0}\n",
      "table-cim.yaml");
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

TEST(CimTable, CrossbarsFromTheTableElseEquationOneAndTheBudgetBinds) {
  auto m = ResNet18();
  ASSERT_TRUE(m.ok()) << m.status().message();
  const OpGraph& g = m->graph;
  const Platform platform = TablePlatform(40);
  CostSources sources;
  CostTable t = Tables(g);
  // One layer as a simulator mapped it: 7 crossbars instead of eq. 1's.
  int mapped = -1;
  for (OpCost& row : t.ops) {
    if (row.pu == "cim" && mapped < 0) {
      row.crossbars = 7;
      for (const Operator& op : g.operators()) {
        if (op.name == row.op_name) mapped = op.id;
      }
    }
  }
  ASSERT_GE(mapped, 0);
  sources.tables["cpu"] = t;
  sources.tables["cim"] = t;
  auto costs = BuildCostModel(g, platform, sources);
  ASSERT_TRUE(costs.ok()) << costs.status().message();
  int64_t all = 0;
  for (const Operator& op : g.operators()) {
    if (!op.has_weight) continue;
    const int64_t expected = op.id == mapped ? 7 : CimCrossbars(op, platform.pus[1].cim);
    EXPECT_GT(expected, 0) << op.name;
    EXPECT_EQ(costs->crossbars(op.id, 1), expected) << op.name;
    all += expected;
  }
  ASSERT_GT(all, 40);  // not everything fits: the budget must decide

  const Problem problem{&g, &*costs, Objective::kLatency, std::nullopt, nullptr};
  SolveOptions o;
  o.time_limit_s = 30;
  auto r = Solve("exact", problem, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->schedule.has_value());
  int64_t used = 0;
  int on_cpu_with_weights = 0;
  for (const Operator& op : g.operators()) {
    if (r->schedule->ops[static_cast<size_t>(op.id)].device == 1) used += costs->crossbars(op.id, 1);
    if (op.has_weight && r->schedule->ops[static_cast<size_t>(op.id)].device == 0) ++on_cpu_with_weights;
  }
  EXPECT_LE(used, 40);
  EXPECT_GT(on_cpu_with_weights, 0);  // 1 µs on the CIM against 100 µs: only the budget keeps them off it
}

// A simulator's per-layer energies in the table (issue 44, item 6): each CIM
// operator's energy_uj is its energy there, the CPU's is power × time, and the
// energy objective and the schedule's total count both; the column survives
// CSV, and a negative energy is refused with the row and the fix.
TEST(CimTable, PerLayerEnergiesFromTheTablePriceTheEnergyObjective) {
  auto m = ResNet18();
  ASSERT_TRUE(m.ok()) << m.status().message();
  const OpGraph& g = m->graph;
  CostTable t = Tables(g);
  t.power_w["cpu"] = 2.0;  // 100 µs on the CPU: 200 µJ an operator
  for (OpCost& row : t.ops) {
    if (row.pu == "cim") row.energy_uj = 150.0;  // less than the CPU's
  }
  auto back = ParseCostTableCsv(CostTableToCsv(t), "t.csv");
  ASSERT_TRUE(back.ok()) << back.status().message();
  for (const OpCost& row : back->ops) {
    if (row.pu == "cim") {
      EXPECT_EQ(row.energy_uj, 150.0) << row.op_name;
    } else {
      EXPECT_FALSE(row.energy_uj.has_value()) << row.op_name;
    }
  }
  CostSources sources;
  sources.tables["cpu"] = *back;
  sources.tables["cim"] = *back;
  const Platform platform = TablePlatform(10000);  // everything fits
  auto costs = BuildCostModel(g, platform, sources);
  ASSERT_TRUE(costs.ok()) << costs.status().message();
  ASSERT_TRUE(costs->pu(1).power_w.has_value());
  EXPECT_EQ(*costs->pu(1).power_w, 0.0);
  const Problem problem{&g, &*costs, Objective::kEnergy, std::nullopt, nullptr};
  auto r = Solve("greedy", problem, SolveOptions{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->schedule && r->schedule->energy_uj);
  double want = 0;
  int on_cim = 0;
  for (const Operator& op : g.operators()) {
    const int d = r->schedule->ops[static_cast<size_t>(op.id)].device;
    on_cim += d == 1 ? 1 : 0;
    want += d == 1 ? 150.0 : 200.0;
    if (op.has_weight) {
      EXPECT_EQ(d, 1) << op.name;  // 150 µJ there against 200 on the CPU
    }
  }
  EXPECT_GT(on_cim, 0);
  EXPECT_NEAR(*r->schedule->energy_uj, want, 1e-6);

  std::string csv = CostTableToCsv(t);
  const size_t at = csv.find(",150");
  ASSERT_NE(at, std::string::npos);
  csv.replace(at, 4, ",-15");
  auto bad = ParseCostTableCsv(csv, "t.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("t.csv:4: energy_uj: '-15' is negative"), std::string::npos)
      << bad.status().message();
}

// ResNet-18's 21 weight matrices at 256x256 (issue 44): 201 crossbars with one
// cell a weight (eq. 1); INT8 in 2-bit cells takes 804 with each bit slice in
// crossbars of its own (PUMA) and 1,608 with differential pairs, and 727 and
// 1,454 with the slices in adjacent columns (NeuroSim), where a layer of 64
// outputs packs its four slices into one crossbar.
TEST(CimCells, ResNet18CrossbarsPerCellLayout) {
  auto m = ResNet18();
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto total = [&](std::optional<int64_t> bits_per_cell, SignedWeights sign, SliceMapping slices) {
    CimParams p;
    p.bits_per_cell = bits_per_cell;
    p.signed_weights = sign;
    p.slice_mapping = slices;
    int64_t sum = 0;
    for (const Operator& op : m->graph.operators()) sum += CimCrossbars(op, p);
    return sum;
  };
  EXPECT_EQ(total(std::nullopt, SignedWeights::kOffset, SliceMapping::kColumns), 201);
  EXPECT_EQ(total(2, SignedWeights::kOffset, SliceMapping::kCrossbars), 804);
  EXPECT_EQ(total(2, SignedWeights::kDifferential, SliceMapping::kCrossbars), 1608);
  EXPECT_EQ(total(2, SignedWeights::kOffset, SliceMapping::kColumns), 727);
  EXPECT_EQ(total(2, SignedWeights::kDifferential, SliceMapping::kColumns), 1454);
}

}  // namespace
}  // namespace hetplan
