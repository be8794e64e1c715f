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
#include <filesystem>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "hetplan/cost/sample_shapes.h"
#include "hetplan/graph/graph_index.h"
#include "hetplan/graph/algorithms.h"
#include "hetplan/graph/dtype.h"
#include "hetplan/graph/quantization.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/util/io.h"
#include "hetplan/util/sha256.h"
#include "hetplan/validate/validator.h"
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

// --- sub-model construction ----------------------------------------------------

struct Boundary {
  std::string name;
  int32_t elem_type = onnx::TensorProto::UNDEFINED;
  std::vector<int64_t> shape;
  std::vector<bool> unknown;  // per dim, in a dynamic split's files (SplitOptions::other_phase_shapes)
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
  // Dynamic splits: graph outputs handed to another segment under their
  // HandoffName (written by an Identity here), and those read that way.
  std::set<std::string> handed_off, read_handed;
};

// A graph output another segment reads goes there under this name, in a
// dynamic split: a runtime that manages a model's outputs (GenAI's KV cache
// takes every present.*) does not hand them to a later stage.
std::string HandoffName(const std::string& name) { return name + "/hetplan_handoff"; }

class Splitter {
 public:
  // `source_of` (SplitOptions::dynamic_shapes): cut m.source instead, the
  // node of m.model's graph at index i being m.source's (*source_of)[i].
  Splitter(const LoadedModel& m, const std::vector<SegmentPlan>& plan, const std::vector<int>* source_of = nullptr,
           const std::map<std::string, std::vector<int64_t>>* other_phase = nullptr)
      : m_(m), proto_(source_of ? *m.source : *m.model), g_(proto_.graph()), plan_(plan), index_(g_),
        dynamic_(source_of != nullptr), other_phase_(other_phase) {
    for (const auto& vi : g_.input()) {
      if (!index_.initializer.count(vi.name())) graph_inputs_.insert(vi.name());
    }
    for (const auto& vi : g_.output()) graph_outputs_.insert(vi.name());
    for (const Operator& op : m.graph.operators()) {
      for (const auto& t : op.inputs) known_.emplace(t.name, &t);
      for (const auto& t : op.outputs) known_.emplace(t.name, &t);
    }
    for (const auto& t : m.graph.graph_inputs()) known_.emplace(t.name, &t);
    for (const auto& t : m.graph.graph_outputs()) known_.emplace(t.name, &t);
    segment_of_node_.assign(static_cast<size_t>(g_.node_size()), -1);
    for (size_t s = 0; s < plan.size(); ++s) {
      for (int v : plan[s].operators) {
        for (int i : m.graph.op(v).node_indices) {
          const int j = source_of ? (*source_of)[static_cast<size_t>(i)] : i;
          segment_of_node_[static_cast<size_t>(j)] = static_cast<int>(s);
        }
      }
    }
    builds_.resize(plan.size());
  }

  Status Build() {
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

  const LoadedModel& model() const { return m_; }
  const std::vector<SegmentBuild>& builds() const { return builds_; }

  // Outputs in the order their producing nodes write them.
  std::vector<std::string> OrderedOutputs(int s) const {
    std::vector<std::string> out(builds_[static_cast<size_t>(s)].outputs.begin(),
                                 builds_[static_cast<size_t>(s)].outputs.end());
    auto key = [&](const std::string& t) {
      auto it = index_.producer.find(t);
      int node = it == index_.producer.end() ? -1 : it->second;
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

  Result<Boundary> Describe(const std::string& handed) const {
    const auto original = original_of_.find(handed);
    const std::string& name = original == original_of_.end() ? handed : original->second;
    HETPLAN_ASSIGN_OR_RETURN(Boundary b, DescribeTensor(name));
    b.name = handed;
    b.unknown.assign(b.shape.size(), dynamic_);
    if (dynamic_ && other_phase_ != nullptr) {
      if (auto it = other_phase_->find(name); it != other_phase_->end() && it->second.size() == b.shape.size()) {
        for (size_t k = 0; k < b.shape.size(); ++k) b.unknown[k] = it->second[k] != b.shape[k];
      }
    }
    return b;
  }

  Result<Boundary> DescribeTensor(const std::string& name) const {
    Boundary b;
    b.name = name;
    const TensorInfo* info = nullptr;
    if (auto it = known_.find(name); it != known_.end()) info = it->second;
    auto vi = index_.value_info.find(name);
    if (vi != index_.value_info.end() && vi->second->type().has_tensor_type()) {
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
    if (vi != index_.value_info.end() && vi->second->type().tensor_type().has_shape()) {
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
    const onnx::ModelProto& model = proto_;
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
      onnx::NodeProto* n = sg->add_node();
      *n = g_.node(i);
      for (auto& in : *n->mutable_input()) {
        if (b.read_handed.count(in)) in = HandoffName(in);
      }
      for (const auto& o : g_.node(i).output()) {
        if (o.empty() || boundary.count(o)) continue;
        if (auto vi = index_.value_info.find(o); vi != index_.value_info.end()) *sg->add_value_info() = *vi->second;
      }
    }
    for (const std::string& name : b.handed_off) {
      onnx::NodeProto* id = sg->add_node();
      id->set_op_type("Identity");
      id->set_name(HandoffName(name));
      id->add_input(name);
      id->add_output(HandoffName(name));
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
  // A dynamic split leaves `unknown` dims without a value.
  static void SetValueInfo(const Boundary& t, onnx::ValueInfoProto* vi) {
    vi->set_name(t.name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(t.elem_type);
    auto* shape = tt->mutable_shape();
    for (size_t k = 0; k < t.shape.size(); ++k) {
      auto* dim = shape->add_dim();
      if (k >= t.unknown.size() || !t.unknown[k]) dim->set_dim_value(t.shape[k]);
    }
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
      auto p = index_.producer.find(name);
      if (p != index_.producer.end() && b.nodes.count(p->second)) continue;
      if (b.input_from.count(name)) continue;
      if (auto it = index_.initializer.find(name); it != index_.initializer.end()) {
        b.inits.insert(it->second);
        continue;
      }
      if (auto it = index_.sparse.find(name); it != index_.sparse.end()) {
        b.sparse.insert(it->second);
        continue;
      }
      if (p == index_.producer.end()) {
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
        SegmentBuild& from = builds_[static_cast<size_t>(owner)];
        std::string handed = name;
        if (dynamic_ && graph_outputs_.count(name)) {
          handed = HandoffName(name);
          if (b.input_from.count(handed)) continue;
          original_of_[handed] = name;
          b.read_handed.insert(name);
          from.handed_off.insert(name);
        }
        b.inputs.push_back(handed);
        b.input_from.emplace(handed, owner);
        from.outputs.insert(handed);
        from.output_to[handed].insert(s);
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
      auto p = index_.producer.find(t);
      if (p == index_.producer.end()) continue;
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
  const onnx::ModelProto& proto_;  // what is cut: m_.model, or m_.source when dynamic
  const onnx::GraphProto& g_;
  const std::vector<SegmentPlan>& plan_;
  GraphProtoIndex index_;
  bool dynamic_ = false;
  const std::map<std::string, std::vector<int64_t>>* other_phase_ = nullptr;
  std::unordered_set<std::string> graph_inputs_, graph_outputs_;
  std::map<std::string, std::string> original_of_;  // HandoffName → the graph output
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

Result<SplitResult> SplitModel(const LoadedModel& model, const PlanFile& plan, const std::string& schedule_label,
                               const SplitOptions& options) {
  if (model.model == nullptr) {
    return Error(ErrorCode::kInvalidArgument, "split: no ONNX model; load it with LoadOnnxModel first");
  }
  HETPLAN_RETURN_IF_ERROR(deploy_internal::CheckOnnxRuntimePus(plan, schedule_label));
  const int violations = options.schedule_violations;
  if (plan.requests.size() > 1) return deploy_internal::SplitRequests(model, plan, violations, schedule_label, options);
  return deploy_internal::SplitOneRequest(model, plan, violations, schedule_label, options, {});
}

namespace deploy_internal {
namespace {

// Checks that the schedule was made for `model`: its operator count and names.
Status CheckScheduleMatchesModel(const LoadedModel& model, const PlanFile& ps,
                                 const std::string& schedule_label) {
  const OpGraph& g = model.graph;
  if (static_cast<int>(ps.operators.size()) != g.size()) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: the schedule has {} operators but {} imports as {}; the "
                 "model or the fusion level changed since planning: re-plan with hetplan partition",
                 schedule_label, ps.operators.size(), model.path, g.size());
  }
  for (const Operator& op : g.operators()) {
    const std::string& planned = ps.operators[static_cast<size_t>(op.id)].name;
    if (!planned.empty() && planned != op.name) {
      return Error(ErrorCode::kInvalidArgument,
                   "{}: operator {} is '{}' in the schedule but '{}' in {}; "
                   "re-plan with hetplan partition",
                   schedule_label, op.id, planned, op.name, model.path);
    }
  }
  return Status::Ok();
}

// Execution order: start time, then topological position (a zero-cost
// operator starts when its predecessor finishes, at the same time).
std::vector<int> ExecutionOrder(const OpGraph& g, const PlanFile& ps) {
  std::vector<int> order(static_cast<size_t>(g.size()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const double sa = ps.operators[static_cast<size_t>(a)].start_us, sb = ps.operators[static_cast<size_t>(b)].start_us;
    if (sa != sb) return sa < sb;
    return g.topo_position(a) < g.topo_position(b);
  });
  return order;
}

// The cuts for PlanSegments: TimedCuts plus `extra_cuts` for a plan whose PUs
// all run here, none (empty) otherwise.
std::vector<bool> PlannedCuts(const OpGraph& g, const PlanFile& ps, const std::vector<int>& device_of,
                              const std::vector<int>& order, const std::vector<bool>& extra_cuts) {
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
      start[static_cast<size_t>(v)] = ps.operators[static_cast<size_t>(v)].start_us;
      finish[static_cast<size_t>(v)] = ps.operators[static_cast<size_t>(v)].finish_us;
    }
    cuts = TimedCuts(g, device_of, order, start, finish);
    for (size_t v = 0; v < extra_cuts.size() && v < cuts.size(); ++v) cuts[v] = cuts[v] || extra_cuts[v];
  }
  return cuts;
}

// The data-flow graph between segments must agree with the plan: acyclic
// and pointing forward in execution order.
Status CheckSegmentGraph(const std::vector<SegmentBuild>& builds, int k, const std::string& schedule_label) {
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
  return Status::Ok();
}

// What the plan charged into each segment for its inputs from another PU.
struct SegmentTransfers {
  std::vector<double> transfer_in;
  // The planner's boundary charge, once per segment that reads from another
  // PU (it was on every such edge as a latency; the edges overlap).
  std::vector<double> boundary_in;
};

// The schedule's edge transfers into each segment of `plan`, split into its
// PU's boundary charge and the rest.
SegmentTransfers TransfersIntoSegments(const OpGraph& g, const PlanFile& ps,
                                       const std::vector<SegmentPlan>& plan) {
  const int k = static_cast<int>(plan.size());
  std::vector<int> seg_of(static_cast<size_t>(g.size()), -1);
  for (int s = 0; s < k; ++s) {
    for (int v : plan[static_cast<size_t>(s)].operators) seg_of[static_cast<size_t>(v)] = s;
  }
  SegmentTransfers tr;
  tr.transfer_in.assign(static_cast<size_t>(k), 0.0);
  tr.boundary_in.assign(static_cast<size_t>(k), 0.0);
  for (const PlanFileEdge& e : ps.edges) {
    if (!e.transfer_us) continue;
    const int from = e.from, to = e.to;
    const double us = *e.transfer_us;
    if (from < 0 || to < 0 || from >= g.size() || to >= g.size()) continue;
    const int sf = seg_of[static_cast<size_t>(from)], st = seg_of[static_cast<size_t>(to)];
    const int dt = ps.operators[static_cast<size_t>(to)].device_index;
    if (sf != st && ps.operators[static_cast<size_t>(from)].device_index != dt) {
      const double b = ps.devices[static_cast<size_t>(dt)].boundary_us;
      tr.boundary_in[static_cast<size_t>(st)] = b;
      tr.transfer_in[static_cast<size_t>(st)] += std::max(0.0, us - b);
    }
  }
  return tr;
}

// The manifest's model, schedule, runtime and PU fields.
Manifest ManifestHeader(const LoadedModel& model, const PlanFile& ps, int violations,
                        const std::string& schedule_label) {
  const OpGraph& g = model.graph;
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
  mf.schedule = {schedule_label, ps.platform, ps.solver, ps.solver_status, ps.makespan_us, violations,
                 ps.initiation_interval_us};
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
  return mf;
}

// Graph inputs and outputs of the original model: the inputs some segment
// reads, and every output with the segment that writes it.
Status AddModelTensors(const LoadedModel& model, const Splitter& splitter, int k, Manifest* mf) {
  const auto& builds = splitter.builds();
  std::set<std::string> model_inputs;
  for (const auto& b : builds) {
    for (const auto& [t, from] : b.input_from) {
      if (from < 0) model_inputs.insert(t);
    }
  }
  for (const auto& vi : model.model->graph().input()) {
    if (!model_inputs.count(vi.name())) continue;
    HETPLAN_ASSIGN_OR_RETURN(Boundary t, splitter.Describe(vi.name()));
    mf->inputs.push_back(TensorOf(t));
  }
  for (const auto& vi : model.model->graph().output()) {
    HETPLAN_ASSIGN_OR_RETURN(Boundary t, splitter.Describe(vi.name()));
    ManifestTensor o = TensorOf(t);
    if (IsFloatingDtype(DtypeFromName(o.dtype))) o.narrowest_on_path = NarrowestFloatOnPath(model.graph, o.name, o.dtype);
    for (int s = 0; s < k; ++s) {
      if (builds[static_cast<size_t>(s)].model_outputs.count(vi.name())) o.segment = s;
    }
    mf->outputs.push_back(std::move(o));
  }
  return Status::Ok();
}

// `m` as the ONNX checker can judge it: ONNX Runtime's operators in the
// default domain (SimplifiedLayerNormalization, which the model builder
// writes there; the checker knows no such ONNX operator) moved to
// com.microsoft, whose operators it leaves to ONNX Runtime.
void CheckableCopy(onnx::ModelProto* m) {
  bool moved = false;
  for (auto& n : *m->mutable_graph()->mutable_node()) {
    if ((n.domain().empty() || n.domain() == "ai.onnx") && n.op_type() == "SimplifiedLayerNormalization") {
      n.set_domain("com.microsoft");
      moved = true;
    }
  }
  const auto& imports = m->opset_import();
  const bool has = std::any_of(imports.begin(), imports.end(), [](const auto& o) { return o.domain() == "com.microsoft"; });
  if (moved && !has) {
    auto* o = m->add_opset_import();
    o->set_domain("com.microsoft");
    o->set_version(1);
  }
}

// Segment s's sub-model, tagged with its segment and PU, checked (with
// options.check) and serialised.
Result<std::string> SegmentBytes(const Splitter& splitter, int s, const std::string& model_name,
                                 const std::string& device, const std::string& file,
                                 const std::string& schedule_label, const SplitOptions& options, std::string* data) {
  HETPLAN_ASSIGN_OR_RETURN(
      onnx::ModelProto sub,
      splitter.SubModel(s, fmt::format("{}_segment_{}_{}", SafeName(model_name), s, SafeName(device))));
  auto* meta = sub.add_metadata_props();
  meta->set_key("hetplan.segment");
  meta->set_value(std::to_string(s));
  meta = sub.add_metadata_props();
  meta->set_key("hetplan.device");
  meta->set_value(device);
  HETPLAN_ASSIGN_OR_RETURN(*data, GatherExternalData(&sub, splitter.model(), file + ".data"));
  if (options.check) {
    try {
      onnx::ModelProto checked = sub;
      if (!data->empty()) DropExternalData(&checked);
      CheckableCopy(&checked);
      onnx::checker::check_model(checked);
    } catch (const std::exception& e) {
      return Error(ErrorCode::kInternal,
                   "{}: segment {} ({}, {}) fails the ONNX checker: {}; this is a bug "
                   "in hetplan split: please report it with the schedule",
                   schedule_label, s, device, file, OneLine(e.what()));
    }
  }
  std::string bytes;
  if (!sub.SerializeToString(&bytes)) {
    return Error(ErrorCode::kLimitExceeded,
                 "{}: segment {} ({}) cannot be serialised (over 2 GiB of "
                 "weights?)",
                 schedule_label, s, device);
  }
  return bytes;
}

// The manifest's predicted totals, summed over the segments.
struct SplitTotals {
  double host_us = 0, accel_us = 0, transfers_us = 0;
  int handoffs = 0;
};

// Segment s's manifest entry: its file, operators, boundary tensors,
// dependencies and planned times; adds its predictions to `totals`.
Result<ManifestSegment> SegmentEntry(const Splitter& splitter, const SegmentPlan& sp, const PlanFile& ps,
                                     const SegmentTransfers& tr, int s, const std::string& file,
                                     const std::string& bytes, SplitTotals* totals) {
  const SegmentBuild& b = splitter.builds()[static_cast<size_t>(s)];
  const PlanFileDevice& dev = ps.devices[static_cast<size_t>(sp.device)];
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
    const PlanFileOperator& op = ps.operators[static_cast<size_t>(v)];
    predicted += op.predicted_us;
    start = first ? op.start_us : std::min(start, op.start_us);
    finish = first ? op.finish_us : std::max(finish, op.finish_us);
    first = false;
  }
  (dev.executable() ? totals->host_us : totals->accel_us) += predicted + tr.boundary_in[static_cast<size_t>(s)];
  totals->transfers_us += tr.transfer_in[static_cast<size_t>(s)];
  for (const auto& name : b.inputs) {
    HETPLAN_ASSIGN_OR_RETURN(Boundary t, splitter.Describe(name));
    ManifestTensor in = TensorOf(t);
    in.from = b.input_from.at(name);
    if (in.from >= 0) ++totals->handoffs;
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
  seg.predicted_transfer_in_us = tr.transfer_in[static_cast<size_t>(s)];
  seg.predicted_boundary_us = tr.boundary_in[static_cast<size_t>(s)];
  seg.planned_start_us = start;
  seg.planned_finish_us = finish;
  seg.unused_outputs = b.unused_outputs;
  return seg;
}

}  // namespace

Result<SplitResult> SplitOneRequest(const LoadedModel& model, const PlanFile& ps, int violations,
                                    const std::string& schedule_label, const SplitOptions& options,
                                    const std::vector<bool>& extra_cuts) {
  const OpGraph& g = model.graph;
  HETPLAN_RETURN_IF_ERROR(CheckScheduleMatchesModel(model, ps, schedule_label));

  const std::vector<int> order = ExecutionOrder(g, ps);
  std::vector<int> device_of(static_cast<size_t>(g.size()));
  for (int v = 0; v < g.size(); ++v) device_of[static_cast<size_t>(v)] = ps.operators[static_cast<size_t>(v)].device_index;
  const std::vector<bool> cuts = PlannedCuts(g, ps, device_of, order, extra_cuts);
  auto plan = PlanSegments(g, device_of, order, cuts);
  if (!plan.ok()) return Status(plan.status().code(), schedule_label + ": " + plan.status().message());

  std::vector<int> source_of;
  if (options.dynamic_shapes) {
    HETPLAN_ASSIGN_OR_RETURN(source_of, SourceNodes(model, schedule_label));
  }
  Splitter splitter(model, *plan, options.dynamic_shapes ? &source_of : nullptr, &options.other_phase_shapes);
  HETPLAN_RETURN_IF_ERROR(splitter.Build());
  const int k = static_cast<int>(plan->size());
  HETPLAN_RETURN_IF_ERROR(CheckSegmentGraph(splitter.builds(), k, schedule_label));
  const SegmentTransfers tr = TransfersIntoSegments(g, ps, *plan);

  SplitResult result;
  result.segments = k;
  Manifest mf = ManifestHeader(model, ps, violations, schedule_label);
  mf.dynamic_shapes = options.dynamic_shapes;
  HETPLAN_RETURN_IF_ERROR(AddModelTensors(model, splitter, k, &mf));

  SplitTotals totals;
  for (int s = 0; s < k; ++s) {
    const SegmentPlan& sp = (*plan)[static_cast<size_t>(s)];
    const std::string& device = ps.devices[static_cast<size_t>(sp.device)].name;
    const std::string file = SegmentFileName(s, device);
    std::string data;
    HETPLAN_ASSIGN_OR_RETURN(std::string bytes,
                             SegmentBytes(splitter, s, mf.model_name, device, file, schedule_label, options, &data));
    HETPLAN_ASSIGN_OR_RETURN(ManifestSegment seg, SegmentEntry(splitter, sp, ps, tr, s, file, bytes, &totals));
    if (!data.empty()) {
      seg.data_file = file + ".data";
      seg.data_bytes = static_cast<int64_t>(data.size());
      result.data_files.emplace_back(seg.data_file, std::move(data));
    }
    mf.segments.push_back(std::move(seg));
    if (s > 0 && (*plan)[static_cast<size_t>(s - 1)].device != sp.device) ++result.boundaries;
    result.files.emplace_back(file, std::move(bytes));
  }
  mf.boundaries = result.boundaries;
  mf.handoffs = totals.handoffs;
  mf.predicted_host_us = totals.host_us;
  mf.predicted_accelerator_us = totals.accel_us;
  mf.predicted_transfer_us = totals.transfers_us;
  mf.predicted_sequential_us = totals.host_us + totals.accel_us + totals.transfers_us;
  mf.predicted_makespan_us = ps.makespan_us;
  mf.predicted_unsplit_us = ps.PredictedUnsplitUs();
  HETPLAN_RETURN_IF_ERROR(CopySamples(&mf, &result.files));
  result.manifest = ManifestToJson(mf);
  return result;
}

}  // namespace deploy_internal

}  // namespace hetplan
