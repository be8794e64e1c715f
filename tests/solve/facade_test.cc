// Solve() owns the clock and checks every result (solver.h): a method gets
// the call's Deadline, and a result whose status, termination, schedule,
// bound and gap disagree is refused as a bug instead of being reported.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "hetplan/plan/deadline.h"
#include "hetplan/solve/list_schedule.h"
#include "hetplan/solve/solver.h"
#include "solve/instances.h"

namespace hetplan {
namespace {

using testing_instances::Instance;
using testing_instances::MakeGraph;
using testing_instances::Serial;

Instance Chain2() {
  Instance inst{MakeGraph(2, {{0, 1}}), CostModel()};
  inst.costs = CostModel(2, {Serial("cpu", std::nullopt)}, 1);
  inst.costs.set_latency(0, 0, 10);
  inst.costs.set_latency(1, 0, 5);
  return inst;
}

// A method that returns whatever `make` builds from a correct schedule, and
// records the deadline it was given.
class ScriptedSolver final : public Solver {
 public:
  ScriptedSolver(std::string name, std::function<void(SolveResult&)> make) : make_(std::move(make)) {
    info_.name = std::move(name);
    info_.summary = "a test method";
    info_.family = MethodFamily::kExact;
    info_.objectives = {Objective::kLatency};
    info_.proves_optimality = true;
    info_.time_limit = true;
    info_.listed = false;  // not one of the methods every listing and the conformance suite cover
  }
  const MethodInfo& info() const override { return info_; }
  Result<SolveResult> SolveValidated(const Problem& problem, const SolveOptions& /*options*/,
                                     const Deadline& deadline) const override {
    seen_left_s = deadline.SecondsLeft();
    SolveResult r;
    r.schedule = ListSchedule(problem, {0, 0});
    r.objective = r.schedule->makespan_us;
    r.bound = r.objective;
    r.gap = 0;
    r.status = SolveStatus::kOptimal;
    r.termination = Termination::kProved;
    r.seconds = 1e6;  // a method's own clock is not what the call reports
    make_(r);
    return r;
  }
  mutable double seen_left_s = -1;

 private:
  MethodInfo info_;
  std::function<void(SolveResult&)> make_;
};

const ScriptedSolver* Register(const std::string& name, std::function<void(SolveResult&)> make) {
  auto solver = std::make_unique<ScriptedSolver>(name, std::move(make));
  const ScriptedSolver* ptr = solver.get();
  RegisterSolver(std::move(solver));
  return ptr;
}

TEST(Deadline, NarrowsAndCounts) {
  const Deadline none = Deadline::None();
  EXPECT_FALSE(none.limited());
  EXPECT_TRUE(std::isinf(none.SecondsLeft()));
  EXPECT_FALSE(none.Expired());
  const Deadline ten = Deadline::In(10);
  EXPECT_TRUE(ten.limited());
  EXPECT_LE(ten.SecondsLeft(), 10.0);
  EXPECT_GT(ten.SecondsLeft(), 9.0);
  // Within: never later than the deadline it narrows, the same start.
  EXPECT_LE(ten.Within(2).SecondsLeft(), 2.0);
  EXPECT_GT(ten.Within(100).SecondsLeft(), 9.0);
  EXPECT_LE(ten.Within(100).SecondsLeft(), 10.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_GE(ten.Within(1).ElapsedSeconds(), 0.004);
  EXPECT_TRUE(Deadline::In(0).Within(5).limited());
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(Deadline::In(0).Expired() || Deadline::In(0).SecondsLeft() == 0);
  EXPECT_FALSE(Deadline::In(1e7).limited());  // past any clock arithmetic: no limit
}

TEST(Facade, GivesTheMethodTheCallsClockAndReportsItsTime) {
  const ScriptedSolver* s = Register("test_honest", [](SolveResult&) {});
  Instance inst = Chain2();
  SolveOptions o;
  o.time_limit_s = 7;
  auto r = Solve("test_honest", inst.problem(), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_LE(s->seen_left_s, 7.0);
  EXPECT_GT(s->seen_left_s, 6.0);
  EXPECT_LT(r->seconds, 60.0);  // the facade's clock, not the method's 1e6
  EXPECT_EQ(r->solver, "test_honest");
  for (const MethodInfo& m : ListSolvers()) EXPECT_NE(m.name, "test_honest");
}

TEST(Facade, RefusesAResultWhoseClaimsDisagree) {
  const std::vector<std::pair<std::string, std::function<void(SolveResult&)>>> lies = {
      {"test_optimal_gap", [](SolveResult& r) { r.gap = 0.5; }},
      {"test_optimal_unfinished", [](SolveResult& r) { r.termination = Termination::kTimeLimit; }},
      {"test_feasible_finished", [](SolveResult& r) { r.status = SolveStatus::kFeasible; }},
      {"test_bound_above", [](SolveResult& r) { r.bound = r.objective * 2; }},
      {"test_no_schedule", [](SolveResult& r) { r.schedule.reset(); }},
      {"test_infeasible_with_schedule",
       [](SolveResult& r) {
         r.status = SolveStatus::kInfeasible;
         r.termination = Termination::kProvedInfeasible;
       }},
      {"test_heuristic_searched", [](SolveResult& r) { r.status = SolveStatus::kHeuristic; }},
  };
  Instance inst = Chain2();
  for (const auto& [name, make] : lies) {
    Register(name, make);
    auto r = Solve(name, inst.problem(), SolveOptions{});
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), ErrorCode::kInternal) << name;
    EXPECT_NE(r.status().message().find(name), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace hetplan
