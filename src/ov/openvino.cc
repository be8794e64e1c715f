// OpenVINO plumbing (src/ov/openvino.h): devices, the model as OpenVINO
// reads it, and per-node profiling mapped back to ONNX nodes. The facts it
// relies on (names, running averages, originalLayersNames) are in
// docs/openvino.md.
#include "ov/openvino.h"

#include "hetplan/graph/graph_walk.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>
#include <unordered_map>


#if HETPLAN_HAVE_OPENVINO
#include <dlfcn.h>

#include <openvino/core/model.hpp>
#include <openvino/core/version.hpp>
#include <openvino/op/constant.hpp>
#include <openvino/op/parameter.hpp>
#include <openvino/op/result.hpp>
#include <openvino/runtime/core.hpp>
#include <openvino/runtime/properties.hpp>
#endif

namespace hetplan::ov_runtime {

#if !HETPLAN_HAVE_OPENVINO

namespace {
Status NotBuilt() {
  return Error(ErrorCode::kUnsupported, "this hetplan was built without OpenVINO; run scripts/setup_openvino.sh "
               "(or scripts/setup.sh) and build again to use runtime: openvino");
}
}  // namespace

bool Built() { return false; }
std::string Version() { return ""; }
Result<std::vector<std::string>> AvailableDevices() { return NotBuilt(); }
Status CheckDevice(const std::string&, const std::string& where) {
  return Error(ErrorCode::kUnsupported, "{}: {}", where, NotBuilt().message());
}
Result<std::vector<ReadOperation>> ReadOperations(const onnx::ModelProto&, const std::string&, const std::vector<char>&) {
  return NotBuilt();
}
Result<ModelProfile> ProfileModel(const onnx::ModelProto&, const std::string&, const ProfileRequest&) {
  return NotBuilt();
}
Result<HeteroRun> RunHetero(const HeteroRequest&) { return NotBuilt(); }

#else

namespace {

// One Core per process: it loads the plugins once.
::ov::Core& TheCore() {
  static ::ov::Core core;
  return core;
}

// Runs `f`, turning an OpenVINO exception into one line naming `what`.
template <typename F>
auto Guarded(const std::string& what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, "{}: OpenVINO: {}", what, OneLine(e.what()));
  }
}

bool IsIo(const ::ov::Node& n) {
  return ::ov::is_type<::ov::op::v0::Parameter>(&n) || ::ov::is_type<::ov::op::v0::Result>(&n);
}

// Each operation of `model` (in `ops`' order) given an ONNX node: its own by
// output tensor name where it has one, else its consumers', else its
// producers'. `own` holds the first; the result, the rest filled in.
std::vector<int> FillThroughGraph(const std::vector<std::shared_ptr<::ov::Node>>& ops, std::vector<int> own) {
  std::unordered_map<const ::ov::Node*, size_t> index;
  for (size_t i = 0; i < ops.size(); ++i) index[ops[i].get()] = i;
  // Consumers come later in topological order: a reverse pass sees theirs first.
  for (size_t k = ops.size(); k-- > 0;) {
    if (own[k] >= 0 || IsIo(*ops[k])) continue;
    for (const auto& out : ops[k]->outputs()) {
      for (const auto& in : out.get_target_inputs()) {
        auto it = index.find(in.get_node());
        if (it != index.end() && own[it->second] >= 0) {
          own[k] = own[it->second];
          break;
        }
      }
      if (own[k] >= 0) break;
    }
  }
  for (size_t k = 0; k < ops.size(); ++k) {
    if (own[k] >= 0 || IsIo(*ops[k])) continue;
    for (const auto& in : ops[k]->inputs()) {
      auto it = index.find(in.get_source_output().get_node());
      if (it != index.end() && own[it->second] >= 0) {
        own[k] = own[it->second];
        break;
      }
    }
  }
  return own;
}

std::shared_ptr<::ov::Model> Read(const onnx::ModelProto& model, const std::string& label) {
  std::string bytes;
  if (!model.SerializeToString(&bytes)) throw std::runtime_error(label + ": the model cannot be serialised (over 2 GiB?)");
  return TheCore().read_model(bytes, ::ov::Tensor());
}

Result<std::vector<ReadOperation>> ReadFrom(const ::ov::Model& ovm, const onnx::ModelProto& model,
                                           const std::vector<char>& keep = {}) {
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < model.graph().node_size(); ++i) {
    if (!keep.empty() && (static_cast<size_t>(i) >= keep.size() || !keep[static_cast<size_t>(i)])) continue;
    for (const std::string& t : model.graph().node(i).output()) {
      if (!t.empty()) producer[t] = i;
    }
  }
  const auto ops = ovm.get_ordered_ops();
  std::vector<int> own(ops.size(), -1);
  for (size_t k = 0; k < ops.size(); ++k) {
    if (IsIo(*ops[k])) continue;
    for (const auto& out : ops[k]->outputs()) {
      for (const std::string& name : out.get_names()) {
        if (auto it = producer.find(name); it != producer.end()) own[k] = it->second;
      }
    }
  }
  const std::vector<int> node = FillThroughGraph(ops, std::move(own));
  std::unordered_map<const ::ov::Node*, size_t> index;
  for (size_t k = 0; k < ops.size(); ++k) index[ops[k].get()] = k;
  std::vector<ReadOperation> out;
  out.reserve(ops.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    ReadOperation r{ops[k]->get_friendly_name(), ops[k]->get_type_name(), node[k], -1,
                    ops[k]->get_friendly_name() == ops[k]->get_name()};
    if (::ov::is_type<::ov::op::v0::Result>(ops[k].get())) {
      auto it = index.find(ops[k]->input(0).get_source_output().get_node());
      if (it != index.end()) r.neighbour_node = node[it->second];
    } else if (::ov::is_type<::ov::op::v0::Parameter>(ops[k].get())) {
      for (const auto& in : ops[k]->output(0).get_target_inputs()) {
        auto it = index.find(in.get_node());
        if (it != index.end() && node[it->second] >= 0) {
          r.neighbour_node = node[it->second];
          break;
        }
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

// Seeded inputs: floats uniform in [0, 1), integers and booleans 0 (a valid
// index, shape or mask everywhere).
void FillInputs(::ov::InferRequest& req, const ::ov::CompiledModel& cm) {
  std::mt19937 rng(20261207);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (const auto& input : cm.inputs()) {
    ::ov::Tensor t = req.get_tensor(input);
    const ::ov::element::Type type = t.get_element_type();
    if (type == ::ov::element::f32) {
      float* p = t.data<float>();
      for (size_t i = 0; i < t.get_size(); ++i) p[i] = u(rng);
    } else {
      std::fill_n(static_cast<char*>(t.data()), t.get_byte_size(), char{0});
    }
  }
}

// Profiling node name → running average (µs), for executed nodes.
std::map<std::string, double> Averages(const ::ov::InferRequest& req) {
  std::map<std::string, double> avg;
  for (const ::ov::ProfilingInfo& p : req.get_profiling_info()) {
    if (p.status == ::ov::ProfilingInfo::Status::EXECUTED) avg[p.node_name] = static_cast<double>(p.real_time.count());
  }
  return avg;
}

// "a,b,c" → {a, b, c}; empty items left out.
std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = std::min(s.find(',', start), s.size());
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string RtText(const ::ov::Node& n, const char* key) {
  const auto& rt = n.get_rt_info();
  auto it = rt.find(key);
  if (it == rt.end()) return "";
  try {
    return it->second.as<std::string>();
  } catch (const std::exception&) {
    return "";
  }
}

Result<ModelProfile> Profile(const onnx::ModelProto& model, const std::string& label, const ProfileRequest& r) {
  std::shared_ptr<::ov::Model> ovm = Read(model, label);
  HETPLAN_ASSIGN_OR_RETURN(std::vector<ReadOperation> read, ReadFrom(*ovm, model));
  std::unordered_map<std::string, int> node_of;  // friendly name → ONNX node
  for (const ReadOperation& op : read) node_of[op.name] = op.onnx_node;

  ::ov::AnyMap props;
  for (const auto& [k, v] : r.properties) props[k] = v;
  props["PERF_COUNT"] = true;
  // The CPU's threads and precision; other devices keep their own.
  const bool cpu = r.device.rfind("CPU", 0) == 0;
  if (cpu) props["INFERENCE_NUM_THREADS"] = r.threads;
  if (cpu && !props.count("INFERENCE_PRECISION_HINT")) props["INFERENCE_PRECISION_HINT"] = std::string("f32");
  ::ov::CompiledModel cm = TheCore().compile_model(ovm, r.device, props);
  ModelProfile out;
  out.onnx_nodes = model.graph().node_size();
  if (cpu) out.precision = cm.get_property("INFERENCE_PRECISION_HINT").as<std::string>();
  ::ov::InferRequest req = cm.create_infer_request();
  FillInputs(req, cm);
  for (int i = 0; i < r.warmup; ++i) req.infer();
  const std::map<std::string, double> warm = r.warmup > 0 ? Averages(req) : std::map<std::string, double>{};
  out.run_us.reserve(static_cast<size_t>(r.runs));
  for (int i = 0; i < r.runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    req.infer();
    out.run_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  const std::map<std::string, double> all = Averages(req);

  // The runtime model: each operation's ONNX nodes by originalLayersNames;
  // one that names none (a layout Reorder) takes its consumers', else its producers'.
  const auto rops = cm.get_runtime_model()->get_ordered_ops();
  std::vector<std::set<int>> named(rops.size());
  std::vector<int> first(rops.size(), -1);
  std::unordered_map<std::string, size_t> rindex;
  for (size_t k = 0; k < rops.size(); ++k) {
    rindex[rops[k]->get_friendly_name()] = k;
    for (const std::string& name : SplitCommas(RtText(*rops[k], "originalLayersNames"))) {
      auto it = node_of.find(name);
      if (it != node_of.end() && it->second >= 0) named[k].insert(it->second);
    }
    if (!named[k].empty()) first[k] = static_cast<int>(k);
  }
  const std::vector<int> via = FillThroughGraph(rops, first);

  std::vector<int> owner(static_cast<size_t>(out.onnx_nodes), -1);  // ONNX node → executed node
  std::set<int> named_nodes;
  for (const auto& [name, avg] : all) {
    auto it = rindex.find(name);
    if (it == rindex.end()) continue;
    ExecutedNode e;
    e.name = name;
    e.type = RtText(*rops[it->second], "layerType");
    e.kernel = RtText(*rops[it->second], "primitiveType");
    const double before = warm.count(name) ? warm.at(name) : 0.0;
    e.mean_us = std::max(0.0, (avg * (r.warmup + r.runs) - before * r.warmup) / r.runs);
    const int src = via[it->second];
    if (src >= 0) {
      for (int n : named[static_cast<size_t>(src)]) e.onnx_nodes.push_back(n);
    }
    for (int n : named[it->second]) named_nodes.insert(n);
    out.nodes.push_back(std::move(e));
  }
  // Execution order, by the runtime model's execOrder.
  auto order = [&](const ExecutedNode& e) {
    const std::string s = RtText(*rops[rindex.at(e.name)], "execOrder");
    return s.empty() ? 0L : std::strtol(s.c_str(), nullptr, 10);
  };
  std::stable_sort(out.nodes.begin(), out.nodes.end(),
                   [&](const ExecutedNode& a, const ExecutedNode& b) { return order(a) < order(b); });
  for (size_t e = 0; e < out.nodes.size(); ++e) {
    for (int n : out.nodes[e].onnx_nodes) {
      if (owner[static_cast<size_t>(n)] < 0) owner[static_cast<size_t>(n)] = static_cast<int>(e);
    }
  }
  out.named_nodes = static_cast<int>(named_nodes.size());

  // ONNX nodes no executed operation covers (a QDQ graph's DequantizeLinear,
  // Relus folded into a FakeQuantize): to the executed node of the nearest
  // consumer, else of the nearest producer (the graph is topologically sorted).
  const auto& g = model.graph();
  std::vector<int> got = owner;
  FillFromNeighbours(
      g, [&](int i) { return got[static_cast<size_t>(i)] >= 0; },
      [&](int to, int from) { got[static_cast<size_t>(to)] = got[static_cast<size_t>(from)]; });
  for (int i = 0; i < g.node_size(); ++i) {
    const int e = got[static_cast<size_t>(i)];
    if (owner[static_cast<size_t>(i)] >= 0 || e < 0) continue;
    out.nodes[static_cast<size_t>(e)].onnx_nodes.push_back(i);
    ++out.attributed_nodes;
  }
  for (ExecutedNode& e : out.nodes) std::sort(e.onnx_nodes.begin(), e.onnx_nodes.end());
  return out;
}

// The folder of libopenvino (where its plugins are): found from one of its functions.
std::string LibDir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&::ov::get_openvino_version), &info) == 0 || info.dli_fname == nullptr) {
    return ".";
  }
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

// `warmup` untimed and `runs` timed inferences of `cm` on seeded inputs; its
// outputs after the last, as floats.
std::vector<std::vector<float>> TimeAndRead(::ov::CompiledModel& cm, int warmup, int runs, std::vector<double>* us) {
  ::ov::InferRequest req = cm.create_infer_request();
  FillInputs(req, cm);
  for (int i = 0; i < warmup; ++i) req.infer();
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    req.infer();
    us->push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::vector<std::vector<float>> outs;
  for (const auto& o : cm.outputs()) {
    const ::ov::Tensor t = req.get_tensor(o);
    std::vector<float> v(t.get_size(), 0.0f);
    if (t.get_element_type() == ::ov::element::f32) std::copy_n(t.data<const float>(), v.size(), v.begin());
    outs.push_back(std::move(v));
  }
  return outs;
}

Result<HeteroRun> Hetero(const HeteroRequest& r) {
  ::ov::Core& core = TheCore();
  const std::string libs = LibDir();
  for (const auto& [name, lib] : r.plugins) {
    const auto known = core.get_available_devices();
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;  // registered before
    core.register_plugin(lib.find('/') == std::string::npos ? libs + "/" + lib : lib, name);
  }
  // Each CPU device's precision and threads, for HETERO's sub-models
  // (DEVICE_PROPERTIES) and for the device alone.
  ::ov::AnyMap per_device;
  for (const std::string& d : r.devices) {
    if (d.rfind("CPU", 0) != 0) continue;
    ::ov::AnyMap p{{"INFERENCE_PRECISION_HINT", std::string("f32")}};
    if (auto t = r.threads.find(d); t != r.threads.end()) p["INFERENCE_NUM_THREADS"] = t->second;
    core.set_property(d, p);
    per_device[d] = p;
  }
  HeteroRun out;
  out.reference_device = r.devices.front();
  std::shared_ptr<::ov::Model> model = core.read_model(r.model_path);
  const auto ops = model->get_ordered_ops();
  std::unordered_map<std::string, std::string> device(r.affinity.begin(), r.affinity.end());
  for (size_t k = ops.size(); k-- > 0;) {  // consumers first
    const std::string name = ops[k]->get_friendly_name();
    if (device.count(name)) continue;
    for (const auto& o : ops[k]->outputs()) {
      for (const auto& in : o.get_target_inputs()) {
        auto it = device.find(in.get_node()->get_friendly_name());
        if (it != device.end() && !device.count(name)) device[name] = it->second;
      }
    }
  }
  for (const auto& op : ops) {
    const std::string name = op->get_friendly_name();
    if (!device.count(name)) {
      for (const auto& in : op->inputs()) {
        auto it = device.find(in.get_source_output().get_node()->get_friendly_name());
        if (it != device.end() && !device.count(name)) device[name] = it->second;
      }
    }
    if (!device.count(name)) device[name] = r.devices.front();
    op->get_rt_info()["affinity"] = device[name];
    ++out.operations[device[name]];
  }
  std::string list;
  for (const std::string& d : r.devices) list += (list.empty() ? "" : ",") + d;
  out.device = "HETERO:" + list;
  ::ov::CompiledModel cm = core.compile_model(model, out.device, ::ov::AnyMap{{"DEVICE_PROPERTIES", per_device}});
  out.submodels = std::stoi(cm.get_property("HETERO_NUMBER_OF_SUBMODELS").as<std::string>());
  out.execution_devices = cm.get_property(::ov::execution_devices);
  const auto got = TimeAndRead(cm, r.warmup, r.runs, &out.run_us);
  ::ov::CompiledModel ref = core.compile_model(core.read_model(r.model_path), r.devices.front());
  const auto want = TimeAndRead(ref, r.warmup, r.runs, &out.reference_us);
  for (size_t o = 0; o < got.size() && o < want.size(); ++o) {
    for (size_t i = 0; i < got[o].size() && i < want[o].size(); ++i) {
      const double d = std::abs(static_cast<double>(got[o][i]) - want[o][i]);
      out.max_abs_diff = std::max(out.max_abs_diff, d);
      out.max_rel_diff = std::max(out.max_rel_diff, d / std::max(std::abs(static_cast<double>(want[o][i])), 1e-6));
      out.mismatches += d > r.atol + r.rtol * std::abs(static_cast<double>(want[o][i])) ? 1 : 0;
      ++out.elements;
    }
  }
  return out;
}

}  // namespace

bool Built() { return true; }

Result<HeteroRun> RunHetero(const HeteroRequest& r) {
  if (r.devices.empty() || r.runs < 1 || r.warmup < 0) {
    return Error(ErrorCode::kInvalidArgument, "{}: a HETERO run needs a device, runs >= 1 and warmup >= 0",
                 r.model_path);
  }
  return Guarded(r.model_path, [&]() -> Result<HeteroRun> { return Hetero(r); });
}

std::string Version() {
  const ::ov::Version& v = ::ov::get_openvino_version();
  return v.buildNumber != nullptr ? std::string(v.buildNumber) : std::string();
}

Result<std::vector<std::string>> AvailableDevices() {
  return Guarded("listing devices", [&]() -> Result<std::vector<std::string>> { return TheCore().get_available_devices(); });
}

Status CheckDevice(const std::string& device, const std::string& where) {
  HETPLAN_ASSIGN_OR_RETURN(std::vector<std::string> devices, AvailableDevices());
  for (const std::string& d : devices) {
    if (d == device || d == device + ".0") return Status::Ok();
  }
  return Error(ErrorCode::kUnsupported, "{}: OpenVINO device '{}' is not on this machine (available: {}); run the PU "
               "on one of those, or price it analytically (cost: roofline)", where, device, fmt::join(devices, ", "));
}

Result<std::vector<ReadOperation>> ReadOperations(const onnx::ModelProto& model, const std::string& label,
                                                  const std::vector<char>& keep) {
  return Guarded(label, [&]() -> Result<std::vector<ReadOperation>> {
    return ReadFrom(*Read(model, label), model, keep);
  });
}

Result<ModelProfile> ProfileModel(const onnx::ModelProto& model, const std::string& label, const ProfileRequest& r) {
  if (r.warmup < 0 || r.runs < 1) {
    return Error(ErrorCode::kInvalidArgument, "{}: warmup {} and runs {}: give warmup >= 0 and runs >= 1", label,
                 r.warmup, r.runs);
  }
  return Guarded(label, [&]() -> Result<ModelProfile> { return Profile(model, label, r); });
}

#endif

}  // namespace hetplan::ov_runtime
