// `hetplan dse` under mpirun on this machine (docs/dse.md#mpi), with 2 and 3
// ranks (--oversubscribe: there are 2 cores): the same results as one
// process; a job killed mid-sweep and resumed gives every point once; a
// worker killed or stopped mid-point is reported with the points it held and
// the sweep resumes; a locked results file, ranks with other arguments and a
// model missing on a rank each give one error line.
//
// Every process a test starts carries HETPLAN_TEST_MARK in its environment,
// so that a test finds its ranks (and kills what is left of them) by pid.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hetplan/dse/dse.h"
#include "hetplan/dse/mpi.h"
#include "hetplan/validate/validator.h"
#include "testing/scratch.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::string kZoo = HETPLAN_ZOO_DIR;
const std::string kResnet18 = kZoo + "/resnet18.onnx";
const std::string kMobilenet = kZoo + "/mobilenetv2.onnx";
const std::string kYolo = kZoo + "/yolov5n.onnx";  // its exact points take long enough to be killed mid-point

const fs::path& TempDir() { return test_util::ScratchDir("hetplan_mpirun_test_"); }
[[maybe_unused]] ::testing::Environment* const kCleanUp =
    ::testing::AddGlobalTestEnvironment(new test_util::RemoveAtExit(TempDir()));
std::string CacheDir() { return test_util::DseTestCacheDir(); }
std::string Fresh(const std::string& name) { return test_util::FreshPath(TempDir(), name); }

std::string Slurp(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

int CountOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// The environment of process `pid` as NAME=VALUE strings.
std::vector<std::string> Environ(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::vector<std::string> out;
  for (std::string e; std::getline(in, e, '\0');) out.push_back(e);
  return out;
}

// Processes carrying `mark` (and, when given, OMPI_COMM_WORLD_RANK=rank).
std::vector<pid_t> Marked(const std::string& mark, int rank = -1) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (pid == getpid()) continue;
    const std::vector<std::string> env = Environ(pid);
    const bool marked = std::find(env.begin(), env.end(), "HETPLAN_TEST_MARK=" + mark) != env.end();
    const bool ranked =
        rank < 0 || std::find(env.begin(), env.end(), "OMPI_COMM_WORLD_RANK=" + std::to_string(rank)) != env.end();
    if (marked && ranked) out.push_back(pid);
  }
  return out;
}

// A command started in its own session, output to `log`.
struct Job {
  pid_t pid = -1;
  std::string mark, log;
  int status = -1;

  bool Running() {
    if (status != -1) return false;
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) == pid) {
      status = st;
      return false;
    }
    return true;
  }
  // Waits up to `seconds`; then kills everything it started.
  int Wait(double seconds) {
    const auto t0 = Clock::now();
    while (Running() && std::chrono::duration<double>(Clock::now() - t0).count() < seconds) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (Running()) {
      ADD_FAILURE() << "still running after " << seconds << " s: " << Slurp(log);
      KillAll();
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  void KillAll() {
    for (pid_t p : Marked(mark)) kill(p, SIGKILL);
    if (Running()) kill(pid, SIGKILL);
    if (status == -1) {
      int st = 0;
      waitpid(pid, &st, 0);
      status = st;
    }
    // The ranks are not our children; wait until they are gone.
    const auto t0 = Clock::now();
    while (!Marked(mark).empty() && std::chrono::duration<double>(Clock::now() - t0).count() < 10) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~Job() {
    if (pid > 0) KillAll();
  }
};

std::vector<std::string> MpirunArgs(int ranks, const std::vector<std::string>& launcher_flags = {}) {
  std::vector<std::string> a = {HETPLAN_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-n",
                                std::to_string(ranks)};
  a.insert(a.end(), launcher_flags.begin(), launcher_flags.end());
  return a;
}

std::unique_ptr<Job> Start(const std::vector<std::string>& argv, const std::string& name,
                           const std::map<std::string, std::string>& env = {}) {
  auto job = std::make_unique<Job>();
  job->mark = std::to_string(getpid()) + "-" + name;
  job->log = (TempDir() / (name + ".log")).string();
  const pid_t pid = fork();
  if (pid == 0) {
    setsid();
    const int fd = open(job->log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    setenv("HETPLAN_TEST_MARK", job->mark.c_str(), 1);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  job->pid = pid;
  return job;
}

std::vector<std::string> DseArgs(const std::vector<std::string>& models, const std::vector<std::string>& sweeps,
                                 const std::string& solvers, const std::string& out) {
  std::vector<std::string> a = {HETPLAN_BINARY, "dse"};
  a.insert(a.end(), models.begin(), models.end());
  a.insert(a.end(), {"--platform", "klein-arm"});
  for (const std::string& s : sweeps) a.insert(a.end(), {"--sweep", s});
  a.insert(a.end(), {"--solvers", solvers, "--warmup", "2", "--runs", "5", "--cache-dir", CacheDir(), "--out", out});
  return a;
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

bool Usable() {
  return BuiltWithMpi() && fs::exists(HETPLAN_MPIEXEC) && fs::exists(kResnet18) && fs::exists(kMobilenet) &&
         fs::exists(kYolo);
}
#define REQUIRE_MPI() \
  if (!Usable()) GTEST_SKIP() << "needs a build with MPI, " HETPLAN_MPIEXEC " and the zoo"

// The line without what may differ between runs: times and where it ran.
nlohmann::json Comparable(nlohmann::json line) {
  for (const char* f : {"wall_s", "finished_at", "seconds", "host", "rank", "host_cpu", "schedule_file"}) {
    line.erase(f);
  }
  return line;
}

std::map<std::string, nlohmann::json> ByKey(const std::string& path) {
  std::map<std::string, nlohmann::json> out;
  for (const std::string& l : Lines(path)) {
    nlohmann::json j = nlohmann::json::parse(l);
    EXPECT_TRUE(out.emplace(j["key"].get<std::string>(), j).second) << "twice: " << j["key"];
  }
  return out;
}

const std::vector<std::string> kSmallSweep = {"cim.crossbars=25,100", "cim.mvm_latency_ns=50,1000"};
const std::string kSmallSolvers = "exact,greedy,type_policy,best_single";
// With YOLOv5n and ResNet-18, exact: 32 points, YOLOv5n's (0.1-0.5 s each) first.
const std::vector<std::string> kLongSweep = {"cim.crossbars=25,50,100,200", "cim.mvm_latency_ns=50,100,500,1000"};
constexpr size_t kLongPoints = 32;

// Profiles both models once (the shared cache), so that timing-sensitive
// tests start among the points.
void WarmCache() {
  static bool done = false;
  if (done) return;
  const std::string out = Fresh("warm.jsonl");
  auto job = Start(DseArgs({kResnet18, kMobilenet, kYolo}, {"cim.crossbars=100"}, "greedy", out), "warm");
  ASSERT_EQ(job->Wait(600), 0) << Slurp(job->log);
  done = true;
}

TEST(Mpirun, TwoAndThreeRanksWriteWhatOneProcessWrites) {
  REQUIRE_MPI();
  WarmCache();
  const std::string one = Fresh("one.jsonl");
  auto j1 = Start(DseArgs({kResnet18, kMobilenet}, kSmallSweep, kSmallSolvers, one), "one");
  ASSERT_EQ(j1->Wait(300), 0) << Slurp(j1->log);
  const auto base = ByKey(one);
  ASSERT_EQ(base.size(), 32u);

  for (int ranks : {2, 3}) {
    SCOPED_TRACE(ranks);
    const std::string out = Fresh("ranks" + std::to_string(ranks) + ".jsonl");
    const std::string schedules = Fresh("schedules" + std::to_string(ranks));
    auto j = Start(Concat(MpirunArgs(ranks), Concat(DseArgs({kResnet18, kMobilenet}, kSmallSweep, kSmallSolvers, out),
                                                    {"--schedules", schedules})),
                   "ranks" + std::to_string(ranks));
    ASSERT_EQ(j->Wait(300), 0) << Slurp(j->log);
    const std::string log = Slurp(j->log);
    EXPECT_NE(log.find("points    32 (32 run now"), std::string::npos) << log;
    EXPECT_NE(log.find(fmt::format("ranks     {} (MPI)", ranks)), std::string::npos) << log;
    EXPECT_EQ(log.find("error"), std::string::npos) << log;
    const auto got = ByKey(out);
    ASSERT_EQ(got.size(), base.size());
    std::set<int> ranks_used;
    for (const auto& [key, line] : got) {
      ASSERT_TRUE(base.contains(key)) << key;
      EXPECT_EQ(Comparable(line), Comparable(base.at(key))) << key;
      EXPECT_EQ(line["host_cpu"], base.at(key)["host_cpu"]);  // the costs' host: rank 0's
      ranks_used.insert(line["rank"].get<int>());
      // Every schedule, whichever rank computed it, written by rank 0 and valid.
      if (line.contains("schedule_file")) {
        auto v = ValidateScheduleFile(line["schedule_file"].get<std::string>());
        ASSERT_TRUE(v.ok()) << v.status().message();
        EXPECT_TRUE(v->ok()) << line["schedule_file"];
      }
    }
    EXPECT_EQ(static_cast<int>(ranks_used.size()), ranks) << "every rank ran points";
  }
}

TEST(Mpirun, AJobKilledMidSweepResumesWithEveryPointOnce) {
  REQUIRE_MPI();
  WarmCache();
  const std::string out = Fresh("killed.jsonl");
  const std::vector<std::string> dse = DseArgs({kYolo, kResnet18}, kLongSweep, "exact", out);
  auto j = Start(Concat(MpirunArgs(3), dse), "killed");
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < deadline && Lines(out).size() < 5 && j->Running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  j->KillAll();  // every process of the job, SIGKILL, at once
  const std::vector<std::string> before = Lines(out);
  ASSERT_GE(before.size(), 5u) << Slurp(j->log);
  ASSERT_LT(before.size(), kLongPoints) << "the sweep finished before it could be killed";

  auto r = Start(Concat(MpirunArgs(2), Concat(dse, {"--resume"})), "resumed");
  ASSERT_EQ(r->Wait(300), 0) << Slurp(r->log);
  const std::vector<std::string> after = Lines(out);
  ASSERT_EQ(after.size(), kLongPoints) << Slurp(r->log);
  size_t whole = 0;
  for (const std::string& l : before) {
    if (!nlohmann::json::parse(l, nullptr, false).is_discarded()) {
      EXPECT_EQ(after[whole++], l);
    }
  }
  EXPECT_EQ(ByKey(out).size(), kLongPoints);  // ByKey fails on a key written twice
}

// The point descriptions rank 0 reported for rank `rank` ("… not written: a; b").
std::vector<std::string> ReportedFor(const std::string& log, int rank) {
  std::vector<std::string> out;
  std::istringstream in(log);
  for (std::string l; std::getline(in, l);) {
    if (l.find("hetplan: dse: rank " + std::to_string(rank) + " ") != 0) continue;
    const size_t p = l.find("not written: ");
    if (p == std::string::npos) continue;
    std::istringstream items(l.substr(p + 13));
    for (std::string item; std::getline(items, item, ';');) {
      while (!item.empty() && item.front() == ' ') item.erase(item.begin());
      out.push_back(item);
    }
  }
  return out;
}

// The same text as rank 0's Describe for a line: "model platform overrides solver".
std::set<std::string> Described(const std::string& path) {
  std::set<std::string> out;
  for (const std::string& l : Lines(path)) {
    const nlohmann::json j = nlohmann::json::parse(l);
    std::string d = j["model"].get<std::string>() + " " + j["platform"].get<std::string>();
    for (const auto& o : j["overrides"]) d += " " + o.get<std::string>();
    out.insert(d + " " + j["solver"].get<std::string>());
  }
  return out;
}

// Waits until rank `rank` of `mark` exists and `out` has `lines` lines.
pid_t WaitForRank(Job& j, const std::string& out, int rank, size_t lines) {
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < deadline && j.Running()) {
    const std::vector<pid_t> p = Marked(j.mark, rank);
    if (p.size() == 1 && Lines(out).size() >= lines) return p[0];
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

// The rest of the sweep, as one process.
void ExpectResumeCompletes(const std::vector<std::string>& dse, const std::string& out, size_t points) {
  auto r = Start(Concat(dse, {"--resume"}), "resume-after");
  ASSERT_EQ(r->Wait(300), 0) << Slurp(r->log);
  EXPECT_EQ(ByKey(out).size(), points);
}

TEST(Mpirun, AWorkerKilledMidPointIsReportedWithThePointsItHeld) {
  REQUIRE_MPI();
  WarmCache();
  const std::string out = Fresh("worker_killed.jsonl");
  const std::vector<std::string> dse = DseArgs({kYolo, kResnet18}, kLongSweep, "exact", out);
  // Open MPI's default: a rank that dies takes the job down; rank 0 gets
  // SIGTERM and has about a second to say which points were in flight.
  auto j = Start(Concat(MpirunArgs(3), dse), "worker_killed");
  const pid_t victim = WaitForRank(*j, out, 1, 3);
  ASSERT_GT(victim, 0) << Slurp(j->log);
  kill(victim, SIGKILL);
  EXPECT_NE(j->Wait(60), 0);
  const std::string log = Slurp(j->log);
  const std::vector<std::string> held = ReportedFor(log, 1);
  ASSERT_FALSE(held.empty()) << log;
  EXPECT_NE(log.find("held these points when the job was ended by signal 15"), std::string::npos) << log;
  EXPECT_EQ(CountOf(log, "hetplan: error: "), 1) << log;
  EXPECT_NE(log.find("rerun the same command with --resume"), std::string::npos) << log;
  const std::set<std::string> written = Described(out);
  for (const std::string& p : held) EXPECT_FALSE(written.contains(p)) << p << " was reported and written";
  ExpectResumeCompletes(dse, out, kLongPoints);
}

TEST(Mpirun, WithRecoveryTheOtherRanksFinishTheSweep) {
  REQUIRE_MPI();
  WarmCache();
  const std::string out = Fresh("recovery.jsonl");
  const std::vector<std::string> dse = DseArgs({kYolo, kResnet18}, kLongSweep, "exact", out);
  auto j = Start(Concat(MpirunArgs(3, {"--enable-recovery"}), dse), "recovery", {{"HETPLAN_DSE_SILENCE_S", "5"}});
  const pid_t victim = WaitForRank(*j, out, 2, 3);
  ASSERT_GT(victim, 0) << Slurp(j->log);
  kill(victim, SIGKILL);
  j->Wait(120);
  const std::string log = Slurp(j->log);
  EXPECT_NE(log.find("hetplan: dse: rank 2 (host"), std::string::npos) << log;
  EXPECT_NE(log.find("sent nothing (no result, no heartbeat) for"), std::string::npos) << log;
  const std::vector<std::string> held = ReportedFor(log, 2);
  ASSERT_FALSE(held.empty()) << log;
  // Everything but what rank 2 held was run by ranks 0 and 1.
  EXPECT_EQ(ByKey(out).size() + held.size(), kLongPoints) << log;
  ExpectResumeCompletes(dse, out, kLongPoints);
}

TEST(Mpirun, AStoppedWorkerIsReportedAndTheSweepEnds) {
  REQUIRE_MPI();
  WarmCache();
  const std::string out = Fresh("stopped.jsonl");
  const std::vector<std::string> dse = DseArgs({kYolo, kResnet18}, kLongSweep, "exact", out);
  auto j = Start(Concat(MpirunArgs(3), dse), "stopped", {{"HETPLAN_DSE_SILENCE_S", "5"}});
  const pid_t victim = WaitForRank(*j, out, 1, 3);
  ASSERT_GT(victim, 0) << Slurp(j->log);
  kill(victim, SIGSTOP);  // alive, but answers nothing: a hung node
  EXPECT_EQ(j->Wait(120), 1);  // rank 0 ended the job (MPI_Abort) with its exit code
  const std::string log = Slurp(j->log);
  const std::vector<std::string> held = ReportedFor(log, 1);
  ASSERT_FALSE(held.empty()) << log;
  // Continued by mpirun to be ended, the stopped rank must not blame rank 0.
  EXPECT_EQ(CountOf(log, "hetplan: error: "), 1) << log;
  EXPECT_NE(log.find("sent nothing (no result, no heartbeat) for"), std::string::npos) << log;
  EXPECT_EQ(ByKey(out).size() + held.size(), kLongPoints) << log;
  EXPECT_NE(log.find("points    32"), std::string::npos) << log;  // rank 0 printed its summary
  kill(victim, SIGCONT);
  j->KillAll();
  ExpectResumeCompletes(dse, out, kLongPoints);
}

// One line on stderr starting "hetplan: error: ", containing every word.
void ExpectOneErrorLine(const std::string& log, const std::vector<std::string>& words) {
  EXPECT_EQ(CountOf(log, "hetplan: error: "), 1) << log;
  const size_t p = log.find("hetplan: error: ");
  ASSERT_NE(p, std::string::npos) << log;
  const std::string line = log.substr(p, log.find('\n', p) - p);
  for (const std::string& w : words) EXPECT_NE(line.find(w), std::string::npos) << w << " in " << line;
}

TEST(Mpirun, ALockedResultsFileIsRefused) {
  REQUIRE_MPI();
  const std::string out = Fresh("locked.jsonl");
  std::ofstream(out) << R"({"key":"k","status":"optimal"})" << "\n";
  const int fd = open(out.c_str(), O_RDONLY);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);  // as a running sweep holds it
  const std::vector<std::string> dse = Concat(DseArgs({kResnet18}, kSmallSweep, "greedy", out), {"--resume"});
  for (int ranks : {1, 2}) {
    auto j = ranks == 1 ? Start(dse, "locked1") : Start(Concat(MpirunArgs(ranks), dse), "locked2");
    EXPECT_NE(j->Wait(60), 0);
    ExpectOneErrorLine(Slurp(j->log), {out, "locked by another running sweep", std::to_string(getpid())});
  }
  close(fd);
  EXPECT_EQ(Lines(out).size(), 1u);
}

TEST(Mpirun, RanksWithOtherArgumentsAreRefused) {
  REQUIRE_MPI();
  const std::string out = Fresh("args.jsonl");
  // MPMD: rank 0 and rank 1 run different command lines.
  std::vector<std::string> argv = MpirunArgs(1);
  argv = Concat(argv, DseArgs({kResnet18}, kSmallSweep, "greedy", out));
  argv = Concat(argv, {":", "-n", "1"});
  argv = Concat(argv, DseArgs({kResnet18}, kSmallSweep, "exact", out));
  auto j = Start(argv, "args");
  EXPECT_NE(j->Wait(60), 0);
  ExpectOneErrorLine(Slurp(j->log), {"rank 1 (host", "other arguments than rank 0", "exact", "greedy"});
  EXPECT_FALSE(fs::exists(out));
}

TEST(Mpirun, AModelMissingOnARankIsRefused) {
  REQUIRE_MPI();
  // The same relative path, from two working folders: only rank 0's has it.
  const fs::path here = Fresh("with_model"), there = Fresh("without_model");
  fs::create_directories(here);
  fs::create_directories(there);
  fs::copy_file(kResnet18, here / "net.onnx");
  const std::string out = Fresh("missing.jsonl");
  const std::vector<std::string> dse = DseArgs({"net.onnx"}, kSmallSweep, "greedy", out);
  std::vector<std::string> argv = Concat(MpirunArgs(1), {"-wdir", here.string()});
  argv = Concat(argv, dse);
  argv = Concat(argv, {":", "-n", "1", "-wdir", there.string()});
  argv = Concat(argv, dse);
  auto j = Start(argv, "missing");
  EXPECT_NE(j->Wait(60), 0);
  ExpectOneErrorLine(Slurp(j->log),
                     {"rank 1 (host", there.string(), "net.onnx: no such file on that rank's file system"});
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace hetplan
