// `--objective throughput` end to end (docs/throughput.md): the stream's plan
// is proven, its II is no longer than the latency-optimal plan's own
// pipelined II, the file passes `hetplan validate` and a shortened II is
// caught, the trace shows inputs overlapping, and --max-latency bounds one
// input's latency or is refused in one line where it does not apply.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/helpers.h"
#include "testing/scratch.h"

namespace {

namespace fs = std::filesystem;

using hetplan::test_util::CmdResult;
using hetplan::test_util::Hetplan;
using hetplan::test_util::kResnet18;
using hetplan::test_util::ReadJson;

// Every plan of one test shares the test's own profile cache: the default one (.cache/hetplan in the working
// folder) is shared with the tests running beside it, and two that profile the same key at once leave each run
// with the costs of whichever profile it read (seen 2026-12-08: a free and a capped plan of the same test planned
// from two different profiles, so the capped run's bound fell below the free optimum).
std::string Plan(const fs::path& out, const std::string& extra) {
  return "partition " + kResnet18 + " --platform klein-arm --warmup 1 --runs 2 --threads 1 --cache-dir " +
         (out.parent_path() / "cache").string() + " --out " + out.string() + " " + extra;
}

TEST(CliStream, ThroughputPlanIsProvenValidatedAndNoSlowerThanTheLatencyPlan) {
  if (!fs::exists(kResnet18)) GTEST_SKIP() << "zoo not built";
  const fs::path d = hetplan::test_util::FreshDir("hetplan_cli_stream_", "ok");
  CmdResult t = Hetplan(Plan(d / "t.json", "--objective throughput --trace " + (d / "trace.json").string()));
  ASSERT_EQ(t.code, 0) << t.out;
  EXPECT_NE(t.out.find("stream    II "), std::string::npos) << t.out;
  CmdResult l = Hetplan(Plan(d / "l.json", "--objective latency"));
  ASSERT_EQ(l.code, 0) << l.out;
  const auto s = ReadJson(d / "t.json");
  const auto lat = ReadJson(d / "l.json");
  EXPECT_EQ(s["objective"], "throughput");
  EXPECT_EQ(s["solver"]["status"], "optimal");
  const double ii = s["initiation_interval_us"].get<double>();
  EXPECT_NEAR(s["inputs_per_s"].get<double>(), 1e6 / ii, 1e-6 * 1e6 / ii);
  // The latency-optimal plan pipelined runs no faster than the optimum (within its gap).
  EXPECT_GE(lat["pipelined_ii_us"].get<double>(), ii * (1 - 1e-4));
  EXPECT_FALSE(lat.contains("initiation_interval_us"));
  // One input takes at least as long as the latency-optimal plan (within its gap).
  EXPECT_GE(s["makespan_us"].get<double>(), lat["makespan_us"].get<double>() * (1 - 1e-4));
  for (const auto& op : s["operators"]) {
    EXPECT_GE(op["replicas"].get<int>(), 1);
    EXPECT_EQ(op["stage"].get<int>(), static_cast<int>(op["start_us"].get<double>() / ii + 1e-9)) << op.dump();
  }
  EXPECT_EQ(Hetplan("validate " + (d / "t.json").string()).code, 0);
  // The trace repeats the operators for several inputs, one II apart.
  const auto trace = ReadJson(d / "trace.json");
  int second_input = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.contains("args") && e["args"].contains("input") && e["args"]["input"] == 1) ++second_input;
  }
  EXPECT_GE(second_input, static_cast<int>(s["operators"].size()));
  // A II 10 % shorter than the CPU's work: the CPU is used twice at one moment of the cycle.
  auto tampered = s;
  tampered["initiation_interval_us"] = ii * 0.9;
  tampered.erase("inputs_per_s");
  for (auto& op : tampered["operators"]) {
    op["stage"] = static_cast<int>(op["start_us"].get<double>() / (ii * 0.9) + 1e-9);
  }
  std::ofstream(d / "bad.json") << tampered.dump();
  CmdResult v = Hetplan("validate " + (d / "bad.json").string());
  EXPECT_NE(v.code, 0) << v.out;
  EXPECT_NE(v.out.find("stream: "), std::string::npos) << v.out;
}

TEST(CliStream, MaxLatencyBoundsOneInput) {
  if (!fs::exists(kResnet18)) GTEST_SKIP() << "zoo not built";
  const fs::path d = hetplan::test_util::FreshDir("hetplan_cli_stream_", "cap");
  ASSERT_EQ(Hetplan(Plan(d / "free.json", "--objective throughput")).code, 0);
  ASSERT_EQ(Hetplan(Plan(d / "l.json", "--objective latency")).code, 0);
  const auto free = ReadJson(d / "free.json");
  const double fastest = ReadJson(d / "l.json")["makespan_us"].get<double>();
  const double cap = 1.5 * fastest;
  ASSERT_GT(free["makespan_us"].get<double>(), cap) << "the test wants a cap the unbounded plan misses";
  // 60 s: the MIP with the latency bound does not finish on ResNet-18 (it ran to the default 600 s here); the
  // checks below hold for whatever it has found by then.
  CmdResult r = Hetplan(Plan(d / "cap.json", "--objective throughput --time-limit 60 --max-latency " +
                                                 std::to_string(cap)));
  ASSERT_EQ(r.code, 0) << r.out;
  const auto s = ReadJson(d / "cap.json");
  EXPECT_LE(s["makespan_us"].get<double>(), cap * (1 + 1e-9));
  EXPECT_GE(s["initiation_interval_us"].get<double>(), free["initiation_interval_us"].get<double>() * (1 - 1e-9));
  // The unbounded optimum is a bound; optimal only where the bound is met.
  const double bound = s["solver"]["bound"].get<double>();
  EXPECT_GE(bound, free["initiation_interval_us"].get<double>() * (1 - 1e-9));
  EXPECT_LE(bound, s["initiation_interval_us"].get<double>() * (1 + 1e-9));
  const std::string status = s["solver"]["status"].get<std::string>();
  EXPECT_TRUE(status == "heuristic" || status == "optimal" || status == "feasible") << status;
  if (status == "optimal") {
    EXPECT_NEAR(bound, s["initiation_interval_us"].get<double>(), 1e-4 * bound);
  }
  EXPECT_EQ(Hetplan("validate " + (d / "cap.json").string()).code, 0);
  // A cap no plan meets: proven so by the MIP; no schedule, nothing written.
  CmdResult none = Hetplan(Plan(d / "none.json", "--objective throughput --max-latency 1"));
  EXPECT_EQ(none.code, 3) << none.out;
  EXPECT_NE(none.out.find("infeasible"), std::string::npos) << none.out;
  EXPECT_FALSE(fs::exists(d / "none.json"));
  // Where it does not apply: one line, nothing written.
  CmdResult bad = Hetplan(Plan(d / "no.json", "--objective latency --max-latency 100"));
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("--max-latency bounds one input of a stream"), std::string::npos) << bad.out;
  EXPECT_FALSE(fs::exists(d / "no.json"));
}

}  // namespace
