// The plan's assumptions in a schedule file's model block (docs/schedule-format.md):
// the shapes, values, branches and sample inputs a plan was made with,
// written, read back and said in words (report/schedule_file.h).
#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "hetplan/graph/dtype.h"
#include "hetplan/report/schedule_file.h"

namespace hetplan {
namespace {

// A --value token as JSON: true/false, an integer, or a number.
nlohmann::json ValueJson(const std::string& tok) {
  if (tok == "true" || tok == "false") return tok == "true";
  char* end = nullptr;
  const long long i = std::strtoll(tok.c_str(), &end, 10);
  if (end == tok.c_str() + tok.size() && !tok.empty()) return static_cast<int64_t>(i);
  return std::strtod(tok.c_str(), nullptr);
}

Result<std::string> ValueText(const nlohmann::json& v) {
  if (v.is_boolean()) return std::string(v.get<bool>() ? "true" : "false");
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return fmt::format("{}", v.get<double>());
  return Status(ErrorCode::kParseError, "not a number or boolean");
}

}  // namespace

void AddPlanAssumptions(const PlanAssumptions& m, nlohmann::json* block) {
  if (!m.input_shapes.empty()) {
    nlohmann::json shapes = nlohmann::json::object();
    for (const auto& [name, dims] : m.input_shapes) shapes[name] = dims;
    (*block)["input_shapes"] = std::move(shapes);
  }
  if (!m.fixed_inputs.empty()) {
    nlohmann::json values = nlohmann::json::object();
    for (const FixedInput& f : m.fixed_inputs) {
      nlohmann::json v = nlohmann::json::array();
      for (const auto& tok : f.values) v.push_back(ValueJson(tok));
      values[f.name] = {{"dtype", std::string(DtypeName(f.elem_type))}, {"shape", f.shape}, {"values", std::move(v)}};
    }
    (*block)["input_values"] = std::move(values);
  }
  if (!m.branches.empty()) {
    nlohmann::json branches = nlohmann::json::array();
    for (const BranchChoice& b : m.branches) {
      branches.push_back({{"node", b.node},
                          {"branch", b.then ? "then" : "else"},
                          {"assumed", b.assumed},
                          {"condition", b.condition}});
    }
    (*block)["branches"] = std::move(branches);
  }
  if (!m.sample_inputs.empty()) {
    nlohmann::json samples = nlohmann::json::object();
    for (const SampleInput& si : m.sample_inputs) {
      samples[si.name] = {{"file", si.file}, {"sha256", si.sha256}, {"dtype", std::string(DtypeName(si.elem_type))},
                          {"shape", si.shape}};
    }
    (*block)["sample_inputs"] = std::move(samples);
  }
}

namespace {

// model.sample_inputs: {name: {file, sha256, dtype, shape}}.
Status ReadSampleInputs(const nlohmann::json& block, const std::string& label, PlanAssumptions* a) {
  auto it = block.find("sample_inputs");
  if (it == block.end()) return Status::Ok();
  auto bad = [&](const std::string& key) {
    return Error(ErrorCode::kParseError, "{}: model.sample_inputs{}: not {{file, sha256, dtype, shape}}; re-plan with "
                 "hetplan partition", label, key);
  };
  if (!it->is_object()) return bad("");
  for (const auto& [name, v] : it->items()) {
    if (!v.is_object() || !v.contains("file") || !v["file"].is_string() || !v.contains("sha256") ||
        !v["sha256"].is_string() || !v.contains("dtype") || !v["dtype"].is_string() || !v.contains("shape") ||
        !v["shape"].is_array()) {
      return bad("." + name);
    }
    SampleInput si{name, v["file"].get<std::string>(), v["sha256"].get<std::string>(),
                   DtypeFromName(v["dtype"].get<std::string>()), {}};
    if (si.elem_type == 0) return bad("." + name + ".dtype");
    for (const auto& x : v["shape"]) {
      if (!x.is_number_integer() || x.get<int64_t>() < 0) return bad("." + name + ".shape");
      si.shape.push_back(x.get<int64_t>());
    }
    a->sample_inputs.push_back(std::move(si));
  }
  return Status::Ok();
}

}  // namespace

Result<PlanAssumptions> ReadPlanAssumptions(const nlohmann::json& block, const std::string& label) {
  auto bad = [&](const std::string& key, const std::string& what) {
    return Error(ErrorCode::kParseError, "{}: model.{}: {}; re-plan with hetplan partition", label, key, what);
  };
  PlanAssumptions a;
  if (!block.is_object()) return a;
  if (auto it = block.find("input_shapes"); it != block.end()) {
    if (!it->is_object()) return bad("input_shapes", "not an object");
    for (const auto& [name, dims] : it->items()) {
      if (!dims.is_array()) return bad("input_shapes." + name, "not a list of sizes");
      std::vector<int64_t> d;
      for (const auto& x : dims) {
        // 0 is a size: an empty input (--shape past=1x4x0x16)
        if (!x.is_number_integer() || x.get<int64_t>() < 0) return bad("input_shapes." + name, "not a list of sizes");
        d.push_back(x.get<int64_t>());
      }
      a.input_shapes.emplace(name, std::move(d));
    }
  }
  if (auto it = block.find("input_values"); it != block.end()) {
    if (!it->is_object()) return bad("input_values", "not an object");
    for (const auto& [name, v] : it->items()) {
      if (!v.is_object() || !v.contains("values") || !v["values"].is_array() || !v.contains("shape") ||
          !v["shape"].is_array() || !v.contains("dtype") || !v["dtype"].is_string()) {
        return bad("input_values." + name, "not {dtype, shape, values}");
      }
      FixedInput f;
      f.name = name;
      f.elem_type = DtypeFromName(v["dtype"].get<std::string>());
      if (f.elem_type == 0) return bad("input_values." + name + ".dtype", "not a known dtype");
      for (const auto& x : v["shape"]) {
        if (!x.is_number_integer() || x.get<int64_t>() < 0) return bad("input_values." + name + ".shape", "not sizes");
        f.shape.push_back(x.get<int64_t>());
      }
      for (const auto& x : v["values"]) {
        auto t = ValueText(x);
        if (!t.ok()) return bad("input_values." + name, t.status().message());
        f.values.push_back(*t);
      }
      a.fixed_inputs.push_back(std::move(f));
    }
  }
  if (auto it = block.find("branches"); it != block.end()) {
    if (!it->is_array()) return bad("branches", "not a list");
    for (const auto& b : *it) {
      if (!b.is_object() || !b.contains("node") || !b["node"].is_string() || !b.contains("branch") ||
          !b["branch"].is_string() || (b["branch"] != "then" && b["branch"] != "else")) {
        return bad("branches", "an entry without node and branch then|else");
      }
      a.branches.push_back({b["node"].get<std::string>(), b["branch"] == "then", b.value("assumed", false),
                            b.value("condition", std::string())});
    }
  }
  HETPLAN_RETURN_IF_ERROR(ReadSampleInputs(block, label, &a));
  return a;
}

std::vector<std::string> PlanAssumptionLines(const PlanAssumptions& m) {
  std::vector<std::string> lines;
  for (const ShapePattern& p : m.shape_patterns) {
    const size_t shown_n = std::min<size_t>(p.matched.size(), 6);
    std::string shown = fmt::format("{}", fmt::join(p.matched.begin(), p.matched.begin() + static_cast<long>(shown_n), ", "));
    if (p.matched.size() > shown_n) shown += fmt::format(", ... ({} more)", p.matched.size() - shown_n);
    lines.push_back(fmt::format("shape [{}] for the {} input{} matching --shape '{}': {}", fmt::join(p.dims, ","),
                                p.matched.size(), p.matched.size() == 1 ? "" : "s", p.pattern, shown));
  }
  for (const FixedInput& f : m.fixed_inputs) {
    if (f.values.empty()) {
      lines.push_back(fmt::format("input {} is empty ({}[{}]): a constant, its one value", f.name,
                                  DtypeName(f.elem_type), fmt::join(f.shape, ",")));
      continue;
    }
    const size_t shown_n = std::min<size_t>(f.values.size(), 8);
    std::string shown = fmt::format("{}", fmt::join(f.values.begin(), f.values.begin() + static_cast<long>(shown_n), ","));
    if (f.values.size() > 8) shown += fmt::format(",... ({} values)", f.values.size());
    lines.push_back(fmt::format("value {} = {} ({}[{}], --value)", f.name, shown, DtypeName(f.elem_type),
                                fmt::join(f.shape, ",")));
  }
  for (const SampleInput& si : m.sample_inputs) {
    lines.push_back(fmt::format("input {} = {} ({}[{}], sha256 {}...): planned for the shapes this sample gives; "
                                "profiling and run feed it",
                                si.name, si.file, DtypeName(si.elem_type), fmt::join(si.shape, ","),
                                si.sha256.substr(0, 12)));
  }
  for (const BranchChoice& b : m.branches) {
    lines.push_back(b.assumed ? fmt::format("branch If '{}': {} (assumed with --branch; its condition '{}' is known "
                                            "only at run time)",
                                            b.node, b.then ? "then" : "else", b.condition)
                              : fmt::format("branch If '{}': {} (its condition '{}' folds to {})", b.node,
                                            b.then ? "then" : "else", b.condition, b.then ? "true" : "false"));
  }
  return lines;
}

}  // namespace hetplan
