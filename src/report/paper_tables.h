// The sweep report's tables of the papers' evaluations (paper_tables.cc):
// the papers' published numbers and the sections that set a results file's
// rows beside them. html_report.cc reads the rows, adds the framing and
// renders the blocks these sections add. Internal to the library.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/report/frontier_plots.h"
#include "hetplan/report/plots.h"
#include "hetplan/util/status.h"

namespace hetplan::report_internal {

// A piece of the report, rendered once as Markdown and once as HTML.
struct Block {
  enum class Kind { kHeading, kParagraph, kTable, kFigure, kList };
  Kind kind = Kind::kParagraph;
  std::string text;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  Figure figure;
  std::vector<std::string> items;
};

inline Block Heading(std::string t) { return {Block::Kind::kHeading, std::move(t), {}, {}, {}, {}}; }
inline Block Para(std::string t) { return {Block::Kind::kParagraph, std::move(t), {}, {}, {}, {}}; }
inline Block Table(std::string caption, std::vector<std::string> header, std::vector<std::vector<std::string>> rows) {
  return {Block::Kind::kTable, std::move(caption), std::move(header), std::move(rows), {}, {}};
}
inline Block FigureBlock(const Figure& f) { return {Block::Kind::kFigure, f.caption, {}, {}, f, {}}; }
inline Block List(std::vector<std::string> items) { return {Block::Kind::kList, "", {}, {}, {}, std::move(items)}; }

// The report being put together: its blocks in order, the figures drawn and
// what was left out, and where figures go.
struct ReportDraft {
  std::string out_dir;
  bool draw_figures = true;  // false: tables only (no gnuplot)
  std::vector<Block> blocks;
  std::vector<Figure> figures;
  std::vector<std::string> skipped;  // figures or tables left out, and why
  // The partitioning method whose grid rows are the "ILP" results (set by
  // AddKleinSections): "exact", else "mip", else "ilp" (older results files).
  std::string partition_method = "exact";

  // Adds the figure and its block. A figure whose rows are absent
  // (kNotFound) is listed in `skipped` as "<what>: <why>" instead; any other
  // error is returned. Defined in html_report.cc.
  Status AddFigure(Result<Figure> f, const std::string& what);
};

// A row of the Klein grid: it sweeps both the crossbars and T_mvm.
bool IsGridRow(const nlohmann::json& r);

template <typename T>
void AddUnique(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// The zoo model a results row names, whatever its precision: the INT8 zoo's
// "resnet18_int8" and "resnet18_int8_qop" are the paper's "resnet18".
std::string ZooModel(const std::string& model);

// The first model in `rows` whose ZooModel is `zoo` ("" when none).
std::string ModelFor(const std::vector<const nlohmann::json*>& rows, const std::string& zoo);

// The operator count of `model` (a ZooModel) in the rows ("?" when absent).
std::string OperatorsOf(const std::vector<nlohmann::json>& rows, const std::string& model);

// The CIM paper (Klein et al., §V): the headline, Fig. 3, 4 and 5 and
// Table I, from the ILP rows of the crossbar × MVM-latency grid. Adds
// nothing when there are none.
Status AddKleinSections(const std::vector<nlohmann::json>& rows, ReportDraft& draft);

// Every baseline beside the ILP on the CIM platforms, when the rows hold
// more than one solver with a speedup there. `models` and `solvers` are the
// rows', in order of first appearance.
Status AddBaselineSection(const std::vector<nlohmann::json>& rows, const std::vector<std::string>& models,
                          const std::vector<std::string>& solvers, ReportDraft& draft);

// BIDENT (§IV): Table II per platform with energy rows, and its concurrent
// two-request comparison; noted in `skipped` when no row has the energy
// objective.
Status AddBidentSections(const std::vector<nlohmann::json>& rows, const std::vector<std::string>& models,
                         ReportDraft& draft);

// A results row planned with a cell layout (cim.bits_per_cell swept): the
// grid's physical twin, kept out of the paper's figures and tables.
bool IsCellLayoutRow(const nlohmann::json& r);
// The grid at 50 ns with the cell layout beside the idealised one, where both
// hold `solver`'s rows (physical_mapping.cc); nothing when `physical` is empty.
Status AddPhysicalMappingSection(const std::vector<nlohmann::json>& idealised,
                                 const std::vector<nlohmann::json>& physical, const std::string& solver,
                                 ReportDraft& draft);

// The frontier files (`hetplan report --frontier`): one table over every
// curve (breakpoints, saturation, the speedups at the CIM paper's budgets)
// and per file its step figure and, when a curve has a Pareto front, that
// figure too. Defined in frontier_plots.cc.
Status AddFrontierSection(const std::vector<FrontierFile>& files, ReportDraft& draft);

}  // namespace hetplan::report_internal
