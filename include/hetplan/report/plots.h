// Figures drawn with gnuplot from a `hetplan dse` results file (docs/dse.md)
// or a schedule file. Each figure is a data file (<stem>.dat) and a gnuplot
// script (<stem>.gp) generated here and run by gnuplot into <stem>.png and
// <stem>.svg; nothing is drawn by hand. The scripts stay next to the images,
// so a figure can be restyled and redrawn with `gnuplot <stem>.gp`.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/plan/plan_file.h"
#include "hetplan/util/status.h"

namespace hetplan {

// The sweep keys of the CIM paper's grid.
inline constexpr const char* kCrossbarsKey = "cim.crossbars";
inline constexpr const char* kMvmLatencyKey = "cim.mvm_latency_ns";
inline constexpr const char* kBitsPerCellKey = "cim.bits_per_cell";

struct Figure {
  std::string stem;  // file name without extension, inside the output folder
  std::string title;
  std::string caption;                 // what is drawn and from which rows
  std::string png, svg, script, data;  // file names (relative to the folder)
};

// A row's numeric field (NaN when absent or null) and sweep parameter ("" when absent).
double RowNumber(const nlohmann::json& row, const std::string& field);
std::string RowParam(const nlohmann::json& row, const std::string& key);
// A row's string field, or "" when it is absent or not a string.
std::string RowString(const nlohmann::json& row, const char* field);
// Rows with a schedule (makespan_us set) for `solver`, objective `objective`.
std::vector<const nlohmann::json*> SolvedRows(const std::vector<nlohmann::json>& rows, const std::string& solver,
                                              const std::string& objective = "latency");

// Whether a `gnuplot` executable is on PATH.
bool GnuplotAvailable();
// Runs `gnuplot <script>` in `dir`. The error quotes gnuplot's stderr.
Status RunGnuplot(const std::string& dir, const std::string& script);

// The CIM paper's Fig. 3: speedup over CPU-only vs crossbar count, one line
// per MVM latency, one panel per platform, for one model and solver.
// kNotFound when no row matches.
Result<Figure> PlotSpeedupVsCrossbars(const std::vector<nlohmann::json>& rows, const std::string& model,
                                      const std::string& solver, const std::string& dir);
// Fig. 4: speedup vs crossbars at one MVM latency, one line per model, one
// panel per platform.
Result<Figure> PlotSpeedupPerModel(const std::vector<nlohmann::json>& rows, const std::string& mvm_latency_ns,
                                   const std::string& solver, const std::string& dir);
// Fig. 5: per crossbar count and MVM latency, the busy time of each device
// stacked (host darker, CIM lighter), labelled with operator counts per
// device, the makespan marked; one panel per platform.
Result<Figure> PlotLatencySplit(const std::vector<nlohmann::json>& rows, const std::string& model,
                                const std::string& solver, const std::string& dir);
// Solvers side by side: for each model, a bar per solver with `metric`
// (a numeric row field such as "speedup" or "speedup_vs_best_single"), for
// the rows of `platform` and `objective` whose params equal `params` (empty:
// any). `stem` names the files.
Result<Figure> PlotSolversSideBySide(const std::vector<nlohmann::json>& rows, const std::string& platform,
                                     const std::string& objective, const std::vector<std::string>& params,
                                     const std::vector<std::string>& solvers, const std::string& metric,
                                     const std::string& ylabel, const std::string& stem, const std::string& dir);
// A Gantt chart of one schedule file: a row per device, a box per operator.
// BIDENT's Fig. 7: the pair study (dse --pairs all) on one platform for one
// two-request method: per model pair its speedup over homogeneous serial
// execution and over naive multi-PU placement, pairs sorted by the first, on
// a log axis with both geometric means and the paper's (3.42×, 2.28×).
// kNotFound when no row matches.
Result<Figure> PlotPairStudy(const std::vector<nlohmann::json>& rows, const std::string& platform,
                             const std::string& solver, const std::string& dir);
Result<Figure> PlotGantt(const PlanFile& schedule, const std::string& stem, const std::string& dir);

}  // namespace hetplan
