// What the split sources share (split.cc, split_requests.cc). Internal to
// the deploy module.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "hetplan/deploy/split.h"
#include "hetplan/plan/plan_file.h"

namespace hetplan::deploy_internal {

// --- splitting ------------------------------------------------------------------

// SplitModel for a schedule of one request; `extra_cuts` (one flag per
// operator, or empty) open segments on top of TimedCuts.
Result<SplitResult> SplitOneRequest(const LoadedModel& model, const PlanFile& schedule, int violations,
                                    const std::string& schedule_label, const SplitOptions& options,
                                    const std::vector<bool>& extra_cuts);

// SplitModel for a schedule of two requests of `model` (split_requests.cc).
Result<SplitResult> SplitRequests(const LoadedModel& model, const PlanFile& schedule, int violations,
                                  const std::string& schedule_label, const SplitOptions& options);

// --- the schedule's model (split_file.cc) ----------------------------------------

// A schedule file (not a generation file) as JSON and as a PlanFile; errors
// name the file and say what to give instead.
struct ScheduleFile {
  nlohmann::json json;
  PlanFile plan;
};
Result<ScheduleFile> ReadScheduleFile(const std::string& schedule_path);
// The planned model's file as an application reads it (its own nodes and
// names). Error: weights in external data, a file that is no ONNX model.
Result<onnx::ModelProto> ReadPlannedFile(const LoadedModel& model);
// For each node of `source` (ReadPlannedFile): the PU of the plan's operator
// that produces one of its outputs in the imported `model`; "" for a node the
// import folded away (shape arithmetic).
std::vector<std::string> PlannedPuOfFileNodes(const PlanFile& plan, const LoadedModel& model,
                                              const onnx::ModelProto& source);

// Ok when every PU of the plan runs on ONNX Runtime (what split and run
// execute); else one line naming the first OpenVINO PU.
Status CheckOnnxRuntimePus(const PlanFile& plan, const std::string& label);

// The schedule's model (options.model_path, else model.file from the working
// folder, then the schedule's folder) loaded as planned, its SHA-256 checked.
Result<LoadedModel> LoadScheduleModel(const PlanFile& plan, const std::string& schedule_path,
                                      const SplitOptions& options, bool keep_source);

// For each node of model.model's graph that belongs to an operator: the same
// node's index in model.source (matched by its first output and type); -1
// for the others. Error: an operator node the import rewrote.
Result<std::vector<int>> SourceNodes(const LoadedModel& model, const std::string& label);

// --- external weights (split_data.cc) ------------------------------------------

// Moves the external weights of `sub`, a sub-model of `model`, into one data
// blob for the file `data_file` beside the sub-model: each external tensor's
// bytes are read from the model's folder and appended at an offset aligned
// to 4096 bytes (ONNX Runtime maps aligned ranges instead of copying them);
// its entries then point there. Returns "" when `sub` has none.
Result<std::string> GatherExternalData(onnx::ModelProto* sub, const LoadedModel& model, const std::string& data_file);

// Empties every external tensor of `sub` (no data, dims [0]): a copy the
// ONNX checker can judge before the data file is written (it looks for the
// file relative to the working folder). The checker (not the full check)
// judges the graph, not the weights, so nothing else is lost.
void DropExternalData(onnx::ModelProto* sub);

// Points every external tensor of `sub` at `data_file` (the same ranges).
void RenameExternalData(onnx::ModelProto* sub, const std::string& data_file);

// The plan's --sample-input arrays copied into the split folder
// (sample_<input>.npy, `files`), each checked against its sha256, and the
// manifest's entries pointed at the copies, relative to the folder, so that
// `run` feeds them wherever the folder moves.
Status CopySamples(Manifest* mf, std::vector<std::pair<std::string, std::string>>* files);

}  // namespace hetplan::deploy_internal
