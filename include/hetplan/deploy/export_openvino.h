// A plan handed to OpenVINO in its own terms (docs/openvino.md, Export): the
// `{operation name: device}` affinity map that OpenVINO's HETERO device
// takes, one entry for every operation of the model as OpenVINO's ONNX front
// end reads the planned model's file (Parameters, Constants, Results and a
// decomposition's named helpers included), so that an application sets
// rt_info["affinity"] on each operation and compiles on HETERO. Operations
// OpenVINO names itself (`Type_N`) are left out: their names come from a
// process-wide counter, so the application's differ from the export's;
// hetero.json says how many and the rule (the device of the operation each
// feeds).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/deploy/split.h"
#include "hetplan/util/status.h"

namespace hetplan {

struct OpenVinoAffinity {
  nlohmann::json affinity;                 // friendly name → device
  nlohmann::json hetero;                   // hetero.json: model, device string, counts
  std::map<std::string, int> per_device;   // operations per device
  std::string device;                      // "HETERO:CPU,GPU": what to compile on
  std::vector<std::string> devices;        // its devices, in HETERO's priority order (the platform's)
  std::map<std::string, std::string> pu_devices;  // each PU's OpenVINO device
  std::string model_file;
  int operations = 0;
};

// Reads the schedule file and its model (as split does: options.model_path,
// the SHA-256 checked) and gives every OpenVINO operation of the model's
// file the device of the PU that runs its ONNX node: the PU's own `device`
// for a `runtime: openvino` PU, else `devices[pu]`. An operation of a node
// the plan folded away (shape arithmetic), a helper or a constant takes the
// device of the operation it feeds; a graph input's Parameter the device of
// its first reader; a Result its producer's. Errors (one line): a PU with no
// OpenVINO device and none given (naming the PU and the flag), a generation
// file, a model with external data, no OpenVINO in this build, two
// operations of one name on two devices.
Result<OpenVinoAffinity> MakeOpenVinoAffinity(const std::string& schedule_path,
                                              const std::map<std::string, std::string>& devices,
                                              const SplitOptions& options = {});

// MakeOpenVinoAffinity, then <out_dir>/affinity.json and hetero.json.
Result<OpenVinoAffinity> ExportOpenVinoAffinity(const std::string& schedule_path, const std::string& out_dir,
                                                const std::map<std::string, std::string>& devices,
                                                const SplitOptions& options = {});

// A plan run as one model compiled on OpenVINO's HETERO device (`hetplan run
// SCHEDULE --hetero`): the affinity above set on the model as read, timed,
// and its outputs compared with the model on the first device alone. CPU
// devices run in f32 with the threads their PUs were planned with.
struct HeteroRunOptions {
  std::map<std::string, std::string> devices;  // PU → OpenVINO device, as for MakeOpenVinoAffinity
  // Extra OpenVINO devices: name → plugin library (a file in OpenVINO's own
  // folder, or a path), e.g. CPUB=libopenvino_intel_cpu_plugin.so, a second
  // CPU device to split across on a machine with one.
  std::map<std::string, std::string> plugins;
  int warmup = 3;
  int runs = 20;
  double rtol = 1e-4, atol = 1e-5;  // the output check
  SplitOptions split;               // the model's path and shapes
};

struct HeteroRunReport {
  OpenVinoAffinity affinity;
  std::string device;                           // what was compiled on: HETERO:...
  int submodels = 0;                            // OpenVINO's split
  int plan_segments = 0;                        // the plan's (PlanSegments in its start order)
  std::vector<std::string> execution_devices;
  std::map<std::string, int> operations;        // per device, every operation
  double median_us = 0, p10_us = 0, p90_us = 0;  // the HETERO model
  double reference_median_us = 0;               // the first device alone
  std::string reference_device;
  double planned_us = 0;                        // the plan's makespan
  double max_abs_diff = 0, max_rel_diff = 0;
  bool outputs_match = false;                   // every element within atol + rtol·|reference|
};

Result<HeteroRunReport> RunOnHetero(const std::string& schedule_path, const HeteroRunOptions& options);
nlohmann::json HeteroRunToJson(const HeteroRunReport& r);

}  // namespace hetplan
