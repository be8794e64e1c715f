// gnuplot figures and the HTML/Markdown report, from synthetic result rows
// (no profiling): every figure exists as PNG and SVG and is non-empty, the
// papers' numbers sit beside ours, marked.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hetplan/report/html_report.h"
#include "hetplan/report/plots.h"
#include "hetplan/report/schedule_file.h"
#include "testing/scratch.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

class ReportTest : public test_util::TestWithDir {
 protected:
  ReportTest() : TestWithDir("hetplan_report_test_") {}
};

// A Klein-style row: host "cpu" and spatial "cim".
nlohmann::json Row(const std::string& model, const std::string& platform, int crossbars, int ns,
                   const std::string& solver, double speedup, const std::string& objective = "latency") {
  const double cpu_only = 10000;
  const double makespan = cpu_only / speedup;
  nlohmann::json r = {
      {"key", fmt::format("{}|{}|{}|{}|{}|{}", model, platform, crossbars, ns, solver, objective)},
      {"model", model},
      {"platform", platform},
      {"platform_name", platform},
      {"params", {{"cim.crossbars", std::to_string(crossbars)}, {"cim.mvm_latency_ns", std::to_string(ns)}}},
      {"solver", solver},
      {"objective", objective},
      {"status", solver == "ilp" ? "optimal" : "heuristic"},
      {"makespan_us", makespan},
      {"cpu_only_us", cpu_only},
      {"best_single_us", cpu_only},
      {"speedup", speedup},
      {"speedup_vs_best_single", speedup},
      {"energy_uj", nullptr},
      {"seconds", 0.5},
      {"gap", 0.0},
      {"variables", 100},
      {"constraints", 200},
      {"operators", 49},
      {"formulation", "paper"},
      {"time_limited", false},
      {"host_cpu", "Test CPU"},
      {"crossbars_used", crossbars / 2},
      {"crossbar_capacity", crossbars},
      {"devices",
       {{"cpu", {{"kind", "cpu"}, {"operators", 40}, {"busy_us", makespan * 0.8}}},
        {"cim", {{"kind", "cim"}, {"operators", 9}, {"busy_us", makespan * 0.3}, {"crossbars", crossbars / 2}}}}}};
  return r;
}

std::vector<nlohmann::json> Grid() {
  std::vector<nlohmann::json> rows;
  for (const char* model : {"resnet18", "yolov5n"}) {
    for (const char* platform : {"klein-arm", "klein-x86"}) {
      for (int xb : {25, 100}) {
        for (int ns : {50, 1000}) {
          const double s = 1.0 + xb / 25.0 * (ns == 50 ? 2 : 0.5);
          rows.push_back(Row(model, platform, xb, ns, "ilp", s));
          rows.push_back(Row(model, platform, xb, ns, "greedy", s * 0.8));
        }
      }
    }
  }
  return rows;
}

void ExpectFigure(const fs::path& dir, const Figure& f) {
  for (const std::string& name : {f.png, f.svg, f.script, f.data}) {
    ASSERT_FALSE(name.empty());
    ASSERT_TRUE(fs::exists(dir / name)) << name;
    EXPECT_GT(fs::file_size(dir / name), 10u) << name;
  }
  std::ifstream png(dir / f.png, std::ios::binary);
  char magic[4] = {};
  png.read(magic, 4);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
}

using test_util::Slurp;

TEST_F(ReportTest, EveryFigureFromRows) {
  if (!GnuplotAvailable()) GTEST_SKIP() << "gnuplot not installed";
  const auto rows = Grid();
  const std::string d = dir_.string();
  auto f3 = PlotSpeedupVsCrossbars(rows, "resnet18", "ilp", d);
  ASSERT_TRUE(f3.ok()) << f3.status().message();
  ExpectFigure(dir_, *f3);
  // One data block per platform and latency, two points each.
  const std::string data = Slurp(dir_ / f3->data);
  EXPECT_NE(data.find("# platform klein-x86 cim.mvm_latency_ns 1000"), std::string::npos);
  auto f4 = PlotSpeedupPerModel(rows, "50", "ilp", d);
  ASSERT_TRUE(f4.ok()) << f4.status().message();
  ExpectFigure(dir_, *f4);
  auto f5 = PlotLatencySplit(rows, "yolov5n", "ilp", d);
  ASSERT_TRUE(f5.ok()) << f5.status().message();
  ExpectFigure(dir_, *f5);
  EXPECT_NE(Slurp(dir_ / f5->data).find(" 40 9 "), std::string::npos);  // operator counts per device
  auto side = PlotSolversSideBySide(rows, "klein-arm", "latency", {"cim.crossbars=100", "cim.mvm_latency_ns=50"},
                                    {"ilp", "greedy"}, "speedup", "Speedup", "side", d);
  ASSERT_TRUE(side.ok()) << side.status().message();
  ExpectFigure(dir_, *side);
  // Nothing to draw is kNotFound, not a crash.
  auto none = PlotSpeedupVsCrossbars(rows, "no-such-model", "ilp", d);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), ErrorCode::kNotFound);
}

TEST_F(ReportTest, GanttChartOfAScheduleFile) {
  if (!GnuplotAvailable()) GTEST_SKIP() << "gnuplot not installed";
  PlanFile s;
  s.model_name = "tiny";
  s.platform = "klein-arm";
  s.overrides = {"cim.crossbars=10"};
  s.solver = "exact";
  s.devices.resize(2);
  s.devices[0].name = "cpu";
  s.devices[1].name = "cim";
  s.makespan_us = 30.0;
  s.operators.resize(2);
  s.operators[0].device = "cim";
  s.operators[0].device_index = 1;
  s.operators[0].finish_us = 10.0;
  s.operators[1].device = "cpu";
  s.operators[1].device_index = 0;
  s.operators[1].start_us = 10.0;
  s.operators[1].finish_us = 30.0;
  auto g = PlotGantt(s, "gantt", dir_.string());
  ASSERT_TRUE(g.ok()) << g.status().message();
  ExpectFigure(dir_, *g);
  EXPECT_NE(g->title.find("makespan 30.0 µs"), std::string::npos) << g->title;
  auto bad = PlotGantt(PlanFile{}, "bad", dir_.string());
  EXPECT_FALSE(bad.ok());
}

// ReadPlanFile keeps what the Python Schedule reads: each operator's nodes,
// its cost on every PU (none where unsupported), its output bytes, and each
// edge's elements beside its bytes.
TEST(ReadPlanFileTest, OperatorDetailsAndEdgeElements) {
  const nlohmann::json s = {
      {"format", "hetplan-schedule"},
      {"model", {{"file", "tiny.onnx"}, {"name", "tiny"}}},
      {"devices",
       {{{"name", "cpu"}, {"kind", "cpu"}, {"execution", "serial"}},
        {{"name", "cim"}, {"kind", "cim"}, {"execution", "spatial"}, {"capacity_crossbars", 10}}}},
      {"operators",
       {{{"id", 1}, {"name", "relu0"}, {"type", "Relu"}, {"nodes", {"relu0"}}, {"device", "cpu"},
         {"cost_us", {{"cpu", 2.0}, {"cim", nullptr}}}, {"crossbars", nullptr}, {"output_bytes", 64},
         {"start_us", 5.0}, {"finish_us", 7.0}},
        {{"id", 0}, {"name", "conv0"}, {"type", "Conv"}, {"nodes", {"conv0", "bias0"}}, {"device", "cim"},
         {"cost_us", {{"cpu", 9.0}, {"cim", 5.0}}}, {"crossbars", 3}, {"output_bytes", 128},
         {"start_us", 0.0}, {"finish_us", 5.0}}}},
      {"edges", {{{"from", 0}, {"to", 1}, {"elements", 32}, {"bytes", 128}, {"transfer_us", 1.5}}}}};
  auto p = ReadPlanFile(s, "the plan");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->operators.size(), 2u);
  const PlanFileOperator& conv = p->operators[0];
  EXPECT_EQ(conv.nodes, (std::vector<std::string>{"conv0", "bias0"}));
  EXPECT_EQ(conv.cost_us.at("cim"), 5.0);
  EXPECT_EQ(conv.cost_us.at("cpu"), 9.0);
  EXPECT_EQ(conv.output_bytes, 128);
  EXPECT_EQ(conv.crossbars, 3);
  const PlanFileOperator& relu = p->operators[1];
  EXPECT_EQ(relu.nodes, (std::vector<std::string>{"relu0"}));
  EXPECT_FALSE(relu.cost_us.at("cim").has_value());
  EXPECT_EQ(relu.cost_us.at("cpu"), 2.0);
  EXPECT_EQ(relu.output_bytes, 64);
  EXPECT_FALSE(relu.crossbars.has_value());
  ASSERT_EQ(p->edges.size(), 1u);
  EXPECT_EQ(p->edges[0].elements, 32);
  EXPECT_EQ(p->edges[0].bytes, 128);
  EXPECT_EQ(p->edges[0].transfer_us, 1.5);
  EXPECT_EQ(p->devices[1].capacity_crossbars, 10);
}

TEST_F(ReportTest, ReportHasFiguresTablesAndPaperValues) {
  if (!GnuplotAvailable()) GTEST_SKIP() << "gnuplot not installed";
  auto rows = Grid();
  // A point run twice: the later row wins.
  nlohmann::json rerun = Row("resnet18", "klein-arm", 100, 50, "ilp", 12.5);
  // BIDENT-style rows with energy.
  nlohmann::json soc = Row("resnet18", "soc-example", 0, 0, "map", 1.1);
  soc["params"] = nlohmann::json::object();
  soc["objective"] = "energy";
  soc["energy_uj"] = 90.0;
  soc["energy_saving_vs_best_single"] = 0.1;
  soc["key"] = "soc-energy";
  const fs::path results = dir_ / "results.jsonl";
  {
    std::ofstream f(results);
    for (const nlohmann::json& r : rows) f << r.dump() << "\n";
    f << rerun.dump() << "\n" << soc.dump() << "\n{\"truncated\": \n";
  }
  ReportInputs in;
  in.results = {results.string()};
  in.out_dir = (dir_ / "report").string();
  in.run_notes = {"test run"};
  auto out = WriteReport(in);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(out->rows, static_cast<int>(rows.size()) + 1);
  EXPECT_EQ(out->bad_lines, 1);
  EXPECT_GE(out->figures.size(), 5u);
  for (const Figure& f : out->figures) ExpectFigure(dir_ / "report", f);
  const std::string html = Slurp(out->html_path);
  const std::string md = Slurp(out->markdown_path);
  for (const std::string& doc : {html, md}) {
    EXPECT_NE(doc.find("measured here"), std::string::npos);
    EXPECT_NE(doc.find("(paper)"), std::string::npos);
    EXPECT_NE(doc.find("Test CPU"), std::string::npos);    // the host named
    EXPECT_NE(doc.find("Cortex-A72"), std::string::npos);  // the paper's host named
    EXPECT_NE(doc.find("30.90×"), std::string::npos);      // Fig. 3, ARM, 100 crossbars, 50 ns (paper)
    EXPECT_NE(doc.find("12.50×"), std::string::npos);      // the rerun's value
    EXPECT_NE(doc.find("fig3_speedup_resnet18.png"), std::string::npos);
    EXPECT_NE(doc.find("503"), std::string::npos);    // Table I, YOLOv5n mean solve s (paper)
    EXPECT_NE(doc.find("9.2 %"), std::string::npos);  // BIDENT energy saving (paper)
    EXPECT_NE(doc.find("test run"), std::string::npos);
  }
  EXPECT_NE(html.find("<img src=\"fig4_speedup_models_50ns.png\""), std::string::npos);
}

// A two-request row of the pair study (dse --pairs all): `b` empty for a
// model with itself.
nlohmann::json PairRow(const std::string& a, const std::string& b, const std::string& solver, double vs_serial,
                       double vs_naive) {
  const double makespan = 1000;
  nlohmann::json r = {{"key", a + "+" + b + "|" + solver}, {"model", a}, {"platform", "soc-example"},
                      {"solver", solver}, {"objective", "latency"}, {"status", "optimal"}, {"requests", 2},
                      {"makespan_us", makespan}, {"best_serial_us", makespan * vs_serial},
                      {"speedup_vs_serial", vs_serial}, {"naive_multi_pu_us", makespan * vs_naive},
                      {"cost_basis", {{"cpu", "analytical"}}}};
  if (!b.empty()) r["second_model"] = b;
  return r;
}

TEST_F(ReportTest, PairStudyHasItsGeometricMeansAndFigure) {
  if (!GnuplotAvailable()) GTEST_SKIP() << "gnuplot not installed";
  const fs::path results = dir_ / "pairs.jsonl";
  {
    std::ofstream f(results);
    // Speedups 1, 2, 4 and 8 over serial: geo-mean 2.83×; over naive 0.5, 1, 2, 4: 1.41×.
    f << PairRow("a", "", "map_concurrent", 1, 0.5).dump() << "\n"
      << PairRow("a", "b", "map_concurrent", 2, 1).dump() << "\n"
      << PairRow("b", "", "map_concurrent", 4, 2).dump() << "\n"
      << PairRow("a", "c", "map_concurrent", 8, 4).dump() << "\n"
      << PairRow("a", "b", "pair_serial", 1, 0.5).dump() << "\n";
  }
  ReportInputs in;
  in.results = {results.string()};
  in.out_dir = (dir_ / "report").string();
  auto out = WriteReport(in);
  ASSERT_TRUE(out.ok()) << out.status().message();
  const std::string md = Slurp(out->markdown_path);
  EXPECT_NE(md.find("BIDENT's pair study"), std::string::npos) << md;
  EXPECT_NE(md.find("| map_concurrent | 4 | 2.83× | 1.00×–8.00× | 1.41× | 0 | 3.42×"), std::string::npos) << md;
  EXPECT_NE(md.find("| pair_serial | 1 | 1.00×"), std::string::npos) << md;
  bool drawn = false;
  for (const Figure& f : out->figures) {
    if (f.stem != "fig7_pairs_soc-example_map_concurrent") continue;
    drawn = true;
    ExpectFigure(dir_ / "report", f);
    const std::string data = Slurp(dir_ / "report" / f.data);
    // Sorted by the speedup over serial: a+a first, a+c last.
    EXPECT_LT(data.find("a+a"), data.find("a+b"));
    EXPECT_LT(data.find("b+b"), data.find("a+c"));
  }
  EXPECT_TRUE(drawn);
}

TEST_F(ReportTest, TablesOnlyAndErrors) {
  const fs::path results = dir_ / "results.jsonl";
  {
    std::ofstream f(results);
    for (const nlohmann::json& r : Grid()) f << r.dump() << "\n";
  }
  ReportInputs in;
  in.results = {results.string()};
  in.out_dir = (dir_ / "tables").string();
  in.figures = false;
  auto out = WriteReport(in);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(out->figures.empty());
  EXPECT_GT(fs::file_size(out->html_path), 1000u);
  EXPECT_FALSE(fs::exists(dir_ / "tables" / "fig3_speedup_resnet18.png"));
  in.results = {(dir_ / "missing.jsonl").string()};
  auto missing = WriteReport(in);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("missing.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace hetplan
