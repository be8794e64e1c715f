// Reprogramming (issue 44, item 5): on a reprogramming CIM an operator is
// either resident (its crossbars its own for every inference) or rewritten
// each inference (written when it starts, its crossbars free again when it
// finishes), within the endurance budget. The exact search equals brute force
// over every assignment, mode and order; every schedule passes the
// independent validator, which checks the physical crossbars, the writes and
// the endurance budget from the schedule file alone and catches each kind of
// tampering.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "hetplan/report/schedule_file.h"
#include "hetplan/solve/list_schedule.h"
#include "hetplan/solve/solver.h"
#include "hetplan/util/limits.h"
#include "hetplan/validate/validator.h"
#include "solve/ilp_test_support.h"
#include "solve/instances.h"

namespace hetplan {
namespace {

using ilp_test::ExactToZeroGap;
using testing_instances::Instance;
using testing_instances::MakeGraph;
using testing_instances::RandomDagEdges;
using testing_instances::Serial;
using testing_instances::Spatial;

// The CIM (the last PU) reprograms: 100 ns a row, `endurance` writes a cell
// over `lifetime` inferences; each operator it runs writes `rows` rows.
void Reprogram(CostModel& c, double endurance, double lifetime) {
  PuInfo& pu = c.mutable_pu(c.num_pus() - 1);
  pu.reprogram = true;
  pu.write_ns_per_row = 100;
  pu.write_energy_pj_per_row = 2;
  pu.endurance_writes = endurance;
  pu.lifetime_inferences = lifetime;
}

void SetWrite(CostModel& c, int v, int64_t rows) {
  const int q = c.num_pus() - 1;
  c.set_write(v, q, {rows, rows * c.crossbars(v, q), static_cast<double>(rows) * 0.1,
                     static_cast<double>(rows * c.crossbars(v, q)) * 2e-6});
}

// A random DAG whose operators the CIM runs fast but holds few of at once:
// capacity 3–8, 1–4 crossbars an operator, writes of 10–80 rows (1–8 µs).
Instance RandomReprogramInstance(std::mt19937& rng, int n, bool three_pus) {
  std::vector<PuInfo> pus = {Serial("cpu", 2.0)};
  if (three_pus) pus.push_back(Serial("gpu", 3.0));
  pus.push_back(Spatial("cim", 3 + static_cast<int64_t>(rng() % 6), 0.5));
  Instance inst{MakeGraph(n, RandomDagEdges(rng, n, {0.2, 0.4})), CostModel()};
  const int k = static_cast<int>(pus.size());
  inst.costs = CostModel(n, pus, static_cast<int>(inst.graph.edges().size()));
  CostModel& c = inst.costs;
  Reprogram(c, 1 + static_cast<double>(rng() % 3), 1);
  for (int v = 0; v < n; ++v) {
    c.set_latency(v, 0, static_cast<double>(20 + rng() % 60));
    if (three_pus && rng() % 2 == 0) c.set_latency(v, 1, static_cast<double>(10 + rng() % 50));
    if (rng() % 5 != 0) {
      c.set_latency(v, k - 1, static_cast<double>(1 + rng() % 15));
      c.set_crossbars(v, k - 1, 1 + static_cast<int64_t>(rng() % 4));
      SetWrite(c, v, 10 + static_cast<int64_t>(rng() % 71));
    }
  }
  for (int e = 0; e < c.num_edges(); ++e) {
    for (int p = 0; p < k; ++p) {
      for (int q = 0; q < k; ++q) {
        if (p != q) c.set_transfer(e, p, q, static_cast<double>(rng() % 8));
      }
    }
  }
  return inst;
}

// Brute force: every PU and mode (resident or rewritten on the CIM) that
// fits the capacity and the endurance budget, every topological order, each
// list-scheduled (an optimal schedule's start order gives it; resident
// operators on the CIM start when ready whatever the order).
double BruteForce(const Problem& p) {
  const OpGraph& g = *p.graph;
  const CostModel& c = *p.costs;
  const int n = g.size(), cim = c.num_pus() - 1;
  std::vector<int> a(n, -1);
  std::vector<char> rw(n, 0);
  double best = kInf;
  std::function<void(int)> assign = [&](int v) {
    if (v == n) {
      if (FitsCapacity(p, a, &rw)) best = std::min(best, ilp_test::MinMakespan(p, a, &rw));
      return;
    }
    for (int q = 0; q < c.num_pus(); ++q) {
      if (!c.supported(v, q)) continue;
      for (char mode : {0, 1}) {
        if (mode && q != cim) continue;
        a[v] = q;
        rw[v] = mode;
        assign(v + 1);
      }
    }
    rw[v] = 0;
  };
  assign(0);
  return best;
}

// The schedule file of `r` on the cost model's platform.
nlohmann::json ReprogramScheduleFile(const Problem& p, const SolveResult& r) {
  LoadedModel model;
  model.path = "reprogram.onnx";
  model.sha256 = "0";
  Platform platform = testing_instances::PlatformOf(*p.costs, "reprogram");
  ScheduleContext ctx{&model, &platform, &p, &r, "partition", {}, {}, {}};
  return ScheduleToJson(ctx);
}

// A validation report's violations, one a line.
std::string ViolationLines(const ValidationReport& rep) {
  std::string all;
  for (const std::string& v : rep.violations) all += v + "\n";
  return all;
}

TEST(Reprogram, ExactMatchesBruteForceOnRandomInstances) {
  std::mt19937 rng(44);
  int rewrites = 0, faster = 0;
  for (int i = 0; i < 150; ++i) {
    const bool three = i % 3 == 2;
    const int n = 1 + static_cast<int>(rng() % (three ? 5 : 6));
    Instance inst = RandomReprogramInstance(rng, n, three);
    const Problem p = inst.problem();
    const double brute = BruteForce(p);
    auto r = Solve("exact", p, ExactToZeroGap());
    ASSERT_TRUE(r.ok()) << r.status().message();
    SCOPED_TRACE("instance " + std::to_string(i));
    if (!std::isfinite(brute)) {
      EXPECT_EQ(r->status, SolveStatus::kInfeasible);
      continue;
    }
    ASSERT_EQ(r->status, SolveStatus::kOptimal);
    EXPECT_NEAR(r->objective, brute, 1e-6 * brute);
    EXPECT_NEAR(r->bound, r->objective, 1e-6 * brute);
    const ValidationReport rep = ValidateScheduleJson(ReprogramScheduleFile(p, *r));
    EXPECT_TRUE(rep.ok()) << ViolationLines(rep);
    // The same instance without reprogramming is never faster.
    CostModel fixed = inst.costs;
    fixed.mutable_pu(fixed.num_pus() - 1).reprogram = false;
    Problem q = p;
    q.costs = &fixed;
    auto plain = Solve("exact", q, ExactToZeroGap());
    ASSERT_TRUE(plain.ok());
    if (plain->schedule) {
      EXPECT_LE(r->objective, plain->objective + 1e-9);
    }
    bool rewritten = false;
    for (const ScheduledOp& op : r->schedule->ops) rewritten = rewritten || op.rewritten;
    rewrites += rewritten;
    faster += !plain->schedule || r->objective < plain->objective - 1e-9;
  }
  // Reprogramming decides the optimum often enough for the comparison to mean something.
  EXPECT_GT(faster, 30);
  RecordProperty("rewrites", rewrites);
  RecordProperty("faster", faster);
}

// Three operators in a chain that only the CIM runs, 3 crossbars each of 4:
// one can stay resident, the others must be rewritten (here every one is,
// since a resident one would leave too few for the others). Without
// endurance for it, nothing fits.
Instance Chain() {
  Instance inst{MakeGraph(3, {{0, 1}, {1, 2}}), CostModel()};
  inst.costs = CostModel(3, {Serial("cpu", 1.0), Spatial("cim", 4, 1.0)}, 2);
  Reprogram(inst.costs, 1e7, 1e6);  // 10 writes a cell an inference: 9 crossbars over 4 fit
  for (int v = 0; v < 3; ++v) {
    inst.costs.set_latency(v, 1, 10);
    inst.costs.set_crossbars(v, 1, 3);
    SetWrite(inst.costs, v, 20);
  }
  return inst;
}

TEST(Reprogram, RewritesWhatCannotStayResident) {
  const Instance inst = Chain();
  auto r = Solve("exact", inst.problem(), ExactToZeroGap());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->status, SolveStatus::kOptimal);
  // Each: a 2 µs write, then 10 µs.
  EXPECT_DOUBLE_EQ(r->objective, 36);
  int rewritten = 0;
  for (const ScheduledOp& op : r->schedule->ops) rewritten += op.rewritten;
  EXPECT_EQ(rewritten, 3);
  const nlohmann::json file = ReprogramScheduleFile(inst.problem(), *r);
  EXPECT_TRUE(ValidateScheduleJson(file).ok()) << ViolationLines(ValidateScheduleJson(file));
  EXPECT_EQ(file["operators"][1]["write"]["write_us"], 2.0);
  EXPECT_EQ(file["operators"][1]["write"]["rows_written"], 60);
  EXPECT_EQ(file["devices"][1]["reprogram"]["endurance_writes"], 1e7);
  // Energy: 12 µs × 1 W and 60 rows × 2 pJ each.
  EXPECT_NEAR(r->schedule->energy_uj.value(), 3 * (12 + 60 * 2e-6), 1e-9);
  // Methods without rewriting refuse the platform; the baselines keep everything resident (and cannot here).
  auto mip = Solve("mip", inst.problem(), ExactToZeroGap());
  ASSERT_FALSE(mip.ok());
  EXPECT_NE(mip.status().message().find("does not model reprogramming, and PU 'cim' reprograms"), std::string::npos)
      << mip.status().message();
  // An endurance budget that forbids more than one rewrite an inference: infeasible.
  Instance worn = Chain();
  Reprogram(worn.costs, 1, 1);  // 1 write a cell, 1 inference: Σ rewritten ≤ the 4 − resident crossbars
  auto none = Solve("exact", worn.problem(), ExactToZeroGap());
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_EQ(none->status, SolveStatus::kInfeasible);
}

TEST(Reprogram, ValidatorChecksCrossbarsWritesAndEnduranceFromTheFile) {
  const Instance inst = Chain();
  auto r = Solve("exact", inst.problem(), ExactToZeroGap());
  ASSERT_TRUE(r.ok() && r->schedule);
  const nlohmann::json good = ReprogramScheduleFile(inst.problem(), *r);
  ASSERT_TRUE(ValidateScheduleJson(good).ok());
  auto violations = [](const nlohmann::json& j) { return ViolationLines(ValidateScheduleJson(j)); };
  // Two operators on the same crossbars at the same time.
  nlohmann::json overlap = good;
  overlap["operators"][1]["start_us"] = overlap["operators"][0]["start_us"];
  overlap["operators"][1]["finish_us"] = overlap["operators"][0]["finish_us"];
  overlap["operators"][1]["write"]["start_us"] = overlap["operators"][0]["write"]["start_us"];
  overlap["operators"][1]["write"]["finish_us"] = overlap["operators"][0]["write"]["finish_us"];
  EXPECT_NE(violations(overlap).find("both hold crossbar 0 of 'cim' while both run"), std::string::npos)
      << violations(overlap);
  // A resident operator's crossbars are its own for the whole inference.
  nlohmann::json resident = good;
  resident["operators"][2].erase("write");
  resident["operators"][2]["start_us"] = resident["operators"][2]["start_us"].get<double>() + 2;
  EXPECT_NE(violations(resident).find("(a resident operator's)"), std::string::npos) << violations(resident);
  // Outside the capacity, or fewer than it needs.
  nlohmann::json outside = good;
  outside["operators"][0]["crossbar_ids"] = {{2, 4}};
  EXPECT_NE(violations(outside).find("names crossbars [2, 4], outside 0 to 3"), std::string::npos)
      << violations(outside);
  nlohmann::json short_ids = good;
  short_ids["operators"][0]["crossbar_ids"] = {{0, 1}};
  EXPECT_NE(violations(short_ids).find("needs 3 crossbars but crossbar_ids names 2"), std::string::npos)
      << violations(short_ids);
  // A write faster than its rows allow, or cheaper.
  nlohmann::json fast = good;
  fast["operators"][0]["write"]["write_us"] = 1.0;
  EXPECT_NE(violations(fast).find("write_us = 1, but 20 rows × 100 ns = 2 µs"), std::string::npos) << violations(fast);
  nlohmann::json cheap = good;
  cheap["operators"][0]["write"]["energy_uj"] = 0.0;
  EXPECT_NE(violations(cheap).find("write energy_uj = 0, but 60 rows × 2 pJ"), std::string::npos) << violations(cheap);
  // The endurance budget: 9 crossbars rewritten each inference over 4 free ones.
  nlohmann::json worn = good;
  worn["devices"][1]["reprogram"]["lifetime_inferences"] = 1e6;
  worn["devices"][1]["reprogram"]["endurance_writes"] = 2e6;
  EXPECT_NE(violations(worn).find("endurance: 1000000 inferences × 9 crossbars rewritten each"), std::string::npos)
      << violations(worn);
  // A write on a device that does not reprogram.
  nlohmann::json plain = good;
  plain["devices"][1].erase("reprogram");
  EXPECT_NE(violations(plain).find("which does not reprogram"), std::string::npos) << violations(plain);
}

}  // namespace
}  // namespace hetplan
