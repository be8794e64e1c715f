// bfloat16 plans on a CPU without bfloat16 kernels (deploy/run_internal.h):
// the segments and the unsplit model run as float32 copies, and the report
// says so.
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "deploy/run_internal.h"
#include "hetplan/cost/profiler.h"
#include "hetplan/graph/float32_copy.h"

namespace hetplan::deploy_internal {
namespace {

void ToFloat32(ManifestTensor* t) {
  if (t->dtype == "bfloat16") {
    t->dtype = "float32";
    t->bytes *= 2;
  }
}

}  // namespace

Result<std::string> Float32Bytes(const std::string& bytes, const std::string& external_data_dir,
                                 const std::string& label) {
  onnx::ModelProto proto;
  if (!proto.ParseFromString(bytes)) {
    return Error(ErrorCode::kParseError, "{}: not a valid ONNX model", label);
  }
  HETPLAN_RETURN_IF_ERROR(Bfloat16ToFloat32(&proto, external_data_dir, label).status());
  std::string out;
  if (!proto.SerializeToString(&out)) {
    return Error(ErrorCode::kLimitExceeded, "{}: its float32 copy cannot be serialised (over 2 GiB?)", label);
  }
  return out;
}

Result<std::string> Float32Fallback(Ort::Env& env, Manifest* m, std::vector<std::string>* bytes,
                                    const Ort::SessionOptions& so) {
  // Each segment with a bfloat16 in it (at its boundary or inside: a Cast to
  // bfloat16) converted once; ONNX Runtime asked about them until it refuses one.
  std::vector<std::optional<std::string>> converted(m->segments.size());
  std::string missing;  // its refusal of the first segment it has no kernel for
  for (size_t s = 0; s < m->segments.size(); ++s) {
    onnx::ModelProto proto;
    if (!proto.ParseFromString((*bytes)[s])) continue;  // CreateSession says what is wrong with it
    HETPLAN_ASSIGN_OR_RETURN(bool narrow, Bfloat16ToFloat32(&proto, m->dir, m->segments[s].path));
    if (!narrow) continue;
    converted[s].emplace();
    if (!proto.SerializeToString(&*converted[s])) {
      return Error(ErrorCode::kLimitExceeded, "{}: its float32 copy cannot be serialised (over 2 GiB?)",
                   m->segments[s].path);
    }
    if (!missing.empty()) continue;
    try {
      Ort::Session probe(env, (*bytes)[s].data(), (*bytes)[s].size(), so);
    } catch (const std::exception& e) {
      if (IsMissingKernel(e.what())) missing = OneLine(e.what());
    }
  }
  if (missing.empty()) return std::string();
  for (size_t s = 0; s < m->segments.size(); ++s) {
    if (converted[s]) (*bytes)[s] = std::move(*converted[s]);
    ManifestSegment& seg = m->segments[s];
    for (auto* list : {&seg.inputs, &seg.outputs}) {
      for (auto& t : *list) ToFloat32(&t);
    }
  }
  for (auto* list : {&m->inputs, &m->outputs}) {
    for (auto& t : *list) ToFloat32(&t);
  }
  return fmt::format("every segment and the unsplit model ran as float32 copies: ONNX Runtime {} has no CPU kernel "
                     "for the model's bfloat16 ({})",
                     OnnxRuntimeVersion(), missing);
}

}  // namespace hetplan::deploy_internal
