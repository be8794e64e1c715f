// The planner conformance suite (OR-Tools math_opt's generic solver tests):
// every method the registry lists runs through the same cases. On shared
// instances each applicable method returns a schedule that the independent
// validator accepts, with a status, termination, objective and bound that
// agree with each other and with what the method declares; a method that does
// not apply says so with a typed error; bad problems and bad options are
// typed errors for every method; limits are respected; results repeat.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hetplan/plan/requests.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/solve/solver.h"
#include "hetplan/validate/validator.h"
#include "solve/instances.h"

namespace hetplan {
namespace {

using testing_instances::Instance;
using testing_instances::MakeGraph;
using testing_instances::RandomDagEdges;
using testing_instances::Serial;
using testing_instances::Spatial;

// The MIP backends other than the one the default (auto) runs on, as a
// suffix of the methods that read --mip-backend ("mip+cbc", "exact+cbc"):
// the suite runs over each backend of the build.
std::vector<std::string> BackendVariants(const std::string& method) {
  std::vector<std::string> out;
  if (method != "mip" && method != "exact") return out;
  for (const MipBackendInfo& b : ListMipBackends()) {
    if (b.backend != ResolveMipBackend(MipOptions{}.backend)) out.push_back(method + "+" + ToString(b.backend));
  }
  return out;
}

// Every registered method by a name Solve() accepts (single:<pu> as
// single:cpu), and the methods with a MIP once more per other backend.
std::vector<std::string> Methods() {
  std::vector<std::string> out;
  for (const MethodInfo& m : ListSolvers()) {
    out.push_back(m.name == "single:<pu>" ? "single:cpu" : m.name);
    for (std::string& v : BackendVariants(m.name)) out.push_back(std::move(v));
  }
  return out;
}

std::string ParamName(const ::testing::TestParamInfo<std::string>& i) {
  std::string name = i.param;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

// The methods that prove an optimum of the edge-transfer problem the exact
// search solves (BIDENT's mappings prove theirs under other accounting).
std::vector<std::string> ProvingMethods() {
  std::vector<std::string> out;
  for (const MethodInfo& m : ListSolvers()) {
    if (!m.proves_optimality || m.family == MethodFamily::kMapping) continue;
    out.push_back(m.name);
    for (std::string& v : BackendVariants(m.name)) out.push_back(std::move(v));
  }
  return out;
}

// A diamond with a skip edge and a chain tail: op0 → {op1, op2} → op3 → op4,
// op0 → op3; Conv/Relu types so that type rules have something to do.
OpGraph Diamond() {
  return MakeGraph(5, {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {0, 3}, {3, 4}}, {"Conv", "Conv", "Relu", "Add", "Conv"});
}

// cpu (serial, 2 W) + cim (spatial, 5 crossbars, 0.5 W): the CIM runs the
// Convs in 1–3 µs with 2–3 crossbars each (not all fit), the cpu everything.
Instance CpuCim() {
  Instance inst{Diamond(), CostModel()};
  inst.costs = CostModel(5, {Serial("cpu", 2.0), Spatial("cim", 5, 0.5)}, static_cast<int>(inst.graph.edges().size()));
  const double cpu[5] = {10, 8, 3, 2, 12}, cim[5] = {2, 1, NAN, NAN, 3};
  const int64_t xb[5] = {2, 3, 0, 0, 2};
  for (int v = 0; v < 5; ++v) {
    inst.costs.set_latency(v, 0, cpu[v]);
    if (!std::isnan(cim[v])) {
      inst.costs.set_latency(v, 1, cim[v]);
      inst.costs.set_crossbars(v, 1, xb[v]);
    }
  }
  for (int e = 0; e < inst.costs.num_edges(); ++e) {
    inst.costs.set_transfer(e, 0, 1, 0.5);
    inst.costs.set_transfer(e, 1, 0, 0.5);
  }
  return inst;
}

// CpuCim with a pool of 3 ADCs on the CIM shared by its operators (2, 2
// and 1 of them): its first two Convs cannot run there side by side.
Instance CpuCimSharedAdcs() {
  Instance inst = CpuCim();
  inst.costs.mutable_pu(1).adc_pool = 3;
  const int64_t adcs[5] = {2, 2, 0, 0, 1};
  for (int v = 0; v < 5; ++v) {
    if (inst.costs.supported(v, 1)) inst.costs.set_adcs(v, 1, adcs[v]);
  }
  return inst;
}

// cpu + gpu + npu, all serial with power; the accelerators pay host copies
// (BIDENT) and contend.
Instance Soc() {
  Instance inst{Diamond(), CostModel()};
  inst.costs = CostModel(5, {Serial("cpu", 3.0), Serial("gpu", 4.5), Serial("npu", 2.0)},
                         static_cast<int>(inst.graph.edges().size()));
  const double lat[3][5] = {{10, 8, 3, 2, 12}, {3, 4, 2, 2, 4}, {2, 6, 5, 4, 2}};
  for (int p = 0; p < 3; ++p) {
    for (int v = 0; v < 5; ++v) {
      inst.costs.set_latency(v, p, lat[p][v]);
      if (p > 0) {
        inst.costs.set_h2d(v, p, 0.5);
        inst.costs.set_d2h(v, p, 0.25);
      }
    }
  }
  for (int e = 0; e < inst.costs.num_edges(); ++e) {
    for (int p = 0; p < 3; ++p) {
      for (int q = 0; q < 3; ++q) {
        if (p != q) inst.costs.set_transfer(e, p, q, 0.75);
      }
    }
  }
  inst.costs.set_slowdown(1, 2, 1.3);
  inst.costs.set_slowdown(2, 1, 1.2);
  return inst;
}

// The case a method runs on: one request, or two (the Soc model twice).
struct Case {
  std::string name;
  Instance one;
  std::shared_ptr<CombinedRequests> two;
  Problem problem(Objective objective) const {
    return two ? two->problem(objective) : one.problem(objective);
  }
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  cases.push_back({"cpu+cim", CpuCim(), nullptr});
  cases.push_back({"cpu+cim, shared ADCs", CpuCimSharedAdcs(), nullptr});
  cases.push_back({"soc", Soc(), nullptr});
  const Instance soc = Soc();
  auto both = CombineRequests(soc.graph, soc.costs, soc.graph, soc.costs);
  EXPECT_TRUE(both.ok()) << both.status().message();
  cases.push_back({"soc, two requests", Soc(), std::make_shared<CombinedRequests>(std::move(both).value())});
  return cases;
}

bool Applies(const MethodInfo& m, const Problem& p) {
  if (std::find(m.objectives.begin(), m.objectives.end(), p.objective) == m.objectives.end()) return false;
  if (m.requests != p.num_requests()) return false;
  for (const PuInfo& pu : p.costs->pus()) {
    if ((pu.spatial && !m.spatial_pus) || (pu.adc_pool > 0 && !m.shared_adcs)) return false;
  }
  return true;
}

nlohmann::json ScheduleFile(const Problem& p, const SolveResult& r, const std::string& mode) {
  LoadedModel model;
  model.path = "conformance.onnx";
  model.sha256 = "0";
  Platform platform = testing_instances::PlatformOf(*p.costs, "conformance");
  ScheduleContext ctx{&model, &platform, &p, &r, mode, {}, {}, {}};
  nlohmann::json j = ScheduleToJson(ctx);
  j["solver"].erase("seconds");
  return j;
}

SolveOptions Quick() {
  SolveOptions o;
  o.time_limit_s = 20;
  o.threads = 1;
  o.relative_gap = 0;
  return o;
}

class Conformance : public ::testing::TestWithParam<std::string> {
 protected:
  // The method's name, without a "+<backend>" suffix.
  std::string name() const { return GetParam().substr(0, GetParam().find('+')); }
  const Solver& method() const { return *FindSolver(name()); }
  // Quick(), on the backend the suffix names.
  SolveOptions quick() const {
    SolveOptions o = Quick();
    const size_t plus = GetParam().find('+');
    if (plus != std::string::npos) o.mip.backend = ParseMipBackend(GetParam().substr(plus + 1)).value();
    return o;
  }
};
// Instantiated with the proving methods only: a method that proves nothing
// has no optimum to compare, and is not run (not skipped) here.
class ProvingConformance : public Conformance {};

TEST_P(Conformance, SchedulesValidateAndTheResultIsConsistent) {
  const MethodInfo& info = method().info();
  int ran = 0;
  for (const Case& c : Cases()) {
    for (Objective objective : {Objective::kLatency, Objective::kEnergy, Objective::kThroughput}) {
      const Problem p = c.problem(objective);
      const std::string where = c.name + ", " + ToString(objective);
      auto r = Solve(name(), p, quick());
      if (!Applies(info, p)) {
        ASSERT_FALSE(r.ok()) << where;
        EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported) << where << ": " << r.status().message();
        EXPECT_NE(r.status().message().find(info.name.substr(0, info.name.find(':'))), std::string::npos)
            << r.status().message();
        continue;
      }
      if (!r.ok()) {
        // A rule that does not apply to this instance (single:cpu cannot be
        // wrong here; e.g. axonn's two fastest PUs) is kUnsupported, nothing else.
        EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported) << where << ": " << r.status().message();
        EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
        continue;
      }
      ++ran;
      EXPECT_EQ(r->solver, name()) << where;
      ASSERT_TRUE(r->schedule.has_value()) << where << ": " << ToString(r->status);
      const Schedule& s = *r->schedule;
      ASSERT_EQ(static_cast<int>(s.ops.size()), p.graph->size());
      const ValidationReport v = ValidateScheduleJson(ScheduleFile(p, *r, info.schedule_mode));
      EXPECT_TRUE(v.ok()) << where << ": " << (v.ok() ? "" : v.violations.front());
      // Status, termination and the method's promises agree.
      if (r->status == SolveStatus::kOptimal) {
        EXPECT_TRUE(info.proves_optimality) << where;
        EXPECT_EQ(r->termination, Termination::kProved) << where;
        EXPECT_LE(r->gap, 1e-9) << where;
      }
      if (r->status == SolveStatus::kHeuristic) {
        EXPECT_EQ(r->termination, Termination::kCompleted) << where;
      }
      if (!std::isnan(r->bound)) {
        EXPECT_LE(r->bound, r->objective * (1 + 1e-9) + 1e-9) << where;
      }
      EXPECT_GE(r->seconds, 0);
      // Two requests: every operator says which one it belongs to.
      if (p.requests != nullptr) {
        for (int v = 0; v < p.graph->size(); ++v) EXPECT_EQ(s.ops[v].request, v < p.requests->split ? 0 : 1);
      }
    }
  }
  EXPECT_GT(ran, 0) << "no shared case applies to " << GetParam();
}

TEST_P(ProvingConformance, ProvenOptimaAgreeWithTheExactSearch) {
  ASSERT_TRUE(method().info().proves_optimality);
  for (const Case& c : Cases()) {
    if (c.two) continue;
    for (Objective objective : {Objective::kLatency, Objective::kThroughput}) {
      const Problem p = c.problem(objective);
      if (!Applies(method().info(), p)) continue;
      auto r = Solve(name(), p, quick());
      auto ref = Solve("exact", p, Quick());
      if (!ref.ok() && ref.status().code() == ErrorCode::kUnsupported) continue;  // e.g. a stream with shared ADCs
      ASSERT_TRUE(r.ok() && ref.ok()) << c.name << ", " << ToString(objective);
      ASSERT_EQ(r->status, SolveStatus::kOptimal) << c.name << ", " << ToString(objective);
      EXPECT_NEAR(r->objective, ref->objective, 1e-6 * ref->objective) << c.name << ", " << ToString(objective);
    }
  }
}

// The fitted segment-boundary cost (--boundary-cost fitted) on every serial
// PU: each method that applies returns a schedule the validator accepts, in
// which every operator that reads from another PU starts no earlier than its
// input's uncharged transfer plus the boundary of its own PU, and the
// schedule file records the charge. Two requests refuse the charge.
TEST_P(Conformance, ChargesTheBoundaryOnEveryPuChange) {
  const MethodInfo& info = method().info();
  int ran = 0;
  for (Case c : Cases()) {
    if (c.two) continue;
    const CostModel plain = c.one.costs;
    for (int p = 0; p < plain.num_pus(); ++p) {
      if (!plain.pu(p).spatial) c.one.costs.ChargeBoundary(p, 4.0 + p);
    }
    for (Objective objective : {Objective::kLatency, Objective::kEnergy}) {
      const Problem p = c.problem(objective);
      if (!Applies(info, p)) continue;
      auto r = Solve(name(), p, quick());
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported) << c.name << ": " << r.status().message();
        continue;
      }
      ASSERT_TRUE(r->schedule.has_value()) << c.name;
      ++ran;
      const nlohmann::json file = ScheduleFile(p, *r, info.schedule_mode);
      const ValidationReport v = ValidateScheduleJson(file);
      EXPECT_TRUE(v.ok()) << c.name << ": " << (v.ok() ? "" : v.violations.front());
      for (int q = 0; q < plain.num_pus(); ++q) {
        if (plain.pu(q).spatial) {
          EXPECT_FALSE(file["devices"][q].contains("boundary_us"));
        } else {
          EXPECT_DOUBLE_EQ(file["devices"][q]["boundary_us"].get<double>(), 4.0 + q) << c.name;
        }
      }
      const Schedule& s = *r->schedule;
      for (int e = 0; e < static_cast<int>(p.graph->edges().size()); ++e) {
        const Edge& edge = p.graph->edges()[e];
        const int du = s.ops[edge.from].device, dv = s.ops[edge.to].device;
        if (du == dv || plain.pu(dv).spatial) continue;
        EXPECT_GE(s.ops[edge.to].start_us + 1e-9, s.ops[edge.from].finish_us + plain.transfer_us(e, du, dv) + 4.0 + dv)
            << c.name << ", " << ToString(objective) << ": edge " << edge.from << " -> " << edge.to;
      }
    }
  }
  // A two-request method is never given one request; its only way to a
  // charged model is CombineRequests, which refuses it.
  if (info.requests == 1) {
    EXPECT_GT(ran, 0) << "no single-request case applies to " << GetParam();
  }
  // Two requests: the combined model cannot carry the charge and says so.
  Instance soc = Soc();
  soc.costs.ChargeBoundary(0, 4.0);
  auto both = CombineRequests(soc.graph, soc.costs, soc.graph, soc.costs);
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().code(), ErrorCode::kUnsupported);
}

TEST_P(Conformance, RepeatsItself) {
  for (const Case& c : Cases()) {
    const Problem p = c.problem(Objective::kLatency);
    auto a = Solve(name(), p, quick());
    auto b = Solve(name(), p, quick());
    ASSERT_EQ(a.ok(), b.ok()) << c.name;
    if (!a.ok()) {
      EXPECT_EQ(a.status().message(), b.status().message());
      continue;
    }
    ASSERT_EQ(a->schedule.has_value(), b->schedule.has_value());
    if (!a->schedule) continue;
    const std::string mode = method().info().schedule_mode;
    EXPECT_EQ(ScheduleFile(p, *a, mode).dump(), ScheduleFile(p, *b, mode).dump()) << c.name;
  }
}

TEST_P(Conformance, BadProblemsAndOptionsAreTypedErrors) {
  const Instance good = method().info().spatial_pus ? CpuCim() : Soc();
  // Costs of another graph.
  const Instance other{MakeGraph(2, {{0, 1}}), CostModel(2, {Serial("cpu")}, 1)};
  Problem mismatched = good.problem();
  mismatched.costs = &other.costs;
  auto r = Solve(name(), mismatched, quick());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << r.status().message();
  // An operator no PU runs.
  Instance nowhere = good;
  for (int p = 0; p < nowhere.costs.num_pus(); ++p) nowhere.costs.set_unsupported(2, p);
  r = Solve(name(), nowhere.problem(), quick());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInfeasible) << r.status().message();
  EXPECT_NE(r.status().message().find("op2"), std::string::npos) << r.status().message();
  // A negative cost.
  Instance negative = good;
  negative.costs.set_latency(1, 0, -1);
  r = Solve(name(), negative.problem(), quick());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  // Options out of range, whatever the method reads.
  for (auto bad : {+[](SolveOptions& o) { o.time_limit_s = 0; }, +[](SolveOptions& o) { o.relative_gap = -1; },
                   +[](SolveOptions& o) { o.threads = -2; }, +[](SolveOptions& o) { o.exact.node_limit = -1; }}) {
    SolveOptions o = quick();
    bad(o);
    r = Solve(name(), good.problem(), o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << r.status().message();
  }
}

// A wider random instance, so that a short limit can bite: the methods that
// honour a time limit stop near it and say why; the others ignore it.
TEST_P(Conformance, TimeLimitsAreRespected) {
  const MethodInfo& info = method().info();
  std::mt19937 rng(2024);
  const int n = 40;
  Instance inst{MakeGraph(n, RandomDagEdges(rng, n, {0.08})), CostModel()};
  const std::vector<PuInfo> pus = info.spatial_pus ? std::vector<PuInfo>{Serial("cpu", 2.0), Spatial("cim", 30, 1.0)}
                                                   : std::vector<PuInfo>{Serial("cpu", 2.0), Serial("gpu", 3.0)};
  inst.costs = CostModel(n, pus, static_cast<int>(inst.graph.edges().size()));
  testing_instances::FillRandomCosts(rng, pus, 0.7, 40, 5, inst.costs);
  Problem p = inst.problem();
  std::unique_ptr<CombinedRequests> both;
  if (info.requests == 2) {
    auto b = CombineRequests(inst.graph, inst.costs, inst.graph, inst.costs);
    ASSERT_TRUE(b.ok());
    both = std::make_unique<CombinedRequests>(std::move(b).value());
    p = both->problem(Objective::kLatency);
  }
  SolveOptions o = quick();
  o.time_limit_s = 0.5;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = Solve(name(), p, o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok()) {
    EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported) << r.status().message();
    return;
  }
  if (info.time_limit) {
    EXPECT_LT(wall, o.time_limit_s + 2.0) << "stopped " << wall << " s into a 0.5 s limit";
    if (r->status != SolveStatus::kOptimal && r->status != SolveStatus::kInfeasible) {
      EXPECT_EQ(r->termination, Termination::kTimeLimit) << ToString(r->status);
    }
  }
  if (r->schedule) {
    const ValidationReport v = ValidateScheduleJson(ScheduleFile(p, *r, info.schedule_mode));
    EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.violations.front());
  }
}

INSTANTIATE_TEST_SUITE_P(EveryMethod, Conformance, ::testing::ValuesIn(Methods()), ParamName);
INSTANTIATE_TEST_SUITE_P(EveryProvingMethod, ProvingConformance, ::testing::ValuesIn(ProvingMethods()), ParamName);

// The list itself: every family is there and each method says what it does.
TEST(ConformanceRegistry, EveryMethodDescribesItself) {
  std::set<MethodFamily> families;
  for (const MethodInfo& m : ListSolvers()) {
    families.insert(m.family);
    EXPECT_FALSE(m.summary.empty()) << m.name;
    EXPECT_FALSE(m.objectives.empty()) << m.name;
    EXPECT_TRUE(m.requests == 1 || m.requests == 2) << m.name;
    EXPECT_FALSE(m.docs.empty()) << m.name;
  }
  EXPECT_EQ(families.size(), 4u);
  EXPECT_GE(ListSolvers().size(), 15u);
}

}  // namespace
}  // namespace hetplan
