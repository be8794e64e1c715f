// --sample-input (include/hetplan/cost/sample_shapes.h): the model run once
// in ONNX Runtime on the sample, every tensor of its main graph an output,
// so that the importer can take the shapes shape inference cannot compute.
#include "hetplan/cost/sample_shapes.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>
#include <onnxruntime_cxx_api.h>

#include <filesystem>
#include <map>
#include <set>

#include "hetplan/graph/dtype.h"
#include "hetplan/util/io.h"
#include "hetplan/util/sha256.h"
#include "ort/session.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

// A sample's bytes; a file that cannot be read is refused as ReadNpy refuses it.
Result<std::string> SampleBytes(const std::string& file) {
  auto bytes = ReadFile(file);
  if (!bytes.ok()) return ReadNpy(file).status();
  return bytes;
}

// The array of `s.file`, read once; refused when its sha256 is not the one
// the plan recorded.
Result<TensorData> ReadChecked(const SampleInput& s) {
  HETPLAN_ASSIGN_OR_RETURN(std::string bytes, SampleBytes(s.file));
  if (!s.sha256.empty() && Sha256Hex(bytes) != s.sha256) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: the sample input for '{}' changed since the plan was made (sha256 {} recorded); plan again with "
                 "--sample-input {}={}",
                 s.file, s.name, s.sha256.substr(0, 12), s.name, s.file);
  }
  return ParseNpy(bytes, s.file);
}

// One graph input's feed: its sample, or its --value.
Result<Ort::Value> Feed(const onnx::ValueInfoProto& in, const ImportOptions& io,
                        const std::map<std::string, TensorData>& arrays, const std::string& label) {
  if (auto a = arrays.find(in.name()); a != arrays.end()) {
    const TensorData& t = a->second;
    const int32_t want = in.type().tensor_type().elem_type();
    if (want != 0 && want != t.elem_type) {
      return Error(ErrorCode::kInvalidArgument, "{}: --sample-input {}: the array is {} but the input is {}; save it "
                   "with the input's dtype", label, in.name(), DtypeName(t.elem_type), DtypeName(want));
    }
    try {
      return ort::DataTensor(t);
    } catch (const std::exception& e) {
      return Error(ErrorCode::kInvalidArgument, "{}: --sample-input {}: {}", label, in.name(), OneLine(e.what()));
    }
  }
  auto v = io.input_values.find(in.name());
  if (v == io.input_values.end() && io.input_shapes.count(in.name())) {
    bool empty = false;
    for (int64_t d : io.input_shapes.at(in.name())) empty = empty || d == 0;
    if (empty) {  // an empty input (a KV cache's past at prefill) has its one value
      return ort::ZeroTensor(static_cast<ONNXTensorElementDataType>(in.type().tensor_type().elem_type()),
                             io.input_shapes.at(in.name()));
    }
  }
  if (v == io.input_values.end()) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: --sample-input runs the model, and graph input '{}' has no value; give it a sample "
                 "(--sample-input {}=FILE.npy) or a --value", label, in.name(), in.name());
  }
  std::vector<int64_t> shape;
  const auto& dims = in.type().tensor_type().shape().dim();
  if (auto s = io.input_shapes.find(in.name()); s != io.input_shapes.end()) {
    shape = s->second;
  } else if (dims.size() == 1) {
    shape = {static_cast<int64_t>(v->second.size())};
  } else {
    for (const auto& d : dims) shape.push_back(d.dim_value());
  }
  try {
    return ort::ValueTensor(static_cast<ONNXTensorElementDataType>(in.type().tensor_type().elem_type()), shape,
                            v->second);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInvalidArgument, "{}: --value {}: {}", label, in.name(), OneLine(e.what()));
  }
}

}  // namespace

Result<std::pair<std::string, std::string>> ParseSampleInput(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return Error(ErrorCode::kInvalidArgument, "--sample-input '{}': expected NAME=FILE.npy such as tokens=tokens.npy",
                 text);
  }
  return std::make_pair(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
}

Result<std::map<std::string, TensorData>> ReadSamples(const std::vector<SampleInput>& samples) {
  std::map<std::string, TensorData> arrays;
  for (const SampleInput& s : samples) {
    HETPLAN_ASSIGN_OR_RETURN(TensorData t, ReadChecked(s));
    arrays.emplace(s.name, std::move(t));
  }
  return arrays;
}

Status RecordSampleShapes(const std::string& model_path, const std::vector<std::pair<std::string, std::string>>& given,
                          ImportOptions* io) {
  std::map<std::string, TensorData> arrays;
  if (!given.empty()) {
    io->samples.clear();
    for (const auto& [name, file] : given) {
      if (arrays.count(name) || io->input_values.count(name)) {
        return Error(ErrorCode::kInvalidArgument, "{}: input '{}' is given {}; give it one --sample-input or one "
                     "--value", model_path, name, io->input_values.count(name) ? "a --sample-input and a --value"
                                                                                : "two --sample-input");
      }
      std::error_code ec;
      const fs::path absolute = fs::absolute(file, ec);
      HETPLAN_ASSIGN_OR_RETURN(std::string bytes, SampleBytes(file));
      HETPLAN_ASSIGN_OR_RETURN(TensorData t, ParseNpy(bytes, file));
      io->samples.push_back({name, ec ? file : absolute.lexically_normal().string(), Sha256Hex(bytes), t.elem_type,
                             t.shape});
      arrays.emplace(name, std::move(t));
    }
  }
  if (io->samples.empty()) return Status::Ok();
  if (arrays.empty()) {
    HETPLAN_ASSIGN_OR_RETURN(arrays, ReadSamples(io->samples));
  }
  for (const SampleInput& s : io->samples) {
    auto shape = io->input_shapes.find(s.name);
    if (shape != io->input_shapes.end() && shape->second != s.shape) {
      return Error(ErrorCode::kInvalidArgument, "{}: --shape {} gives [{}] but its --sample-input {} has shape [{}]; "
                   "give one of them", model_path, s.name, fmt::join(shape->second, ","), s.file,
                   fmt::join(s.shape, ","));
    }
    io->input_shapes[s.name] = s.shape;
  }
  HETPLAN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(model_path));
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    return Error(ErrorCode::kParseError, "{}: not an ONNX model (--sample-input runs it)", model_path);
  }
  std::set<std::string> initializers, known;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  for (const SampleInput& s : io->samples) {
    bool found = false;
    for (const auto& in : model.graph().input()) found = found || (in.name() == s.name && !initializers.count(s.name));
    if (!found) {
      return Error(ErrorCode::kInvalidArgument, "{}: --sample-input names '{}', which is not a graph input",
                   model_path, s.name);
    }
  }
  // Every tensor of the main graph an output (untyped: ONNX Runtime types
  // them itself, com.microsoft operators' outputs too).
  for (const auto& o : model.graph().output()) known.insert(o.name());
  for (const auto& n : model.graph().node()) {
    for (const auto& t : n.output()) {
      if (t.empty() || known.count(t)) continue;
      model.mutable_graph()->add_output()->set_name(t);
      known.insert(t);
    }
  }
  std::string exposed;
  if (!model.SerializeToString(&exposed)) return Error(ErrorCode::kInternal, "{}: cannot serialise", model_path);
  HETPLAN_ASSIGN_OR_RETURN(Ort::Env * env, ort::SharedEnv());
  std::vector<std::string> in_names, out_names;
  std::vector<Ort::Value> feeds;
  for (const auto& in : model.graph().input()) {
    if (initializers.count(in.name())) continue;
    HETPLAN_ASSIGN_OR_RETURN(Ort::Value v, Feed(in, *io, arrays, model_path));
    in_names.push_back(in.name());
    feeds.push_back(std::move(v));
  }
  for (const auto& o : model.graph().output()) out_names.push_back(o.name());
  std::vector<const char*> in_c, out_c;
  for (const auto& s : in_names) in_c.push_back(s.c_str());
  for (const auto& s : out_names) out_c.push_back(s.c_str());
  io->recorded_shapes.clear();
  try {
    const std::string folder = fs::path(model_path).parent_path().string();
    Ort::Session session(*env, exposed.data(), exposed.size(), ort::MakeSessionOptions(1, "basic", folder));
    auto outputs = session.Run(Ort::RunOptions{nullptr}, in_c.data(), feeds.data(), feeds.size(), out_c.data(),
                               out_c.size());
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (!outputs[k].IsTensor()) continue;
      auto info = outputs[k].GetTensorTypeAndShapeInfo();
      io->recorded_shapes[out_names[k]] = {static_cast<int32_t>(info.GetElementType()), info.GetShape()};
    }
  } catch (const std::exception& e) {
    return Error(ErrorCode::kUnsupported, "{}: ONNX Runtime cannot run the model on the sample input: {}", model_path,
                 OneLine(e.what()));
  }
  return Status::Ok();
}

}  // namespace hetplan
