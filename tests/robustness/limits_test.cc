// Limits through the real binary: a model over the operator limit or the
// tensor-size limit, and a solver call over its time limit, end with a clear
// message and never an out-of-memory kill; reading a model never opens
// external data the planner does not need (checked with FIFOs: opening one
// for reading blocks until a writer comes, so a read would hang the run and
// trip its timeout — no strace needed).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/stat.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "robustness/run_binary.h"

namespace hetplan::testing {
namespace {

namespace fs = std::filesystem;

// ASan reserves terabytes of address space: an RLIMIT_AS cap only works on a plain build.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

class Limits : public CorpusSuite {};

void ExpectOneLineError(const RunResult& r, const std::vector<std::string>& words) {
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.signal, 0) << r.err;
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 70) << r.err;
  EXPECT_EQ(r.err.rfind("hetplan: error: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << r.err;
  for (const std::string& w : words) EXPECT_NE(r.err.find(w), std::string::npos) << w << " in " << r.err;
}

TEST_F(Limits, OperatorLimitThroughGraphAndPartition) {
  TempDir out("ops");
  RunResult r = RunHetplan({"graph", File("many_operators.onnx"), "--max-operators", "5", "--json", out / "g.json"});
  ExpectOneLineError(r, {File("many_operators.onnx"), "50 operators", "limit of 5", "raise --max-operators"});
  EXPECT_FALSE(fs::exists(out / "g.json"));
  // The same model passes at its size, and partition honours the option too.
  EXPECT_EQ(RunHetplan({"graph", File("many_operators.onnx"), "--max-operators", "50"}).exit_code, 0);
  r = RunHetplan({"partition", File("wide.onnx"), "--costs", File("wide_costs.csv"), "--max-operators", "10",
                  "--out", out / "s.json"});
  ExpectOneLineError(r, {File("wide.onnx"), "102 operators", "limit of 10"});
  EXPECT_FALSE(fs::exists(out / "s.json"));
}

TEST_F(Limits, ModelFileSizeLimitIsAnOption) {
  TempDir out("size");
  const auto bytes = fs::file_size(File("wide.onnx"));
  ASSERT_GT(bytes, 2048u);
  // 0.001 MiB = 1048 bytes: the file is refused before it is parsed.
  RunResult r = RunHetplan({"graph", File("wide.onnx"), "--max-model-mib", "0.001", "--json", out / "g.json"});
  ExpectOneLineError(r, {File("wide.onnx"), std::to_string(bytes) + " bytes", "limit of 1048", "raise --max-model-mib"});
  EXPECT_FALSE(fs::exists(out / "g.json"));
  EXPECT_EQ(RunHetplan({"graph", File("wide.onnx"), "--max-model-mib", "16"}).exit_code, 0);
  EXPECT_NE(RunHetplan({"graph", File("wide.onnx"), "--max-model-mib", "0"}).exit_code, 0);
}

TEST_F(Limits, EnormousTensorsAreRefusedWithoutAllocatingThem) {
  // 2^40 elements declared (4 TiB of float32). With a 2 GiB address-space cap
  // any attempt to materialise them would fail; the run must instead stop at
  // the size check, quickly, with a message naming the tensor.
  RunOptions capped;
  capped.timeout_s = 30;
  if (!kSanitized) capped.address_space_bytes = uint64_t{2} << 30;
  for (const auto& [file, tensor] : {std::pair<std::string, std::string>{"huge_input.onnx", "'x'"},
                                     {"huge_initializer.onnx", "'w'"}}) {
    SCOPED_TRACE(file);
    RunResult r = RunHetplan({"graph", File(file)}, capped);
    ExpectOneLineError(r, {File(file), tensor, "17179869184 elements", "size limit"});
    EXPECT_LT(r.seconds, 10);
  }
  // The cap itself leaves room for a normal run.
  EXPECT_EQ(RunHetplan({"graph", File("tiny.onnx")}, capped).exit_code, 0);
}

TEST_F(Limits, SolverTimeLimitEndsWithAClearOutcome) {
  // wide.onnx takes CBC about two seconds to prove here. With a 0.02 s limit
  // it stops with the warm start as incumbent: a result with its gap, not an
  // error. (A machine fast enough to prove it in time gives "optimal".)
  TempDir out("time");
  std::string schedule = out / "s.json";
  RunResult r = RunHetplan({"partition", File("wide.onnx"), "--costs", File("wide_costs.csv"), "--set",
                            "cim.crossbars=24", "--time-limit", "0.02", "--threads", "1", "--out", schedule});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  auto s = nlohmann::json::parse(ReadText(schedule));
  const std::string status = s["solver"]["status"];
  if (status == "feasible") {
    EXPECT_GT(s["solver"]["gap"].get<double>(), 0.0);
    EXPECT_NE(r.out.find("ilp (paper): feasible, objective"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("gap "), std::string::npos) << r.out;
  } else {
    EXPECT_EQ(status, "optimal");
  }
  EXPECT_LT(r.seconds, 20) << "the time limit was not honoured";
  RunResult v = RunHetplan({"validate", schedule});
  EXPECT_EQ(v.exit_code, 0) << v.out;

  // Without the warm start and 1 ms, CBC has no incumbent: the run says so
  // and writes nothing (exit 3: an outcome, not an error).
  fs::remove(schedule);
  r = RunHetplan({"partition", File("wide.onnx"), "--costs", File("wide_costs.csv"), "--set", "cim.crossbars=24",
                  "--time-limit", "0.001", "--no-warm-start", "--threads", "1", "--out", schedule});
  if (r.exit_code == 3) {
    EXPECT_NE(r.out.find("no schedule (nothing written)"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(schedule));
  } else {
    EXPECT_EQ(r.exit_code, 0) << r.err;  // found one in 1 ms: then it is a valid, written schedule
    EXPECT_EQ(RunHetplan({"validate", schedule}).exit_code, 0);
  }
  EXPECT_EQ(r.signal, 0);

  // A time limit that is not a positive number is refused up front.
  r = RunHetplan({"partition", File("tiny.onnx"), "--costs", File("tiny_costs.csv"), "--time-limit", "0",
                  "--out", schedule});
  ExpectOneLineError(r, {"time limit", "must be > 0"});
}

TEST_F(Limits, ExternalDataIsNeverOpened) {
  // weights.fifo next to the model: `graph` needs shapes, not weights, so it
  // must finish without opening it (an open would block: no writer).
  TempDir models("fifo");
  fs::copy_file(File("external_fifo.onnx"), models / "model.onnx");
  ASSERT_EQ(::mkfifo((models / "weights.fifo").c_str(), 0600), 0);
  RunResult r = RunHetplan({"graph", models / "model.onnx", "--json", models / "g.json"}, WithTimeout(20));
  EXPECT_FALSE(r.timed_out) << "hetplan opened the external data file";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("operators  3"), std::string::npos) << r.out;

  // '../outside.fifo' escapes the model's folder: refused by name, never opened.
  fs::create_directories(models.path / "sub");
  fs::copy_file(File("external_fifo_outside.onnx"), models / "sub/model.onnx");
  ASSERT_EQ(::mkfifo((models / "outside.fifo").c_str(), 0600), 0);
  r = RunHetplan({"graph", models / "sub/model.onnx", "--json", models / "sub/g.json"}, WithTimeout(20));
  EXPECT_FALSE(r.timed_out) << "hetplan opened the out-of-tree external data file";
  ExpectOneLineError(r, {"'../outside.fifo'", "outside the model's folder", "refusing"});
  EXPECT_FALSE(fs::exists(models / "sub/g.json"));
}

// An argument import must read (a Reshape's target in external data) whose
// data file is a symbolic link, to a file outside the model's folder or
// beside it: refused by name as ONNX's checker refuses it, never read.
TEST_F(Limits, ExternalDataThroughASymbolicLinkIsRefused) {
  TempDir models("symlink");
  fs::create_directories(models.path / "model");
  fs::copy_file(File("external_truncated.onnx"), models / "model/model.onnx");
  {
    const int64_t target[2] = {1, 24};  // a valid target for x [1,4,6]: little-endian int64, as ONNX stores it
    std::ofstream secret(models / "secret.bin", std::ios::binary);
    secret.write(reinterpret_cast<const char*>(target), sizeof target);
  }
  fs::create_symlink(models / "secret.bin", models / "model/external_truncated.bin");
  RunResult r = RunHetplan({"graph", models / "model/model.onnx", "--json", models / "g.json"}, WithTimeout(20));
  ExpectOneLineError(r, {"initializer 'target'", "'external_truncated.bin'", "a symbolic link", "refusing"});
  EXPECT_FALSE(fs::exists(models / "g.json"));
  // The same bytes as a file of its own are read.
  fs::remove(models / "model/external_truncated.bin");
  fs::copy_file(models / "secret.bin", models / "model/external_truncated.bin");
  r = RunHetplan({"graph", models / "model/model.onnx"}, WithTimeout(20));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace hetplan::testing
