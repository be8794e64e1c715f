// The report of a sweep: `hetplan report RESULTS.jsonl --out DIR` writes
// DIR/index.html and DIR/report.md with the gnuplot figures (plots.h) and the
// tables of both papers' evaluations, our numbers marked "measured here" and
// the papers' published numbers beside them marked "paper" wherever the same
// quantity exists (docs/dse.md lists them).
#pragma once

#include <string>
#include <vector>

#include "hetplan/report/plots.h"
#include "hetplan/util/status.h"

namespace hetplan {

struct ReportInputs {
  std::vector<std::string> results;  // results files (JSON lines), read in order
  std::string out_dir;
  std::vector<std::string> schedule_files;  // one Gantt chart each
  // Frontier files (`hetplan frontier`, frontier_plots.h): a step figure
  // each and a row per curve in the frontier table.
  std::vector<std::string> frontier_files;
  std::string title = "hetplan: heterogeneous partitioning and mapping, reproduced on this machine";
  std::vector<std::string> run_notes;  // shown in the "How this was produced" section (commands, wall times)
  bool figures = true;                 // false: tables only (no gnuplot needed)
};

struct ReportOutput {
  std::string html_path, markdown_path;
  std::vector<Figure> figures;
  std::vector<std::string> skipped;  // figures or tables left out, and why
  int rows = 0, bad_lines = 0;
  int frontier_curves = 0;  // over every frontier file
};

// Errors: unreadable results, schedule or frontier files (a frontier file is
// checked before anything is written), gnuplot missing or failing
// (with figures on), an unwritable folder. Sections whose rows are absent are
// left out and listed in `skipped` (and in the report).
Result<ReportOutput> WriteReport(const ReportInputs& in);

}  // namespace hetplan
