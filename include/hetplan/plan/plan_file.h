// The schedule file (docs/schedule-format.md) as a type: what `split`,
// `run`, `report` and `--refine` read back from a plan, so that no module
// but the schedule file's reader and writer (report/schedule_file.h) touches
// its JSON keys. Times in µs, energies in µJ.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/graph/onnx_import.h"

namespace hetplan {

// One entry of devices[], with its PU's ONNX Runtime configuration from the
// platform block.
struct PlanFileDevice {
  std::string name, kind, costs;
  std::string execution = "serial";              // serial | spatial
  std::optional<int64_t> capacity_crossbars;     // spatial PUs
  std::optional<int64_t> shared_adcs;            // a spatial PU's shared ADC pool
  std::optional<double> power_w;
  // The boundary cost the planner charged per segment on this PU, inside the
  // transfer_us of every edge into it (devices[].boundary_us; 0 if absent).
  double boundary_us = 0;
  int threads = 0;  // for profiled CPUs: the threads the costs were measured with
  // The platform's ONNX Runtime configuration of a `cost: profile` PU.
  bool configured = false;
  std::string provider = "cpu";
  std::map<std::string, std::string> provider_options;
  std::vector<int> cores;
  // The platform's `runtime` ("onnxruntime", or "openvino" with its device).
  std::string runtime = "onnxruntime";
  std::string device;

  bool spatial() const { return execution == "spatial"; }
  // Runs here for real (a CPU, or a PU measured with ONNX Runtime) rather
  // than being charged from the cost model.
  bool executable() const { return kind == "cpu" || costs == "measured"; }
};

// A rewritten operator's write (operators[].write): its weights programmed
// into its crossbars from start_us to finish_us, before it runs.
struct PlanFileWrite {
  double start_us = 0, finish_us = 0, write_us = 0, energy_uj = 0;
  int64_t rows = 0, rows_written = 0;
};

// An operator's weight matrix (operators[].weight): rows × cols, its stored
// bits (0: a float weight), Conv groups, recurrent directions, the product
// a CIM's supported_ops is matched against.
struct PlanFileWeight {
  int64_t rows = 0, cols = 0, bits = 0, groups = 1, directions = 1;
  int64_t n_mvm = 0;  // input vectors an inference multiplies by it
  std::string product;
};

// One entry of operators[], stored at its id.
struct PlanFileOperator {
  std::string name, type, device;
  std::vector<std::string> nodes;  // the ONNX nodes it fuses
  int device_index = -1;  // into PlanFile::devices
  double start_us = 0, finish_us = 0;
  double slowdown = 1;
  std::optional<int64_t> crossbars;
  int request = 0;
  double predicted_us = 0;  // cost_us[device] × slowdown, plus write_us when rewritten
  // Each PU's cost (cost_us); nullopt where the operator is unsupported.
  std::map<std::string, std::optional<double>> cost_us;
  // Energy beyond power × time by PU (op_energy_uj; a CIM circuit's), µJ.
  std::map<std::string, double> op_energy_uj;
  // ADCs held of each PU's shared pool while running there (adcs).
  std::map<std::string, int64_t> adcs;
  // On a reprogramming device: the physical crossbars it holds, [first, last]
  // ranges (crossbar_ids), and its write when it is rewritten.
  std::vector<std::pair<int64_t, int64_t>> crossbar_ids;
  std::optional<PlanFileWrite> write;
  int64_t output_bytes = 0;
  // The weight matrix a CIM holds (weight; absent for an operator without one).
  std::optional<PlanFileWeight> weight;
  // A stream's plan (PlanFile::initiation_interval_us): the copies of its
  // weights, its stage, and its MVMs by spatial PU (mvms, mvm_us) that time
  // the copies; predicted_us counts them.
  int64_t replicas = 1;
  std::optional<int> stage;
  std::map<std::string, int64_t> mvms;
  std::map<std::string, double> mvm_us;
};

// One entry of edges[].
struct PlanFileEdge {
  int from = -1, to = -1;
  int64_t bytes = 0;
  std::optional<double> transfer_us;
  int64_t elements = 0;
  std::optional<double> transfer_start_us;  // a stream's: when it takes the link
};

// One entry of requests[] (two-request plans).
struct PlanFileRequest {
  std::string file, sha256;
  std::optional<int> operators, id_offset;
};

struct PlanFile {
  int version = 0;
  std::string model_name, model_file, model_sha256, fusion;
  // What the model was imported with (model.input_shapes, input_values,
  // branches, sample_inputs): split and --check re-import it so.
  PlanAssumptions assumptions;
  std::string platform;                // platform.name
  std::vector<std::string> overrides;  // platform.overrides
  std::vector<PlanFileDevice> devices;
  std::vector<PlanFileOperator> operators;  // indexed by id
  std::vector<PlanFileEdge> edges;
  double makespan_us = 0;
  std::optional<double> energy_uj;
  // A stream's initiation interval (then makespan_us is one input's
  // latency); a one-inference plan's II when pipelined.
  std::optional<double> initiation_interval_us, pipelined_ii_us;
  std::string solver, solver_status;
  std::map<std::string, double> baselines;
  std::vector<PlanFileRequest> requests;  // empty for one request

  // The prediction of the whole model on the plan's CPU (the cpu_only_us
  // baseline) when that CPU's costs were measured here, else 0.
  double PredictedUnsplitUs() const {
    for (const PlanFileDevice& d : devices) {
      if (d.kind != "cpu") continue;
      const auto base = baselines.find("cpu_only_us");
      return d.costs == "measured" && base != baselines.end() ? std::max(0.0, base->second) : 0.0;
    }
    return 0.0;
  }

  int FindDevice(const std::string& name) const {
    for (size_t i = 0; i < devices.size(); ++i) {
      if (devices[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }
};

}  // namespace hetplan
