// `run --stream N` (run_internal.h: RunStream): a split plan executed as a
// stream of inputs, each PU's segments on its own pinned thread.
//
// Every segment s has a planned time key_s: its planned start, raised above
// the keys of the segments it reads from, so that a consumer's key is always
// later than its producers'. Input i runs segment s at the global time
// i × II + key_s (II: the schedule's initiation interval, or for a plan of
// one inference its makespan), and each PU thread takes its (segment, input)
// items in that order. A segment waits for its producers on the same input,
// and before it overwrites a hand-off buffer, for the consumers of the input
// that last used it. Both waits are for items of an earlier global time, and
// every thread works in increasing global time, so the stream never
// deadlocks. Hand-off tensors have `in_flight` buffers, enough for the
// inputs the plan keeps in flight.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "hetplan/util/clock.h"
#include "deploy/run_internal.h"

namespace hetplan::deploy_internal {
namespace {

// Each segment's key (see the top of the file), in manifest order, which is
// topological.
std::vector<double> Keys(const Manifest& m) {
  std::vector<double> key(m.segments.size(), 0.0);
  for (size_t s = 0; s < m.segments.size(); ++s) {
    key[s] = m.segments[s].planned_start_us;
    for (int d : m.segments[s].depends_on) {
      key[s] = std::max(key[s], std::nextafter(key[static_cast<size_t>(d)], std::numeric_limits<double>::infinity()));
    }
  }
  return key;
}

class Stream {
 public:
  Stream(const Manifest& m, int n) : m_(m), n_(n) {}

  Status Prepare(Ort::Env& env, const std::vector<std::string>& bytes, const RunOptions& o) {
    const std::vector<std::string> used = UsedDevices(m_, &worker_of_);
    std::vector<Ort::SessionOptions> options;
    HETPLAN_RETURN_IF_ERROR(StartPuWorkers(m_, used, o.threads, &workers_, &options));
    const size_t k = m_.segments.size();
    key_ = Keys(m_);
    const double last = k == 0 ? 0.0 : *std::max_element(key_.begin(), key_.end());
    ii_ = m_.schedule.initiation_interval_us.value_or(std::max(m_.schedule.makespan_us, 1e-3));
    in_flight_ = std::min(n_, static_cast<int>(std::floor(last / ii_)) + 2);
    for (size_t s = 0; s < k; ++s) {
      const ManifestSegment& seg = m_.segments[s];
      Result<Ort::Session> session = Status(ErrorCode::kInternal, "not created");
      workers_[static_cast<size_t>(worker_of_[s])]->Call([&] {
        session = CreateSession(env, m_, seg, bytes[s], options[static_cast<size_t>(worker_of_[s])]);
      });
      if (!session.ok()) return session.status();
      sessions_.push_back(std::move(session).value());
      for (const auto& t : seg.outputs) {
        auto& slots = values_[t.name];
        for (int b = 0; b < in_flight_; ++b) slots.push_back(NewValue(t));
      }
    }
    // One binding per segment and buffer, hand-offs and outputs bound once
    // (the model's inputs are bound per input, in RunItem).
    bindings_.resize(k);
    for (size_t s = 0; s < k; ++s) {
      for (int b = 0; b < in_flight_; ++b) {
        Ort::IoBinding binding(sessions_[s]);
        for (const auto& t : m_.segments[s].inputs) {
          if (auto v = values_.find(t.name); v != values_.end()) binding.BindInput(t.name.c_str(), v->second[b]);
        }
        for (const auto& t : m_.segments[s].outputs) binding.BindOutput(t.name.c_str(), values_.at(t.name)[b]);
        bindings_[s].push_back(std::move(binding));
      }
    }
    // Who reads each segment's outputs.
    readers_.resize(k);
    for (size_t s = 0; s < k; ++s) {
      for (int d : m_.segments[s].depends_on) readers_[static_cast<size_t>(d)].push_back(static_cast<int>(s));
    }
    done_ = std::make_unique<ort::Generation[]>(k);
    start_.assign(k * static_cast<size_t>(n_), Clock::time_point());
    end_ = start_;
    outputs_.resize(static_cast<size_t>(n_));
    return Status::Ok();
  }

  Result<StreamTimes> Run(const std::vector<std::map<std::string, const Ort::Value*>>& inputs) {
    inputs_ = &inputs;
    t0_ = Clock::now();
    for (size_t w = 0; w < workers_.size(); ++w) workers_[w]->Post([this, w] { Work(w); });
    for (auto& w : workers_) w->Drain();
    const Clock::time_point t1 = Clock::now();
    if (failed_.load()) return Error(ErrorCode::kUnsupported, "{}: ONNX Runtime failed in the stream: {}", m_.path, error_);
    StreamTimes t;
    t.wall_us = Us(t0_, t1);
    t.in_flight = in_flight_;
    t.outputs = std::move(outputs_);
    const size_t k = m_.segments.size();
    for (int i = 0; i < n_; ++i) {
      double first = std::numeric_limits<double>::infinity(), last_end = 0;
      for (size_t s = 0; s < k; ++s) {
        first = std::min(first, Us(t0_, start_[Item(s, i)]));
        last_end = std::max(last_end, Us(t0_, end_[Item(s, i)]));
      }
      t.first_start_us.push_back(first);
      t.last_end_us.push_back(last_end);
    }
    return t;
  }

 private:
  size_t Item(size_t s, int i) const { return static_cast<size_t>(i) * m_.segments.size() + s; }

  // One PU's items in global-time order; on its thread.
  void Work(size_t w) {
    std::vector<std::pair<double, std::pair<int, int>>> items;  // (global time, (input, segment))
    for (size_t s = 0; s < m_.segments.size(); ++s) {
      if (static_cast<size_t>(worker_of_[s]) != w) continue;
      for (int i = 0; i < n_; ++i) items.push_back({i * ii_ + key_[s], {i, static_cast<int>(s)}});
    }
    std::sort(items.begin(), items.end());
    for (const auto& [at, item] : items) {
      const auto [i, s] = item;
      RunItem(static_cast<size_t>(s), i);
    }
  }

  void RunItem(size_t s, int i) {
    const ManifestSegment& seg = m_.segments[s];
    for (int d : seg.depends_on) done_[static_cast<size_t>(d)].WaitFor(i + 1);
    // Its output buffers were last written for input i − in_flight: wait
    // until that input's readers are done with them.
    if (i >= in_flight_) {
      for (int r : readers_[s]) done_[static_cast<size_t>(r)].WaitFor(i - in_flight_ + 1);
    }
    const size_t slot = static_cast<size_t>(i % in_flight_);
    start_[Item(s, i)] = Clock::now();
    if (!failed_.load(std::memory_order_relaxed)) {
      try {
        Ort::IoBinding& binding = bindings_[s][slot];
        for (const auto& t : seg.inputs) {
          if (!values_.count(t.name)) binding.BindInput(t.name.c_str(), *(*inputs_)[static_cast<size_t>(i)].at(t.name));
        }
        sessions_[s].Run(run_options_, binding);
        // The model's outputs this segment makes, kept per input.
        for (const auto& t : m_.outputs) {
          if (auto v = values_.find(t.name); v != values_.end() && Produces(seg, t.name)) {
            outputs_[static_cast<size_t>(i)].emplace(t.name, ToBuffer(v->second[slot]));
          }
        }
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(error_mu_);
        if (!failed_.exchange(true)) error_ = fmt::format("segment {} ({}), input {}: {}", s, seg.file, i, e.what());
      }
    }
    end_[Item(s, i)] = Clock::now();
    done_[s].Raise(i + 1);  // also after a failure: nobody may wait forever
  }

  static bool Produces(const ManifestSegment& seg, const std::string& name) {
    return std::any_of(seg.outputs.begin(), seg.outputs.end(), [&](const ManifestTensor& t) { return t.name == name; });
  }

  const Manifest& m_;
  const int n_;
  double ii_ = 1;
  int in_flight_ = 1;
  std::vector<double> key_;
  std::vector<std::unique_ptr<ort::PinnedWorker>> workers_;
  std::vector<int> worker_of_;
  std::vector<std::vector<int>> readers_;
  std::vector<Ort::Session> sessions_;
  std::vector<std::vector<Ort::IoBinding>> bindings_;      // per segment and buffer
  std::map<std::string, std::vector<Ort::Value>> values_;  // hand-off and output tensors: in_flight buffers each
  const std::vector<std::map<std::string, const Ort::Value*>>* inputs_ = nullptr;
  std::unique_ptr<ort::Generation[]> done_;  // per segment: inputs finished
  std::vector<Clock::time_point> start_, end_;
  std::vector<std::map<std::string, Buffer>> outputs_;
  Clock::time_point t0_;
  Ort::RunOptions run_options_;
  std::atomic<bool> failed_{false};
  std::mutex error_mu_;
  std::string error_;
};

}  // namespace

Result<StreamTimes> RunStream(Ort::Env& env, const Manifest& m, const std::vector<std::string>& bytes,
                              const RunOptions& o, const std::vector<std::map<std::string, const Ort::Value*>>& inputs) {
  for (const ManifestSegment& seg : m.segments) {
    if (!seg.measured) {
      return Error(ErrorCode::kUnsupported,
                   "{}: --stream runs every segment here, but segment {} runs on '{}', which this machine does not "
                   "have; plan on PUs it has (e.g. --platform host-2core)",
                   m.path, seg.id, seg.device);
    }
  }
  if (m.requests > 1) {
    return Error(ErrorCode::kUnsupported, "{}: --stream takes a plan of one request; this one plans {}", m.path,
                 m.requests);
  }
  Stream stream(m, static_cast<int>(inputs.size()));
  try {
    HETPLAN_RETURN_IF_ERROR(stream.Prepare(env, bytes, o));
    return stream.Run(inputs);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kUnsupported, "{}: ONNX Runtime failed while preparing the stream: {}", m.path,
                 OneLine(e.what()));
  }
}

}  // namespace hetplan::deploy_internal
