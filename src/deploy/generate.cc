// `hetplan run DIR --generate N` (include/hetplan/deploy/generation.h): the
// generation loop through a split generation plan.
//
// Each phase's segments are created once. A step feeds the decoder's inputs
// by role (token ids, attention mask, position ids, the past), runs the
// segments (each PU's on its own pinned thread, a segment starting when the
// segments it reads from are done, when every segment runs here; else one
// after another, modelled PUs emulated on the CPU), and hands the presents
// back as the next step's past without a copy. The next token is the argmax
// of the last position's logits.
#include <onnxruntime_cxx_api.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hetplan/deploy/generation.h"
#include "hetplan/deploy/manifest.h"
#include "hetplan/util/clock.h"
#include "hetplan/util/io.h"
#include "hetplan/util/sha256.h"
#include "deploy/generation_internal.h"
#include "deploy/run_internal.h"
#include "ort/pinning.h"
#include "ort/session.h"

namespace hetplan {
namespace deploy_internal {
namespace {

namespace fs = std::filesystem;

// The inputs of one step, by the decoder's roles. `dtype_of` gives an
// input's element type; the past comes from `past` (moved from), or is
// empty (`empty_past`: each past input's zero-length tensor).
class StepInputs {
 public:
  explicit StepInputs(const GenerationIndex& x) : x_(x) {}

  // Fills `out` for the inputs `dtype_of` names (and types): `ids` the new
  // tokens after `past` tokens.
  Status Make(const std::map<std::string, ONNXTensorElementDataType>& dtype_of, const std::vector<int64_t>& ids,
              int64_t past, std::map<std::string, Ort::Value>* pasts, std::map<std::string, Ort::Value>* out,
              const std::string& where) const {
    const int64_t n = static_cast<int64_t>(ids.size());
    for (const auto& [name, type] : dtype_of) {
      if (name == x_.tokens) {
        out->emplace(name, Ints(type, {1, n}, [&](int64_t i) { return ids[static_cast<size_t>(i)]; }));
      } else if (name == x_.mask) {
        out->emplace(name, Ints(type, {1, past + n}, [](int64_t) { return int64_t{1}; }));
      } else if (name == x_.positions) {
        out->emplace(name, Ints(type, {1, n}, [&](int64_t i) { return past + i; }));
      } else if (auto it = pasts->find(name); it != pasts->end()) {
        out->emplace(name, std::move(it->second));
        pasts->erase(it);
      } else {
        return Error(ErrorCode::kUnsupported, "{}: input '{}' is none the generation loop feeds (token ids, "
                     "attention mask, position ids, the past)", where, name);
      }
    }
    return Status::Ok();
  }

 private:
  template <typename F>
  static Ort::Value Ints(ONNXTensorElementDataType type, const std::vector<int64_t>& shape, F value) {
    Ort::Value v = ort::ZeroTensor(type, shape);
    const int64_t count = shape[0] * shape[1];
    if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32) {
      auto* p = v.GetTensorMutableData<int32_t>();
      for (int64_t i = 0; i < count; ++i) p[i] = static_cast<int32_t>(value(i));
    } else {
      auto* p = v.GetTensorMutableData<int64_t>();
      for (int64_t i = 0; i < count; ++i) p[i] = value(i);
    }
    return v;
  }
  const GenerationIndex& x_;
};

// The index of the largest of `count` values of type T from `p` (ONNX
// Runtime's float16 and bfloat16 by their own conversions).
template <typename T>
int64_t ArgmaxOf(const T* p, int64_t count) {
  const auto as_float = [](const T& v) -> float {
    if constexpr (std::is_same_v<T, float>) {
      return v;
    } else {
      return v.ToFloat();
    }
  };
  int64_t best = 0;
  float top = as_float(p[0]);
  for (int64_t i = 1; i < count; ++i) {
    if (const float v = as_float(p[i]); v > top) top = v, best = i;
  }
  return best;
}

// The greedy token: argmax of the last position's logits [1, sequence, vocabulary].
Result<int64_t> Argmax(const Ort::Value& logits, const std::string& where) {
  const auto info = logits.GetTensorTypeAndShapeInfo();
  const std::vector<int64_t> shape = info.GetShape();
  if (shape.size() != 3 || shape[1] < 1 || shape[2] < 1) {
    return Error(ErrorCode::kUnsupported, "{}: logits of rank {} (want [batch, sequence, vocabulary])", where,
                 shape.size());
  }
  const int64_t vocab = shape[2], base = (shape[1] - 1) * vocab;
  switch (info.GetElementType()) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return ArgmaxOf(logits.GetTensorData<float>() + base, vocab);
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
      return ArgmaxOf(logits.GetTensorData<Ort::Float16_t>() + base, vocab);
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16:
      return ArgmaxOf(logits.GetTensorData<Ort::BFloat16_t>() + base, vocab);
    default: return Error(ErrorCode::kUnsupported, "{}: logits are not floating point", where);
  }
}

// Session::Run through the C API: inputs by pointer (no copy), outputs
// allocated by ONNX Runtime.
std::vector<Ort::Value> RunSession(Ort::Session& session, const std::vector<const char*>& in_names,
                                   const std::vector<const OrtValue*>& in, const std::vector<const char*>& out_names) {
  std::vector<OrtValue*> out(out_names.size(), nullptr);
  Ort::ThrowOnError(Ort::GetApi().Run(session, nullptr, in_names.data(), in.data(), in.size(), out_names.data(),
                                      out_names.size(), out.data()));
  std::vector<Ort::Value> values;
  values.reserve(out.size());
  for (OrtValue* v : out) values.emplace_back(v);
  return values;
}

// What runs one step: a phase's segments, or the unsplit model.
class Stepper {
 public:
  virtual ~Stepper() = default;
  // The model inputs it reads and their element types.
  virtual const std::map<std::string, ONNXTensorElementDataType>& inputs() const = 0;
  // One step: the model's outputs into `out`; µs. Throws on ORT's errors.
  virtual double Step(const std::map<std::string, Ort::Value>& inputs, std::map<std::string, Ort::Value>* out) = 0;
};

// One phase's segments, created once and run once per step.
class Phase : public Stepper {
 public:
  static Result<std::unique_ptr<Phase>> Open(Ort::Env& env, Manifest m, bool pu_threads) {
    auto p = std::unique_ptr<Phase>(new Phase());
    p->m_ = std::move(m);
    const Manifest& mf = p->m_;
    if (!mf.dynamic_shapes) {
      return Error(ErrorCode::kInvalidArgument, "{}: not a split that runs at every past length; re-run hetplan "
                   "split on the generation file", mf.path);
    }
    p->measured_ = std::all_of(mf.segments.begin(), mf.segments.end(), [](const auto& s) { return s.measured; });
    std::vector<Ort::SessionOptions> options;
    std::vector<int> worker_of;
    const std::vector<std::string> used = UsedDevices(mf, &worker_of);
    if (pu_threads && p->measured_) {
      HETPLAN_RETURN_IF_ERROR(StartPuWorkers(mf, used, 0, &p->workers_, &options));
    } else {
      options.push_back(ort::MakeSessionOptions(mf.threads, mf.graph_optimization, mf.dir));
    }
    std::map<std::string, std::pair<int, int>> produced;  // tensor → (segment, output index)
    p->segments_of_.resize(p->workers_.empty() ? 1 : p->workers_.size());
    for (const ManifestSegment& seg : mf.segments) {
      HETPLAN_ASSIGN_OR_RETURN(std::string bytes, ReadSegmentBytes(mf, seg));
      const size_t w = p->workers_.empty() ? 0 : static_cast<size_t>(worker_of[static_cast<size_t>(seg.id)]);
      Result<Ort::Session> session = Status(ErrorCode::kInternal, "not created");
      auto create = [&] { session = CreateSession(env, mf, seg, bytes, options[p->workers_.empty() ? 0 : w]); };
      if (p->workers_.empty()) {
        create();
      } else {
        p->workers_[w]->Call(create);  // ORT's pool threads inherit the PU thread's pinning
      }
      if (!session.ok()) return session.status();
      p->sessions_.push_back(std::move(session).value());
      p->segments_of_[w].push_back(seg.id);
      Slot slot;
      for (const auto& t : seg.inputs) {
        slot.in_names.push_back(t.name);
        auto it = produced.find(t.name);
        slot.from.push_back(it == produced.end() ? std::make_pair(-1, -1) : it->second);
      }
      for (size_t k = 0; k < seg.outputs.size(); ++k) {
        slot.out_names.push_back(seg.outputs[k].name);
        produced[seg.outputs[k].name] = {seg.id, static_cast<int>(k)};
      }
      p->slots_.push_back(std::move(slot));
    }
    for (auto& s : p->slots_) {
      for (const auto& n : s.in_names) s.in_c.push_back(n.c_str());
      for (const auto& n : s.out_names) s.out_c.push_back(n.c_str());
    }
    for (const auto& t : mf.inputs) p->input_types_.emplace(t.name, OrtType(t.dtype));
    for (const auto& t : mf.outputs) p->outputs_.emplace_back(t.name, produced.at(t.name));
    p->done_ = std::make_unique<ort::Generation[]>(mf.segments.size());
    p->start_.resize(mf.segments.size());
    p->end_.resize(mf.segments.size());
    return p;
  }

  const Manifest& manifest() const { return m_; }
  bool measured() const { return measured_; }
  bool threaded() const { return !workers_.empty(); }
  const std::map<std::string, ONNXTensorElementDataType>& inputs() const override { return input_types_; }

  // The time from the first segment's start to the last one's end.
  double Step(const std::map<std::string, Ort::Value>& inputs, std::map<std::string, Ort::Value>* out) override {
    inputs_ = &inputs;
    const int64_t pass = ++pass_;
    failed_ = false;
    if (workers_.empty()) {
      for (size_t s = 0; s < slots_.size(); ++s) RunSegment(s);
    } else {
      for (size_t w = 0; w < workers_.size(); ++w) {
        workers_[w]->Post([this, w, pass] {
          for (int s : segments_of_[w]) {
            for (int d : m_.segments[static_cast<size_t>(s)].depends_on) done_[static_cast<size_t>(d)].WaitFor(pass);
            if (!failed_.load()) RunSegment(static_cast<size_t>(s));
            done_[static_cast<size_t>(s)].Raise(pass);
          }
        });
      }
      for (auto& w : workers_) w->Drain();
    }
    if (failed_.load()) throw std::runtime_error(error_);
    for (const auto& [name, from] : outputs_) {
      (*out)[name] = std::move(slots_[static_cast<size_t>(from.first)].values[static_cast<size_t>(from.second)]);
    }
    const auto first = *std::min_element(start_.begin(), start_.end());
    const auto last = *std::max_element(end_.begin(), end_.end());
    return Us(first, last);
  }

 private:
  struct Slot {
    std::vector<std::string> in_names, out_names;
    std::vector<const char*> in_c, out_c;
    std::vector<std::pair<int, int>> from;  // per input: (segment, output), (-1, -1) for a model input
    std::vector<Ort::Value> values;         // this step's outputs
  };
  Phase() = default;

  void RunSegment(size_t s) {
    Slot& slot = slots_[s];
    std::vector<const OrtValue*> in;
    in.reserve(slot.from.size());
    for (size_t k = 0; k < slot.from.size(); ++k) {
      const auto [seg, idx] = slot.from[k];
      const Ort::Value& v = seg < 0 ? inputs_->at(slot.in_names[k])
                                    : slots_[static_cast<size_t>(seg)].values[static_cast<size_t>(idx)];
      in.push_back(v);
    }
    start_[s] = Clock::now();
    try {
      slot.values = RunSession(sessions_[s], slot.in_c, in, slot.out_c);
    } catch (const std::exception& e) {
      if (!failed_.exchange(true)) error_ = fmt::format("segment {} ({}): {}", s, m_.segments[s].file, e.what());
    }
    end_[s] = Clock::now();
  }

  Manifest m_;
  bool measured_ = true;
  std::vector<std::unique_ptr<ort::PinnedWorker>> workers_;
  std::vector<std::vector<int>> segments_of_;  // per worker (one list when sequential)
  std::vector<Ort::Session> sessions_;
  std::vector<Slot> slots_;
  std::map<std::string, ONNXTensorElementDataType> input_types_;
  std::vector<std::pair<std::string, std::pair<int, int>>> outputs_;  // model output → (segment, output)
  const std::map<std::string, Ort::Value>* inputs_ = nullptr;
  std::unique_ptr<ort::Generation[]> done_;
  std::vector<Clock::time_point> start_, end_;
  int64_t pass_ = 0;
  std::atomic<bool> failed_{false};
  std::string error_;
};

// The unsplit model, from its file (external weights beside it).
class Unsplit : public Stepper {
 public:
  static Result<std::unique_ptr<Unsplit>> Open(Ort::Env& env, const GenerationIndex& x, const Manifest& m,
                                               const std::string& path) {
    HETPLAN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path, int64_t{4} << 30));
    if (!x.model_sha256.empty() && Sha256Hex(bytes) != x.model_sha256) {
      return Error(ErrorCode::kInvalidArgument, "{}: {} is not the model that was split (SHA-256 differs); pass the "
                   "planned model with --model, or skip the comparison with --no-reference", x.path, path);
    }
    auto u = std::unique_ptr<Unsplit>(new Unsplit());
    std::error_code ec;
    const std::string folder = fs::absolute(fs::path(path), ec).parent_path().string();
    try {
      u->session_ = Ort::Session(env, bytes.data(), bytes.size(),
                                 ort::MakeSessionOptions(m.threads, m.graph_optimization, folder));
      Ort::AllocatorWithDefaultOptions alloc;
      for (size_t i = 0; i < u->session_.GetInputCount(); ++i) {
        u->types_.emplace(u->session_.GetInputNameAllocated(i, alloc).get(),
                          u->session_.GetInputTypeInfo(i).GetTensorTypeAndShapeInfo().GetElementType());
      }
      for (size_t i = 0; i < u->session_.GetOutputCount(); ++i) {
        u->out_names_.emplace_back(u->session_.GetOutputNameAllocated(i, alloc).get());
      }
    } catch (const std::exception& e) {
      return Error(ErrorCode::kUnsupported, "{}: ONNX Runtime cannot load the unsplit model {}: {}", x.path, path,
                   OneLine(e.what()));
    }
    for (const auto& [name, type] : u->types_) u->in_names_.push_back(name);
    for (const auto& n : u->in_names_) u->in_c_.push_back(n.c_str());
    for (const auto& n : u->out_names_) u->out_c_.push_back(n.c_str());
    return u;
  }
  const std::map<std::string, ONNXTensorElementDataType>& inputs() const override { return types_; }
  double Step(const std::map<std::string, Ort::Value>& inputs, std::map<std::string, Ort::Value>* out) override {
    std::vector<const OrtValue*> in;
    for (const auto& n : in_names_) in.push_back(inputs.at(n));
    const auto t0 = Clock::now();
    std::vector<Ort::Value> values = RunSession(session_, in_c_, in, out_c_);
    const double us = Us(t0, Clock::now());
    for (size_t i = 0; i < values.size(); ++i) (*out)[out_names_[i]] = std::move(values[i]);
    return us;
  }

 private:
  Unsplit() = default;
  Ort::Session session_{nullptr};
  std::map<std::string, ONNXTensorElementDataType> types_;
  std::vector<std::string> in_names_, out_names_;
  std::vector<const char*> in_c_, out_c_;
};

struct Generated {
  std::vector<int64_t> tokens;
  double ttft_us = 0;
  std::vector<double> tpot_us;
};

// The loop: the prefill on the prompt, then `n` decode steps, each fed the
// previous token and the presents as its past.
Result<Generated> Generate(Stepper& prefill, Stepper& decode, const GenerationIndex& x, const std::vector<int64_t>& prompt,
                           int64_t n) {
  const StepInputs make(x);
  Generated g;
  std::map<std::string, Ort::Value> pasts, in, out;
  for (const auto& [name, shape] : x.empty_past) {
    pasts.emplace(name, ort::ZeroTensor(static_cast<ONNXTensorElementDataType>(x.kv_elem_type), shape));
  }
  const int64_t p = static_cast<int64_t>(prompt.size());
  int64_t token = 0;
  for (int64_t step = 0; step <= n; ++step) {
    in.clear();
    out.clear();
    Stepper& s = step == 0 ? prefill : decode;
    const std::vector<int64_t> ids = step == 0 ? prompt : std::vector<int64_t>{token};
    HETPLAN_RETURN_IF_ERROR(make.Make(s.inputs(), ids, step == 0 ? 0 : p + step - 1, &pasts, &in, x.path));
    const double us = s.Step(in, &out);
    (step == 0 ? g.ttft_us : g.tpot_us.emplace_back()) = us;
    auto logits = out.find(x.logits);
    if (logits == out.end()) return Error(ErrorCode::kInternal, "{}: no '{}' output", x.path, x.logits);
    HETPLAN_ASSIGN_OR_RETURN(token, Argmax(logits->second, x.path));
    g.tokens.push_back(token);
    pasts.clear();
    for (auto& [name, v] : out) {
      if (auto it = x.past_of_present.find(name); it != x.past_of_present.end()) pasts.emplace(it->second, std::move(v));
    }
  }
  return g;
}

// The plan's TPOT at decode step i (0-based): its own steps, linear beyond them.
double PlannedTpot(const GenerationIndex& x, int64_t i) {
  const int64_t k = static_cast<int64_t>(x.tpot_us.size());
  if (i < k) return x.tpot_us[static_cast<size_t>(i)];
  const double slope = k > 1 ? (x.tpot_us.back() - x.tpot_us.front()) / static_cast<double>(k - 1) : 0.0;
  return x.tpot_us.back() + slope * static_cast<double>(i - k + 1);
}

using ort::Median;

void Summarise(const GenerationIndex& x, const std::vector<Generated>& runs, const std::vector<Generated>& unsplit,
               GenerateReport* r) {
  std::vector<double> ttft, decode, all, first, last, ref_decode;
  for (const Generated& g : runs) {
    ttft.push_back(g.ttft_us);
    double sum = 0;
    for (double t : g.tpot_us) sum += t, all.push_back(t);
    decode.push_back(sum);
    first.push_back(g.tpot_us.front());
    last.push_back(g.tpot_us.back());
  }
  const double n = static_cast<double>(r->new_tokens);
  r->ttft_us = Median(ttft);
  r->decode_us = Median(decode);
  r->request_us = r->ttft_us + r->decode_us;
  r->tokens_per_s = n / r->decode_us * 1e6;
  r->tpot_median_us = Median(all);
  r->tpot_p95_us = ort::Quantile(all, 0.95);
  r->tpot_first_us = Median(first);
  r->tpot_last_us = Median(last);
  r->predicted_ttft_us = x.ttft_us;
  for (int64_t i = 0; i < r->new_tokens; ++i) r->predicted_decode_us += PlannedTpot(x, i);
  double planned_decode = 0;
  for (double t : x.tpot_us) planned_decode += t;
  r->predicted_tokens_per_s = n / r->predicted_decode_us * 1e6;
  // Times of PUs emulated on the CPU are not the plan's to compare.
  if (r->measured) r->tokens_per_s_error = r->tokens_per_s / r->predicted_tokens_per_s - 1.0;
  if (unsplit.empty()) return;
  std::vector<double> ref_ttft;
  for (const Generated& g : unsplit) {
    ref_ttft.push_back(g.ttft_us);
    double sum = 0;
    for (double t : g.tpot_us) sum += t;
    ref_decode.push_back(sum);
  }
  r->unsplit_ttft_us = Median(ref_ttft);
  r->unsplit_decode_us = Median(ref_decode);
  if (x.unsplit_decode_us > 0 && r->tokens_per_s_error) {
    // Scaled to the run's steps when they are not the plan's.
    r->predicted_unsplit_decode_us = x.unsplit_decode_us * r->predicted_decode_us / planned_decode;
    r->drift = *r->unsplit_decode_us / *r->predicted_unsplit_decode_us - 1.0;
    r->tokens_per_s_error_after_drift = (1.0 + *r->tokens_per_s_error) * (1.0 + *r->drift) - 1.0;
  }
}

Result<GenerateReport> RunLoop(const std::string& dir, const GenerateOptions& o) {
  if (o.new_tokens < 1 || o.repeats < 1 || o.warmup < 0) {
    return Error(ErrorCode::kInvalidArgument, "run: --generate {}, --runs {}, --warmup {}: give --generate ≥ 1, "
                 "--runs ≥ 1 and --warmup ≥ 0", o.new_tokens, o.repeats, o.warmup);
  }
  HETPLAN_ASSIGN_OR_RETURN(const GenerationIndex x, ReadGenerationIndex(dir));
  if (x.embeddings) {
    return Error(ErrorCode::kUnsupported, "{}: the decoder takes embeddings ('{}'), not token ids; --generate feeds "
                 "token ids", x.path, x.tokens);
  }
  if (x.max_positions && x.prompt + o.new_tokens > *x.max_positions) {
    return Error(ErrorCode::kInvalidArgument, "{}: a prompt of {} and {} new tokens need {} positions but the model "
                 "holds {}; give --generate ≤ {}", x.path, x.prompt, o.new_tokens, x.prompt + o.new_tokens,
                 *x.max_positions, *x.max_positions - x.prompt);
  }
  HETPLAN_ASSIGN_OR_RETURN(Manifest pm, LoadManifest((fs::path(dir) / "prefill").string()));
  HETPLAN_ASSIGN_OR_RETURN(Manifest dm, LoadManifest((fs::path(dir) / "decode").string()));
  HETPLAN_ASSIGN_OR_RETURN(Ort::Env * env, ort::SharedEnv());
  HETPLAN_ASSIGN_OR_RETURN(auto prefill, Phase::Open(*env, pm, o.pu_threads));
  HETPLAN_ASSIGN_OR_RETURN(auto decode, Phase::Open(*env, dm, o.pu_threads));
  std::unique_ptr<Unsplit> unsplit;
  if (o.reference) {
    const std::string path = o.model_path.empty() ? x.model_file : o.model_path;
    HETPLAN_ASSIGN_OR_RETURN(unsplit, Unsplit::Open(*env, x, pm, path));
  }
  const int64_t vocab = Vocabulary(x, pm);
  if (vocab < 1) return Error(ErrorCode::kInvalidArgument, "{}: the logits' vocabulary is unknown", pm.path);

  GenerateReport r;
  r.dir = dir;
  r.model = pm.model_name;
  r.prompt = x.prompt;
  r.new_tokens = o.new_tokens;
  r.vocabulary = vocab;
  r.repeats = o.repeats;
  r.warmup = o.warmup;
  r.measured = prefill->measured() && decode->measured();
  r.executor = prefill->threaded() || decode->threaded() ? "PU-thread" : "sequential";
  std::mt19937_64 rng(o.seed);
  std::uniform_int_distribution<int64_t> id(0, vocab - 1);
  for (int64_t i = 0; i < x.prompt; ++i) r.prompt_ids.push_back(id(rng));

  std::vector<Generated> runs, refs;
  try {
    for (int i = 0; i < o.warmup + o.repeats; ++i) {
      HETPLAN_ASSIGN_OR_RETURN(Generated g, Generate(*prefill, *decode, x, r.prompt_ids, o.new_tokens));
      if (!r.tokens.empty() && g.tokens != r.tokens) {
        r.notes.push_back(fmt::format("generation {} gave other tokens than the first", i + 1));
      }
      if (r.tokens.empty()) r.tokens = g.tokens;
      if (i >= o.warmup) runs.push_back(std::move(g));
      if (unsplit) {
        HETPLAN_ASSIGN_OR_RETURN(Generated u, Generate(*unsplit, *unsplit, x, r.prompt_ids, o.new_tokens));
        if (r.reference_tokens.empty()) r.reference_tokens = u.tokens;
        if (i >= o.warmup) refs.push_back(std::move(u));
      }
    }
  } catch (const std::exception& e) {
    return Error(ErrorCode::kUnsupported, "{}: ONNX Runtime failed in the generation loop: {}", dir, OneLine(e.what()));
  }
  if (unsplit) {
    r.tokens_equal = r.tokens == r.reference_tokens;
    for (size_t i = 0; i < r.tokens.size() && r.first_mismatch < 0; ++i) {
      if (r.tokens[i] != r.reference_tokens[i]) r.first_mismatch = static_cast<int>(i);
    }
  }
  Summarise(x, runs, refs, &r);
  if (!r.measured) {
    r.notes.push_back("the plan uses PUs this machine lacks: their segments ran on the CPU to carry the tokens, so "
                      "the times are not the plan's to compare");
  }
  if (o.new_tokens != x.planned_new) {
    r.notes.push_back(fmt::format("planned for {} new tokens, run for {}: the prediction extends the plan's TPOT "
                                  "linearly", x.planned_new, o.new_tokens));
  }
  return r;
}

}  // namespace
}  // namespace deploy_internal

Result<GenerateReport> RunGeneration(const std::string& dir, const GenerateOptions& options) {
  try {
    return deploy_internal::RunLoop(dir, options);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, "{}: the generation loop failed: {}", dir, OneLine(e.what()));
  }
}

nlohmann::json GenerateReportToJson(const GenerateReport& r) {
  const auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  nlohmann::json j = {{"format", "hetplan-generation-run"},
                      {"version", 1},
                      {"dir", r.dir},
                      {"model", r.model},
                      {"prompt", r.prompt},
                      {"new_tokens", r.new_tokens},
                      {"repeats", r.repeats},
                      {"warmup", r.warmup},
                      {"timing", r.measured ? "measured" : "functional"},
                      {"executor", r.executor},
                      {"prompt_ids", r.prompt_ids},
                      {"tokens", r.tokens},
                      {"measured",
                       {{"ttft_us", r.ttft_us},
                        {"tpot_median_us", r.tpot_median_us},
                        {"tpot_p95_us", r.tpot_p95_us},
                        {"tpot_first_us", r.tpot_first_us},
                        {"tpot_last_us", r.tpot_last_us},
                        {"decode_us", r.decode_us},
                        {"request_us", r.request_us},
                        {"tokens_per_s", r.tokens_per_s}}},
                      {"predicted",
                       {{"ttft_us", r.predicted_ttft_us},
                        {"decode_us", r.predicted_decode_us},
                        {"tokens_per_s", r.predicted_tokens_per_s}}},
                      {"tokens_per_s_error", opt(r.tokens_per_s_error)},
                      {"notes", r.notes}};
  if (r.tokens_equal) {
    j["reference"] = {{"tokens", r.reference_tokens},
                      {"tokens_equal", *r.tokens_equal},
                      {"first_mismatch", r.first_mismatch},
                      {"ttft_us", opt(r.unsplit_ttft_us)},
                      {"decode_us", opt(r.unsplit_decode_us)},
                      {"predicted_decode_us", opt(r.predicted_unsplit_decode_us)},
                      {"drift", opt(r.drift)},
                      {"tokens_per_s_error_after_drift", opt(r.tokens_per_s_error_after_drift)}};
  }
  return j;
}

}  // namespace hetplan
