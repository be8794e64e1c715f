// The PU-thread executor (src/deploy/run_internal.h): a split plan executed
// as planned, each PU on its own pinned thread, segments concurrently where
// the plan overlaps them, two requests at once for a concurrent plan.
//
// One pass: every PU thread arrives at a spin barrier (the pass starts when
// the last one leaves it), then takes its segments in manifest order; a
// segment starts when the segments it reads from are done. The manifest's
// order is topological and, for plans split with TimedCuts, the planned
// start order, so no thread ever waits for a segment that waits for it.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <utility>

#include "hetplan/util/clock.h"
#include "deploy/run_internal.h"
#include "ort/pinning.h"
#include "ort/session.h"

namespace hetplan::deploy_internal {
namespace {

using ort::Median;

}  // namespace

ort::PuRuntime RuntimeOf(const Manifest& m, const std::string& device, int threads_override) {
  ort::PuRuntime rt;
  rt.threads = m.threads;
  for (const ManifestDevice& d : m.devices) {
    if (d.name != device || !d.configured) continue;
    rt.provider = d.provider;
    rt.provider_options = d.provider_options;
    rt.threads = d.threads;
    rt.cores = d.cores;
  }
  if (threads_override > 0) rt.threads = threads_override;
  return rt;
}

Status StartPuWorkers(const Manifest& m, const std::vector<std::string>& used, int threads_override,
                      std::vector<std::unique_ptr<ort::PinnedWorker>>* workers,
                      std::vector<Ort::SessionOptions>* options) {
  for (const std::string& device : used) {
    const ort::PuRuntime rt = RuntimeOf(m, device, threads_override);
    const std::string where = fmt::format("{}: device {}", m.path, device);
    HETPLAN_RETURN_IF_ERROR(ort::CheckProvider(rt.provider, where));
    HETPLAN_RETURN_IF_ERROR(ort::CheckCores(rt.cores, where + ": cores"));
    HETPLAN_ASSIGN_OR_RETURN(auto worker, ort::PinnedWorker::Start(rt.cores));
    workers->push_back(std::move(worker));
    HETPLAN_ASSIGN_OR_RETURN(Ort::SessionOptions so, ort::MakePuSessionOptions(rt, m.graph_optimization, m.dir));
    options->push_back(std::move(so));
  }
  return Status::Ok();
}

std::vector<std::string> UsedDevices(const Manifest& m, std::vector<int>* device_of) {
  std::vector<std::string> used;
  for (const ManifestSegment& seg : m.segments) {
    auto it = std::find(used.begin(), used.end(), seg.device);
    if (device_of != nullptr) device_of->push_back(static_cast<int>(it - used.begin()));
    if (it == used.end()) used.push_back(seg.device);
  }
  return used;
}

namespace {

Ort::Value Copy(const Ort::Value& v) {
  Ort::AllocatorWithDefaultOptions alloc;
  auto info = v.GetTensorTypeAndShapeInfo();
  const std::vector<int64_t> shape = info.GetShape();
  Ort::Value out = Ort::Value::CreateTensor(alloc, shape.data(), shape.size(), info.GetElementType());
  if (v.GetTensorSizeInBytes() > 0) {
    std::memcpy(out.GetTensorMutableRawData(), v.GetTensorRawData(), v.GetTensorSizeInBytes());
  }
  return out;
}

class PuThreadExecutor : public Executor {
 public:
  static Result<std::unique_ptr<Executor>> Create(Ort::Env& env, const Manifest& m, const std::vector<std::string>& bytes,
                                                  const RunOptions& o,
                                                  const std::map<std::string, const Ort::Value*>& inputs) {
    auto x = std::unique_ptr<PuThreadExecutor>(new PuThreadExecutor(m));
    const std::vector<std::string> used = UsedDevices(m, &x->worker_of_);
    std::vector<Ort::SessionOptions> options;
    HETPLAN_RETURN_IF_ERROR(StartPuWorkers(m, used, o.threads, &x->workers_, &options));
    x->segments_of_.resize(used.size());
    const size_t k = m.segments.size();
    for (size_t s = 0; s < k; ++s) x->segments_of_[static_cast<size_t>(x->worker_of_[s])].push_back(static_cast<int>(s));

    // One buffer per tensor that leaves a segment, per request; request 1
    // gets its own copy of the model inputs.
    for (const ManifestSegment& seg : m.segments) {
      for (const auto& t : seg.outputs) x->values_.emplace(std::make_pair(seg.request, t.name), NewValue(t));
    }
    for (int r = 1; r < m.requests; ++r) {
      for (const auto& [name, v] : inputs) x->values_.emplace(std::make_pair(r, name), Copy(*v));
    }
    x->sessions_.reserve(k);
    x->bindings_.reserve(k);
    for (size_t s = 0; s < k; ++s) {
      const ManifestSegment& seg = m.segments[s];
      // Created on the PU's thread: ORT's pool threads inherit its pinning.
      Result<Ort::Session> session = Status(ErrorCode::kInternal, "not created");
      x->workers_[static_cast<size_t>(x->worker_of_[s])]->Call([&] {
        session = CreateSession(env, m, seg, bytes[s], options[static_cast<size_t>(x->worker_of_[s])]);
      });
      if (!session.ok()) return session.status();
      x->sessions_.push_back(std::move(session).value());
      Ort::IoBinding binding(x->sessions_.back());
      for (const auto& t : seg.inputs) {
        const Ort::Value* v = nullptr;
        if (auto it = x->values_.find({seg.request, t.name}); it != x->values_.end()) v = &it->second;
        if (auto it = inputs.find(t.name); v == nullptr && it != inputs.end()) v = it->second;
        if (v == nullptr) {
          return Error(ErrorCode::kInvalidArgument, "{}: segment {} ({}): input '{}' has no producer; re-run hetplan "
                       "split", m.path, seg.id, seg.file, t.name);
        }
        binding.BindInput(t.name.c_str(), *v);
      }
      for (const auto& t : seg.outputs) binding.BindOutput(t.name.c_str(), x->values_.at({seg.request, t.name}));
      x->bindings_.push_back(std::move(binding));
      x->deps_.push_back(seg.depends_on);
    }
    x->done_ = std::make_unique<ort::Generation[]>(k);
    x->start_.resize(k);
    x->end_.resize(k);
    x->released_.resize(used.size());
    return std::unique_ptr<Executor>(std::move(x));
  }

  Timeline RunOnce() override {
    const int64_t pass = ++pass_;
    failed_.store(false);
    error_.clear();
    ort::SpinBarrier barrier(static_cast<int>(workers_.size()));
    for (size_t w = 0; w < workers_.size(); ++w) {
      workers_[w]->Post([this, w, pass, &barrier] { Pass(w, pass, barrier); });
    }
    for (auto& w : workers_) w->Drain();
    if (failed_.load()) throw std::runtime_error(error_);
    return MakeTimeline();
  }

  std::map<std::string, Buffer> Outputs() const override {
    std::map<std::string, Buffer> out;
    for (int r = 0; r < m_.requests; ++r) {
      for (const auto& t : m_.outputs) {
        if (auto it = values_.find({r, t.name}); it != values_.end()) out.emplace(RequestTensorKey(r, t.name), ToBuffer(it->second));
      }
    }
    return out;
  }

 private:
  explicit PuThreadExecutor(const Manifest& m) : m_(m) {}

  // One PU's part of a pass; on its thread.
  void Pass(size_t w, int64_t pass, ort::SpinBarrier& barrier) {
    barrier.ArriveAndWait();
    released_[w] = Clock::now();
    for (int s : segments_of_[w]) {
      const size_t us = static_cast<size_t>(s);
      for (int d : deps_[us]) done_[static_cast<size_t>(d)].WaitFor(pass);
      start_[us] = Clock::now();
      if (!failed_.load(std::memory_order_relaxed)) {
        try {
          sessions_[us].Run(run_options_, bindings_[us]);
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(error_mu_);
          if (!failed_.exchange(true)) error_ = fmt::format("segment {} ({}): {}", s, m_.segments[us].file, e.what());
        }
      }
      end_[us] = Clock::now();
      done_[us].Raise(pass);  // also after a failure: nobody may wait forever
    }
  }

  Timeline MakeTimeline() const {
    const size_t k = m_.segments.size();
    const Clock::time_point t0 = *std::min_element(released_.begin(), released_.end());
    Timeline t;
    t.run_us.resize(k);
    t.gap_us.assign(k, 0.0);
    t.start_us.resize(k);
    t.end_us.resize(k);
    for (size_t s = 0; s < k; ++s) {
      t.start_us[s] = Us(t0, start_[s]);
      t.end_us[s] = Us(t0, end_[s]);
      t.run_us[s] = Us(start_[s], end_[s]);
    }
    // The executor's own time before a segment: from the moment it could
    // start (its inputs done, its PU free) to its start.
    for (size_t w = 0; w < workers_.size(); ++w) {
      double free_at = Us(t0, released_[w]);
      for (int s : segments_of_[w]) {
        double ready = free_at;
        for (int d : deps_[static_cast<size_t>(s)]) ready = std::max(ready, t.end_us[static_cast<size_t>(d)]);
        t.gap_us[static_cast<size_t>(s)] = std::max(0.0, t.start_us[static_cast<size_t>(s)] - ready);
        free_at = t.end_us[static_cast<size_t>(s)];
      }
    }
    t.entry_us = *std::min_element(t.start_us.begin(), t.start_us.end());
    t.wall_us = *std::max_element(t.end_us.begin(), t.end_us.end());
    return t;
  }

  const Manifest& m_;
  std::vector<std::unique_ptr<ort::PinnedWorker>> workers_;  // one per PU the segments use
  std::vector<int> worker_of_;                               // per segment
  std::vector<std::vector<int>> segments_of_;                // per worker, in manifest order
  std::vector<std::vector<int>> deps_;                       // per segment
  std::map<std::pair<int, std::string>, Ort::Value> values_;  // (request, tensor): a map never moves its values
  std::vector<Ort::Session> sessions_;
  std::vector<Ort::IoBinding> bindings_;
  Ort::RunOptions run_options_;
  std::unique_ptr<ort::Generation[]> done_;  // per segment: the last pass it finished
  std::vector<Clock::time_point> start_, end_, released_;
  int64_t pass_ = 0;
  std::atomic<bool> failed_{false};
  std::mutex error_mu_;
  std::string error_;
};

}  // namespace

bool UsesPuThreads(const Manifest& m) {
  std::set<std::string> used;
  for (const ManifestSegment& seg : m.segments) {
    if (!seg.measured) return false;
    used.insert(seg.device);
  }
  // A configuration to honour: pinned cores or another provider. An
  // unpinned CPU PU (klein-arm's) runs on the calling thread as it always has.
  bool configured = false;
  for (const ManifestDevice& d : m.devices) {
    configured = configured || (used.count(d.name) && d.configured &&
                                (!d.cores.empty() || d.provider != "cpu" || !d.provider_options.empty()));
  }
  return m.requests > 1 || used.size() > 1 || configured;
}

Result<std::unique_ptr<Executor>> CreatePuThreadExecutor(Ort::Env& env, const Manifest& m,
                                                         const std::vector<std::string>& bytes, const RunOptions& o,
                                                         const std::map<std::string, const Ort::Value*>& inputs) {
  try {
    return PuThreadExecutor::Create(env, m, bytes, o, inputs);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kUnsupported, "{}: ONNX Runtime failed while preparing the PU threads: {}", m.path,
                 OneLine(e.what()));
  }
}

PuThreadReport SummarisePuThreads(const Manifest& m, const std::vector<Timeline>& timelines, int threads_override) {
  PuThreadReport r;
  std::vector<int> device_of;
  const std::vector<std::string> used = UsedDevices(m, &device_of);
  const size_t k = m.segments.size();
  for (size_t p = 0; p < used.size(); ++p) {
    const ort::PuRuntime rt = RuntimeOf(m, used[p], threads_override);
    PuRun pu;
    pu.name = used[p];
    pu.provider = rt.provider;
    pu.cores = rt.cores;
    pu.threads = rt.threads;
    std::vector<double> busy(timelines.size(), 0.0);
    for (size_t s = 0; s < k; ++s) {
      if (device_of[s] != static_cast<int>(p)) continue;
      ++pu.segments;
      pu.predicted_busy_us += m.segments[s].predicted_us;
      for (size_t i = 0; i < timelines.size(); ++i) busy[i] += timelines[i].run_us[s];
    }
    pu.busy_us = Median(busy);
    r.pus.push_back(std::move(pu));
  }
  for (int q = 0; q < m.requests; ++q) {
    RequestRun rr;
    rr.request = q;
    std::vector<double> finish(timelines.size(), 0.0);
    for (size_t s = 0; s < k; ++s) {
      if (m.segments[s].request != q) continue;
      rr.predicted_finish_us = std::max(rr.predicted_finish_us, m.segments[s].planned_finish_us);
      for (size_t i = 0; i < timelines.size(); ++i) finish[i] = std::max(finish[i], timelines[i].end_us[s]);
    }
    rr.finish_us = Median(finish);
    if (rr.predicted_finish_us > 0) rr.relative_error = rr.finish_us / rr.predicted_finish_us - 1.0;
    r.requests.push_back(rr);
  }
  std::vector<double> wall, overlap;
  for (const Timeline& t : timelines) {
    wall.push_back(t.wall_us);
    // Time with two or more PUs in a segment: a sweep over busy intervals
    // (a PU's own segments never overlap: one thread runs them).
    std::vector<std::pair<double, int>> events;
    for (size_t s = 0; s < k; ++s) {
      events.emplace_back(t.start_us[s], +1);
      events.emplace_back(t.end_us[s], -1);
    }
    std::sort(events.begin(), events.end());
    double both = 0, last = 0;
    int active = 0;
    for (const auto& [time, delta] : events) {
      if (active >= 2) both += time - last;
      active += delta;
      last = time;
    }
    overlap.push_back(both);
    std::vector<std::pair<double, double>> run;
    for (size_t s = 0; s < k; ++s) run.emplace_back(t.start_us[s], t.end_us[s]);
    r.runs.push_back(std::move(run));
  }
  r.predicted_makespan_us = m.predicted_makespan_us;
  r.makespan_us = Median(wall);
  r.makespan_p10_us = ort::Quantile(wall, 0.1);
  r.makespan_p90_us = ort::Quantile(wall, 0.9);
  if (r.predicted_makespan_us > 0) r.relative_error = r.makespan_us / r.predicted_makespan_us - 1.0;
  r.overlap_us = Median(overlap);
  for (size_t s = 0; s < k; ++s) {
    const ManifestSegment& seg = m.segments[s];
    int previous = -1;  // the segment its PU ran before it
    for (size_t u = 0; u < s; ++u) {
      if (device_of[u] == device_of[s]) previous = static_cast<int>(u);
    }
    for (int d : seg.depends_on) {
      const ManifestSegment& from = m.segments[static_cast<size_t>(d)];
      if (from.device == seg.device) continue;
      BoundaryRun b;
      b.from = d;
      b.to = seg.id;
      b.from_device = from.device;
      b.to_device = seg.device;
      for (const auto& t : seg.inputs) {
        if (t.from == d) b.bytes += t.bytes;
      }
      std::vector<double> gap;
      int last_input = 0;
      for (const Timeline& t : timelines) {
        gap.push_back(t.start_us[s] - t.end_us[static_cast<size_t>(d)]);
        double latest = previous >= 0 ? t.end_us[static_cast<size_t>(previous)] : 0.0;
        for (int e : seg.depends_on) latest = std::max(latest, t.end_us[static_cast<size_t>(e)]);
        if (t.end_us[static_cast<size_t>(d)] >= latest) ++last_input;
      }
      b.gap_us = Median(gap);
      b.critical = 2 * last_input > static_cast<int>(timelines.size());
      r.boundaries.push_back(std::move(b));
    }
  }
  return r;
}

nlohmann::json PuThreadReportToJson(const PuThreadReport& r) {
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json j;
  auto& pus = j["pus"] = nlohmann::json::array();
  for (const PuRun& p : r.pus) {
    pus.push_back({{"name", p.name},
                   {"provider", p.provider},
                   {"cores", p.cores},
                   {"threads", p.threads},
                   {"segments", p.segments},
                   {"predicted_busy_us", p.predicted_busy_us},
                   {"busy_us", p.busy_us}});
  }
  auto& requests = j["requests"] = nlohmann::json::array();
  for (const RequestRun& q : r.requests) {
    requests.push_back({{"request", q.request},
                        {"predicted_finish_us", q.predicted_finish_us},
                        {"finish_us", q.finish_us},
                        {"relative_error", opt(q.relative_error)}});
  }
  j["makespan"] = {{"predicted_us", r.predicted_makespan_us},
                   {"measured_us", r.makespan_us},
                   {"p10_us", r.makespan_p10_us},
                   {"p90_us", r.makespan_p90_us},
                   {"relative_error", opt(r.relative_error)}};
  j["overlap_us"] = r.overlap_us;
  auto& boundaries = j["boundaries"] = nlohmann::json::array();
  for (const BoundaryRun& b : r.boundaries) {
    boundaries.push_back({{"from", b.from},
                          {"to", b.to},
                          {"from_device", b.from_device},
                          {"to_device", b.to_device},
                          {"bytes", b.bytes},
                          {"gap_us", b.gap_us},
                          {"critical", b.critical}});
  }
  auto& runs = j["runs"] = nlohmann::json::array();
  for (const auto& run : r.runs) {
    nlohmann::json one = nlohmann::json::array();
    for (const auto& [start, end] : run) one.push_back({start, end});
    runs.push_back(std::move(one));
  }
  return j;
}

}  // namespace hetplan::deploy_internal
