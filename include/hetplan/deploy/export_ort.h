// A plan handed to ONNX Runtime in its own terms (docs/deployment.md, "One
// ONNX Runtime session"): the planned model with each node annotated
// (metadata_props "layer_ann" = "hetplan/<PU>") and the session settings
// that send each annotation to its PU's execution provider
// (session.layer_assignment_settings, ONNX Runtime 1.29), with the record of
// where each node ran switched on (session.record_ep_graph_assignment_info).
// `hetplan run DIR --one-session` runs it in one session and checks that
// record against the plan.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/deploy/split.h"
#include "hetplan/util/status.h"

namespace hetplan {

struct OrtLayerAssignment {
  std::string settings;                     // session.layer_assignment_settings
  std::map<std::string, std::string> providers;  // PU → execution provider
  std::map<std::string, int> nodes;          // annotated nodes per PU
  nlohmann::json session;                   // session.json
};

// Reads the schedule file and its model (as split does) and writes
// <out_dir>/model.onnx (the file's nodes, each annotated with the PU the
// plan gives it; a node the plan folded away takes its reader's, nameless
// nodes named <op>_<index>) and <out_dir>/session.json (the settings, each
// PU's provider, the source model and its SHA-256). A PU's provider: the
// one given in `providers` (hetplan's or ONNX Runtime's name: cuda or
// CUDAExecutionProvider), else the platform's for a PU ONNX Runtime runs.
// Errors (one line): a PU that runs operators without a provider (naming the
// flag), an unknown provider, a generation file, external data.
Result<OrtLayerAssignment> ExportOrtLayerAssignment(const std::string& schedule_path, const std::string& out_dir,
                                                    const std::map<std::string, std::string>& providers,
                                                    const SplitOptions& options = {});

struct OneSessionOptions {
  int warmup = 3;
  int runs = 20;
  int threads = 1;
  double rtol = 1e-4, atol = 1e-5;
};

struct OneSessionReport {
  std::string model_file;
  int recorded_nodes = 0;    // in ONNX Runtime's record
  int as_planned = 0;        // recorded on the provider the plan gave them
  int elsewhere = 0;         // recorded on another provider
  int not_recorded = 0;      // annotated nodes the record leaves out (removed by ORT's optimizer)
  int unannotated = 0;       // recorded nodes the model does not have (made by ORT's fusions)
  std::string first_elsewhere;                 // "node 'x' planned on A ran on B"
  std::map<std::string, int> ran_on;           // recorded nodes per provider
  double median_us = 0, p10_us = 0, p90_us = 0;
  double reference_median_us = 0;              // the source model in a plain session
  double max_abs_diff = 0;
  int64_t mismatches = 0, elements = 0;
};

// Runs <dir>/model.onnx in one session with <dir>/session.json's settings,
// `warmup` then `runs` timed runs on seeded inputs, then the source model in
// a plain session on the same inputs; compares the outputs and reads ONNX
// Runtime's record of where each node ran. The caller fails the run when
// `elsewhere` > 0 or an output differs.
Result<OneSessionReport> RunOneSession(const std::string& dir, const OneSessionOptions& options);
nlohmann::json OneSessionToJson(const OneSessionReport& r);

}  // namespace hetplan
