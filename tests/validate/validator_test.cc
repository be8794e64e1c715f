// The validator catches each kind of violation in hand-broken schedules, and
// the list-scheduling simulator produces schedules it accepts.
#include "hetplan/validate/validator.h"

#include <random>

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "hetplan/solve/list_schedule.h"

namespace hetplan {
namespace {

// cpu (serial) + cim (spatial, 4 crossbars); a → b, a → c, b → d, c → d.
nlohmann::json GoodSchedule() {
  return nlohmann::json::parse(R"({
    "format": "hetplan-schedule", "version": 1,
    "devices": [
      {"name": "cpu", "kind": "cpu", "execution": "serial", "capacity_crossbars": null, "power_w": 2.0},
      {"name": "cim", "kind": "cim", "execution": "spatial", "capacity_crossbars": 4, "power_w": 1.0}],
    "operators": [
      {"id": 0, "name": "a", "cost_us": {"cpu": 10, "cim": 4}, "crossbars": 2, "device": "cim", "start_us": 0, "finish_us": 4},
      {"id": 1, "name": "b", "cost_us": {"cpu": 5, "cim": null}, "crossbars": null, "device": "cpu", "start_us": 5, "finish_us": 10},
      {"id": 2, "name": "c", "cost_us": {"cpu": 6, "cim": 3}, "crossbars": 2, "device": "cim", "start_us": 4, "finish_us": 7},
      {"id": 3, "name": "d", "cost_us": {"cpu": 2, "cim": null}, "crossbars": null, "device": "cpu", "start_us": 10, "finish_us": 12}],
    "edges": [
      {"from": 0, "to": 1, "transfer_us": 1},
      {"from": 0, "to": 2, "transfer_us": 1},
      {"from": 1, "to": 3, "transfer_us": 1},
      {"from": 2, "to": 3, "transfer_us": 1}],
    "makespan_us": 12,
    "energy_uj": 21
  })");
}

bool Mentions(const ValidationReport& r, const std::string& what) {
  for (const auto& v : r.violations) {
    if (v.find(what) != std::string::npos) return true;
  }
  return false;
}

TEST(Validator, AcceptsAValidSchedule) {
  ValidationReport r = ValidateScheduleJson(GoodSchedule());
  EXPECT_TRUE(r.ok()) << (r.violations.empty() ? "" : r.violations[0]);
  EXPECT_EQ(r.operators, 4);
  EXPECT_EQ(r.edges, 4);
}

TEST(Validator, TerminationNamesFollowTheFilesVersion) {
  // Version 3 renamed optimal/heuristic/infeasible (status names too); older files keep theirs.
  auto s = GoodSchedule();
  for (const auto& [version, name, ok] : std::vector<std::tuple<int, std::string, bool>>{
           {3, "proved", true}, {3, "completed", true}, {3, "proved_infeasible", true}, {3, "time_limit", true},
           {3, "optimal", false}, {3, "heuristic", false}, {3, "nonsense", false},
           {2, "optimal", true}, {2, "heuristic", true}, {1, "infeasible", true}, {2, "proved", false}}) {
    s["version"] = version;
    s["solver"] = {{"termination", name}};
    const ValidationReport r = ValidateScheduleJson(s);
    EXPECT_EQ(r.ok(), ok) << "version " << version << " termination " << name;
    if (!ok) {
      EXPECT_TRUE(Mentions(r, "solver.termination \"" + name + "\" is not one of")) << name;
    }
  }
  s["solver"] = {{"termination", 3}};
  EXPECT_TRUE(Mentions(ValidateScheduleJson(s), "solver.termination 3 is not one of"));
}

TEST(Validator, UnsupportedDevice) {
  auto s = GoodSchedule();
  s["operators"][1]["device"] = "cim";
  EXPECT_TRUE(Mentions(ValidateScheduleJson(s), "unsupported"));
}

TEST(Validator, UnknownDevice) {
  auto s = GoodSchedule();
  s["operators"][1]["device"] = "gpu";
  EXPECT_TRUE(Mentions(ValidateScheduleJson(s), "not in 'devices'"));
}

TEST(Validator, WrongDuration) {
  auto s = GoodSchedule();
  s["operators"][3]["finish_us"] = 13;
  s["makespan_us"] = 13;
  auto r = ValidateScheduleJson(s);
  EXPECT_TRUE(Mentions(r, "finish − start")) << r.violations.size();
}

TEST(Validator, PrecedenceWithTransfer) {
  auto s = GoodSchedule();
  // b starts when a finishes but the transfer from cim to cpu takes 1 µs.
  s["operators"][1]["start_us"] = 4;
  s["operators"][1]["finish_us"] = 9;
  auto r = ValidateScheduleJson(s);
  EXPECT_TRUE(Mentions(r, "precedence: 'b'"));
}

TEST(Validator, OverlapOnSerialDevice) {
  auto s = GoodSchedule();
  // Put c on the cpu overlapping b.
  s["operators"][2]["device"] = "cpu";
  s["operators"][2]["start_us"] = 5;
  s["operators"][2]["finish_us"] = 11;
  s["operators"][3]["start_us"] = 11;
  s["operators"][3]["finish_us"] = 13;
  s["makespan_us"] = 13;
  s["energy_uj"] = nullptr;
  EXPECT_TRUE(Mentions(ValidateScheduleJson(s), "overlap on serial 'cpu'"));
}

TEST(Validator, CapacityOnSpatialDevice) {
  auto s = GoodSchedule();
  s["devices"][1]["capacity_crossbars"] = 3;
  EXPECT_TRUE(Mentions(ValidateScheduleJson(s), "capacity"));
}

TEST(Validator, Makespan) {
  auto s = GoodSchedule();
  s["makespan_us"] = 11;
  EXPECT_TRUE(Mentions(ValidateScheduleJson(s), "makespan_us"));
}

TEST(Validator, Energy) {
  auto s = GoodSchedule();
  s["energy_uj"] = 40;
  EXPECT_TRUE(Mentions(ValidateScheduleJson(s), "energy_uj"));
}

TEST(Validator, SlowdownStretchesDuration) {
  auto s = GoodSchedule();
  s["operators"][3]["slowdown"] = 1.5;  // 2 µs × 1.5 = 3 µs
  s["operators"][3]["finish_us"] = 13;
  s["makespan_us"] = 13;
  double e = 4 * 1.0 + 5 * 2.0 + 3 * 1.0 + 2 * 1.5 * 2.0;
  s["energy_uj"] = e;
  auto r = ValidateScheduleJson(s);
  EXPECT_TRUE(r.ok()) << (r.violations.empty() ? "" : r.violations[0]);
  s["operators"][3]["slowdown"] = 0.5;
  EXPECT_TRUE(Mentions(ValidateScheduleJson(s), "slowdown"));
}

TEST(Validator, StructuralGarbageIsAViolationNotACrash) {
  for (const char* text : {"[]", "{}", R"({"format": "hetplan-schedule", "version": 1, "devices": []})",
                           R"({"format": "x", "version": 2, "devices": [{"name": 3}], "operators": 7})",
                           R"({"format": "hetplan-schedule", "version": 1,
                               "devices": [{"name": "cpu", "execution": "serial"}],
                               "operators": [{"id": "x"}, 5, {"id": 1, "device": "cpu", "start_us": "a"}],
                               "edges": [{"from": 0}, {"from": 1, "to": 99}], "makespan_us": null})"}) {
    auto r = ValidateScheduleJson(nlohmann::json::parse(text));
    EXPECT_FALSE(r.ok()) << text;
  }
}

TEST(Validator, NegativeStart) {
  auto s = GoodSchedule();
  s["operators"][0]["start_us"] = -1;
  s["operators"][0]["finish_us"] = 3;
  EXPECT_TRUE(Mentions(ValidateScheduleJson(s), "starts before 0"));
}

// The simulator's schedules pass the validator on random DAGs and assignments.
TEST(Simulator, ListSchedulesAreValid) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 100; ++trial) {
    int n = 2 + static_cast<int>(rng() % 10);
    std::vector<Operator> ops(n);
    std::vector<Edge> edges;
    for (int i = 0; i < n; ++i) {
      ops[i].id = i;
      ops[i].name = "o" + std::to_string(i);
      ops[i].type = "Op";
      for (int j = 0; j < i; ++j) {
        if (rng() % 3 == 0) edges.push_back(Edge{j, i, {"t"}, 10, 40});
      }
    }
    auto g = OpGraph::Create("r", ops, edges);
    ASSERT_TRUE(g.ok());
    auto pu = [](const char* name, PuKind kind, bool spatial, int64_t capacity, double power) {
      PuInfo info;
      info.name = name;
      info.kind = kind;
      info.spatial = spatial;
      info.capacity = capacity;
      info.power_w = power;
      info.cost_label = "synthetic";
      return info;
    };
    CostModel c(n, {pu("cpu", PuKind::kCpu, false, -1, 1.0), pu("cim", PuKind::kCim, true, 100, 0.5)},
                static_cast<int>(g->edges().size()));
    std::vector<int> assignment(n);
    for (int v = 0; v < n; ++v) {
      c.set_latency(v, 0, 1 + rng() % 20);
      if (rng() % 2) {
        c.set_latency(v, 1, 1 + rng() % 10);
        c.set_crossbars(v, 1, 1 + rng() % 5);
      }
      assignment[v] = c.supported(v, 1) && rng() % 2 ? 1 : 0;
    }
    for (int e = 0; e < static_cast<int>(g->edges().size()); ++e) {
      double t = rng() % 4;
      c.set_transfer(e, 0, 1, t);
      c.set_transfer(e, 1, 0, t);
    }
    Problem p{&*g, &c, Objective::kLatency, std::nullopt};
    Schedule s = ListSchedule(p, assignment);
    // Render the minimal schedule JSON the validator reads.
    nlohmann::json j = {{"format", "hetplan-schedule"}, {"version", 1}};
    j["devices"] = {{{"name", "cpu"}, {"execution", "serial"}, {"power_w", 1.0}},
                    {{"name", "cim"}, {"execution", "spatial"}, {"capacity_crossbars", 100}, {"power_w", 0.5}}};
    j["operators"] = nlohmann::json::array();
    for (int v = 0; v < n; ++v) {
      nlohmann::json cost = {{"cpu", c.latency_us(v, 0)},
                             {"cim", c.supported(v, 1) ? nlohmann::json(c.latency_us(v, 1)) : nlohmann::json(nullptr)}};
      j["operators"].push_back({{"id", v}, {"name", ops[v].name}, {"cost_us", cost},
                                {"crossbars", c.supported(v, 1) ? nlohmann::json(c.crossbars(v, 1)) : nlohmann::json(nullptr)},
                                {"device", assignment[v] ? "cim" : "cpu"},
                                {"start_us", s.ops[v].start_us}, {"finish_us", s.ops[v].finish_us}});
    }
    j["edges"] = nlohmann::json::array();
    for (int e = 0; e < static_cast<int>(g->edges().size()); ++e) {
      j["edges"].push_back({{"from", g->edges()[e].from}, {"to", g->edges()[e].to}, {"transfer_us", c.transfer_us(e, 0, 1)}});
    }
    j["makespan_us"] = s.makespan_us;
    j["energy_uj"] = s.energy_uj ? nlohmann::json(*s.energy_uj) : nlohmann::json(nullptr);
    auto r = ValidateScheduleJson(j);
    ASSERT_TRUE(r.ok()) << r.violations[0];
  }
}

}  // namespace
}  // namespace hetplan
