// The frontier stage of `hetplan reproduce` (ComputeFrontiers) on ResNet-18:
// the Fig. 3 multi-curve file per platform and the Fig. 4 single-curve files,
// each read back by the report's reader; the frontier equals the grid's
// exact points at the grid's budgets; the report built from the files has
// the frontier table and figures.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hetplan/dse/dse.h"
#include "hetplan/dse/reproduce.h"
#include "hetplan/report/frontier_plots.h"
#include "hetplan/report/html_report.h"
#include "testing/helpers.h"
#include "testing/scratch.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

using test_util::kResnet18;

std::string Slurp(const fs::path& p) {
  std::stringstream s;
  s << std::ifstream(p).rdbuf();
  return s.str();
}

TEST(ReproduceFrontiers, Fig3AndFig4FilesTheReportReadsAndTheGridAgrees) {
  if (!fs::exists(kResnet18)) GTEST_SKIP() << "zoo not built";
  const fs::path dir = fs::temp_directory_path() / ("hetplan_reproduce_frontier_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // A second "model" for the Fig. 4 files: the same graph under another name.
  const std::string copy = (dir / "resnet18_copy.onnx").string();
  fs::copy_file(kResnet18, copy);

  FrontierStageSpec spec;
  spec.fig3_model = kResnet18;
  spec.fig4_models = {kResnet18, copy};  // the first is skipped: its 50 ns curve is in the Fig. 3 file
  spec.platforms = {"klein-arm", "klein-x86"};
  spec.latencies_ns = {"50", "1000"};
  spec.profile.warmup = 2;
  spec.profile.runs = 5;
  // Its own cache: the checks below need every stage to read one profile,
  // and a shared cache that another test process fills at the same moment
  // (its own measurement of ResNet-18) can change between the stages.
  spec.profile.cache_dir = (dir / "cache").string();
  spec.time_limit_s = 60;
  spec.dir = (dir / "frontiers").string();
  auto r = ComputeFrontiers(spec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->curves, 6);
  EXPECT_TRUE(r->stopped.empty());
  ASSERT_EQ(r->files.size(), 4u);
  EXPECT_EQ(fs::path(r->files[0]).filename(), "fig3_resnet18_klein-arm.json");
  EXPECT_EQ(fs::path(r->files[1]).filename(), "fig4_resnet18_copy_klein-arm_50ns.json");
  EXPECT_EQ(fs::path(r->files[2]).filename(), "fig3_resnet18_klein-x86.json");

  // The report's reader takes every file; the Fig. 3 file has one curve per latency.
  for (const std::string& path : r->files) {
    auto f = ReadFrontierFile(path);
    ASSERT_TRUE(f.ok()) << f.status().message();
    for (const FrontierCurve& c : f->curves) {
      EXPECT_TRUE(c.complete) << path;
      ASSERT_TRUE(c.saturation.has_value()) << path;
      ASSERT_FALSE(c.steps.empty());
      EXPECT_EQ(c.saturation->crossbars, c.steps.back().crossbars);
    }
  }
  auto fig3 = ReadFrontierFile(r->files[0]);
  ASSERT_TRUE(fig3.ok());
  EXPECT_EQ(fig3->axis_key, "cim.mvm_latency_ns");
  ASSERT_EQ(fig3->curves.size(), 2u);
  EXPECT_EQ(CurveLabel(*fig3, fig3->curves[0]), "50 ns");
  EXPECT_EQ(CurveLabel(*fig3, fig3->curves[1]), "1000 ns");
  EXPECT_EQ(fig3->curves[1].overrides, std::vector<std::string>{"cim.mvm_latency_ns=1000"});
  // Same graph, same costs: the copy's curve is the original's at 50 ns.
  auto fig4 = ReadFrontierFile(r->files[1]);
  ASSERT_TRUE(fig4.ok());
  ASSERT_EQ(fig4->curves.size(), 1u);
  ASSERT_EQ(fig4->curves[0].steps.size(), fig3->curves[0].steps.size());
  for (size_t i = 0; i < fig4->curves[0].steps.size(); ++i) {
    EXPECT_EQ(fig4->curves[0].steps[i].crossbars, fig3->curves[0].steps[i].crossbars);
    EXPECT_DOUBLE_EQ(fig4->curves[0].steps[i].makespan_us, fig3->curves[0].steps[i].makespan_us);
  }

  // The grid's exact points at 25/100 crossbars are the frontier's steps there.
  DseSpec grid;
  grid.models = {kResnet18};
  grid.platforms = {"klein-arm", "klein-x86"};
  grid.sweeps = {{"cim.crossbars", {"25", "100"}}, {"cim.mvm_latency_ns", {"50", "1000"}}};
  grid.solvers = {"exact"};
  grid.profile = spec.profile;
  grid.solve.time_limit_s = 60;
  grid.out_path = (dir / "grid.jsonl").string();
  ASSERT_TRUE(RunDse(grid, {}).ok());
  auto rows = ReadDseResults(grid.out_path);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  const FrontierGridCheck check = CompareWithGrid(*r, rows->rows, "exact");
  EXPECT_EQ(check.compared, 8) << check.Summary();
  EXPECT_EQ(check.agree, check.compared) << check.Summary();
  EXPECT_NE(check.Summary().find("at 8 of 8 points"), std::string::npos) << check.Summary();

  // The report of the files: the table row per curve and, with gnuplot, a figure per file.
  ReportInputs in;
  in.results = {grid.out_path};
  in.frontier_files = r->files;
  in.out_dir = (dir / "report").string();
  in.figures = GnuplotAvailable();
  auto rep = WriteReport(in);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->frontier_curves, 6);
  const std::string md = Slurp(rep->markdown_path);
  EXPECT_NE(md.find("## Exact frontiers over the crossbar budget"), std::string::npos);
  EXPECT_NE(md.find("| resnet18 | klein-arm | 50 ns |"), std::string::npos) << md;
  EXPECT_NE(md.find("| resnet18 | klein-x86 | 1000 ns |"), std::string::npos) << md;
  EXPECT_NE(md.find("| resnet18_copy | klein-x86 | — |"), std::string::npos) << md;
  if (in.figures) {
    for (const char* stem : {"frontier_0_resnet18_klein-arm", "frontier_3_resnet18_copy_klein-x86"}) {
      EXPECT_TRUE(fs::exists(dir / "report" / (std::string(stem) + ".png"))) << stem;
      EXPECT_NE(md.find(std::string(stem) + ".png"), std::string::npos) << stem;
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// `hetplan reproduce --quick` end to end (slow: it runs the whole quick
// reproduction, ~25 s here with the profile cache): the frontier stage's
// line, its files, and the frontier table and figures in the report.
class ReproduceQuick : public ::testing::TestWithParam<int> {};

TEST_P(ReproduceQuick, TheReportHasTheFrontierTableAndFigures) {
  for (const char* m : {"resnet18_int8", "mobilenetv2_int8", "yolov5n_int8", "kan_int8", "hyena_int8"}) {
    if (!fs::exists(fs::path(HETPLAN_ZOO_DIR) / (std::string(m) + ".onnx"))) GTEST_SKIP() << m << " not built";
  }
  if (!GnuplotAvailable()) GTEST_SKIP() << "gnuplot not installed";
  const fs::path dir = fs::temp_directory_path() / ("hetplan_reproduce_quick_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  ReproduceOptions o;
  o.out_dir = dir.string();
  o.quick = true;
  o.cache_dir = test_util::DseTestCacheDir();
  auto r = Reproduce(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->frontier_files.size(), 2u);
  EXPECT_TRUE(fs::exists(dir / "frontiers" / "fig3_resnet18_int8_klein-arm.json"));
  EXPECT_TRUE(fs::exists(dir / "frontiers" / "fig3_resnet18_int8_klein-x86.json"));
  bool stage_line = false;
  for (const std::string& s : r->stages) stage_line = stage_line || s.rfind("exact frontiers (Fig. 3/4", 0) == 0;
  EXPECT_TRUE(stage_line);
  const std::string md = Slurp(r->report_md), html = Slurp(r->report_html);
  for (const std::string* text : {&md, &html}) {
    EXPECT_NE(text->find("Exact frontiers over the crossbar budget"), std::string::npos);
    EXPECT_NE(text->find("frontier_0_resnet18_int8_klein-arm.png"), std::string::npos);
    EXPECT_NE(text->find("frontier_1_resnet18_int8_klein-x86.png"), std::string::npos);
  }
  EXPECT_NE(md.find("| resnet18_int8 | klein-arm | 50 ns |"), std::string::npos);
  EXPECT_NE(md.find("| resnet18_int8 | klein-x86 | 1000 ns |"), std::string::npos);
  EXPECT_NE(md.find("exact frontiers (Fig. 3/4 over every crossbar budget): 4 curves in 2 files"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "report" / "frontier_0_resnet18_int8_klein-arm.svg"));
  // The grid again with PUMA's cell layout, beside the idealised plans (issue 44).
  EXPECT_NE(md.find("The grid with weights as cells store them (PUMA's cell layout)"), std::string::npos);
  EXPECT_NE(md.find("| resnet18_int8 | klein-arm | 100 |"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "klein_physical.jsonl"));
  std::error_code ec;
  fs::remove_all(dir, ec);
}

INSTANTIATE_TEST_SUITE_P(Slow, ReproduceQuick, ::testing::Values(0));

}  // namespace
}  // namespace hetplan
