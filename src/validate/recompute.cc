// What the validator recomputes from the schedule file's own inputs rather
// than reading (validate/validator_internal.h): the devices against the
// platform block the file states, every cross-device transfer from its bytes
// and the link between the two devices, and the counts of operators the
// model block records.
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "validate/validator_internal.h"

namespace hetplan::validate_internal {
namespace {

// 10.24 GB/s moves 10,240 bytes a µs (cost/cim_model.h's TransferUs).
constexpr double kBytesPerUsPerGbps = 1e3;

std::optional<double> Number(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  const double v = j[key].get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::string Text(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// The platform block's link between devices a and b, or null.
const nlohmann::json* LinkBetween(const nlohmann::json& platform, const std::string& a, const std::string& b) {
  if (!platform.contains("links") || !platform["links"].is_array()) return nullptr;
  for (const auto& l : platform["links"]) {
    const std::string x = Text(l, "a"), y = Text(l, "b");
    if ((x == a && y == b) || (x == b && y == a)) return &l;
  }
  return nullptr;
}

}  // namespace

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

}  // namespace hetplan::validate_internal
