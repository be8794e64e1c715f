// The MPI sweep's messages, without MPI: rank 0's check of each rank's hello
// (build, arguments, files) and the cost tables it sends, which must give a
// worker exactly the points rank 0 would compute.
#include "dse/protocol.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "hetplan/cost/cost_table.h"
#include "testing/helpers.h"

namespace hetplan::dse {
namespace {

namespace fs = std::filesystem;

using test_util::kResnet18;

DseSpec Spec() {
  DseSpec s;
  s.models = {kResnet18};
  s.platforms = {"klein-arm", "klein-x86"};
  s.sweeps = {{"cim.crossbars", {"25", "100"}}};
  s.solvers = {"exact", "greedy"};
  s.profile.warmup = 2;
  s.profile.runs = 5;
  s.profile.cache_dir = (fs::temp_directory_path() / "hetplan_dse_test_cache").string();
  s.out_path = (fs::temp_directory_path() / ("hetplan_protocol_test_" + std::to_string(getpid()) + ".jsonl")).string();
  return s;
}

TEST(Hello, RankZeroNamesTheFirstDisagreement) {
  if (!fs::exists(kResnet18)) GTEST_SKIP() << "zoo not built";
  DseSpec spec = Spec();
  spec.platforms = {"klein-arm"};
  Start ours;
  Prepare(spec, "hetplan 0.1.0 abc", "solvers=exact\njobs=0\n", 0, 2, &ours);
  ASSERT_TRUE(ours.status.ok()) << ours.status.message();
  EXPECT_TRUE(CompareHello(ours.hello, ours.hello, 1).ok());

  nlohmann::json theirs = ours.hello;
  theirs["build"] = "hetplan 0.1.0 def";
  Status st = CompareHello(ours.hello, theirs, 2);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("rank 2"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("hetplan 0.1.0 def"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("same hetplan build"), std::string::npos) << st.message();

  theirs = ours.hello;
  theirs["arguments"] = "solvers=greedy\njobs=0\n";
  st = CompareHello(ours.hello, theirs, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("solvers=greedy there, solvers=exact on rank 0"), std::string::npos) << st.message();

  // The same command line, a spec built differently (a library caller).
  theirs = ours.hello;
  theirs["spec"]["solvers"] = {"map"};
  st = CompareHello(ours.hello, theirs, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("map"), std::string::npos) << st.message();

  theirs = ours.hello;
  theirs["models"][0]["problem"] = "no such file";
  theirs["cwd"] = "/elsewhere";
  st = CompareHello(ours.hello, theirs, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kNotFound);
  EXPECT_NE(st.message().find(kResnet18 + ": no such file on that rank's file system"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("/elsewhere"), std::string::npos) << st.message();

  theirs = ours.hello;
  theirs["platforms"][0] = "0000";
  st = CompareHello(ours.hello, theirs, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("platform 'klein-arm' reads differently"), std::string::npos) << st.message();
}

TEST(Hello, AMissingModelIsSeenWithoutLoadingIt) {
  DseSpec spec = Spec();
  spec.models = {"/nonexistent/model.onnx"};
  spec.platforms = {"klein-arm"};
  Start s;
  Prepare(spec, "b", "a", 1, 1, &s);
  EXPECT_EQ(s.hello["models"][0]["problem"], "no such file");
}

TEST(CostsPayload, AWorkerComputesExactlyRankZerosPoints) {
  if (!fs::exists(kResnet18)) GTEST_SKIP() << "zoo not built";
  const DseSpec spec = Spec();
  // Rank 0: profiles (through the cache) and sends.
  Start zero;
  Prepare(spec, "b", "a", 0, 1, &zero);
  ASSERT_TRUE(zero.status.ok()) << zero.status.message();
  DseSummary summary;
  ASSERT_TRUE(LoadModelsAndCosts(zero.spec, &zero.sh, &summary, {}, Clock::now()).ok());
  zero.sh.host_cpu = "rank zero's cpu";
  const std::string payload = CostsPayload(zero.sh);
  // A worker: loads the model itself and takes the tables.
  Start one;
  Prepare(spec, "b", "a", 1, 1, &one);
  ASSERT_TRUE(AcceptCosts(payload, &one).ok());
  EXPECT_EQ(one.sh.host_cpu, "rank zero's cpu");
  ASSERT_EQ(one.sh.costs.size(), zero.sh.costs.size());
  for (const auto& [key, rc] : zero.sh.costs) {
    const ResolvedCosts& theirs = one.sh.costs.at(key);
    EXPECT_EQ(theirs.notes, rc.notes);
    ASSERT_EQ(theirs.sources.tables.size(), rc.sources.tables.size());
    for (const auto& [pu, table] : rc.sources.tables) {
      EXPECT_EQ(CostTableToJson(theirs.sources.tables.at(pu)), CostTableToJson(table)) << pu;
    }
  }
  // Every point's line is the same, but for times and the rank's host.
  ASSERT_EQ(one.points.size(), zero.points.size());
  for (size_t i = 0; i < zero.points.size(); ++i) {
    nlohmann::json a = RunPoint(zero.sh, zero.points[i]);
    nlohmann::json b = RunPoint(one.sh, one.points[i]);
    for (nlohmann::json* l : {&a, &b}) {
      for (const char* f : {"wall_s", "finished_at", "seconds", "host", "rank"}) l->erase(f);
    }
    EXPECT_EQ(a, b) << i;
  }

  // A worker whose copy of the model differs is refused, naming the file.
  std::string tampered = payload;
  const std::string sha = zero.sh.models[0].sha256;
  tampered.replace(tampered.find(sha), 4, "0000");
  Start two;
  Prepare(spec, "b", "a", 2, 1, &two);
  const Status st = AcceptCosts(tampered, &two);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(kResnet18 + ": this file differs from rank 0's"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace hetplan::dse
