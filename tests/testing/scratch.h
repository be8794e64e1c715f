// A per-process scratch folder for tests that write files (results files,
// schedules, logs), removed when the test binary ends; a folder per test;
// reading back what a test wrote; and the profile cache that the dse tests
// share (keyed by content, so every test process, ctest running each test
// alone, can use one).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace hetplan::test_util {

// <temp>/<prefix><pid>, created on first use; one per test binary (the first
// call's prefix names it).
inline const std::filesystem::path& ScratchDir(const std::string& prefix) {
  static const std::filesystem::path dir = [&] {
    std::filesystem::path d = std::filesystem::temp_directory_path() / (prefix + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Removes `dir` at exit (register with ::testing::AddGlobalTestEnvironment).
class RemoveAtExit : public ::testing::Environment {
 public:
  explicit RemoveAtExit(std::filesystem::path dir) : dir_(std::move(dir)) {}
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

 private:
  std::filesystem::path dir_;
};

// `dir`/`name`, with whatever a previous test left there removed.
inline std::string FreshPath(const std::filesystem::path& dir, const std::string& name) {
  const std::filesystem::path p = dir / name;
  std::filesystem::remove_all(p);
  return p.string();
}

// <temp>/<prefix><name>_<pid>, emptied: one folder per test case.
inline std::filesystem::path FreshDir(const std::string& prefix, const std::string& name) {
  std::filesystem::path d = std::filesystem::temp_directory_path() / (prefix + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// <temp>/hetplan_test_<name>_<pid>, emptied: a test's own folder (the pid
// keeps apart the test processes that ctest runs at the same time).
inline std::filesystem::path TempDir(const std::string& name) { return FreshDir("hetplan_test_", name); }

// A JSON file's value (throws when it is not JSON).
inline nlohmann::json ReadJson(const std::filesystem::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f);
}

// A file's whole text ("" when it cannot be read).
inline std::string Slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A fixture whose dir_ is an empty folder of its own for each test, removed
// after it: <temp>/<prefix><pid>_<test name>.
class TestWithDir : public ::testing::Test {
 protected:
  explicit TestWithDir(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = FreshDir(prefix_, ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

inline std::string DseTestCacheDir() {
  return (std::filesystem::temp_directory_path() / "hetplan_dse_test_cache").string();
}

}  // namespace hetplan::test_util
