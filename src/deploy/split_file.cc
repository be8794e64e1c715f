// Reading a schedule file's model for a split (include/hetplan/deploy/split.h):
// the planned model found and loaded as planned, and, for a split that must
// run at other shapes (SplitOptions::dynamic_shapes), its operators' nodes
// found in the file's own graph.
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hetplan/cost/sample_shapes.h"
#include "hetplan/deploy/generation.h"
#include "hetplan/deploy/split.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/util/io.h"
#include "hetplan/validate/validator.h"
#include "deploy/split_internal.h"

namespace hetplan {

namespace fs = std::filesystem;

namespace deploy_internal {

Result<std::vector<int>> SourceNodes(const LoadedModel& model, const std::string& label) {
  if (model.source == nullptr) {
    return Error(ErrorCode::kInternal, "{}: the model was loaded without its own graph (keep_source)", label);
  }
  const onnx::GraphProto& src = model.source->graph();
  std::unordered_map<std::string, int> by_output;
  for (int i = 0; i < src.node_size(); ++i) {
    for (const auto& o : src.node(i).output()) {
      if (!o.empty()) by_output.emplace(o, i);
    }
  }
  const onnx::GraphProto& g = model.model->graph();
  std::vector<int> out(static_cast<size_t>(g.node_size()), -1);
  for (const Operator& op : model.graph.operators()) {
    for (int i : op.node_indices) {
      const onnx::NodeProto& n = g.node(i);
      std::string first;
      for (const auto& o : n.output()) {
        if (first.empty()) first = o;
      }
      const auto it = by_output.find(first);
      if (it == by_output.end() || src.node(it->second).op_type() != n.op_type()) {
        return Error(ErrorCode::kUnsupported,
                     "{}: operator '{}' ({} node writing '{}') is not in {} as written (the import rewrote it), so "
                     "the model cannot be split to run at other shapes than the planned ones",
                     label, op.name, n.op_type(), first, model.path);
      }
      out[static_cast<size_t>(i)] = it->second;
    }
  }
  return out;
}

Result<LoadedModel> LoadScheduleModel(const PlanFile& plan, const std::string& schedule_path,
                                      const SplitOptions& options, bool keep_source) {
  std::string path = options.model_path;
  if (path.empty()) {
    path = plan.model_file;
    std::error_code ec;
    fs::path beside = fs::path(schedule_path).parent_path() / path;
    if (!fs::exists(path, ec) && fs::path(path).is_relative() && fs::exists(beside, ec)) path = beside.string();
    if (!fs::exists(path, ec)) {
      return Error(ErrorCode::kNotFound,
                   "{}: the planned model '{}' is not found (from the working folder or "
                   "the schedule's folder); pass its path with --model",
                   schedule_path, plan.model_file);
    }
  }
  HETPLAN_ASSIGN_OR_RETURN(LoadedModel model,
                           LoadPlannedModel(plan, path, schedule_path, options.input_shapes, keep_source));
  if (!plan.model_sha256.empty() && plan.model_sha256 != model.sha256) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: the schedule was made for a model with SHA-256 {}… but {} "
                 "has {}…; pass the planned file with --model, or re-plan with hetplan partition",
                 schedule_path, plan.model_sha256.substr(0, 12), path, model.sha256.substr(0, 12));
  }
  return model;
}

}  // namespace deploy_internal

Result<LoadedModel> LoadPlannedModel(const PlanFile& plan, const std::string& path, const std::string& label,
                                     const std::map<std::string, std::vector<int64_t>>& shapes, bool keep_source) {
  ImportOptions io;
  io.keep_source = keep_source;
  auto fusion = ParseFusionLevel(plan.fusion);
  if (!fusion.ok()) return Error(ErrorCode::kParseError, "{}: model.fusion: {}", label, fusion.status().message());
  io.fusion = *fusion;
  io.input_shapes = shapes;
  // The shapes, values and branches the plan was made with: none repeated.
  ApplyPlanAssumptions(plan.assumptions, &io);
  HETPLAN_RETURN_IF_ERROR(RecordSampleShapes(path, {}, &io));  // --sample-input: its shapes again
  return LoadOnnxModel(path, io);
}

namespace deploy_internal {

Status CheckOnnxRuntimePus(const PlanFile& plan, const std::string& label) {
  for (const PlanFileDevice& d : plan.devices) {
    if (d.runtime == "openvino") {
      return Error(ErrorCode::kUnsupported, "{}: PU '{}' runs on OpenVINO (device {}); split and run execute ONNX "
                   "Runtime PUs only so far: plan with runtime: onnxruntime to split, or keep the plan's costs",
                   label, d.name, d.device.empty() ? "CPU" : d.device);
    }
  }
  return Status::Ok();
}

Result<ScheduleFile> ReadScheduleFile(const std::string& schedule_path) {
  HETPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(schedule_path, int64_t{1} << 30));
  ScheduleFile f;
  try {
    f.json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Error(ErrorCode::kParseError, "{}: not valid JSON ({}); give a schedule written by hetplan partition",
                 schedule_path, OneLine(e.what()));
  }
  const nlohmann::json& schedule = f.json;
  if (!schedule.is_object() || !schedule.contains("model") || !schedule["model"].is_object() ||
      !schedule["model"].contains("file") || !schedule["model"]["file"].is_string()) {
    return Error(ErrorCode::kParseError,
                 "{}: model.file is missing; give a schedule written by hetplan "
                 "partition",
                 schedule_path);
  }
  if (schedule.value("format", "") == kGenerationFormat) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: a generation file (partition --llm) splits into two phases: use SplitGenerationFile "
                 "(hetplan split does)", schedule_path);
  }
  HETPLAN_ASSIGN_OR_RETURN(f.plan, ReadPlanFile(schedule, schedule_path));
  return f;
}

}  // namespace deploy_internal

Result<SplitResult> SplitScheduleFile(const std::string& schedule_path, const std::string& out_dir,
                                      const SplitOptions& options) {
  HETPLAN_ASSIGN_OR_RETURN(const deploy_internal::ScheduleFile file, deploy_internal::ReadScheduleFile(schedule_path));
  const nlohmann::json& schedule = file.json;
  const PlanFile& plan = file.plan;
  HETPLAN_ASSIGN_OR_RETURN(
      LoadedModel model,
      deploy_internal::LoadScheduleModel(plan, schedule_path, options, options.dynamic_shapes));
  // The manifest records what `hetplan validate` finds in the whole file.
  SplitOptions split_options = options;
  split_options.schedule_violations = static_cast<int>(ValidateScheduleJson(schedule).violations.size());
  HETPLAN_ASSIGN_OR_RETURN(SplitResult split, SplitModel(model, plan, schedule_path, split_options));
  HETPLAN_RETURN_IF_ERROR(WriteSplit(split, out_dir));
  return split;
}

}  // namespace hetplan
