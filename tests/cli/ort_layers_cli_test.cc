// `export --format ort-layer-assignment` and `run DIR --one-session`
// (docs/deployment.md, "One ONNX Runtime session"): ResNet-18 planned on
// klein-arm, its CIM PU given ONNX Runtime's CPU provider, runs in one session
// whose record puts every planned node where the plan did and whose outputs
// equal a plain session's; given a provider this ONNX Runtime lacks, the run
// fails in one line naming a node that ran elsewhere; a PU without a
// provider is refused at export.
#include <filesystem>
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

TEST(CliOrtLayers, TheExportRunsInOneSessionWhereThePlanPutsEachNode) {
  const fs::path d = hetplan::test_util::FreshDir("hetplan_cli_ort_layers_", "ok");
  CmdResult p = Hetplan("partition " + kResnet18 + " --platform klein-arm --warmup 1 --runs 2 --out " +
                        (d / "s.json").string());
  ASSERT_EQ(p.code, 0) << p.out;

  CmdResult no_provider = Hetplan("export " + (d / "s.json").string() + " --format ort-layer-assignment --out " +
                                  (d / "bad").string());
  EXPECT_NE(no_provider.code, 0);
  EXPECT_NE(no_provider.out.find("PU 'cim' runs operators but no ONNX Runtime execution provider runs it; give it one "
                                 "with --device cim="),
            std::string::npos)
      << no_provider.out;
  EXPECT_FALSE(fs::exists(d / "bad" / "model.onnx"));

  CmdResult e = Hetplan("export " + (d / "s.json").string() + " --format ort-layer-assignment --device cim=cpu --out " +
                        (d / "cpu").string());
  ASSERT_EQ(e.code, 0) << e.out;
  const auto session = ReadJson(d / "cpu" / "session.json");
  EXPECT_EQ(session["session_config"]["session.layer_assignment_settings"],
            "CPUExecutionProvider(=hetplan/cim, =hetplan/cpu)");
  EXPECT_EQ(session["session_config"]["session.record_ep_graph_assignment_info"], "1");
  EXPECT_GT(session["annotated_nodes"]["cim"].get<int>(), 0);
  CmdResult r = Hetplan("run " + (d / "cpu").string() + " --one-session --warmup 1 --runs 3 --json " +
                        (d / "r.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("outputs    match the model in a plain session"), std::string::npos) << r.out;
  const auto report = ReadJson(d / "r.json");
  EXPECT_GT(report["recorded_nodes"].get<int>(), 0);
  EXPECT_EQ(report["elsewhere"].get<int>(), 0);
  EXPECT_EQ(report["as_planned"].get<int>() + report["unannotated"].get<int>(), report["recorded_nodes"].get<int>());
  EXPECT_GT(report["as_planned"].get<int>(), 40);  // most of ResNet-18's 49 nodes keep their names

  // The CIM's nodes planned on CUDA, which this ONNX Runtime lacks: they run on the CPU, and the run says so.
  CmdResult c = Hetplan("export " + (d / "s.json").string() + " --format ort-layer-assignment --device cim=cuda --out " +
                        (d / "cuda").string());
  ASSERT_EQ(c.code, 0) << c.out;
  CmdResult elsewhere = Hetplan("run " + (d / "cuda").string() + " --one-session --warmup 0 --runs 1");
  EXPECT_NE(elsewhere.code, 0);
  EXPECT_NE(elsewhere.out.find("planned on CUDAExecutionProvider ran on CPUExecutionProvider"), std::string::npos)
      << elsewhere.out;
}

}  // namespace
