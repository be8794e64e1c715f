// Internal: OpenVINO plumbing for `cost` (the OpenVINO profiler) and, later,
// `deploy`: the only module that includes OpenVINO's headers
// (docs/openvino.md). Its types are hetplan's own, so that nothing above it
// compiles against OpenVINO; without OpenVINO in the build (HETPLAN_OPENVINO,
// scripts/setup_openvino.sh) every function says so in one line.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "hetplan/util/status.h"

namespace hetplan::ov_runtime {

// Whether this build has OpenVINO.
bool Built();
// "2026.4.1-…" (OpenVINO's build number); "" without OpenVINO.
std::string Version();
// The devices OpenVINO finds on this machine ("CPU", "GPU.0", ...).
Result<std::vector<std::string>> AvailableDevices();
// Ok when `device` is one of AvailableDevices() ("GPU" also matches "GPU.0");
// else one line: `where`: OpenVINO device 'GPU' is not on this machine
// (available: CPU); <fix>.
Status CheckDevice(const std::string& device, const std::string& where);

// One operation of the model as OpenVINO's ONNX front end reads it, and the
// ONNX node it belongs to: the node that produced one of its outputs (by
// tensor name), else the node of the operation it feeds (a decomposition's
// helper, a constant), else the one that feeds it; -1 for the graph's
// Parameters and Results.
struct ReadOperation {
  std::string name;  // friendly name
  std::string type;  // OpenVINO type name (Convolution, Add, Constant, ...)
  int onnx_node = -1;  // index into the ONNX graph's nodes
  // A Parameter's first reader's node, a Result's producer's; -1 otherwise.
  int neighbour_node = -1;
  // Named by OpenVINO itself (`Type_N`, from a process-wide counter: a
  // decomposition's helper), so another process reading the same file may
  // call it otherwise.
  bool automatic_name = false;
};
// `keep` (one flag per ONNX node; empty: all): a node not kept gives no
// operation its index, so that its operations take their consumers' (an
// export whose plan folded the node away).
Result<std::vector<ReadOperation>> ReadOperations(const onnx::ModelProto& model, const std::string& label,
                                                  const std::vector<char>& keep = {});

struct ProfileRequest {
  std::string device = "CPU";
  int threads = 1;
  // Properties given to compile_model, as text; INFERENCE_PRECISION_HINT
  // defaults to f32 (OpenVINO's CPU infers in bf16 on CPUs that have it).
  std::map<std::string, std::string> properties;
  int warmup = 20;
  int runs = 200;
};

// One operation of the compiled (runtime) model that executed.
struct ExecutedNode {
  std::string name, type, kernel;  // friendly name, layer type, OpenVINO's exec_type
  double mean_us = 0;              // over the timed runs
  std::vector<int> onnx_nodes;     // the ONNX nodes it covers, ascending
};

struct ModelProfile {
  std::vector<ExecutedNode> nodes;  // in execution order
  std::vector<double> run_us;       // each timed inference, wall clock
  int onnx_nodes = 0;               // nodes of the ONNX graph
  int named_nodes = 0;              // ONNX nodes an executed node's originalLayersNames names
  int attributed_nodes = 0;         // ONNX nodes given to an executed node through the graph
  std::string precision;            // INFERENCE_PRECISION_HINT as compiled
};

// Compiles `model` on the request's device with profiling on, runs `warmup`
// then `runs` inferences on seeded inputs, and maps every executed operation
// back to ONNX nodes: the names in its originalLayersNames, then every ONNX
// node no executed operation names, through the graph (to the executed
// operation of its nearest consumer, else of its nearest producer).
// OpenVINO's per-node times are running averages since compilation: each
// node's mean over the timed runs is (average after all runs × all runs −
// average after the warm-up × warm-up runs) / runs.
Result<ModelProfile> ProfileModel(const onnx::ModelProto& model, const std::string& label, const ProfileRequest& r);

// A plan run as one model compiled on HETERO (`hetplan run --hetero`).
struct HeteroRequest {
  std::string model_path;                       // the file, read as an application reads it
  std::map<std::string, std::string> affinity;  // friendly name → device; other operations: their reader's device
  std::vector<std::string> devices;             // HETERO's priority order
  // Extra devices: name → plugin library (a file name in OpenVINO's own
  // folder, or a path), registered before compiling (a second CPU device).
  std::map<std::string, std::string> plugins;
  std::map<std::string, int> threads;           // a CPU device's INFERENCE_NUM_THREADS (absent: OpenVINO's)
  int warmup = 3;
  int runs = 20;
  double atol = 1e-5, rtol = 1e-4;  // an element matches within atol + rtol·|reference|
};

struct HeteroRun {
  std::string device;                    // "HETERO:CPU,NPU"
  int submodels = 0;                     // HETERO_NUMBER_OF_SUBMODELS
  std::vector<std::string> execution_devices;
  std::map<std::string, int> operations;  // per device, as set
  std::vector<double> run_us;             // each timed inference
  std::vector<double> reference_us;       // the same inputs on devices[0] alone
  std::string reference_device;           // devices[0]
  double max_abs_diff = 0;                // over every output, against devices[0] alone
  double max_rel_diff = 0;                // |a - b| / max(|b|, 1e-6), its largest
  int64_t mismatches = 0;                 // elements beyond the tolerance
  int64_t elements = 0;
};

// Reads the model, sets every operation's affinity (named ones from the
// map, the rest their reader's, else their producer's), compiles on
// HETERO:<devices> (CPU devices in f32), times `runs` inferences after
// `warmup` on seeded inputs, then the same on devices[0] alone, and compares
// the outputs.
Result<HeteroRun> RunHetero(const HeteroRequest& r);

}  // namespace hetplan::ov_runtime
