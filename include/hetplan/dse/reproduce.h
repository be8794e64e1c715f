// `hetplan reproduce`: regenerates both papers' evaluations for the zoo models
// on this machine — exporting missing zoo models, profiling the host, the
// CIM paper's grid with the ILP and every baseline, the exact frontiers over
// every crossbar budget behind its Fig. 3 and 4 (app/frontier.h), a
// BIDENT-style sweep on a CPU+GPU+NPU platform, Gantt charts, and the report
// (html_report.h) — and states its wall time. docs/dse.md describes the stages.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/app/costs.h"
#include "hetplan/report/frontier_plots.h"
#include "hetplan/dse/dse.h"
#include "hetplan/util/status.h"

namespace hetplan {

struct ReproduceOptions {
  std::string out_dir = "reproduce";
  std::string models_dir;                   // the zoo; empty = the build's zoo folder (CMake HETPLAN_ZOO_DIR)
  std::string python = "/usr/bin/python3";  // exports missing zoo models with models/export.py
  bool quick = false;                       // a small grid, short time limits, few profiling runs: minutes
  bool resume = false;                      // keep points already in out_dir's results files
  std::string cache_dir = kDefaultProfileCacheDir;
  int jobs = 0;
  double time_limit_s = -1;  // ILP limit per point; < 0: 10 s (quick: 5 s)
  // Limit of each exact frontier (Fig. 3/4 over every budget); < 0: 30 s
  // (quick: 10 s). A frontier it stops keeps its unproven steps "feasible".
  double frontier_time_limit_s = -1;
  std::string solver = "exact";  // the grid's partitioning method: exact, or mip (the paper's MIP on CBC)
  // "int8": the zoo's *_int8 models, quantized as the CIM paper ran them
  // (its host costs are INT8 kernels, its bus and CIM move one byte per
  // element); "fp32": the float models (four bytes per element).
  std::string precision = "int8";
  // The operator granularity, for both precisions. activation: an operator
  // is what ONNX Runtime runs as one kernel (Conv+activation; for INT8 the
  // whole DQ → Conv → Relu → Q unit, one QLinearConv), profiled with all
  // graph optimizations as the paper profiles its host. none: one operator
  // per ONNX node (an INT8 Conv whose Relu is split off then runs as a float
  // Conv when timed alone).
  FusionLevel fusion = FusionLevel::kActivation;
  DseProgressFn progress;
  std::function<void(const std::string&)> stage;  // called with a line when a stage starts or ends
};

struct ReproduceSummary {
  double wall_s = 0;
  std::vector<std::string> stages;    // "klein grid: 128 points, 1234.5 s", ...
  std::vector<std::string> commands;  // the equivalent hetplan commands
  std::string report_html, report_md;
  std::vector<std::string> frontier_files;  // under out_dir/frontiers, drawn in the report
  DseSummary klein, bident, pairs;
};

// The frontier stage of Reproduce (the CIM paper's Fig. 3 and 4 over every
// crossbar budget): per platform, `fig3_model`'s exact frontier at every MVM
// latency as one multi-curve frontier file (docs/frontier.md), and every
// other `fig4_models` entry's at 50 ns as a single-curve file, under `dir`.
// PlanFrontiers with the MVM latency as the axis for Fig. 3 (the file
// `hetplan frontier --sweep` writes), PlanFrontier per Fig. 4 model; each
// curve with its own time limit
// (a curve it stops keeps its unproven steps "feasible").
struct FrontierStageSpec {
  std::string fig3_model;               // a model path
  std::vector<std::string> fig4_models;  // model paths; fig3_model is skipped (its 50 ns curve is in Fig. 3's file)
  std::vector<std::string> platforms;    // preset names or YAML paths
  std::vector<std::string> latencies_ns;  // cim.mvm_latency_ns values of Fig. 3
  ImportOptions import;
  ProfileOptions profile;  // as the grid's, so that host costs come from the same cache entries
  double time_limit_s = 30;
  std::string dir;
};

struct FrontierStageResult {
  std::vector<std::string> files;    // written, in order
  int curves = 0;
  std::vector<std::string> stopped;  // "model on platform at N ns (time_limit)"
  double seconds = 0;
  struct Curve {
    std::string model, platform;  // as dse rows name them
    double mvm_ns = 0;
    FrontierCurve curve;  // the frontier at that MVM latency
  };
  std::vector<Curve> points;
};

Result<FrontierStageResult> ComputeFrontiers(const FrontierStageSpec& spec);

// The frontier read at the grid's budgets against the grid's rows of
// `solver`, where both are optimal (they plan the same problems).
struct FrontierGridCheck {
  std::string solver;
  int compared = 0, agree = 0;  // agree: within both gaps (2e-4 relative)
  double max_rel_diff = 0;
  std::string Summary() const;
};
FrontierGridCheck CompareWithGrid(const FrontierStageResult& frontiers, const std::vector<nlohmann::json>& rows,
                                  const std::string& solver);

// Errors: a zoo model missing and not exportable, profiling or sweep errors,
// report errors (gnuplot missing). Points that fail are recorded in the
// results files, not errors.
Result<ReproduceSummary> Reproduce(const ReproduceOptions& options);

}  // namespace hetplan
