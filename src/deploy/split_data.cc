// split's files: the sub-models' copy of external weights
// (deploy/split_internal.h), so that a sub-model of a model with external
// data keeps its large weights external, in a data file of its own beside it
// and a split folder moves as one piece; and WriteSplit.
#include <cctype>
#include <filesystem>
#include <functional>
#include <set>
#include <string>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "deploy/split_internal.h"
#include "hetplan/graph/external_data.h"
#include "hetplan/graph/graph_walk.h"
#include "hetplan/deploy/manifest.h"
#include "hetplan/util/io.h"
#include "hetplan/util/sha256.h"

namespace hetplan::deploy_internal {
namespace {

constexpr size_t kAlign = 4096;

// Calls `f` on every tensor of `g` and of its subgraphs stored as external data.
Status ForEachExternal(onnx::GraphProto* g, const std::function<Status(onnx::TensorProto*, const std::string&)>& f) {
  return ForEachStoredTensor(g, [&](onnx::TensorProto* t, const std::string& what) {
    return t->data_location() == onnx::TensorProto::EXTERNAL ? f(t, what) : Status::Ok();
  });
}

void PointAt(onnx::TensorProto* t, const std::string& file, size_t offset, size_t length) {
  t->clear_external_data();
  for (const auto& [key, value] : {std::pair<const char*, std::string>{"location", file},
                                   {"offset", std::to_string(offset)}, {"length", std::to_string(length)}}) {
    auto* kv = t->add_external_data();
    kv->set_key(key);
    kv->set_value(value);
  }
}

}  // namespace

Result<std::string> GatherExternalData(onnx::ModelProto* sub, const LoadedModel& model, const std::string& data_file) {
  std::string blob;
  HETPLAN_RETURN_IF_ERROR(ForEachExternal(sub->mutable_graph(), [&](onnx::TensorProto* t, const std::string& what) {
    HETPLAN_ASSIGN_OR_RETURN(std::string bytes, ReadExternalTensor(*t, model.external_data_dir, model.path, what));
    blob.resize((blob.size() + kAlign - 1) / kAlign * kAlign, '\0');
    PointAt(t, data_file, blob.size(), bytes.size());
    blob += bytes;
    return Status::Ok();
  }));
  return blob;
}

void DropExternalData(onnx::ModelProto* sub) {
  (void)ForEachExternal(sub->mutable_graph(), [&](onnx::TensorProto* t, const std::string&) {
    t->clear_external_data();
    t->set_data_location(onnx::TensorProto::DEFAULT);
    t->clear_dims();
    t->add_dims(0);
    return Status::Ok();
  });
}

void RenameExternalData(onnx::ModelProto* sub, const std::string& data_file) {
  (void)ForEachExternal(sub->mutable_graph(), [&](onnx::TensorProto* t, const std::string&) {
    for (auto& kv : *t->mutable_external_data()) {
      if (kv.key() == "location") kv.set_value(data_file);
    }
    return Status::Ok();
  });
}

Status CopySamples(Manifest* mf, std::vector<std::pair<std::string, std::string>>* files) {
  for (SampleInput& si : mf->assumptions.sample_inputs) {
    HETPLAN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(si.file));
    if (Sha256Hex(bytes) != si.sha256) {
      return Error(ErrorCode::kInvalidArgument, "{}: the sample input for '{}' changed since the plan was made; plan "
                   "again with --sample-input {}={}", si.file, si.name, si.name, si.file);
    }
    std::string name = "sample_";
    for (char c : si.name) name += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
    name += ".npy";
    files->emplace_back(name, std::move(bytes));
    si.file = name;
  }
  return Status::Ok();
}

}  // namespace hetplan::deploy_internal

namespace hetplan {

namespace fs = std::filesystem;

Status WriteSplit(const SplitResult& split, const std::string& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) {
    return Error(ErrorCode::kIoError, "{}: cannot create the output folder ({}); choose another --out", out_dir,
                 ec.message());
  }
  std::set<std::string> written;
  for (const auto& [name, bytes] : split.files) {
    HETPLAN_RETURN_IF_ERROR(WriteFileAtomic((fs::path(out_dir) / name).string(), bytes));
    written.insert(name);
  }
  for (const auto& [name, bytes] : split.data_files) {
    HETPLAN_RETURN_IF_ERROR(WriteFileAtomic((fs::path(out_dir) / name).string(), bytes));
    written.insert(name);
  }
  HETPLAN_RETURN_IF_ERROR(WriteManifest(split.manifest, out_dir));
  // Segment files of an earlier split would only confuse: the manifest is the truth.
  for (const auto& entry : fs::directory_iterator(out_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.starts_with("segment_") &&
        (name.ends_with(".onnx") || name.ends_with(".onnx.data")) && !written.count(name)) {
      std::error_code rm;
      fs::remove(entry.path(), rm);
    }
  }
  return Status::Ok();
}

}  // namespace hetplan
