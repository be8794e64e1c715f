// The ONNX Runtime host profiler (include/hetplan/cost/profiler.h).
//
// Three measurements, all on the calling thread, all with one Ort::Env:
//  1. every operator in isolation: a one-operator ModelProto cut from the
//     imported model (its nodes, the constants they read, its activation
//     inputs as graph inputs with their static shapes), timed with
//     steady_clock around Session::Run;
//  2. the whole model with ORT's profiler on, whose per-node kernel times are
//     attributed back to operators (in_context_us);
//  3. the whole model without the profiler: the reference the per-operator
//     sum is compared with.
// The co-run profiler (corun_profiler.cc) builds on the same one-operator models.
#include "hetplan/cost/profiler.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>
#include <onnxruntime_cxx_api.h>

#include "ort/pinning.h"
#include "ort/session.h"
#include "hetplan/graph/dtype.h"
#include "hetplan/graph/quantization.h"
#include "hetplan/util/io.h"
#include "hetplan/util/sha256.h"
#include "cost/profiler_internal.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kSeed = 0x6865747061;  // "hetpa": inputs are the same every time
constexpr int kBoundaryWarmup = 2;          // untimed passes of each split execution
// v2: framework_us and the in-context run breakdown (the planners' host cost).
// v3: the in-context shares scaled to the plain (unprofiled) Run.
// v4: the profiler's own cost per kernel (measured on a chain of tiny
//     kernels) taken off every kernel before that scale.
constexpr std::string_view kCacheVersion = "hetplan-ort-profile-v4";
constexpr int kProbeKernels = 256;  // kernels of the profiler-cost probe
constexpr int kInterleaveBlock = 10;  // runs of the plain and the profiled session in turn

// --- statistics --------------------------------------------------------------

struct Stats {
  double median_us = 0, p10_us = 0, p90_us = 0;
};

Stats Summarise(const std::vector<double>& us) {
  return Stats{ort::Quantile(us, 0.5), ort::Quantile(us, 0.1), ort::Quantile(us, 0.9)};
}

// --- sessions ----------------------------------------------------------------

// The session settings every measurement shares. The graph optimisation
// level follows the operator granularity hetplan plans at:
//  - fusion=none: ORT_ENABLE_BASIC. Basic rewrites (constant folding,
//    redundant-node elimination, Conv+BN/Conv+Add folding) keep one kernel
//    per ONNX node, so the whole model runs the same kernels that the
//    isolated operators were timed with. ORT_ENABLE_ALL would fuse Conv+Relu
//    and insert NCHWc reorders in the whole model only, and the per-operator
//    sum would be compared with a different program.
//  - fusion=activation: ORT_ENABLE_ALL, as the CIM paper measures its host
//    ("all available graph and layout optimizations"); hetplan's fused
//    operator (Conv+BN+Relu) is then one FusedConv in isolation too.
//  - a quantized model at fusion=none: ORT_ENABLE_EXTENDED, the lowest
//    level that fuses DQ → op → Q into ORT's integer kernels (QLinearConv,
//    QLinearAdd, QGemm, ...), in isolation as in the whole model. An operator
//    that fusion=none leaves without its QuantizeLinear (torch's
//    DQ → Conv → Relu → Q puts the Relu in an operator of its own) then runs
//    as a float kernel alone but inside an integer kernel in the model: the
//    composition error shows it, and fusion=activation keeps them together.
std::string GraphOptimization(const LoadedModel& m) {
  return ort::GraphOptimizationFor(m.fusion, IsQuantized(m.graph));
}

Result<Ort::SessionOptions> MakeSessionOptions(const LoadedModel& m, const ProfileOptions& o) {
  // Sessions are created from bytes, so external data has no folder of its
  // own: resolve it next to the model file.
  std::string folder = m.path.empty() ? std::string() : fs::absolute(fs::path(m.path)).parent_path().string();
  return ort::MakePuSessionOptions({o.provider, o.provider_options, o.threads, o.cores}, GraphOptimization(m),
                                   folder);
}

using ort::Runner;

// `warmup` untimed runs, then `runs` timed ones (µs each).
std::vector<double> TimeRuns(Runner& r, int warmup, int runs) {
  for (int i = 0; i < warmup; ++i) r.Run();
  std::vector<double> us;
  us.reserve(static_cast<size_t>(runs));
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    r.Run();
    auto t1 = Clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return us;
}

// The CPU time counters of /proc/stat's "cpu" line (jiffies, all CPUs): the
// time the hypervisor gave to other guests (steal) and in all. Absent where
// there is no /proc/stat (not Linux) or no steal field (kernels before 2.6.11).
struct CpuTimes {
  long long steal = 0, total = 0;
};
std::optional<CpuTimes> ReadCpuTimes() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  if (!(in >> cpu) || cpu != "cpu") return std::nullopt;
  CpuTimes t;
  long long v = 0;
  int fields = 0;
  // user nice system idle iowait irq softirq steal guest guest_nice; guest
  // time is already counted in user and nice.
  while (fields < 8 && in >> v) {
    t.total += v;
    if (fields == 7) t.steal = v;
    ++fields;
  }
  if (fields < 8) return std::nullopt;
  return t;
}

// --- cutting one operator out of the model -----------------------------------

class OperatorExtractor {
 public:
  explicit OperatorExtractor(const LoadedModel& m) : model_(*m.model) {
    const auto& g = model_.graph();
    for (int i = 0; i < g.node_size(); ++i) {
      for (const auto& o : g.node(i).output()) {
        if (!o.empty()) producer_.emplace(o, i);
      }
    }
    for (int i = 0; i < g.initializer_size(); ++i) initializer_.emplace(g.initializer(i).name(), i);
    for (int i = 0; i < g.sparse_initializer_size(); ++i) {
      sparse_.emplace(g.sparse_initializer(i).values().name(), i);
    }
    for (const auto& vi : g.input()) value_info_.emplace(vi.name(), &vi);
    for (const auto& vi : g.value_info()) value_info_.emplace(vi.name(), &vi);
    for (const auto& vi : g.output()) value_info_.emplace(vi.name(), &vi);
    is_op_node_.assign(static_cast<size_t>(g.node_size()), false);
    for (const Operator& op : m.graph.operators()) {
      for (int i : op.node_indices) {
        if (i >= 0 && i < g.node_size()) is_op_node_[static_cast<size_t>(i)] = true;
      }
    }
  }

  // The operator as a model of its own: its nodes in order, the constants
  // they read (initializers, and the Constant/Identity/constant-only nodes
  // that compute them: ORT folds those at session creation, so they cost
  // nothing at run time), its activation inputs as graph inputs with their
  // static shapes, its outputs as graph outputs.
  Result<std::string> Build(const Operator& op) const {
    return BuildPart(op, op.node_indices, op.inputs, op.outputs, fmt::format("operator_{}", op.id));
  }

  // Operators `ops` (ids, in topological order) as one model, as Build does
  // for one: its outputs are what operators outside it or the graph read.
  // The profiler's split executions (MeasureBoundaries) run these.
  Result<std::string> BuildSegment(const OpGraph& g, const std::vector<int>& ops) const {
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

 private:
  // `op` names the part in errors; `known` has the static shapes of its
  // tensors; `outputs` become its graph outputs.
  Result<std::string> BuildPart(const Operator& op, const std::vector<int>& node_indices,
                                const std::vector<TensorInfo>& known, const std::vector<TensorInfo>& outputs,
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
      if (auto it = initializer_.find(name); it != initializer_.end()) {
        inits.insert(it->second);
        continue;
      }
      if (auto it = sparse_.find(name); it != sparse_.end()) {
        sparse.insert(it->second);
        continue;
      }
      auto p = producer_.find(name);
      if (p != producer_.end() && !is_op_node_[static_cast<size_t>(p->second)] && !nodes.count(p->second)) {
        // A Constant, Identity/Dropout alias, or constant-only node: comes along.
        nodes.insert(p->second);
        const auto& pn = g.node(p->second);
        for (int k = pn.input_size() - 1; k >= 0; --k) {
          if (!pn.input(k).empty()) work.push_back(pn.input(k));
        }
        for (const auto& o : pn.output()) produced.insert(o);
        continue;
      }
      if (p != producer_.end() && nodes.count(p->second)) continue;
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

  // Element type from the model's value_info (shape inference ran on it);
  // static shape from the operator's TensorInfo, else from value_info.
  Status AddValueInfo(const Operator& op, const std::string& name,
                      const std::vector<TensorInfo>& known, onnx::ValueInfoProto* out) const {
    out->set_name(name);
    auto* tt = out->mutable_type()->mutable_tensor_type();
    const TensorInfo* info = nullptr;
    for (const auto& t : known) {
      if (t.name == name) info = &t;
    }
    auto vi = value_info_.find(name);
    int32_t elem = onnx::TensorProto::UNDEFINED;
    if (vi != value_info_.end() && vi->second->type().has_tensor_type()) {
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
    if (vi != value_info_.end() && vi->second->type().tensor_type().has_shape()) {
      for (const auto& d : vi->second->type().tensor_type().shape().dim()) {
        if (!d.has_dim_value()) break;
        shape->add_dim()->set_dim_value(d.dim_value());
      }
      if (shape->dim_size() == vi->second->type().tensor_type().shape().dim_size()) return Status::Ok();
    }
    return Error(ErrorCode::kUnsupported, "operator '{}' ({}): tensor '{}' has no static shape; give "
                 "static input shapes with --shape", op.name, op.type, name);
  }

  const onnx::ModelProto& model_;
  std::unordered_map<std::string, int> producer_, initializer_, sparse_;
  std::unordered_map<std::string, const onnx::ValueInfoProto*> value_info_;
  std::vector<bool> is_op_node_;
};

// --- in-context attribution ---------------------------------------------------

// Maps ORT's node names to operators: exactly, else by the longest original
// name that prefixes it. ORT names a node it creates after what it replaces:
// a fused node keeps the first node's name, an NCHWc node is named after its
// output tensor plus "_nchwc", others get "_token_<n>"-style suffixes. So
// the candidates are the operators' node names and, where no node has that
// name, the tensors their nodes write.
class NodeMapper {
 public:
  explicit NodeMapper(const LoadedModel& m) {
    const auto& nodes = m.model->graph().node();
    for (const Operator& op : m.graph.operators()) {
      for (const auto& n : op.nodes) names_.emplace(n, op.id);
    }
    for (const Operator& op : m.graph.operators()) {
      for (int i : op.node_indices) {
        if (i < 0 || i >= nodes.size()) continue;
        for (const auto& t : nodes.Get(i).output()) {
          if (!t.empty()) names_.emplace(t, op.id);  // no-op when a node has that name
        }
      }
    }
  }

  int Map(const std::string& node) {
    if (auto it = cache_.find(node); it != cache_.end()) return it->second;
    int id = -1;
    if (auto it = names_.find(node); it != names_.end()) {
      id = it->second;
    } else {
      size_t best = 0;
      for (const auto& [name, op] : names_) {
        if (name.size() > best && name.size() < node.size() && node.compare(0, name.size(), name) == 0 &&
            !std::isalnum(static_cast<unsigned char>(node[name.size()]))) {
          best = name.size();
          id = op;
        }
      }
    }
    cache_.emplace(node, id);
    return id;
  }

 private:
  std::unordered_map<std::string, int> names_;
  std::unordered_map<std::string, int> cache_;
};

struct InContext {
  std::vector<std::optional<double>> op_us;  // per operator: median over runs
  std::vector<int> op_kernels;               // per operator: kernels per run (most runs)
  double unmapped_share = 0;                 // of all kernel time in the counted runs
  int runs = 0;
  // Medians over the counted runs: ORT's model_run event, the sum of its
  // kernels, the kernels in it, and the executor's time outside kernels per
  // kernel ((model_run − Σ kernels) / kernels, taken per run).
  double run_us = 0, kernel_sum_us = 0, kernels = 0, framework_per_kernel_us = 0;
};

// What MeasureBoundaries found: per cut, its segments and median pass; the
// least-squares line through them.
struct BoundaryFit {
  std::vector<int> segments;
  std::vector<double> pass_us;
  double slope_us = 0, base_us = 0, r2 = 0, residual_us = 0;
};

// Reads ORT's Chrome-trace profile: "Session" events named "model_run" mark
// each Run; "Node" events named "<node>_kernel_time" are kernels. Only the
// last `runs` model runs count (the earlier ones were warm-up).
Result<InContext> ParseOrtProfile(const std::string& path, const LoadedModel& m, int runs) {
  const OpGraph& g = m.graph;
  HETPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Error(ErrorCode::kParseError, "{}: ONNX Runtime's profile is not valid JSON ({})", path,
                 OneLine(e.what()));
  }
  const nlohmann::json* events = &j;
  if (j.is_object() && j.contains("traceEvents")) events = &j["traceEvents"];
  if (!events->is_array()) {
    return Error(ErrorCode::kParseError, "{}: ONNX Runtime's profile is not an array of events", path);
  }
  auto num = [](const nlohmann::json& e, const char* key) -> double {
    auto it = e.find(key);
    return it != e.end() && it->is_number() ? it->get<double>() : -1.0;
  };
  auto str = [](const nlohmann::json& e, const char* key) -> std::string {
    auto it = e.find(key);
    return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::vector<std::pair<double, double>> windows;  // [ts, ts + dur] of each model_run
  for (const auto& e : *events) {
    if (!e.is_object() || str(e, "cat") != "Session" || str(e, "name") != "model_run") continue;
    double ts = num(e, "ts"), dur = num(e, "dur");
    if (ts >= 0 && dur >= 0) windows.emplace_back(ts, ts + dur);
  }
  std::sort(windows.begin(), windows.end());
  if (windows.empty()) {
    return Error(ErrorCode::kParseError, "{}: ONNX Runtime's profile has no model_run events", path);
  }
  if (static_cast<int>(windows.size()) > runs) windows.erase(windows.begin(), windows.end() - runs);

  const std::string suffix = "_kernel_time";
  NodeMapper mapper(m);
  const size_t n_runs = windows.size();
  std::vector<std::vector<double>> per_run(static_cast<size_t>(g.size()), std::vector<double>(n_runs, 0.0));
  std::vector<std::vector<int>> kernels_per_run(static_cast<size_t>(g.size()), std::vector<int>(n_runs, 0));
  std::vector<double> run_kernel_us(n_runs, 0.0), run_kernels(n_runs, 0.0);
  std::vector<bool> seen(static_cast<size_t>(g.size()), false);
  double mapped = 0, unmapped = 0;
  for (const auto& e : *events) {
    if (!e.is_object() || str(e, "cat") != "Node") continue;
    std::string name = str(e, "name");
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    double ts = num(e, "ts"), dur = num(e, "dur");
    if (ts < 0 || dur < 0) continue;
    auto w = std::upper_bound(windows.begin(), windows.end(), std::make_pair(ts, 1e300));
    if (w == windows.begin()) continue;
    --w;
    if (ts > w->second) continue;  // between runs or in a warm-up run
    const size_t run = static_cast<size_t>(w - windows.begin());
    run_kernel_us[run] += dur;
    run_kernels[run] += 1;
    int op = mapper.Map(name.substr(0, name.size() - suffix.size()));
    if (op < 0) {
      unmapped += dur;
      continue;
    }
    per_run[static_cast<size_t>(op)][run] += dur;
    ++kernels_per_run[static_cast<size_t>(op)][run];
    seen[static_cast<size_t>(op)] = true;
    mapped += dur;
  }
  InContext out;
  out.runs = static_cast<int>(n_runs);
  out.unmapped_share = mapped + unmapped > 0 ? unmapped / (mapped + unmapped) : 0.0;
  out.op_us.resize(static_cast<size_t>(g.size()));
  out.op_kernels.assign(static_cast<size_t>(g.size()), 0);
  for (size_t v = 0; v < per_run.size(); ++v) {
    if (!seen[v]) continue;
    out.op_us[v] = Summarise(per_run[v]).median_us;
    std::vector<double> counts(kernels_per_run[v].begin(), kernels_per_run[v].end());
    out.op_kernels[v] = static_cast<int>(std::lround(ort::Quantile(counts, 0.5)));
  }
  std::vector<double> run_us, framework;
  for (size_t r = 0; r < n_runs; ++r) {
    run_us.push_back(windows[r].second - windows[r].first);
    // Never negative: ORT's timestamps are whole µs, so a run of a few tiny
    // kernels can round to less than their sum.
    if (run_kernels[r] > 0) framework.push_back(std::max(0.0, run_us.back() - run_kernel_us[r]) / run_kernels[r]);
  }
  out.run_us = ort::Quantile(run_us, 0.5);
  out.kernel_sum_us = ort::Quantile(run_kernel_us, 0.5);
  out.kernels = ort::Quantile(run_kernels, 0.5);
  out.framework_per_kernel_us = ort::Quantile(framework, 0.5);
  return out;
}

// --- split executions: what a segment boundary costs ---------------------------

// One way of cutting the model: contiguous runs of the topological order,
// run one after another as the resident executor runs a plan (one session
// per segment, every tensor that crosses a cut bound once, zero copy).
class SplitExecution {
 public:
  static Result<std::unique_ptr<SplitExecution>> Create(Ort::Env& env, const LoadedModel& m,
                                                        const OperatorExtractor& ex,
                                                        const std::vector<std::vector<int>>& segments,
                                                        const Ort::SessionOptions& so) {
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
          if (it == x->values_.end()) {  // a model input: random, as the profiler feeds models
            Ort::TypeInfo type = session.GetInputTypeInfo(i);  // owns what the view below reads
            auto info = type.GetTensorTypeAndShapeInfo();
            it = x->values_.emplace(name, ort::RandomTensor(info.GetElementType(), info.GetShape(), rng)).first;
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
int BoundaryCuts(int operators) {
  int cuts = 0;
  for (int k = 1; k <= std::min(operators, 64); k *= 2) ++cuts;
  return cuts;
}
int BoundaryWarmup(const ProfileOptions& o) { return std::min(kBoundaryWarmup, o.warmup); }
int EndRuns(const ProfileOptions& o) { return std::min(ModelRuns(o), std::max(5, ModelRuns(o) / 5)); }
int EndWarmup(const ProfileOptions& o) { return std::min(o.warmup, 3); }
// Passes of the split executions the boundary fit times, warm-up included.
int BoundaryPasses(const ProfileOptions& o, int operators) {
  return BoundaryRuns(o) > 0 ? BoundaryCuts(operators) * (BoundaryWarmup(o) + BoundaryRuns(o)) : 0;
}

Result<BoundaryFit> MeasureBoundaries(Ort::Env& env, const LoadedModel& m, const ProfileOptions& o,
                                      const OperatorExtractor& ex) {
  const std::vector<int>& order = m.graph.topological_order();
  const int n = static_cast<int>(order.size());
  std::mt19937_64 rng(kSeed ^ 0xb0a7d);
  std::vector<std::unique_ptr<SplitExecution>> cuts;
  BoundaryFit fit;
  HETPLAN_ASSIGN_OR_RETURN(Ort::SessionOptions so, MakeSessionOptions(m, o));
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
    HETPLAN_ASSIGN_OR_RETURN(auto x, SplitExecution::Create(env, m, ex, segments, so));
    cuts.push_back(std::move(x));
    fit.segments.push_back(k);
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

// A file name for ORT's profile that no other profiler run uses.
std::string ProfilePrefix() {
  static std::atomic<int> counter{0};
  auto now = std::chrono::system_clock::now().time_since_epoch().count();
  return (fs::temp_directory_path() /
          fmt::format("hetplan_ort_profile_{}_{}_{}", static_cast<long>(getpid()), now, counter++))
      .string();
}

// The model as ORT should see it: the imported model (shape overrides
// applied, shape arithmetic folded) with unnamed nodes given the names the
// importer gave them, so that ORT's profile can be mapped back.
Result<std::string> WholeModelBytes(const LoadedModel& m) {
  const onnx::ModelProto* model = m.model.get();
  onnx::ModelProto named;
  bool unnamed = false;
  for (const auto& n : model->graph().node()) unnamed = unnamed || n.name().empty();
  if (unnamed) {
    named = *model;
    auto* g = named.mutable_graph();
    for (int i = 0; i < g->node_size(); ++i) {
      auto* n = g->mutable_node(i);
      if (n->name().empty()) n->set_name(fmt::format("{}_{}", n->op_type(), i));
    }
    model = &named;
  }
  std::string bytes;
  if (!model->SerializeToString(&bytes)) {
    return Error(ErrorCode::kLimitExceeded, "{}: the model cannot be serialised for ONNX Runtime "
                 "(over 2 GiB?); keep large weights as external data", m.path);
  }
  return bytes;
}

std::string DoubleText(double v) { return fmt::format("{}", v); }

// The probe of what ORT's profiler costs per kernel: y = x + x + ... over 8
// floats, kProbeKernels Adds in a chain (no rewrite at any optimisation
// level folds or fuses them), so the kernels themselves take well under a
// microsecond and a profiled Run's excess is the profiler's.
Result<std::string> ProbeModel() {
  onnx::ModelProto mp = cost_internal::SmallModel("hetplan-profiler-probe", "probe");
  auto* g = mp.mutable_graph();
  std::string in = "x";
  for (int i = 0; i < kProbeKernels; ++i) {
    auto* node = g->add_node();
    node->set_op_type("Add");
    node->set_name(fmt::format("add{}", i));
    node->add_input(in);
    node->add_input("x");
    in = i + 1 == kProbeKernels ? "y" : fmt::format("t{}", i);
    node->add_output(in);
  }
  cost_internal::AddFloatVector(g->add_input(), "x", 8);
  cost_internal::AddFloatVector(g->add_output(), "y", 8);
  std::string bytes;
  if (!mp.SerializeToString(&bytes)) return Error(ErrorCode::kInternal, "cannot serialise the profiler probe");
  return bytes;
}

// What ORT's profiler adds to a Run per kernel on this host, in µs: the
// probe run alternately with and without the profiler (`warmup` untimed
// each, then `runs` timed each), the difference of the medians over its
// kernels; never below 0.
Result<double> ProfilerCostPerKernel(Ort::Env& env, const LoadedModel& m, const ProfileOptions& o, int warmup,
                                     int runs) {
  HETPLAN_ASSIGN_OR_RETURN(std::string bytes, ProbeModel());
  HETPLAN_ASSIGN_OR_RETURN(Ort::SessionOptions plain_so, MakeSessionOptions(m, o));
  HETPLAN_ASSIGN_OR_RETURN(Ort::SessionOptions profiled_so, MakeSessionOptions(m, o));
  profiled_so.EnableProfiling(ProfilePrefix().c_str());
  HETPLAN_ASSIGN_OR_RETURN(auto plain, Runner::Create(env, bytes, plain_so, kSeed));
  HETPLAN_ASSIGN_OR_RETURN(auto profiled, Runner::Create(env, bytes, profiled_so, kSeed));
  std::vector<double> plain_us, profiled_us;
  std::string path;
  Status failure;
  try {
    for (int i = 0; i < warmup; ++i) {
      plain->Run();
      profiled->Run();
    }
    for (int i = 0; i < runs; ++i) {
      plain_us.push_back(TimeRuns(*plain, 0, 1).front());
      profiled_us.push_back(TimeRuns(*profiled, 0, 1).front());
    }
  } catch (const std::exception& e) {
    failure = Error(ErrorCode::kUnsupported, "the profiler probe failed: {}", OneLine(e.what()));
  }
  try {
    Ort::AllocatorWithDefaultOptions alloc;
    path = profiled->session().EndProfilingAllocated(alloc).get();
  } catch (const std::exception&) {
  }
  std::error_code ec;
  if (!path.empty()) fs::remove(path, ec);
  HETPLAN_RETURN_IF_ERROR(failure);
  return std::max(0.0, (ort::Quantile(profiled_us, 0.5) - ort::Quantile(plain_us, 0.5)) / kProbeKernels);
}

// --- the cache -----------------------------------------------------------------

fs::path CacheFile(const std::string& dir, const std::string& key, const char* ext) {
  return fs::path(dir) / (key + ext);
}

// A cached table is used only when it is whole and made for this model under
// this key; anything else (missing, corrupt, foreign) means measuring again.
std::optional<CostTable> LoadCached(const LoadedModel& m, const std::string& pu_name,
                                    const std::string& dir, const std::string& key) {
  std::error_code ec;
  fs::path json = CacheFile(dir, key, ".json");
  if (!fs::is_regular_file(json, ec)) return std::nullopt;
  auto t = LoadCostTable(json.string());
  if (!t.ok()) return std::nullopt;
  auto meta = [&](const char* k) {
    auto it = t->meta.find(k);
    return it == t->meta.end() ? std::string() : it->second;
  };
  if (meta("cache_key") != key || meta("model_sha256") != m.sha256 || meta("source") != "measured") {
    return std::nullopt;
  }
  if (!CheckCostTable(*t, m.graph, json.string()).ok() || !t->model_median_us) return std::nullopt;
  for (const Operator& op : m.graph.operators()) {
    if (t->Find(op.name, pu_name) == nullptr) return std::nullopt;
  }
  return std::move(t).value();
}

// What the whole model's profiled runs give each operator: its kernel time
// inside the model and its share of the executor's time between kernels.
struct InContextShares {
  std::vector<std::optional<double>> op_us, framework_us;
};

// The whole model with ORT's profiler on, in blocks alternating with the
// plain session `plain` (whose timed runs go to `plain_us`), corrected for
// the profiler's own cost. A failure is recorded in the meta, not returned:
// the per-operator times do not depend on it.
Status MeasureInContext(Ort::Env& env, const LoadedModel& m, const ProfileOptions& o, const std::string& whole,
                        Runner& plain, std::vector<double>* plain_us, InContextShares* in_context,
                        std::map<std::string, std::string>* meta) {
  const std::string model_label = m.path.empty() ? std::string("the model") : m.path;
  const std::string prefix = ProfilePrefix();
  std::string profile_path;
  HETPLAN_ASSIGN_OR_RETURN(Ort::SessionOptions so, MakeSessionOptions(m, o));
  so.EnableProfiling(prefix.c_str());
  Status failure;
  std::vector<double> profiled_wall;  // steady_clock around Session::Run, profiler on
  // What the profiler adds per kernel, first: a probe ORT cannot run
  // leaves the correction to the one factor below (meta says why).
  double probe_us = 0;
  if (auto probe = ProfilerCostPerKernel(env, m, o, o.warmup, ModelRuns(o)); probe.ok()) {
    probe_us = *probe;
  } else {
    (*meta)["profiler_probe_error"] = OneLine(probe.status().message());
  }
  {
    auto runner = Runner::Create(env, whole, so, kSeed);
    if (!runner.ok()) {
      failure = Error(ErrorCode::kUnsupported, "{}: ONNX Runtime cannot load the model with its "
                      "profiler on: {}", model_label, runner.status().message());
    } else {
      try {
        // Alternately with the plain session, so that the machine's drift
        // falls on both alike: the model row and the in-context times
        // describe the same moments. In blocks of kInterleaveBlock runs,
        // not run by run: a plain Run right after a profiled one finds the
        // caches full of the profiler's data (Mamba's median plain Run:
        // 2.2-2.3 ms run by run, 1.8 ms in blocks of 10, as back to back).
        for (int i = 0; i < o.warmup; ++i) {
          plain.Run();
          (*runner)->Run();
        }
        while (static_cast<int>(plain_us->size()) < ModelRuns(o)) {
          const int n = std::min(kInterleaveBlock, ModelRuns(o) - static_cast<int>(plain_us->size()));
          for (double us : TimeRuns(plain, 0, n)) plain_us->push_back(us);
          for (double us : TimeRuns(**runner, 0, n)) profiled_wall.push_back(us);
        }
        Ort::AllocatorWithDefaultOptions alloc;
        profile_path = (*runner)->session().EndProfilingAllocated(alloc).get();
      } catch (const std::exception& e) {
        failure = Error(ErrorCode::kUnsupported, "{}: ONNX Runtime's profiler failed: {}", model_label,
                        OneLine(e.what()));
      }
    }
  }
  if (failure.ok()) {
    auto parsed = ParseOrtProfile(profile_path, m, ModelRuns(o));
    if (parsed.ok()) {
      in_context->op_us = parsed->op_us;
      // The executor's time between kernels belongs to the operators whose
      // kernels it dispatches: an equal share per kernel.
      for (size_t v = 0; v < in_context->op_us.size(); ++v) {
        if (in_context->op_us[v]) in_context->framework_us[v] = parsed->framework_per_kernel_us * parsed->op_kernels[v];
      }
      (*meta)["in_context_unmapped_share"] = fmt::format("{:.4f}", parsed->unmapped_share);
      // What one whole-model Run is made of (medians over the profiled
      // runs): the wall time around Session::Run, ORT's model_run event
      // inside it, the kernels inside that.
      const double wall = ort::Quantile(profiled_wall, 0.5);
      // The profiler's own work (an event per kernel, with its inputs'
      // shapes) lands inside the times it reports: on a model of many tiny
      // kernels the profiled Run is 2.7x the plain one (Mamba: 6.0 ms vs
      // 2.3 ms). The plain runs were taken alternately with the profiled
      // ones, so they see the same machine: CorrectInContext takes the
      // probe's cost off every kernel and scales the rest so that the
      // shares add up to the plain Run less the time around it (operators
      // the profile does not show keep their isolated time on top).
      const double run_outside_us = std::max(0.0, wall - parsed->run_us);
      const double plain_median_us = ort::Quantile(*plain_us, 0.5);
      const cost_internal::InContextCorrection c =
          cost_internal::CorrectInContext(plain_median_us - run_outside_us, probe_us, parsed->op_kernels,
                                          &in_context->op_us, &in_context->framework_us);
      (*meta)["profiler_per_kernel_us"] = DoubleText(probe_us);
      (*meta)["in_context_per_kernel_us"] = DoubleText(c.per_kernel_us);
      (*meta)["in_context_scale"] = DoubleText(c.scale);
      (*meta)["in_context_plain_us"] = DoubleText(plain_median_us);
      (*meta)["in_context_wall_us"] = DoubleText(wall);
      (*meta)["in_context_run_us"] = DoubleText(parsed->run_us);
      (*meta)["in_context_kernel_sum_us"] = DoubleText(parsed->kernel_sum_us);
      (*meta)["in_context_kernels"] = DoubleText(parsed->kernels);
      (*meta)["framework_per_kernel_us"] = DoubleText(parsed->framework_per_kernel_us);
      (*meta)["run_overhead_us"] = DoubleText(run_outside_us);
    } else {
      failure = parsed.status();
    }
  }
  std::error_code ec;
  if (!profile_path.empty()) fs::remove(profile_path, ec);
  // The per-operator times do not depend on it: record why it is missing
  // instead of discarding them.
  if (!failure.ok()) (*meta)["in_context_error"] = OneLine(failure.message());
  return Status::Ok();
}

// Each operator alone, its in-context share beside it: a row of `t` each;
// the medians added to `sum_us`, the planned costs to `planned_us`.
Status MeasureOperators(Ort::Env& env, const LoadedModel& m, const std::string& pu_name, const ProfileOptions& o,
                        const OperatorExtractor& extractor, const InContextShares& in_context, CostTable* t,
                        double* sum_us, double* planned_us) {
  const OpGraph& g = m.graph;
  const std::string model_label = m.path.empty() ? std::string("the model") : m.path;
  for (const Operator& op : g.operators()) {
    HETPLAN_ASSIGN_OR_RETURN(std::string bytes, extractor.Build(op));
    HETPLAN_ASSIGN_OR_RETURN(Ort::SessionOptions so, MakeSessionOptions(m, o));
    auto runner = Runner::Create(env, bytes, so, kSeed + static_cast<uint64_t>(op.id));
    if (!runner.ok()) {
      return Error(ErrorCode::kUnsupported, "{}: operator '{}' ({}, id {}): ONNX Runtime refuses it "
                   "as a one-operator model: {}; profile with --fusion none, or give this operator's "
                   "cost in a user table", model_label, op.name, op.type, op.id,
                   runner.status().message());
    }
    Stats s;
    try {
      s = Summarise(TimeRuns(**runner, o.warmup, o.runs));
    } catch (const std::exception& e) {
      return Error(ErrorCode::kUnsupported, "{}: operator '{}' ({}, id {}): ONNX Runtime cannot run it "
                   "alone: {}", model_label, op.name, op.type, op.id, OneLine(e.what()));
    }
    OpCost c;
    c.op_id = op.id;
    c.op_name = op.name;
    c.pu = pu_name;
    c.exec_us = s.median_us;
    c.p10_us = s.p10_us;
    c.p90_us = s.p90_us;
    c.in_context_us = in_context.op_us[static_cast<size_t>(op.id)];
    c.framework_us = in_context.framework_us[static_cast<size_t>(op.id)];
    *sum_us += s.median_us;
    *planned_us += c.PlannedUs();
    t->ops.push_back(std::move(c));
    if (o.progress) o.progress(op.id + 1, g.size());
  }
  return Status::Ok();
}

// The boundary cost fitted from split executions, into `t`.
Status RecordBoundaryFit(Ort::Env& env, const LoadedModel& m, const std::string& pu_name, const ProfileOptions& o,
                         const OperatorExtractor& extractor, CostTable* t) {
  HETPLAN_ASSIGN_OR_RETURN(BoundaryFit fit, MeasureBoundaries(env, m, o, extractor));
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

// What the table was measured with and what it found, in its meta.
void RecordMeta(const LoadedModel& m, const std::string& pu_name, const ProfileOptions& o, double sum_us,
                double planned_us, CostTable* t) {
  const OpGraph& g = m.graph;
  auto& meta = t->meta;
  meta["source"] = "measured";
  meta["model_sha256"] = m.sha256;
  meta["model_file"] = m.path.empty() ? std::string() : fs::path(m.path).filename().string();
  meta["fusion"] = ToString(m.fusion);
  meta["graph_optimization"] = GraphOptimization(m);
  meta["pu"] = pu_name;
  meta["host"] = HostName();
  meta["cpu"] = CpuModelName();
  meta["threads"] = std::to_string(o.threads);
  meta["provider"] = o.provider;
  meta["cores"] = o.cores.empty() ? std::string("unpinned") : fmt::format("{}", fmt::join(o.cores, ","));
  meta["runtime"] = "onnxruntime " + OnnxRuntimeVersion();
  meta["warmup"] = std::to_string(o.warmup);
  meta["runs"] = std::to_string(o.runs);
  meta["model_runs"] = std::to_string(ModelRuns(o));
  meta["in_context"] = o.in_context ? "true" : "false";
  meta["operators"] = std::to_string(g.size());
  meta["created"] = cost_internal::UtcNow();
  meta["sum_of_op_medians_us"] = DoubleText(sum_us);
  meta["sum_of_planned_us"] = DoubleText(planned_us);
  if (t->model_median_us && *t->model_median_us > 0) {
    meta["relative_error"] = DoubleText(sum_us / *t->model_median_us - 1.0);
    meta["planned_relative_error"] = DoubleText(planned_us / *t->model_median_us - 1.0);
  }
}

Result<CostTable> Measure(const LoadedModel& m, const std::string& pu_name, const ProfileOptions& o) {
  HETPLAN_ASSIGN_OR_RETURN(Ort::Env * env, ort::SharedEnv());
  const OpGraph& g = m.graph;
  const std::string model_label = m.path.empty() ? std::string("the model") : m.path;
  CostTable t;
  auto& meta = t.meta;
  const std::optional<CpuTimes> cpu_start = ReadCpuTimes();
  auto cannot_run = [&](const std::exception& e) {
    return Error(ErrorCode::kUnsupported, "{}: ONNX Runtime cannot run the model: {}", model_label, OneLine(e.what()));
  };

  // The whole model first: a model ORT cannot load fails before minutes of
  // per-operator work.
  HETPLAN_ASSIGN_OR_RETURN(std::string whole, WholeModelBytes(m));
  HETPLAN_ASSIGN_OR_RETURN(Ort::SessionOptions plain_so, MakeSessionOptions(m, o));
  auto plain = Runner::Create(*env, whole, plain_so, kSeed);
  if (!plain.ok()) {
    return Error(ErrorCode::kUnsupported, "{}: ONNX Runtime {} cannot load the model: {}; the model "
                 "needs an operator, type or opset this ONNX Runtime has no CPU kernel for",
                 model_label, OnnxRuntimeVersion(), plain.status().message());
  }
  std::vector<double> plain_us;  // the whole model without the profiler
  // One untimed Run first (a cold one: the estimate errs long), so that even
  // the first stage says how long the profile will take.
  double first_run_us = -1e6;
  if (o.stage) {
    try {
      first_run_us = TimeRuns(**plain, 0, 1).at(0);
    } catch (const std::exception& e) {
      return cannot_run(e);
    }
  }
  auto stage = [&](const std::string& what, int whole_runs_left, int op_runs_left) {
    if (!o.stage) return;
    const double model_s = (t.model_median_us ? *t.model_median_us : first_run_us) * 1e-6;
    // An operator's run alone costs about its share of the whole model.
    o.stage(what, model_s < 0 ? -1.0 : model_s * (whole_runs_left + op_runs_left));
  };
  const int whole_runs = ProfileWholeModelRuns(o, g.size());
  const int op_runs = o.warmup + o.runs;
  stage(fmt::format("whole model, {} warm-up and {} timed runs{}; then {} operators x {} runs, {} whole-model "
                    "runs in all",
                    o.warmup, ModelRuns(o), o.in_context ? " plain and as many with ONNX Runtime's profiler" : "",
                    g.size(), op_runs, whole_runs),
        whole_runs, op_runs);

  InContextShares in_context{std::vector<std::optional<double>>(static_cast<size_t>(g.size())),
                             std::vector<std::optional<double>>(static_cast<size_t>(g.size()))};
  if (o.in_context) {
    HETPLAN_RETURN_IF_ERROR(MeasureInContext(*env, m, o, whole, **plain, &plain_us, &in_context, &meta));
  }
  try {
    if (plain_us.size() != static_cast<size_t>(ModelRuns(o))) plain_us = TimeRuns(**plain, o.warmup, ModelRuns(o));
  } catch (const std::exception& e) {
    return cannot_run(e);
  }
  {
    Stats s = Summarise(plain_us);
    t.model_median_us = s.median_us;
    t.model_p10_us = s.p10_us;
    t.model_p90_us = s.p90_us;
  }

  OperatorExtractor extractor(m);
  double sum_us = 0, planned_us = 0;
  const int end_runs = EndRuns(o);
  const int boundary_passes = BoundaryPasses(o, g.size());
  stage(fmt::format("{} operators, {} warm-up and {} timed runs each", g.size(), o.warmup, o.runs),
        EndWarmup(o) + end_runs + boundary_passes, op_runs);
  if (o.progress) o.progress(0, g.size());
  HETPLAN_RETURN_IF_ERROR(MeasureOperators(*env, m, pu_name, o, extractor, in_context, &t, &sum_us, &planned_us));

  // Did the machine keep its speed? Every in-context cost was scaled to the
  // whole model timed before the operators, minutes ago on a large model: on
  // a VM whose neighbours come and go the same Run can be 15 % slower or
  // faster by now, and every plan from this table is off by as much. Time
  // the whole model once more and record the change (and what the
  // hypervisor stole meanwhile); ProfileStabilityWarning reads them.
  stage(fmt::format("whole model again, {} runs: did the machine keep its speed?", end_runs),
        EndWarmup(o) + end_runs + boundary_passes, 0);
  try {
    Stats end = Summarise(TimeRuns(**plain, EndWarmup(o), end_runs));
    meta["model_end_median_us"] = DoubleText(end.median_us);
    meta["model_end_runs"] = std::to_string(end_runs);
    if (t.model_median_us && *t.model_median_us > 0) {
      meta["model_drift"] = DoubleText(end.median_us / *t.model_median_us - 1.0);
    }
  } catch (const std::exception& e) {
    return cannot_run(e);
  }
  plain->reset();
  if (auto cpu_end = ReadCpuTimes(); cpu_start && cpu_end && cpu_end->total > cpu_start->total) {
    meta["cpu_steal_share"] = DoubleText(static_cast<double>(cpu_end->steal - cpu_start->steal) /
                                         static_cast<double>(cpu_end->total - cpu_start->total));
  }

  if (BoundaryRuns(o) > 0) {
    stage(fmt::format("boundary fit, the model cut into 1 to {} segments: {} passes each", 1 << (BoundaryCuts(g.size()) - 1),
                      BoundaryWarmup(o) + BoundaryRuns(o)),
          boundary_passes, 0);
    HETPLAN_RETURN_IF_ERROR(RecordBoundaryFit(*env, m, pu_name, o, extractor, &t));
  }
  RecordMeta(m, pu_name, o, sum_us, planned_us, &t);
  return t;
}

}  // namespace

namespace cost_internal {

std::string UtcNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Result<std::vector<std::string>> OperatorModels(const LoadedModel& m, const std::vector<int>& op_ids) {
  OperatorExtractor extractor(m);
  std::vector<std::string> out;
  for (int id : op_ids) {
    HETPLAN_ASSIGN_OR_RETURN(std::string bytes, extractor.Build(m.graph.op(id)));
    out.push_back(std::move(bytes));
  }
  return out;
}

std::string ModelKeyText(const LoadedModel& m) {
  std::string text = fmt::format("model_sha256={}\n", m.sha256);
  // --shape changes the model without changing its file.
  for (const TensorInfo& in : m.graph.graph_inputs()) {
    text += fmt::format("input={}:{}:{}\n", in.name, in.dtype, fmt::join(in.shape, "x"));
  }
  // So do --value and the branches taken.
  for (const FixedInput& f : m.assumptions.fixed_inputs) {
    text += fmt::format("value={}:{}\n", f.name, fmt::join(f.values, ","));
  }
  for (const BranchChoice& b : m.assumptions.branches) {
    text += fmt::format("branch={}:{}\n", b.node, b.then ? "then" : "else");
  }
  return text + fmt::format("fusion={}\n", ToString(m.fusion));
}

void StoreInCache(const std::string& dir, const std::string& key, CostTable* t) {
  if (!key.empty()) {
    t->meta["cache_key"] = key;
    std::error_code ec;
    fs::create_directories(dir, ec);
    Status st = ec ? Error(ErrorCode::kIoError, "{}: cannot create the cache folder ({})", dir, ec.message())
                   : SaveCostTable(*t, CacheFile(dir, key, ".csv").string(), CacheFile(dir, key, ".json").string());
    // A cache that cannot be written costs time later, not correctness now.
    if (!st.ok()) t->meta["cache_error"] = OneLine(st.message());
    t->meta["cache_file"] = CacheFile(dir, key, ".json").string();
  }
  t->meta["cache"] = key.empty() ? "off" : "miss";
}

std::string MachineKeyText() {
  return fmt::format("runtime={}\ncpu={}\nhost={}\n", OnnxRuntimeVersion(), CpuModelName(), HostName());
}

onnx::ModelProto SmallModel(const std::string& producer, const std::string& graph) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name(producer);
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  m.mutable_graph()->set_name(graph);
  return m;
}

void AddFloatVector(onnx::ValueInfoProto* vi, const std::string& name, int64_t n) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_value(n);
}

InContextCorrection CorrectInContext(double plain_run_us, double per_kernel_us, const std::vector<int>& op_kernels,
                                     std::vector<std::optional<double>>* in_context,
                                     std::vector<std::optional<double>>* framework) {
  InContextCorrection c;
  double sum = 0, kernels = 0;
  for (size_t v = 0; v < in_context->size(); ++v) {
    if (!(*in_context)[v]) continue;
    sum += *(*in_context)[v] + (*framework)[v].value_or(0.0);
    kernels += v < op_kernels.size() ? op_kernels[v] : 0;
  }
  if (sum <= 0) return c;
  // Never more per kernel than the whole excess: the rest is work the plain
  // Run does too.
  const double excess = std::max(0.0, sum - plain_run_us);
  c.per_kernel_us = kernels > 0 ? std::clamp(per_kernel_us, 0.0, excess / kernels) : 0.0;
  double left = 0;
  for (size_t v = 0; v < in_context->size(); ++v) {
    if (!(*in_context)[v]) continue;
    double take = c.per_kernel_us * (v < op_kernels.size() ? op_kernels[v] : 0);
    // The profiler writes its event after a kernel ends, in the executor's
    // time between kernels; what exceeds that share came out of the kernel.
    if ((*framework)[v]) {
      const double f = std::min(*(*framework)[v], take);
      *(*framework)[v] -= f;
      take -= f;
      left += *(*framework)[v];
    }
    *(*in_context)[v] -= std::min(*(*in_context)[v], take);
    left += *(*in_context)[v];
  }
  c.scale = left > 0 ? std::clamp(plain_run_us / left, 0.0, 1.0) : 1.0;
  for (size_t v = 0; v < in_context->size(); ++v) {
    if ((*in_context)[v]) *(*in_context)[v] *= c.scale;
    if ((*framework)[v]) *(*framework)[v] *= c.scale;
  }
  return c;
}

}  // namespace cost_internal

std::string OnnxRuntimeVersion() {
  try {
    return Ort::GetVersionString();
  } catch (const std::exception&) {
    return "unknown";
  }
}

std::string CpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::string fallback;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    std::string value = line.substr(colon + 1);
    size_t a = value.find_first_not_of(" \t");
    value = a == std::string::npos ? std::string() : value.substr(a);
    if (value.empty()) continue;
    if (key == "model name") return value;
    if (fallback.empty() && (key == "Hardware" || key == "Processor" || key == "cpu model" ||
                             key == "uarch" || key == "CPU part")) {
      fallback = key == "CPU part" ? "CPU part " + value : value;
    }
  }
  return fallback.empty() ? "unknown" : fallback;
}

std::string ProfileStabilityWarning(const CostTable& t, const std::string& pu) {
  auto num = [&](const char* key) -> std::optional<double> {
    auto it = t.meta.find(key);
    if (it == t.meta.end()) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || !std::isfinite(v)) return std::nullopt;
    return v;
  };
  const std::optional<double> drift = num("model_drift");
  const std::optional<double> steal = num("cpu_steal_share");
  // A change the start's own spread covers is noise (a model of a few µs),
  // not drift: the end's median must also lie outside the start's p10–p90.
  const std::optional<double> end_us = num("model_end_median_us");
  const bool outside = !end_us || !t.model_p10_us || !t.model_p90_us || *end_us < *t.model_p10_us ||
                       *end_us > *t.model_p90_us;
  const bool drifted = drift && std::abs(*drift) > kProfileDriftLimit && outside;
  const bool stolen = steal && *steal > kProfileStealLimit;
  if (!drifted && !stolen) return {};
  std::string what;
  if (drift) {
    what = fmt::format("the whole model ran {:.1f} % {} at the end of the profile than at its start", std::abs(*drift) * 100.0,
                       *drift < 0 ? "faster" : "slower");
  }
  if (steal) what += fmt::format("{}the hypervisor took {:.1f} % of the CPU time meanwhile", what.empty() ? "" : "; ", *steal * 100.0);
  const auto created = t.meta.find("created");
  return fmt::format("{}: the machine's speed changed while it was profiled{}: {}, so plans from this profile may be "
                     "off by as much; profile again (--no-cache) when the machine is quiet",
                     pu, created == t.meta.end() ? "" : " (" + created->second + ")", what);
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "unknown";
  return buf;
}

std::string ProfileCacheKey(const LoadedModel& m, const std::string& pu_name, const ProfileOptions& o) {
  std::string text;
  auto add = [&](std::string_view k, const std::string& v) { text += fmt::format("{}={}\n", k, v); };
  add("version", std::string(kCacheVersion));
  text += cost_internal::ModelKeyText(m);
  add("pu", pu_name);
  add("threads", std::to_string(o.threads));
  // Only when set, so that the keys of unpinned CPU profiles stay what they were.
  if (o.provider != "cpu" || !o.provider_options.empty()) {
    add("provider", o.provider);
    for (const auto& [k, v] : o.provider_options) add("provider_option", k + "=" + v);
  }
  if (!o.cores.empty()) add("cores", fmt::format("{}", fmt::join(o.cores, ",")));
  add("warmup", std::to_string(o.warmup));
  add("runs", std::to_string(o.runs));
  add("model_runs", std::to_string(ModelRuns(o)));
  add("in_context", o.in_context ? "true" : "false");
  add("boundary_runs", std::to_string(BoundaryRuns(o)));
  text += cost_internal::MachineKeyText();
  return Sha256Hex(text);
}

int DefaultModelRuns(int runs) { return std::clamp(runs / 2, 3, 50); }
int DefaultBoundaryRuns(int runs) { return std::clamp(runs / 20, 1, 10); }

int ProfileWholeModelRuns(const ProfileOptions& o, int operators) {
  const int whole = (o.in_context ? 2 : 1) * (o.warmup + ModelRuns(o));
  return whole + EndWarmup(o) + EndRuns(o) + BoundaryPasses(o, operators);
}

Result<CostTable> ProfileOnnxRuntime(const LoadedModel& m, const std::string& pu_name,
                                     const ProfileOptions& o) {
  if (m.model == nullptr) {
    return Error(ErrorCode::kInvalidArgument, "profile: no ONNX model; load it with LoadOnnxModel first");
  }
  if (pu_name.empty()) {
    return Error(ErrorCode::kInvalidArgument, "profile: empty PU name; name the PU as in the platform (e.g. cpu)");
  }
  if (o.threads < 1 || o.threads > 1024) {
    return Error(ErrorCode::kInvalidArgument, "profile: threads {} is not in 1..1024; give --threads 1 or more",
                 o.threads);
  }
  if (BoundaryRuns(o) < 0) {
    return Error(ErrorCode::kInvalidArgument, "profile: boundary runs {} is negative; give 0 (skip) or more",
                 BoundaryRuns(o));
  }
  if (o.warmup < 0 || o.runs < 1 || ModelRuns(o) < 1) {
    return Error(ErrorCode::kInvalidArgument, "profile: warmup {}, runs {}, model runs {}: warmup must be "
                 ">= 0 and runs >= 1", o.warmup, o.runs, ModelRuns(o));
  }
  std::string key;
  if (!o.cache_dir.empty()) {
    key = ProfileCacheKey(m, pu_name, o);
    if (auto cached = LoadCached(m, pu_name, o.cache_dir, key)) {
      cached->meta["cache"] = "hit";
      cached->meta["cache_file"] = CacheFile(o.cache_dir, key, ".json").string();
      return std::move(*cached);
    }
  }
  Result<CostTable> measured = Status(ErrorCode::kInternal, "");
  auto measure = [&] {
    try {
      measured = Measure(m, pu_name, o);
    } catch (const std::exception& e) {
      // Nothing above should throw; a stray ORT or allocation error still must
      // not cross the library's API.
      measured = Error(ErrorCode::kInternal, "{}: profiling failed: {}", m.path, OneLine(e.what()));
    }
  };
  // A pinned PU is measured on a thread pinned as it will run (ORT's pool
  // threads inherit the pinning and MakePuSessionOptions spreads them).
  if (o.cores.empty()) {
    measure();
  } else {
    HETPLAN_RETURN_IF_ERROR(ort::RunPinned(o.cores, measure));
  }
  if (!measured.ok()) return measured;
  CostTable t = std::move(measured).value();
  cost_internal::StoreInCache(o.cache_dir, key, &t);
  return t;
}

}  // namespace hetplan
