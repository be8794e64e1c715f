// What the validator recomputes from the schedule file's own inputs rather
// than reading (validate/validator_internal.h): the devices against the
// platform block the file states, every cross-device transfer from its bytes
// and the link between the two devices, and the counts of operators the
// model block records.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "hetplan/validate/validator.h"
#include "validate/validator_internal.h"

namespace hetplan::validate_internal {
namespace {

// 10.24 GB/s moves 10,240 bytes a µs (cost/cim_model.h's TransferUs).
constexpr double kBytesPerUsPerGbps = 1e3;

// The platform block's link between devices a and b, or null.
const nlohmann::json* LinkBetween(const nlohmann::json& platform, const std::string& a, const std::string& b) {
  if (!platform.contains("links") || !platform["links"].is_array()) return nullptr;
  for (const auto& l : platform["links"]) {
    const std::string x = Text(l, "a"), y = Text(l, "b");
    if ((x == a && y == b) || (x == b && y == a)) return &l;
  }
  return nullptr;
}

// `what` of device `name`: "none" or the number.
std::string Shown(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : std::string("none"); }

// A device's power, shared ADC pool and writes against its PU in the
// platform block. A PU without power_w takes its cost table's (a `pu` row,
// not in the file) or draws 0 (a CIM whose circuit prices every MVM,
// cost/build.cc): then any power ≥ 0 stands.
void CheckDeviceParameters(const std::string& name, const nlohmann::json& d, const nlohmann::json& pu,
                           std::vector<std::string>& out) {
  const auto power = Number(d, "power_w"), pu_power = Number(pu, "power_w");
  if (pu_power ? power != pu_power : power.value_or(0) < 0) {
    out.push_back(fmt::format("platform: device '{}' says power_w {} but the platform's PU says {}", Short(name),
                              Shown(power), Shown(pu_power)));
  }
  const auto pool = Number(d, "shared_adcs"), pu_pool = Number(pu, "shared_adcs");
  if (pool != pu_pool) {
    out.push_back(fmt::format("platform: device '{}' says shared_adcs {} but the platform's PU says {}", Short(name),
                              Shown(pool), Shown(pu_pool)));
  }
  const bool reprograms = pu.contains("reprogram") && pu["reprogram"].is_boolean() && pu["reprogram"].get<bool>();
  const bool said = d.contains("reprogram") && d["reprogram"].is_object();
  if (reprograms != said) {
    out.push_back(fmt::format("platform: device '{}' {} but the platform's PU {}", Short(name),
                              said ? "reprograms" : "does not reprogram", reprograms ? "does" : "does not"));
    return;
  }
  if (!said) return;
  for (const char* key : {"write_ns_per_row", "write_energy_pj_per_row", "endurance_writes", "lifetime_inferences"}) {
    const auto v = Number(d["reprogram"], key), want = Number(pu, key);
    if (v.value_or(0) != want.value_or(0)) {
      out.push_back(fmt::format("platform: device '{}' says {} {} but the platform's PU says {}", Short(name), key,
                                Shown(v), Shown(want)));
    }
  }
}

}  // namespace

std::optional<double> Number(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  const double v = j[key].get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::string Text(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

void CheckDevicesAgainstPlatform(const nlohmann::json& s, std::vector<std::string>& out) {
  if (!s.contains("platform") || !s["platform"].is_object()) return;  // older files: nothing to compare with
  const auto& platform = s["platform"];
  std::set<std::string> pus;
  if (platform.contains("pus") && platform["pus"].is_array()) {
    for (const auto& p : platform["pus"]) {
      if (p.is_string()) pus.insert(p.get<std::string>());
    }
  }
  if (!s.contains("devices") || !s["devices"].is_array()) return;
  for (const auto& d : s["devices"]) {
    const std::string name = Text(d, "name");
    if (name.empty()) continue;
    if (!pus.count(name) || !platform.contains(name) || !platform[name].is_object()) {
      out.push_back(fmt::format("platform: device '{}' is not a PU of the file's platform '{}'", Short(name),
                                Short(Text(platform, "name"))));
      continue;
    }
    const auto& pu = platform[name];
    for (const char* key : {"kind", "execution"}) {
      if (Text(d, key) != Text(pu, key)) {
        out.push_back(fmt::format("platform: device '{}' says {} '{}' but the platform's PU says '{}'", Short(name), key,
                                  Short(Text(d, key)), Short(Text(pu, key))));
      }
    }
    if (Text(pu, "execution") == "spatial") {
      const auto capacity = Number(d, "capacity_crossbars"), crossbars = Number(pu, "crossbars");
      if (crossbars && capacity != crossbars) {
        out.push_back(fmt::format("platform: device '{}' says capacity_crossbars {} but the platform's PU has {}",
                                  Short(name), capacity ? fmt::format("{}", *capacity) : std::string("none"),
                                  *crossbars));
      }
    }
    CheckDeviceParameters(name, d, pu, out);
  }
}

void CheckTransfers(const nlohmann::json& s, const std::map<int64_t, std::string>& device_of,
                    std::vector<std::string>& out) {
  if (!s.contains("platform") || !s["platform"].is_object() || !s.contains("edges") || !s["edges"].is_array()) return;
  const auto& platform = s["platform"];
  // BIDENT's concurrent search prices each operator with its H2D and D2H
  // copies, so its edges carry no transfer (the mapping block says so).
  const bool copies_in_costs = s.contains("mapping") && s["mapping"].is_object() &&
                               Text(s["mapping"], "mode") == "concurrent";
  std::map<std::string, double> boundary;  // --boundary-cost fitted: charged on every edge into the device
  if (s.contains("devices") && s["devices"].is_array()) {
    for (const auto& d : s["devices"]) {
      if (auto b = Number(d, "boundary_us")) boundary[Text(d, "name")] = *b;
    }
  }
  for (size_t i = 0; i < s["edges"].size(); ++i) {
    const auto& e = s["edges"][i];
    if (!e.is_object() || !e.contains("from") || !e.contains("to") || !e["from"].is_number_integer() ||
        !e["to"].is_number_integer()) {
      continue;  // CheckEdges says so
    }
    auto u = device_of.find(e["from"].get<int64_t>()), v = device_of.find(e["to"].get<int64_t>());
    if (u == device_of.end() || v == device_of.end() || u->second == v->second) continue;
    const auto stated = Number(e, "transfer_us");
    if (!stated) continue;  // CheckEdges says so
    if (copies_in_costs) {
      if (*stated != 0) {
        out.push_back(fmt::format("edges[{}]: transfer_us = {} in a concurrent mapping, whose operator costs hold "
                                  "their copies (edges carry none)", i, *stated));
      }
      continue;
    }
    const nlohmann::json* link = LinkBetween(platform, u->second, v->second);
    if (link == nullptr) continue;  // a measured hand-off: its table is not in the file
    const auto bytes = Number(e, "bytes"), elements = Number(e, "elements");
    const auto bandwidth = Number(*link, "bandwidth_gbps"), latency = Number(*link, "latency_us");
    const std::string where = fmt::format("edges[{}]", i);
    if (!bytes || !elements || *bytes < 0 || *elements < 0) {
      out.push_back(where + ": a cross-device edge needs non-negative 'bytes' and 'elements' to time its transfer");
      continue;
    }
    if (!bandwidth || *bandwidth <= 0) continue;  // CheckPlatform's matter
    // The link's element size, else a CIM end's, else the tensors' own bytes (cost/build.cc).
    std::optional<double> element = Number(*link, "element_bytes");
    for (const std::string* end : {&u->second, &v->second}) {
      if (!element && platform.contains(*end) && Text(platform[*end], "kind") == "cim") {
        element = Number(platform[*end], "element_bytes");
      }
    }
    const double moved = element ? *elements * *element : *bytes;
    double want = moved <= 0 ? 0 : latency.value_or(0) + moved / (*bandwidth * kBytesPerUsPerGbps);
    if (auto b = boundary.find(v->second); b != boundary.end()) want += b->second;
    if (!Near(*stated, want)) {
      out.push_back(fmt::format("{}: transfer_us = {} but {} bytes over the link '{}'-'{}' ({} GB/s, {} µs latency){} "
                                "take {} µs",
                                where, *stated, moved, Short(u->second), Short(v->second), *bandwidth,
                                latency.value_or(0), boundary.count(v->second) ? " with the receiver's boundary" : "",
                                want));
    }
  }
}

void CheckCounts(const nlohmann::json& s, const std::map<int64_t, int64_t>& per_request,
                 std::vector<std::string>& out) {
  int64_t listed = 0;
  for (const auto& [request, n] : per_request) listed += n;
  if (s.contains("model") && s["model"].is_object()) {
    if (const auto model = Number(s["model"], "operators"); model && static_cast<double>(listed) != *model) {
      out.push_back(fmt::format("completeness: the file lists {} operators but its model block has {}; every "
                                "operator must be scheduled", listed, *model));
    }
  }
  if (!s.contains("requests") || !s["requests"].is_array()) return;
  for (size_t r = 0; r < s["requests"].size(); ++r) {
    const auto want = Number(s["requests"][r], "operators");
    auto it = per_request.find(static_cast<int64_t>(r));
    const int64_t have = it == per_request.end() ? 0 : it->second;
    if (want && static_cast<double>(have) != *want) {
      out.push_back(fmt::format("completeness: request {} has {} operators in the file but {} in its model", r, have,
                                *want));
    }
  }
}

namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return b <= 0 || a <= 0 ? 0 : (a - 1) / b + 1; }

// A CIM PU's geometry from the platform block (cost/cim_model.cc's layout).
struct CimGeometry {
  int64_t rows = 0, cols = 0;
  std::optional<int64_t> bits_per_cell;
  int64_t weight_bits = 8;
  bool differential = false, slices_in_crossbars = false, block_diagonal = true;
  std::optional<int64_t> pool;
  int64_t columns_per_adc = 1;
  std::optional<double> mvm_ns;  // T_mvm when it is the same for every operator
  std::set<std::string> supported;
};

std::optional<CimGeometry> GeometryOf(const nlohmann::json& pu) {
  CimGeometry g;
  const auto rows = Number(pu, "crossbar_rows"), cols = Number(pu, "crossbar_cols");
  if (!rows || !cols || *rows < 1 || *cols < 1) return std::nullopt;
  g.rows = static_cast<int64_t>(*rows);
  g.cols = static_cast<int64_t>(*cols);
  if (auto b = Number(pu, "bits_per_cell")) g.bits_per_cell = static_cast<int64_t>(*b);
  if (auto w = Number(pu, "weight_bits")) g.weight_bits = static_cast<int64_t>(*w);
  g.differential = Text(pu, "signed_weights") == "differential";
  g.slices_in_crossbars = Text(pu, "slice_mapping") == "crossbars";
  g.block_diagonal = Text(pu, "grouped_conv") != "per_group";
  if (auto p = Number(pu, "shared_adcs")) g.pool = static_cast<int64_t>(*p);
  if (auto c = Number(pu, "columns_per_adc"); c && *c >= 1) g.columns_per_adc = static_cast<int64_t>(*c);
  // T_mvm: the block's, unless a circuit with a shared pool times each
  // operator by its crossbars (CimParams::MvmLatencyNs(crossbars)).
  if (auto t = Number(pu, "mvm_latency_ns"); t && *t > 0 && !(g.pool && pu.contains("input_bits"))) g.mvm_ns = *t;
  if (pu.contains("supported_ops") && pu["supported_ops"].is_array()) {
    for (const auto& t : pu["supported_ops"]) {
      if (t.is_string()) g.supported.insert(t.get<std::string>());
    }
  }
  return g;
}

// One operator's weight on the CIM: rows, columns, row and column tiles, copies.
struct Layout {
  int64_t rows = 0, cols = 0, row_tiles = 0, col_tiles = 0, copies = 0;
  int64_t crossbars() const { return row_tiles * col_tiles * copies; }
};

Layout LayoutOf(const CimGeometry& g, int64_t rows, int64_t cols, int64_t bits, int64_t groups, int64_t directions) {
  const int64_t stored = bits > 0 && bits < g.weight_bits ? bits : g.weight_bits;
  const int64_t cells = (g.bits_per_cell ? CeilDiv(stored, *g.bits_per_cell) : 1) * (g.differential ? 2 : 1);
  Layout l;
  l.rows = rows;
  l.cols = g.slices_in_crossbars ? cols : cols * cells;
  if (groups > 1) {
    if (g.block_diagonal) {
      l.rows *= groups;
    } else {
      l.cols = CeilDiv(l.cols, groups);
    }
  }
  l.row_tiles = CeilDiv(l.rows, g.rows);
  l.col_tiles = CeilDiv(l.cols, g.cols);
  l.copies = (g.slices_in_crossbars ? cells : 1) * std::max<int64_t>(directions, 1);
  return l;
}

// An integer field of the operator's weight block, in a sane range.
std::optional<int64_t> WeightField(const nlohmann::json& w, const char* key, int64_t lo) {
  const auto v = Number(w, key);
  if (!v || *v < static_cast<double>(lo) || *v > 1e12 || *v != std::floor(*v)) return std::nullopt;
  return static_cast<int64_t>(*v);
}

// An operator's MVMs on the CIM: n_mvm input vectors (× groups when groups
// run one after another); their time at the PU's T_mvm is a stream's mvm_us
// and at most its cost (loads and stores come on top).
void CheckMvms(const nlohmann::json& o, const CimGeometry& g, const std::string& device, const std::string& where,
               std::vector<std::string>& out) {
  const auto n = WeightField(o["weight"], "n_mvm", 0), groups = WeightField(o["weight"], "groups", 1);
  if (!n || !g.mvm_ns) return;  // files before n_mvm was written; a per-operator T_mvm
  const int64_t mvms = !g.block_diagonal && *groups > 1 ? *n * *groups : *n;
  const double mvm_us = static_cast<double>(mvms) * *g.mvm_ns * 1e-3;
  const auto cost = o.contains("cost_us") ? Number(o["cost_us"], device.c_str()) : std::nullopt;
  if (cost && *cost < mvm_us * (1 - 1e-6)) {
    out.push_back(fmt::format("{}: cost_us on '{}' = {} µs, less than its {} MVMs at {} ns ({} µs)", where,
                              Short(device), *cost, mvms, *g.mvm_ns, mvm_us));
  }
  if (o.contains("mvms") && o["mvms"].is_object() && o["mvms"].contains(device)) {
    const auto stated = Number(o["mvms"], device.c_str());
    const auto stated_us = o.contains("mvm_us") && o["mvm_us"].is_object() ? Number(o["mvm_us"], device.c_str())
                                                                             : std::nullopt;
    if (stated != static_cast<double>(mvms) || !stated_us || !Near(*stated_us, mvm_us)) {
      out.push_back(fmt::format("{}: mvms {} and mvm_us {} on '{}', but its {} input vectors at {} ns are {} MVMs, "
                                "{} µs", where, Shown(stated), Shown(stated_us), Short(device), *n, *g.mvm_ns, mvms,
                                mvm_us));
    }
  }
}

}  // namespace

void CheckCimLayouts(const nlohmann::json& s, std::vector<std::string>& out) {
  if (!s.contains("platform") || !s["platform"].is_object() || !s.contains("operators") || !s["operators"].is_array()) {
    return;
  }
  const auto& platform = s["platform"];
  std::map<std::string, std::optional<CimGeometry>> geometry;  // CIM PUs priced by the CIM model
  for (const auto& [name, pu] : platform.items()) {
    if (pu.is_object() && Text(pu, "kind") == "cim" && Text(pu, "cost_source") == "cim") geometry[name] = GeometryOf(pu);
  }
  for (const auto& o : s["operators"]) {
    if (!o.is_object() || !o.contains("device") || !o["device"].is_string()) continue;
    const std::string device = o["device"].get<std::string>();
    auto g = geometry.find(device);
    if (g == geometry.end() || !g->second) continue;
    const std::string where = fmt::format("operator '{}'", Short(Text(o, "name")));
    const auto& w = o.contains("weight") && o["weight"].is_object() ? o["weight"] : nlohmann::json();
    const auto rows = WeightField(w, "rows", 1), cols = WeightField(w, "cols", 1), bits = WeightField(w, "bits", 0);
    const auto groups = WeightField(w, "groups", 1), directions = WeightField(w, "directions", 1);
    if (!rows || !cols || !bits || !groups || !directions) {
      out.push_back(fmt::format("{}: runs on CIM '{}' but its 'weight' (rows, cols, bits, groups, directions) is "
                                "missing or not whole numbers; the crossbars cannot be recomputed: re-plan",
                                where, Short(device)));
      continue;
    }
    const std::string type = Text(o, "type"), product = Text(w, "product");
    if (!g->second->supported.count(type) && !g->second->supported.count(product)) {
      out.push_back(fmt::format("{}: a {} ({}) runs on CIM '{}', whose supported_ops do not list it", where,
                                Short(type), Short(product), Short(device)));
    }
    const Layout l = LayoutOf(*g->second, *rows, *cols, *bits, *groups, *directions);
    const auto stated = Number(o, "crossbars");
    if (!stated || *stated != static_cast<double>(l.crossbars())) {
      out.push_back(fmt::format("{}: crossbars = {} but its {}×{} weight ({} bits, {} groups, {} directions) takes {} "
                                "crossbars of {}×{} on '{}'",
                                where, stated ? fmt::format("{}", *stated) : std::string("none"), *rows, *cols, *bits,
                                *groups, *directions, l.crossbars(), g->second->rows, g->second->cols, Short(device)));
    }
    if (g->second->pool && o.contains("adcs") && o["adcs"].is_object()) {
      const int64_t want = std::min(l.crossbars() * CeilDiv(g->second->cols, g->second->columns_per_adc),
                                    *g->second->pool);
      const auto held = Number(o["adcs"], device.c_str());
      if (!held || *held != static_cast<double>(want)) {
        out.push_back(fmt::format("{}: holds {} ADCs of '{}' but its {} crossbars need {} of the pool of {}", where,
                                  held ? fmt::format("{}", *held) : std::string("none"), Short(device),
                                  l.crossbars(), want, *g->second->pool));
      }
    }
    CheckMvms(o, *g->second, device, where, out);
    if (o.contains("write") && o["write"].is_object()) {
      const auto rows_stated = Number(o["write"], "rows"), written = Number(o["write"], "rows_written");
      const int64_t want_rows = std::min(l.rows, g->second->rows), want_written = l.rows * l.col_tiles * l.copies;
      if (rows_stated != static_cast<double>(want_rows) || written != static_cast<double>(want_written)) {
        out.push_back(fmt::format("{}: its write says rows {} and rows_written {} but its weight on '{}' writes {} "
                                  "rows at once, {} in all",
                                  where, rows_stated.value_or(-1), written.value_or(-1), Short(device), want_rows,
                                  want_written));
      }
    }
  }
}

namespace {

// Per input, what each resource carries with inputs pipelined
// (solve/throughput.h's StreamLoads): a serial device its operators' costs
// and, with --boundary-cost fitted, its boundary on every edge into it from
// another device; a spatial device its longest operator; a link its
// transfers. `serial` gets the serial devices' loads.
double PipelinedInterval(const nlohmann::json& s, std::map<std::string, double>* serial) {
  std::map<std::string, bool> spatial;
  std::map<std::string, double> boundary;
  for (const auto& d : s["devices"]) {
    spatial[Text(d, "name")] = Text(d, "execution") == "spatial";
    if (auto b = Number(d, "boundary_us")) boundary[Text(d, "name")] = *b;
  }
  std::map<int64_t, std::string> device;
  double interval = 0;
  for (const auto& o : s["operators"]) {
    if (!o.is_object() || !o.contains("id") || !o["id"].is_number_integer()) continue;
    const std::string dev = Text(o, "device");
    device[o["id"].get<int64_t>()] = dev;
    const auto cost = o.contains("cost_us") ? Number(o["cost_us"], dev.c_str()) : std::nullopt;
    if (!cost) continue;
    if (spatial[dev]) {
      interval = std::max(interval, *cost);  // one copy of its weights (a one-request plan's)
    } else {
      (*serial)[dev] += *cost;
    }
  }
  std::map<std::string, double> links;
  for (const auto& e : s["edges"]) {
    if (!e.is_object() || !e.contains("from") || !e.contains("to") || !e["from"].is_number_integer() ||
        !e["to"].is_number_integer()) {
      continue;
    }
    const std::string& a = device[e["from"].get<int64_t>()];
    const std::string& b = device[e["to"].get<int64_t>()];
    if (a == b || a.empty() || b.empty()) continue;
    links[a < b ? a + "|" + b : b + "|" + a] += Number(e, "transfer_us").value_or(0);
    if (!spatial[b]) (*serial)[b] += boundary[b];
  }
  for (const auto& [d, us] : *serial) interval = std::max(interval, us);
  for (const auto& [l, us] : links) interval = std::max(interval, us);
  return interval;
}

}  // namespace

void CheckSummary(const nlohmann::json& s, std::vector<std::string>& out) {
  if (!s.contains("operators") || !s["operators"].is_array() || !s.contains("devices") || !s["devices"].is_array() ||
      !s.contains("edges") || !s["edges"].is_array()) {
    return;  // the structural checks say so
  }
  const auto ii = Number(s, "initiation_interval_us");
  if (!ii && s.contains("inputs_per_s") && !s["inputs_per_s"].is_null()) {
    out.push_back("inputs_per_s is given without an initiation_interval_us to derive it from");
  }
  std::map<std::string, double> serial;
  const double interval = PipelinedInterval(s, &serial);
  if (ii && *ii > 0) {  // a stream: every serial device's load, boundaries included, fits one II
    for (const auto& [d, us] : serial) {
      if (us > *ii * (1 + kValidateTolerance) + 1e-9) {
        out.push_back(fmt::format("stream: serial '{}' is busy {} µs per input (its operators, and its boundary on "
                                  "every edge into it), more than the II of {} µs",
                                  Short(d), us, *ii));
      }
    }
  } else if (const auto stated = Number(s, "pipelined_ii_us"); stated && !s.contains("requests")) {
    if (!Near(*stated, interval)) {
      out.push_back(fmt::format("pipelined_ii_us = {} but the plan's busiest resource carries {} µs per input",
                                *stated, interval));
    }
  }
  // The host alone: every operator's cost on the one serial CPU, end to end.
  const auto& baselines = s.contains("baselines") && s["baselines"].is_object() ? s["baselines"] : nlohmann::json();
  const auto cpu_only = Number(baselines, "cpu_only_us");
  std::vector<std::string> cpus;
  for (const auto& d : s["devices"]) {
    if (Text(d, "kind") == "cpu" && Text(d, "execution") == "serial") cpus.push_back(Text(d, "name"));
  }
  if (cpu_only && cpus.size() == 1 && !s.contains("requests")) {
    double sum = 0;
    bool all = true;
    for (const auto& o : s["operators"]) {
      const auto c = o.is_object() && o.contains("cost_us") ? Number(o["cost_us"], cpus[0].c_str()) : std::nullopt;
      all = all && c.has_value();
      sum += c.value_or(0);
    }
    if (all && !Near(*cpu_only, sum)) {
      out.push_back(fmt::format("baselines.cpu_only_us = {} but every operator's cost on '{}' adds up to {}",
                                *cpu_only, Short(cpus[0]), sum));
    }
  }
  const auto speedup = Number(s, "speedup");
  const auto per_input = ii ? ii : Number(s, "makespan_us");
  if (speedup && cpu_only && per_input && *per_input > 0 && !Near(*speedup, *cpu_only / *per_input)) {
    out.push_back(fmt::format("speedup = {} but baselines.cpu_only_us / {} = {}", *speedup,
                              ii ? "initiation_interval_us" : "makespan_us", *cpu_only / *per_input));
  }
}

}  // namespace hetplan::validate_internal
