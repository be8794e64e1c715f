// Threads pinned to a PU's cores, ORT's intra-op threads pinned with them,
// and the provider check. Runs on one core (every pin is to a core this
// process has) and checks more on two.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testing/expect.h"
#include "hetplan/cost/profiler.h"
#include "hetplan/platform/platform.h"
#include "ort/pinning.h"
#include "ort/session.h"
#include "testing/helpers.h"

namespace hetplan {
namespace {

// "Cpus_allowed_list" of every thread of this process, by thread id.
std::map<int, std::string> ThreadAffinities() {
  std::map<int, std::string> out;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(std::string("/proc/self/task/") + e->d_name + "/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0) {
        std::string v = line.substr(line.find(':') + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        out[std::stoi(e->d_name)] = v;
      }
    }
  }
  closedir(dir);
  return out;
}

TEST(Pinning, AWorkerRunsOnlyOnItsCores) {
  const std::vector<int>& cores = ort::AvailableCores();
  ASSERT_FALSE(cores.empty());
  const int last = cores.back();
  auto worker = ort::PinnedWorker::Start({last});
  ASSERT_TRUE(worker.ok()) << worker.status().message();
  std::vector<int> affinity;
  std::set<int> ran_on;
  (*worker)->Call([&] {
    affinity = ort::CurrentThreadCores();
    volatile double x = 0;
    for (int i = 0; i < 2000000; ++i) {
      x = x + 1.0;
      if (i % 100000 == 0) ran_on.insert(ort::CurrentCpu());
    }
  });
  EXPECT_EQ(affinity, std::vector<int>{last});
  EXPECT_EQ(ran_on, std::set<int>{last});
  // The caller's own affinity is untouched.
  EXPECT_EQ(ort::CurrentThreadCores(), cores);
}

TEST(Pinning, RunPinnedLeavesTheCallerAlone) {
  const std::vector<int>& cores = ort::AvailableCores();
  std::vector<int> inside;
  ASSERT_TRUE(ort::RunPinned({cores.front()}, [&] { inside = ort::CurrentThreadCores(); }).ok());
  EXPECT_EQ(inside, std::vector<int>{cores.front()});
  EXPECT_EQ(ort::CurrentThreadCores(), cores);
}

TEST(Pinning, ACoreThisMachineLacksIsAnErrorNamingIt) {
  Status st = ort::CheckCores({0, 4000}, "p.yaml: pus[1] (cpu1).cores");
  ASSERT_FALSE(st.ok());
  EXPECT_HAS(st.message(), "p.yaml: pus[1] (cpu1).cores: core 4000 is not available");
  auto worker = ort::PinnedWorker::Start({4000});
  EXPECT_FALSE(worker.ok());
}

// ORT pins its intra-op pool threads to cores[1], cores[2], ... (the
// session option takes 1-based processor ids; an off-by-one would pin them
// to the wrong core or fail).
TEST(Pinning, OrtPoolThreadsGoToTheirCores) {
  const std::vector<int>& cores = ort::AvailableCores();
  if (cores.size() < 2) GTEST_SKIP() << "needs two cores";
  onnx::ModelProto m = test_util::NewModel("relu");
  auto* g = m.mutable_graph();
  test_util::AddTensor(g->add_input(), "x", {4, 4});
  test_util::AddTensor(g->add_output(), "y", {4, 4});
  test_util::AddNode(g, "Relu", {"x"}, {"y"}, "relu");
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  auto env = ort::SharedEnv();
  ASSERT_TRUE(env.ok());
  const std::vector<int> pu_cores = {cores[0], cores[1]};
  const auto before = ThreadAffinities();
  std::unique_ptr<ort::Runner> runner;
  ASSERT_TRUE(ort::RunPinned(pu_cores, [&] {
                auto so = ort::MakePuSessionOptions({"cpu", {}, 2, pu_cores}, "basic");
                ASSERT_TRUE(so.ok()) << so.status().message();
                auto r = ort::Runner::Create(**env, bytes, *so, 1);
                ASSERT_TRUE(r.ok()) << r.status().message();
                runner = std::move(r).value();
              }).ok());
  // A pool thread pins itself once it runs: until then it has its creator's
  // cores (both). Read its affinity after a run, and give it up to 2 s.
  runner->Run();
  std::vector<std::string> fresh;
  for (int attempt = 0; attempt < 200; ++attempt) {
    fresh.clear();
    for (const auto& [tid, list] : ThreadAffinities()) {
      if (!before.count(tid)) fresh.push_back(list);
    }
    if (fresh.size() == 1 && fresh[0] == std::to_string(cores[1])) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(fresh.size(), 1u) << "one pool thread for two intra-op threads";
  EXPECT_EQ(fresh[0], std::to_string(cores[1]));
}

TEST(Pinning, AMissingProviderIsOneLineListingTheAvailableOnes) {
  const std::vector<std::string> available = ort::AvailableProviders();
  ASSERT_FALSE(available.empty());
  EXPECT_TRUE(ort::CheckProvider("cpu", "x").ok());
  if (std::find(available.begin(), available.end(), "CUDAExecutionProvider") != available.end()) {
    GTEST_SKIP() << "this ONNX Runtime has CUDA";
  }
  auto p = LoadPlatform("cpu-cuda-example");
  ASSERT_TRUE(p.ok());
  const ProcessingUnit& gpu = p->pus[static_cast<size_t>(p->FindPu("gpu"))];
  Status st = CheckPuRuntime(gpu, "cpu-cuda-example.yaml: pus[1] (gpu)");
  ASSERT_FALSE(st.ok());
  const std::string& msg = st.message();
  EXPECT_HAS(msg, "cpu-cuda-example.yaml: pus[1] (gpu).provider");
  EXPECT_HAS(msg, "'cuda' (CUDAExecutionProvider) is not in this ONNX Runtime");
  for (const std::string& name : available) EXPECT_HAS(msg, name);
  EXPECT_EQ(msg.find('\n'), std::string::npos);
  // Making session options for it fails the same way, never by an exception.
  auto so = ort::MakePuSessionOptions({"cuda", {{"device_id", "0"}}, 1, {}}, "basic");
  EXPECT_FALSE(so.ok());
}

TEST(Pinning, GenerationsHandOffBetweenPinnedThreads) {
  const std::vector<int>& cores = ort::AvailableCores();
  auto a = ort::PinnedWorker::Start({cores.front()});
  auto b = ort::PinnedWorker::Start({cores.back()});
  ASSERT_TRUE(a.ok() && b.ok());
  ort::Generation ping, pong;
  int seen = 0;
  (*b)->Post([&] {
    for (int i = 1; i <= 100; ++i) {
      ping.WaitFor(i);
      ++seen;
      pong.Raise(i);
    }
  });
  (*a)->Call([&] {
    for (int i = 1; i <= 100; ++i) {
      ping.Raise(i);
      pong.WaitFor(i);
    }
  });
  (*b)->Drain();
  EXPECT_EQ(seen, 100);
}

}  // namespace
}  // namespace hetplan
