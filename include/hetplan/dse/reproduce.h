// `hetplan reproduce`: regenerates both papers' evaluations for the zoo models
// on this machine — exporting missing zoo models, profiling the host, the
// CIM paper's grid with the ILP and every baseline, a BIDENT-style sweep on a
// CPU+GPU+NPU platform, Gantt charts, and the report (html_report.h) — and
// states its wall time. docs/dse.md describes the stages.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hetplan/app/costs.h"
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
  DseSummary klein, bident, pairs;
};

// Errors: a zoo model missing and not exportable, profiling or sweep errors,
// report errors (gnuplot missing). Points that fail are recorded in the
// results files, not errors.
Result<ReproduceSummary> Reproduce(const ReproduceOptions& options);

}  // namespace hetplan
