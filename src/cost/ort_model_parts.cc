// Parts of the model as models of their own, for the host profiler
// (ort_profiler.cc): one operator, as it is timed alone (and as the co-run
// profiler runs it), or contiguous segments of the topological order, which
// the boundary fit runs one after another to learn what one more segment
// costs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>
#include <onnxruntime_cxx_api.h>

#include "ort/session.h"
#include "hetplan/util/clock.h"
#include "hetplan/graph/dtype.h"
#include "cost/ort_profiler_internal.h"
#include "cost/profiler_internal.h"

namespace hetplan {
namespace ort_profiler_internal {
namespace {

constexpr int kBoundaryWarmup = 2;  // untimed passes of each split execution

}  // namespace

// --- cutting one operator out of the model -----------------------------------

OperatorExtractor::OperatorExtractor(const LoadedModel& m) : model_(*m.model), index_(model_.graph()) {
  const auto& g = model_.graph();
  is_op_node_.assign(static_cast<size_t>(g.node_size()), false);
  for (const Operator& op : m.graph.operators()) {
    for (int i : op.node_indices) {
      if (i >= 0 && i < g.node_size()) is_op_node_[static_cast<size_t>(i)] = true;
    }
  }
}

Result<std::string> OperatorExtractor::Build(const Operator& op) const {
  return BuildPart(op, op.node_indices, op.inputs, op.outputs, fmt::format("operator_{}", op.id));
}

Result<std::string> OperatorExtractor::BuildSegment(const OpGraph& g, const std::vector<int>& ops) const {
  std::vector<int> node_indices;
  std::vector<TensorInfo> inputs, outputs;
  std::unordered_set<int> inside(ops.begin(), ops.end());
  std::unordered_set<std::string> read_outside;
  for (const Operator& op : g.operators()) {
    if (inside.count(op.id)) continue;
    for (const auto& t : op.inputs) read_outside.insert(t.name);
  }
  for (const auto& t : g.graph_outputs()) read_outside.insert(t.name);
  for (int id : ops) {
    const Operator& op = g.op(id);
    node_indices.insert(node_indices.end(), op.node_indices.begin(), op.node_indices.end());
    inputs.insert(inputs.end(), op.inputs.begin(), op.inputs.end());
    for (const auto& t : op.outputs) {
      if (read_outside.count(t.name)) outputs.push_back(t);
    }
  }
  // A segment whose results nobody reads still needs an output.
  if (outputs.empty()) outputs = g.op(ops.back()).outputs;
  inputs.insert(inputs.end(), outputs.begin(), outputs.end());  // shapes of both
  std::sort(node_indices.begin(), node_indices.end());          // the model's order is topological
  return BuildPart(g.op(ops.front()), node_indices, inputs, outputs,
                   fmt::format("segment_{}_{}", ops.front(), ops.size()));
}

Result<std::string> OperatorExtractor::BuildPart(const Operator& op, const std::vector<int>& node_indices,
                                                 const std::vector<TensorInfo>& known,
                                                 const std::vector<TensorInfo>& outputs,
                                                 const std::string& graph_name) const {
  const auto& g = model_.graph();
  std::set<int> nodes;
  std::unordered_set<std::string> produced;
  for (int i : node_indices) {
    if (i < 0 || i >= g.node_size()) {
      return Error(ErrorCode::kInternal, "operator '{}': node index {} outside the model's {} nodes",
                   op.name, i, g.node_size());
    }
    nodes.insert(i);
    for (const auto& o : g.node(i).output()) produced.insert(o);
  }
  std::vector<std::string> work;
  for (int i : node_indices) {
    for (const auto& in : g.node(i).input()) {
      if (!in.empty() && !produced.count(in)) work.push_back(in);
    }
  }
  std::reverse(work.begin(), work.end());  // visit in reading order
  std::unordered_set<std::string> seen;
  std::vector<std::string> activations;
  std::set<int> inits, sparse;
  while (!work.empty()) {
    std::string name = std::move(work.back());
    work.pop_back();
    if (!seen.insert(name).second) continue;
    if (auto it = index_.initializer.find(name); it != index_.initializer.end()) {
      inits.insert(it->second);
      continue;
    }
    if (auto it = index_.sparse.find(name); it != index_.sparse.end()) {
      sparse.insert(it->second);
      continue;
    }
    auto p = index_.producer.find(name);
    if (p != index_.producer.end() && !is_op_node_[static_cast<size_t>(p->second)] && !nodes.count(p->second)) {
      // A Constant, Identity/Dropout alias, or constant-only node: comes along.
      nodes.insert(p->second);
      const auto& pn = g.node(p->second);
      for (int k = pn.input_size() - 1; k >= 0; --k) {
        if (!pn.input(k).empty()) work.push_back(pn.input(k));
      }
      for (const auto& o : pn.output()) produced.insert(o);
      continue;
    }
    if (p != index_.producer.end() && nodes.count(p->second)) continue;
    activations.push_back(name);  // a graph input, or another operator's output
  }

  onnx::ModelProto sub;
  sub.set_ir_version(model_.ir_version());
  *sub.mutable_opset_import() = model_.opset_import();
  *sub.mutable_functions() = model_.functions();
  sub.set_producer_name("hetplan-profiler");
  auto* sg = sub.mutable_graph();
  sg->set_name(graph_name);
  for (int i : nodes) *sg->add_node() = g.node(i);  // the model is topologically sorted
  for (int i : inits) *sg->add_initializer() = g.initializer(i);
  for (int i : sparse) *sg->add_sparse_initializer() = g.sparse_initializer(i);
  for (const auto& name : activations) {
    HETPLAN_RETURN_IF_ERROR(AddValueInfo(op, name, known, sg->add_input()));
  }
  for (const auto& t : outputs) {
    HETPLAN_RETURN_IF_ERROR(AddValueInfo(op, t.name, outputs, sg->add_output()));
  }
  std::string bytes;
  if (!sub.SerializeToString(&bytes)) {
    return Error(ErrorCode::kLimitExceeded, "operator '{}': its one-operator model cannot be "
                 "serialised (over 2 GiB of constants?)", op.name);
  }
  return bytes;
}

Status OperatorExtractor::AddValueInfo(const Operator& op, const std::string& name,
                                       const std::vector<TensorInfo>& known, onnx::ValueInfoProto* out) const {
  out->set_name(name);
  auto* tt = out->mutable_type()->mutable_tensor_type();
  const TensorInfo* info = nullptr;
  for (const auto& t : known) {
    if (t.name == name) info = &t;
  }
  auto vi = index_.value_info.find(name);
  int32_t elem = onnx::TensorProto::UNDEFINED;
  if (vi != index_.value_info.end() && vi->second->type().has_tensor_type()) {
    elem = vi->second->type().tensor_type().elem_type();
  }
  if (elem == onnx::TensorProto::UNDEFINED && info != nullptr) elem = DtypeFromName(info->dtype);
  if (elem == onnx::TensorProto::UNDEFINED) {
    return Error(ErrorCode::kUnsupported, "operator '{}' ({}): tensor '{}' has no known element "
                 "type; the profiler cannot feed it", op.name, op.type, name);
  }
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  if (info != nullptr) {
    for (int64_t d : info->shape) shape->add_dim()->set_dim_value(d);
    return Status::Ok();
  }
  if (vi != index_.value_info.end() && vi->second->type().tensor_type().has_shape()) {
    for (const auto& d : vi->second->type().tensor_type().shape().dim()) {
      if (!d.has_dim_value()) break;
      shape->add_dim()->set_dim_value(d.dim_value());
    }
    if (shape->dim_size() == vi->second->type().tensor_type().shape().dim_size()) return Status::Ok();
  }
  return Error(ErrorCode::kUnsupported, "operator '{}' ({}): tensor '{}' has no static shape; give "
               "static input shapes with --shape", op.name, op.type, name);
}

// --- split executions: what a segment boundary costs ---------------------------

int BoundaryCuts(int operators) {
  int cuts = 0;
  for (int k = 1; k <= std::min(operators, 64); k *= 2) ++cuts;
  return cuts;
}
int BoundaryWarmup(const ProfileOptions& o) { return std::min(kBoundaryWarmup, o.warmup); }
int BoundaryPasses(const ProfileOptions& o, int operators) {
  return BoundaryRuns(o) > 0 ? BoundaryCuts(operators) * (BoundaryWarmup(o) + BoundaryRuns(o)) : 0;
}

namespace {

// What MeasureBoundaries found: per cut, its segments and median pass; the
// least-squares line through them.
struct BoundaryFit {
  std::vector<int> segments;
  std::vector<double> pass_us;
  double slope_us = 0, base_us = 0, r2 = 0, residual_us = 0;
  int64_t estimate_bytes = 0;  // the kept cuts' sessions and tensors, alive together
  std::string memory_note;     // the cuts left out to stay under the budget, and why
};

// The cuts: the model cut into 1, 2, 4, … (at most 64, at most one per
// operator) contiguous runs of its topological order at random places.
std::vector<std::vector<std::vector<int>>> CutSegments(const OpGraph& g) {
  const std::vector<int>& order = g.topological_order();
  const int n = static_cast<int>(order.size());
  std::mt19937_64 rng(kSeed ^ 0xb0a7d);
  std::vector<std::vector<std::vector<int>>> cuts;
  for (int k = 1; k <= std::min(n, 64); k *= 2) {
    std::vector<int> positions(static_cast<size_t>(std::max(0, n - 1)));
    for (int i = 0; i + 1 < n; ++i) positions[static_cast<size_t>(i)] = i + 1;
    std::shuffle(positions.begin(), positions.end(), rng);
    positions.resize(static_cast<size_t>(k - 1));
    std::sort(positions.begin(), positions.end());
    std::vector<std::vector<int>> segments(1);
    size_t next = 0;
    for (int i = 0; i < n; ++i) {
      if (next < positions.size() && positions[next] == i) {
        segments.emplace_back();
        ++next;
      }
      segments.back().push_back(order[static_cast<size_t>(i)]);
    }
    cuts.push_back(std::move(segments));
  }
  return cuts;
}

// How many of `cuts` (fewest segments first) fit in `room_bytes` alive
// together, their estimate, and what was left out.
size_t CutsThatFit(const LoadedModel& m, const std::vector<std::vector<std::vector<int>>>& cuts, int64_t room_bytes,
                   int64_t* estimate, std::string* note) {
  const FootprintEstimator footprint(m);
  std::vector<int64_t> bytes;
  for (const auto& segments : cuts) {
    int64_t b = 0;
    for (const auto& ops : segments) b += footprint.Bytes(ops);
    bytes.push_back(b);
  }
  size_t keep = 0;
  *estimate = 0;
  while (keep < cuts.size() && *estimate + bytes[keep] <= room_bytes) *estimate += bytes[keep++];
  if (keep == cuts.size()) return keep;
  int64_t all = 0;
  for (int64_t b : bytes) all += b;
  std::vector<size_t> left_out;
  for (size_t c = keep; c < cuts.size(); ++c) left_out.push_back(cuts[c].size());
  *note = fmt::format("the cuts into {} segments left out: all {} cuts alive together need about {}, more than the {} "
                      "left under the memory budget (--max-memory)",
                      fmt::join(left_out, ", "), cuts.size(), BytesText(all), BytesText(std::max<int64_t>(0, room_bytes)));
  return keep;
}

// One way of cutting the model: contiguous runs of the topological order,
// run one after another as the resident executor runs a plan (one session
// per segment, every tensor that crosses a cut bound once, zero copy).
class SplitExecution {
 public:
  // Model inputs are random, or the sample's (`samples`, --sample-input).
  static Result<std::unique_ptr<SplitExecution>> Create(Ort::Env& env, const LoadedModel& m,
                                                        const OperatorExtractor& ex,
                                                        const std::vector<std::vector<int>>& segments,
                                                        const Ort::SessionOptions& so,
                                                        const std::map<std::string, TensorData>& samples) {
    auto x = std::unique_ptr<SplitExecution>(new SplitExecution());
    std::mt19937_64 rng(kSeed);
    Ort::AllocatorWithDefaultOptions alloc;
    x->sessions_.reserve(segments.size());
    x->bindings_.reserve(segments.size());
    for (const auto& ops : segments) {
      HETPLAN_ASSIGN_OR_RETURN(std::string bytes, ex.BuildSegment(m.graph, ops));
      try {
        x->sessions_.emplace_back(env, bytes.data(), bytes.size(), so);
        Ort::Session& session = x->sessions_.back();
        Ort::IoBinding binding(session);
        for (size_t i = 0; i < session.GetInputCount(); ++i) {
          std::string name = session.GetInputNameAllocated(i, alloc).get();
          auto it = x->values_.find(name);
          if (it == x->values_.end()) {  // a model input: random, as the profiler feeds models, or the sample
            Ort::TypeInfo type = session.GetInputTypeInfo(i);  // owns what the view below reads
            auto info = type.GetTensorTypeAndShapeInfo();
            auto sample = samples.find(name);
            it = x->values_
                     .emplace(name, sample != samples.end()
                                        ? ort::DataTensor(sample->second)
                                        : ort::InputTensor(name, info.GetElementType(), info.GetShape(), rng))
                     .first;
          }
          binding.BindInput(name.c_str(), it->second);
        }
        for (size_t i = 0; i < session.GetOutputCount(); ++i) {
          std::string name = session.GetOutputNameAllocated(i, alloc).get();
          Ort::TypeInfo type = session.GetOutputTypeInfo(i);
          auto info = type.GetTensorTypeAndShapeInfo();
          auto it = x->values_.emplace(name, ort::ZeroTensor(info.GetElementType(), info.GetShape())).first;
          binding.BindOutput(name.c_str(), it->second);
        }
        x->bindings_.push_back(std::move(binding));
      } catch (const std::exception& e) {
        return Error(ErrorCode::kUnsupported, "{}: a segment of operators {}..{} cannot run alone: {}", m.path,
                     ops.front(), ops.back(), OneLine(e.what()));
      }
    }
    return x;
  }

  // One pass over every segment (µs, first Run's start to last Run's end).
  // Throws Ort::Exception.
  double Pass() {
    const auto t0 = Clock::now();
    for (size_t s = 0; s < sessions_.size(); ++s) sessions_[s].Run(run_options_, bindings_[s]);
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  }

 private:
  SplitExecution() = default;
  std::vector<Ort::Session> sessions_;
  std::vector<Ort::IoBinding> bindings_;
  std::unordered_map<std::string, Ort::Value> values_;  // node-based: never moves
  Ort::RunOptions run_options_;
};

// The model cut into 1, 2, 4, … (at most 64, at most one per operator)
// segments at random places of its topological order, each cut timed as a
// pass; the least-squares line pass = base + boundary × (segments − 1) gives
// what one more segment costs: its Session::Run invocation, binding its
// inputs and outputs, and the locality it loses. The cuts are interleaved run
// by run, so that the machine's drift falls on all of them alike.
// Only the cuts that fit in `room_bytes` together are created (fewer than
// two: an empty fit, its memory_note saying why).
Result<BoundaryFit> MeasureBoundaries(Ort::Env& env, const LoadedModel& m, const ProfileOptions& o,
                                      const OperatorExtractor& ex, int64_t room_bytes,
                                      const std::map<std::string, TensorData>& samples) {
  const auto all = CutSegments(m.graph);
  BoundaryFit fit;
  const size_t keep = CutsThatFit(m, all, room_bytes, &fit.estimate_bytes, &fit.memory_note);
  if (keep < std::min<size_t>(2, all.size())) return fit;
  std::vector<std::unique_ptr<SplitExecution>> cuts;
  HETPLAN_ASSIGN_OR_RETURN(Ort::SessionOptions so, MakeSessionOptions(m, o));
  for (size_t c = 0; c < keep; ++c) {
    HETPLAN_ASSIGN_OR_RETURN(auto x, SplitExecution::Create(env, m, ex, all[c], so, samples));
    cuts.push_back(std::move(x));
    fit.segments.push_back(static_cast<int>(all[c].size()));
  }
  std::vector<std::vector<double>> us(cuts.size());
  try {
    for (int r = 0; r < BoundaryWarmup(o) + BoundaryRuns(o); ++r) {
      for (size_t c = 0; c < cuts.size(); ++c) {
        const double t = cuts[c]->Pass();
        if (r >= BoundaryWarmup(o)) us[c].push_back(t);
      }
    }
  } catch (const std::exception& e) {
    return Error(ErrorCode::kUnsupported, "{}: ONNX Runtime cannot run the model cut into segments: {}", m.path,
                 OneLine(e.what()));
  }
  for (const auto& v : us) fit.pass_us.push_back(ort::Quantile(v, 0.5));
  // Least squares over (segments − 1, median pass).
  const double count = static_cast<double>(fit.segments.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t c = 0; c < fit.segments.size(); ++c) {
    const double x = fit.segments[c] - 1.0, y = fit.pass_us[c];
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double den = count * sxx - sx * sx;
  fit.slope_us = den > 0 ? (count * sxy - sx * sy) / den : 0.0;
  fit.base_us = (sy - fit.slope_us * sx) / count;
  double ss_res = 0, ss_tot = 0;
  for (size_t c = 0; c < fit.segments.size(); ++c) {
    const double pred = fit.base_us + fit.slope_us * (fit.segments[c] - 1.0);
    ss_res += (fit.pass_us[c] - pred) * (fit.pass_us[c] - pred);
    ss_tot += (fit.pass_us[c] - sy / count) * (fit.pass_us[c] - sy / count);
  }
  fit.r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 0.0;
  fit.residual_us = count > 2 ? std::sqrt(ss_res / (count - 2)) : 0.0;
  return fit;
}

}  // namespace

Status RecordBoundaryFit(Ort::Env& env, const LoadedModel& m, const std::string& pu_name, const ProfileOptions& o,
                         const OperatorExtractor& extractor, int64_t room_bytes,
                         const std::map<std::string, TensorData>& samples, CostTable* t) {
  HETPLAN_ASSIGN_OR_RETURN(BoundaryFit fit, MeasureBoundaries(env, m, o, extractor, room_bytes, samples));
  t->meta["boundary_estimate_bytes"] = std::to_string(fit.estimate_bytes);
  if (!fit.memory_note.empty()) t->meta["boundary_memory"] = fit.memory_note;
  if (fit.segments.empty()) {
    t->meta["boundary_skipped"] = "fewer than two cuts fit: " + fit.memory_note;
    return Status::Ok();
  }
  // A slope below 0 is noise: no measurable cost.
  t->boundary_us[pu_name] = std::max(0.0, fit.slope_us);
  std::string points;
  for (size_t c = 0; c < fit.segments.size(); ++c) {
    points += fmt::format("{}{}:{:.1f}", c ? " " : "", fit.segments[c], fit.pass_us[c]);
  }
  t->meta["boundary_method"] = fmt::format(
      "the model cut at random places of its topological order into 1, 2, 4, ... segments, run resident "
      "(one session each, tensors bound once); least squares pass_us = base + boundary x (segments - 1) "
      "over the median passes ({} timed after {} untimed, interleaved)", BoundaryRuns(o), BoundaryWarmup(o));
  t->meta["boundary_points"] = points;
  t->meta["boundary_fit_slope_us"] = DoubleText(fit.slope_us);
  t->meta["boundary_base_us"] = DoubleText(fit.base_us);
  t->meta["boundary_r2"] = DoubleText(fit.r2);
  t->meta["boundary_residual_us"] = DoubleText(fit.residual_us);
  t->meta["boundary_runs"] = std::to_string(BoundaryRuns(o));
  return Status::Ok();
}

}  // namespace ort_profiler_internal

namespace cost_internal {

Result<std::vector<std::string>> OperatorModels(const LoadedModel& m, const std::vector<int>& op_ids) {
  ort_profiler_internal::OperatorExtractor extractor(m);
  std::vector<std::string> out;
  for (int id : op_ids) {
    HETPLAN_ASSIGN_OR_RETURN(std::string bytes, extractor.Build(m.graph.op(id)));
    out.push_back(std::move(bytes));
  }
  return out;
}

}  // namespace cost_internal
}  // namespace hetplan
