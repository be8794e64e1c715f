// Running a split plan with ONNX Runtime (include/hetplan/deploy/run.h).
//
// Two executors share one timeline per run:
//   entry | Run(seg 0) | gap 1 | Run(seg 1) | gap 2 | ... | Run(seg k−1) | exit
// Session::Run is the segment's time; a gap is the executor's hand-off
// between two segments. The resident executor binds every tensor once
// (IoBinding over pre-allocated OrtValues, the producer's output buffer
// being the consumer's input), so a gap is a loop iteration. The
// non-resident executor creates each segment's session in its gap and
// moves tensors through std::vector buffers, as a naive runtime that loads
// sub-models on demand would.
#include "hetplan/deploy/run.h"

#include <fmt/format.h>
#include <onnxruntime_cxx_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <unordered_map>

#include <onnx/onnx_pb.h>

#include "deploy/run_internal.h"
#include "hetplan/util/clock.h"
#include "ort/session.h"
#include "hetplan/cost/sample_shapes.h"
#include "hetplan/cost/profiler.h"
#include "hetplan/deploy/manifest.h"
#include "hetplan/graph/dtype.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/util/io.h"
#include "hetplan/util/sha256.h"

namespace hetplan {
namespace deploy_internal {
namespace {

namespace fs = std::filesystem;

std::string ShapeText(const std::string& dtype, const std::vector<int64_t>& shape) {
  return fmt::format("{}[{}]", dtype, fmt::join(shape, ","));
}

std::string DtypeName(ONNXTensorElementDataType t) {
  std::string_view name = hetplan::DtypeName(static_cast<int32_t>(t));
  return name.empty() ? fmt::format("onnx-type-{}", static_cast<int>(t)) : std::string(name);
}

}  // namespace

// --- element types -------------------------------------------------------------
// ORT's element type enum has ONNX's TensorProto values (graph/dtype.h).

ONNXTensorElementDataType OrtType(const std::string& dtype) {
  return static_cast<ONNXTensorElementDataType>(DtypeFromName(dtype));
}

std::string RequestTensorKey(int request, const std::string& name) {
  return request == 0 ? name : fmt::format("{}@request{}", name, request);
}

// --- ONNX Runtime ------------------------------------------------------------------

Ort::Value NewValue(const ManifestTensor& t) { return ort::ZeroTensor(OrtType(t.dtype), t.shape); }

void CopyInto(const Ort::Value& v, Buffer& b) {
  auto info = v.GetTensorTypeAndShapeInfo();
  b.type = info.GetElementType();
  b.shape = info.GetShape();
  const size_t bytes = v.GetTensorSizeInBytes();
  b.data.resize(bytes);
  if (bytes > 0) std::memcpy(b.data.data(), v.GetTensorRawData(), bytes);
}

Buffer ToBuffer(const Ort::Value& v) {
  Buffer b;
  CopyInto(v, b);
  return b;
}

Ort::Value FromBuffer(const Buffer& b) {
  Ort::AllocatorWithDefaultOptions alloc;
  Ort::Value v = Ort::Value::CreateTensor(alloc, b.shape.data(), b.shape.size(), b.type);
  if (!b.data.empty()) std::memcpy(v.GetTensorMutableRawData(), b.data.data(), b.data.size());
  return v;
}

namespace {

// Checks a session's inputs and outputs against the manifest.
Status CheckSession(const Manifest& m, const ManifestSegment& seg, Ort::Session& session) {
  Ort::AllocatorWithDefaultOptions alloc;
  auto where = [&]() { return fmt::format("{}: segment {} ({})", m.path, seg.id, seg.file); };
  auto check = [&](const char* what, size_t count, auto name_of, auto info_of,
                   const std::vector<ManifestTensor>& want) -> Status {
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < count; ++i) index.emplace(name_of(i), i);
    for (const auto& t : want) {
      auto it = index.find(t.name);
      if (it == index.end()) {
        return Error(ErrorCode::kInvalidArgument,
                     "{}: the manifest lists {} '{}' but the file has no such {}; "
                     "the manifest and the file disagree: re-run hetplan split",
                     where(), what, t.name, what);
      }
      Ort::TypeInfo type = info_of(it->second);
      if (type.GetONNXType() != ONNX_TYPE_TENSOR) {
        return Error(ErrorCode::kUnsupported, "{}: {} '{}' is not a tensor", where(), what, t.name);
      }
      auto ti = type.GetTensorTypeAndShapeInfo();
      const std::string dtype = DtypeName(ti.GetElementType());
      std::vector<int64_t> shape = ti.GetShape();
      // A dynamic split's files leave every boundary dim unknown (-1).
      if (m.dynamic_shapes && shape.size() == t.shape.size()) shape = t.shape;
      if (dtype != t.dtype || shape != t.shape) {
        return Error(ErrorCode::kInvalidArgument,
                     "{}: {} '{}' is {} in the manifest but {} in the file; the "
                     "manifest and the file disagree: re-run hetplan split",
                     where(), what, t.name, ShapeText(t.dtype, t.shape), ShapeText(dtype, shape));
      }
      index.erase(it);
    }
    if (!index.empty()) {
      return Error(ErrorCode::kInvalidArgument,
                   "{}: the file has {} '{}' that the manifest does not list; "
                   "re-run hetplan split",
                   where(), what, index.begin()->first);
    }
    return Status::Ok();
  };
  HETPLAN_RETURN_IF_ERROR(check(
      "input", session.GetInputCount(),
      [&](size_t i) { return std::string(session.GetInputNameAllocated(i, alloc).get()); },
      [&](size_t i) { return session.GetInputTypeInfo(i); }, seg.inputs));
  return check(
      "output", session.GetOutputCount(),
      [&](size_t i) { return std::string(session.GetOutputNameAllocated(i, alloc).get()); },
      [&](size_t i) { return session.GetOutputTypeInfo(i); }, seg.outputs);
}

// Builds one pass's Timeline: Ran(s, r0, r1) right after segment s's
// Session::Run, which started at r0 and ended at r1.
class Stopwatch {
 public:
  explicit Stopwatch(size_t segments) : start_(Clock::now()), last_(start_) {
    t_.run_us.resize(segments);
    t_.gap_us.assign(segments, 0.0);
  }
  void Ran(size_t s, Clock::time_point r0, Clock::time_point r1) {
    if (s == 0) {
      t_.entry_us = Us(start_, r0);
    } else {
      t_.gap_us[s] = Us(last_, r0);
    }
    t_.run_us[s] = Us(r0, r1);
    last_ = r1;
  }
  Timeline Finish() {
    const auto end = Clock::now();
    t_.exit_us = Us(last_, end);
    t_.wall_us = Us(start_, end);
    return std::move(t_);
  }

 private:
  Timeline t_;
  Clock::time_point start_, last_;
};

// Names as C strings, kept alive with their owner. Not movable: `c` points
// into `names` (short strings live inside the std::string object).
struct Names {
  std::vector<std::string> names;
  std::vector<const char*> c;
  explicit Names(const std::vector<ManifestTensor>& ts) {
    for (const auto& t : ts) names.push_back(t.name);
    for (const auto& s : names) c.push_back(s.c_str());
  }
  Names(const Names&) = delete;
  Names& operator=(const Names&) = delete;
};

}  // namespace

// --- the two executors ---------------------------------------------------------

Result<std::string> ReadSegmentBytes(const Manifest& m, const ManifestSegment& seg) {
  HETPLAN_ASSIGN_OR_RETURN(std::string b, ReadFile(seg.path, int64_t{4} << 30));
  if (!seg.sha256.empty() && Sha256Hex(b) != seg.sha256) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: segment {} ({}) changed since it was split (SHA-256 "
                 "differs from the manifest); re-run hetplan split",
                 m.path, seg.id, seg.file);
  }
  return b;
}

Result<Ort::Session> CreateSession(Ort::Env& env, const Manifest& m, const ManifestSegment& seg,
                                   const std::string& bytes, const Ort::SessionOptions& so) {
  try {
    Ort::Session session(env, bytes.data(), bytes.size(), so);
    HETPLAN_RETURN_IF_ERROR(CheckSession(m, seg, session));
    return session;
  } catch (const std::exception& e) {
    return Error(ErrorCode::kUnsupported,
                 "{}: segment {} ({}): ONNX Runtime cannot load it: {}; re-run "
                 "hetplan split, or check that this ONNX Runtime supports the model's opset",
                 m.path, seg.id, seg.file, OneLine(e.what()));
  }
}

namespace {

class ResidentExecutor : public Executor {
 public:
  static Result<std::unique_ptr<ResidentExecutor>> Create(Ort::Env& env, const Manifest& m,
                                                          const std::vector<std::string>& bytes,
                                                          const Ort::SessionOptions& so,
                                                          const std::map<std::string, const Ort::Value*>& inputs) {
    auto x = std::unique_ptr<ResidentExecutor>(new ResidentExecutor());
    x->sessions_.reserve(m.segments.size());
    x->bindings_.reserve(m.segments.size());
    // Every tensor that crosses a segment boundary or leaves the model gets
    // one buffer, written by its producer and read in place by its consumers.
    for (const auto& seg : m.segments) {
      for (const auto& t : seg.outputs) x->values_.emplace(t.name, NewValue(t));
    }
    for (const auto& seg : m.segments) {
      HETPLAN_ASSIGN_OR_RETURN(Ort::Session session,
                               CreateSession(env, m, seg, bytes[static_cast<size_t>(seg.id)], so));
      x->sessions_.push_back(std::move(session));  // reserved: no reallocation
      Ort::IoBinding binding(x->sessions_.back());
      for (const auto& t : seg.inputs) {
        const Ort::Value* v = nullptr;
        if (auto it = x->values_.find(t.name); it != x->values_.end()) v = &it->second;
        if (auto it = inputs.find(t.name); v == nullptr && it != inputs.end()) v = it->second;
        if (v == nullptr) {
          return Error(ErrorCode::kInvalidArgument,
                       "{}: segment {} ({}): input '{}' has no producer; re-run "
                       "hetplan split",
                       m.path, seg.id, seg.file, t.name);
        }
        binding.BindInput(t.name.c_str(), *v);
      }
      for (const auto& t : seg.outputs) binding.BindOutput(t.name.c_str(), x->values_.at(t.name));
      x->bindings_.push_back(std::move(binding));
    }
    for (const auto& t : m.outputs) x->model_outputs_.push_back(t.name);
    return x;
  }

  Timeline RunOnce() override {
    Stopwatch watch(sessions_.size());
    for (size_t s = 0; s < sessions_.size(); ++s) {
      const auto r0 = Clock::now();
      sessions_[s].Run(run_options_, bindings_[s]);
      watch.Ran(s, r0, Clock::now());
    }
    return watch.Finish();
  }

  std::map<std::string, Buffer> Outputs() const override {
    std::map<std::string, Buffer> out;
    for (const auto& name : model_outputs_) out.emplace(name, ToBuffer(values_.at(name)));
    return out;
  }

 private:
  ResidentExecutor() = default;
  std::vector<Ort::Session> sessions_;
  std::vector<Ort::IoBinding> bindings_;
  std::unordered_map<std::string, Ort::Value> values_;
  std::vector<std::string> model_outputs_;
  Ort::RunOptions run_options_;
};

class LoadPerRunExecutor : public Executor {
 public:
  LoadPerRunExecutor(Ort::Env& env, const Manifest& m, const std::vector<std::string>& bytes,
                     const Ort::SessionOptions& so, const std::map<std::string, const Ort::Value*>& inputs)
      : env_(env), m_(m), bytes_(bytes), so_(so) {
    for (const auto& [name, v] : inputs) model_inputs_.emplace(name, ToBuffer(*v));
    for (const auto& seg : m.segments) {
      in_names_.emplace_back(seg.inputs);
      out_names_.emplace_back(seg.outputs);
    }
  }

  Timeline RunOnce() override {
    buffers_ = model_inputs_;  // the model inputs arrive as host buffers
    Stopwatch watch(m_.segments.size());
    for (size_t s = 0; s < m_.segments.size(); ++s) {
      const ManifestSegment& seg = m_.segments[s];
      const std::string& b = bytes_[s];
      Ort::Session session(env_, b.data(), b.size(), so_);
      std::vector<Ort::Value> in;
      in.reserve(seg.inputs.size());
      for (const auto& x : seg.inputs) in.push_back(FromBuffer(buffers_.at(x.name)));
      const auto r0 = Clock::now();
      auto out = session.Run(run_options_, in_names_[s].c.data(), in.data(), in.size(), out_names_[s].c.data(),
                             out_names_[s].c.size());
      const auto r1 = Clock::now();
      watch.Ran(s, r0, r1);
      // The copy out belongs to the hand-off that follows.
      for (size_t i = 0; i < out.size(); ++i) CopyInto(out[i], buffers_[seg.outputs[i].name]);
    }
    return watch.Finish();
  }

  std::map<std::string, Buffer> Outputs() const override {
    std::map<std::string, Buffer> out;
    for (const auto& t : m_.outputs) {
      if (auto it = buffers_.find(t.name); it != buffers_.end()) out.emplace(t.name, it->second);
    }
    return out;
  }

 private:
  Ort::Env& env_;
  const Manifest& m_;
  const std::vector<std::string>& bytes_;
  const Ort::SessionOptions& so_;
  std::map<std::string, Buffer> model_inputs_;
  std::map<std::string, Buffer> buffers_;
  std::deque<Names> in_names_, out_names_;  // a deque never moves its elements
  Ort::RunOptions run_options_;
};

// --- comparing outputs -----------------------------------------------------------

double ElementAsDouble(const Buffer& b, size_t i) {
  const uint8_t* p = b.data.data();
  switch (b.type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: {
      float v;
      std::memcpy(&v, p + 4 * i, 4);
      return v;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: {
      double v;
      std::memcpy(&v, p + 8 * i, 8);
      return v;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: {
      Ort::Float16_t v;
      std::memcpy(&v, p + 2 * i, 2);
      return v.ToFloat();
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: {
      Ort::BFloat16_t v;
      std::memcpy(&v, p + 2 * i, 2);
      return v.ToFloat();
    }
    default:
      return 0;
  }
}

// `narrowest`: the narrowest floating type the output is computed through
// when narrower than its own (ManifestTensor::narrowest_on_path): the
// default tolerance is that type's, since a split may round at a boundary
// where ONNX Runtime's whole-model run removed a Cast pair.
OutputCheck Compare(const std::string& name, const Buffer& got, const Buffer& want, const RunOptions& o,
                    const std::string& narrowest = "") {
  OutputCheck c;
  c.name = name;
  const auto elem = static_cast<int32_t>(want.type);
  c.dtype = DtypeName(want.type);
  const bool narrower = !narrowest.empty() && IsFloatingDtype(elem);
  if (narrower) c.tolerance_dtype = narrowest;
  const Tolerance def = DefaultTolerance(narrower ? DtypeFromName(narrowest) : elem);
  c.default_tolerance = !o.rtol && !o.atol;
  const double rtol = o.rtol.value_or(def.rtol), atol = o.atol.value_or(def.atol);
  c.rtol = IsFloatingDtype(elem) ? rtol : 0;
  c.atol = IsFloatingDtype(elem) ? atol : 0;
  if (got.type != want.type || got.shape != want.shape || got.data.size() != want.data.size()) {
    c.match = false;
    c.mismatches = 1;
    c.max_abs_error = std::numeric_limits<double>::infinity();
    c.max_rel_error = std::numeric_limits<double>::infinity();
    return c;
  }
  const size_t width = static_cast<size_t>(std::max<int64_t>(1, DtypeBytes(static_cast<int32_t>(want.type))));
  const size_t n = width == 0 ? 0 : want.data.size() / width;
  c.elements = static_cast<int64_t>(n);
  if (!IsFloatingDtype(static_cast<int32_t>(want.type))) {
    for (size_t i = 0; i < n; ++i) {
      if (std::memcmp(got.data.data() + i * width, want.data.data() + i * width, width) != 0) ++c.mismatches;
    }
    c.match = c.mismatches == 0;
    c.max_abs_error = c.match ? 0 : std::numeric_limits<double>::infinity();
    c.max_rel_error = c.max_abs_error;
    return c;
  }
  for (size_t i = 0; i < n; ++i) {
    const double a = ElementAsDouble(got, i), b = ElementAsDouble(want, i);
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) != std::isnan(b)) ++c.mismatches;
      continue;
    }
    const double err = std::fabs(a - b);
    c.max_abs_error = std::max(c.max_abs_error, err);
    if (b != 0) c.max_rel_error = std::max(c.max_rel_error, err / std::fabs(b));
    if (err > atol + rtol * std::fabs(b)) ++c.mismatches;
  }
  c.match = c.mismatches == 0;
  return c;
}

// --- the reference: the unsplit model --------------------------------------------

class Reference {
 public:
  // `bytes`: the model with the plan's assumed If branches pinned
  // (PinIfBranches); empty to load `path` as it is.
  static Result<std::unique_ptr<Reference>> Create(Ort::Env& env, const Manifest& m, const std::string& path,
                                                   const std::string& bytes, const Ort::SessionOptions& so) {
    auto r = std::unique_ptr<Reference>(new Reference());
    try {
      r->session_ = bytes.empty() ? Ort::Session(env, path.c_str(), so)
                                  : Ort::Session(env, bytes.data(), bytes.size(), so);
    } catch (const std::exception& e) {
      return Error(ErrorCode::kUnsupported,
                   "{}: ONNX Runtime cannot load the unsplit model {}: {}; pass another "
                   "with --model, or skip the comparison with --no-reference",
                   m.path, path, OneLine(e.what()));
    }
    for (const auto& t : m.inputs) r->in_names_.push_back(t.name);
    // The inputs the plan fixed with --value are folded into the segments;
    // the unsplit model is fed them.
    for (const auto& f : m.assumptions.fixed_inputs) r->in_names_.push_back(f.name);
    for (const auto& t : m.outputs) r->out_names_.push_back(t.name);
    for (const auto& s : r->in_names_) r->in_c_.push_back(s.c_str());
    for (const auto& s : r->out_names_) r->out_c_.push_back(s.c_str());
    return r;
  }

  // Throws Ort::Exception.
  double Run(const std::vector<Ort::Value>& in, std::map<std::string, Buffer>* keep) {
    const auto t0 = Clock::now();
    auto out = session_.Run(run_options_, in_c_.data(), in.data(), in.size(), out_c_.data(), out_c_.size());
    const auto t1 = Clock::now();
    if (keep != nullptr) {
      keep->clear();
      for (size_t i = 0; i < out.size(); ++i) keep->emplace(out_names_[i], ToBuffer(out[i]));
    }
    return Us(t0, t1);
  }

 private:
  Reference() = default;
  Ort::Session session_{nullptr};
  Ort::RunOptions run_options_;
  std::vector<std::string> in_names_, out_names_;
  std::vector<const char*> in_c_, out_c_;
};

// The unsplit model the split outputs are checked against: the manifest's
// (or --model's) file, the one that was split (SHA-256), with the plan's
// assumed If branches pinned.
Result<std::unique_ptr<Reference>> OpenReference(Ort::Env& env, const Manifest& m, const RunOptions& o, int threads,
                                                 bool as_float32) {
  std::string path = o.model_path.empty() ? m.model_file : o.model_path;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    return Error(ErrorCode::kNotFound,
                 "{}: the unsplit model {} is not found; pass it with --model, or skip "
                 "the comparison with --no-reference",
                 m.path, path);
  }
  HETPLAN_ASSIGN_OR_RETURN(std::string model_bytes, ReadFile(path, int64_t{4} << 30));
  if (!m.model_sha256.empty() && Sha256Hex(model_bytes) != m.model_sha256) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: {} is not the model that was split (SHA-256 differs); pass "
                 "the planned model with --model, or skip the comparison with --no-reference",
                 m.path, path);
  }
  // A plan that assumed If branches is compared with the unsplit model
  // taking those branches.
  std::map<std::string, bool> assumed;
  for (const auto& b : m.assumptions.branches) {
    if (b.assumed) assumed.emplace(b.node, b.then);
  }
  std::string pinned;
  if (!assumed.empty()) {
    onnx::ModelProto proto;
    if (!proto.ParseFromString(model_bytes)) {
      return Error(ErrorCode::kParseError, "{}: {} is not a valid ONNX model", m.path, path);
    }
    if (Status st = PinIfBranches(&proto, assumed); !st.ok()) {
      return Error(ErrorCode::kInvalidArgument, "{}: {}: {}; re-plan and re-split", m.path, path, st.message());
    }
    proto.SerializeToString(&pinned);
  }
  // Its external weights, if any, are beside it.
  const std::string folder = fs::absolute(fs::path(path), ec).parent_path().string();
  if (as_float32) {
    HETPLAN_ASSIGN_OR_RETURN(pinned, Float32Bytes(pinned.empty() ? model_bytes : pinned, folder, path));
  }
  const Ort::SessionOptions so = ort::MakeSessionOptions(threads, m.graph_optimization, folder);
  return Reference::Create(env, m, path, pinned, so);
}

// Every request's outputs against the unsplit model's (same inputs).
void CheckOutputs(const Manifest& m, const RunOptions& o, const std::map<std::string, Buffer>& split_outputs,
                  const std::map<std::string, Buffer>& ref_outputs, RunReport* r) {
  r->reference_checked = true;
  r->outputs_match = true;
  // Every request ran on the same inputs: each must give the unsplit outputs.
  for (int request = 0; request < m.requests; ++request) {
    for (const auto& t : m.outputs) {
      const std::string key = RequestTensorKey(request, t.name);
      auto got = split_outputs.find(key);
      auto want = ref_outputs.find(t.name);
      OutputCheck c;
      if (got == split_outputs.end() || want == ref_outputs.end()) {
        c.name = key;
        c.match = false;
        c.mismatches = 1;
      } else {
        c = Compare(key, got->second, want->second, o, t.narrowest_on_path);
      }
      r->outputs_match = r->outputs_match && c.match;
      r->outputs.push_back(std::move(c));
    }
  }
}

// One input's values from `seed`: the model's inputs (random, or the
// plan's --sample-input arrays, `samples`), then, for the unsplit model only,
// the --value inputs.
std::vector<Ort::Value> MakeInputs(const Manifest& m, uint64_t seed, const std::map<std::string, TensorData>& samples) {
  std::mt19937_64 rng(seed);
  std::vector<Ort::Value> v;
  v.reserve(m.inputs.size() + m.assumptions.fixed_inputs.size());
  for (const auto& t : m.inputs) {
    auto sample = samples.find(t.name);
    v.push_back(sample != samples.end() ? ort::DataTensor(sample->second)
                                        : ort::InputTensor(t.name, OrtType(t.dtype), t.shape, rng));
  }
  for (const auto& f : m.assumptions.fixed_inputs) {
    v.push_back(ort::ValueTensor(static_cast<ONNXTensorElementDataType>(f.elem_type), f.shape, f.values));
  }
  return v;
}

// What the segments read of MakeInputs' values: the model's inputs by name.
std::map<std::string, const Ort::Value*> SplitInputs(const Manifest& m, const std::vector<Ort::Value>& values) {
  std::map<std::string, const Ort::Value*> inputs;
  for (size_t j = 0; j < m.inputs.size(); ++j) inputs.emplace(m.inputs[j].name, &values[j]);
  return inputs;
}

// `--stream N`: N different inputs through the plan at once (RunStream),
// each input's outputs against the unsplit model's on the same input, and
// the rates beside the one-input passes and the unsplit model already timed.
Status StreamPart(Ort::Env& env, const Manifest& m, const std::vector<std::string>& bytes, const RunOptions& o,
                  Reference* ref, const std::map<std::string, TensorData>& samples, RunReport* r) {
  const int n = o.stream;
  std::vector<std::vector<Ort::Value>> values;
  std::vector<std::map<std::string, const Ort::Value*>> inputs;
  values.reserve(static_cast<size_t>(n));  // `inputs` points into it
  for (int i = 0; i < n; ++i) {
    values.push_back(MakeInputs(m, o.seed + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(i + 1), samples));
    inputs.push_back(SplitInputs(m, values.back()));
  }
  HETPLAN_ASSIGN_OR_RETURN(StreamTimes t, RunStream(env, m, bytes, o, inputs));
  StreamReport st;
  st.inputs = n;
  st.in_flight = t.in_flight;
  st.predicted_ii_us = m.schedule.initiation_interval_us;
  st.predicted_latency_us = m.schedule.makespan_us;
  st.wall_ms = t.wall_us / 1000.0;
  // Steady state: completions after the first fifth of the inputs.
  std::vector<double> done = t.last_end_us;
  std::sort(done.begin(), done.end());
  const int w = n / 5;
  st.measured_ii_us = n - 1 - w >= 1 ? (done.back() - done[static_cast<size_t>(w)]) / (n - 1 - w) : t.wall_us / n;
  st.inputs_per_s = st.measured_ii_us > 0 ? 1e6 / st.measured_ii_us : 0.0;
  std::vector<double> latency;
  for (int i = 0; i < n; ++i) latency.push_back(t.last_end_us[static_cast<size_t>(i)] - t.first_start_us[static_cast<size_t>(i)]);
  st.latency_median_us = ort::Median(latency);
  st.latency_p95_us = ort::Quantile(latency, 0.95);
  const double one = r->pu_threads ? r->pu_threads->makespan_us : r->split_wall_us;
  if (one > 0) st.one_at_a_time_per_s = 1e6 / one;
  if (r->unsplit_wall_us && *r->unsplit_wall_us > 0) st.unsplit_per_s = 1e6 / *r->unsplit_wall_us;
  const double predicted = st.predicted_ii_us.value_or(m.schedule.makespan_us);
  if (predicted > 0) st.relative_error = st.measured_ii_us / predicted - 1;
  if (ref != nullptr) {
    std::map<std::string, Buffer> want;
    for (int i = 0; i < n; ++i) {
      ref->Run(values[static_cast<size_t>(i)], &want);
      ++st.outputs_checked;
      bool ok = true;
      for (const auto& out : m.outputs) {
        auto got = t.outputs[static_cast<size_t>(i)].find(out.name);
        auto exp = want.find(out.name);
        ok = ok && got != t.outputs[static_cast<size_t>(i)].end() && exp != want.end() &&
             Compare(out.name, got->second, exp->second, o, out.narrowest_on_path).match;
      }
      st.outputs_mismatched += ok ? 0 : 1;
    }
  }
  r->stream = st;
  return Status::Ok();
}

// The options' ranges, each refused in one line.
Status CheckRunOptions(const RunOptions& o) {
  if (o.runs < 1 || o.warmup < 0) {
    return Error(ErrorCode::kInvalidArgument, "run: runs {} and warmup {}: give --runs ≥ 1 and --warmup ≥ 0", o.runs,
                 o.warmup);
  }
  if (o.stream < 0 || o.stream > 100000) {
    return Error(ErrorCode::kInvalidArgument, "run: --stream {}: give a number of inputs from 1 to 100000", o.stream);
  }
  if (o.threads < 0 || o.threads > 1024) {
    return Error(ErrorCode::kInvalidArgument, "run: threads {} is not in 0..1024", o.threads);
  }
  if ((o.rtol && !(*o.rtol >= 0)) || (o.atol && !(*o.atol >= 0))) {
    return Error(ErrorCode::kInvalidArgument, "run: --rtol {} and --atol {} must be ≥ 0", o.rtol.value_or(0),
                 o.atol.value_or(0));
  }
  return Status::Ok();
}

Result<RunReport> Run(const std::string& dir, const RunOptions& o) {
  HETPLAN_RETURN_IF_ERROR(CheckRunOptions(o));
  HETPLAN_ASSIGN_OR_RETURN(Manifest m, LoadManifest(dir));
  HETPLAN_ASSIGN_OR_RETURN(Ort::Env * env, ort::SharedEnv());
  const int threads = o.threads > 0 ? o.threads : m.threads;
  // Segments are created from bytes: their external weights are in the split folder.
  Ort::SessionOptions so = ort::MakeSessionOptions(threads, m.graph_optimization, m.dir);

  std::vector<std::string> bytes;
  for (const auto& seg : m.segments) {
    HETPLAN_ASSIGN_OR_RETURN(std::string b, ReadSegmentBytes(m, seg));
    bytes.push_back(std::move(b));
  }
  HETPLAN_ASSIGN_OR_RETURN(const std::string types_note, Float32Fallback(*env, &m, &bytes, so));

  // Inputs, made once: the same values feed the split and the unsplit model.
  // --sample-input: the plan's shapes are the sample's; it is what the model is fed.
  HETPLAN_ASSIGN_OR_RETURN(const auto samples, ReadSamples(m.assumptions.sample_inputs));
  const std::vector<Ort::Value> input_list = MakeInputs(m, o.seed, samples);
  const std::map<std::string, const Ort::Value*> inputs = SplitInputs(m, input_list);

  RunReport r;
  r.dir = dir;
  r.model = m.model_name;
  r.resident = o.resident;
  r.runs = o.runs;
  r.warmup = o.warmup;
  r.threads = threads;
  r.cpu = CpuModelName();
  r.runtime = "onnxruntime " + OnnxRuntimeVersion();
  r.types_note = types_note;
  r.rtol = o.rtol;
  r.atol = o.atol;

  // Multi-PU and two-request plans run on PU threads (pu_executor.cc).
  const bool pu_threads = o.pu_threads && o.resident && UsesPuThreads(m);
  if (m.requests > 1 && !pu_threads) {
    return Error(ErrorCode::kUnsupported,
                 "{}: a plan of {} requests runs only on the PU-thread executor, with every PU running here; "
                 "drop --no-resident and --sequential, and plan on PUs this machine has (e.g. --platform "
                 "host-2core)",
                 m.path, m.requests);
  }
  r.requests = m.requests;
  std::unique_ptr<Executor> exec;
  const auto setup0 = Clock::now();
  if (pu_threads) {
    HETPLAN_ASSIGN_OR_RETURN(exec, CreatePuThreadExecutor(*env, m, bytes, o, inputs));
  } else if (o.resident) {
    HETPLAN_ASSIGN_OR_RETURN(auto x, ResidentExecutor::Create(*env, m, bytes, so, inputs));
    exec = std::move(x);
  } else {
    // Check every file once up front: the timed loop must not fail half-way.
    for (const auto& seg : m.segments) {
      HETPLAN_ASSIGN_OR_RETURN(Ort::Session s, CreateSession(*env, m, seg, bytes[static_cast<size_t>(seg.id)], so));
      (void)s;
    }
    exec = std::make_unique<LoadPerRunExecutor>(*env, m, bytes, so, inputs);
  }
  r.setup_ms = o.resident ? Us(setup0, Clock::now()) / 1000.0 : 0.0;

  std::unique_ptr<Reference> ref;
  if (o.reference) {
    HETPLAN_ASSIGN_OR_RETURN(ref, OpenReference(*env, m, o, threads, !types_note.empty()));
  }

  std::vector<Timeline> timelines;
  std::vector<double> unsplit_us;
  std::map<std::string, Buffer> ref_outputs, split_outputs;
  try {
    for (int i = 0; i < o.warmup + o.runs; ++i) {
      Timeline t = exec->RunOnce();
      if (i == 0) split_outputs = exec->Outputs();
      if (ref) {
        double us = ref->Run(input_list, i == 0 ? &ref_outputs : nullptr);
        if (i >= o.warmup) unsplit_us.push_back(us);
      }
      if (i >= o.warmup) timelines.push_back(std::move(t));
    }
  } catch (const std::exception& e) {
    return Error(ErrorCode::kUnsupported, "{}: ONNX Runtime failed while running the segments: {}", m.path,
                 OneLine(e.what()));
  }

  SummariseRuns(m, timelines, unsplit_us, pu_threads, threads, &r);
  if (!o.costs_path.empty()) HETPLAN_RETURN_IF_ERROR(ExplainErrors(m, o.costs_path, &r));
  r.predicted_sequential_us = m.predicted_sequential_us;
  r.predicted_makespan_us = m.predicted_makespan_us;
  r.estimated_us = r.measured_host_us + r.modelled_accelerator_us + r.predicted_transfer_us + r.handoff_us;
  if (pu_threads) r.pu_threads = SummarisePuThreads(m, timelines, o.threads);

  if (ref) CheckOutputs(m, o, split_outputs, ref_outputs, &r);
  if (o.stream > 0) {
    try {
      HETPLAN_RETURN_IF_ERROR(StreamPart(*env, m, bytes, o, ref.get(), samples, &r));
    } catch (const std::exception& e) {
      return Error(ErrorCode::kUnsupported, "{}: ONNX Runtime failed while streaming: {}", m.path, OneLine(e.what()));
    }
  }
  return r;
}

}  // namespace
}  // namespace deploy_internal

Result<RunReport> RunDeployment(const std::string& dir, const RunOptions& options) {
  try {
    return deploy_internal::Run(dir, options);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, "{}: running the deployment failed: {}", dir, OneLine(e.what()));
  }
}

}  // namespace hetplan
