#include "hetplan/platform/platform.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "testing/expect.h"

namespace hetplan {
namespace {

// Strips the newline after R"( so that line 1 is the first written line.
std::string Y(const char* text) {
  std::string s(text);
  if (!s.empty() && s[0] == '\n') s.erase(0, 1);
  return s;
}

const std::string kValid = Y(R"(
name: test-platform
description: "two PUs"
pus:
  - name: cpu
    kind: cpu
    execution: serial
    cost: profile
    threads: 1
    power_w: 5.0
  - name: cim
    kind: cim
    execution: spatial
    cost: cim
    crossbar_rows: 256
    crossbar_cols: 128
    crossbars: 100
    mvm_latency_ns: 50
    bandwidth_gbps: 10.24
    element_bytes: 1
    supported_ops: [Conv, Gemm, MatMul]
    grouped_conv: per_group
    im2col_load: true
links:
  - between: [cpu, cim]
    bandwidth_gbps: 10.24
    latency_us: 0.5
)");

Result<Platform> Parse(const std::string& yaml) { return ParsePlatformYaml(yaml, "t.yaml"); }

// The error message of a YAML that must fail.
std::string ErrorOf(const std::string& yaml) {
  Result<Platform> r = Parse(yaml);
  EXPECT_FALSE(r.ok()) << "expected an error for:\n" << yaml;
  if (r.ok()) return "";
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
  return r.status().message();
}

// kValid with one line replaced (matched by its full text, indentation included).
std::string Replace(const std::string& from, const std::string& to) {
  std::string s = kValid;
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(PlatformParse, FullExample) {
  Result<Platform> r = Parse(kValid);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Platform& p = *r;
  EXPECT_EQ(p.name, "test-platform");
  EXPECT_EQ(p.description, "two PUs");
  EXPECT_EQ(p.source, "t.yaml");
  ASSERT_EQ(p.pus.size(), 2u);
  EXPECT_EQ(p.pus[0].kind, PuKind::kCpu);
  EXPECT_EQ(p.pus[0].execution, Execution::kSerial);
  EXPECT_EQ(p.pus[0].cost_source, CostSource::kProfile);
  EXPECT_EQ(p.pus[0].power_w, 5.0);
  const ProcessingUnit& cim = p.pus[1];
  EXPECT_EQ(cim.kind, PuKind::kCim);
  EXPECT_EQ(cim.execution, Execution::kSpatial);
  EXPECT_EQ(cim.cost_source, CostSource::kCim);
  EXPECT_FALSE(cim.power_w.has_value());
  EXPECT_EQ(cim.cim.crossbar_rows, 256);
  EXPECT_EQ(cim.cim.crossbar_cols, 128);
  EXPECT_EQ(cim.cim.crossbars, 100);
  EXPECT_DOUBLE_EQ(cim.cim.MvmLatencyNs(), 50);
  EXPECT_DOUBLE_EQ(cim.cim.bandwidth_gbps, 10.24);
  EXPECT_EQ(cim.cim.element_bytes, std::optional<int64_t>(1));
  EXPECT_EQ(cim.cim.supported_ops, (std::vector<std::string>{"Conv", "Gemm", "MatMul"}));
  EXPECT_EQ(cim.cim.grouped_conv, GroupedConvMapping::kPerGroup);
  EXPECT_TRUE(cim.cim.im2col_load);
  ASSERT_EQ(p.links.size(), 1u);
  EXPECT_EQ(p.FindPu("cim"), 1);
  EXPECT_EQ(p.FindPu("gpu"), -1);
  ASSERT_NE(p.FindLink("cim", "cpu"), nullptr);
  EXPECT_EQ(p.FindLink("cim", "cpu"), p.FindLink("cpu", "cim"));
  EXPECT_DOUBLE_EQ(p.FindLink("cim", "cpu")->latency_us, 0.5);
  EXPECT_FALSE(p.links[0].element_bytes.has_value());
  EXPECT_EQ(p.FindLink("cpu", "cpu"), nullptr);
}

TEST(PlatformParse, DefaultsFollowTheKind) {
  Result<Platform> r = Parse(Y(R"(
name: d
pus:
  - {name: host, kind: cpu}
  - {name: acc, kind: cim}
  - {name: g, kind: gpu, peak_gflops: {float32: 10}, memory_bandwidth_gbps: 5}
)"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& pus = r->pus;
  EXPECT_EQ(pus[0].execution, Execution::kSerial);
  EXPECT_EQ(pus[0].cost_source, CostSource::kProfile);
  EXPECT_EQ(pus[0].threads, 1);
  EXPECT_EQ(pus[1].execution, Execution::kSpatial);
  EXPECT_EQ(pus[1].cost_source, CostSource::kCim);
  EXPECT_EQ(pus[1].cim.crossbar_rows, 256);
  EXPECT_EQ(pus[1].cim.crossbar_cols, 256);
  EXPECT_EQ(pus[1].cim.crossbars, 100);
  EXPECT_DOUBLE_EQ(pus[1].cim.MvmLatencyNs(), 50);
  EXPECT_DOUBLE_EQ(pus[1].cim.bandwidth_gbps, 10.24);
  EXPECT_EQ(pus[1].cim.grouped_conv, GroupedConvMapping::kBlockDiagonal);
  EXPECT_FALSE(pus[1].cim.im2col_load);
  EXPECT_EQ(pus[2].execution, Execution::kSerial);
  EXPECT_EQ(pus[2].cost_source, CostSource::kRoofline);
  EXPECT_TRUE(r->links.empty());
}

TEST(PlatformParse, RooflineKeys) {
  Result<Platform> r = Parse(Y(R"(
name: soc
pus:
  - name: gpu
    kind: gpu
    cost: roofline
    peak_gflops: {float32: 50, int8: 200}
    memory_bandwidth_gbps: 25.6
    dispatch_us: 0
    efficiency: {Conv: 0.6, default: 0.5}
)"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const RooflineParams& rf = r->pus[0].roofline;
  EXPECT_DOUBLE_EQ(rf.peak_gflops.at("float32"), 50);
  EXPECT_DOUBLE_EQ(rf.peak_gflops.at("int8"), 200);
  EXPECT_DOUBLE_EQ(rf.memory_bandwidth_gbps, 25.6);
  EXPECT_DOUBLE_EQ(rf.dispatch_us, 0);
  EXPECT_DOUBLE_EQ(rf.efficiency.at("Conv"), 0.6);
  EXPECT_DOUBLE_EQ(rf.efficiency.at("default"), 0.5);
}

TEST(PlatformParse, UnknownKeysNameTheValidOnes) {
  std::string m = ErrorOf(kValid + "extra: 1\n");
  EXPECT_HAS(m, "t.yaml:27: extra: unknown key 'extra'");
  EXPECT_HAS(m, "name, description, pus, links");

  m = ErrorOf(Replace("    crossbars: 100\n", "    crossbar: 100\n"));
  EXPECT_HAS(m, "t.yaml:16: pus[1].crossbar: unknown key 'crossbar'");
  EXPECT_HAS(m, "crossbars");
  EXPECT_HAS(m, "mvm_latency_ns");

  m = ErrorOf(Replace("    latency_us: 0.5\n", "    latency: 0.5\n"));
  EXPECT_HAS(m, "t.yaml:26: links[0].latency: unknown key 'latency'");
  EXPECT_HAS(m, "between, bandwidth_gbps, latency_us, element_bytes");

  // A CIM key on a CPU: not valid there, and the message says why.
  m = ErrorOf(Replace("    threads: 1\n", "    threads: 1\n    crossbars: 4\n"));
  EXPECT_HAS(m, "t.yaml:9: pus[0].crossbars: 'crossbars' applies only to PUs of kind: cim");
  EXPECT_HAS(m, "valid keys for this PU: name, kind, execution, cost, power_w, threads");
}

TEST(PlatformParse, WrongTypes) {
  EXPECT_HAS(ErrorOf(Replace("crossbars: 100", "crossbars: 2.5")),
             "t.yaml:16: pus[1].crossbars: must be a whole number, got '2.5'");
  EXPECT_HAS(ErrorOf(Replace("crossbars: 100", "crossbars: \"100\"")),
             "pus[1].crossbars: must be a whole number, got the string \"100\"; remove the quotes");
  EXPECT_HAS(ErrorOf(Replace("crossbars: 100", "crossbars: [1, 2]")),
             "pus[1].crossbars: must be a whole number, got a list");
  EXPECT_HAS(ErrorOf(Replace("power_w: 5.0", "power_w: five")),
             "t.yaml:9: pus[0].power_w: must be a number, got 'five'");
  EXPECT_HAS(ErrorOf(Replace("im2col_load: true", "im2col_load: maybe")),
             "pus[1].im2col_load: must be true or false, got 'maybe'");
  EXPECT_HAS(ErrorOf(Replace("supported_ops: [Conv, Gemm, MatMul]", "supported_ops: Conv")),
             "pus[1].supported_ops: must be a list, got a scalar");
  EXPECT_HAS(ErrorOf(Replace("kind: cim", "kind: fpga")),
             "t.yaml:11: pus[1].kind: unknown value 'fpga'; use one of: cpu, cim, gpu, npu");
  EXPECT_HAS(ErrorOf(Replace("grouped_conv: per_group", "grouped_conv: diagonal")),
             "use one of: block_diagonal, per_group");
  EXPECT_HAS(ErrorOf(Replace("name: test-platform", "name: [a, b]")),
             "t.yaml:1: name: must be a string, got a list");
  EXPECT_HAS(ErrorOf(Replace("threads: 1", "threads:")), "pus[0].threads: has no value");
  EXPECT_HAS(ErrorOf(Replace("threads: 1", "threads: 99999999999")), "pus[0].threads:");
  EXPECT_HAS(ErrorOf(Replace("crossbars: 100", "crossbars: 99999999999999999999999")),
             "pus[1].crossbars: '99999999999999999999999' is out of range");
  EXPECT_HAS(ErrorOf("name: x\npus: {cpu: 1}\n"), "t.yaml:2: pus: must be a list, got a map");
  EXPECT_HAS(ErrorOf("name: x\npus: [cpu]\n"), "t.yaml:2: pus[0]: must be a map, got a scalar");
  EXPECT_HAS(ErrorOf(Replace("between: [cpu, cim]", "between: cpu")),
             "links[0].between: must be a list, got a scalar");
}

TEST(PlatformParse, BadNumbers) {
  EXPECT_HAS(ErrorOf(Replace("    bandwidth_gbps: 10.24\n    element_bytes",
                             "    bandwidth_gbps: 0\n    element_bytes")),
             "t.yaml:18: pus[1].bandwidth_gbps: must be a finite number > 0, got 0");
  EXPECT_HAS(ErrorOf(Replace("mvm_latency_ns: 50", "mvm_latency_ns: -1")),
             "t.yaml:17: pus[1].mvm_latency_ns: must be a finite number > 0, got -1");
  EXPECT_HAS(ErrorOf(Replace("power_w: 5.0", "power_w: .nan")),
             "pus[0].power_w: must be a finite number, got '.nan'");
  EXPECT_HAS(ErrorOf(Replace("power_w: 5.0", "power_w: -.inf")), "must be a finite number");
  EXPECT_HAS(ErrorOf(Replace("power_w: 5.0", "power_w: 0")), "pus[0].power_w: must be a finite number > 0");
  EXPECT_HAS(ErrorOf(Replace("mvm_latency_ns: 50", "mvm_latency_ns: 1e999")), "is out of range");
  EXPECT_HAS(ErrorOf(Replace("crossbar_rows: 256", "crossbar_rows: 0")),
             "t.yaml:14: pus[1].crossbar_rows: must be 1 to");
  EXPECT_HAS(ErrorOf(Replace("crossbar_cols: 128", "crossbar_cols: -4")), "pus[1].crossbar_cols: must be 1 to");
  EXPECT_HAS(ErrorOf(Replace("element_bytes: 1", "element_bytes: 0")), "pus[1].element_bytes: must be 1 to");
  EXPECT_HAS(ErrorOf(Replace("threads: 1", "threads: 0")), "t.yaml:8: pus[0].threads: must be 1 to 4096");
  EXPECT_HAS(ErrorOf(Replace("    bandwidth_gbps: 10.24\n    latency_us",
                             "    bandwidth_gbps: 0\n    latency_us")),
             "t.yaml:25: links[0].bandwidth_gbps: must be a finite number > 0, got 0");
  EXPECT_HAS(ErrorOf(Replace("latency_us: 0.5", "latency_us: -1")),
             "links[0].latency_us: must be a finite number >= 0");
  EXPECT_HAS(ErrorOf(Replace("latency_us: 0.5", "latency_us: 0.5\n    element_bytes: 0")),
             "links[0].element_bytes: must be 1 to 16");
}

TEST(PlatformParse, CrossbarBudget) {
  Result<Platform> zero = Parse(Replace("crossbars: 100", "crossbars: 0"));
  ASSERT_TRUE(zero.ok()) << zero.status().message();
  EXPECT_EQ(zero->pus[1].cim.crossbars, 0);
  EXPECT_HAS(ErrorOf(Replace("crossbars: 100", "crossbars: -1")),
             "t.yaml:16: pus[1].crossbars: must be 0 to");
}

TEST(PlatformParse, KindAndExecutionRules) {
  std::string m = ErrorOf(Replace("    execution: serial\n", "    execution: spatial\n"));
  EXPECT_HAS(m, "t.yaml:6: pus[0].execution: execution: spatial needs kind: cim");
  EXPECT_HAS(m, "use execution: serial");
  EXPECT_HAS(ErrorOf(Replace("    cost: profile\n    threads: 1\n", "    cost: cim\n")),
             "t.yaml:7: pus[0].cost: cost: cim is the analytical CIM model");
  EXPECT_HAS(ErrorOf(Replace("    cost: cim\n", "    cost: profile\n")), "a cim PU cannot use cost: profile");
  // A serial CIM is allowed (no CIM/CIM parallelism).
  EXPECT_TRUE(Parse(Replace("execution: spatial", "execution: serial")).ok());
}

TEST(PlatformParse, MissingRequiredKeys) {
  EXPECT_HAS(ErrorOf(Replace("    kind: cim\n", "")), "t.yaml:10: pus[1]: missing required key 'kind'");
  EXPECT_HAS(ErrorOf(Replace("  - name: cim\n    kind: cim", "  - kind: cim")),
             "t.yaml:10: pus[1]: missing required key 'name'");
  EXPECT_HAS(ErrorOf(Replace("name: test-platform\n", "")), "t.yaml:1: missing required key 'name'");
  EXPECT_HAS(ErrorOf("name: x\n"), "missing required key 'pus'");
  EXPECT_HAS(ErrorOf(Replace("  - between: [cpu, cim]\n    bandwidth_gbps", "  - bandwidth_gbps")),
             "t.yaml:24: links[0]: missing required key 'between'");
  EXPECT_HAS(ErrorOf(Replace("    bandwidth_gbps: 10.24\n    latency_us", "    latency_us")),
             "links[0]: missing required key 'bandwidth_gbps'");
}

TEST(PlatformParse, NamesAndLinks) {
  EXPECT_HAS(ErrorOf(Replace("  - name: cim\n", "  - name: cpu\n")),
             "t.yaml:10: pus[1].name: duplicate PU name 'cpu' (also pus[0])");
  std::string m = ErrorOf(Replace("between: [cpu, cim]", "between: [cpu, gpu]"));
  EXPECT_HAS(m, "t.yaml:24: links[0].between: no PU named 'gpu'; use two of: cpu, cim");
  EXPECT_HAS(ErrorOf(Replace("between: [cpu, cim]", "between: [cpu, cpu]")),
             "links[0].between: links PU 'cpu' to itself");
  EXPECT_HAS(ErrorOf(Replace("between: [cpu, cim]", "between: [cpu, cim, cpu]")),
             "links[0].between: names 3 PUs");
  EXPECT_HAS(ErrorOf(kValid + "  - between: [cim, cpu]\n    bandwidth_gbps: 1\n"),
             "t.yaml:27: links[1].between: duplicate link cim-cpu (also links[0])");
  EXPECT_HAS(ErrorOf(Replace("  - name: cim\n", "  - name: c.im\n")), "pus[1].name: 'c.im' contains characters");
  EXPECT_HAS(ErrorOf(Replace("  - name: cim\n", "  - name: links\n")), "pus[1].name: 'links' is reserved");
}

TEST(PlatformParse, TableCostNeedsAPath) {
  std::string yaml = Replace("    cost: profile\n    threads: 1\n", "    cost: table\n");
  EXPECT_HAS(ErrorOf(yaml), "t.yaml:4: pus[0].table: cost: table needs a CSV path; add table:");
  Result<Platform> r = Parse(Replace("    cost: profile\n    threads: 1\n", "    cost: table\n    table: costs.csv\n"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->pus[0].cost_source, CostSource::kTable);
  EXPECT_EQ(r->pus[0].table, "costs.csv");
  // threads belongs to cost: profile only.
  EXPECT_HAS(ErrorOf(Replace("    cost: profile\n", "    cost: table\n    table: a.csv\n")),
             "'threads' applies only to PUs with cost: profile");
}

TEST(PlatformParse, RooflineRules) {
  EXPECT_HAS(ErrorOf("name: x\npus:\n  - {name: g, kind: gpu, memory_bandwidth_gbps: 5}\n"),
             "t.yaml:3: pus[0].peak_gflops: cost: roofline needs peak GFLOP/s");
  EXPECT_HAS(ErrorOf("name: x\npus:\n  - {name: g, kind: gpu, peak_gflops: {float32: 5}}\n"),
             "pus[0].memory_bandwidth_gbps: cost: roofline needs a finite memory bandwidth > 0");
  EXPECT_HAS(ErrorOf("name: x\npus:\n  - name: g\n    kind: gpu\n    peak_gflops: {float32: 5}\n"
                     "    memory_bandwidth_gbps: 5\n    efficiency:\n      Conv: 1.5\n"),
             "t.yaml:8: pus[0].efficiency.Conv: must be in (0, 1], got 1.5");
  EXPECT_HAS(ErrorOf("name: x\npus:\n  - name: g\n    kind: gpu\n    peak_gflops: {float32: -5}\n"
                     "    memory_bandwidth_gbps: 5\n"),
             "t.yaml:5: pus[0].peak_gflops.float32: must be a finite number > 0");
  EXPECT_HAS(ErrorOf("name: x\npus:\n  - {name: g, kind: gpu, peak_gflops: 5, memory_bandwidth_gbps: 5}\n"),
             "pus[0].peak_gflops: must be a map, got a scalar");
  EXPECT_HAS(ErrorOf("name: x\npus:\n  - {name: c, kind: cpu, dispatch_us: 1}\n"),
             "'dispatch_us' applies only to PUs with cost: roofline");
}

TEST(PlatformParse, PuCountLimits) {
  EXPECT_HAS(ErrorOf("name: x\npus: []\n"), "t.yaml:2: pus: the platform has no processing units");
  EXPECT_HAS(ErrorOf("name: x\npus:\n"), "t.yaml:2: pus: the platform has no processing units");
  std::string yaml = "name: x\npus:\n";
  for (int i = 0; i < 65; ++i) yaml += "  - {name: p" + std::to_string(i) + ", kind: cpu}\n";
  EXPECT_HAS(ErrorOf(yaml), "pus: 65 processing units, more than the limit of 64");
  yaml = "name: x\npus:\n";
  for (int i = 0; i < 64; ++i) yaml += "  - {name: p" + std::to_string(i) + ", kind: cpu}\n";
  EXPECT_TRUE(Parse(yaml).ok());
}

TEST(PlatformParse, LongStrings) {
  std::string long_name(5000, 'a');
  EXPECT_HAS(ErrorOf(Replace("description: \"two PUs\"", "description: " + long_name)),
             "t.yaml:2: description: the string has 5000 characters, more than the limit of 4096");
  EXPECT_HAS(ErrorOf(Replace("  - name: cim\n", "  - name: " + long_name + "\n")),
             "pus[1].name: the string has 5000 characters");
}

TEST(PlatformParse, SyntaxAndDocumentErrors) {
  std::string m = ErrorOf("name: x\npus:\n  - {name: cpu, kind: cpu\nlinks: []\n");
  EXPECT_HAS(m, "t.yaml:");
  EXPECT_HAS(m, "YAML syntax error");
  EXPECT_HAS(ErrorOf("name: x\n  bad indent: 1\n"), "YAML syntax error");
  EXPECT_HAS(ErrorOf(""), "t.yaml:1: the platform file is empty");
  EXPECT_HAS(ErrorOf("# only a comment\n"), "the platform file is empty");
  EXPECT_HAS(ErrorOf("---\nname: a\n---\nname: b\n"), "holds more than one YAML document");
  EXPECT_HAS(ErrorOf("just a string\n"), "t.yaml:1: the document is a scalar, not a map");
  EXPECT_HAS(ErrorOf(kValid + "name: again\n"), "t.yaml:27: name: duplicate key 'name'");
  EXPECT_HAS(ErrorOf("name: x\n? [a]\n: 1\n"), "a key is a list");
  // yaml-cpp 0.7's LoadAll loops forever on these; the parser must not.
  EXPECT_HAS(ErrorOf(","), "more than one YAML document");
  EXPECT_FALSE(Parse("name: x\n,\n").ok());
  EXPECT_FALSE(Parse("[:").ok());
  EXPECT_FALSE(Parse("{:").ok());
  // Self-referencing aliases make cyclic node graphs; nothing may recurse.
  EXPECT_HAS(ErrorOf("name: x\npus: &a [*a]\n"), "pus[0]: must be a map, got a list");
  EXPECT_HAS(ErrorOf("name: x\npus:\n  - &p {name: g, kind: gpu, efficiency: *p}\n"),
             "pus[0].efficiency");
}

TEST(PlatformParse, RefusesHugeAndDeepDocuments) {
  std::string big = kValid + "# " + std::string(size_t{1} << 20, 'x') + "\n";
  Result<Platform> r = Parse(big);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kLimitExceeded);
  EXPECT_HAS(r.status().message(), "more than the limit of 1048576 (1 MiB)");

  EXPECT_HAS(ErrorOf("name: " + std::string(100000, '[') + "\n"), "t.yaml:1: brackets nested more than 32 levels");
  EXPECT_HAS(ErrorOf("a: {b: " + std::string(50000, '{') + "\n"), "nested more than");
  std::string dashes;
  for (int i = 0; i < 50000; ++i) dashes += "- ";
  EXPECT_HAS(ErrorOf("name: x\npus:\n" + dashes + "x\n"), "t.yaml:3: sequences nested more than 32 levels");
  std::string indented = "name: x\n";
  for (int i = 0; i < 600; ++i) indented += std::string(i, ' ') + "k" + std::to_string(i) + ":\n";
  EXPECT_HAS(ErrorOf(indented), "indented more than 512 columns");
  // Nesting that fools the scanner (brackets inside a plain scalar after a
  // quote-like character) still ends in an error from yaml-cpp's own guard.
  std::string sneaky = "name: x 'y\npus: " + std::string(20000, '[') + "\n";
  EXPECT_FALSE(Parse(sneaky).ok());
}

// Whatever the bytes, the parser returns a value or an error.
TEST(PlatformParse, NeverCrashesOnMutatedInput) {
  std::mt19937 rng(12345);
  const std::string alphabet = " \n\t-:[]{},'\"#&*!|>?%@`0123456789.abcxyz\\";
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = kValid;
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      size_t at = rng() % s.size();
      switch (rng() % 4) {
        case 0: s.erase(at, 1 + rng() % 5); break;
        case 1: s.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        case 2: s[at] = static_cast<char>(rng() % 256); break;
        default: s.insert(at, s.substr(rng() % s.size(), rng() % 30)); break;
      }
    }
    Result<Platform> r = Parse(s);
    if (!r.ok()) {
      EXPECT_FALSE(r.status().message().empty());
    } else {
      EXPECT_TRUE(ValidatePlatform(*r).ok());
    }
  }
}

std::string PresetDir() { return std::string(HETPLAN_SOURCE_DIR) + "/platforms"; }

TEST(Presets, KleinArmMatchesThePaper) {
  Result<Platform> r = LoadPlatform("klein-arm");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Platform& p = *r;
  EXPECT_EQ(p.name, "klein-arm");
  EXPECT_EQ(p.source, "preset:klein-arm");
  ASSERT_EQ(p.pus.size(), 2u);
  const ProcessingUnit& cpu = p.pus[p.FindPu("cpu")];
  EXPECT_EQ(cpu.kind, PuKind::kCpu);
  EXPECT_EQ(cpu.execution, Execution::kSerial);
  EXPECT_EQ(cpu.cost_source, CostSource::kProfile);
  EXPECT_EQ(cpu.threads, 1);
  const ProcessingUnit& cim = p.pus[p.FindPu("cim")];
  EXPECT_EQ(cim.kind, PuKind::kCim);
  EXPECT_EQ(cim.execution, Execution::kSpatial);
  EXPECT_EQ(cim.cost_source, CostSource::kCim);
  EXPECT_EQ(cim.cim.crossbar_rows, 256);
  EXPECT_EQ(cim.cim.crossbar_cols, 256);
  EXPECT_EQ(cim.cim.crossbars, 100);
  EXPECT_DOUBLE_EQ(cim.cim.MvmLatencyNs(), 50);
  EXPECT_DOUBLE_EQ(cim.cim.bandwidth_gbps, 10.24);
  // b_elem is each tensor's own element size (1 for the *_int8 models).
  EXPECT_FALSE(cim.cim.element_bytes.has_value());
  EXPECT_EQ(cim.cim.supported_ops, (std::vector<std::string>{"Conv", "Gemm", "MatMul", "LSTM", "GRU", "RNN"}));
  const Link* link = p.FindLink("cpu", "cim");
  ASSERT_NE(link, nullptr);
  EXPECT_DOUBLE_EQ(link->bandwidth_gbps, 10.24);
  EXPECT_DOUBLE_EQ(link->latency_us, 0);
  EXPECT_FALSE(link->element_bytes.has_value());
}

TEST(Presets, KleinX86MatchesThePaper) {
  Result<Platform> r = LoadPlatform("klein-x86");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Platform& p = *r;
  EXPECT_EQ(p.source, "preset:klein-x86");
  const ProcessingUnit& cim = p.pus[p.FindPu("cim")];
  EXPECT_EQ(cim.cim.crossbars, 100);
  EXPECT_DOUBLE_EQ(cim.cim.MvmLatencyNs(), 50);
  EXPECT_DOUBLE_EQ(cim.cim.bandwidth_gbps, 20.48);
  ASSERT_NE(p.FindLink("cim", "cpu"), nullptr);
  EXPECT_DOUBLE_EQ(p.FindLink("cim", "cpu")->bandwidth_gbps, 20.48);
  EXPECT_EQ(p.pus[p.FindPu("cpu")].cost_source, CostSource::kProfile);
}

TEST(Presets, SocExample) {
  Result<Platform> r = LoadPlatform("soc-example");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Platform& p = *r;
  ASSERT_EQ(p.pus.size(), 3u);
  for (const ProcessingUnit& pu : p.pus) {
    EXPECT_EQ(pu.cost_source, CostSource::kRoofline) << pu.name;
    EXPECT_EQ(pu.execution, Execution::kSerial) << pu.name;
    EXPECT_TRUE(pu.power_w.has_value()) << pu.name;
    EXPECT_TRUE(pu.roofline.peak_gflops.count("float32")) << pu.name;
    EXPECT_GT(pu.roofline.memory_bandwidth_gbps, 0) << pu.name;
  }
  EXPECT_EQ(p.pus[p.FindPu("gpu")].kind, PuKind::kGpu);
  EXPECT_EQ(p.pus[p.FindPu("npu")].kind, PuKind::kNpu);
  EXPECT_NE(p.FindLink("cpu", "gpu"), nullptr);
  EXPECT_NE(p.FindLink("npu", "cpu"), nullptr);
  EXPECT_NE(p.FindLink("gpu", "npu"), nullptr);
  // Same platform by path: the source is the path.
  Result<Platform> by_path = LoadPlatform(PresetDir() + "/soc-example.yaml");
  ASSERT_TRUE(by_path.ok()) << by_path.status().message();
  EXPECT_EQ(by_path->source, PresetDir() + "/soc-example.yaml");
}

TEST(LoadPlatform, MissingFileNamesThePath) {
  Result<Platform> r = LoadPlatform("/nonexistent/dir/plat.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
  EXPECT_HAS(r.status().message(), "/nonexistent/dir/plat.yaml: platform file not found");
  EXPECT_HAS(r.status().message(), "klein-arm");

  r = LoadPlatform("no-such-preset");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
  EXPECT_HAS(r.status().message(), "platform 'no-such-preset': no such preset");
  EXPECT_HAS(r.status().message(), "no-such-preset.yaml");
  EXPECT_HAS(r.status().message(), "isaac, klein-arm, klein-x86, neurosim-rram, puma, soc-example");
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("hetplan_platform_test_" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    std::string file = (path_ / name).string();
    std::ofstream(file) << text;
    return file;
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

TEST(LoadPlatform, EnvironmentFolderAndTablePaths) {
  TempDir dir;
  dir.Write("mine.yaml", "name: mine\npus:\n  - {name: cpu, kind: cpu, cost: table, table: costs.csv}\n");
  ::setenv("HETPLAN_PLATFORM_DIR", dir.path().c_str(), 1);
  Result<Platform> r = LoadPlatform("mine");
  ::unsetenv("HETPLAN_PLATFORM_DIR");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->source, "preset:mine");
  EXPECT_EQ(r->pus[0].table, dir.path() + "/costs.csv");

  std::string bad = dir.Write("bad.yaml", "name: bad\npus:\n  - {name: cpu, kind: cpu, threads: -3}\n");
  r = LoadPlatform(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_HAS(r.status().message(), bad + ":3: pus[0].threads: must be 1 to 4096, got -3");

  std::string huge = dir.Write("huge.yaml", std::string((size_t{1} << 20) + 10, '#'));
  r = LoadPlatform(huge);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kLimitExceeded);
  EXPECT_HAS(r.status().message(), huge + ": the platform file is larger than 1 MiB");
}

Platform KleinArm() {
  Result<Platform> r = LoadPlatform("klein-arm");
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : Platform{};
}

TEST(ApplyOverride, ValidAssignments) {
  Platform p = KleinArm();
  ASSERT_TRUE(ApplyOverride(p, "cim.crossbars=200").ok());
  EXPECT_EQ(p.pus[1].cim.crossbars, 200);
  ASSERT_TRUE(ApplyOverride(p, "cpu.power_w=5").ok());
  EXPECT_EQ(p.pus[0].power_w, 5.0);
  ASSERT_TRUE(ApplyOverride(p, "link.cpu-cim.bandwidth_gbps=5").ok());
  EXPECT_DOUBLE_EQ(p.FindLink("cpu", "cim")->bandwidth_gbps, 5);
  ASSERT_TRUE(ApplyOverride(p, "link.cim-cpu.latency_us = 2.5").ok());
  EXPECT_DOUBLE_EQ(p.FindLink("cpu", "cim")->latency_us, 2.5);
  ASSERT_TRUE(ApplyOverride(p, "cim.mvm_latency_ns=1000").ok());
  EXPECT_DOUBLE_EQ(p.pus[1].cim.MvmLatencyNs(), 1000);
  ASSERT_TRUE(ApplyOverride(p, "cim.grouped_conv=per_group").ok());
  EXPECT_EQ(p.pus[1].cim.grouped_conv, GroupedConvMapping::kPerGroup);
  ASSERT_TRUE(ApplyOverride(p, "cim.im2col_load=true").ok());
  EXPECT_TRUE(p.pus[1].cim.im2col_load);
  ASSERT_TRUE(ApplyOverride(p, "cim.supported_ops=Conv,Gemm").ok());
  EXPECT_EQ(p.pus[1].cim.supported_ops, (std::vector<std::string>{"Conv", "Gemm"}));
  ASSERT_TRUE(ApplyOverride(p, "cpu.threads=4").ok());
  EXPECT_EQ(p.pus[0].threads, 4);
  // crossbars = 0 is allowed: nothing fits, the CPU-only schedule.
  ASSERT_TRUE(ApplyOverride(p, "cim.crossbars=0").ok());
  EXPECT_EQ(p.pus[1].cim.crossbars, 0);
  EXPECT_EQ(p.overrides.size(), 10u);
  EXPECT_EQ(p.overrides.front(), "cim.crossbars=200");
  EXPECT_TRUE(ValidatePlatform(p).ok());

  Result<Platform> soc = LoadPlatform("soc-example");
  ASSERT_TRUE(soc.ok());
  ASSERT_TRUE(ApplyOverride(*soc, "gpu.peak_gflops.float32=80").ok());
  EXPECT_DOUBLE_EQ(soc->pus[1].roofline.peak_gflops.at("float32"), 80);
  ASSERT_TRUE(ApplyOverride(*soc, "npu.efficiency.Softmax=0.05").ok());
  EXPECT_DOUBLE_EQ(soc->pus[2].roofline.efficiency.at("Softmax"), 0.05);
  ASSERT_TRUE(ApplyOverride(*soc, "link.gpu-npu.element_bytes=2").ok());
  EXPECT_EQ(soc->FindLink("gpu", "npu")->element_bytes, 2);
}

TEST(ApplyOverride, InvalidAssignmentsLeaveThePlatformUnchanged) {
  const Platform original = KleinArm();
  Platform p = original;
  auto fails = [&](const std::string& assignment) {
    Status s = ApplyOverride(p, assignment);
    EXPECT_FALSE(s.ok()) << assignment;
    EXPECT_EQ(nlohmann::json(PlatformToJson(p)), PlatformToJson(original)) << assignment;
    EXPECT_HAS(s.message(), "override '" + assignment + "'");
    return s.message();
  };
  std::string m = fails("gpu.power_w=5");
  EXPECT_HAS(m, "no PU named 'gpu'; PUs: cpu, cim");
  m = fails("cim.crossbar=5");
  EXPECT_HAS(m, "unknown key 'crossbar' for PU 'cim'");
  EXPECT_HAS(m, "valid keys for cim (kind: cim, cost: cim): execution, cost, power_w, crossbar_rows");
  m = fails("cpu.crossbars=5");
  EXPECT_HAS(m, "unknown key 'crossbars' for PU 'cpu'");
  EXPECT_HAS(fails("cim.crossbars=abc"), "cim.crossbars: must be a whole number, got 'abc'");
  EXPECT_HAS(fails("cim.crossbars=-1"), "pus[1].crossbars: must be 0 to");
  EXPECT_HAS(fails("cim.mvm_latency_ns=0"), "pus[1].mvm_latency_ns: must be a finite number > 0");
  EXPECT_HAS(fails("cim.bandwidth_gbps=nan"), "must be a finite number, got 'nan'");
  EXPECT_HAS(fails("cim.execution=fast"), "unknown value 'fast'; use one of: serial, spatial");
  EXPECT_HAS(fails("cpu.execution=spatial"), "execution: spatial needs kind: cim");
  EXPECT_HAS(fails("cim.name=acc"), "'name' cannot be overridden");
  EXPECT_HAS(fails("cim.kind=gpu"), "'kind' cannot be overridden");
  EXPECT_HAS(fails("crossbars=5"), "'crossbars' names no PU key");
  EXPECT_HAS(fails("cim.crossbars"), "expected KEY=VALUE");
  EXPECT_HAS(fails("cim.crossbars="), "no value for 'cim.crossbars'");
  EXPECT_HAS(fails("link.cpu-gpu.bandwidth_gbps=5"), "no link 'cpu-gpu'; links: cpu-cim");
  EXPECT_HAS(fails("link.cpu-cim.bandwidth=5"), "unknown link key 'bandwidth'");
  EXPECT_HAS(fails("link.cpu-cim.bandwidth_gbps=0"), "links[0].bandwidth_gbps: must be a finite number > 0");
  EXPECT_HAS(fails("link.cpu-cim=5"), "a link override needs a key");
  EXPECT_HAS(fails("cpu.cost=cim"), "cost: cim is the analytical CIM model");
  EXPECT_EQ(p.overrides.size(), 0u);
}

// A shared ADC pool: 1 or more, only with the circuit's T_mvm and cost: cim.
TEST(ApplyOverride, SharedAdcsNeedTheCircuitAndTheAnalyticalModel) {
  Platform p = KleinArm();
  auto fails = [&](const std::string& assignment) {
    Status s = ApplyOverride(p, assignment);
    EXPECT_FALSE(s.ok()) << assignment;
    return s.message();
  };
  EXPECT_HAS(fails("cim.shared_adcs=64"), "pus[1].shared_adcs: a shared ADC pool needs T_mvm from the circuit");
  EXPECT_HAS(fails("cpu.shared_adcs=64"), "shared_adcs");
  auto puma = LoadPlatform("puma");
  ASSERT_TRUE(puma.ok()) << puma.status().message();
  Platform& q = *puma;
  auto puma_fails = [&](const std::string& assignment) {
    Status s = ApplyOverride(q, assignment);
    EXPECT_FALSE(s.ok()) << assignment;
    return s.message();
  };
  EXPECT_HAS(puma_fails("cim.shared_adcs=0"), "pus[1].shared_adcs: must be 1 to 1073741824, got 0");
  EXPECT_HAS(puma_fails("cim.shared_adcs=many"), "must be a whole number");
  ASSERT_TRUE(ApplyOverride(q, "cim.shared_adcs=64").ok());
  EXPECT_EQ(PlatformToJson(q)["cim"]["shared_adcs"], 64);
  EXPECT_FALSE(PlatformToJson(KleinArm())["cim"].contains("shared_adcs"));
  // A fixed T_mvm cannot slow down with fewer ADCs.
  EXPECT_HAS(puma_fails("cim.mvm_latency_ns=50"), "a shared ADC pool needs T_mvm from the circuit");
  // A simulator's table gives each operator's time: the pool cannot stretch it.
  auto table = ParsePlatformYaml(R"(name: t
pus:
  - {name: cpu, kind: cpu}
  - {name: cim, kind: cim, cost: table, table: sim.csv, input_bits: 8, array_read_ns: 100, shared_adcs: 8}
)",
                                 "t.yaml");
  ASSERT_FALSE(table.ok());
  EXPECT_HAS(table.status().message(), "pus[1].shared_adcs: a shared ADC pool needs cost: cim");
}

// Reprogramming: the write keys in range, given first, then reprogram: true,
// which needs them, a spatial analytical CIM, and one such PU per platform.
TEST(ApplyOverride, ReprogrammingNeedsTheWriteKeys) {
  Platform p = KleinArm();
  auto fails = [&](const std::string& assignment) {
    Status s = ApplyOverride(p, assignment);
    EXPECT_FALSE(s.ok()) << assignment;
    return s.message();
  };
  EXPECT_HAS(fails("cim.reprogram=true"), "pus[1].write_ns_per_row: must be a finite number > 0, got 0; reprogram: "
                                          "true needs write_ns_per_row, endurance_writes and lifetime_inferences");
  EXPECT_HAS(fails("cim.write_ns_per_row=-1"), "pus[1].write_ns_per_row: must be a finite number > 0, got -1");
  EXPECT_HAS(fails("cim.write_energy_pj_per_row=-1"), "pus[1].write_energy_pj_per_row: must be a finite number >= 0");
  EXPECT_HAS(fails("cpu.reprogram=true"), "reprogram");
  for (const char* ok : {"cim.write_ns_per_row=100", "cim.write_energy_pj_per_row=3", "cim.endurance_writes=1e6",
                         "cim.lifetime_inferences=1e5"}) {
    ASSERT_TRUE(ApplyOverride(p, ok).ok()) << ok;
  }
  EXPECT_FALSE(PlatformToJson(p)["cim"].contains("reprogram"));
  ASSERT_TRUE(ApplyOverride(p, "cim.reprogram=true").ok());
  const auto j = PlatformToJson(p)["cim"];
  EXPECT_EQ(j["reprogram"], true);
  EXPECT_EQ(j["write_ns_per_row"], 100.0);
  EXPECT_EQ(j["endurance_writes"], 1e6);
  EXPECT_FALSE(PlatformToJson(KleinArm())["cim"].contains("write_ns_per_row"));
  EXPECT_HAS(fails("cim.execution=serial"), "pus[1].reprogram: reprogramming needs a spatial PU with cost: cim");
  auto two = ParsePlatformYaml(R"(name: t
pus:
  - {name: cpu, kind: cpu}
  - {name: a, kind: cim, reprogram: true, write_ns_per_row: 100, endurance_writes: 1e6, lifetime_inferences: 1e6}
  - {name: b, kind: cim, reprogram: true, write_ns_per_row: 100, endurance_writes: 1e6, lifetime_inferences: 1e6}
)",
                               "t.yaml");
  ASSERT_FALSE(two.ok());
  EXPECT_HAS(two.status().message(), "pus[2].reprogram: a second PU reprograms (pus[1] does already)");
}

// The MVM circuit's keys (issue 44): checked, one line each, and only with
// input_bits; the Klein presets' JSON carries none of them.
TEST(ApplyOverride, TheMvmCircuitsKeysAreChecked) {
  Platform p = KleinArm();
  auto fails = [&](const std::string& assignment) {
    Status s = ApplyOverride(p, assignment);
    EXPECT_FALSE(s.ok()) << assignment;
    return s.message();
  };
  EXPECT_HAS(fails("cim.adc_energy_pj=2"),
             "pus[1].input_bits: the MVM circuit's keys are given without input_bits; add input_bits");
  EXPECT_HAS(fails("cim.columns_per_adc=8"), "given without input_bits");
  EXPECT_HAS(fails("cim.input_bits=65"), "pus[1].input_bits: must be 1 to 64, got 65");
  EXPECT_EQ(p.overrides.size(), 0u);
  // Fixed mode with a circuit beside it: T_mvm stays 50 ns, the circuit prices energy.
  ASSERT_TRUE(ApplyOverride(p, "cim.input_bits=8").ok());
  EXPECT_DOUBLE_EQ(p.pus[1].cim.MvmLatencyNs(), 50);
  EXPECT_HAS(fails("cim.dac_bits=9"), "pus[1].dac_bits: must be 1 to input_bits (8), got 9");
  EXPECT_HAS(fails("cim.columns_per_adc=257"), "pus[1].columns_per_adc: must be 1 to crossbar_cols (256), got 257");
  EXPECT_HAS(fails("cim.adc_conversion_ns=-1"), "pus[1].adc_conversion_ns: must be a finite number >= 0");
  EXPECT_HAS(fails("cim.dac_energy_pj=-0.5"), "pus[1].dac_energy_pj: must be a finite number >= 0");
  EXPECT_FALSE(PlatformToJson(KleinArm())["cim"].contains("input_bits"));
  EXPECT_FALSE(PlatformToJson(KleinArm())["cim"].contains("adc_energy_pj"));
  EXPECT_EQ(PlatformToJson(p)["cim"]["input_bits"], 8);

  // A circuit with no time and no fixed T_mvm is refused.
  auto puma = LoadPlatform("puma");
  ASSERT_TRUE(puma.ok()) << puma.status().message();
  ASSERT_TRUE(ApplyOverride(*puma, "cim.mvm_overhead_ns=0").ok());
  ASSERT_TRUE(ApplyOverride(*puma, "cim.adc_conversion_ns=0").ok());
  Status s = ApplyOverride(*puma, "cim.array_read_ns=0");
  EXPECT_HAS(s.message(), "pus[1].array_read_ns: the circuit gives an MVM no time");
  const nlohmann::json j = PlatformToJson(*puma);
  EXPECT_EQ(j["cim"]["mvm_latency_ns"], 1600.0);
  EXPECT_EQ(j["cim"]["adc_energy_pj"], 1.8);
}

TEST(PlatformToJson, KeyFields) {
  Platform p = KleinArm();
  ASSERT_TRUE(ApplyOverride(p, "cim.crossbars=25").ok());
  nlohmann::json j = PlatformToJson(p);
  EXPECT_EQ(j["name"], "klein-arm");
  EXPECT_EQ(j["source"], "preset:klein-arm");
  EXPECT_EQ(j["pus"], nlohmann::json::array({"cpu", "cim"}));
  EXPECT_EQ(j["overrides"], nlohmann::json::array({"cim.crossbars=25"}));
  EXPECT_EQ(j["cpu"]["kind"], "cpu");
  EXPECT_EQ(j["cpu"]["execution"], "serial");
  EXPECT_EQ(j["cpu"]["cost_source"], "profile");
  EXPECT_TRUE(j["cpu"]["power_w"].is_null());
  EXPECT_EQ(j["cpu"]["threads"], 1);
  EXPECT_FALSE(j["cpu"].contains("crossbars"));
  EXPECT_EQ(j["cim"]["kind"], "cim");
  EXPECT_EQ(j["cim"]["execution"], "spatial");
  EXPECT_EQ(j["cim"]["cost_source"], "cim");
  EXPECT_EQ(j["cim"]["crossbar_rows"], 256);
  EXPECT_EQ(j["cim"]["crossbar_cols"], 256);
  EXPECT_EQ(j["cim"]["crossbars"], 25);
  EXPECT_EQ(j["cim"]["mvm_latency_ns"], 50.0);
  EXPECT_EQ(j["cim"]["bandwidth_gbps"], 10.24);
  EXPECT_TRUE(j["cim"]["element_bytes"].is_null());
  EXPECT_EQ(j["cim"]["grouped_conv"], "block_diagonal");
  EXPECT_EQ(j["cim"]["im2col_load"], false);
  EXPECT_EQ(j["cim"]["supported_ops"], nlohmann::json::array({"Conv", "Gemm", "MatMul", "LSTM", "GRU", "RNN"}));
  ASSERT_EQ(j["links"].size(), 1u);
  EXPECT_EQ(j["links"][0]["a"], "cpu");
  EXPECT_EQ(j["links"][0]["b"], "cim");
  EXPECT_EQ(j["links"][0]["bandwidth_gbps"], 10.24);
  EXPECT_EQ(j["links"][0]["latency_us"], 0.0);
  EXPECT_TRUE(j["links"][0]["element_bytes"].is_null());
  // Text round trip keeps every value.
  EXPECT_EQ(nlohmann::json::parse(j.dump()), j);

  Result<Platform> soc = LoadPlatform("soc-example");
  ASSERT_TRUE(soc.ok());
  nlohmann::json s = PlatformToJson(*soc);
  EXPECT_EQ(s["gpu"]["cost_source"], "roofline");
  EXPECT_EQ(s["gpu"]["power_w"], 4.5);
  EXPECT_EQ(s["gpu"]["peak_gflops"]["float32"], 400.0);
  EXPECT_EQ(s["gpu"]["efficiency"]["default"], 0.2);
  EXPECT_EQ(s["gpu"]["memory_bandwidth_gbps"], 25.6);
  EXPECT_EQ(s["gpu"]["dispatch_us"], 30.0);
  EXPECT_TRUE(s["links"][0]["element_bytes"].is_null());
}

TEST(ValidatePlatform, ProgrammaticPlatforms) {
  Platform p;
  p.name = "code";
  p.source = "built-in";
  EXPECT_HAS(ValidatePlatform(p).message(), "built-in: pus: the platform has no processing units");
  ProcessingUnit cpu;
  cpu.name = "cpu";
  p.pus.push_back(cpu);
  EXPECT_TRUE(ValidatePlatform(p).ok());
  ProcessingUnit cim;
  cim.name = "cim";
  cim.kind = PuKind::kCim;
  cim.execution = Execution::kSpatial;
  cim.cost_source = CostSource::kCim;
  cim.cim.crossbar_cols = 0;
  p.pus.push_back(cim);
  EXPECT_HAS(ValidatePlatform(p).message(), "built-in: pus[1].crossbar_cols: must be 1 to");
  p.pus[1].cim.crossbar_cols = 256;
  p.links.push_back(Link{"cpu", "cim", 10.24, 0, std::nullopt});
  EXPECT_TRUE(ValidatePlatform(p).ok());
  p.links[0].latency_us = std::numeric_limits<double>::infinity();
  EXPECT_HAS(ValidatePlatform(p).message(), "links[0].latency_us: must be a finite number >= 0");
}

TEST(Enums, NamesRoundTrip) {
  for (PuKind k : {PuKind::kCpu, PuKind::kCim, PuKind::kGpu, PuKind::kNpu}) {
    EXPECT_EQ(*ParsePuKind(ToString(k)), k);
  }
  for (Execution e : {Execution::kSerial, Execution::kSpatial}) EXPECT_EQ(*ParseExecution(ToString(e)), e);
  for (CostSource c : {CostSource::kProfile, CostSource::kCim, CostSource::kTable, CostSource::kRoofline}) {
    EXPECT_EQ(*ParseCostSource(ToString(c)), c);
  }
  EXPECT_EQ(ToString(GroupedConvMapping::kPerGroup), "per_group");
  EXPECT_EQ(*ParseGroupedConvMapping("block_diagonal"), GroupedConvMapping::kBlockDiagonal);
  EXPECT_EQ(ToString(CostSource::kRoofline), "roofline");
  Result<PuKind> bad = ParsePuKind("tpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_HAS(bad.status().message(), "kind: unknown value 'tpu'; use one of: cpu, cim, gpu, npu");
}

// Weights as cells store them (issue 44): the keys, their overrides, their
// checks, and the schedule file's platform section writing them only when set.
TEST(PlatformCells, BitsPerCellSignedWeightsAndSliceMapping) {
  auto p = LoadPlatform("klein-arm");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_FALSE(p->pus[1].cim.bits_per_cell.has_value());
  EXPECT_FALSE(PlatformToJson(*p)["cim"].contains("bits_per_cell"));
  for (const char* set : {"cim.bits_per_cell=2", "cim.weight_bits=4", "cim.signed_weights=differential",
                          "cim.slice_mapping=crossbars"}) {
    Status st = ApplyOverride(*p, set);
    ASSERT_TRUE(st.ok()) << set << ": " << st.message();
  }
  const CimParams& c = p->pus[1].cim;
  EXPECT_EQ(c.bits_per_cell, 2);
  EXPECT_EQ(c.weight_bits, 4);
  EXPECT_EQ(c.signed_weights, SignedWeights::kDifferential);
  EXPECT_EQ(c.slice_mapping, SliceMapping::kCrossbars);
  EXPECT_EQ(c.CellsPerWeight(), 4);  // 2 slices x 2 signs
  const auto j = PlatformToJson(*p)["cim"];
  EXPECT_EQ(j["bits_per_cell"], 2);
  EXPECT_EQ(j["weight_bits"], 4);
  EXPECT_EQ(j["signed_weights"], "differential");
  EXPECT_EQ(j["slice_mapping"], "crossbars");
  Status zero = ApplyOverride(*p, "cim.bits_per_cell=0");
  EXPECT_FALSE(zero.ok());
  EXPECT_HAS(zero.message(), "bits_per_cell: must be 1 to 16, got 0");
  Status sign = ApplyOverride(*p, "cim.signed_weights=twos");
  EXPECT_FALSE(sign.ok());
  EXPECT_HAS(sign.message(), "offset");
  EXPECT_EQ(p->pus[1].cim.bits_per_cell, 2);  // a refused override changes nothing
}

}  // namespace
}  // namespace hetplan
