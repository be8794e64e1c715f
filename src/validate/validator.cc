#include "hetplan/validate/validator.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "hetplan/util/io.h"

namespace hetplan {
namespace {

bool Near(double a, double b) {
  return std::fabs(a - b) <= kValidateTolerance * std::max({1.0, std::fabs(a), std::fabs(b)});
}
bool Below(double a, double b) {  // a ≤ b within tolerance
  return a <= b + kValidateTolerance * std::max({1.0, std::fabs(a), std::fabs(b)});
}

// A name as quoted in a violation: cut, and with line breaks blanked, so that
// a violation stays one readable line whatever the file holds (a 100 MB
// operator name, a name with a newline).
std::string Short(const std::string& name) {
  std::string s = name.size() <= 80 ? name : name.substr(0, 77) + "...";
  std::replace_if(s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return s;
}

struct Device {
  std::string kind;
  bool spatial = false;
  std::optional<double> capacity;
  std::optional<double> power_w;
};

// Reads a finite number at j[key]; records a violation otherwise.
std::optional<double> Num(const nlohmann::json& j, const char* key, const std::string& where,
                          std::vector<std::string>& out, bool required = true) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) {
    if (required) out.push_back(fmt::format("{}: missing '{}'", where, key));
    return std::nullopt;
  }
  if (!j[key].is_number()) {
    out.push_back(fmt::format("{}: '{}' is not a number", where, key));
    return std::nullopt;
  }
  double v = j[key].get<double>();
  if (!std::isfinite(v)) {
    out.push_back(fmt::format("{}: '{}' is not finite", where, key));
    return std::nullopt;
  }
  return v;
}

// One operator as read from the file.
struct Op {
  std::string name, device;
  double start = 0, finish = 0, cost = 0, slowdown = 1;
  std::optional<double> crossbars;
  int request = 0;
  bool ok = false;
};

// What the checks share: the devices by name, the operators as read, ids to
// their index, and the totals the file's makespan and energy must equal.
struct Parsed {
  std::map<std::string, Device> devices;
  std::vector<Op> ops;
  std::map<int, int> by_id;
  double latest = 0;
  double energy_sum = 0.0;
  bool energy_defined = true;
};

// The devices (false when there are none to check against).
bool ReadDevices(const nlohmann::json& s, Parsed& p, std::vector<std::string>& out) {
  std::map<std::string, Device>& devices = p.devices;
  if (!s.contains("devices") || !s["devices"].is_array() || s["devices"].empty()) {
    out.push_back("'devices' is missing or empty");
    return false;
  }
  for (size_t i = 0; i < s["devices"].size(); ++i) {
    const auto& d = s["devices"][i];
    std::string where = fmt::format("devices[{}]", i);
    if (!d.is_object() || !d.contains("name") || !d["name"].is_string()) {
      out.push_back(where + ": missing 'name'");
      continue;
    }
    Device dev;
    dev.kind = d.contains("kind") && d["kind"].is_string() ? d["kind"].get<std::string>() : "";
    std::string exec = d.contains("execution") && d["execution"].is_string() ? d["execution"].get<std::string>() : "";
    if (exec != "serial" && exec != "spatial") {
      out.push_back(fmt::format("{} '{}': 'execution' must be serial or spatial", where, Short(d["name"].get<std::string>())));
    }
    dev.spatial = exec == "spatial";
    dev.capacity = Num(d, "capacity_crossbars", where, out, /*required=*/dev.spatial);
    dev.power_w = Num(d, "power_w", where, out, /*required=*/false);
    if (!devices.emplace(d["name"].get<std::string>(), dev).second) {
      out.push_back(fmt::format("{}: device '{}' is listed twice", where, Short(d["name"].get<std::string>())));
    }
  }
  return true;
}

// One operator: its device, times, cost, slowdown and crossbars, checked
// against each other; added to the totals.
void ReadOperator(const nlohmann::json& o, size_t i, Parsed& p, std::vector<std::string>& out) {
  std::string where = fmt::format("operators[{}]", i);
  if (!o.is_object()) {
    out.push_back(where + ": not an object");
    return;
  }
  Op& op = p.ops[i];
  op.name = o.contains("name") && o["name"].is_string() ? Short(o["name"].get<std::string>()) : where;
  where = fmt::format("operator '{}'", op.name);
  if (!o.contains("id") || !o["id"].is_number_integer()) {
    out.push_back(where + ": missing integer 'id'");
    return;
  }
  int id = o["id"].get<int>();
  if (!p.by_id.emplace(id, static_cast<int>(i)).second) out.push_back(fmt::format("{}: id {} is used twice", where, id));
  if (!o.contains("device") || !o["device"].is_string()) {
    out.push_back(where + ": missing 'device'");
    return;
  }
  op.device = o["device"].get<std::string>();
  auto dev = p.devices.find(op.device);
  if (dev == p.devices.end()) {
    out.push_back(fmt::format("{}: device '{}' is not in 'devices'", where, Short(op.device)));
    return;
  }
  auto start = Num(o, "start_us", where, out), finish = Num(o, "finish_us", where, out);
  if (!start || !finish) return;
  op.start = *start;
  op.finish = *finish;
  if (op.start < -kValidateTolerance) out.push_back(fmt::format("{}: starts before 0 ({} µs)", where, op.start));
  if (!o.contains("cost_us") || !o["cost_us"].is_object()) {
    out.push_back(where + ": missing 'cost_us'");
    return;
  }
  const auto& costs = o["cost_us"];
  if (!costs.contains(op.device) || costs[op.device].is_null()) {
    out.push_back(fmt::format("{}: runs on '{}', where it is unsupported (cost_us is null)", where, Short(op.device)));
    return;
  }
  auto cost = Num(costs, op.device.c_str(), where + " cost_us", out);
  if (!cost) return;
  op.cost = *cost;
  if (o.contains("slowdown") && !o["slowdown"].is_null()) {
    auto sd = Num(o, "slowdown", where, out);
    if (sd) {
      op.slowdown = *sd;
      if (*sd < 1 - kValidateTolerance) out.push_back(fmt::format("{}: slowdown {} < 1", where, *sd));
    }
  }
  op.request = o.contains("request") && o["request"].is_number_integer() ? o["request"].get<int>() : 0;
  op.crossbars = Num(o, "crossbars", where, out, /*required=*/false);
  if (!Near(op.finish - op.start, op.cost * op.slowdown)) {
    out.push_back(fmt::format("{}: finish − start = {} µs, but cost × slowdown on '{}' = {} µs", where,
                              op.finish - op.start, Short(op.device), op.cost * op.slowdown));
  }
  // The operator's own energy on its device (op_energy_uj), beyond power × time.
  double own_uj = 0.0;
  if (o.contains("op_energy_uj") && o["op_energy_uj"].is_object() && o["op_energy_uj"].contains(op.device)) {
    if (auto e = Num(o["op_energy_uj"], op.device.c_str(), where + " op_energy_uj", out)) {
      own_uj = *e;
      if (own_uj < 0) out.push_back(fmt::format("{}: op_energy_uj on '{}' is negative", where, Short(op.device)));
    }
  }
  if (dev->second.power_w) {
    p.energy_sum += op.cost * op.slowdown * *dev->second.power_w + own_uj;
  } else {
    p.energy_defined = false;
  }
  p.latest = std::max(p.latest, op.finish);
  op.ok = true;
}

// Edges: precedence with transfers.
void CheckEdges(const nlohmann::json& s, const Parsed& p, ValidationReport& r) {
  auto& out = r.violations;
  if (s.contains("edges") && s["edges"].is_array()) {
    r.edges = static_cast<int>(s["edges"].size());
    for (size_t i = 0; i < s["edges"].size(); ++i) {
      const auto& e = s["edges"][i];
      std::string where = fmt::format("edges[{}]", i);
      if (!e.is_object() || !e.contains("from") || !e.contains("to") || !e["from"].is_number_integer() ||
          !e["to"].is_number_integer()) {
        out.push_back(where + ": needs integer 'from' and 'to'");
        continue;
      }
      auto fu = p.by_id.find(e["from"].get<int>()), fv = p.by_id.find(e["to"].get<int>());
      if (fu == p.by_id.end() || fv == p.by_id.end()) {
        out.push_back(where + ": names an operator id that does not exist");
        continue;
      }
      const Op& u = p.ops[fu->second];
      const Op& v = p.ops[fv->second];
      if (!u.ok || !v.ok) continue;
      if (u.request != v.request) {
        out.push_back(fmt::format("{}: '{}' and '{}' belong to different requests", where, u.name, v.name));
      }
      double transfer = 0;
      if (u.device != v.device) {
        auto t = Num(e, "transfer_us", where, out);
        if (!t) continue;
        transfer = *t;
        if (transfer < 0) out.push_back(fmt::format("{}: negative transfer_us", where));
      }
      if (!Below(u.finish + transfer, v.start)) {
        out.push_back(fmt::format("precedence: '{}' starts at {} µs before its input from '{}' arrives at {} µs "
                                  "(finish {} + transfer {})",
                                  v.name, v.start, u.name, u.finish + transfer, u.finish, transfer));
      }
    }
  } else {
    out.push_back("'edges' is missing");
  }
}

// Serial devices: no overlap. Spatial devices: capacity.
void CheckDevices(Parsed& p, std::vector<std::string>& out) {
  std::map<std::string, std::vector<const Op*>> on;
  for (const Op& op : p.ops) {
    if (op.ok) on[op.device].push_back(&op);
  }
  for (auto& [name, list] : on) {
    const Device& dev = p.devices[name];
    if (dev.spatial) {
      double used = 0;
      bool missing = false;
      for (const Op* op : list) {
        if (op->crossbars) used += *op->crossbars;
        else missing = true;
      }
      if (missing) out.push_back(fmt::format("device '{}': an operator on it has no 'crossbars'", Short(name)));
      if (dev.capacity && used > *dev.capacity + 1e-9) {
        out.push_back(fmt::format("capacity: operators on '{}' use {} crossbars, more than its {}", Short(name), used,
                                  *dev.capacity));
      }
      continue;
    }
    std::sort(list.begin(), list.end(), [](const Op* a, const Op* b) {
      return a->start != b->start ? a->start < b->start : a->finish < b->finish;
    });
    for (size_t i = 1; i < list.size(); ++i) {
      if (!Below(list[i - 1]->finish, list[i]->start)) {
        out.push_back(fmt::format("overlap on serial '{}': '{}' [{}, {}] and '{}' [{}, {}]", Short(name), list[i - 1]->name,
                                  list[i - 1]->start, list[i - 1]->finish, list[i]->name, list[i]->start,
                                  list[i]->finish));
      }
    }
  }
}

// The file's makespan and energy against the operators'.
void CheckTotals(const nlohmann::json& s, const Parsed& p, std::vector<std::string>& out) {
  auto makespan = Num(s, "makespan_us", "schedule", out);
  if (makespan && !Near(*makespan, p.latest)) {
    out.push_back(fmt::format("makespan_us = {} but the latest finish is {}", *makespan, p.latest));
  }
  if (s.contains("energy_uj") && !s["energy_uj"].is_null()) {
    auto e = Num(s, "energy_uj", "schedule", out);
    if (e && (!p.energy_defined || !Near(*e, p.energy_sum))) {
      out.push_back(fmt::format("energy_uj = {} but Σ (cost × slowdown × power + op_energy_uj) = {}", *e,
                                p.energy_defined ? fmt::format("{}", p.energy_sum)
                                               : std::string("undefined (a device has no power_w)")));
    }
  }
}

}  // namespace

ValidationReport ValidateScheduleJson(const nlohmann::json& s) {
  ValidationReport r;
  auto& out = r.violations;
  if (!s.is_object()) {
    out.push_back("the schedule is not a JSON object");
    return r;
  }
  // json::value() throws when the key holds another type: test types first.
  if (!s.contains("format") || !s["format"].is_string() || s["format"].get<std::string>() != "hetplan-schedule") {
    out.push_back("'format' is not \"hetplan-schedule\"");
  }
  if (!s.contains("version") || !s["version"].is_number_integer() || s["version"].get<int>() < 1 ||
      s["version"].get<int>() > kScheduleFormatVersion) {
    out.push_back(fmt::format("'version' is not 1 to {} (this validator reads versions 1 to {})",
                              kScheduleFormatVersion, kScheduleFormatVersion));
  }
  Parsed p;
  if (!ReadDevices(s, p, out)) return r;
  // Operators.
  if (!s.contains("operators") || !s["operators"].is_array()) {
    out.push_back("'operators' is missing");
    return r;
  }
  const auto& ops = s["operators"];
  r.operators = static_cast<int>(ops.size());
  p.ops.resize(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) ReadOperator(ops[i], i, p, out);
  CheckEdges(s, p, r);
  CheckDevices(p, out);
  CheckTotals(s, p, out);
  return r;
}

Result<ValidationReport> ValidateScheduleFile(const std::string& path) {
  HETPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path, int64_t{1} << 30));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Error(ErrorCode::kParseError, "{}: not valid JSON; expected a hetplan schedule file", path);
  }
  return ValidateScheduleJson(j);
}

}  // namespace hetplan
