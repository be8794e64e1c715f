// The openvino-affinity export (include/hetplan/deploy/export_openvino.h):
// every operation of the model as OpenVINO reads the planned file, with the
// OpenVINO device of the PU the plan gives its ONNX node.
#include "hetplan/deploy/export_openvino.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "deploy/split_internal.h"
#include "hetplan/util/io.h"
#include "ov/openvino.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

// PU name → OpenVINO device: the PU's own for runtime: openvino, else the
// one given; every PU the plan uses must have one.
Result<std::map<std::string, std::string>> DevicesOf(const PlanFile& plan, const std::string& label,
                                                     const std::map<std::string, std::string>& given) {
  std::map<std::string, std::string> out;
  for (const auto& [pu, device] : given) {
    bool known = false;
    for (const PlanFileDevice& d : plan.devices) known = known || d.name == pu;
    if (!known) {
      return Error(ErrorCode::kInvalidArgument, "{}: --device {}={}: the plan has no PU '{}'; name one of its PUs",
                   label, pu, device, pu);
    }
  }
  for (const PlanFileDevice& d : plan.devices) {
    if (auto it = given.find(d.name); it != given.end()) {
      out[d.name] = it->second;
    } else if (d.runtime == "openvino") {
      out[d.name] = d.device.empty() ? std::string("CPU") : d.device;
    }
  }
  for (const PlanFileDevice& d : plan.devices) {  // in the platform's order
    bool used = false;
    for (const PlanFileOperator& op : plan.operators) used = used || op.device == d.name;
    if (used && !out.count(d.name)) {
      return Error(ErrorCode::kInvalidArgument, "{}: PU '{}' runs operators but is no OpenVINO device; give it one "
                   "with --device {}=<CPU|GPU|NPU|...>", label, d.name, d.name);
    }
  }
  return out;
}

// The affinity, and the number of segments the plan splits the model into
// (PlanSegments over the operators in their start order) into `segments`.
Result<OpenVinoAffinity> Affinity(const deploy_internal::ScheduleFile& file, const std::string& schedule_path,
                                  const std::map<std::string, std::string>& devices, const SplitOptions& options,
                                  int* segments) {
  const PlanFile& plan = file.plan;
  if (plan.requests.size() > 1) {
    return Error(ErrorCode::kUnsupported, "{}: a plan of {} requests is not one model's placement; export a "
                 "one-request plan", schedule_path, plan.requests.size());
  }
  HETPLAN_ASSIGN_OR_RETURN(const auto device_of_pu, DevicesOf(plan, schedule_path, devices));
  HETPLAN_ASSIGN_OR_RETURN(LoadedModel model,
                           deploy_internal::LoadScheduleModel(plan, schedule_path, options, false));
  // The file as the application's OpenVINO reads it: its own nodes and names.
  HETPLAN_ASSIGN_OR_RETURN(const onnx::ModelProto source, deploy_internal::ReadPlannedFile(model));
  const std::vector<std::string> node_pu = deploy_internal::PlannedPuOfFileNodes(plan, model, source);
  std::vector<char> keep(node_pu.size(), 0);
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = node_pu[i].empty() ? 0 : 1;
  HETPLAN_ASSIGN_OR_RETURN(const std::vector<ov_runtime::ReadOperation> ops,
                           ov_runtime::ReadOperations(source, model.path, keep));
  OpenVinoAffinity out;
  out.model_file = model.path;
  out.affinity = nlohmann::json::object();
  std::vector<int> order(plan.operators.size()), device_of(plan.operators.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = static_cast<int>(i);
    device_of[i] = plan.operators[i].device_index;
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return plan.operators[static_cast<size_t>(a)].start_us < plan.operators[static_cast<size_t>(b)].start_us;
  });
  HETPLAN_ASSIGN_OR_RETURN(const std::vector<SegmentPlan> plan_segments, PlanSegments(model.graph, device_of, order));
  *segments = static_cast<int>(plan_segments.size());
  // Parameters and Results (no ONNX node): their neighbours' devices, which
  // ReadOperations does not give; the first PU's device when the neighbour
  // has none either.
  const std::string fallback = device_of_pu.at(plan.operators.empty() ? plan.devices.front().name
                                                                      : plan.operators.front().device);
  int automatic = 0;
  for (const ov_runtime::ReadOperation& op : ops) {
    // OpenVINO's own names change from one process to the next: left out,
    // and hetero.json gives the rule (the device of the operation it feeds).
    if (op.automatic_name) {
      ++automatic;
      continue;
    }
    std::string device = fallback;
    if (op.onnx_node >= 0 && keep[static_cast<size_t>(op.onnx_node)]) {
      device = device_of_pu.at(node_pu[static_cast<size_t>(op.onnx_node)]);
    } else if (op.neighbour_node >= 0 && keep[static_cast<size_t>(op.neighbour_node)]) {
      device = device_of_pu.at(node_pu[static_cast<size_t>(op.neighbour_node)]);
    }
    if (out.affinity.contains(op.name) && out.affinity[op.name] != device) {
      return Error(ErrorCode::kUnsupported, "{}: OpenVINO names two operations '{}', which the plan puts on {} and "
                   "{}; give the model's nodes unique names", model.path, op.name,
                   out.affinity[op.name].get<std::string>(), device);
    }
    if (!out.affinity.contains(op.name)) ++out.per_device[device];
    out.affinity[op.name] = device;
  }
  out.operations = static_cast<int>(out.affinity.size());
  for (const PlanFileDevice& d : plan.devices) {  // the platform's order
    auto it = device_of_pu.find(d.name);
    if (it != device_of_pu.end() && out.per_device.count(it->second) &&
        std::find(out.devices.begin(), out.devices.end(), it->second) == out.devices.end()) {
      out.devices.push_back(it->second);
    }
  }
  out.device = fmt::format("HETERO:{}", fmt::join(out.devices, ","));
  out.pu_devices = device_of_pu;
  out.hetero = {{"format", "hetplan-openvino-affinity"},
                {"schedule", fs::path(schedule_path).filename().string()},
                {"model", {{"file", model.path}, {"sha256", model.sha256}}},
                {"device", out.device},
                {"affinity", "affinity.json"},
                {"operations", out.operations},
                {"automatically_named_operations", automatic},
                {"automatically_named_rule",
                 "an operation OpenVINO names itself (Type_N, a decomposition's helper) is not in affinity.json: its "
                 "name changes from one process to the next; give it the device of the operation it feeds (else of "
                 "the one that feeds it)"},
                {"operations_per_device", out.per_device},
                {"pu_devices", device_of_pu},
                {"openvino", ov_runtime::Version()}};
  return out;
}

}  // namespace

Result<OpenVinoAffinity> MakeOpenVinoAffinity(const std::string& schedule_path,
                                              const std::map<std::string, std::string>& devices,
                                              const SplitOptions& options) {
  HETPLAN_ASSIGN_OR_RETURN(const deploy_internal::ScheduleFile file, deploy_internal::ReadScheduleFile(schedule_path));
  int segments = 0;
  return Affinity(file, schedule_path, devices, options, &segments);
}

Result<OpenVinoAffinity> ExportOpenVinoAffinity(const std::string& schedule_path, const std::string& out_dir,
                                                const std::map<std::string, std::string>& devices,
                                                const SplitOptions& options) {
  HETPLAN_ASSIGN_OR_RETURN(OpenVinoAffinity a, MakeOpenVinoAffinity(schedule_path, devices, options));
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return Error(ErrorCode::kIoError, "{}: cannot create the folder ({})", out_dir, ec.message());
  HETPLAN_RETURN_IF_ERROR(WriteFileAtomic((fs::path(out_dir) / "affinity.json").string(), a.affinity.dump(1) + "\n"));
  HETPLAN_RETURN_IF_ERROR(WriteFileAtomic((fs::path(out_dir) / "hetero.json").string(), a.hetero.dump(2) + "\n"));
  return a;
}

Result<HeteroRunReport> RunOnHetero(const std::string& schedule_path, const HeteroRunOptions& options) {
  HeteroRunReport out;
  HETPLAN_ASSIGN_OR_RETURN(const deploy_internal::ScheduleFile file, deploy_internal::ReadScheduleFile(schedule_path));
  HETPLAN_ASSIGN_OR_RETURN(out.affinity,
                           Affinity(file, schedule_path, options.devices, options.split, &out.plan_segments));
  out.planned_us = file.plan.makespan_us;
  ov_runtime::HeteroRequest r;
  r.model_path = out.affinity.model_file;
  for (const auto& [name, device] : out.affinity.affinity.items()) r.affinity[name] = device.get<std::string>();
  r.devices = out.affinity.devices;
  r.plugins = options.plugins;
  // Each CPU device with the threads its PUs were planned with (the most of them).
  for (const PlanFileDevice& d : file.plan.devices) {
    auto it = out.affinity.pu_devices.find(d.name);
    if (it == out.affinity.pu_devices.end()) continue;
    int& t = r.threads[it->second];
    t = std::max(t, std::max(d.threads, 1));
  }
  r.warmup = options.warmup;
  r.runs = options.runs;
  r.atol = options.atol;
  r.rtol = options.rtol;
  HETPLAN_ASSIGN_OR_RETURN(const ov_runtime::HeteroRun run, ov_runtime::RunHetero(r));
  out.device = run.device;
  out.submodels = run.submodels;
  out.execution_devices = run.execution_devices;
  out.operations = run.operations;
  std::vector<double> us = run.run_us;
  std::sort(us.begin(), us.end());
  auto at = [&](const std::vector<double>& v, double q) { return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))]; };
  out.median_us = at(us, 0.5);
  out.p10_us = at(us, 0.1);
  out.p90_us = at(us, 0.9);
  std::vector<double> ref = run.reference_us;
  std::sort(ref.begin(), ref.end());
  out.reference_median_us = at(ref, 0.5);
  out.reference_device = run.reference_device;
  out.max_abs_diff = run.max_abs_diff;
  out.max_rel_diff = run.max_rel_diff;
  out.outputs_match = run.mismatches == 0 && run.elements > 0;
  return out;
}

nlohmann::json HeteroRunToJson(const HeteroRunReport& r) {
  return {{"format", "hetplan-hetero-run"},
          {"device", r.device},
          {"model", r.affinity.model_file},
          {"submodels", r.submodels},
          {"plan_segments", r.plan_segments},
          {"execution_devices", r.execution_devices},
          {"operations_per_device", r.operations},
          {"median_us", r.median_us},
          {"p10_us", r.p10_us},
          {"p90_us", r.p90_us},
          {"reference_device", r.reference_device},
          {"reference_median_us", r.reference_median_us},
          {"planned_us", r.planned_us},
          {"max_abs_diff", r.max_abs_diff},
          {"max_rel_diff", r.max_rel_diff},
          {"outputs_match", r.outputs_match}};
}

}  // namespace hetplan
