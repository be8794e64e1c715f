// Reading a schedule file for split (split_internal.h): its PUs and their
// ONNX Runtime configuration, each operator's PU, planned times and
// predicted cost, the edges' transfer times and the plan's summary.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "deploy/split_internal.h"
#include "hetplan/validate/validator.h"

namespace hetplan::deploy_internal {

Result<ParsedSchedule> ParseSchedule(const nlohmann::json& s, const std::string& label) {
  auto bad = [&](const std::string& where, const std::string& what) {
    return Error(ErrorCode::kParseError, "{}: {}: {}; give a schedule written by `hetplan partition --out`", label,
                 where, what);
  };
  if (!s.is_object() || s.value("format", "") != "hetplan-schedule") {
    return bad("format", "not a hetplan schedule file (\"format\": \"hetplan-schedule\" missing)");
  }
  ParsedSchedule p;
  const auto& model = s.value("model", nlohmann::json::object());
  if (!model.is_object() || !model.contains("file") || !model["file"].is_string()) {
    return bad("model.file", "missing");
  }
  p.model_file = model["file"].get<std::string>();
  p.model_name = model.value("name", std::string());
  p.model_sha256 = model.value("sha256", std::string());
  p.fusion = model.value("fusion", std::string("none"));
  if (!s.contains("devices") || !s["devices"].is_array() || s["devices"].empty()) {
    return bad("devices", "missing or empty");
  }
  std::unordered_map<std::string, int> device_index;
  for (size_t i = 0; i < s["devices"].size(); ++i) {
    const auto& d = s["devices"][i];
    if (!d.is_object() || !d.contains("name") || !d["name"].is_string()) {
      return bad(fmt::format("devices[{}].name", i), "missing");
    }
    ScheduleDevice dev;
    dev.name = d["name"].get<std::string>();
    dev.kind = d.value("kind", std::string("cpu"));
    dev.costs = d.value("costs", std::string());
    dev.execution = d.value("execution", std::string("serial"));
    if (d.contains("boundary_us") && d["boundary_us"].is_number() && d["boundary_us"].get<double>() >= 0) {
      dev.boundary_us = d["boundary_us"].get<double>();
    }
    if (s.contains("platform") && s["platform"].is_object() && s["platform"].contains(dev.name)) {
      const auto& pu = s["platform"][dev.name];
      if (pu.is_object() && pu.contains("threads") && pu["threads"].is_number_integer()) {
        dev.threads = pu["threads"].get<int>();
      }
      if (pu.is_object() && pu.contains("provider") && pu["provider"].is_string()) {
        dev.configured = true;
        dev.provider = pu["provider"].get<std::string>();
        if (pu.contains("provider_options") && pu["provider_options"].is_object()) {
          for (const auto& [k, v] : pu["provider_options"].items()) {
            if (v.is_string()) dev.provider_options[k] = v.get<std::string>();
          }
        }
        if (pu.contains("cores") && pu["cores"].is_array()) {
          for (const auto& c : pu["cores"]) {
            if (c.is_number_integer()) dev.cores.push_back(c.get<int>());
          }
        }
      }
    }
    device_index.emplace(dev.name, static_cast<int>(i));
    p.devices.push_back(std::move(dev));
  }
  const auto cpu = std::find_if(p.devices.begin(), p.devices.end(), [](const ScheduleDevice& d) { return d.kind == "cpu"; });
  const auto& baselines = s.value("baselines", nlohmann::json::object());
  if (cpu != p.devices.end() && cpu->costs == "measured" && baselines.is_object() &&
      baselines.contains("cpu_only_us") && baselines["cpu_only_us"].is_number()) {
    p.predicted_unsplit_us = std::max(0.0, baselines["cpu_only_us"].get<double>());
  }
  if (!s.contains("operators") || !s["operators"].is_array()) return bad("operators", "missing");
  const auto& ops = s["operators"];
  p.ops.resize(ops.size());
  std::vector<bool> seen(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& o = ops[i];
    const std::string where = fmt::format("operators[{}]", i);
    if (!o.is_object() || !o.contains("id") || !o["id"].is_number_integer()) return bad(where + ".id", "missing");
    const int64_t id = o["id"].get<int64_t>();
    if (id < 0 || id >= static_cast<int64_t>(ops.size()) || seen[static_cast<size_t>(id)]) {
      return bad(where + ".id", fmt::format("{} is out of range or repeated", id));
    }
    seen[static_cast<size_t>(id)] = true;
    ScheduleOp& op = p.ops[static_cast<size_t>(id)];
    op.name = o.value("name", std::string());
    if (!o.contains("device") || !o["device"].is_string()) return bad(where + ".device", "missing");
    op.device = o["device"].get<std::string>();
    auto dit = device_index.find(op.device);
    if (dit == device_index.end()) {
      return bad(where + ".device", fmt::format("'{}' is not in devices[]", op.device));
    }
    op.device_index = dit->second;
    for (const char* key : {"start_us", "finish_us"}) {
      if (!o.contains(key) || !o[key].is_number() || !std::isfinite(o[key].get<double>())) {
        return bad(fmt::format("{}.{}", where, key), "missing or not a finite number");
      }
    }
    op.start_us = o["start_us"].get<double>();
    op.finish_us = o["finish_us"].get<double>();
    const auto& cost = o.value("cost_us", nlohmann::json::object());
    if (!cost.is_object() || !cost.contains(op.device) || !cost[op.device].is_number()) {
      return bad(fmt::format("{}.cost_us.{}", where, op.device),
                 fmt::format("operator '{}' has no cost on its device '{}' (unsupported there)", op.name, op.device));
    }
    double slowdown = o.contains("slowdown") && o["slowdown"].is_number() ? o["slowdown"].get<double>() : 1.0;
    op.predicted_us = cost[op.device].get<double>() * slowdown;
  }
  if (s.contains("edges") && s["edges"].is_array()) {
    for (const auto& e : s["edges"]) {
      if (!e.is_object() || !e.contains("from") || !e.contains("to") || !e["from"].is_number_integer() ||
          !e["to"].is_number_integer()) {
        continue;
      }
      if (e.contains("transfer_us") && e["transfer_us"].is_number()) {
        p.transfers.emplace_back(e["from"].get<int>(), e["to"].get<int>(), e["transfer_us"].get<double>());
      }
    }
  }
  if (s.contains("makespan_us") && s["makespan_us"].is_number()) p.makespan_us = s["makespan_us"].get<double>();
  if (s.contains("solver") && s["solver"].is_object()) {
    p.solver = s["solver"].value("name", std::string());
    p.solver_status = s["solver"].value("status", std::string());
  }
  if (s.contains("platform") && s["platform"].is_object()) p.platform = s["platform"].value("name", std::string());
  p.violations = static_cast<int>(ValidateScheduleJson(s).violations.size());
  return p;
}

}  // namespace hetplan::deploy_internal
