// The co-run profiler (include/hetplan/cost/corun_profiler.h).
//
// Every PU gets a thread pinned to its cores (ort::PinnedWorker); its
// sessions are created on that thread, so that ORT's intra-op pool threads
// inherit the pinning, and run there. Two PUs run "at once" by posting a job
// to each worker and waiting for both. Hand-offs use ort::Generation, the
// signal the PU-thread executor (src/deploy/pu_executor.cc) uses, so the
// transfer rows price what the executor does.
#include "hetplan/cost/corun_profiler.h"

#include <onnx/onnx_pb.h>
#include <onnxruntime_cxx_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "cost/profiler_internal.h"
#include "hetplan/graph/float32_copy.h"
#include "hetplan/graph/quantization.h"
#include "hetplan/util/clock.h"
#include "hetplan/util/sha256.h"
#include "ort/pinning.h"
#include "ort/session.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kCorunCacheVersion = "hetplan-corun-profile-v1";
constexpr uint64_t kCorunSeed = 0x636f72756e;  // "corun"
// The producer pauses this long before each hand-off, so that the consumer
// has stopped spinning and sleeps, as a PU waiting for a branch does.
constexpr auto kHandoffPause = std::chrono::microseconds(1000);

using ort::Median;

std::string RuntimeText(const ProfileOptions& r) {
  std::vector<std::string> options;
  for (const auto& [k, v] : r.provider_options) options.push_back(k + "=" + v);
  return fmt::format("provider={} threads={} cores={}{}", r.provider, r.threads,
                     r.cores.empty() ? std::string("unpinned") : fmt::format("{}", fmt::join(r.cores, ",")),
                     options.empty() ? std::string() : fmt::format(" options={}", fmt::join(options, ",")));
}

// One measured PU: its pinned thread and session options.
struct Pu {
  std::string name;
  ProfileOptions runtime;
  const CostTable* solo = nullptr;
  std::unique_ptr<ort::PinnedWorker> worker;
  Ort::SessionOptions options{nullptr};
};

// A job for a worker that records an ORT failure instead of throwing.
std::function<void()> Guarded(const std::function<void()>& job, const std::string& pu, Status* status) {
  return [job, pu, status] {
    try {
      job();
    } catch (const std::exception& e) {
      *status = Error(ErrorCode::kUnsupported, "{}: ONNX Runtime failed while co-running: {}", pu, OneLine(e.what()));
    }
  };
}

// Runs one job per PU at the same time and waits for all.
Status AtOnce(const std::vector<std::pair<Pu*, std::function<void()>>>& jobs) {
  std::vector<Status> st(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) jobs[i].first->worker->Post(Guarded(jobs[i].second, jobs[i].first->name, &st[i]));
  for (const auto& [pu, job] : jobs) pu->worker->Drain();
  for (const Status& s : st) HETPLAN_RETURN_IF_ERROR(s);
  return Status::Ok();
}
Status On(Pu& pu, const std::function<void()>& job) { return AtOnce({{&pu, job}}); }

// A session of `bytes` created on the PU's own thread.
Result<std::unique_ptr<ort::Runner>> MakeRunner(Ort::Env& env, Pu& pu, const std::string& bytes, uint64_t seed) {
  Result<std::unique_ptr<ort::Runner>> r = Status(ErrorCode::kInternal, "not created");
  pu.worker->Call([&] { r = ort::Runner::Create(env, bytes, pu.options, seed); });
  if (!r.ok()) return Error(r.status().code(), "{}: ONNX Runtime cannot load an operator to co-run: {}", pu.name,
                            r.status().message());
  return r;
}

// --- transfers -------------------------------------------------------------------

// y = Relu(x) over `n` floats: the producer and the consumer of a hand-off.
Result<std::string> ReluModel(int64_t n) {
  onnx::ModelProto m = cost_internal::SmallModel("hetplan-corun", "handoff");
  auto* g = m.mutable_graph();
  auto* node = g->add_node();
  node->set_op_type("Relu");
  node->set_name("relu");
  node->add_input("x");
  node->add_output("y");
  cost_internal::AddFloatVector(g->add_input(), "x", n);
  cost_internal::AddFloatVector(g->add_output(), "y", n);
  std::string bytes;
  if (!m.SerializeToString(&bytes)) return Error(ErrorCode::kInternal, "cannot serialise the hand-off model");
  return bytes;
}

// Raises a generation past every wait when it goes out of scope (normally
// or by an exception), so that the other side of a hand-off never hangs.
struct Unblock {
  explicit Unblock(ort::Generation* g) : g(g) {}
  ~Unblock() { g->Raise(std::numeric_limits<int64_t>::max()); }
  ort::Generation* g;
};

// A session whose input and output are bound once (no allocation per run).
struct Bound {
  Ort::Session session{nullptr};
  std::unique_ptr<Ort::IoBinding> binding;
  Ort::RunOptions run_options;
  void Run() { session.Run(run_options, *binding); }
};

Result<std::unique_ptr<Bound>> MakeBound(Ort::Env& env, Pu& pu, const std::string& bytes, Ort::Value& in,
                                         Ort::Value& out) {
  auto b = std::make_unique<Bound>();
  Status st;
  pu.worker->Call(Guarded(
      [&] {
        b->session = Ort::Session(env, bytes.data(), bytes.size(), pu.options);
        b->binding = std::make_unique<Ort::IoBinding>(b->session);
        b->binding->BindInput("x", in);
        b->binding->BindOutput("y", out);
      },
      pu.name, &st));
  HETPLAN_RETURN_IF_ERROR(st);
  return b;
}

// The extra time a consumer on `to` pays for a tensor of `bytes` written on
// `from`, against the same consumer on `from`.
Result<TransferCost> MeasureTransfer(Ort::Env& env, Pu& from, Pu& to, int64_t bytes, const CoRunOptions& o) {
  const int64_t n = std::max<int64_t>(1, bytes / 4);
  HETPLAN_ASSIGN_OR_RETURN(std::string model, ReluModel(n));
  std::mt19937_64 rng(kCorunSeed + static_cast<uint64_t>(bytes));
  Ort::Value x = ort::RandomTensor(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {n}, rng);
  Ort::Value mid = ort::ZeroTensor(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {n});
  Ort::Value y_local = ort::ZeroTensor(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {n});
  Ort::Value y_remote = ort::ZeroTensor(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {n});
  HETPLAN_ASSIGN_OR_RETURN(auto producer, MakeBound(env, from, model, x, mid));
  HETPLAN_ASSIGN_OR_RETURN(auto local, MakeBound(env, from, model, mid, y_local));
  HETPLAN_ASSIGN_OR_RETURN(auto remote, MakeBound(env, to, model, mid, y_remote));
  const int total = o.warmup + o.runs;
  std::vector<double> local_us, remote_us;
  for (int round = 0; round < o.rounds; ++round) {
    HETPLAN_RETURN_IF_ERROR(On(from, [&] {
      for (int i = 0; i < total; ++i) {
        std::this_thread::sleep_for(kHandoffPause);
        producer->Run();
        const auto t0 = Clock::now();
        local->Run();
        if (i >= o.warmup) local_us.push_back(Us(t0, Clock::now()));
      }
    }));
    ort::Generation ready, consumed;
    std::vector<Clock::time_point> produced(static_cast<size_t>(total)), done(static_cast<size_t>(total));
    HETPLAN_RETURN_IF_ERROR(AtOnce({{&from,
                                     [&] {
                                       // A failure must not leave the other side waiting.
                                       Unblock unblock(&ready);
                                       for (int i = 0; i < total; ++i) {
                                         std::this_thread::sleep_for(kHandoffPause);
                                         producer->Run();
                                         produced[static_cast<size_t>(i)] = Clock::now();
                                         ready.Raise(i + 1);
                                         consumed.WaitFor(i + 1);
                                       }
                                     }},
                                    {&to, [&] {
                                       Unblock unblock(&consumed);
                                       for (int i = 0; i < total; ++i) {
                                         ready.WaitFor(i + 1);
                                         remote->Run();
                                         done[static_cast<size_t>(i)] = Clock::now();
                                         consumed.Raise(i + 1);
                                       }
                                     }}}));
    for (int i = o.warmup; i < total; ++i) {
      remote_us.push_back(Us(produced[static_cast<size_t>(i)], done[static_cast<size_t>(i)]));
    }
  }
  const double base = Median(local_us);
  TransferCost t;
  t.from_pu = from.name;
  t.to_pu = to.name;
  t.bytes = static_cast<double>(n * 4);
  // A hand-off cannot make the consumer faster than reading its input where
  // it was written; a negative difference is noise (recorded as 0).
  t.us = std::max(0.0, Median(remote_us) - base);
  t.p10_us = std::max(0.0, ort::Quantile(remote_us, 0.1) - base);
  t.p90_us = std::max(0.0, ort::Quantile(remote_us, 0.9) - base);
  return t;
}

// --- slowdowns -----------------------------------------------------------------

// The heaviest operator of each op type on `solo`, heaviest first, then the
// next heaviest operators until `count`.
std::vector<int> RepresentativeOps(const LoadedModel& m, const CostTable& solo, const std::string& pu, int count) {
  std::vector<std::pair<double, int>> by_time;
  for (const Operator& op : m.graph.operators()) {
    if (const OpCost* c = solo.Find(op.name, pu)) by_time.emplace_back(c->exec_us, op.id);
  }
  std::sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<int> out;
  std::vector<std::string> types;
  for (const auto& [us, id] : by_time) {
    if (static_cast<int>(out.size()) >= count) break;
    const std::string& type = m.graph.op(id).type;
    if (std::find(types.begin(), types.end(), type) != types.end()) continue;
    types.push_back(type);
    out.push_back(id);
  }
  for (const auto& [us, id] : by_time) {
    if (static_cast<int>(out.size()) >= count) break;
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  }
  return out;
}

struct SlowdownResult {
  Slowdown row;
  std::string per_op;  // "name ratio; ..." for the table's meta
  // How far the solo sums of the rounds lie apart, relative to their median:
  // the noise a factor near 1 is to be read against.
  double noise = 0;
};

// SF(run, interfere): the representative operators timed on `run`, alone and
// while `interfere` runs them in a loop, blocks alternating.
Result<SlowdownResult> MeasureSlowdown(Ort::Env& env, const LoadedModel& m, Pu& run, Pu& interfere,
                                       const std::vector<int>& ops, const std::vector<std::string>& models,
                                       const CoRunOptions& o) {
  std::vector<std::unique_ptr<ort::Runner>> mine, theirs;
  for (size_t i = 0; i < ops.size(); ++i) {
    HETPLAN_ASSIGN_OR_RETURN(auto a, MakeRunner(env, run, models[i], kCorunSeed + static_cast<uint64_t>(ops[i])));
    HETPLAN_ASSIGN_OR_RETURN(auto b,
                             MakeRunner(env, interfere, models[i], kCorunSeed + 7 + static_cast<uint64_t>(ops[i])));
    mine.push_back(std::move(a));
    theirs.push_back(std::move(b));
  }
  std::vector<std::vector<double>> solo(ops.size()), corun(ops.size());
  std::vector<double> round_solo;  // per round: Σ over the operators of their solo medians
  auto time_block = [&](std::vector<std::vector<double>>& into) {
    double sum = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      for (int w = 0; w < o.warmup; ++w) mine[i]->Run();
      std::vector<double> block;
      for (int r = 0; r < o.runs; ++r) {
        const auto t0 = Clock::now();
        mine[i]->Run();
        block.push_back(Us(t0, Clock::now()));
      }
      sum += Median(block);
      into[i].insert(into[i].end(), block.begin(), block.end());
    }
    return sum;
  };
  for (int round = 0; round < o.rounds; ++round) {
    HETPLAN_RETURN_IF_ERROR(On(run, [&] { round_solo.push_back(time_block(solo)); }));
    std::atomic<bool> stop{false}, started{false};
    HETPLAN_RETURN_IF_ERROR(AtOnce({{&interfere,
                                     [&] {
                                       try {
                                         while (!stop.load(std::memory_order_relaxed)) {
                                           for (auto& r : theirs) {
                                             r->Run();
                                             started.store(true, std::memory_order_release);
                                             if (stop.load(std::memory_order_relaxed)) break;
                                           }
                                         }
                                       } catch (...) {
                                         started.store(true);  // the timing side must not wait forever
                                         throw;
                                       }
                                     }},
                                    {&run, [&] {
                                       while (!started.load(std::memory_order_acquire)) std::this_thread::yield();
                                       try {
                                         time_block(corun);
                                       } catch (...) {
                                         stop.store(true);
                                         throw;
                                       }
                                       stop.store(true, std::memory_order_relaxed);
                                     }}}));
  }
  double solo_sum = 0, corun_sum = 0;
  std::vector<std::string> parts;
  for (size_t i = 0; i < ops.size(); ++i) {
    const double s = Median(solo[i]), c = Median(corun[i]);
    solo_sum += s;
    corun_sum += c;
    parts.push_back(fmt::format("{} {:.3f}", m.graph.op(ops[i]).name, s > 0 ? c / s : 1.0));
  }
  SlowdownResult out;
  out.row.run_pu = run.name;
  out.row.interfere_pu = interfere.name;
  out.row.factor = solo_sum > 0 ? corun_sum / solo_sum : 1.0;
  out.per_op = fmt::format("{}", fmt::join(parts, "; "));
  const double mid = Median(round_solo);
  if (mid > 0) {
    out.noise = (*std::max_element(round_solo.begin(), round_solo.end()) -
                 *std::min_element(round_solo.begin(), round_solo.end())) /
                mid;
  }
  return out;
}

// --- co-execution ----------------------------------------------------------------

// Operator `id` with itself on every PU pair: at once on two PUs (from a
// barrier; makespan of both), back to back on one.
Result<std::vector<CoExecution>> MeasureCoexec(Ort::Env& env, const LoadedModel& m, std::vector<Pu>& pus, int id,
                                               const std::string& model, const CoRunOptions& o) {
  const size_t k = pus.size();
  std::vector<std::unique_ptr<ort::Runner>> a(k), b(k);
  for (size_t p = 0; p < k; ++p) {
    HETPLAN_ASSIGN_OR_RETURN(a[p], MakeRunner(env, pus[p], model, kCorunSeed + 11 + static_cast<uint64_t>(id)));
    HETPLAN_ASSIGN_OR_RETURN(b[p], MakeRunner(env, pus[p], model, kCorunSeed + 13 + static_cast<uint64_t>(id)));
  }
  const std::string& name = m.graph.op(id).name;
  const int total = o.warmup + o.runs;
  std::vector<CoExecution> rows;
  for (size_t p = 0; p < k; ++p) {
    for (size_t q = p; q < k; ++q) {
      std::vector<double> makespan;
      if (p == q) {
        HETPLAN_RETURN_IF_ERROR(On(pus[p], [&] {
          for (int i = 0; i < total; ++i) {
            const auto t0 = Clock::now();
            a[p]->Run();
            b[p]->Run();
            if (i >= o.warmup) makespan.push_back(Us(t0, Clock::now()));
          }
        }));
      } else {
        ort::SpinBarrier barrier(2);
        std::vector<Clock::time_point> s0(static_cast<size_t>(total)), e0(s0), s1(s0), e1(s0);
        auto side = [&](ort::Runner& r, std::vector<Clock::time_point>& s, std::vector<Clock::time_point>& e) {
          return [&] {
            try {
              for (int i = 0; i < total; ++i) {
                if (!barrier.ArriveAndWait()) return;
                s[static_cast<size_t>(i)] = Clock::now();
                r.Run();
                e[static_cast<size_t>(i)] = Clock::now();
              }
            } catch (...) {
              barrier.Break();  // the other side must not wait forever
              throw;
            }
          };
        };
        HETPLAN_RETURN_IF_ERROR(AtOnce({{&pus[p], side(*a[p], s0, e0)}, {&pus[q], side(*b[q], s1, e1)}}));
        for (int i = o.warmup; i < total; ++i) {
          const size_t u = static_cast<size_t>(i);
          makespan.push_back(Us(std::min(s0[u], s1[u]), std::max(e0[u], e1[u])));
        }
      }
      rows.push_back({name, pus[p].name, name, pus[q].name, Median(makespan)});
    }
  }
  return rows;
}

// --- the cache -------------------------------------------------------------------

using cost_internal::CacheFile;

std::optional<CostTable> LoadCached(const LoadedModel& m, const std::string& dir, const std::string& key) {
  std::optional<CostTable> t = cost_internal::LoadCachedTable(m, dir, key);
  if (!t) return std::nullopt;
  std::set<std::string> names;
  for (const Operator& op : m.graph.operators()) names.insert(op.name);
  for (const CoExecution& c : t->coexec) {
    if (!names.count(c.op_a) || !names.count(c.op_b)) return std::nullopt;
  }
  return t;
}

Result<CostTable> Measure(const LoadedModel& m, std::vector<Pu>& pus, const CoRunOptions& o) {
  HETPLAN_ASSIGN_OR_RETURN(Ort::Env * env, ort::SharedEnv());
  const std::string graph_optimization = ort::GraphOptimizationFor(m.fusion, IsQuantized(m.graph));
  const std::string& folder = m.external_data_dir;  // where ORT reads external weights
  for (Pu& pu : pus) {
    HETPLAN_ASSIGN_OR_RETURN(pu.worker, ort::PinnedWorker::Start(pu.runtime.cores));
    const ProfileOptions& r = pu.runtime;
    HETPLAN_ASSIGN_OR_RETURN(pu.options,
                             ort::MakePuSessionOptions({r.provider, r.provider_options, r.threads, r.cores}, graph_optimization, folder));
  }
  const size_t k = pus.size();
  const std::vector<int> reps = RepresentativeOps(m, *pus[0].solo, pus[0].name, o.representative_ops);
  HETPLAN_ASSIGN_OR_RETURN(std::vector<std::string> rep_models, cost_internal::OperatorModels(m, reps));
  const int pairs = static_cast<int>(k * (k - 1));
  const int steps = pairs * static_cast<int>(o.transfer_bytes.size()) + pairs + (o.coexec ? m.graph.size() : 0);
  int done = 0;
  auto step = [&] {
    if (o.progress) o.progress(++done, steps);
  };
  if (o.progress) o.progress(0, steps);

  CostTable t;
  for (size_t p = 0; p < k; ++p) {
    for (size_t q = 0; q < k; ++q) {
      if (p == q) continue;
      for (int64_t bytes : o.transfer_bytes) {
        HETPLAN_ASSIGN_OR_RETURN(TransferCost x, MeasureTransfer(*env, pus[p], pus[q], bytes, o));
        t.transfers.push_back(std::move(x));
        step();
      }
    }
  }
  for (size_t p = 0; p < k; ++p) {
    for (size_t q = 0; q < k; ++q) {
      if (p == q) continue;
      HETPLAN_ASSIGN_OR_RETURN(SlowdownResult s, MeasureSlowdown(*env, m, pus[p], pus[q], reps, rep_models, o));
      t.meta[fmt::format("slowdown_ops.{}.{}", s.row.run_pu, s.row.interfere_pu)] = s.per_op;
      t.meta[fmt::format("slowdown_noise.{}.{}", s.row.run_pu, s.row.interfere_pu)] = fmt::format("{:.4f}", s.noise);
      t.slowdowns.push_back(std::move(s.row));
      step();
    }
  }
  if (o.coexec) {
    for (const Operator& op : m.graph.operators()) {
      HETPLAN_ASSIGN_OR_RETURN(std::vector<std::string> model, cost_internal::OperatorModels(m, {op.id}));
      HETPLAN_ASSIGN_OR_RETURN(std::vector<CoExecution> rows, MeasureCoexec(*env, m, pus, op.id, model[0], o));
      t.coexec.insert(t.coexec.end(), rows.begin(), rows.end());
      step();
    }
  }

  auto& meta = t.meta;
  meta["source"] = "measured";
  meta["kind"] = "corun";
  meta["model_sha256"] = m.sha256;
  meta["model_file"] = m.path.empty() ? std::string() : fs::path(m.path).filename().string();
  meta["fusion"] = ToString(m.fusion);
  meta["graph_optimization"] = graph_optimization;
  std::vector<std::string> names;
  for (const Pu& pu : pus) {
    names.push_back(pu.name);
    meta["pu." + pu.name] = RuntimeText(pu.runtime);
  }
  meta["pus"] = fmt::format("{}", fmt::join(names, ","));
  meta["host"] = HostName();
  meta["cpu"] = CpuModelName();
  meta["runtime"] = "onnxruntime " + OnnxRuntimeVersion();
  meta["warmup"] = std::to_string(o.warmup);
  meta["runs"] = std::to_string(o.runs);
  meta["rounds"] = std::to_string(o.rounds);
  std::vector<std::string> rep_names;
  for (int id : reps) rep_names.push_back(m.graph.op(id).name);
  meta["representative_ops"] = fmt::format("{}", fmt::join(rep_names, "; "));
  meta["transfer_bytes"] = fmt::format("{}", fmt::join(o.transfer_bytes, ","));
  meta["transfer_method"] =
      "Relu producer on pu, consumer on other_pu woken by the executor's signal after a 1 ms pause; exec_us = "
      "median(producer end to consumer end) - median(the consumer right after the producer on pu), floored at 0";
  meta["slowdown_method"] =
      "representative ops on pu alone vs while other_pu loops over them, blocks alternating; slowdown = "
      "sum of co-run medians / sum of solo medians";
  meta["coexec_method"] = o.coexec ? "each operator with itself: on two PUs started at a spin barrier (makespan), "
                                     "on one PU back to back"
                                   : "not measured";
  meta["created"] = cost_internal::UtcNow();
  return t;
}

}  // namespace

std::string CoRunCacheKey(const LoadedModel& m, const std::vector<CoRunPu>& pus, const CoRunOptions& o) {
  std::string text;
  auto add = [&](std::string_view k, const std::string& v) { text += fmt::format("{}={}\n", k, v); };
  add("version", std::string(kCorunCacheVersion));
  text += cost_internal::ModelKeyText(m);
  for (const CoRunPu& pu : pus) add("pu", pu.name + " " + RuntimeText(pu.runtime));
  add("warmup", std::to_string(o.warmup));
  add("runs", std::to_string(o.runs));
  add("rounds", std::to_string(o.rounds));
  add("representative_ops", std::to_string(o.representative_ops));
  add("coexec", o.coexec ? "true" : "false");
  add("transfer_bytes", fmt::format("{}", fmt::join(o.transfer_bytes, ",")));
  text += cost_internal::MachineKeyText();
  return Sha256Hex(text);
}

Result<CostTable> ProfileCoRun(const LoadedModel& m, const std::vector<CoRunPu>& pus, const CoRunOptions& o) {
  if (m.model == nullptr) {
    return Error(ErrorCode::kInvalidArgument, "co-run profile: no ONNX model; load it with LoadOnnxModel first");
  }
  if (pus.size() < 2) {
    return Error(ErrorCode::kInvalidArgument, "co-run profile: {} measured PU(s); co-running needs two or more",
                 pus.size());
  }
  if (o.warmup < 0 || o.runs < 1 || o.rounds < 1 || o.representative_ops < 1) {
    return Error(ErrorCode::kInvalidArgument,
                 "co-run profile: warmup {}, runs {}, rounds {}, representative ops {}: warmup must be >= 0 and "
                 "the others >= 1",
                 o.warmup, o.runs, o.rounds, o.representative_ops);
  }
  for (const CoRunPu& pu : pus) {
    if (pu.solo == nullptr) {
      return Error(ErrorCode::kInvalidArgument, "co-run profile: PU '{}' has no profile; profile it first", pu.name);
    }
  }
  std::string key;
  if (!o.cache_dir.empty()) {
    key = CoRunCacheKey(m, pus, o);
    if (auto cached = LoadCached(m, o.cache_dir, key)) {
      cached->meta["cache"] = "hit";
      cached->meta["cache_file"] = CacheFile(o.cache_dir, key, ".json").string();
      return std::move(*cached);
    }
  }
  std::vector<Pu> state;
  for (const CoRunPu& pu : pus) state.push_back(Pu{pu.name, pu.runtime, pu.solo, nullptr, Ort::SessionOptions{nullptr}});
  // PUs profiled on a float32 copy (ONNX Runtime has no kernel for the
  // model's bfloat16) co-run on the same copy.
  const bool float32 =
      std::any_of(pus.begin(), pus.end(), [](const CoRunPu& p) { return p.solo->meta.count("profiled_on") > 0; });
  std::optional<LoadedModel> copy;
  if (float32) {
    HETPLAN_ASSIGN_OR_RETURN(copy, Float32Copy(m));
  }
  Result<CostTable> measured = Status(ErrorCode::kInternal, "");
  try {
    measured = Measure(copy ? *copy : m, state, o);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, "{}: co-run profiling failed: {}", m.path, OneLine(e.what()));
  }
  if (!measured.ok()) return measured;
  CostTable t = std::move(measured).value();
  if (copy) t.meta["profiled_on"] = "float32 copy";
  cost_internal::StoreInCache(o.cache_dir, key, &t);
  return t;
}

void MergeCoRun(const CostTable& corun, CostTable* t) {
  t->slowdowns.insert(t->slowdowns.end(), corun.slowdowns.begin(), corun.slowdowns.end());
  t->coexec.insert(t->coexec.end(), corun.coexec.begin(), corun.coexec.end());
  t->transfers.insert(t->transfers.end(), corun.transfers.begin(), corun.transfers.end());
  for (const auto& [k, v] : corun.meta) t->meta["corun_" + k] = v;
}

}  // namespace hetplan
