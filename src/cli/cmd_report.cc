// `hetplan report [RESULTS.jsonl...] [--frontier F.json...] --out DIR`:
// figures and tables of a sweep and of frontier files as DIR/index.html and
// DIR/report.md (docs/dse.md).
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "hetplan/report/html_report.h"

namespace hetplan::cli {

void RegisterReport(CLI::App& app) {
  auto* sub = app.add_subcommand("report", "Draw the figures and tables of a dse results file into an HTML report");
  struct Opts {
    std::vector<std::string> results, schedules, frontiers;
    std::string out = "report";
    std::string title;
    bool no_figures = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("results", o->results,
                  "Results files written by `hetplan dse` (JSON lines); optional with --frontier");
  sub->add_option("--out", o->out, "Output folder (index.html, report.md, figures)")->default_val("report");
  sub->add_option("--schedule", o->schedules, "A schedule file to draw as a Gantt chart (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--frontier", o->frontiers,
                  "A frontier file written by `hetplan frontier` to draw as steps (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--title", o->title, "Report title");
  sub->add_flag("--no-figures", o->no_figures, "Tables only (gnuplot not needed)");
  Register(sub, [o]() -> int {
    if (o->results.empty() && o->frontiers.empty()) {
      return ReportError(Status(ErrorCode::kInvalidArgument,
                                "report: nothing to report; give a results file (`hetplan dse … --out FILE`) or "
                                "--frontier FILE (`hetplan frontier … --out FILE`)"));
    }
    ReportInputs in;
    in.results = o->results;
    in.out_dir = o->out;
    in.schedule_files = o->schedules;
    in.frontier_files = o->frontiers;
    if (!o->title.empty()) in.title = o->title;
    in.figures = !o->no_figures;
    auto r = WriteReport(in);
    if (!r.ok()) return ReportError(r.status());
    std::printf("rows      %d%s\n", r->rows,
                r->bad_lines ? fmt::format(" ({} unreadable lines skipped)", r->bad_lines).c_str() : "");
    if (!o->frontiers.empty()) {
      std::printf("frontiers %zu files, %d curves\n", o->frontiers.size(), r->frontier_curves);
    }
    std::printf("figures   %zu (PNG + SVG, gnuplot scripts beside them)\n", r->figures.size());
    for (const std::string& s : r->skipped) std::printf("skipped   %s\n", s.c_str());
    std::printf("wrote     %s\n          %s\n", r->html_path.c_str(), r->markdown_path.c_str());
    return 0;
  });
}

}  // namespace hetplan::cli
