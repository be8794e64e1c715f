#include "hetplan/validate/validator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "hetplan/util/io.h"
#include "validate/validator_internal.h"

namespace hetplan {
namespace validate_internal {

bool Near(double a, double b) {
  return std::fabs(a - b) <= kValidateTolerance * std::max({1.0, std::fabs(a), std::fabs(b)});
}

// A name as quoted in a violation: cut, and with line breaks blanked, so that
// a violation stays one readable line whatever the file holds (a 100 MB
// operator name, a name with a newline).
std::string Short(const std::string& name) {
  std::string s = name.size() <= 80 ? name : name.substr(0, 77) + "...";
  std::replace_if(s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return s;
}

}  // namespace validate_internal

namespace {

using validate_internal::Near;
using validate_internal::Short;

bool Below(double a, double b) {  // a ≤ b within tolerance
  return a <= b + kValidateTolerance * std::max({1.0, std::fabs(a), std::fabs(b)});
}

// Times compared as positions in the schedule (precedence, overlap, the
// makespan) are judged within kValidateTolerance of the schedule's length,
// not of their absolute value: a schedule started 10^8 µs late gains no
// slack. Set by ValidateScheduleJson before any check.
thread_local double time_slack = kValidateTolerance;
bool NearT(double a, double b) { return std::fabs(a - b) <= time_slack; }
bool BelowT(double a, double b) { return a <= b + time_slack; }

struct Device {
  int index = 0;  // in devices[]
  std::string kind;
  bool spatial = false;
  std::optional<double> capacity;
  std::optional<double> power_w;
  std::optional<double> shared_adcs;  // a pool its operators share
  // Reprogramming: ns per row written, pJ per row, the endurance budget.
  bool reprogram = false;
  double write_ns_per_row = 0, write_pj_per_row = 0, endurance = 0, lifetime = 0;
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
  std::optional<double> adcs;  // held of its device's shared pool
  bool rewritten = false;       // has a write: its crossbars are its own from start to finish only
  std::vector<std::pair<double, double>> ids;  // crossbar_ids ranges
  bool has_ids = false;
  int64_t request = 0;
  double replicas = 1;  // a stream's: copies of its weights on a spatial device
  bool ok = false;
};

// What the checks share: the devices by name, the operators as read, ids to
// their index, and the totals the file's makespan and energy must equal.
struct Parsed {
  std::map<std::string, Device> devices;
  std::vector<Op> ops;
  std::map<int64_t, int> by_id;
  double latest = 0;
  double energy_sum = 0.0;
  bool energy_defined = true;
  // A stream's cyclic schedule: every input runs each operator and transfer
  // at its time + i × II; and the transfers as they hold the link between
  // their devices (by "a|b", a < b).
  std::optional<double> ii;
  struct Slot {
    std::string name;
    double start, length;
  };
  std::map<std::string, std::vector<Slot>> links;
};

// A stream's resource is used at most once at any moment of the cycle: the
// slots [start, start + length) taken modulo the II are at most II long and
// pairwise disjoint.
void CheckModulo(const std::string& what, double ii, const std::vector<Parsed::Slot>& slots,
                 std::vector<std::string>& out) {
  std::vector<std::pair<double, const Parsed::Slot*>> on;
  for (const Parsed::Slot& s : slots) {
    if (Near(s.length, 0)) continue;
    if (!Below(s.length, ii)) {
      out.push_back(fmt::format("stream: '{}' takes {} µs of {}, longer than the II ({} µs)", s.name, s.length, what, ii));
      return;
    }
    double r = std::fmod(std::max(s.start, 0.0), ii);
    if (Near(r, ii)) r = 0;
    on.emplace_back(r, &s);
  }
  std::sort(on.begin(), on.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  if (on.size() < 2) return;
  for (size_t i = 0; i < on.size(); ++i) {
    const size_t j = (i + 1) % on.size();
    const double next = j == 0 ? on[0].first + ii : on[j].first;
    if (!Below(on[i].first + on[i].second->length, next)) {
      out.push_back(fmt::format("stream: '{}' and '{}' overlap on {} within one II of {} µs ({} µs into the cycle "
                                "for {} µs, and {} µs into it)",
                                on[i].second->name, on[j].second->name, what, ii, on[i].first,
                                on[i].second->length, on[j].first));
      return;  // one line per resource
    }
  }
}

// A stream operator's replicas and stage, and its time with its copies:
// cost − mvm_us + ceil(mvms / replicas) × mvm_us / mvms (the copies share its
// MVMs). Returns the cost to check finish − start against.
double ReadStreamOperator(const nlohmann::json& o, const Device& dev, double ii, Op& op, const std::string& where,
                          std::vector<std::string>& out) {
  if (!o.contains("replicas") || !o["replicas"].is_number_integer() || o["replicas"].get<int64_t>() < 1) {
    out.push_back(where + ": a stream's operator needs an integer 'replicas' ≥ 1");
    return op.cost;
  }
  op.replicas = static_cast<double>(o["replicas"].get<int64_t>());
  if (op.start / ii > 1e15) {
    out.push_back(fmt::format("{}: starts {} µs in, more than 10^15 initiation intervals of {} µs", where, op.start, ii));
    return op.cost;
  }
  if (!o.contains("stage") || !o["stage"].is_number_integer() ||
      o["stage"].get<int64_t>() != static_cast<int64_t>(std::floor(op.start / ii + 1e-9))) {
    out.push_back(fmt::format("{}: 'stage' must be floor(start_us / II) = {}", where,
                              static_cast<int64_t>(std::floor(op.start / ii + 1e-9))));
  }
  if (op.replicas == 1) return op.cost;
  if (!dev.spatial) {
    out.push_back(fmt::format("{}: {} replicas on serial '{}'; only a spatial device holds copies", where, op.replicas,
                              Short(op.device)));
    return op.cost;
  }
  const bool counted = o.contains("mvms") && o["mvms"].is_object() && o["mvms"].contains(op.device) &&
                       o.contains("mvm_us") && o["mvm_us"].is_object() && o["mvm_us"].contains(op.device);
  if (!counted) {
    out.push_back(fmt::format("{}: {} replicas on '{}' but no mvms and mvm_us there to time them", where, op.replicas,
                              Short(op.device)));
    return op.cost;
  }
  auto n = Num(o["mvms"], op.device.c_str(), where + " mvms", out);
  auto us = Num(o["mvm_us"], op.device.c_str(), where + " mvm_us", out);
  if (!n || !us || *n < 1 || *us < 0 || *us > op.cost * (1 + kValidateTolerance)) {
    out.push_back(where + ": mvms must be ≥ 1 and mvm_us within cost_us");
    return op.cost;
  }
  return op.cost - *us + std::ceil(*n / op.replicas) * *us / *n;
}

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
    dev.index = static_cast<int>(i);
    dev.kind = d.contains("kind") && d["kind"].is_string() ? d["kind"].get<std::string>() : "";
    std::string exec = d.contains("execution") && d["execution"].is_string() ? d["execution"].get<std::string>() : "";
    if (exec != "serial" && exec != "spatial") {
      out.push_back(fmt::format("{} '{}': 'execution' must be serial or spatial", where, Short(d["name"].get<std::string>())));
    }
    dev.spatial = exec == "spatial";
    dev.capacity = Num(d, "capacity_crossbars", where, out, /*required=*/dev.spatial);
    dev.power_w = Num(d, "power_w", where, out, /*required=*/false);
    dev.shared_adcs = Num(d, "shared_adcs", where, out, /*required=*/false);
    if (d.contains("reprogram") && d["reprogram"].is_object()) {
      const auto& rp = d["reprogram"];
      const std::string at = where + " reprogram";
      dev.reprogram = true;
      dev.write_ns_per_row = Num(rp, "write_ns_per_row", at, out).value_or(0);
      dev.write_pj_per_row = Num(rp, "write_energy_pj_per_row", at, out, /*required=*/false).value_or(0);
      dev.endurance = Num(rp, "endurance_writes", at, out).value_or(0);
      dev.lifetime = Num(rp, "lifetime_inferences", at, out).value_or(0);
    }
    if (!devices.emplace(d["name"].get<std::string>(), dev).second) {
      out.push_back(fmt::format("{}: device '{}' is listed twice", where, Short(d["name"].get<std::string>())));
    }
  }
  return true;
}

// A rewritten operator's write (operators[].write) and, on a reprogramming
// device, its crossbar_ids: the write starts with the operator, takes
// rows × write_ns_per_row, costs rows_written × write_energy_pj_per_row, on a
// device that reprograms. Returns write_us (0 without a write).
double ReadWrite(const nlohmann::json& o, const Device& dev, Op& op, const std::string& where,
                 std::vector<std::string>& out) {
  if (o.contains("crossbar_ids") && o["crossbar_ids"].is_array()) {
    op.has_ids = true;
    for (const auto& r : o["crossbar_ids"]) {
      if (!r.is_array() || r.size() != 2 || !r[0].is_number_integer() || !r[1].is_number_integer()) {
        out.push_back(where + ": crossbar_ids holds an entry that is not [first, last]");
        continue;
      }
      op.ids.push_back({r[0].get<double>(), r[1].get<double>()});
    }
  }
  if (!o.contains("write") || o["write"].is_null()) return 0;
  const std::string at = where + " write";
  const auto& w = o["write"];
  op.rewritten = true;
  if (!dev.reprogram) {
    out.push_back(fmt::format("{}: is rewritten on '{}', which does not reprogram", where, Short(op.device)));
    return 0;
  }
  const auto start = Num(w, "start_us", at, out), finish = Num(w, "finish_us", at, out);
  const auto write_us = Num(w, "write_us", at, out), rows = Num(w, "rows", at, out);
  const auto rows_written = Num(w, "rows_written", at, out), energy = Num(w, "energy_uj", at, out);
  if (!start || !finish || !write_us || !rows || !rows_written || !energy) return write_us.value_or(0);
  if (*write_us < 0 || *rows < 0 || *rows_written < 0 || *energy < 0) {
    out.push_back(fmt::format("{}: write_us {}, rows {}, rows_written {} and energy_uj {} must all be ≥ 0", where,
                              *write_us, *rows, *rows_written, *energy));
  }
  if (!NearT(*start, op.start) || !NearT(*finish, op.start + *write_us)) {
    out.push_back(fmt::format("{}: the write runs [{}, {}] µs, not from the operator's start {} for write_us {}", where,
                              *start, *finish, op.start, *write_us));
  }
  if (!Near(*write_us, *rows * dev.write_ns_per_row * 1e-3)) {
    out.push_back(fmt::format("{}: write_us = {}, but {} rows × {} ns = {} µs", where, *write_us, *rows,
                              dev.write_ns_per_row, *rows * dev.write_ns_per_row * 1e-3));
  }
  if (!Near(*energy, *rows_written * dev.write_pj_per_row * 1e-6)) {
    out.push_back(fmt::format("{}: write energy_uj = {}, but {} rows × {} pJ = {} µJ", where, *energy, *rows_written,
                              dev.write_pj_per_row, *rows_written * dev.write_pj_per_row * 1e-6));
  }
  return *write_us;
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
  const int64_t id = o["id"].get<int64_t>();
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
  for (const auto& [pu, c] : costs.items()) {  // no PU's cost is below 0
    if (c.is_number() && c.get<double>() < 0) {
      out.push_back(fmt::format("{}: cost_us on '{}' is negative ({} µs)", where, Short(pu), c.get<double>()));
    }
  }
  if (o.contains("slowdown") && !o["slowdown"].is_null()) {
    auto sd = Num(o, "slowdown", where, out);
    if (sd) {
      op.slowdown = *sd;
      if (*sd < 1 - kValidateTolerance) out.push_back(fmt::format("{}: slowdown {} < 1", where, *sd));
    }
  }
  op.request = o.contains("request") && o["request"].is_number_integer() ? o["request"].get<int64_t>() : 0;
  op.crossbars = Num(o, "crossbars", where, out, /*required=*/false);
  if (op.crossbars && *op.crossbars < 0) {
    out.push_back(fmt::format("{}: crossbars {} is negative", where, *op.crossbars));
    op.crossbars = 0;
  }
  if (o.contains("adcs") && o["adcs"].is_object() && o["adcs"].contains(op.device)) {
    op.adcs = Num(o["adcs"], op.device.c_str(), where + " adcs", out);
  }
  if (p.ii) op.cost = ReadStreamOperator(o, dev->second, *p.ii, op, where, out);
  const double write_us = ReadWrite(o, dev->second, op, where, out);
  if (!Near(op.finish - op.start, op.cost * op.slowdown + write_us)) {
    out.push_back(fmt::format("{}: finish − start = {} µs, but {}cost × slowdown on '{}' = {} µs", where,
                              op.finish - op.start, op.rewritten ? "write_us + " : "", Short(op.device),
                              op.cost * op.slowdown + write_us));
  }
  // The operator's own energy on its device (op_energy_uj), beyond power × time.
  double own_uj = 0.0;
  if (o.contains("op_energy_uj") && o["op_energy_uj"].is_object() && o["op_energy_uj"].contains(op.device)) {
    if (auto e = Num(o["op_energy_uj"], op.device.c_str(), where + " op_energy_uj", out)) {
      own_uj = *e;
      if (own_uj < 0) out.push_back(fmt::format("{}: op_energy_uj on '{}' is negative", where, Short(op.device)));
    }
  }
  if (op.rewritten && o["write"].contains("energy_uj") && o["write"]["energy_uj"].is_number()) {
    own_uj += o["write"]["energy_uj"].get<double>();
  }
  if (dev->second.power_w) {
    p.energy_sum += (op.cost * op.slowdown + write_us) * *dev->second.power_w + own_uj;
  } else {
    p.energy_defined = false;
  }
  p.latest = std::max(p.latest, op.finish);
  op.ok = true;
}

// Edges: precedence with transfers.
void CheckEdges(const nlohmann::json& s, Parsed& p, ValidationReport& r) {
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
      auto fu = p.by_id.find(e["from"].get<int64_t>()), fv = p.by_id.find(e["to"].get<int64_t>());
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
      // A stream's transfer holds the link between the two devices from its start.
      double sent = u.finish;
      if (p.ii && u.device != v.device) {
        auto ts = Num(e, "transfer_start_us", where, out);
        if (!ts) continue;
        if (!BelowT(u.finish, *ts)) {
          out.push_back(fmt::format("{}: the transfer from '{}' starts at {} µs, before it finishes at {} µs", where,
                                    u.name, *ts, u.finish));
        }
        sent = std::max(sent, *ts);
        const bool ordered = p.devices[u.device].index < p.devices[v.device].index;
        const std::string& a = ordered ? u.device : v.device;
        const std::string& b = ordered ? v.device : u.device;
        p.links[Short(a) + "-" + Short(b)].push_back({fmt::format("transfer {} -> {}", u.name, v.name), *ts, transfer});
      }
      if (!BelowT(sent + transfer, v.start)) {
        out.push_back(fmt::format("precedence: '{}' starts at {} µs before its input from '{}' arrives at {} µs "
                                  "(finish {} + transfer {})",
                                  v.name, v.start, u.name, sent + transfer, u.finish, transfer));
      }
    }
  } else {
    out.push_back(s.contains("edges") ? "'edges' is not a list of {from, to, ...}" : "'edges' is missing");
  }
}

// A shared ADC pool: at every start of an operator on the device, the ADCs
// held by the operators running then (start ≤ t < finish; operators that
// take no time hold nothing) are at most the pool.
void CheckSharedAdcs(const std::string& name, double pool, const std::vector<const Op*>& list,
                     std::vector<std::string>& out) {
  for (const Op* op : list) {
    if (!op->adcs) {
      out.push_back(fmt::format("device '{}' shares {} ADCs, but operator '{}' on it has no adcs['{}']", Short(name),
                                pool, op->name, Short(name)));
      return;
    }
    if (*op->adcs < 0) out.push_back(fmt::format("operator '{}': adcs on '{}' is negative", op->name, Short(name)));
  }
  // Swept in time order (n log n): at each start t (within the slack), the
  // operators with start ≤ t < finish hold their ADCs.
  std::vector<const Op*> timed;
  for (const Op* op : list) {
    if (!Near(op->start, op->finish)) timed.push_back(op);
  }
  std::vector<const Op*> by_finish = timed;
  std::sort(timed.begin(), timed.end(), [](const Op* a, const Op* b) { return a->start < b->start; });
  std::sort(by_finish.begin(), by_finish.end(), [](const Op* a, const Op* b) { return a->finish < b->finish; });
  double held = 0;
  size_t started = 0, finished = 0;
  for (const Op* at : timed) {
    const double t = at->start + time_slack;
    while (started < timed.size() && timed[started]->start <= t) held += *timed[started++]->adcs;
    while (finished < by_finish.size() && by_finish[finished]->finish <= t) held -= *by_finish[finished++]->adcs;
    if (held <= pool + 1e-9) continue;
    std::string who;  // named once, for the line
    for (const Op* op : timed) {
      if (op->start <= t && op->finish > t) who += (who.empty() ? "'" : ", '") + op->name + "'";
    }
    out.push_back(fmt::format("shared ADCs: at {} µs the operators running on '{}' ({}) hold {} ADCs, more than its {}",
                              at->start, Short(name), Short(who), held, pool));
    return;  // one line per device
  }
}

// A reprogramming device: every operator on it names as many physical
// crossbars as it needs, within the capacity; two operators share a crossbar
// only when both are rewritten and do not run at the same time (a resident
// one holds its crossbars for the whole inference); and the endurance budget
// holds: lifetime × Σ rewritten crossbars ≤ endurance × crossbars no resident
// operator holds.
void CheckReprogram(const std::string& name, const Device& dev, const std::vector<const Op*>& list,
                    std::vector<std::string>& out) {
  double resident = 0, written = 0;
  // Every range of every operator, by its first crossbar: (first, last, operator).
  std::vector<std::tuple<double, double, const Op*>> ranges;
  for (const Op* op : list) {
    const double need = op->crossbars.value_or(0);
    (op->rewritten ? written : resident) += need;
    double named = 0;
    std::vector<std::pair<double, double>> own = op->ids;
    std::sort(own.begin(), own.end());
    for (size_t k = 0; k < own.size(); ++k) {
      const auto [first, last] = own[k];
      named += last - first + 1;
      if (first < 0 || last < first || (dev.capacity && last >= *dev.capacity)) {
        out.push_back(fmt::format("crossbars: '{}' names crossbars [{}, {}], outside 0 to {} of '{}'", op->name, first,
                                  last, dev.capacity.value_or(0) - 1, Short(name)));
      }
      if (k > 0 && first <= own[k - 1].second) {
        out.push_back(fmt::format("crossbars: '{}' names crossbar {} of '{}' twice in its crossbar_ids", op->name, first,
                                  Short(name)));
        break;
      }
      ranges.emplace_back(first, last, op);
    }
    if (!op->has_ids || named != need) {
      out.push_back(fmt::format("crossbars: '{}' on '{}' needs {} crossbars but crossbar_ids names {}", op->name,
                                Short(name), need, named));
    }
  }
  // Two operators share a crossbar only when both are rewritten and never run
  // at once. Sorted by first crossbar, each range meets only the ranges
  // before it that reach it (linear in the ranges when few overlap).
  std::sort(ranges.begin(), ranges.end(),
            [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  std::set<std::pair<const Op*, const Op*>> reported;
  std::vector<size_t> reaching;  // ranges whose last crossbar is at or past the current first
  for (size_t k = 0; k < ranges.size(); ++k) {
    const auto& [first, last, y] = ranges[k];
    std::erase_if(reaching, [&](size_t j) { return std::get<1>(ranges[j]) < first; });
    for (size_t j : reaching) {
      const Op& x = *std::get<2>(ranges[j]);
      if (&x == y || (x.rewritten && y->rewritten && (BelowT(x.finish, y->start) || BelowT(y->finish, x.start)))) {
        continue;
      }
      if (!reported.insert({std::min(&x, y), std::max(&x, y)}).second) continue;
      out.push_back(fmt::format("crossbars: '{}' and '{}' both hold crossbar {} of '{}'{}", x.name, y->name, first,
                                Short(name), x.rewritten && y->rewritten ? " while both run" : " (a resident operator's)"));
    }
    reaching.push_back(k);
  }
  if (written > 0 && dev.capacity &&
      dev.lifetime * written > dev.endurance * (*dev.capacity - resident) * (1 + kValidateTolerance)) {
    out.push_back(fmt::format("endurance: {} inferences × {} crossbars rewritten each = {} crossbar writes, more than "
                              "{} writes × the {} crossbars no resident operator holds on '{}'",
                              dev.lifetime, written, dev.lifetime * written, dev.endurance, *dev.capacity - resident,
                              Short(name)));
  }
}

// Serial devices: no overlap (a stream's: none within one II). Spatial devices:
// capacity (a stream's: with replicas, and no operator longer than the II),
// and a shared ADC pool.
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
        if (!op->crossbars) missing = true;
        else if (!op->rewritten) used += op->replicas * *op->crossbars;  // rewritten: CheckReprogram
        // A stream: each operator's crossbars serve one input at a time.
        if (p.ii && !Below(op->finish - op->start, *p.ii)) {
          out.push_back(fmt::format("stream: '{}' runs {} µs on '{}', longer than the II ({} µs)", op->name,
                                    op->finish - op->start, Short(name), *p.ii));
        }
      }
      if (p.ii && (dev.shared_adcs || dev.reprogram)) {
        out.push_back(fmt::format("stream: '{}' shares ADCs or reprograms, which a stream's schedule does not model",
                                  Short(name)));
      }
      if (missing) out.push_back(fmt::format("device '{}': an operator on it has no 'crossbars'", Short(name)));
      if (dev.capacity && used > *dev.capacity + 1e-9) {
        out.push_back(fmt::format("capacity: operators on '{}' use {} crossbars, more than its {}", Short(name), used,
                                  *dev.capacity));
      }
      if (dev.shared_adcs) CheckSharedAdcs(name, *dev.shared_adcs, list, out);
      if (dev.reprogram) CheckReprogram(name, dev, list, out);
      continue;
    }
    if (p.ii) {
      std::vector<Parsed::Slot> slots;
      for (const Op* op : list) slots.push_back({op->name, op->start, op->finish - op->start});
      CheckModulo(fmt::format("serial '{}'", Short(name)), *p.ii, slots, out);
      continue;
    }
    std::sort(list.begin(), list.end(), [](const Op* a, const Op* b) {
      return a->start != b->start ? a->start < b->start : a->finish < b->finish;
    });
    for (size_t i = 1; i < list.size(); ++i) {
      if (!BelowT(list[i - 1]->finish, list[i]->start)) {
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
  if (makespan && !NearT(*makespan, p.latest)) {
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

// The schedule's length: latest finish − earliest start over the operators
// whose times are numbers (0 when none are).
double ScheduleLength(const nlohmann::json& ops) {
  double first = 0, last = 0;
  bool any = false;
  for (const auto& o : ops) {
    if (!o.is_object() || !o.contains("start_us") || !o.contains("finish_us") || !o["start_us"].is_number() ||
        !o["finish_us"].is_number()) {
      continue;
    }
    const double a = o["start_us"].get<double>(), b = o["finish_us"].get<double>();
    if (!std::isfinite(a) || !std::isfinite(b)) continue;
    first = any ? std::min(first, a) : a;
    last = any ? std::max(last, b) : b;
    any = true;
  }
  return any ? std::max(0.0, last - first) : 0.0;
}

// solver.termination, when there, is one of its version's names: version 3
// renamed the three that were also statuses (optimal, heuristic, infeasible).
void CheckTermination(const nlohmann::json& s, std::vector<std::string>& out) {
  if (!s.contains("solver") || !s["solver"].is_object() || !s["solver"].contains("termination")) return;
  const nlohmann::json& t = s["solver"]["termination"];
  const bool v3 = s.contains("version") && s["version"].is_number_integer() && s["version"].get<int>() >= 3;
  static const std::set<std::string> kV3 = {"proved",      "time_limit",  "node_limit", "completed",
                                            "proved_infeasible", "interrupted", "numerical"};
  static const std::set<std::string> kV2 = {"optimal",    "time_limit",  "node_limit", "heuristic",
                                            "infeasible", "interrupted", "numerical"};
  const std::set<std::string>& names = v3 ? kV3 : kV2;
  if (!t.is_string() || !names.count(t.get<std::string>())) {
    out.push_back(fmt::format("solver.termination {} is not one of {} (schedule format version {})", t.dump(),
                              fmt::join(names, ", "), v3 ? "3" : "1-2"));
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
  CheckTermination(s, out);
  Parsed p;
  if (!ReadDevices(s, p, out)) return r;
  if (s.contains("initiation_interval_us") && !s["initiation_interval_us"].is_null()) {
    p.ii = Num(s, "initiation_interval_us", "schedule", out);
    if (p.ii && *p.ii <= 0) {
      out.push_back("initiation_interval_us must be > 0");
      p.ii.reset();
    }
    auto rate = Num(s, "inputs_per_s", "schedule", out, /*required=*/false);
    if (p.ii && rate && !Near(*rate, 1e6 / *p.ii)) {
      out.push_back(fmt::format("inputs_per_s = {} but 10^6 / initiation_interval_us = {}", *rate, 1e6 / *p.ii));
    }
  }
  // Operators.
  if (!s.contains("operators") || !s["operators"].is_array()) {
    out.push_back("'operators' is missing");
    return r;
  }
  const auto& ops = s["operators"];
  r.operators = static_cast<int>(ops.size());
  time_slack = kValidateTolerance * std::max(1.0, ScheduleLength(ops));
  p.ops.resize(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) ReadOperator(ops[i], i, p, out);
  CheckEdges(s, p, r);
  CheckDevices(p, out);
  for (const auto& [link, slots] : p.links) CheckModulo("link " + link, *p.ii, slots, out);
  CheckTotals(s, p, out);
  // Recomputed from the file's inputs: the devices against its platform
  // block, the transfers from bytes and links, the operator counts.
  std::map<int64_t, std::string> device_of;
  std::map<int64_t, int64_t> per_request;
  for (const auto& [id, i] : p.by_id) {
    if (p.ops[static_cast<size_t>(i)].ok) device_of[id] = p.ops[static_cast<size_t>(i)].device;
    ++per_request[p.ops[static_cast<size_t>(i)].request];
  }
  validate_internal::CheckDevicesAgainstPlatform(s, out);
  validate_internal::CheckTransfers(s, device_of, out);
  validate_internal::CheckCounts(s, per_request, out);
  validate_internal::CheckCimLayouts(s, out);
  validate_internal::CheckSummary(s, out);
  return r;
}

Result<ValidationReport> ValidateScheduleFile(const std::string& path) {
  HETPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path, int64_t{1} << 30));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Error(ErrorCode::kParseError, "{}: not valid JSON; expected a hetplan schedule file", path);
  }
  if (j.is_object() && j.contains("format") && j["format"] == "hetplan-generation") return ValidateGenerationFile(j, path);
  return ValidateScheduleJson(j);
}

}  // namespace hetplan
