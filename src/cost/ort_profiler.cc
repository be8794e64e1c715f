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
// Then, optionally, the boundary fit: the model cut into segments that run
// one after another. This file runs them in that order, times the whole
// model and each operator, and keeps the cache; ort_in_context.cc does the
// profiled runs (2), ort_model_parts.cc cuts the operators and segments out
// of the model and fits the boundary cost.
// The co-run profiler (corun_profiler.cc) builds on the same one-operator models.
#include "hetplan/cost/profiler.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>
#include <onnxruntime_cxx_api.h>

#include "ort/pinning.h"
#include "ort/session.h"
#include "ov/openvino.h"
#include "hetplan/cost/sample_shapes.h"
#include "hetplan/graph/float32_copy.h"
#include "hetplan/graph/quantization.h"
#include "hetplan/util/clock.h"
#include "hetplan/util/io.h"
#include "hetplan/util/sha256.h"
#include "cost/ort_profiler_internal.h"
#include "cost/profiler_internal.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;
using ort::Runner;
using ort_profiler_internal::BoundaryCuts;
using ort_profiler_internal::BytesText;
using ort_profiler_internal::kArenaFactor;
using ort_profiler_internal::kLeftOutForMemory;
using ort_profiler_internal::MemoryBudgetBytes;
using ort_profiler_internal::PeakResidentBytes;
using ort_profiler_internal::ResidentBytes;
using ort_profiler_internal::FootprintEstimator;
using ort_profiler_internal::BoundaryPasses;
using ort_profiler_internal::BoundaryWarmup;
using ort_profiler_internal::DoubleText;
using ort_profiler_internal::InContextShares;
using ort_profiler_internal::kSeed;
using ort_profiler_internal::MakeSessionOptions;
using ort_profiler_internal::MeasureInContext;
using ort_profiler_internal::OperatorExtractor;
using ort_profiler_internal::RecordBoundaryFit;
using ort_profiler_internal::Stats;
using ort_profiler_internal::Summarise;
using ort_profiler_internal::TimeRuns;

// v2: framework_us and the in-context run breakdown (the planners' host cost).
// v3: the in-context shares scaled to the plain (unprofiled) Run.
// v4: the profiler's own cost per kernel (measured on a chain of tiny
//     kernels) taken off every kernel before that scale.
constexpr std::string_view kCacheVersion = "hetplan-ort-profile-v4";

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

}  // namespace

namespace ort_profiler_internal {

// --- statistics and sessions, for every file of the profiler ---------------

Stats Summarise(const std::vector<double>& us) {
  return Stats{ort::Quantile(us, 0.5), ort::Quantile(us, 0.1), ort::Quantile(us, 0.9)};
}

Result<Ort::SessionOptions> MakeSessionOptions(const LoadedModel& m, const ProfileOptions& o) {
  // Sessions are created from bytes, so external data has no folder of its
  // own: the importer's, next to the model file.
  return ort::MakePuSessionOptions({o.provider, o.provider_options, o.threads, o.cores}, GraphOptimization(m),
                                   m.external_data_dir);
}

// `warmup` untimed runs, then `runs` timed ones (µs each).
std::vector<double> TimeRuns(ort::Runner& r, int warmup, int runs) {
  for (int i = 0; i < warmup; ++i) r.Run();
  std::vector<double> us;
  us.reserve(static_cast<size_t>(runs));
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    r.Run();
    auto t1 = Clock::now();
    us.push_back(Us(t0, t1));
  }
  return us;
}

std::string DoubleText(double v) { return fmt::format("{}", v); }

}  // namespace ort_profiler_internal

namespace {

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

// --- the cache -----------------------------------------------------------------

using cost_internal::CacheFile;

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

// The whole model timed again at the end (did the machine keep its speed?):
// its runs, and its untimed runs before them.
int EndRuns(const ProfileOptions& o) { return std::min(ModelRuns(o), std::max(5, ModelRuns(o) / 5)); }
int EndWarmup(const ProfileOptions& o) { return std::min(o.warmup, 3); }

Result<CostTable> Measure(const LoadedModel& m, const std::string& pu_name, const ProfileOptions& o);

// ONNX Runtime has no kernel for the model's type (bfloat16: its CPU
// provider has none but data movement): the table of a float32 copy, which
// says so; nullopt when the model has no bfloat16 (the refusal stands).
Result<std::optional<CostTable>> MeasureFloat32Copy(const LoadedModel& m, const std::string& pu_name,
                                                    const ProfileOptions& o, const Status& refusal) {
  HETPLAN_ASSIGN_OR_RETURN(std::optional<LoadedModel> copy, Float32Copy(m));
  if (!copy) return std::optional<CostTable>();
  HETPLAN_ASSIGN_OR_RETURN(CostTable t32, Measure(*copy, pu_name, o));
  t32.meta["profiled_on"] = "float32 copy";
  t32.meta["profiled_on_reason"] = fmt::format("ONNX Runtime {} has no CPU kernel for the model's bfloat16 ({})",
                                               OnnxRuntimeVersion(), OneLine(refusal.message()));
  return std::optional<CostTable>(std::move(t32));
}

// Whether the whole model's sessions fit under `budget` beside the
// `held` bytes hetplan holds: an error when one does not; false when the
// in-context run's second one does not (and meta in_context_error says so);
// o.in_context otherwise. The estimates go to the meta.
Result<bool> WholeModelFits(const LoadedModel& m, const ProfileOptions& o, int64_t budget, int64_t held,
                            std::map<std::string, std::string>* meta) {
  const int64_t whole = FootprintEstimator(m).Bytes(m.graph.topological_order());
  (*meta)["memory_budget_bytes"] = std::to_string(budget);
  (*meta)["memory_whole_model_bytes"] = std::to_string(whole);
  if (held + whole > budget && o.max_memory_bytes <= 0) {
    // The default budget, and an estimate that errs high: go on, and say so.
    (*meta)["memory_warning"] = fmt::format("one whole-model session is estimated at {} besides the {} held, over "
                                            "the default budget of {}; give --max-memory to enforce one",
                                            BytesText(whole), BytesText(held), BytesText(budget));
  } else if (held + whole > budget) {
    return Error(ErrorCode::kLimitExceeded,
                 "{}: profiling needs about {} for one session of the whole model (its weights, inputs and outputs, "
                 "and {}x its activations alive at once) besides the {} hetplan holds, over the memory budget of {}; "
                 "give a larger --max-memory or smaller input shapes (--shape)",
                 m.path.empty() ? std::string("the model") : m.path, BytesText(whole), kArenaFactor, BytesText(held),
                 BytesText(budget));
  }
  if (o.in_context && held + 2 * whole > budget) {
    (*meta)["in_context_error"] = fmt::format("{} of {}: the plain and the profiled whole-model sessions need about "
                                              "{} together",
                                              kLeftOutForMemory, BytesText(budget), BytesText(2 * whole));
    return false;
  }
  return o.in_context;
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

  // Memory: one whole-model session must fit, or the in-context run is left out.
  const int64_t budget = MemoryBudgetBytes(o);
  const int64_t held_at_start = ResidentBytes().value_or(0);
  HETPLAN_ASSIGN_OR_RETURN(const bool in_context, WholeModelFits(m, o, budget, held_at_start, &meta));

  // The whole model first (on --sample-input's arrays, whose shapes the plan
  // has): a model ORT cannot load fails before minutes of per-operator work.
  HETPLAN_ASSIGN_OR_RETURN(std::string whole, WholeModelBytes(m));
  HETPLAN_ASSIGN_OR_RETURN(Ort::SessionOptions plain_so, MakeSessionOptions(m, o));
  HETPLAN_ASSIGN_OR_RETURN(const auto samples, ReadSamples(m.assumptions.sample_inputs));
  auto plain = Runner::Create(*env, whole, plain_so, kSeed, &samples);
  if (!plain.ok() && IsMissingKernel(plain.status().message())) {
    HETPLAN_ASSIGN_OR_RETURN(std::optional<CostTable> t32, MeasureFloat32Copy(m, pu_name, o, plain.status()));
    if (t32) return std::move(*t32);
  }
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
                    o.warmup, ModelRuns(o), in_context ? " plain and as many with ONNX Runtime's profiler" : "",
                    g.size(), op_runs, whole_runs),
        whole_runs, op_runs);

  InContextShares shares{std::vector<std::optional<double>>(static_cast<size_t>(g.size())),
                         std::vector<std::optional<double>>(static_cast<size_t>(g.size()))};
  if (in_context) {
    HETPLAN_RETURN_IF_ERROR(MeasureInContext(*env, m, o, whole, samples, **plain, &plain_us, &shares, &meta));
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
  HETPLAN_RETURN_IF_ERROR(MeasureOperators(*env, m, pu_name, o, extractor, shares, &t, &sum_us, &planned_us));

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
    const int64_t room = budget - ResidentBytes().value_or(held_at_start);
    stage(fmt::format("boundary fit, the model cut into 1 to {} segments (those that fit in the {} left of the "
                      "memory budget): {} passes each",
                      1 << (BoundaryCuts(g.size()) - 1), BytesText(std::max<int64_t>(0, room)),
                      BoundaryWarmup(o) + BoundaryRuns(o)),
          boundary_passes, 0);
    HETPLAN_RETURN_IF_ERROR(RecordBoundaryFit(*env, m, pu_name, o, extractor, room, samples, &t));
  }
  RecordMeta(m, pu_name, o, sum_us, planned_us, &t);
  if (auto peak = PeakResidentBytes()) meta["memory_peak_bytes"] = std::to_string(*peak);
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
  // --sample-input: the shapes inside depend on its values.
  for (const SampleInput& s : m.assumptions.sample_inputs) text += fmt::format("sample={}:{}\n", s.name, s.sha256);
  for (const BranchChoice& b : m.assumptions.branches) {
    text += fmt::format("branch={}:{}\n", b.node, b.then ? "then" : "else");
  }
  return text + fmt::format("fusion={}\n", ToString(m.fusion));
}

std::optional<CostTable> LoadCachedTable(const LoadedModel& m, const std::string& dir, const std::string& key) {
  std::error_code ec;
  const fs::path json = CacheFile(dir, key, ".json");
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
  return std::move(t).value();
}

std::optional<CostTable> LoadWholeCachedTable(const LoadedModel& m, const std::string& pu_name, const std::string& dir,
                                              const std::string& key) {
  std::optional<CostTable> t = LoadCachedTable(m, dir, key);
  if (!t) return std::nullopt;
  if (!CheckCostTable(*t, m.graph, CacheFile(dir, key, ".json").string()).ok() || !t->model_median_us) {
    return std::nullopt;
  }
  for (const Operator& op : m.graph.operators()) {
    if (t->Find(op.name, pu_name) == nullptr) return std::nullopt;
  }
  return t;
}

void StoreInCache(const std::string& dir, const std::string& key, CostTable* t) {
  // A table the memory budget cut short (cuts or the in-context run left
  // out) is not what the key promises: used, never cached.
  const auto in_context_error = t->meta.find("in_context_error");
  const bool reduced = t->meta.count("boundary_memory") > 0 ||
                       (in_context_error != t->meta.end() &&
                        in_context_error->second.starts_with(kLeftOutForMemory));
  if (!key.empty() && reduced) {
    t->meta["cache"] = "off";
    t->meta["cache_error"] = "not cached: the memory budget left part of the profile out";
    return;
  }
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

std::string ProfileMemoryText(const CostTable& t) {
  auto bytes = [&](const char* key) -> std::optional<int64_t> {
    auto it = t.meta.find(key);
    if (it == t.meta.end()) return std::nullopt;
    return std::strtoll(it->second.c_str(), nullptr, 10);
  };
  const auto peak = bytes("memory_peak_bytes"), budget = bytes("memory_budget_bytes");
  if (!peak || !budget) return "";
  std::string estimate;
  if (auto whole = bytes("memory_whole_model_bytes")) {
    estimate = fmt::format("one whole-model session {}", BytesText(*whole));
  }
  if (auto cuts = bytes("boundary_estimate_bytes"); cuts && *cuts > 0) {
    estimate += fmt::format(", the boundary fit's cuts {}", BytesText(*cuts));
  }
  return fmt::format("profile memory: peak {} resident, budget {}{}", BytesText(*peak),
                     *budget == std::numeric_limits<int64_t>::max() ? std::string("none") : BytesText(*budget),
                     estimate.empty() ? std::string() : " (estimated: " + estimate + ")");
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
  if (o.runtime == "openvino") {
    add("runtime", "openvino " + ov_runtime::Version());
    add("device", o.device);
  }
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
    if (auto cached = cost_internal::LoadWholeCachedTable(m, pu_name, o.cache_dir, key)) {
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
