// The whole model under ONNX Runtime's profiler, for the host profiler
// (ort_profiler.cc): each operator's kernel time inside the model
// (in_context_us) and its share of the executor's time between kernels
// (framework_us), read from ORT's Chrome-trace profile and corrected for
// what the profiler itself costs, measured on a probe of tiny kernels.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <onnxruntime_cxx_api.h>

#include "ort/session.h"
#include "hetplan/util/io.h"
#include "cost/ort_profiler_internal.h"
#include "cost/profiler_internal.h"

namespace hetplan {
namespace ort_profiler_internal {
namespace {

namespace fs = std::filesystem;
using ort::Runner;

constexpr int kProbeKernels = 256;  // kernels of the profiler-cost probe
constexpr int kInterleaveBlock = 10;  // runs of the plain and the profiled session in turn

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

// --- the profiler's own cost --------------------------------------------------

// A file name for ORT's profile that no other profiler run uses.
std::string ProfilePrefix() {
  static std::atomic<int> counter{0};
  auto now = std::chrono::system_clock::now().time_since_epoch().count();
  return (fs::temp_directory_path() /
          fmt::format("hetplan_ort_profile_{}_{}_{}", static_cast<long>(getpid()), now, counter++))
      .string();
}

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

}  // namespace

Status MeasureInContext(Ort::Env& env, const LoadedModel& m, const ProfileOptions& o, const std::string& whole,
                        const std::map<std::string, TensorData>& samples, Runner& plain,
                        std::vector<double>* plain_us, InContextShares* in_context,
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
    auto runner = Runner::Create(env, whole, so, kSeed, &samples);
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

}  // namespace ort_profiler_internal

namespace cost_internal {

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
}  // namespace hetplan
