// The deployment manifest's format (include/hetplan/deploy/manifest.h): the
// JSON `hetplan split` writes and `hetplan run` reads back.
#include "hetplan/deploy/manifest.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "hetplan/graph/dtype.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/util/io.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

std::string ShapeText(const std::string& dtype, const std::vector<int64_t>& shape) {
  return fmt::format("{}[{}]", dtype, fmt::join(shape, ","));
}

// Keys that only describe the plan: their value when present with the
// expected type, else `fallback`. Never an error.
int64_t IntOr(const nlohmann::json& j, const char* key, int64_t fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}
double NumOr(const nlohmann::json& j, const char* key, double fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}
bool BoolOr(const nlohmann::json& j, const char* key, bool fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}
std::string StrOr(const nlohmann::json& j, const char* key, const std::string& fallback = "") {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

class JsonReader {
 public:
  explicit JsonReader(std::string label) : label_(std::move(label)) {}
  Status Bad(const std::string& where, const std::string& what) const {
    return Error(ErrorCode::kParseError, "{}: {}: {}; re-run hetplan split to write it again", label_, where, what);
  }
  Result<std::string> Str(const nlohmann::json& j, const char* key, const std::string& where) const {
    if (!j.is_object() || !j.contains(key) || !j[key].is_string())
      return Bad(where + "." + key, "missing or not a string");
    return j[key].get<std::string>();
  }
  Result<double> Num(const nlohmann::json& j, const char* key, const std::string& where) const {
    if (!j.is_object() || !j.contains(key) || !j[key].is_number())
      return Bad(where + "." + key, "missing or not a number");
    return j[key].get<double>();
  }
  Result<ManifestTensor> Tensor(const nlohmann::json& j, const std::string& where) const {
    ManifestTensor t;
    HETPLAN_ASSIGN_OR_RETURN(t.name, Str(j, "name", where));
    HETPLAN_ASSIGN_OR_RETURN(t.dtype, Str(j, "dtype", where));
    if (DtypeFromName(t.dtype) == 0) return Bad(where + ".dtype", fmt::format("'{}' is not a known dtype", t.dtype));
    if (!j.contains("shape") || !j["shape"].is_array()) return Bad(where + ".shape", "missing");
    for (const auto& d : j["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) return Bad(where + ".shape", "not a list of sizes ≥ 0");
      t.shape.push_back(d.get<int64_t>());
    }
    if (j.contains("from") && j["from"].is_number_integer()) t.from = j["from"].get<int>();
    if (j.contains("to") && j["to"].is_array()) {
      for (const auto& s : j["to"]) {
        if (s.is_number_integer()) t.to.push_back(s.get<int>());
      }
    }
    t.model_output = j.value("model_output", false);
    t.bytes = IntOr(j, "bytes", 0);
    t.segment = static_cast<int>(IntOr(j, "segment", -1));
    if (j.contains("narrowest_on_path")) {
      const auto& n = j["narrowest_on_path"];
      if (!n.is_string() || !IsFloatingDtype(DtypeFromName(n.get<std::string>()))) {
        return Bad(where + ".narrowest_on_path", "not a floating type name such as float16");
      }
      t.narrowest_on_path = n.get<std::string>();
    }
    return t;
  }

 private:
  std::string label_;
};

nlohmann::json TensorJson(const ManifestTensor& t) {
  return {{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}, {"bytes", t.bytes}};
}

std::string Timing(bool measured) { return measured ? "measured" : "modelled"; }

// Every input of `request`'s segments comes from the model or an earlier
// segment of that request and agrees with what its producer writes; every
// model output is written by one of them.
Status CheckDataFlow(const Manifest& m, int request) {
  const std::string& path = m.path;
  std::map<std::string, std::pair<int, const ManifestTensor*>> produced;
  for (const auto& t : m.inputs) produced.emplace(t.name, std::make_pair(-1, &t));
  for (const auto& seg : m.segments) {
    if (seg.request != request) continue;
    for (const auto& t : seg.inputs) {
      auto it = produced.find(t.name);
      if (it == produced.end()) {
        return Error(ErrorCode::kInvalidArgument,
                     "{}: segment {} ({}): input '{}' is written by no earlier segment "
                     "and is not a model input; re-run hetplan split",
                     path, seg.id, seg.file, t.name);
      }
      const ManifestTensor& p = *it->second.second;
      if (p.dtype != t.dtype || p.shape != t.shape) {
        const std::string source = it->second.first < 0 ? std::string("the model input")
                                                        : fmt::format("segment {}'s output", it->second.first);
        return Error(ErrorCode::kInvalidArgument,
                     "{}: segment {} ({}): input '{}' is {} but {} is {}; shape "
                     "mismatch: re-run hetplan split",
                     path, seg.id, seg.file, t.name, ShapeText(t.dtype, t.shape), source, ShapeText(p.dtype, p.shape));
      }
    }
    for (const auto& t : seg.outputs) {
      if (produced.count(t.name)) {
        return Error(ErrorCode::kInvalidArgument,
                     "{}: segment {} ({}): output '{}' is written twice; re-run "
                     "hetplan split",
                     path, seg.id, seg.file, t.name);
      }
      produced.emplace(t.name, std::make_pair(seg.id, &t));
    }
  }
  for (const auto& t : m.outputs) {
    auto it = produced.find(t.name);
    if (it == produced.end() || it->second.first < 0) {
      return Error(ErrorCode::kInvalidArgument,
                   "{}: model output '{}' is written by no segment; re-run hetplan "
                   "split",
                   path, t.name);
    }
    const ManifestTensor& p = *it->second.second;
    if (p.dtype != t.dtype || p.shape != t.shape) {
      return Error(ErrorCode::kInvalidArgument,
                   "{}: model output '{}' is {} but segment {} writes {}; shape "
                   "mismatch: re-run hetplan split",
                   path, t.name, ShapeText(t.dtype, t.shape), it->second.first, ShapeText(p.dtype, p.shape));
    }
  }
  return Status::Ok();
}

}  // namespace

nlohmann::json ManifestToJson(const Manifest& m) {
  nlohmann::json j;
  j["format"] = kManifestFormat;
  j["version"] = kManifestVersion;
  j["model"] = {{"name", m.model_name},
                {"file", m.model_file},
                {"sha256", m.model_sha256},
                {"fusion", m.fusion},
                {"operators", m.model_operators}};
  AddPlanAssumptions(m.assumptions, &j["model"]);
  const ManifestSchedule& s = m.schedule;
  j["schedule"] = {{"file", s.file},     {"platform", s.platform},       {"solver", s.solver},
                   {"status", s.status}, {"makespan_us", s.makespan_us}, {"violations", s.violations}};
  if (s.initiation_interval_us) j["schedule"]["initiation_interval_us"] = *s.initiation_interval_us;
  j["runtime"] = {{"threads", m.threads}, {"graph_optimization", m.graph_optimization}};
  if (m.dynamic_shapes) j["runtime"]["dynamic_shapes"] = true;
  auto& devices = j["devices"] = nlohmann::json::array();
  for (const ManifestDevice& d : m.devices) {
    devices.push_back({{"name", d.name},
                       {"kind", d.kind},
                       {"execution", d.execution},
                       {"costs", d.costs},
                       {"timing", Timing(d.measured)}});
    if (d.configured) {
      devices.back()["runtime"] = {{"provider", d.provider},
                                   {"provider_options", d.provider_options},
                                   {"threads", d.threads},
                                   {"cores", d.cores}};
    }
  }
  auto& inputs = j["inputs"] = nlohmann::json::array();
  for (const ManifestTensor& t : m.inputs) inputs.push_back(TensorJson(t));
  auto& outputs = j["outputs"] = nlohmann::json::array();
  for (const ManifestTensor& t : m.outputs) {
    nlohmann::json o = TensorJson(t);
    if (t.segment >= 0) o["segment"] = t.segment;
    if (!t.narrowest_on_path.empty()) o["narrowest_on_path"] = t.narrowest_on_path;
    outputs.push_back(std::move(o));
  }
  auto& segments = j["segments"] = nlohmann::json::array();
  for (const ManifestSegment& seg : m.segments) {
    nlohmann::json seg_inputs = nlohmann::json::array();
    for (const ManifestTensor& t : seg.inputs) {
      nlohmann::json tj = TensorJson(t);
      tj["from"] = t.from < 0 ? nlohmann::json(nullptr) : nlohmann::json(t.from);
      seg_inputs.push_back(std::move(tj));
    }
    nlohmann::json seg_outputs = nlohmann::json::array();
    for (const ManifestTensor& t : seg.outputs) {
      nlohmann::json tj = TensorJson(t);
      tj["to"] = t.to;
      tj["model_output"] = t.model_output;
      seg_outputs.push_back(std::move(tj));
    }
    segments.push_back({{"id", seg.id},
                        {"device", seg.device},
                        {"kind", seg.kind},
                        {"timing", Timing(seg.measured)},
                        {"file", seg.file},
                        {"sha256", seg.sha256},
                        {"operators", seg.operators},
                        {"nodes", seg.nodes},
                        {"inputs", std::move(seg_inputs)},
                        {"outputs", std::move(seg_outputs)},
                        {"depends_on", seg.depends_on},
                        {"predicted_us", seg.predicted_us},
                        {"predicted_transfer_in_us", seg.predicted_transfer_in_us},
                        {"planned_start_us", seg.planned_start_us},
                        {"planned_finish_us", seg.planned_finish_us}});
    if (seg.unused_outputs) segments.back()["unused_outputs"] = true;
    if (!seg.data_file.empty()) {
      segments.back()["data_file"] = seg.data_file;
      segments.back()["data_bytes"] = seg.data_bytes;
    }
    if (seg.predicted_boundary_us > 0) segments.back()["predicted_boundary_us"] = seg.predicted_boundary_us;
    if (m.requests > 1) segments.back()["request"] = seg.request;
  }
  if (m.requests > 1) j["requests"] = m.requests;
  j["boundaries"] = m.boundaries;
  j["handoffs"] = m.handoffs;
  j["predicted"] = {{"host_us", m.predicted_host_us},
                    {"accelerator_us", m.predicted_accelerator_us},
                    {"transfer_us", m.predicted_transfer_us},
                    {"sequential_us", m.predicted_sequential_us},
                    {"makespan_us", m.predicted_makespan_us}};
  if (m.predicted_unsplit_us > 0) j["predicted"]["unsplit_us"] = m.predicted_unsplit_us;
  return j;
}

Status WriteManifest(const nlohmann::json& manifest, const std::string& dir) {
  return WriteFileAtomic((fs::path(dir) / kManifestFileName).string(), manifest.dump(1) + "\n");
}

namespace {

// DIR/manifest.json (`path`) parsed, after checking that both exist.
Result<nlohmann::json> ReadManifestJson(const std::string& dir, const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Error(ErrorCode::kNotFound, "{}: not a folder; give the --out folder of hetplan split", dir);
  }
  if (!fs::is_regular_file(path, ec)) {
    return Error(ErrorCode::kNotFound, "{}: not found; write it with hetplan split SCHEDULE --out {}", path, dir);
  }
  HETPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path, int64_t{256} << 20));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Error(ErrorCode::kParseError, "{}: not valid JSON ({}); re-run hetplan split", path, OneLine(e.what()));
  }
  return j;
}

// The manifest's PUs (devices[]) with their ONNX Runtime configuration.
Status ReadDevices(const nlohmann::json& j, const JsonReader& rd, Manifest* m) {
  if (const auto devices = j.find("devices"); devices != j.end() && devices->is_array()) {
    for (const auto& d : *devices) {
      if (!d.is_object()) continue;
      const std::string kind = StrOr(d, "kind");
      ManifestDevice dev;
      dev.name = StrOr(d, "name");
      dev.kind = kind;
      dev.execution = StrOr(d, "execution");
      dev.costs = StrOr(d, "costs");
      dev.measured = StrOr(d, "timing", kind == "cpu" ? "measured" : "modelled") == "measured";
      if (const auto rt = d.find("runtime"); rt != d.end() && rt->is_object()) {
        const std::string where = fmt::format("devices[{}].runtime", m->devices.size());
        dev.configured = true;
        dev.provider = StrOr(*rt, "provider", "cpu");
        dev.threads = static_cast<int>(IntOr(*rt, "threads", 1));
        if (dev.threads < 1 || dev.threads > 1024) return rd.Bad(where + ".threads", "not in 1..1024");
        if (const auto po = rt->find("provider_options"); po != rt->end() && po->is_object()) {
          for (const auto& [k, v] : po->items()) {
            if (!v.is_string()) return rd.Bad(where + ".provider_options." + k, "not a string");
            dev.provider_options[k] = v.get<std::string>();
          }
        }
        if (const auto cores = rt->find("cores"); cores != rt->end() && cores->is_array()) {
          for (const auto& c : *cores) {
            if (!c.is_number_integer() || c.get<int64_t>() < 0 || c.get<int64_t>() > 4095) {
              return rd.Bad(where + ".cores", "not a list of core numbers 0..4095");
            }
            dev.cores.push_back(c.get<int>());
          }
        }
      }
      m->devices.push_back(std::move(dev));
    }
  }
  return Status::Ok();
}

// Segment i (segments[i]) of the manifest at `path` in `dir`; its file must exist.
Result<ManifestSegment> ReadSegment(const nlohmann::json& js, size_t i, const std::string& dir,
                                    const std::string& path, const JsonReader& rd) {
  std::error_code ec;
  const std::string where = fmt::format("segments[{}]", i);
  ManifestSegment seg;
  seg.id = static_cast<int>(i);
  if (!js.is_object() || js.value("id", -1) != static_cast<int>(i)) {
    return rd.Bad(where + ".id", fmt::format("must be {} (segments are listed in execution order)", i));
  }
  HETPLAN_ASSIGN_OR_RETURN(seg.device, rd.Str(js, "device", where));
  seg.kind = js.value("kind", std::string("cpu"));
  seg.measured = js.value("timing", std::string(seg.kind == "cpu" ? "measured" : "modelled")) == "measured";
  HETPLAN_ASSIGN_OR_RETURN(seg.file, rd.Str(js, "file", where));
  if (seg.file.empty() || fs::path(seg.file).is_absolute() || seg.file.find("..") != std::string::npos) {
    return rd.Bad(where + ".file", fmt::format("'{}' is not a file name inside the folder", seg.file));
  }
  seg.path = (fs::path(dir) / seg.file).string();
  if (!fs::is_regular_file(seg.path, ec)) {
    return Error(ErrorCode::kNotFound,
                 "{}: segment {} ({}): file {} not found; re-run hetplan split "
                 "SCHEDULE --out {} to write it",
                 path, i, seg.device, seg.path, dir);
  }
  seg.sha256 = js.value("sha256", std::string());
  seg.data_file = js.value("data_file", std::string());
  if (!seg.data_file.empty()) {
    if (fs::path(seg.data_file).is_absolute() || seg.data_file.find("..") != std::string::npos ||
        seg.data_file.find('/') != std::string::npos) {
      return rd.Bad(where + ".data_file", fmt::format("'{}' is not a file name inside the folder", seg.data_file));
    }
    const fs::path data = fs::path(dir) / seg.data_file;
    seg.data_bytes = IntOr(js, "data_bytes", -1);
    if (!fs::is_regular_file(data, ec)) {
      return Error(ErrorCode::kNotFound,
                   "{}: segment {} ({}): its external weights {} are not found; re-run hetplan split "
                   "SCHEDULE --out {} to write them",
                   path, i, seg.device, data.string(), dir);
    }
    if (seg.data_bytes >= 0 && static_cast<int64_t>(fs::file_size(data, ec)) != seg.data_bytes) {
      return Error(ErrorCode::kInvalidArgument,
                   "{}: segment {} ({}): its external weights {} changed since it was split (not {} bytes); re-run "
                   "hetplan split SCHEDULE --out {}",
                   path, i, seg.device, data.string(), seg.data_bytes, dir);
    }
  }
  seg.nodes = static_cast<int>(IntOr(js, "nodes", 0));
  if (js.contains("operators") && js["operators"].is_array()) {
    for (const auto& v : js["operators"]) {
      if (v.is_number_integer()) seg.operators.push_back(v.get<int>());
    }
  }
  for (const char* key : {"inputs", "outputs"}) {
    if (!js.contains(key) || !js[key].is_array()) return rd.Bad(where + "." + key, "missing");
  }
  for (size_t t = 0; t < js["inputs"].size(); ++t) {
    HETPLAN_ASSIGN_OR_RETURN(ManifestTensor x, rd.Tensor(js["inputs"][t], fmt::format("{}.inputs[{}]", where, t)));
    seg.inputs.push_back(std::move(x));
  }
  for (size_t t = 0; t < js["outputs"].size(); ++t) {
    HETPLAN_ASSIGN_OR_RETURN(ManifestTensor x, rd.Tensor(js["outputs"][t], fmt::format("{}.outputs[{}]", where, t)));
    seg.outputs.push_back(std::move(x));
  }
  if (seg.outputs.empty()) return rd.Bad(where + ".outputs", "empty");
  if (js.contains("depends_on") && js["depends_on"].is_array()) {
    for (const auto& v : js["depends_on"]) {
      if (v.is_number_integer()) seg.depends_on.push_back(v.get<int>());
    }
  }
  HETPLAN_ASSIGN_OR_RETURN(seg.predicted_us, rd.Num(js, "predicted_us", where));
  seg.predicted_transfer_in_us = js.value("predicted_transfer_in_us", 0.0);
  seg.predicted_boundary_us = NumOr(js, "predicted_boundary_us", 0.0);
  seg.planned_start_us = NumOr(js, "planned_start_us", 0.0);
  seg.planned_finish_us = NumOr(js, "planned_finish_us", 0.0);
  seg.unused_outputs = BoolOr(js, "unused_outputs", false);
  seg.request = static_cast<int>(IntOr(js, "request", 0));
  return seg;
}

}  // namespace

Result<Manifest> LoadManifest(const std::string& dir) {
  const std::string path = (fs::path(dir) / kManifestFileName).string();
  HETPLAN_ASSIGN_OR_RETURN(nlohmann::json j, ReadManifestJson(dir, path));
  JsonReader rd(path);
  if (!j.is_object() || j.value("format", "") != kManifestFormat) {
    return rd.Bad("format", fmt::format("not \"{}\"", kManifestFormat));
  }
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != kManifestVersion) {
    return rd.Bad("version", fmt::format("not {} (this hetplan reads version {})", kManifestVersion, kManifestVersion));
  }
  Manifest m;
  m.dir = dir;
  m.path = path;
  const auto& model = j.value("model", nlohmann::json::object());
  HETPLAN_ASSIGN_OR_RETURN(m.model_file, rd.Str(model, "file", "model"));
  m.model_name = model.value("name", std::string());
  m.model_sha256 = model.value("sha256", std::string());
  m.fusion = model.value("fusion", std::string("none"));
  m.model_operators = static_cast<int>(IntOr(model, "operators", 0));
  HETPLAN_ASSIGN_OR_RETURN(m.assumptions, ReadPlanAssumptions(model, path));
  for (SampleInput& si : m.assumptions.sample_inputs) {  // split copied each beside the manifest
    if (fs::path(si.file).is_relative()) si.file = (fs::path(m.dir) / si.file).string();
  }
  if (const auto s = j.find("schedule"); s != j.end() && s->is_object()) {
    m.schedule = {StrOr(*s, "file"),   StrOr(*s, "platform"),         StrOr(*s, "solver"),
                  StrOr(*s, "status"), NumOr(*s, "makespan_us", 0.0), static_cast<int>(IntOr(*s, "violations", 0)),
                  std::nullopt};
    if (const auto ii = s->find("initiation_interval_us"); ii != s->end() && ii->is_number() && ii->get<double>() > 0) {
      m.schedule.initiation_interval_us = ii->get<double>();
    }
  }
  const auto& runtime = j.value("runtime", nlohmann::json::object());
  m.threads = runtime.is_object() ? runtime.value("threads", 1) : 1;
  if (m.threads < 1) m.threads = 1;
  m.graph_optimization = runtime.is_object() ? runtime.value("graph_optimization", std::string("basic")) : "basic";
  m.dynamic_shapes = runtime.is_object() && runtime.value("dynamic_shapes", false);
  HETPLAN_RETURN_IF_ERROR(ReadDevices(j, rd, &m));
  for (const char* key : {"inputs", "outputs", "segments"}) {
    if (!j.contains(key) || !j[key].is_array()) return rd.Bad(key, "missing");
  }
  for (size_t i = 0; i < j["inputs"].size(); ++i) {
    HETPLAN_ASSIGN_OR_RETURN(ManifestTensor t, rd.Tensor(j["inputs"][i], fmt::format("inputs[{}]", i)));
    m.inputs.push_back(std::move(t));
  }
  for (size_t i = 0; i < j["outputs"].size(); ++i) {
    HETPLAN_ASSIGN_OR_RETURN(ManifestTensor t, rd.Tensor(j["outputs"][i], fmt::format("outputs[{}]", i)));
    m.outputs.push_back(std::move(t));
  }
  if (j["segments"].empty()) return rd.Bad("segments", "empty");
  for (size_t i = 0; i < j["segments"].size(); ++i) {
    HETPLAN_ASSIGN_OR_RETURN(ManifestSegment seg, ReadSegment(j["segments"][i], i, dir, path, rd));
    m.segments.push_back(std::move(seg));
  }
  m.requests = static_cast<int>(IntOr(j, "requests", 1));
  if (m.requests != 1 && m.requests != 2) return rd.Bad("requests", "must be 1 or 2");
  for (const auto& seg : m.segments) {
    if (seg.request < 0 || seg.request >= m.requests) {
      return rd.Bad(fmt::format("segments[{}].request", seg.id), fmt::format("must be 0 to {}", m.requests - 1));
    }
  }
  // Data flow: every input comes from the model or an earlier segment of its
  // request, and agrees with what its producer writes.
  for (int request = 0; request < m.requests; ++request) HETPLAN_RETURN_IF_ERROR(CheckDataFlow(m, request));
  for (size_t s = 1; s < m.segments.size(); ++s) {
    if (m.segments[s].device != m.segments[s - 1].device) ++m.boundaries;
  }
  const auto& predicted = j.value("predicted", nlohmann::json::object());
  if (predicted.is_object()) {
    m.predicted_makespan_us = predicted.value("makespan_us", 0.0);
    m.predicted_sequential_us = predicted.value("sequential_us", 0.0);
    m.predicted_host_us = NumOr(predicted, "host_us", 0.0);
    m.predicted_accelerator_us = NumOr(predicted, "accelerator_us", 0.0);
    m.predicted_transfer_us = NumOr(predicted, "transfer_us", 0.0);
    m.predicted_unsplit_us = NumOr(predicted, "unsplit_us", 0.0);
  }
  m.handoffs = static_cast<int>(IntOr(j, "handoffs", 0));
  return m;
}

}  // namespace hetplan
