// The OpenVINO profiler (include/hetplan/cost/profiler.h, ProfileOpenVino):
// BIDENT's measurement. The whole model is compiled on the PU's OpenVINO
// device with per-node counters on; each executed (fused) node's time goes to
// the hetplan operators whose ONNX nodes it covers (ov/openvino.h maps them),
// split by their work where one node spans several. docs/openvino.md.
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>

#include "cost/profiler_internal.h"
#include "hetplan/cost/profiler.h"
#include "ort/session.h"
#include "ov/openvino.h"

namespace hetplan {
namespace {

using cost_internal::CacheFile;

// An operator's share of a fused node that covers several: its roofline work
// (2 flops per MAC, one per output element), at least 1.
double OvShareWeight(const Operator& op) {
  return std::max(1.0, 2.0 * static_cast<double>(op.macs) + static_cast<double>(op.output_elements));
}

std::string OvNumber(double v) { return fmt::format("{}", v); }

Result<CostTable> MeasureOpenVino(const LoadedModel& m, const std::string& pu_name, const ProfileOptions& o) {
  const OpGraph& g = m.graph;
  if (o.stage) o.stage(fmt::format("the whole model on OpenVINO {} with per-node counters ({} + {} runs)", o.device,
                                   o.warmup, o.runs), -1);
  ov_runtime::ProfileRequest r;
  r.device = o.device.empty() ? std::string("CPU") : o.device;
  r.threads = o.threads;
  r.properties = o.provider_options;
  r.warmup = o.warmup;
  r.runs = o.runs;
  HETPLAN_ASSIGN_OR_RETURN(ov_runtime::ModelProfile prof, ov_runtime::ProfileModel(*m.model, m.path, r));

  std::vector<int> op_of(static_cast<size_t>(m.model->graph().node_size()), -1);
  for (const Operator& op : g.operators()) {
    for (int n : op.node_indices) {
      if (n >= 0 && static_cast<size_t>(n) < op_of.size()) op_of[static_cast<size_t>(n)] = op.id;
    }
  }
  std::vector<double> us(static_cast<size_t>(g.size()), 0.0);
  std::vector<char> timed(static_cast<size_t>(g.size()), 0);
  int split_nodes = 0;
  double unplaced_us = 0;
  for (const ov_runtime::ExecutedNode& e : prof.nodes) {
    std::set<int> ops;
    for (int n : e.onnx_nodes) {
      if (op_of[static_cast<size_t>(n)] >= 0) ops.insert(op_of[static_cast<size_t>(n)]);
    }
    if (ops.empty()) {
      unplaced_us += e.mean_us;
      continue;
    }
    if (ops.size() > 1) ++split_nodes;
    double work = 0;
    for (int id : ops) work += OvShareWeight(g.op(id));
    for (int id : ops) {
      us[static_cast<size_t>(id)] += e.mean_us * OvShareWeight(g.op(id)) / work;
      timed[static_cast<size_t>(id)] = 1;
    }
  }
  CostTable t;
  double sum_us = 0;
  int untimed = 0;
  for (const Operator& op : g.operators()) {
    OpCost c;
    c.op_id = op.id;
    c.op_name = op.name;
    c.pu = pu_name;
    c.exec_us = us[static_cast<size_t>(op.id)];
    sum_us += c.exec_us;
    untimed += timed[static_cast<size_t>(op.id)] ? 0 : 1;
    t.ops.push_back(std::move(c));
  }
  t.model_median_us = ort::Quantile(prof.run_us, 0.5);
  t.model_p10_us = ort::Quantile(prof.run_us, 0.1);
  t.model_p90_us = ort::Quantile(prof.run_us, 0.9);
  auto& meta = t.meta;
  meta["source"] = "measured";
  meta["model_sha256"] = m.sha256;
  meta["model_file"] = m.path.empty() ? std::string() : std::filesystem::path(m.path).filename().string();
  meta["fusion"] = ToString(m.fusion);
  meta["pu"] = pu_name;
  meta["host"] = HostName();
  meta["cpu"] = CpuModelName();
  meta["threads"] = std::to_string(o.threads);
  meta["runtime"] = "openvino " + ov_runtime::Version();
  meta["device"] = r.device;
  if (!prof.precision.empty()) meta["precision"] = prof.precision;
  for (const auto& [k, v] : o.provider_options) meta["property." + k] = v;
  meta["warmup"] = std::to_string(o.warmup);
  meta["runs"] = std::to_string(o.runs);
  meta["model_runs"] = std::to_string(o.runs);
  meta["op_statistic"] = "mean of OpenVINO's per-node counters over the timed runs of the whole model";
  meta["operators"] = std::to_string(g.size());
  meta["created"] = cost_internal::UtcNow();
  meta["executed_nodes"] = std::to_string(prof.nodes.size());
  meta["onnx_nodes"] = std::to_string(prof.onnx_nodes);
  meta["onnx_nodes_named"] = std::to_string(prof.named_nodes);
  meta["onnx_nodes_attributed"] = std::to_string(prof.attributed_nodes);
  meta["executed_nodes_split"] = std::to_string(split_nodes);
  meta["operators_without_time"] = std::to_string(untimed);
  meta["unplaced_us"] = OvNumber(unplaced_us);
  meta["sum_of_op_us"] = OvNumber(sum_us);
  meta["relative_error"] = OvNumber(sum_us / *t.model_median_us - 1.0);
  if (o.progress) o.progress(g.size(), g.size());
  return t;
}

}  // namespace

Result<CostTable> ProfileOpenVino(const LoadedModel& m, const std::string& pu_name, const ProfileOptions& o) {
  if (m.model == nullptr) {
    return Error(ErrorCode::kInvalidArgument, "profile: no ONNX model; load it with LoadOnnxModel first");
  }
  if (pu_name.empty()) {
    return Error(ErrorCode::kInvalidArgument, "profile: empty PU name; name the PU as in the platform (e.g. cpu)");
  }
  if (o.threads < 1 || o.threads > 1024 || o.warmup < 0 || o.runs < 1) {
    return Error(ErrorCode::kInvalidArgument, "profile: threads {}, warmup {}, runs {}: give threads 1 to 1024, "
                 "warmup >= 0 and runs >= 1", o.threads, o.warmup, o.runs);
  }
  if (!m.external_data_dir.empty()) {
    return Error(ErrorCode::kUnsupported, "{}: keeps {} weights as external data, which hetplan does not hand to "
                 "OpenVINO yet; profile it with runtime: onnxruntime, or save the weights inside the model",
                 m.path, m.external_tensors);
  }
  std::string key;
  if (!o.cache_dir.empty()) {
    key = ProfileCacheKey(m, pu_name, o);
    if (auto cached = cost_internal::LoadWholeCachedTable(m, pu_name, o.cache_dir, key)) {
      cached->meta["cache"] = "hit";
      cached->meta["cache_file"] = CacheFile(o.cache_dir, key, ".json").string();
      return std::move(*cached);
    }
  }
  HETPLAN_ASSIGN_OR_RETURN(CostTable t, MeasureOpenVino(m, pu_name, o));
  cost_internal::StoreInCache(o.cache_dir, key, &t);
  return t;
}

Result<CostTable> ProfileOperators(const LoadedModel& m, const std::string& pu_name, const ProfileOptions& o) {
  if (o.runtime == "openvino") return ProfileOpenVino(m, pu_name, o);
  return ProfileOnnxRuntime(m, pu_name, o);
}

}  // namespace hetplan
