// The parts of the MPI sweep that need no MPI: the coordinator's ledger
// (largest first, one CBC point per rank, prefetch, lost and hung ranks), the
// worker pool's exclusive lane, the results file's lock, the cost prior.
#include "dse/ledger.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "dse/internal.h"
#include "hetplan/dse/dse.h"

namespace hetplan::dse {
namespace {

namespace fs = std::filesystem;

std::vector<int> Flat(const std::map<int, std::vector<int>>& dealt) {
  std::vector<int> out;
  for (const auto& [rank, idx] : dealt) out.insert(out.end(), idx.begin(), idx.end());
  return out;
}

TEST(Ledger, DealsTheLargestPointsFirstAcrossRanksThenPrefetches) {
  // Estimates 1..6 s for points 0..5.
  std::vector<Ledger::Point> pts;
  for (int i = 0; i < 6; ++i) pts.push_back({i, 1.0 + i, false, -1});
  Ledger ledger(pts);
  const auto now = Clock::now();
  ledger.AddRank(0, 1, 1, now);
  ledger.AddRank(1, 1, 1, now);
  const auto dealt = ledger.Deal();
  // Each rank's one thread first gets one of the two largest, then one
  // prefetched point each.
  ASSERT_EQ(dealt.size(), 2u);
  EXPECT_EQ(dealt.at(0), (std::vector<int>{5, 3}));
  EXPECT_EQ(dealt.at(1), (std::vector<int>{4, 2}));
  EXPECT_TRUE(ledger.Deal().empty());  // both full
  EXPECT_TRUE(ledger.Finished(1, 4));
  EXPECT_EQ(ledger.Deal(), (std::map<int, std::vector<int>>{{1, {1}}}));
  EXPECT_FALSE(ledger.Finished(0, 4));  // not rank 0's
  EXPECT_FALSE(ledger.Done());
  for (auto [r, i] : std::vector<std::pair<int, int>>{{0, 5}, {0, 3}, {1, 2}}) EXPECT_TRUE(ledger.Finished(r, i));
  EXPECT_EQ(Flat(ledger.Deal()), (std::vector<int>{0}));
  EXPECT_TRUE(ledger.Finished(1, 1));
  EXPECT_FALSE(ledger.Done());
  EXPECT_TRUE(ledger.Finished(0, 0));
  EXPECT_TRUE(ledger.Done());
}

TEST(Ledger, OneCbcPointPerRankAtATime) {
  std::vector<Ledger::Point> pts = {{0, 10, true, 5}, {1, 9, true, 5}, {2, 1, false, -1}, {3, 1, false, -1}};
  Ledger ledger(pts);
  ledger.AddRank(0, 2, 2, Clock::now());
  const auto dealt = ledger.Deal();
  // The second CBC point waits for the first even though threads are free.
  EXPECT_EQ(dealt.at(0), (std::vector<int>{0, 2, 3}));
  EXPECT_TRUE(ledger.Finished(0, 0));
  EXPECT_EQ(ledger.Deal().at(0), (std::vector<int>{1}));
}

TEST(Ledger, ASilentRankIsLostWithThePointsItHeld) {
  std::vector<Ledger::Point> pts;
  for (int i = 0; i < 8; ++i) pts.push_back({i, 1, false, -1});
  Ledger ledger(pts);
  const auto t0 = Clock::now();
  ledger.AddRank(0, 1, 1, t0);
  ledger.AddRank(1, 2, 1, t0);
  ledger.Deal();
  const std::vector<int> held = ledger.Held(1);
  ASSERT_EQ(held.size(), 3u);
  ledger.Heard(0, t0 + std::chrono::seconds(9));
  EXPECT_TRUE(ledger.Check(t0 + std::chrono::seconds(9), 10, 60).empty());
  const auto events = ledger.Check(t0 + std::chrono::seconds(11), 10, 60);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].rank, 1);
  EXPECT_EQ(events[0].points, held);
  EXPECT_NE(events[0].what.find("11 s"), std::string::npos) << events[0].what;
  EXPECT_TRUE(ledger.Lost(1));
  EXPECT_EQ(ledger.LiveRanks(), (std::vector<int>{0}));
  // Its late result is dropped; the rest goes to rank 0; reported once.
  EXPECT_FALSE(ledger.Finished(1, held[0]));
  ledger.Heard(0, t0 + std::chrono::seconds(30));
  EXPECT_TRUE(ledger.Check(t0 + std::chrono::seconds(30), 10, 60).empty());
  std::set<int> ran;
  for (int i : ledger.Held(0)) {
    ran.insert(i);
    EXPECT_TRUE(ledger.Finished(0, i));
  }
  while (!ledger.Done()) {
    for (int i : Flat(ledger.Deal())) {
      ran.insert(i);
      EXPECT_TRUE(ledger.Finished(0, i));
    }
  }
  EXPECT_EQ(ran.size(), 8u - held.size());
}

TEST(Ledger, NoRankIsLostForTheTimeTheCoordinatorItselfStoodStill) {
  Ledger ledger({{0, 1, false, -1}, {1, 1, false, -1}});
  const auto t0 = Clock::now();
  ledger.AddRank(0, 1, 0, t0);
  ledger.AddRank(1, 1, 0, t0);
  ledger.Deal();
  ledger.HeardAll(t0 + std::chrono::seconds(100));  // what rank 1 sent meanwhile is still unread
  EXPECT_TRUE(ledger.Check(t0 + std::chrono::seconds(101), 10, 60).empty());
  EXPECT_FALSE(ledger.Lost(1));
  ledger.Heard(0, t0 + std::chrono::seconds(111));  // the coordinator hears itself every round
  const auto events = ledger.Check(t0 + std::chrono::seconds(111), 10, 60);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].rank, 1);
}

TEST(Ledger, APointPastItsTimeLimitIsHungAndNotWaitedFor) {
  std::vector<Ledger::Point> pts = {{0, 10, false, 5}, {1, 1, false, 5}, {2, 1, false, -1}};
  Ledger ledger(pts);
  const auto t0 = Clock::now();
  ledger.AddRank(0, 1, 0, t0);
  ledger.AddRank(1, 1, 0, t0);
  EXPECT_EQ(Flat(ledger.Deal()), (std::vector<int>{0, 1}));
  ledger.Running(0, {{0, 0.0}}, t0);
  ledger.Running(1, {{1, 0.0}}, t0);
  ledger.Heard(0, t0 + std::chrono::seconds(7));
  ledger.Heard(1, t0 + std::chrono::seconds(7));
  EXPECT_TRUE(ledger.Check(t0 + std::chrono::seconds(7), 100, 3).empty());  // 7 s < 5 + 3
  ledger.Heard(0, t0 + std::chrono::seconds(9));
  ledger.Heard(1, t0 + std::chrono::seconds(9));
  EXPECT_TRUE(ledger.Finished(1, 1));  // point 1 did finish
  const auto events = ledger.Check(t0 + std::chrono::seconds(9), 100, 3);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].rank, 0);
  EXPECT_EQ(events[0].points, (std::vector<int>{0}));
  EXPECT_NE(events[0].what.find("past its 5 s time limit"), std::string::npos) << events[0].what;
  // Rank 0's only thread is stuck: it is lost (holding nothing else, so
  // nothing more to report beyond that).
  EXPECT_TRUE(ledger.Lost(0));
  EXPECT_EQ(Flat(ledger.Deal()), (std::vector<int>{2}));
  EXPECT_TRUE(ledger.Finished(1, 2));
  EXPECT_TRUE(ledger.Done());
}

TEST(PointPool, RunsEveryPointWithOneExclusivePointAtATime) {
  std::atomic<int> in_lane{0}, max_in_lane{0};
  std::mutex mu;
  std::set<int> done;
  {
    PointPool pool(
        4,
        [&](int i, std::string*) {
          if (i % 3 == 0) {
            const int n = ++in_lane;
            int m = max_in_lane.load();
            while (n > m && !max_in_lane.compare_exchange_weak(m, n)) {
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            --in_lane;
          }
          return nlohmann::json{{"i", i}};
        },
        [&](int i, bool exclusive, nlohmann::json line, std::string, double) {
          EXPECT_EQ(exclusive, i % 3 == 0);
          EXPECT_EQ(line["i"], i);
          std::lock_guard<std::mutex> lock(mu);
          EXPECT_TRUE(done.insert(i).second);
        });
    for (int i = 0; i < 60; ++i) pool.Submit(i, i % 3 == 0);
    pool.Close();
    pool.Join();
  }
  EXPECT_EQ(done.size(), 60u);
  EXPECT_EQ(max_in_lane.load(), 1);
}

std::string TempPath(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("hetplan_ledger_test_" + std::to_string(getpid()));
  fs::create_directories(d);
  const fs::path p = d / name;
  fs::remove(p);
  return p.string();
}

TEST(ResultsFile, ASecondSweepOnTheSameFileIsRefusedWhileTheFirstRuns) {
  const std::string path = TempPath("locked.jsonl");
  {
    auto first = ResultsFile::Open(path, false);
    ASSERT_TRUE(first.ok()) << first.status().message();
    ASSERT_TRUE(first->Append(R"({"key":"a","status":"optimal"})").ok());
    auto second = ResultsFile::Open(path, true);
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.status().message().find("locked by another running sweep"), std::string::npos)
        << second.status().message();
    EXPECT_NE(second.status().message().find(std::to_string(getpid())), std::string::npos)
        << "names the holder: " << second.status().message();
  }  // the first closes: the lock is released
  auto third = ResultsFile::Open(path, true);
  ASSERT_TRUE(third.ok()) << third.status().message();
  EXPECT_EQ(third->done_keys(), (std::set<std::string>{"a"}));
  fs::remove_all(fs::path(path).parent_path());
}

TEST(ResultsFile, AFailedStartLeavesNoFileBehind) {
  const std::string path = TempPath("fresh.jsonl");
  {
    auto f = ResultsFile::Open(path, false);
    ASSERT_TRUE(f.ok());
    EXPECT_TRUE(fs::exists(path));
    f->DiscardIfCreated();
  }
  EXPECT_FALSE(fs::exists(path));
  // A file that was there before is never removed.
  std::ofstream(path) << "";
  {
    auto f = ResultsFile::Open(path, false);
    ASSERT_TRUE(f.ok());
    f->DiscardIfCreated();
  }
  EXPECT_TRUE(fs::exists(path));
  fs::remove_all(fs::path(path).parent_path());
}

TEST(EstimatedSeconds, OrdersPointsBySolverFamilyAndModelSize) {
  DseSpec spec;
  spec.solve.time_limit_s = 10;
  auto est = [&](const std::string& solver, int ops) {
    DsePoint pt;
    pt.solver = solver;
    return EstimatedSeconds(spec, pt, ops);
  };
  EXPECT_GT(est("exact", 200), est("exact", 50));
  EXPECT_GT(est("exact", 200), est("greedy", 200));
  EXPECT_GT(est("mip", 100), est("exact", 100));
  EXPECT_LE(est("mip", 5000), 10.0);  // capped by the time limit
  EXPECT_GT(est("pair:map", 100), est("map", 100));
}

}  // namespace
}  // namespace hetplan::dse
