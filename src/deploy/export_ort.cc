// The ort-layer-assignment export and its one-session run
// (include/hetplan/deploy/export_ort.h).
#include "hetplan/deploy/export_ort.h"

#include <fmt/format.h>
#include <onnxruntime_cxx_api.h>
#include <onnxruntime_session_options_config_keys.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>

#include "deploy/split_internal.h"
#include "hetplan/graph/graph_walk.h"
#include "hetplan/platform/platform.h"
#include "hetplan/util/io.h"
#include "ort/session.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

constexpr const char* kAnnotationKey = "layer_ann";
constexpr const char* kAnnotationPrefix = "hetplan/";

// PU → ONNX Runtime's provider name: the one given, else the platform's for
// a PU ONNX Runtime runs (cost: profile on ONNX Runtime, or OpenVINO's EP).
Result<std::map<std::string, std::string>> ProvidersOf(const PlanFile& plan, const std::string& label,
                                                       const std::map<std::string, std::string>& given) {
  std::map<std::string, std::string> out;
  for (const auto& [pu, provider] : given) {
    if (std::none_of(plan.devices.begin(), plan.devices.end(), [&](const PlanFileDevice& d) { return d.name == pu; })) {
      return Error(ErrorCode::kInvalidArgument, "{}: --device {}={}: the plan has no PU '{}'; name one of its PUs",
                   label, pu, provider, pu);
    }
    const std::string canonical = CanonicalProvider(provider);
    if (canonical.empty()) {
      return Error(ErrorCode::kInvalidArgument, "{}: --device {}={}: unknown execution provider; give one of {} (or "
                   "ONNX Runtime's name, e.g. CUDAExecutionProvider)", label, pu, provider,
                   fmt::join(kKnownProviders, ", "));
    }
    out[pu] = ort::OrtProviderName(canonical);
  }
  for (const PlanFileDevice& d : plan.devices) {
    if (out.count(d.name)) continue;
    if (d.runtime == "openvino") {
      out[d.name] = ort::OrtProviderName("openvino");
    } else if (d.configured) {
      out[d.name] = ort::OrtProviderName(CanonicalProvider(d.provider));
    }
  }
  for (const PlanFileDevice& d : plan.devices) {  // in the platform's order
    const bool used = std::any_of(plan.operators.begin(), plan.operators.end(),
                                  [&](const PlanFileOperator& op) { return op.device == d.name; });
    if (used && !out.count(d.name)) {
      return Error(ErrorCode::kInvalidArgument, "{}: PU '{}' runs operators but no ONNX Runtime execution provider "
                   "runs it; give it one with --device {}=<cpu|cuda|openvino|...>", label, d.name, d.name);
    }
  }
  return out;
}

// Seeded inputs for `s`, the same for every session of the same model.
std::vector<Ort::Value> Inputs(Ort::Session& s, std::vector<std::string>* names) {
  std::mt19937_64 rng(0x6865747061);
  Ort::AllocatorWithDefaultOptions alloc;
  std::vector<Ort::Value> values;
  for (size_t i = 0; i < s.GetInputCount(); ++i) {
    names->push_back(s.GetInputNameAllocated(i, alloc).get());
    const Ort::TypeInfo type = s.GetInputTypeInfo(i);  // owns what the view below reads
    const auto info = type.GetTensorTypeAndShapeInfo();
    std::vector<int64_t> shape = info.GetShape();
    for (int64_t& d : shape) d = d < 0 ? 1 : d;
    values.push_back(ort::InputTensor(names->back(), info.GetElementType(), shape, rng));
  }
  return values;
}

// `warmup` + `runs` runs of `s` (µs each into `us`); the last run's outputs.
std::vector<Ort::Value> TimeRuns(Ort::Session& s, int warmup, int runs, std::vector<double>* us) {
  std::vector<std::string> in_names;
  std::vector<Ort::Value> inputs = Inputs(s, &in_names);
  Ort::AllocatorWithDefaultOptions alloc;
  std::vector<std::string> out_names;
  for (size_t i = 0; i < s.GetOutputCount(); ++i) out_names.push_back(s.GetOutputNameAllocated(i, alloc).get());
  std::vector<const char*> in_c, out_c;
  for (const auto& n : in_names) in_c.push_back(n.c_str());
  for (const auto& n : out_names) out_c.push_back(n.c_str());
  std::vector<Ort::Value> outputs;
  for (int i = 0; i < warmup + runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    outputs = s.Run(Ort::RunOptions{nullptr}, in_c.data(), inputs.data(), inputs.size(), out_c.data(), out_c.size());
    const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (i >= warmup) us->push_back(t);
  }
  return outputs;
}

Result<OneSessionReport> RunOne(const std::string& dir, const OneSessionOptions& o) {
  const fs::path session_path = fs::path(dir) / "session.json";
  HETPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(session_path.string(), int64_t{1} << 24));
  const nlohmann::json session = nlohmann::json::parse(text, nullptr, false);
  if (!session.is_object() || session.value("format", "") != "hetplan-ort-layer-assignment" ||
      !session.contains("session_config") || !session["session_config"].is_object()) {
    return Error(ErrorCode::kParseError, "{}: not a session.json written by hetplan export --format "
                 "ort-layer-assignment; export the plan again", session_path.string());
  }
  OneSessionReport r;
  r.model_file = (fs::path(dir) / session.value("model", "model.onnx")).string();
  HETPLAN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(r.model_file, int64_t{1} << 31));
  const std::string source_file = session["source_model"].value("file", "");
  HETPLAN_ASSIGN_OR_RETURN(std::string source_bytes, ReadFile(source_file, int64_t{1} << 31));
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) return Error(ErrorCode::kParseError, "{}: not an ONNX model", r.model_file);
  // Each annotated node's planned provider.
  const nlohmann::json& providers = session["providers"];
  std::map<std::string, std::string> planned;
  for (const auto& n : model.graph().node()) {
    for (const auto& e : n.metadata_props()) {
      if (e.key() != kAnnotationKey || e.value().rfind(kAnnotationPrefix, 0) != 0) continue;
      const std::string pu = e.value().substr(std::strlen(kAnnotationPrefix));
      if (providers.contains(pu)) planned[n.name()] = providers[pu].get<std::string>();
    }
  }
  HETPLAN_ASSIGN_OR_RETURN(Ort::Env * env, ort::SharedEnv());
  Ort::SessionOptions so = ort::MakeSessionOptions(o.threads, session.value("graph_optimization", "basic"));
  for (const auto& [k, v] : session["session_config"].items()) so.AddConfigEntry(k.c_str(), v.get<std::string>().c_str());
  Ort::Session one(*env, bytes.data(), bytes.size(), so);
  std::set<std::string> seen;
  for (const auto& sub : one.GetEpGraphAssignmentInfo()) {
    const std::string ep = sub.GetEpName();
    for (const auto& node : sub.GetNodes()) {
      const std::string name = node.GetName();
      ++r.recorded_nodes;
      ++r.ran_on[ep];
      seen.insert(name);
      auto it = planned.find(name);
      if (it == planned.end()) {
        ++r.unannotated;
      } else if (it->second == ep) {
        ++r.as_planned;
      } else {
        if (r.elsewhere++ == 0) r.first_elsewhere = fmt::format("node '{}' planned on {} ran on {}", name, it->second, ep);
      }
    }
  }
  for (const auto& [name, ep] : planned) r.not_recorded += seen.count(name) ? 0 : 1;
  std::vector<double> us, ref_us;
  const std::vector<Ort::Value> got = TimeRuns(one, o.warmup, o.runs, &us);
  Ort::Session plain(*env, source_bytes.data(), source_bytes.size(),
                     ort::MakeSessionOptions(o.threads, session.value("graph_optimization", "basic")));
  const std::vector<Ort::Value> want = TimeRuns(plain, o.warmup, o.runs, &ref_us);
  for (size_t k = 0; k < got.size() && k < want.size(); ++k) {
    const auto gi = got[k].GetTensorTypeAndShapeInfo();
    if (gi.GetElementType() != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) continue;
    const float* a = got[k].GetTensorData<float>();
    const float* b = want[k].GetTensorData<float>();
    const size_t n = std::min(gi.GetElementCount(), want[k].GetTensorTypeAndShapeInfo().GetElementCount());
    for (size_t i = 0; i < n; ++i) {
      const double d = std::abs(static_cast<double>(a[i]) - b[i]);
      r.max_abs_diff = std::max(r.max_abs_diff, d);
      r.mismatches += d > o.atol + o.rtol * std::abs(static_cast<double>(b[i])) ? 1 : 0;
      ++r.elements;
    }
  }
  r.median_us = ort::Quantile(us, 0.5);
  r.p10_us = ort::Quantile(us, 0.1);
  r.p90_us = ort::Quantile(us, 0.9);
  r.reference_median_us = ort::Quantile(ref_us, 0.5);
  return r;
}

}  // namespace

Result<OrtLayerAssignment> ExportOrtLayerAssignment(const std::string& schedule_path, const std::string& out_dir,
                                                    const std::map<std::string, std::string>& providers,
                                                    const SplitOptions& options) {
  HETPLAN_ASSIGN_OR_RETURN(const deploy_internal::ScheduleFile file, deploy_internal::ReadScheduleFile(schedule_path));
  const PlanFile& plan = file.plan;
  if (plan.requests.size() > 1) {
    return Error(ErrorCode::kUnsupported, "{}: a plan of {} requests is not one model's placement; export a "
                 "one-request plan", schedule_path, plan.requests.size());
  }
  OrtLayerAssignment out;
  HETPLAN_ASSIGN_OR_RETURN(out.providers, ProvidersOf(plan, schedule_path, providers));
  HETPLAN_ASSIGN_OR_RETURN(LoadedModel model, deploy_internal::LoadScheduleModel(plan, schedule_path, options, false));
  HETPLAN_ASSIGN_OR_RETURN(onnx::ModelProto source, deploy_internal::ReadPlannedFile(model));
  std::vector<std::string> pu = deploy_internal::PlannedPuOfFileNodes(plan, model, source);
  // A node the plan folded away: its nearest reader's PU, else its nearest writer's.
  FillFromNeighbours(
      source.graph(), [&](int i) { return !pu[static_cast<size_t>(i)].empty(); },
      [&](int to, int from) { pu[static_cast<size_t>(to)] = pu[static_cast<size_t>(from)]; });
  std::set<std::string> names;
  for (const auto& n : source.graph().node()) names.insert(n.name());
  auto* g = source.mutable_graph();
  for (int i = 0; i < g->node_size(); ++i) {
    auto* n = g->mutable_node(i);
    if (n->name().empty()) {
      std::string name = fmt::format("{}_{}", n->op_type(), i);
      while (names.count(name)) name += "_";
      n->set_name(name);
      names.insert(name);
    }
    const std::string& p = pu[static_cast<size_t>(i)].empty() ? plan.operators.front().device : pu[static_cast<size_t>(i)];
    auto* props = n->mutable_metadata_props();
    for (int k = props->size(); k-- > 0;) {
      if (props->Get(k).key() == kAnnotationKey) props->DeleteSubrange(k, 1);
    }
    auto* e = n->add_metadata_props();
    e->set_key(kAnnotationKey);
    e->set_value(kAnnotationPrefix + p);
    ++out.nodes[p];
  }
  // One rule per provider, each annotation matched exactly.
  std::map<std::string, std::vector<std::string>> by_provider;
  for (const auto& [p, n] : out.nodes) by_provider[out.providers.at(p)].push_back("=" + std::string(kAnnotationPrefix) + p);
  for (const auto& [provider, anns] : by_provider) {
    out.settings += fmt::format("{}{}({})", out.settings.empty() ? "" : "; ", provider, fmt::join(anns, ", "));
  }
  out.session = {{"format", "hetplan-ort-layer-assignment"},
                 {"model", "model.onnx"},
                 {"source_model", {{"file", model.path}, {"sha256", model.sha256}}},
                 {"schedule", fs::path(schedule_path).filename().string()},
                 {"graph_optimization", "basic"},
                 {"session_config",
                  {{kOrtSessionOptionsLayerAssignmentSettings, out.settings},
                   {kOrtSessionOptionsRecordEpGraphAssignmentInfo, "1"}}},
                 {"providers", out.providers},
                 {"annotated_nodes", out.nodes}};
  std::string bytes;
  if (!source.SerializeToString(&bytes)) {
    return Error(ErrorCode::kLimitExceeded, "{}: the annotated model cannot be serialised (over 2 GiB?)", model.path);
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return Error(ErrorCode::kIoError, "{}: cannot create the folder ({})", out_dir, ec.message());
  HETPLAN_RETURN_IF_ERROR(WriteFileAtomic((fs::path(out_dir) / "model.onnx").string(), bytes));
  HETPLAN_RETURN_IF_ERROR(WriteFileAtomic((fs::path(out_dir) / "session.json").string(), out.session.dump(2) + "\n"));
  return out;
}

Result<OneSessionReport> RunOneSession(const std::string& dir, const OneSessionOptions& options) {
  if (options.runs < 1 || options.warmup < 0 || options.threads < 1) {
    return Error(ErrorCode::kInvalidArgument, "run --one-session: give runs >= 1, warmup >= 0 and threads >= 1");
  }
  try {
    return RunOne(dir, options);
  } catch (const Ort::Exception& e) {
    return Error(ErrorCode::kUnsupported, "{}: ONNX Runtime: {}", dir, OneLine(e.what()));
  }
}

nlohmann::json OneSessionToJson(const OneSessionReport& r) {
  return {{"format", "hetplan-one-session-run"},
          {"model", r.model_file},
          {"recorded_nodes", r.recorded_nodes},
          {"as_planned", r.as_planned},
          {"elsewhere", r.elsewhere},
          {"first_elsewhere", r.first_elsewhere},
          {"not_recorded", r.not_recorded},
          {"unannotated", r.unannotated},
          {"ran_on", r.ran_on},
          {"median_us", r.median_us},
          {"p10_us", r.p10_us},
          {"p90_us", r.p90_us},
          {"reference_median_us", r.reference_median_us},
          {"max_abs_diff", r.max_abs_diff},
          {"mismatches", r.mismatches},
          {"elements", r.elements}};
}

}  // namespace hetplan
