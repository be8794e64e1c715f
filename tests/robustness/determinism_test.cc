// Determinism (docs/schedule-format.md): the same inputs and options give
// byte-identical schedule files whatever the thread count, except the wall
// time in solver.seconds. Checked through the real binary for the ILP
// (`partition`, CBC with 1, 2 and 4 threads, costs measured once with ONNX
// Runtime and then read from the profile cache) and for the shortest-path
// modes (`map`).
#include <filesystem>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "robustness/run_binary.h"

namespace hetplan::testing {
namespace {

namespace fs = std::filesystem;

class Determinism : public CorpusSuite {
 protected:
  // Runs `args` + --out FILE and returns the file with solver.seconds blanked.
  static std::string Schedule(std::vector<std::string> args, const std::string& out) {
    args.push_back("--out");
    args.push_back(out);
    RunResult r = RunHetplan(args, WithTimeout(120));
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    std::string text = ReadText(out);
    EXPECT_FALSE(text.empty());
    // The one field the docs allow to differ: a number after "seconds".
    static const std::regex kSeconds(R"("seconds": *[-+0-9.eE]+)");
    // Exactly one such field (solver.seconds): anything else that varies must fail the comparison.
    EXPECT_EQ(std::distance(std::sregex_iterator(text.begin(), text.end(), kSeconds), std::sregex_iterator()), 1)
        << out;
    std::string blanked = std::regex_replace(text, kSeconds, R"("seconds": 0)");
    return blanked;
  }
};

void ExpectSameBytes(const std::string& a, const std::string& b, const std::string& what) {
  if (a == b) return;
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  size_t from = i < 80 ? 0 : i - 80;
  ADD_FAILURE() << what << ": the schedule files differ at byte " << i << ":\n  " << a.substr(from, 160)
                << "\nvs\n  " << b.substr(from, 160);
}

TEST_F(Determinism, PartitionIsByteIdenticalWhateverTheThreadCount) {
  // klein-arm: the CPU is profiled (cheaply) by ONNX Runtime, the CIM is
  // analytical. The first run measures and fills the cache; the others read it.
  TempDir out("partition");
  std::vector<std::string> base = {"partition", File("branchy.onnx"), "--warmup", "2", "--runs", "5",
                                   "--cache-dir", out / "cache"};
  auto with = [&](std::initializer_list<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra);
    return a;
  };
  std::string first = Schedule(with({"--threads", "1"}), out / "t1.json");
  std::string two = Schedule(with({"--threads", "2"}), out / "t2.json");
  std::string again = Schedule(with({"--threads", "1"}), out / "t1b.json");
  ExpectSameBytes(first, two, "--threads 1 vs --threads 2");
  ExpectSameBytes(first, again, "--threads 1, measured vs cached");
  EXPECT_NE(first.find("\"status\": \"optimal\""), std::string::npos);
}

TEST_F(Determinism, PartitionOfALargerIlpIsByteIdenticalWhateverTheThreadCount) {
  // wide.onnx: 102 operators, ~5000 variables in the paper's MIP; CBC
  // branches, so thread count could change the order it finds optima of
  // equal cost in. Both formulations: the exact search (the default, which
  // hands this graph to CBC when its node budget runs out) and the paper's.
  TempDir out("wide");
  for (const char* formulation : {"strong", "paper"}) {
    SCOPED_TRACE(formulation);
    std::vector<std::string> base = {"partition", File("wide.onnx"), "--costs", File("wide_costs.csv"), "--set",
                                     "cim.crossbars=24", "--formulation", formulation, "--threads"};
    const std::string stem = out / formulation;
    std::string one = Schedule([&] { auto a = base; a.push_back("1"); return a; }(), stem + "_t1.json");
    std::string four = Schedule([&] { auto a = base; a.push_back("4"); return a; }(), stem + "_t4.json");
    ExpectSameBytes(one, four, std::string("wide.onnx, --formulation ") + formulation + ", --threads 1 vs 4");
  }
}

TEST_F(Determinism, MapIsByteIdenticalAcrossRunsAndModes) {
  RunResult help = RunHetplan({"map", "--help"});
  // `map` is part of every build: a failing --help is a broken command, not a reason to skip.
  ASSERT_EQ(help.exit_code, 0) << help.err;
  TempDir out("map");
  for (const char* mode : {"sequential", "parallel", "concurrent"}) {
    SCOPED_TRACE(mode);
    std::vector<std::string> args = {"map", File("branchy.onnx"), "--platform", "soc-example", "--mode", mode};
    std::string a = Schedule(args, out / (std::string(mode) + "_a.json"));
    std::string b = Schedule(args, out / (std::string(mode) + "_b.json"));
    ExpectSameBytes(a, b, std::string("map --mode ") + mode + ", two runs");
  }
}

}  // namespace
}  // namespace hetplan::testing
