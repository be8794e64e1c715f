// Frontier files in the report: the reader (single- and multi-curve, every
// malformed field one error naming the file and the field), the step figure
// (one step series per curve, unproven steps dashed, the paper's budgets
// marked with the value read off the steps), the Pareto figure, and the
// frontier table, whose numbers are checked against the file's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "hetplan/report/frontier_plots.h"
#include "hetplan/report/html_report.h"
#include "hetplan/report/plots.h"
#include "testing/scratch.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class FrontierReportTest : public test_util::TestWithDir {
 protected:
  FrontierReportTest() : TestWithDir("hetplan_frontier_report_test_") {}
  std::string Write(const std::string& name, const Json& j) const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << j.dump(1);
    return p.string();
  }
};

using test_util::Slurp;

// The single-curve fields, as `hetplan frontier` writes them: the steps
// (budget, makespan, status) over [lo, hi], CPU-only 10 ms.
Json CurveFields(const std::vector<std::tuple<int, double, const char*>>& steps, int lo, int hi,
                 bool complete = true, int for_all = -1) {
  const double cpu = 10000;
  Json bps = Json::array();
  for (const auto& [xb, makespan, status] : steps) {
    bps.push_back({{"crossbars", xb},
                   {"makespan_us", makespan},
                   {"speedup", cpu / makespan},
                   {"status", status},
                   {"lower_bound_us", makespan * 0.9}});
  }
  const auto& last = steps.back();
  return {{"crossbars_range", {lo, hi}},
          {"crossbars_for_all", for_all < 0 ? hi : for_all},
          {"cpu_only_us", cpu},
          {"relative_gap", 1e-4},
          {"solver",
           {{"name", "exact"},
            {"complete", complete},
            {"termination", complete ? "proved" : "time_limit"},
            {"segments", 3},
            {"searches", 1},
            {"nodes", 100},
            {"seconds", 0.1}}},
          {"feasible_from", std::get<0>(steps.front())},
          {"breakpoints", bps},
          {"lower_bounds", Json::array()},
          {"saturation",
           {{"crossbars", std::get<0>(last)},
            {"makespan_us", std::get<1>(last)},
            {"speedup", cpu / std::get<1>(last)},
            {"status", complete ? "optimal" : "feasible"},
            {"range_covers_all", true}}}};
}

Json Header() {
  return {{"format", "hetplan-frontier"},
          {"version", 1},
          {"model", {{"file", "build/models/resnet18_int8.onnx"}, {"sha256", "ab"}, {"operators", 30}}},
          {"platform", {{"name", "klein-arm"}, {"source", "klein-arm"}, {"overrides", Json::array()}}},
          {"pu", "cim"},
          {"objective", "latency"}};
}

Json SingleCurve() {
  Json j = Header();
  j.update(CurveFields({{0, 10000, "optimal"}, {12, 4000, "optimal"}, {60, 2500, "optimal"}, {150, 1250, "optimal"}},
                       0, 180));
  return j;
}

// Four MVM latencies; the 1000 ns curve stopped by its time limit.
Json MultiCurve() {
  Json j = Header();
  j["axis"] = {{"key", "cim.mvm_latency_ns"}, {"values", {50, 100, 500, 1000}}};
  j["curves"] = Json::array();
  const double base[] = {1000, 1500, 4000, 7000};
  const int ns[] = {50, 100, 500, 1000};
  for (int k = 0; k < 4; ++k) {
    Json c = CurveFields({{0, 10000, "optimal"},
                          {20, base[k] * 3, "optimal"},
                          {45, base[k] * 2, k == 3 ? "feasible" : "optimal"},
                          {110, base[k], k == 3 ? "feasible" : "optimal"}},
                         0, 240, k != 3);
    c["value"] = ns[k];
    c["platform"] = {{"name", "klein-arm"},
                     {"source", "klein-arm"},
                     {"overrides", {"cim.mvm_latency_ns=" + std::to_string(ns[k])}}};
    if (k == 0) {
      c["pareto"] = {{"crossbars", 240},
                     {"complete", false},
                     {"points",
                      {{{"makespan_us", 1000}, {"energy_uj", 900}, {"latency_cap_us", 1000}, {"status", "optimal"}},
                       {{"makespan_us", 1400}, {"energy_uj", 700}, {"latency_cap_us", 1400}, {"status", "optimal"}},
                       {{"makespan_us", 2100}, {"energy_uj", 650}, {"latency_cap_us", 2100}, {"status", "feasible"}}}}};
    }
    j["curves"].push_back(std::move(c));
  }
  return j;
}

// The speedup at budget b as the brief defines it, computed from the JSON
// independently of the reader: the last breakpoint with crossbars ≤ b.
const Json* BreakpointAt(const Json& curve, int b) {
  const Json* at = nullptr;
  for (const Json& bp : curve["breakpoints"]) {
    if (bp["crossbars"].get<int>() <= b) at = &bp;
  }
  return at;
}

TEST_F(FrontierReportTest, ReadsASingleCurveFileAsOneCurveWithoutAValue) {
  auto f = ReadFrontierFile(Write("f.json", SingleCurve()));
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->curves.size(), 1u);
  const FrontierCurve& c = f->curves[0];
  EXPECT_FALSE(c.value.has_value());
  EXPECT_EQ(f->pu, "cim");
  EXPECT_EQ(c.lo, 0);
  EXPECT_EQ(c.hi, 180);
  ASSERT_EQ(c.steps.size(), 4u);
  ASSERT_TRUE(c.saturation.has_value());
  EXPECT_EQ(c.saturation->crossbars, 150);
  // The step holding at a budget is the last breakpoint at or below it.
  EXPECT_EQ(StepAtBudget(c, 0)->crossbars, 0);
  EXPECT_EQ(StepAtBudget(c, 11)->crossbars, 0);
  EXPECT_EQ(StepAtBudget(c, 12)->crossbars, 12);
  EXPECT_EQ(StepAtBudget(c, 100)->crossbars, 60);
  EXPECT_EQ(StepAtBudget(c, 180)->crossbars, 150);
  // The range holds every operator at once (crossbars_for_all = HI): a
  // larger budget changes nothing.
  EXPECT_EQ(StepAtBudget(c, 1000)->crossbars, 150);
  EXPECT_EQ(CurveLabel(*f, c), "klein-arm");
  // A range that stops short of it says nothing past HI.
  Json j = SingleCurve();
  j["crossbars_for_all"] = 400;
  auto g = ReadFrontierFile(Write("g.json", j));
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(StepAtBudget(g->curves[0], 180)->crossbars, 150);
  EXPECT_EQ(StepAtBudget(g->curves[0], 181), nullptr);
}

TEST_F(FrontierReportTest, ReadsAMultiCurveFileWithItsAxis) {
  auto f = ReadFrontierFile(Write("f.json", MultiCurve()));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->axis_key, "cim.mvm_latency_ns");
  ASSERT_EQ(f->curves.size(), 4u);
  EXPECT_EQ(*f->curves[2].value, 500);
  EXPECT_EQ(CurveLabel(*f, f->curves[0]), "50 ns");
  EXPECT_EQ(f->curves[1].overrides, std::vector<std::string>{"cim.mvm_latency_ns=100"});
  ASSERT_TRUE(f->curves[0].pareto.has_value());
  EXPECT_EQ(f->curves[0].pareto->points.size(), 3u);
  EXPECT_FALSE(f->curves[1].pareto.has_value());
  EXPECT_FALSE(f->curves[3].complete);
  EXPECT_EQ(f->curves[3].termination, "time_limit");
}

TEST_F(FrontierReportTest, EveryMalformedFieldIsOneErrorNamingTheFileAndTheField) {
  struct Case {
    std::string name;
    Json doc;
    std::string field;
  };
  std::vector<Case> cases;
  auto single = [&](const std::string& name, auto edit, const std::string& field) {
    Json j = SingleCurve();
    edit(j);
    cases.push_back({name, j, field});
  };
  auto multi = [&](const std::string& name, auto edit, const std::string& field) {
    Json j = MultiCurve();
    edit(j);
    cases.push_back({name, j, field});
  };
  single("format", [](Json& j) { j["format"] = "hetplan-schedule"; }, "format");
  single("noformat", [](Json& j) { j.erase("format"); }, "format");
  single("model", [](Json& j) { j["model"] = "resnet"; }, "model");
  single("pu", [](Json& j) { j["pu"] = 3; }, "pu");
  single("nobps", [](Json& j) { j.erase("breakpoints"); }, "breakpoints");
  single("bpsobj", [](Json& j) { j["breakpoints"] = Json::object(); }, "breakpoints");
  single("xb", [](Json& j) { j["breakpoints"][1]["crossbars"] = "12"; }, "breakpoints[1].crossbars");
  single("xbfrac", [](Json& j) { j["breakpoints"][1]["crossbars"] = 12.5; }, "breakpoints[1].crossbars");
  single("noms", [](Json& j) { j["breakpoints"][2].erase("makespan_us"); }, "breakpoints[2].makespan_us");
  single("status", [](Json& j) { j["breakpoints"][0]["status"] = true; }, "breakpoints[0].status");
  single("order", [](Json& j) { j["breakpoints"][2]["crossbars"] = 5; }, "breakpoints[2].crossbars");
  single("outside", [](Json& j) { j["breakpoints"][3]["crossbars"] = 500; }, "breakpoints[3].crossbars");
  single("range", [](Json& j) { j["crossbars_range"] = {0}; }, "crossbars_range");
  single("rangetype", [](Json& j) { j["crossbars_range"] = {0, "x"}; }, "crossbars_range[1]");
  single("cpu", [](Json& j) { j.erase("cpu_only_us"); }, "cpu_only_us");
  single("complete", [](Json& j) { j["solver"]["complete"] = "yes"; }, "solver.complete");
  single("saturation", [](Json& j) { j["saturation"]["crossbars"] = nullptr; }, "saturation.crossbars");
  multi("curves", [](Json& j) { j["curves"] = 4; }, "curves");
  multi("empty", [](Json& j) { j["curves"] = Json::array(); }, "curves");
  multi("axis", [](Json& j) { j.erase("axis"); }, "axis");
  multi("value", [](Json& j) { j["curves"][2].erase("value"); }, "curves[2].value");
  multi("cbp", [](Json& j) { j["curves"][1]["breakpoints"][0]["speedup"] = "fast"; },
        "curves[1].breakpoints[0].speedup");
  multi("pareto", [](Json& j) { j["curves"][0]["pareto"]["points"][1]["energy_uj"] = "x"; },
        "curves[0].pareto.points[1].energy_uj");
  multi("paretoorder", [](Json& j) { j["curves"][0]["pareto"]["points"][2]["makespan_us"] = 10; },
        "curves[0].pareto.points[2].makespan_us");
  for (const Case& c : cases) {
    const std::string path = Write(c.name + ".json", c.doc);
    auto f = ReadFrontierFile(path);
    ASSERT_FALSE(f.ok()) << c.name;
    const std::string m = f.status().message();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.rfind(path + ": " + c.field + ":", 0), 0u) << c.name << ": " << m;
  }
  std::ofstream(dir_ / "text.json") << "not json {";
  auto f = ReadFrontierFile((dir_ / "text.json").string());
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("text.json: not JSON"), std::string::npos) << f.status().message();
  EXPECT_FALSE(ReadFrontierFile((dir_ / "absent.json").string()).ok());
}

TEST_F(FrontierReportTest, TheFigureHasOneStepSeriesPerCurveAndMarksThePaperBudgets) {
  if (!GnuplotAvailable()) GTEST_SKIP() << "gnuplot not installed";
  const Json doc = MultiCurve();
  auto f = ReadFrontierFile(Write("f.json", doc));
  ASSERT_TRUE(f.ok()) << f.status().message();
  const fs::path out = dir_ / "fig";
  auto fig = PlotFrontier(*f, "frontier_test", out.string());
  ASSERT_TRUE(fig.ok()) << fig.status().message();
  for (const std::string& name : {fig->png, fig->svg, fig->script, fig->data}) {
    ASSERT_TRUE(fs::exists(out / name)) << name;
    EXPECT_GT(fs::file_size(out / name), 10u) << name;
  }
  const std::string script = Slurp(out / fig->script);
  // One titled step series per curve (the script holds the body twice: PNG and SVG).
  const std::regex titled("with steps lw 2 dt [12] lc rgb '[^']*' title '([^']*)'");
  std::vector<std::string> titles;
  for (auto it = std::sregex_iterator(script.begin(), script.end(), titled); it != std::sregex_iterator(); ++it) {
    titles.push_back((*it)[1]);
  }
  ASSERT_EQ(titles.size(), 8u) << script;
  EXPECT_EQ(std::vector<std::string>(titles.begin(), titles.begin() + 4),
            (std::vector<std::string>{"50 ns", "100 ns", "500 ns", "1000 ns"}));
  // The 1000 ns curve's last two steps are not proven: one dashed series, untitled.
  const std::regex dashed("with steps lw 2 dt 2 lc rgb '[^']*' notitle");
  EXPECT_EQ(std::distance(std::sregex_iterator(script.begin(), script.end(), dashed), std::sregex_iterator()), 2);
  EXPECT_NE(fig->caption.find("2 of the 16 steps are not proven optimal"), std::string::npos) << fig->caption;
  // The four budgets marked, each curve's value read off its steps.
  for (int b : {25, 50, 100, 200}) {
    EXPECT_NE(script.find(fmt::format("set arrow from {b}, graph 0 to {b}, graph 1", fmt::arg("b", b))),
              std::string::npos);
  }
  const std::string data = Slurp(out / fig->data);
  for (size_t k = 0; k < 4; ++k) {
    const Json& curve = doc["curves"][k];
    const std::string marks = fmt::format("# curve {} ({} ns) at the paper's budgets", k, curve["value"].get<int>());
    const size_t at = data.find(marks);
    ASSERT_NE(at, std::string::npos) << data;
    std::istringstream block(data.substr(data.find('\n', at) + 1));
    for (int b : {25, 50, 100, 200}) {
      int xb = 0;
      double speedup = 0;
      block >> xb >> speedup;
      EXPECT_EQ(xb, b);
      EXPECT_NEAR(speedup, (*BreakpointAt(curve, b))["speedup"].get<double>(), 1e-4) << k << " at " << b;
    }
  }
}

TEST_F(FrontierReportTest, TheReportHasTheFrontierTableAndFiguresWithTheFilesNumbers) {
  if (!GnuplotAvailable()) GTEST_SKIP() << "gnuplot not installed";
  const Json multi = MultiCurve();
  Json single = SingleCurve();
  single["crossbars_for_all"] = 400;  // the range stops short: nothing is said at 200
  ReportInputs in;
  in.frontier_files = {Write("multi.json", multi), Write("single.json", single)};
  in.out_dir = (dir_ / "report").string();
  auto r = WriteReport(in);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->frontier_curves, 5);
  // Two step figures and one Pareto figure (only the multi-curve file has a front).
  int steps = 0, pareto = 0;
  for (const Figure& f : r->figures) {
    steps += f.stem.rfind("frontier_", 0) == 0;
    pareto += f.stem.rfind("pareto_", 0) == 0;
    EXPECT_TRUE(fs::exists(dir_ / "report" / f.png)) << f.png;
    EXPECT_TRUE(fs::exists(dir_ / "report" / f.svg)) << f.svg;
  }
  EXPECT_EQ(steps, 2);
  EXPECT_EQ(pareto, 1);
  const std::string md = Slurp(r->markdown_path), html = Slurp(r->html_path);
  EXPECT_NE(md.find("Exact frontiers over the crossbar budget"), std::string::npos);
  EXPECT_NE(html.find("Exact frontiers over the crossbar budget"), std::string::npos);
  // Each curve's row: breakpoints, saturation, the speedups at the four budgets, from the file.
  auto expect_row = [&](const Json& curve, const std::string& label) {
    const Json& sat = curve["saturation"];
    const size_t n = curve["breakpoints"].size();
    int proven = 0;
    for (const Json& bp : curve["breakpoints"]) proven += bp["status"] == "optimal";
    std::string row = fmt::format("| resnet18_int8 | klein-arm | {} | 0–{} | {} |", label,
                                  curve["crossbars_range"][1].get<int>(),
                                  proven == static_cast<int>(n) ? std::to_string(n)
                                                                : fmt::format("{} ({} optimal)", n, proven));
    row += curve["solver"]["complete"].get<bool>() ? " complete |" : " stopped: time_limit |";
    row += fmt::format(" {} ({}) | {:.2f}× |", sat["crossbars"].get<int>(), sat["status"].get<std::string>(),
                       sat["speedup"].get<double>());
    for (int b : {25, 50, 100, 200}) {
      if (b > curve["crossbars_range"][1].get<int>() &&
          curve["crossbars_range"][1].get<int>() < curve["crossbars_for_all"].get<int>()) {
        row += " outside the range |";
        continue;
      }
      const Json* bp = BreakpointAt(curve, b);
      row += fmt::format(" {:.2f}×{} |", (*bp)["speedup"].get<double>(),
                         (*bp)["status"] == "optimal" ? "" : " (feasible)");
    }
    EXPECT_NE(md.find(row), std::string::npos) << row << "\n" << md;
  };
  for (size_t k = 0; k < 4; ++k) {
    expect_row(multi["curves"][k], fmt::format("{} ns", multi["curves"][k]["value"].get<int>()));
  }
  expect_row(single, "—");
}

TEST_F(FrontierReportTest, ABadFrontierFileIsOneErrorAndWritesNothing) {
  Json bad = MultiCurve();
  bad["curves"][1]["breakpoints"][2].erase("status");
  ReportInputs in;
  in.frontier_files = {Write("good.json", SingleCurve()), Write("bad.json", bad)};
  in.out_dir = (dir_ / "report").string();
  in.figures = false;
  auto r = WriteReport(in);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.json: curves[1].breakpoints[2].status: missing"), std::string::npos)
      << r.status().message();
  EXPECT_FALSE(fs::exists(dir_ / "report"));
}

TEST_F(FrontierReportTest, NoFiguresNeedsNoGnuplot) {
  const std::string path = Write("f.json", MultiCurve());
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  fs::create_directories(dir_ / "empty_bin");
  setenv("PATH", (dir_ / "empty_bin").c_str(), 1);
  ASSERT_FALSE(GnuplotAvailable());
  ReportInputs in;
  in.frontier_files = {path};
  in.out_dir = (dir_ / "report").string();
  in.figures = false;
  auto r = WriteReport(in);
  in.figures = true;
  in.out_dir = (dir_ / "report2").string();
  auto with_figures = WriteReport(in);
  setenv("PATH", old_path.c_str(), 1);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->figures.empty());
  const std::string md = Slurp(r->markdown_path);
  EXPECT_NE(md.find("| resnet18_int8 | klein-arm | 50 ns |"), std::string::npos) << md;
  for (const auto& e : fs::directory_iterator(dir_ / "report")) {
    EXPECT_NE(e.path().extension(), ".png") << e.path();
  }
  ASSERT_FALSE(with_figures.ok());
  EXPECT_NE(with_figures.status().message().find("--no-figures"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "report2"));
}

}  // namespace
}  // namespace hetplan
