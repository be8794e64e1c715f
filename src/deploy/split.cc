// Splitting a plan into per-PU sub-models (include/hetplan/deploy/split.h).
//
// Works on the imported model (after folding and shape inference), so every
// boundary tensor has a static shape. A segment's sub-model holds its
// operators' nodes plus whatever non-operator nodes they read through
// (Constant, Identity/Dropout aliases, computations on constants only): those
// are cheap and are copied into every segment that needs them, so a segment
// never waits on another for a constant.
#include "hetplan/deploy/split.h"

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "hetplan/graph/dtype.h"
#include "hetplan/graph/quantization.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/validate/validator.h"
#include "hetplan/util/io.h"
#include "hetplan/util/sha256.h"
#include "deploy/split_internal.h"
#include "ort/session.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

// File names carry the PU name; keep them portable.
std::string SafeName(const std::string& s) {
  std::string out;
  for (char ch : s) {
    out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_') ? ch : '_';
  }
  return out.empty() ? std::string("pu") : out;
}

std::string SegmentFileName(int id, const std::string& device) {
  return fmt::format("segment_{:03d}_{}.onnx", id, SafeName(device));
}

// --- the schedule, as split reads it -------------------------------------------

struct ScheduleDevice {
  std::string name, kind, costs, execution;
  int threads = 0;  // for profiled CPUs: the threads the costs were measured with
  // The boundary cost the planner charged per segment on this PU, inside the
  // transfer_us of every edge into it (devices[].boundary_us; 0 if absent).
  double boundary_us = 0;
  // The platform's ONNX Runtime configuration of a `cost: profile` PU.
  bool configured = false;
  std::string provider = "cpu";
  std::map<std::string, std::string> provider_options;
  std::vector<int> cores;
  // Runs here for real (a CPU, or a PU measured with ONNX Runtime) rather
  // than being charged from the cost model.
  bool executable() const { return kind == "cpu" || costs == "measured"; }
};

struct ScheduleOp {
  std::string name, device;
  int device_index = -1;
  double start_us = 0, finish_us = 0, predicted_us = 0;
};

struct ParsedSchedule {
  std::vector<ScheduleDevice> devices;
  std::vector<ScheduleOp> ops;
  std::vector<std::tuple<int, int, double>> transfers;  // (from, to, µs) where given
  std::string model_name, model_file, model_sha256, fusion;
  double makespan_us = 0;
  // The profile's prediction of the whole model on the plan's CPU (the
  // cpu_only_us baseline) when that CPU's costs were measured here.
  double predicted_unsplit_us = 0;
  std::string solver, solver_status, platform;
  int violations = 0;
};

Result<ParsedSchedule> ParseSchedule(const nlohmann::json& s, const std::string& label) {
  auto bad = [&](const std::string& where, const std::string& what) {
    return Error(ErrorCode::kParseError, "{}: {}: {}; give a schedule written by `hetplan partition --out`", label,
                 where, what);
  };
  if (!s.is_object() || s.value("format", "") != "hetplan-schedule") {
    return bad("format", "not a hetplan schedule file (\"format\": \"hetplan-schedule\" missing)");
  }
  ParsedSchedule p;
  const auto& model = s.value("model", nlohmann::json::object());
  if (!model.is_object() || !model.contains("file") || !model["file"].is_string()) {
    return bad("model.file", "missing");
  }
  p.model_file = model["file"].get<std::string>();
  p.model_name = model.value("name", std::string());
  p.model_sha256 = model.value("sha256", std::string());
  p.fusion = model.value("fusion", std::string("none"));
  if (!s.contains("devices") || !s["devices"].is_array() || s["devices"].empty()) {
    return bad("devices", "missing or empty");
  }
  std::unordered_map<std::string, int> device_index;
  for (size_t i = 0; i < s["devices"].size(); ++i) {
    const auto& d = s["devices"][i];
    if (!d.is_object() || !d.contains("name") || !d["name"].is_string()) {
      return bad(fmt::format("devices[{}].name", i), "missing");
    }
    ScheduleDevice dev;
    dev.name = d["name"].get<std::string>();
    dev.kind = d.value("kind", std::string("cpu"));
    dev.costs = d.value("costs", std::string());
    dev.execution = d.value("execution", std::string("serial"));
    if (d.contains("boundary_us") && d["boundary_us"].is_number() && d["boundary_us"].get<double>() >= 0) {
      dev.boundary_us = d["boundary_us"].get<double>();
    }
    if (s.contains("platform") && s["platform"].is_object() && s["platform"].contains(dev.name)) {
      const auto& pu = s["platform"][dev.name];
      if (pu.is_object() && pu.contains("threads") && pu["threads"].is_number_integer()) {
        dev.threads = pu["threads"].get<int>();
      }
      if (pu.is_object() && pu.contains("provider") && pu["provider"].is_string()) {
        dev.configured = true;
        dev.provider = pu["provider"].get<std::string>();
        if (pu.contains("provider_options") && pu["provider_options"].is_object()) {
          for (const auto& [k, v] : pu["provider_options"].items()) {
            if (v.is_string()) dev.provider_options[k] = v.get<std::string>();
          }
        }
        if (pu.contains("cores") && pu["cores"].is_array()) {
          for (const auto& c : pu["cores"]) {
            if (c.is_number_integer()) dev.cores.push_back(c.get<int>());
          }
        }
      }
    }
    device_index.emplace(dev.name, static_cast<int>(i));
    p.devices.push_back(std::move(dev));
  }
  const auto cpu = std::find_if(p.devices.begin(), p.devices.end(), [](const ScheduleDevice& d) { return d.kind == "cpu"; });
  const auto& baselines = s.value("baselines", nlohmann::json::object());
  if (cpu != p.devices.end() && cpu->costs == "measured" && baselines.is_object() &&
      baselines.contains("cpu_only_us") && baselines["cpu_only_us"].is_number()) {
    p.predicted_unsplit_us = std::max(0.0, baselines["cpu_only_us"].get<double>());
  }
  if (!s.contains("operators") || !s["operators"].is_array()) return bad("operators", "missing");
  const auto& ops = s["operators"];
  p.ops.resize(ops.size());
  std::vector<bool> seen(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& o = ops[i];
    const std::string where = fmt::format("operators[{}]", i);
    if (!o.is_object() || !o.contains("id") || !o["id"].is_number_integer()) return bad(where + ".id", "missing");
    const int64_t id = o["id"].get<int64_t>();
    if (id < 0 || id >= static_cast<int64_t>(ops.size()) || seen[static_cast<size_t>(id)]) {
      return bad(where + ".id", fmt::format("{} is out of range or repeated", id));
    }
    seen[static_cast<size_t>(id)] = true;
    ScheduleOp& op = p.ops[static_cast<size_t>(id)];
    op.name = o.value("name", std::string());
    if (!o.contains("device") || !o["device"].is_string()) return bad(where + ".device", "missing");
    op.device = o["device"].get<std::string>();
    auto dit = device_index.find(op.device);
    if (dit == device_index.end()) {
      return bad(where + ".device", fmt::format("'{}' is not in devices[]", op.device));
    }
    op.device_index = dit->second;
    for (const char* key : {"start_us", "finish_us"}) {
      if (!o.contains(key) || !o[key].is_number() || !std::isfinite(o[key].get<double>())) {
        return bad(fmt::format("{}.{}", where, key), "missing or not a finite number");
      }
    }
    op.start_us = o["start_us"].get<double>();
    op.finish_us = o["finish_us"].get<double>();
    const auto& cost = o.value("cost_us", nlohmann::json::object());
    if (!cost.is_object() || !cost.contains(op.device) || !cost[op.device].is_number()) {
      return bad(fmt::format("{}.cost_us.{}", where, op.device),
                 fmt::format("operator '{}' has no cost on its device '{}' (unsupported there)", op.name, op.device));
    }
    double slowdown = o.contains("slowdown") && o["slowdown"].is_number() ? o["slowdown"].get<double>() : 1.0;
    op.predicted_us = cost[op.device].get<double>() * slowdown;
  }
  if (s.contains("edges") && s["edges"].is_array()) {
    for (const auto& e : s["edges"]) {
      if (!e.is_object() || !e.contains("from") || !e.contains("to") || !e["from"].is_number_integer() ||
          !e["to"].is_number_integer()) {
        continue;
      }
      if (e.contains("transfer_us") && e["transfer_us"].is_number()) {
        p.transfers.emplace_back(e["from"].get<int>(), e["to"].get<int>(), e["transfer_us"].get<double>());
      }
    }
  }
  if (s.contains("makespan_us") && s["makespan_us"].is_number()) p.makespan_us = s["makespan_us"].get<double>();
  if (s.contains("solver") && s["solver"].is_object()) {
    p.solver = s["solver"].value("name", std::string());
    p.solver_status = s["solver"].value("status", std::string());
  }
  if (s.contains("platform") && s["platform"].is_object()) p.platform = s["platform"].value("name", std::string());
  p.violations = static_cast<int>(ValidateScheduleJson(s).violations.size());
  return p;
}

// --- sub-model construction ----------------------------------------------------

struct Boundary {
  std::string name;
  int32_t elem_type = onnx::TensorProto::UNDEFINED;
  std::vector<int64_t> shape;
  int64_t bytes() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n * DtypeBytes(elem_type);
  }
};

struct SegmentBuild {
  std::set<int> nodes;  // node indices (the model is topologically sorted)
  std::set<int> inits, sparse;
  std::vector<std::string> inputs;        // in order of first use
  std::map<std::string, int> input_from;  // tensor → producing segment (-1: model input)
  std::set<std::string> outputs;
  std::set<std::string> model_outputs;             // subset of outputs that are graph outputs
  std::map<std::string, std::set<int>> output_to;  // tensor → consuming segments
  bool unused_outputs = false;
};

class Splitter {
 public:
  Splitter(const LoadedModel& m, const std::vector<SegmentPlan>& plan) : m_(m), g_(m.model->graph()), plan_(plan) {
    for (int i = 0; i < g_.node_size(); ++i) {
      for (const auto& o : g_.node(i).output()) {
        if (!o.empty()) producer_.emplace(o, i);
      }
    }
    for (int i = 0; i < g_.initializer_size(); ++i) initializer_.emplace(g_.initializer(i).name(), i);
    for (int i = 0; i < g_.sparse_initializer_size(); ++i) {
      sparse_.emplace(g_.sparse_initializer(i).values().name(), i);
    }
    for (const auto& vi : g_.input()) {
      if (!initializer_.count(vi.name())) graph_inputs_.insert(vi.name());
    }
    for (const auto& vi : g_.input()) value_info_.emplace(vi.name(), &vi);
    for (const auto& vi : g_.value_info()) value_info_.emplace(vi.name(), &vi);
    for (const auto& vi : g_.output()) value_info_.emplace(vi.name(), &vi);
    for (const Operator& op : m.graph.operators()) {
      for (const auto& t : op.inputs) known_.emplace(t.name, &t);
      for (const auto& t : op.outputs) known_.emplace(t.name, &t);
    }
    for (const auto& t : m.graph.graph_inputs()) known_.emplace(t.name, &t);
    for (const auto& t : m.graph.graph_outputs()) known_.emplace(t.name, &t);
    segment_of_node_.assign(static_cast<size_t>(g_.node_size()), -1);
    for (size_t s = 0; s < plan.size(); ++s) {
      for (int v : plan[s].operators) {
        for (int i : m.graph.op(v).node_indices) segment_of_node_[static_cast<size_t>(i)] = static_cast<int>(s);
      }
    }
    builds_.resize(plan.size());
  }

  Status Build() {
    for (int i = 0; i < g_.initializer_size(); ++i) {
      if (g_.initializer(i).data_location() == onnx::TensorProto::EXTERNAL) {
        return Error(ErrorCode::kUnsupported,
                     "{}: initializer '{}' is stored as external data, which split "
                     "cannot copy into sub-models yet; re-save the model with its weights inside the file "
                     "(onnx.save(model, path, save_as_external_data=False))",
                     m_.path, g_.initializer(i).name());
      }
    }
    for (int i = 0; i < g_.node_size(); ++i) {
      const int s = segment_of_node_[static_cast<size_t>(i)];
      if (s >= 0) builds_[static_cast<size_t>(s)].nodes.insert(i);
    }
    for (size_t s = 0; s < plan_.size(); ++s) {
      // Copy: Need() adds nodes while we walk.
      std::vector<int> own(builds_[s].nodes.begin(), builds_[s].nodes.end());
      for (int i : own) {
        for (const auto& in : g_.node(i).input()) {
          if (!in.empty()) HETPLAN_RETURN_IF_ERROR(Need(static_cast<int>(s), in));
        }
      }
    }
    for (const auto& out : g_.output()) {
      const std::string& name = out.name();
      if (graph_inputs_.count(name)) {
        return Error(ErrorCode::kUnsupported,
                     "{}: graph output '{}' is also a graph input; a pass-through "
                     "output cannot be split",
                     m_.path, name);
      }
      const int s = OwnerOfGraphOutput(name);
      HETPLAN_RETURN_IF_ERROR(Need(s, name));
      builds_[static_cast<size_t>(s)].outputs.insert(name);
      builds_[static_cast<size_t>(s)].model_outputs.insert(name);
    }
    // A segment whose results nobody reads (dead operators) still needs an
    // output to be a valid model: expose its operators' outputs.
    for (size_t s = 0; s < plan_.size(); ++s) {
      SegmentBuild& b = builds_[s];
      if (!b.outputs.empty()) continue;
      for (int v : plan_[s].operators) {
        for (const auto& t : m_.graph.op(v).outputs) b.outputs.insert(t.name);
      }
      b.unused_outputs = true;
      if (b.outputs.empty()) {
        return Error(ErrorCode::kInternal, "segment {}: its operators have no outputs", s);
      }
    }
    return Status::Ok();
  }

  const std::vector<SegmentBuild>& builds() const { return builds_; }

  // Outputs in the order their producing nodes write them.
  std::vector<std::string> OrderedOutputs(int s) const {
    std::vector<std::string> out(builds_[static_cast<size_t>(s)].outputs.begin(),
                                 builds_[static_cast<size_t>(s)].outputs.end());
    auto key = [&](const std::string& t) {
      auto it = producer_.find(t);
      int node = it == producer_.end() ? -1 : it->second;
      int pos = 0;
      if (node >= 0) {
        const auto& n = g_.node(node);
        for (int k = 0; k < n.output_size(); ++k) {
          if (n.output(k) == t) pos = k;
        }
      }
      return std::make_pair(node, pos);
    };
    std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
    return out;
  }

  Result<Boundary> Describe(const std::string& name) const {
    Boundary b;
    b.name = name;
    const TensorInfo* info = nullptr;
    if (auto it = known_.find(name); it != known_.end()) info = it->second;
    auto vi = value_info_.find(name);
    if (vi != value_info_.end() && vi->second->type().has_tensor_type()) {
      b.elem_type = vi->second->type().tensor_type().elem_type();
    }
    if (b.elem_type == onnx::TensorProto::UNDEFINED && info != nullptr) b.elem_type = DtypeFromName(info->dtype);
    if (b.elem_type == onnx::TensorProto::UNDEFINED || DtypeName(b.elem_type).empty()) {
      return Error(ErrorCode::kUnsupported,
                   "{}: tensor '{}' crosses a segment boundary but its element type "
                   "is unknown or unsupported; re-export the model with typed tensors",
                   m_.path, name);
    }
    if (info != nullptr) {
      b.shape = info->shape;
      return b;
    }
    if (vi != value_info_.end() && vi->second->type().tensor_type().has_shape()) {
      bool all = true;
      for (const auto& d : vi->second->type().tensor_type().shape().dim()) {
        if (!d.has_dim_value()) all = false;
        b.shape.push_back(d.dim_value());
      }
      if (all) return b;
    }
    return Error(ErrorCode::kUnsupported,
                 "{}: tensor '{}' crosses a segment boundary without a static shape; "
                 "give static input shapes with --shape",
                 m_.path, name);
  }

  // The sub-model of segment s.
  Result<onnx::ModelProto> SubModel(int s, const std::string& graph_name) const {
    const SegmentBuild& b = builds_[static_cast<size_t>(s)];
    const onnx::ModelProto& model = *m_.model;
    onnx::ModelProto sub;
    sub.set_ir_version(model.ir_version());
    // The opsets its nodes use (com.microsoft for ONNX Runtime's fused
    // operators), not every domain the exporter declared.
    std::set<std::string> used = {""};
    for (int i : b.nodes) used.insert(g_.node(i).domain() == "ai.onnx" ? "" : g_.node(i).domain());
    for (const auto& f : model.functions()) used.insert(f.domain());
    for (const auto& o : model.opset_import()) {
      const std::string d = o.domain() == "ai.onnx" ? "" : o.domain();
      if (used.count(d)) *sub.add_opset_import() = o;
    }
    *sub.mutable_functions() = model.functions();
    sub.set_producer_name("hetplan-split");
    sub.set_model_version(model.model_version());
    auto* sg = sub.mutable_graph();
    sg->set_name(graph_name);
    std::unordered_set<std::string> boundary(b.inputs.begin(), b.inputs.end());
    boundary.insert(b.outputs.begin(), b.outputs.end());
    for (int i : b.nodes) {
      *sg->add_node() = g_.node(i);
      for (const auto& o : g_.node(i).output()) {
        if (o.empty() || boundary.count(o)) continue;
        if (auto vi = value_info_.find(o); vi != value_info_.end()) *sg->add_value_info() = *vi->second;
      }
    }
    for (int i : b.inits) *sg->add_initializer() = g_.initializer(i);
    for (int i : b.sparse) *sg->add_sparse_initializer() = g_.sparse_initializer(i);
    for (const auto& name : b.inputs) {
      HETPLAN_ASSIGN_OR_RETURN(Boundary t, Describe(name));
      SetValueInfo(t, sg->add_input());
    }
    for (const auto& name : OrderedOutputs(s)) {
      HETPLAN_ASSIGN_OR_RETURN(Boundary t, Describe(name));
      SetValueInfo(t, sg->add_output());
    }
    return sub;
  }

 private:
  static void SetValueInfo(const Boundary& t, onnx::ValueInfoProto* vi) {
    vi->set_name(t.name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(t.elem_type);
    auto* shape = tt->mutable_shape();
    for (int64_t d : t.shape) shape->add_dim()->set_dim_value(d);
  }

  // Makes tensor `name` available inside segment s: produced there, an
  // initializer copied in, a non-operator node pulled in (with what it
  // reads), or a boundary input from the model or another segment.
  Status Need(int s, const std::string& first) {
    SegmentBuild& b = builds_[static_cast<size_t>(s)];
    std::vector<std::string> work = {first};
    while (!work.empty()) {
      std::string name = std::move(work.back());
      work.pop_back();
      auto p = producer_.find(name);
      if (p != producer_.end() && b.nodes.count(p->second)) continue;
      if (b.input_from.count(name)) continue;
      if (auto it = initializer_.find(name); it != initializer_.end()) {
        b.inits.insert(it->second);
        continue;
      }
      if (auto it = sparse_.find(name); it != sparse_.end()) {
        b.sparse.insert(it->second);
        continue;
      }
      if (p == producer_.end()) {
        if (!graph_inputs_.count(name)) {
          return Error(ErrorCode::kInternal, "{}: tensor '{}' has no producer, initializer or graph input", m_.path,
                       name);
        }
        b.inputs.push_back(name);
        b.input_from.emplace(name, -1);
        continue;
      }
      const int owner = segment_of_node_[static_cast<size_t>(p->second)];
      if (owner >= 0) {
        if (owner == s) continue;  // cannot happen: owned nodes are in b.nodes
        b.inputs.push_back(name);
        b.input_from.emplace(name, owner);
        SegmentBuild& from = builds_[static_cast<size_t>(owner)];
        from.outputs.insert(name);
        from.output_to[name].insert(s);
        continue;
      }
      // A non-operator node (Constant, Identity, constant-only arithmetic).
      b.nodes.insert(p->second);
      const auto& node = g_.node(p->second);
      for (int k = node.input_size() - 1; k >= 0; --k) {
        if (!node.input(k).empty()) work.push_back(node.input(k));
      }
    }
    return Status::Ok();
  }

  // The segment that writes graph output `name`: its producer's, or for an
  // output computed by non-operator nodes (an Identity after the last
  // operator), the latest segment among the operators it reads.
  int OwnerOfGraphOutput(const std::string& name) const {
    const int last = static_cast<int>(plan_.size()) - 1;
    int best = -1;
    std::vector<std::string> work = {name};
    std::unordered_set<std::string> seen;
    while (!work.empty()) {
      std::string t = std::move(work.back());
      work.pop_back();
      if (!seen.insert(t).second) continue;
      auto p = producer_.find(t);
      if (p == producer_.end()) continue;
      const int owner = segment_of_node_[static_cast<size_t>(p->second)];
      if (owner >= 0) {
        best = std::max(best, owner);
        continue;
      }
      for (const auto& in : g_.node(p->second).input()) {
        if (!in.empty()) work.push_back(in);
      }
    }
    return best >= 0 ? best : last;
  }

  const LoadedModel& m_;
  const onnx::GraphProto& g_;
  const std::vector<SegmentPlan>& plan_;
  std::unordered_map<std::string, int> producer_, initializer_, sparse_;
  std::unordered_set<std::string> graph_inputs_;
  std::unordered_map<std::string, const onnx::ValueInfoProto*> value_info_;
  std::unordered_map<std::string, const TensorInfo*> known_;
  std::vector<int> segment_of_node_;
  std::vector<SegmentBuild> builds_;
};

ManifestTensor TensorOf(const Boundary& t) {
  ManifestTensor m;
  m.name = t.name;
  m.dtype = std::string(DtypeName(t.elem_type));
  m.shape = t.shape;
  m.bytes = t.bytes();
  return m;
}

// Topological order of segments with edges from → to (Kahn, smallest index first).
bool IsAcyclic(int n, const std::vector<std::set<int>>& succ) {
  std::vector<int> indegree(static_cast<size_t>(n), 0);
  for (const auto& s : succ) {
    for (int t : s) ++indegree[static_cast<size_t>(t)];
  }
  std::vector<int> ready;
  for (int i = 0; i < n; ++i) {
    if (indegree[static_cast<size_t>(i)] == 0) ready.push_back(i);
  }
  int done = 0;
  while (!ready.empty()) {
    int u = ready.back();
    ready.pop_back();
    ++done;
    for (int t : succ[static_cast<size_t>(u)]) {
      if (--indegree[static_cast<size_t>(t)] == 0) ready.push_back(t);
    }
  }
  return done == n;
}

}  // namespace

Result<std::vector<SegmentPlan>> PlanSegments(const OpGraph& g, const std::vector<int>& device_of,
                                              const std::vector<int>& order, const std::vector<bool>& cut_before) {
  const int n = g.size();
  if (static_cast<int>(device_of.size()) != n || static_cast<int>(order.size()) != n ||
      (!cut_before.empty() && static_cast<int>(cut_before.size()) != n)) {
    return Error(ErrorCode::kInvalidArgument, "segments: {} operators but {} devices, {} positions and {} cuts given",
                 n, device_of.size(), order.size(), cut_before.size());
  }
  std::vector<int> position(static_cast<size_t>(n), -1);
  for (int k = 0; k < n; ++k) {
    const int v = order[static_cast<size_t>(k)];
    if (v < 0 || v >= n || position[static_cast<size_t>(v)] >= 0) {
      return Error(ErrorCode::kInvalidArgument,
                   "segments: the execution order is not a permutation of the "
                   "{} operators (operator {} at position {})",
                   n, v, k);
    }
    position[static_cast<size_t>(v)] = k;
  }
  for (const Edge& e : g.edges()) {
    if (position[static_cast<size_t>(e.from)] > position[static_cast<size_t>(e.to)]) {
      return Error(ErrorCode::kInvalidArgument,
                   "segments: operator '{}' runs before '{}', whose output it "
                   "reads; the schedule is not in data-flow order (check it with hetplan validate)",
                   g.op(e.to).name, g.op(e.from).name);
    }
  }

  // Build segments in creation order with their DAG.
  std::vector<SegmentPlan> segs;
  std::vector<std::set<int>> succ;  // segment DAG (creation indices)
  std::vector<int> seg_of(static_cast<size_t>(n), -1);
  std::map<int, int> last_of_device;
  auto reaches = [&](int from, int to) {  // from →* to in the segment DAG
    std::vector<int> stack = {from};
    std::vector<bool> seen(segs.size(), false);
    while (!stack.empty()) {
      int u = stack.back();
      stack.pop_back();
      if (u == to) return true;
      if (seen[static_cast<size_t>(u)]) continue;
      seen[static_cast<size_t>(u)] = true;
      for (int w : succ[static_cast<size_t>(u)]) stack.push_back(w);
    }
    return false;
  };
  for (int v : order) {
    const int d = device_of[static_cast<size_t>(v)];
    int target = -1;
    const bool cut = !cut_before.empty() && cut_before[static_cast<size_t>(v)];
    if (auto it = last_of_device.find(d); !cut && it != last_of_device.end()) {
      target = it->second;
      for (int u : g.predecessors(v)) {
        const int su = seg_of[static_cast<size_t>(u)];
        if (su != target && reaches(target, su)) {
          target = -1;
          break;
        }
      }
    }
    if (target < 0) {
      target = static_cast<int>(segs.size());
      segs.push_back(SegmentPlan{d, {}, {}});
      succ.emplace_back();
      last_of_device[d] = target;
    }
    segs[static_cast<size_t>(target)].operators.push_back(v);
    seg_of[static_cast<size_t>(v)] = target;
    for (int u : g.predecessors(v)) {
      const int su = seg_of[static_cast<size_t>(u)];
      if (su != target) succ[static_cast<size_t>(su)].insert(target);
    }
  }

  // Topological order of the segments, smallest creation index first.
  const int k = static_cast<int>(segs.size());
  std::vector<int> indegree(static_cast<size_t>(k), 0);
  for (const auto& s : succ) {
    for (int t : s) ++indegree[static_cast<size_t>(t)];
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < k; ++i) {
    if (indegree[static_cast<size_t>(i)] == 0) ready.push(i);
  }
  std::vector<int> topo;
  while (!ready.empty()) {
    int u = ready.top();
    ready.pop();
    topo.push_back(u);
    for (int t : succ[static_cast<size_t>(u)]) {
      if (--indegree[static_cast<size_t>(t)] == 0) ready.push(t);
    }
  }
  if (static_cast<int>(topo.size()) != k) {
    return Error(ErrorCode::kInternal, "segments: the segment graph has a cycle (a bug in PlanSegments)");
  }
  std::vector<int> new_index(static_cast<size_t>(k));
  for (int i = 0; i < k; ++i) new_index[static_cast<size_t>(topo[static_cast<size_t>(i)])] = i;
  std::vector<SegmentPlan> out(static_cast<size_t>(k));
  for (int old = 0; old < k; ++old) {
    SegmentPlan& s = out[static_cast<size_t>(new_index[static_cast<size_t>(old)])];
    s = std::move(segs[static_cast<size_t>(old)]);
  }
  for (int old = 0; old < k; ++old) {
    for (int t : succ[static_cast<size_t>(old)]) {
      out[static_cast<size_t>(new_index[static_cast<size_t>(t)])].depends_on.push_back(
          new_index[static_cast<size_t>(old)]);
    }
  }
  for (auto& s : out) std::sort(s.depends_on.begin(), s.depends_on.end());
  return out;
}

Result<SplitResult> SplitModel(const LoadedModel& model, const nlohmann::json& schedule,
                               const std::string& schedule_label, const SplitOptions& options) {
  if (schedule.is_object() && schedule.contains("requests") && schedule["requests"].is_array() &&
      schedule["requests"].size() > 1) {
    return deploy_internal::SplitRequests(model, schedule, schedule_label, options);
  }
  return deploy_internal::SplitOneRequest(model, schedule, schedule_label, options, {});
}

namespace deploy_internal {

Result<SplitResult> SplitOneRequest(const LoadedModel& model, const nlohmann::json& schedule,
                                    const std::string& schedule_label, const SplitOptions& options,
                                    const std::vector<bool>& extra_cuts) {
  if (model.model == nullptr) {
    return Error(ErrorCode::kInvalidArgument, "split: no ONNX model; load it with LoadOnnxModel first");
  }
  HETPLAN_ASSIGN_OR_RETURN(ParsedSchedule ps, ParseSchedule(schedule, schedule_label));
  const OpGraph& g = model.graph;
  if (static_cast<int>(ps.ops.size()) != g.size()) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: the schedule has {} operators but {} imports as {}; the "
                 "model or the fusion level changed since planning: re-plan with hetplan partition",
                 schedule_label, ps.ops.size(), model.path, g.size());
  }
  for (const Operator& op : g.operators()) {
    const std::string& planned = ps.ops[static_cast<size_t>(op.id)].name;
    if (!planned.empty() && planned != op.name) {
      return Error(ErrorCode::kInvalidArgument,
                   "{}: operator {} is '{}' in the schedule but '{}' in {}; "
                   "re-plan with hetplan partition",
                   schedule_label, op.id, planned, op.name, model.path);
    }
  }

  // Execution order: start time, then topological position (a zero-cost
  // operator starts when its predecessor finishes, at the same time).
  std::vector<int> order(static_cast<size_t>(g.size()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const double sa = ps.ops[static_cast<size_t>(a)].start_us, sb = ps.ops[static_cast<size_t>(b)].start_us;
    if (sa != sb) return sa < sb;
    return g.topo_position(a) < g.topo_position(b);
  });
  std::vector<int> device_of(static_cast<size_t>(g.size()));
  for (int v = 0; v < g.size(); ++v) device_of[static_cast<size_t>(v)] = ps.ops[static_cast<size_t>(v)].device_index;
  // Plans whose PUs all run here are executed on PU threads at their planned
  // times: cut them so that no segment waits for more than it needs.
  std::set<int> used;
  bool all_executable = true;
  for (int d : device_of) {
    used.insert(d);
    all_executable = all_executable && ps.devices[static_cast<size_t>(d)].executable();
  }
  std::vector<bool> cuts;
  if (all_executable && (used.size() > 1 || !extra_cuts.empty())) {
    std::vector<double> start(static_cast<size_t>(g.size())), finish(static_cast<size_t>(g.size()));
    for (int v = 0; v < g.size(); ++v) {
      start[static_cast<size_t>(v)] = ps.ops[static_cast<size_t>(v)].start_us;
      finish[static_cast<size_t>(v)] = ps.ops[static_cast<size_t>(v)].finish_us;
    }
    cuts = TimedCuts(g, device_of, order, start, finish);
    for (size_t v = 0; v < extra_cuts.size() && v < cuts.size(); ++v) cuts[v] = cuts[v] || extra_cuts[v];
  }
  auto plan = PlanSegments(g, device_of, order, cuts);
  if (!plan.ok()) return Status(plan.status().code(), schedule_label + ": " + plan.status().message());

  Splitter splitter(model, *plan);
  HETPLAN_RETURN_IF_ERROR(splitter.Build());
  const auto& builds = splitter.builds();
  const int k = static_cast<int>(plan->size());

  // The data-flow graph between segments must agree with the plan: acyclic
  // and pointing forward in execution order.
  std::vector<std::set<int>> succ(static_cast<size_t>(k));
  for (int s = 0; s < k; ++s) {
    for (const auto& [t, from] : builds[static_cast<size_t>(s)].input_from) {
      if (from < 0) continue;
      if (from >= s) {
        return Error(ErrorCode::kInternal,
                     "{}: segment {} reads '{}' from segment {}, which runs later (a bug "
                     "in split)",
                     schedule_label, s, t, from);
      }
      succ[static_cast<size_t>(from)].insert(s);
    }
  }
  if (!IsAcyclic(k, succ)) {
    return Error(ErrorCode::kInternal, "{}: the segment graph has a cycle (a bug in split)", schedule_label);
  }

  std::vector<int> seg_of(static_cast<size_t>(g.size()), -1);
  for (int s = 0; s < k; ++s) {
    for (int v : (*plan)[static_cast<size_t>(s)].operators) seg_of[static_cast<size_t>(v)] = s;
  }
  std::vector<double> transfer_in(static_cast<size_t>(k), 0.0);
  // The planner's boundary charge, once per segment that reads from another
  // PU (it was on every such edge as a latency; the edges overlap).
  std::vector<double> boundary_in(static_cast<size_t>(k), 0.0);
  for (const auto& [from, to, us] : ps.transfers) {
    if (from < 0 || to < 0 || from >= g.size() || to >= g.size()) continue;
    const int sf = seg_of[static_cast<size_t>(from)], st = seg_of[static_cast<size_t>(to)];
    const int dt = ps.ops[static_cast<size_t>(to)].device_index;
    if (sf != st && ps.ops[static_cast<size_t>(from)].device_index != dt) {
      const double b = ps.devices[static_cast<size_t>(dt)].boundary_us;
      boundary_in[static_cast<size_t>(st)] = b;
      transfer_in[static_cast<size_t>(st)] += std::max(0.0, us - b);
    }
  }

  SplitResult result;
  result.segments = k;
  Manifest mf;
  std::string model_name = ps.model_name;
  if (model_name.empty()) model_name = fs::path(model.path).stem().string();
  std::error_code ec;
  fs::path abs = fs::absolute(fs::path(model.path), ec);
  mf.model_name = model_name;
  mf.model_file = ec ? model.path : abs.lexically_normal().string();
  mf.model_sha256 = model.sha256;
  mf.fusion = ToString(model.fusion);
  mf.model_operators = g.size();
  mf.assumptions = model.assumptions;
  mf.schedule = {schedule_label, ps.platform, ps.solver, ps.solver_status, ps.makespan_us, ps.violations};
  int threads = 0;
  for (const auto& d : ps.devices) {
    if (d.kind == "cpu" && d.threads > 0 && threads == 0) threads = d.threads;
  }
  mf.threads = threads > 0 ? threads : 1;
  mf.graph_optimization = ort::GraphOptimizationFor(model.fusion, IsQuantized(model.graph));
  for (const auto& d : ps.devices) {
    mf.devices.push_back({d.name, d.kind, d.execution, d.costs, d.executable(), d.configured, d.provider,
                          d.provider_options, d.threads > 0 ? d.threads : 1, d.cores});
  }
  // Graph inputs and outputs of the original model.
  std::set<std::string> model_inputs;
  for (const auto& b : builds) {
    for (const auto& [t, from] : b.input_from) {
      if (from < 0) model_inputs.insert(t);
    }
  }
  for (const auto& vi : model.model->graph().input()) {
    if (!model_inputs.count(vi.name())) continue;
    HETPLAN_ASSIGN_OR_RETURN(Boundary t, splitter.Describe(vi.name()));
    mf.inputs.push_back(TensorOf(t));
  }
  for (const auto& vi : model.model->graph().output()) {
    HETPLAN_ASSIGN_OR_RETURN(Boundary t, splitter.Describe(vi.name()));
    ManifestTensor o = TensorOf(t);
    for (int s = 0; s < k; ++s) {
      if (builds[static_cast<size_t>(s)].model_outputs.count(vi.name())) o.segment = s;
    }
    mf.outputs.push_back(std::move(o));
  }

  double host_us = 0, accel_us = 0, transfers_us = 0;
  int handoffs = 0;
  for (int s = 0; s < k; ++s) {
    const SegmentPlan& sp = (*plan)[static_cast<size_t>(s)];
    const SegmentBuild& b = builds[static_cast<size_t>(s)];
    const ScheduleDevice& dev = ps.devices[static_cast<size_t>(sp.device)];
    const std::string file = SegmentFileName(s, dev.name);
    HETPLAN_ASSIGN_OR_RETURN(
        onnx::ModelProto sub,
        splitter.SubModel(s, fmt::format("{}_segment_{}_{}", SafeName(model_name), s, SafeName(dev.name))));
    auto* meta = sub.add_metadata_props();
    meta->set_key("hetplan.segment");
    meta->set_value(std::to_string(s));
    meta = sub.add_metadata_props();
    meta->set_key("hetplan.device");
    meta->set_value(dev.name);
    if (options.check) {
      try {
        onnx::checker::check_model(sub);
      } catch (const std::exception& e) {
        return Error(ErrorCode::kInternal,
                     "{}: segment {} ({}, {}) fails the ONNX checker: {}; this is a bug "
                     "in hetplan split: please report it with the schedule",
                     schedule_label, s, dev.name, file, OneLine(e.what()));
      }
    }
    std::string bytes;
    if (!sub.SerializeToString(&bytes)) {
      return Error(ErrorCode::kLimitExceeded,
                   "{}: segment {} ({}) cannot be serialised (over 2 GiB of "
                   "weights?)",
                   schedule_label, s, dev.name);
    }
    ManifestSegment seg;
    seg.id = s;
    seg.device = dev.name;
    seg.kind = dev.kind;
    seg.measured = dev.executable();
    seg.file = file;
    seg.sha256 = Sha256Hex(bytes);
    seg.operators = sp.operators;
    seg.nodes = static_cast<int>(b.nodes.size());
    double predicted = 0, start = 0, finish = 0;
    bool first = true;
    for (int v : sp.operators) {
      const ScheduleOp& op = ps.ops[static_cast<size_t>(v)];
      predicted += op.predicted_us;
      start = first ? op.start_us : std::min(start, op.start_us);
      finish = first ? op.finish_us : std::max(finish, op.finish_us);
      first = false;
    }
    (dev.executable() ? host_us : accel_us) += predicted + boundary_in[static_cast<size_t>(s)];
    transfers_us += transfer_in[static_cast<size_t>(s)];
    for (const auto& name : b.inputs) {
      HETPLAN_ASSIGN_OR_RETURN(Boundary t, splitter.Describe(name));
      ManifestTensor in = TensorOf(t);
      in.from = b.input_from.at(name);
      if (in.from >= 0) ++handoffs;
      seg.inputs.push_back(std::move(in));
    }
    for (const auto& name : splitter.OrderedOutputs(s)) {
      HETPLAN_ASSIGN_OR_RETURN(Boundary t, splitter.Describe(name));
      ManifestTensor out = TensorOf(t);
      if (auto to = b.output_to.find(name); to != b.output_to.end()) out.to.assign(to->second.begin(), to->second.end());
      out.model_output = b.model_outputs.count(name) > 0;
      seg.outputs.push_back(std::move(out));
    }
    std::set<int> deps;
    for (const auto& [t, from] : b.input_from) {
      if (from >= 0) deps.insert(from);
    }
    seg.depends_on.assign(deps.begin(), deps.end());
    seg.predicted_us = predicted;
    seg.predicted_transfer_in_us = transfer_in[static_cast<size_t>(s)];
    seg.predicted_boundary_us = boundary_in[static_cast<size_t>(s)];
    seg.planned_start_us = start;
    seg.planned_finish_us = finish;
    seg.unused_outputs = b.unused_outputs;
    mf.segments.push_back(std::move(seg));
    if (s > 0 && (*plan)[static_cast<size_t>(s - 1)].device != sp.device) ++result.boundaries;
    result.files.emplace_back(file, std::move(bytes));
  }
  mf.boundaries = result.boundaries;
  mf.handoffs = handoffs;
  mf.predicted_host_us = host_us;
  mf.predicted_accelerator_us = accel_us;
  mf.predicted_transfer_us = transfers_us;
  mf.predicted_sequential_us = host_us + accel_us + transfers_us;
  mf.predicted_makespan_us = ps.makespan_us;
  mf.predicted_unsplit_us = ps.predicted_unsplit_us;
  result.manifest = ManifestToJson(mf);
  return result;
}

}  // namespace deploy_internal

Result<SplitResult> SplitScheduleFile(const std::string& schedule_path, const std::string& out_dir,
                                      const SplitOptions& options) {
  HETPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(schedule_path, int64_t{1} << 30));
  nlohmann::json schedule;
  try {
    schedule = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Error(ErrorCode::kParseError, "{}: not valid JSON ({}); give a schedule written by hetplan partition",
                 schedule_path, OneLine(e.what()));
  }
  if (!schedule.is_object() || !schedule.contains("model") || !schedule["model"].is_object() ||
      !schedule["model"].contains("file") || !schedule["model"]["file"].is_string()) {
    return Error(ErrorCode::kParseError,
                 "{}: model.file is missing; give a schedule written by hetplan "
                 "partition",
                 schedule_path);
  }
  const auto& jm = schedule["model"];
  std::string path = options.model_path;
  if (path.empty()) {
    path = jm["file"].get<std::string>();
    std::error_code ec;
    fs::path beside = fs::path(schedule_path).parent_path() / path;
    if (!fs::exists(path, ec) && fs::path(path).is_relative() && fs::exists(beside, ec)) path = beside.string();
    if (!fs::exists(path, ec)) {
      return Error(ErrorCode::kNotFound,
                   "{}: the planned model '{}' is not found (from the working folder or "
                   "the schedule's folder); pass its path with --model",
                   schedule_path, jm["file"].get<std::string>());
    }
  }
  ImportOptions io;
  auto fusion = ParseFusionLevel(jm.value("fusion", std::string("none")));
  if (!fusion.ok()) {
    return Error(ErrorCode::kParseError, "{}: model.fusion: {}", schedule_path, fusion.status().message());
  }
  io.fusion = *fusion;
  io.input_shapes = options.input_shapes;
  // The shapes, values and branches the plan was made with: split needs none repeated.
  HETPLAN_ASSIGN_OR_RETURN(PlanAssumptions planned, ReadPlanAssumptions(jm, schedule_path));
  ApplyPlanAssumptions(planned, &io);
  HETPLAN_ASSIGN_OR_RETURN(LoadedModel model, LoadOnnxModel(path, io));
  const std::string planned_sha = jm.value("sha256", std::string());
  if (!planned_sha.empty() && planned_sha != model.sha256) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: the schedule was made for a model with SHA-256 {}… but {} "
                 "has {}…; pass the planned file with --model, or re-plan with hetplan partition",
                 schedule_path, planned_sha.substr(0, 12), path, model.sha256.substr(0, 12));
  }
  HETPLAN_ASSIGN_OR_RETURN(SplitResult split, SplitModel(model, schedule, schedule_path, options));
  HETPLAN_RETURN_IF_ERROR(WriteSplit(split, out_dir));
  return split;
}

Status WriteSplit(const SplitResult& split, const std::string& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) {
    return Error(ErrorCode::kIoError, "{}: cannot create the output folder ({}); choose another --out", out_dir,
                 ec.message());
  }
  std::set<std::string> written;
  for (const auto& [name, bytes] : split.files) {
    HETPLAN_RETURN_IF_ERROR(WriteFileAtomic((fs::path(out_dir) / name).string(), bytes));
    written.insert(name);
  }
  HETPLAN_RETURN_IF_ERROR(WriteManifest(split.manifest, out_dir));
  // Segment files of an earlier split would only confuse: the manifest is the truth.
  for (const auto& entry : fs::directory_iterator(out_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.starts_with("segment_") && name.ends_with(".onnx") && !written.count(name)) {
      std::error_code rm;
      fs::remove(entry.path(), rm);
    }
  }
  return Status::Ok();
}

}  // namespace hetplan
