// Runs the real `hetplan` binary for the robustness tests: separate stdout
// and stderr, the exit status or the signal that ended it, and a timeout
// after which it is killed, so that a hang fails a test instead of hanging
// CI.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace hetplan::testing {

struct RunResult {
  int exit_code = -1;   // when it exited
  int signal = 0;       // when a signal ended it (SIGSEGV, SIGABRT, ... or SIGKILL on timeout)
  bool timed_out = false;
  std::string out, err;  // the first kMaxCaptureBytes of each
  uintmax_t out_bytes = 0, err_bytes = 0;
  double seconds = 0;
};

inline constexpr size_t kMaxCaptureBytes = size_t{4} << 20;

inline std::string ReadCapped(const std::filesystem::path& p, uintmax_t* size) {
  std::error_code ec;
  *size = std::filesystem::file_size(p, ec);
  if (ec) *size = 0;
  std::ifstream f(p, std::ios::binary);
  std::string s(static_cast<size_t>(std::min<uintmax_t>(*size, kMaxCaptureBytes)), '\0');
  f.read(s.data(), static_cast<std::streamsize>(s.size()));
  return s;
}

struct RunOptions {
  double timeout_s = 30;
  std::string cwd;                // run in this folder when given
  std::vector<std::string> env;   // "K=V" entries added to the environment
  uint64_t address_space_bytes = 0;  // RLIMIT_AS when > 0: an allocation past it fails instead of swapping
};

inline RunOptions WithTimeout(double seconds) {
  RunOptions o;
  o.timeout_s = seconds;
  return o;
}

// Runs HETPLAN_BINARY with `args` (no shell).
inline RunResult RunHetplan(const std::vector<std::string>& args, const RunOptions& options = {}) {
  const double timeout_s = options.timeout_s;
  const std::string& cwd = options.cwd;
  const std::vector<std::string>& env = options.env;
  namespace fs = std::filesystem;
  static int counter = 0;
  fs::path base = fs::temp_directory_path() /
                  ("hetplan_run_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::path out_path = base.string() + ".out", err_path = base.string() + ".err";
  RunResult r;
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int in = ::open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || in < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    for (const std::string& kv : env) ::putenv(const_cast<char*>(kv.c_str()));
    if (options.address_space_bytes > 0) {
      struct rlimit limit {options.address_space_bytes, options.address_space_bytes};
      if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(126);
    }
    std::vector<char*> argv;
    std::string bin = HETPLAN_BINARY;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  if (pid > 0) {
    for (;;) {
      pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (w < 0) break;
      if (elapsed > timeout_s) {
        r.timed_out = true;
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.out = ReadCapped(out_path, &r.out_bytes);
  r.err = ReadCapped(err_path, &r.err_bytes);
  std::error_code ec;
  fs::remove(out_path, ec);
  fs::remove(err_path, ec);
  return r;
}

// A fresh folder under the system temp dir, removed when it goes out of scope.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name) {
    path = std::filesystem::temp_directory_path() /
           ("hetplan_robust_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

// Runs tests/bad_inputs/make_corpus.py into `dir`; "" on success, else why not.
inline std::string MakeCorpus(const std::filesystem::path& dir, bool big) {
  std::string cmd = std::string("/usr/bin/python3 ") + HETPLAN_TEST_DATA_DIR +
                    "/bad_inputs/make_corpus.py --out '" + dir.string() + "'" + (big ? " --big" : "") +
                    " >/dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  return rc == 0 ? "" : "make_corpus.py failed (exit " + std::to_string(rc) + "): " + cmd;
}

// A test suite that works on a freshly generated bad-input corpus, written
// once per suite into a temporary folder (and removed after it).
class CorpusSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("corpus");
    error_ = new std::string(MakeCorpus(dir_->path, /*big=*/false));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete error_;
    dir_ = nullptr;
    error_ = nullptr;
  }
  void SetUp() override { ASSERT_EQ(*error_, ""); }
  // A file of the corpus.
  static std::string File(const std::string& name) { return (dir_->path / name).string(); }

  static inline TempDir* dir_ = nullptr;
  static inline std::string* error_ = nullptr;
};

inline std::string ReadText(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace hetplan::testing
