// Checks of a cost table against the graph it costs (CheckCostTable) and
// the model it was measured on (CheckProvenance), and the measured hand-off
// curve between two PUs (InterpolateTransferUs): what a table means, apart
// from how it is read and written (cost_table.cc).
#include "hetplan/cost/cost_table.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace hetplan {
namespace {

Status CheckValue(const std::string& label, const std::string& element, std::string_view column,
                  double v, bool positive = false) {
  if (!std::isfinite(v) || v < 0 || (positive && v == 0)) {
    return Error(ErrorCode::kInvalidArgument, "{}: {}: {} is {}; {}", label, element, column,
                 std::isfinite(v) ? fmt::format("{}", v) : "not finite",
                 positive ? "it must be a finite number > 0"
                          : "costs are finite and >= 0 (drop the row when the PU cannot run the operator)");
  }
  return Status::Ok();
}

}  // namespace

Status CheckCostTable(const CostTable& t, const OpGraph& g, const std::string& label) {
  std::unordered_map<std::string, int> id_of;
  for (const Operator& op : g.operators()) id_of.emplace(op.name, op.id);
  std::string made_for;
  if (auto it = t.meta.find("fusion"); it != t.meta.end()) made_for = fmt::format(" (table made with fusion {})", it->second);

  std::set<std::pair<std::string, std::string>> seen;
  std::vector<bool> covered(g.size(), false);
  for (const OpCost& c : t.ops) {
    std::string element = fmt::format("op row '{}' on '{}'", c.op_name, c.pu);
    auto it = id_of.find(c.op_name);
    if (it == id_of.end()) {
      return Error(ErrorCode::kInvalidArgument, "{}: {}: the graph '{}' has no operator of that name{}; "
                   "the table belongs to another model or fusion level: re-profile the model",
                   label, element, g.name(), made_for);
    }
    if (c.op_id >= 0 && c.op_id != it->second) {
      return Error(ErrorCode::kInvalidArgument, "{}: {}: op_id {} but the operator's id is {}; fix or "
                   "clear op_id (names are the key)", label, element, c.op_id, it->second);
    }
    if (c.pu.empty()) {
      return Error(ErrorCode::kInvalidArgument, "{}: {}: no PU name; name the PU as in the platform",
                   label, element);
    }
    HETPLAN_RETURN_IF_ERROR(CheckValue(label, element, "exec_us", c.exec_us));
    HETPLAN_RETURN_IF_ERROR(CheckValue(label, element, "dispatch_us", c.dispatch_us));
    HETPLAN_RETURN_IF_ERROR(CheckValue(label, element, "h2d_us", c.h2d_us));
    HETPLAN_RETURN_IF_ERROR(CheckValue(label, element, "d2h_us", c.d2h_us));
    for (auto [col, v] : {std::pair<std::string_view, const std::optional<double>*>{"p10_us", &c.p10_us},
                          {"p90_us", &c.p90_us},
                          {"in_context_us", &c.in_context_us},
                          {"framework_us", &c.framework_us}}) {
      if (v->has_value()) HETPLAN_RETURN_IF_ERROR(CheckValue(label, element, col, **v));
    }
    if (!seen.emplace(c.op_name, c.pu).second) {
      return Error(ErrorCode::kInvalidArgument, "{}: {}: a second row for the same operator and PU; "
                   "keep one row per (operator, PU)", label, element);
    }
    covered[it->second] = true;
  }
  int uncovered = 0;
  int first = -1;
  for (int v = 0; v < g.size(); ++v) {
    if (covered[v]) continue;
    if (first < 0) first = v;
    ++uncovered;
  }
  if (first >= 0) {
    return Error(ErrorCode::kInfeasible, "{}: operator '{}' (id {}, {}) has no cost on any PU{}; add an "
                 "op row for it or re-profile the model{}", label, g.op(first).name, first,
                 g.op(first).type,
                 uncovered > 1 ? fmt::format(" (nor have {} more operators)", uncovered - 1) : "",
                 made_for);
  }
  for (const auto& [pu, w] : t.power_w) {
    HETPLAN_RETURN_IF_ERROR(CheckValue(label, fmt::format("pu row '{}'", pu), "power_w", w));
  }
  for (const auto& [pu, us] : t.boundary_us) {
    HETPLAN_RETURN_IF_ERROR(CheckValue(label, fmt::format("boundary row '{}'", pu), "exec_us", us));
  }
  for (const Slowdown& s : t.slowdowns) {
    HETPLAN_RETURN_IF_ERROR(CheckValue(
        label, fmt::format("slowdown row '{}' under '{}'", s.run_pu, s.interfere_pu), "slowdown",
        s.factor, /*positive=*/true));
  }
  for (const CoExecution& c : t.coexec) {
    std::string element = fmt::format("coexec row '{}' on '{}' with '{}' on '{}'", c.op_a, c.pu_a,
                                      c.op_b, c.pu_b);
    for (const std::string* name : {&c.op_a, &c.op_b}) {
      if (!id_of.count(*name)) {
        return Error(ErrorCode::kInvalidArgument, "{}: {}: the graph '{}' has no operator '{}'; the "
                     "table belongs to another model: re-profile it", label, element, g.name(), *name);
      }
    }
    HETPLAN_RETURN_IF_ERROR(CheckValue(label, element, "coexec_us", c.makespan_us));
  }
  for (const TransferCost& x : t.transfers) {
    const std::string element = fmt::format("transfer row '{}' to '{}' ({} bytes)", x.from_pu, x.to_pu, x.bytes);
    HETPLAN_RETURN_IF_ERROR(CheckValue(label, element, "bytes", x.bytes));
    HETPLAN_RETURN_IF_ERROR(CheckValue(label, element, "exec_us", x.us));
  }
  for (auto [col, v] : {std::pair<std::string_view, const std::optional<double>*>{"exec_us", &t.model_median_us},
                        {"p10_us", &t.model_p10_us},
                        {"p90_us", &t.model_p90_us}}) {
    if (v->has_value()) HETPLAN_RETURN_IF_ERROR(CheckValue(label, "model row", col, **v));
  }
  return Status::Ok();
}

std::optional<double> InterpolateTransferUs(const CostTable& t, const std::string& from_pu, const std::string& to_pu,
                                            double bytes) {
  std::vector<std::pair<double, double>> points;
  for (const TransferCost& x : t.transfers) {
    if (x.from_pu == from_pu && x.to_pu == to_pu) points.emplace_back(x.bytes, x.us);
  }
  if (points.empty()) return std::nullopt;
  std::sort(points.begin(), points.end());
  if (points.size() == 1 || bytes <= points.front().first) return points.front().second;
  for (size_t i = 1; i < points.size(); ++i) {
    const auto& [b0, u0] = points[i - 1];
    const auto& [b1, u1] = points[i];
    if (bytes <= b1) return b1 > b0 ? u0 + (u1 - u0) * (bytes - b0) / (b1 - b0) : u1;
  }
  const auto& [b0, u0] = points[points.size() - 2];
  const auto& [b1, u1] = points.back();
  const double slope = b1 > b0 ? (u1 - u0) / (b1 - b0) : 0.0;
  return std::max(u1, u1 + slope * (bytes - b1));
}

Status CheckProvenance(const CostTable& t, const std::string& model_sha256, const std::string& label) {
  auto it = t.meta.find("model_sha256");
  if (it == t.meta.end() || it->second.empty() || model_sha256.empty()) return Status::Ok();
  if (it->second != model_sha256) {
    auto file = t.meta.find("model_file");
    return Error(ErrorCode::kInvalidArgument,
                 "{}: the table was measured on another model (model_sha256 {}{}), not this one "
                 "(sha256 {}); re-profile this model with `hetplan profile`",
                 label, it->second.substr(0, 16),
                 file == t.meta.end() ? "" : fmt::format(", file {}", file->second),
                 model_sha256.substr(0, 16));
  }
  return Status::Ok();
}

}  // namespace hetplan
