// The deployment manifest, DIR/manifest.json (docs/deployment.md): what
// `hetplan split` writes next to the sub-models and `hetplan run` reads back.
// Its format lives here only: the struct, the writer (ManifestToJson,
// WriteManifest) and the reader (LoadManifest).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/graph/onnx_import.h"
#include "hetplan/util/status.h"

namespace hetplan {

// The manifest's format tag and version, and its file name in DIR.
inline constexpr const char* kManifestFormat = "hetplan-deployment";
inline constexpr int kManifestVersion = 1;
inline constexpr const char* kManifestFileName = "manifest.json";

// A tensor of the original model (inputs, outputs) or at a segment's boundary.
struct ManifestTensor {
  std::string name;
  std::string dtype;           // "float32", "int64", ...
  std::vector<int64_t> shape;  // static
  int64_t bytes = 0;           // elements × element size
  int from = -1;               // segment inputs: producing segment, -1 = a model input
  std::vector<int> to;         // segment outputs: consuming segments
  bool model_output = false;   // segment outputs: the tensor is a graph output
  int segment = -1;            // model outputs: the segment that writes it, -1 = none
  // Model outputs: the narrowest floating type the output is computed
  // through, when narrower than its own ("float16" for a float32 output of
  // float16 layers between Casts); run judges it with that type's tolerance.
  std::string narrowest_on_path;
};

// A PU of the schedule.
struct ManifestDevice {
  std::string name, kind, execution;
  std::string costs;     // "measured", "analytical", ... as the schedule says
  bool measured = true;  // timing: measured (runs on this machine) or modelled (charged from the cost model)
  // The PU's ONNX Runtime configuration (docs/platform-format.md), for PUs
  // the schedule's platform gives one (cost: profile): `hetplan run` runs
  // the PU's segments on a thread pinned to `cores` with this provider.
  bool configured = false;  // whether the four fields below came from the schedule
  std::string provider = "cpu";
  std::map<std::string, std::string> provider_options = {};
  int threads = 1;
  std::vector<int> cores = {};
};

// Where the plan came from.
struct ManifestSchedule {
  std::string file, platform, solver, status;
  double makespan_us = 0;
  int violations = 0;  // what `hetplan validate` would report
  // A stream's plan (--objective throughput): its initiation interval.
  std::optional<double> initiation_interval_us;
};

struct ManifestSegment {
  int id = 0;
  std::string device, kind;
  bool measured = true;  // timing: measured (runs on this CPU) or modelled (charged from the cost model)
  std::string file;      // relative to the manifest's folder
  std::string path;      // resolved (LoadManifest)
  std::string sha256;
  // Its external weights, beside it (the model's were external data); "" when
  // none. Their size is checked when the manifest is loaded.
  std::string data_file;
  int64_t data_bytes = 0;
  std::vector<int> operators;  // operator ids, the schedule's
  int nodes = 0;               // ONNX nodes in the file
  std::vector<ManifestTensor> inputs, outputs;
  std::vector<int> depends_on;
  double predicted_us = 0;
  double predicted_transfer_in_us = 0;
  // The boundary cost the planner charged this segment (--boundary-cost
  // fitted): part of its predicted time, not of predicted_us (its operators).
  double predicted_boundary_us = 0;
  double planned_start_us = 0, planned_finish_us = 0;
  bool unused_outputs = false;  // nobody reads its results; its operators' outputs are exposed
  int request = 0;              // two-request plans: which request's operators it runs
};

struct Manifest {
  std::string dir, path;  // the folder and its manifest.json (LoadManifest)
  std::string model_name, model_file, model_sha256, fusion;
  int model_operators = 0;
  // The shapes, values and branches the plan was made with (the schedule's);
  // run feeds the values to the unsplit model and runs it on the assumed branches.
  PlanAssumptions assumptions;
  ManifestSchedule schedule;
  int threads = 1;
  std::string graph_optimization = "basic";
  std::vector<ManifestDevice> devices;
  std::vector<ManifestTensor> inputs, outputs;  // of the original model
  std::vector<ManifestSegment> segments;        // in execution order, id = index
  // 2 for a plan of two requests of the model at once (map --mode
  // concurrent, pair_* baselines): every segment names its request, and each
  // request has its own tensors (inputs, hand-offs, outputs).
  int requests = 1;
  int boundaries = 0;                           // consecutive segments on different PUs
  int handoffs = 0;                             // tensors passed between segments
  double predicted_host_us = 0, predicted_accelerator_us = 0, predicted_transfer_us = 0;
  double predicted_makespan_us = 0;
  double predicted_sequential_us = 0;
  // The profile's prediction of the unsplit model on the plan's measured CPU
  // (the schedule's cpu_only_us); 0 when the CPU's costs are not measured.
  double predicted_unsplit_us = 0;
  // The segment files' boundary dims are unknown (SplitOptions::dynamic_shapes):
  // they run at any length of the dims the plan fixed (a decoder's sequence
  // and past); the shapes above are the planned ones.
  bool dynamic_shapes = false;
};

// The manifest as written to DIR/manifest.json (`dir`, `path` and the
// segments' `path` are not written).
nlohmann::json ManifestToJson(const Manifest& manifest);

// Writes `manifest` (ManifestToJson's) to DIR/manifest.json, atomically.
Status WriteManifest(const nlohmann::json& manifest, const std::string& dir);

// Reads DIR/manifest.json and checks it: format and version, every segment
// file present (RunDeployment compares its SHA-256 when it reads it), every
// segment input produced by an earlier segment (or the model) with the same
// dtype and shape, every model output written by some segment. Errors are
// one line naming the manifest, the segment and its file, and what to do.
// Keys that only describe the plan (schedule, devices, nodes, planned
// times, ...) are read when present with the expected type, never refused.
Result<Manifest> LoadManifest(const std::string& dir);

}  // namespace hetplan
