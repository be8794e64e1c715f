#include "hetplan/platform/platform.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <utility>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "hetplan/util/io.h"
#include "hetplan/util/utf8.h"

#ifndef HETPLAN_SOURCE_DIR
#define HETPLAN_SOURCE_DIR ""
#endif

namespace hetplan {
namespace {

// A problem with a value and how to fix it; the caller adds where.
struct Problem {
  std::string what;
  std::string fix;
};
using Check = std::optional<Problem>;

std::string Join(const std::vector<std::string>& items, std::string_view sep = ", ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

// Nesting deeper than this is refused before yaml-cpp sees the text (its
// parser recurses once per level). A platform file needs 4 levels.
constexpr int kMaxNesting = 32;
constexpr int kMaxIndentColumns = 512;
constexpr int64_t kMaxCrossbarDim = int64_t{1} << 20;
constexpr int64_t kMaxCrossbars = int64_t{1} << 40;
constexpr int64_t kMaxElementBytes = 16;
constexpr int kMaxThreads = 4096;

// PU names that would collide with PlatformToJson's keys or the override
// syntax.
constexpr std::array<std::string_view, 7> kReservedNames = {
    "name", "description", "source", "overrides", "pus", "links", "link"};

// ---------------------------------------------------------------------------
// Keys.

enum class Scope { kAll, kProfile, kTable, kCim, kRoofline };
enum class KeyType { kString, kInt, kNumber, kBool, kChoice, kList, kNumberMap };

struct KeySpec {
  std::string_view key;
  Scope scope;
  KeyType type;
  bool overridable;
};

constexpr std::array<KeySpec, 20> kPuKeys = {{
    {"name", Scope::kAll, KeyType::kString, false},
    {"kind", Scope::kAll, KeyType::kChoice, false},
    {"execution", Scope::kAll, KeyType::kChoice, true},
    {"cost", Scope::kAll, KeyType::kChoice, true},
    {"power_w", Scope::kAll, KeyType::kNumber, true},
    {"threads", Scope::kProfile, KeyType::kInt, true},
    {"table", Scope::kTable, KeyType::kString, true},
    {"crossbar_rows", Scope::kCim, KeyType::kInt, true},
    {"crossbar_cols", Scope::kCim, KeyType::kInt, true},
    {"crossbars", Scope::kCim, KeyType::kInt, true},
    {"mvm_latency_ns", Scope::kCim, KeyType::kNumber, true},
    {"bandwidth_gbps", Scope::kCim, KeyType::kNumber, true},
    {"element_bytes", Scope::kCim, KeyType::kInt, true},
    {"supported_ops", Scope::kCim, KeyType::kList, true},
    {"grouped_conv", Scope::kCim, KeyType::kChoice, true},
    {"im2col_load", Scope::kCim, KeyType::kBool, true},
    {"peak_gflops", Scope::kRoofline, KeyType::kNumberMap, true},
    {"memory_bandwidth_gbps", Scope::kRoofline, KeyType::kNumber, true},
    {"dispatch_us", Scope::kRoofline, KeyType::kNumber, true},
    {"efficiency", Scope::kRoofline, KeyType::kNumberMap, true},
}};

const KeySpec* FindPuKey(std::string_view key) {
  for (const KeySpec& k : kPuKeys) {
    if (k.key == key) return &k;
  }
  return nullptr;
}

bool Applies(Scope scope, const ProcessingUnit& pu) {
  switch (scope) {
    case Scope::kAll: return true;
    case Scope::kProfile: return pu.cost_source == CostSource::kProfile;
    case Scope::kTable: return pu.cost_source == CostSource::kTable;
    case Scope::kCim: return pu.kind == PuKind::kCim;
    case Scope::kRoofline: return pu.cost_source == CostSource::kRoofline;
  }
  return false;
}

std::string ScopeText(Scope scope) {
  switch (scope) {
    case Scope::kAll: return "every PU";
    case Scope::kProfile: return "PUs with cost: profile";
    case Scope::kTable: return "PUs with cost: table";
    case Scope::kCim: return "PUs of kind: cim";
    case Scope::kRoofline: return "PUs with cost: roofline";
  }
  return "";
}

std::string ValidPuKeys(const ProcessingUnit& pu, bool for_override) {
  std::vector<std::string> keys;
  auto add = [&](const KeySpec& k) {
    if (Applies(k.scope, pu) && (!for_override || k.overridable)) keys.emplace_back(k.key);
  };
  for (const KeySpec& k : kPuKeys) add(k);
  return Join(keys);
}

constexpr std::array<std::string_view, 4> kTopKeys = {"name", "description", "pus", "links"};
constexpr std::array<std::string_view, 4> kLinkKeys = {"between", "bandwidth_gbps", "latency_us",
                                                       "element_bytes"};

template <size_t N>
bool Contains(const std::array<std::string_view, N>& keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}
template <size_t N>
std::string JoinKeys(const std::array<std::string_view, N>& keys) {
  std::vector<std::string> v(keys.begin(), keys.end());
  return Join(v);
}

// ---------------------------------------------------------------------------
// Scalars. Range checks live in ValidateImpl so that programmatic platforms
// get them too; these only check the form.

struct Scalar {
  std::string_view text;
  bool quoted = false;  // a quoted YAML scalar is a string, never a number
};

std::string Shorten(std::string_view s) {
  if (s.size() <= 40) return std::string(s);
  return std::string(s.substr(0, 37)) + "...";
}

bool IsNonFiniteWord(std::string_view s) {
  std::string l;
  for (char c : s) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!l.empty() && (l[0] == '+' || l[0] == '-')) l.erase(0, 1);
  return l == ".inf" || l == "inf" || l == "infinity" || l == ".nan" || l == "nan";
}

Check ParseIntText(const Scalar& s, int64_t* out) {
  if (s.quoted) {
    return Problem{fmt::format("must be a whole number, got the string \"{}\"", Shorten(s.text)),
                   "remove the quotes"};
  }
  std::string_view t = s.text;
  if (!t.empty() && t[0] == '+') t.remove_prefix(1);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range) {
    return Problem{fmt::format("'{}' is out of range", Shorten(s.text)), "use a smaller number"};
  }
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size()) {
    return Problem{fmt::format("must be a whole number, got '{}'", Shorten(s.text)),
                   "write an integer such as 100"};
  }
  *out = v;
  return std::nullopt;
}

Check ParseNumberText(const Scalar& s, double* out) {
  if (s.quoted) {
    return Problem{fmt::format("must be a number, got the string \"{}\"", Shorten(s.text)),
                   "remove the quotes"};
  }
  if (IsNonFiniteWord(s.text)) {
    return Problem{fmt::format("must be a finite number, got '{}'", Shorten(s.text)),
                   "write a finite number such as 10.24"};
  }
  std::string_view t = s.text;
  if (!t.empty() && t[0] == '+') t.remove_prefix(1);
  double v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range) {
    return Problem{fmt::format("'{}' is out of range", Shorten(s.text)), "write a finite number"};
  }
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size()) {
    return Problem{fmt::format("must be a number, got '{}'", Shorten(s.text)),
                   "write a number such as 10.24"};
  }
  if (!std::isfinite(v)) {
    return Problem{fmt::format("must be a finite number, got '{}'", Shorten(s.text)),
                   "write a finite number"};
  }
  *out = v;
  return std::nullopt;
}

Check ParseBoolText(const Scalar& s, bool* out) {
  if (!s.quoted) {
    if (s.text == "true" || s.text == "True" || s.text == "TRUE") {
      *out = true;
      return std::nullopt;
    }
    if (s.text == "false" || s.text == "False" || s.text == "FALSE") {
      *out = false;
      return std::nullopt;
    }
  }
  return Problem{fmt::format("must be true or false, got '{}'", Shorten(s.text)),
                 "write true or false"};
}

Check ParseStringText(const Scalar& s, std::string* out) {
  if (s.text.size() > kMaxPlatformStringChars) {
    return Problem{fmt::format("the string has {} characters, more than the limit of {}",
                               s.text.size(), kMaxPlatformStringChars),
                   "shorten it"};
  }
  *out = std::string(s.text);
  return std::nullopt;
}

template <typename E, size_t N>
Check ParseChoice(std::string_view text, const std::array<std::pair<std::string_view, E>, N>& choices,
                  E* out) {
  std::vector<std::string> names;
  for (const auto& [name, value] : choices) {
    if (name == text) {
      *out = value;
      return std::nullopt;
    }
    names.emplace_back(name);
  }
  return Problem{fmt::format("unknown value '{}'", Shorten(text)),
                 fmt::format("use one of: {}", Join(names))};
}

constexpr std::array<std::pair<std::string_view, PuKind>, 4> kKinds = {{
    {"cpu", PuKind::kCpu}, {"cim", PuKind::kCim}, {"gpu", PuKind::kGpu}, {"npu", PuKind::kNpu}}};
constexpr std::array<std::pair<std::string_view, Execution>, 2> kExecutions = {{
    {"serial", Execution::kSerial}, {"spatial", Execution::kSpatial}}};
constexpr std::array<std::pair<std::string_view, CostSource>, 4> kCostSources = {{
    {"profile", CostSource::kProfile},
    {"cim", CostSource::kCim},
    {"table", CostSource::kTable},
    {"roofline", CostSource::kRoofline}}};
constexpr std::array<std::pair<std::string_view, GroupedConvMapping>, 2> kMappings = {{
    {"block_diagonal", GroupedConvMapping::kBlockDiagonal},
    {"per_group", GroupedConvMapping::kPerGroup}}};

template <typename E, size_t N>
Result<E> PublicChoice(std::string_view text, std::string_view what,
                       const std::array<std::pair<std::string_view, E>, N>& choices) {
  E value{};
  if (Check c = ParseChoice(text, choices, &value)) {
    return Error(ErrorCode::kInvalidArgument, "{}: {}; {}", what, c->what, c->fix);
  }
  return value;
}

template <typename E, size_t N>
std::string ChoiceName(E value, const std::array<std::pair<std::string_view, E>, N>& choices) {
  for (const auto& [name, v] : choices) {
    if (v == value) return std::string(name);
  }
  return "unknown";
}

// Defaults that depend on the kind; documented in docs/platform-format.md.
void ApplyKindDefaults(ProcessingUnit& pu) {
  pu.execution = pu.kind == PuKind::kCim ? Execution::kSpatial : Execution::kSerial;
  switch (pu.kind) {
    case PuKind::kCpu: pu.cost_source = CostSource::kProfile; break;
    case PuKind::kCim: pu.cost_source = CostSource::kCim; break;
    case PuKind::kGpu:
    case PuKind::kNpu: pu.cost_source = CostSource::kRoofline; break;
  }
}

// Splits "Conv, Gemm" or "[Conv,Gemm]" (override form of supported_ops).
std::vector<std::string> SplitList(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  std::vector<std::string> out;
  while (true) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

// Sets one scalar-valued PU key (everything but peak_gflops/efficiency;
// supported_ops takes a comma list here). `key` must be a known PU key.
Check SetPuScalar(ProcessingUnit& pu, std::string_view key, const Scalar& v) {
  int64_t i = 0;
  double d = 0;
  if (key == "name") return ParseStringText(v, &pu.name);
  if (key == "kind") return ParseChoice(v.text, kKinds, &pu.kind);
  if (key == "execution") return ParseChoice(v.text, kExecutions, &pu.execution);
  if (key == "cost") return ParseChoice(v.text, kCostSources, &pu.cost_source);
  if (key == "grouped_conv") return ParseChoice(v.text, kMappings, &pu.cim.grouped_conv);
  if (key == "table") return ParseStringText(v, &pu.table);
  if (key == "im2col_load") return ParseBoolText(v, &pu.cim.im2col_load);
  if (key == "supported_ops") {
    for (const std::string& op : SplitList(v.text)) {
      if (op.size() > kMaxPlatformStringChars) {
        return Problem{"an op type is longer than 4096 characters", "shorten it"};
      }
    }
    pu.cim.supported_ops = SplitList(v.text);
    return std::nullopt;
  }
  if (key == "threads") {
    if (Check c = ParseIntText(v, &i)) return c;
    if (i > INT_MAX || i < INT_MIN) {
      return Problem{fmt::format("{} is out of range", i), fmt::format("use 1 to {}", kMaxThreads)};
    }
    pu.threads = static_cast<int>(i);
    return std::nullopt;
  }
  int64_t* int_field = key == "crossbar_rows"   ? &pu.cim.crossbar_rows
                       : key == "crossbar_cols" ? &pu.cim.crossbar_cols
                       : key == "crossbars"     ? &pu.cim.crossbars
                       : key == "element_bytes" ? &pu.cim.element_bytes
                                                : nullptr;
  if (int_field != nullptr) {
    if (Check c = ParseIntText(v, &i)) return c;
    *int_field = i;
    return std::nullopt;
  }
  if (key == "power_w") {
    if (Check c = ParseNumberText(v, &d)) return c;
    pu.power_w = d;
    return std::nullopt;
  }
  double* num_field = key == "mvm_latency_ns"          ? &pu.cim.mvm_latency_ns
                      : key == "bandwidth_gbps"        ? &pu.cim.bandwidth_gbps
                      : key == "memory_bandwidth_gbps" ? &pu.roofline.memory_bandwidth_gbps
                      : key == "dispatch_us"           ? &pu.roofline.dispatch_us
                                                       : nullptr;
  if (num_field != nullptr) {
    if (Check c = ParseNumberText(v, &d)) return c;
    *num_field = d;
    return std::nullopt;
  }
  return Problem{fmt::format("'{}' is a map", key),
                 fmt::format("set one entry, e.g. {}.<name>=<value>", key)};
}

// Sets one entry of peak_gflops or efficiency.
Check SetPuMapEntry(ProcessingUnit& pu, std::string_view key, std::string_view entry,
                    const Scalar& v) {
  if (entry.empty() || entry.size() > kMaxPlatformStringChars) {
    return Problem{"the entry name is empty or too long", "name a dtype (peak_gflops) or op type (efficiency)"};
  }
  double d = 0;
  if (Check c = ParseNumberText(v, &d)) return c;
  auto& map = key == "peak_gflops" ? pu.roofline.peak_gflops : pu.roofline.efficiency;
  map[std::string(entry)] = d;
  return std::nullopt;
}

Check SetLinkScalar(Link& link, std::string_view key, const Scalar& v) {
  if (key == "bandwidth_gbps") return ParseNumberText(v, &link.bandwidth_gbps);
  if (key == "latency_us") return ParseNumberText(v, &link.latency_us);
  if (key == "element_bytes") {
    int64_t i = 0;
    if (Check c = ParseIntText(v, &i)) return c;
    link.element_bytes = i;
    return std::nullopt;
  }
  return Problem{fmt::format("unknown link key '{}'", Shorten(key)),
                 "valid keys: bandwidth_gbps, latency_us, element_bytes"};
}

// ---------------------------------------------------------------------------
// Validation, shared by the parser (which maps key paths to lines) and
// ValidatePlatform.

using Locator = std::function<std::string(const std::string& key_path)>;

bool ValidPuName(std::string_view name) {
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

Status ValidateImpl(const Platform& p, const Locator& where) {
  auto fail = [&](const std::string& path, std::string_view what, std::string_view fix) {
    return Error(ErrorCode::kInvalidArgument, "{}: {}: {}; {}", where(path), path, what, fix);
  };
  auto positive = [](double x) { return std::isfinite(x) && x > 0; };
  auto non_negative = [](double x) { return std::isfinite(x) && x >= 0; };

  auto not_utf8 = [&](const std::string& path) {
    return fail(path, "is not valid UTF-8", "write the text in UTF-8");
  };
  if (p.name.empty()) return fail("name", "the platform has no name", "add name: <platform name>");
  if (p.name.size() > kMaxPlatformStringChars || p.description.size() > kMaxPlatformStringChars) {
    return fail(p.name.size() > kMaxPlatformStringChars ? "name" : "description",
                "longer than 4096 characters", "shorten it");
  }
  if (!IsUtf8(p.name)) return not_utf8("name");
  if (!IsUtf8(p.description)) return not_utf8("description");
  if (p.pus.empty()) {
    return fail("pus", "the platform has no processing units",
                "add at least one entry under pus: (name, kind)");
  }
  if (p.pus.size() > static_cast<size_t>(kMaxPus)) {
    return fail("pus", fmt::format("{} processing units, more than the limit of {}", p.pus.size(), kMaxPus),
                "merge or remove PUs");
  }
  for (size_t i = 0; i < p.pus.size(); ++i) {
    const ProcessingUnit& pu = p.pus[i];
    const std::string at = fmt::format("pus[{}]", i);
    auto key = [&](std::string_view k) { return fmt::format("{}.{}", at, k); };
    if (pu.name.empty()) return fail(key("name"), "the PU has no name", "add name: <PU name>");
    if (pu.name.size() > kMaxPlatformStringChars) return fail(key("name"), "longer than 4096 characters", "shorten it");
    if (!ValidPuName(pu.name)) {
      return fail(key("name"), fmt::format("'{}' contains characters other than letters, digits, '_' and '-'",
                                           Shorten(pu.name)),
                  "rename the PU, e.g. cpu0 or big-core");
    }
    if (Contains(kReservedNames, pu.name)) {
      return fail(key("name"), fmt::format("'{}' is reserved", pu.name),
                  fmt::format("rename the PU; reserved: {}", JoinKeys(kReservedNames)));
    }
    for (size_t j = 0; j < i; ++j) {
      if (p.pus[j].name == pu.name) {
        return fail(key("name"), fmt::format("duplicate PU name '{}' (also pus[{}])", pu.name, j),
                    "give every PU a unique name");
      }
    }
    if (pu.execution == Execution::kSpatial && pu.kind != PuKind::kCim) {
      return fail(key("execution"),
                  fmt::format("execution: spatial needs kind: cim, this PU is kind: {}", ToString(pu.kind)),
                  "use execution: serial (only a CIM accelerator runs operators concurrently on disjoint crossbars)");
    }
    if (pu.cost_source == CostSource::kCim && pu.kind != PuKind::kCim) {
      return fail(key("cost"), fmt::format("cost: cim is the analytical CIM model, this PU is kind: {}", ToString(pu.kind)),
                  "use cost: profile, table or roofline");
    }
    if (pu.kind == PuKind::kCim && pu.cost_source != CostSource::kCim &&
        pu.cost_source != CostSource::kTable) {
      return fail(key("cost"), fmt::format("a cim PU cannot use cost: {}", ToString(pu.cost_source)),
                  "use cost: cim (analytical) or cost: table");
    }
    if (pu.cost_source == CostSource::kTable && pu.table.empty()) {
      return fail(key("table"), "cost: table needs a CSV path",
                  "add table: <costs.csv> (relative to the platform file)");
    }
    if (pu.table.size() > kMaxPlatformStringChars) return fail(key("table"), "longer than 4096 characters", "shorten it");
    if (!IsUtf8(pu.table)) return not_utf8(key("table"));
    if (pu.power_w && !positive(*pu.power_w)) {
      return fail(key("power_w"), fmt::format("must be a finite number > 0, got {}", *pu.power_w),
                  "give the average power in W, or remove the key");
    }
    if (pu.threads < 1 || pu.threads > kMaxThreads) {
      return fail(key("threads"), fmt::format("must be 1 to {}, got {}", kMaxThreads, pu.threads),
                  "give the number of intra-op threads, e.g. 1");
    }
    if (pu.kind == PuKind::kCim) {
      const CimParams& c = pu.cim;
      if (c.crossbar_rows <= 0 || c.crossbar_rows > kMaxCrossbarDim) {
        return fail(key("crossbar_rows"), fmt::format("must be 1 to {}, got {}", kMaxCrossbarDim, c.crossbar_rows),
                    "give the crossbar's rows, e.g. 256");
      }
      if (c.crossbar_cols <= 0 || c.crossbar_cols > kMaxCrossbarDim) {
        return fail(key("crossbar_cols"), fmt::format("must be 1 to {}, got {}", kMaxCrossbarDim, c.crossbar_cols),
                    "give the crossbar's columns, e.g. 256");
      }
      if (c.crossbars < 0 || c.crossbars > kMaxCrossbars) {
        return fail(key("crossbars"), fmt::format("must be 0 to {}, got {}", kMaxCrossbars, c.crossbars),
                    "give the crossbar budget, e.g. 100 (0 = nothing fits on the accelerator)");
      }
      if (!positive(c.mvm_latency_ns)) {
        return fail(key("mvm_latency_ns"), fmt::format("must be a finite number > 0, got {}", c.mvm_latency_ns),
                    "give the latency of one MVM in ns, e.g. 50");
      }
      if (!positive(c.bandwidth_gbps)) {
        return fail(key("bandwidth_gbps"), fmt::format("must be a finite number > 0, got {}", c.bandwidth_gbps),
                    "give the internal bandwidth in GB/s, e.g. 10.24");
      }
      if (c.element_bytes <= 0 || c.element_bytes > kMaxElementBytes) {
        return fail(key("element_bytes"), fmt::format("must be 1 to {}, got {}", kMaxElementBytes, c.element_bytes),
                    "give bytes per element, e.g. 1 for INT8");
      }
      for (size_t k = 0; k < c.supported_ops.size(); ++k) {
        const std::string& op = c.supported_ops[k];
        if (op.empty() || op.size() > kMaxPlatformStringChars) {
          return fail(fmt::format("{}[{}]", key("supported_ops"), k), "an op type is empty or too long",
                      "write ONNX op types such as Conv, Gemm, MatMul");
        }
        if (!IsUtf8(op)) {
          return not_utf8(fmt::format("{}[{}]", key("supported_ops"), k));
        }
      }
    }
    if (pu.cost_source == CostSource::kRoofline) {
      const RooflineParams& r = pu.roofline;
      if (r.peak_gflops.empty()) {
        return fail(key("peak_gflops"), "cost: roofline needs peak GFLOP/s for at least one dtype",
                    "add peak_gflops: {float32: 50}");
      }
      for (const auto& [dtype, g] : r.peak_gflops) {
        if (dtype.empty() || dtype.size() > kMaxPlatformStringChars) {
          return fail(key("peak_gflops"), "a dtype name is empty or too long", "use ONNX dtype names such as float32");
        }
        if (!IsUtf8(dtype)) return not_utf8(key("peak_gflops"));
        if (!positive(g)) {
          return fail(fmt::format("{}.{}", key("peak_gflops"), dtype),
                      fmt::format("must be a finite number > 0, got {}", g), "give GFLOP/s, e.g. 50");
        }
      }
      if (!positive(r.memory_bandwidth_gbps)) {
        return fail(key("memory_bandwidth_gbps"),
                    fmt::format("cost: roofline needs a finite memory bandwidth > 0, got {}", r.memory_bandwidth_gbps),
                    "add memory_bandwidth_gbps: <GB/s>, e.g. 25.6");
      }
      if (!non_negative(r.dispatch_us)) {
        return fail(key("dispatch_us"), fmt::format("must be a finite number >= 0, got {}", r.dispatch_us),
                    "give the per-operator dispatch cost in µs, e.g. 5");
      }
      for (const auto& [op, e] : r.efficiency) {
        if (op.empty() || op.size() > kMaxPlatformStringChars) {
          return fail(key("efficiency"), "an op type is empty or too long", "use ONNX op types or default");
        }
        if (!IsUtf8(op)) return not_utf8(key("efficiency"));
        if (!std::isfinite(e) || e <= 0 || e > 1) {
          return fail(fmt::format("{}.{}", key("efficiency"), op), fmt::format("must be in (0, 1], got {}", e),
                      "give the fraction of peak reached, e.g. 0.6");
        }
      }
    }
  }
  for (size_t i = 0; i < p.links.size(); ++i) {
    const Link& l = p.links[i];
    const std::string at = fmt::format("links[{}]", i);
    auto key = [&](std::string_view k) { return fmt::format("{}.{}", at, k); };
    for (const std::string* end : {&l.a, &l.b}) {
      if (p.FindPu(*end) < 0) {
        std::vector<std::string> names;
        for (const ProcessingUnit& pu : p.pus) names.push_back(pu.name);
        return fail(key("between"), fmt::format("no PU named '{}'", Shorten(*end)),
                    fmt::format("use two of: {}", Join(names)));
      }
    }
    if (l.a == l.b) {
      return fail(key("between"), fmt::format("links PU '{}' to itself", l.a), "name two different PUs");
    }
    for (size_t j = 0; j < i; ++j) {
      const Link& o = p.links[j];
      if ((o.a == l.a && o.b == l.b) || (o.a == l.b && o.b == l.a)) {
        return fail(key("between"), fmt::format("duplicate link {}-{} (also links[{}])", l.a, l.b, j),
                    "keep one link per pair of PUs");
      }
    }
    if (!positive(l.bandwidth_gbps)) {
      return fail(key("bandwidth_gbps"), fmt::format("must be a finite number > 0, got {}", l.bandwidth_gbps),
                  "give the link bandwidth in GB/s, e.g. 10.24");
    }
    if (!non_negative(l.latency_us)) {
      return fail(key("latency_us"), fmt::format("must be a finite number >= 0, got {}", l.latency_us),
                  "give the per-transfer latency in µs, e.g. 0");
    }
    if (l.element_bytes && (*l.element_bytes <= 0 || *l.element_bytes > kMaxElementBytes)) {
      return fail(key("element_bytes"), fmt::format("must be 1 to {}, got {}", kMaxElementBytes, *l.element_bytes),
                  "give bytes per element, or remove the key to use each tensor's own");
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// YAML.

// Refuses absurd nesting before yaml-cpp, whose parser recurses per level:
// flow brackets, chained block-sequence dashes ("- - - x") and indentation.
Check ScanNesting(std::string_view text, int* bad_line) {
  int flow = 0;
  int line = 1;
  char quote = 0;
  bool line_start = true;
  int indent = 0;
  int dashes = 0;
  char last = '\n';  // last non-blank character outside quotes on this line
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = true;
      indent = 0;
      dashes = 0;
      last = '\n';
      continue;
    }
    if (quote != 0) {
      if (quote == '"' && c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
        last = c;
      }
      continue;
    }
    if (line_start) {
      if (c == ' ') {
        if (++indent > kMaxIndentColumns) {
          *bad_line = line;
          return Problem{fmt::format("indented more than {} columns", kMaxIndentColumns),
                         "a platform file needs a few levels of nesting; fix the indentation"};
        }
        continue;
      }
      if (c == '-' && (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\n')) {
        last = '-';
        if (++dashes > kMaxNesting) {
          *bad_line = line;
          return Problem{fmt::format("sequences nested more than {} levels deep", kMaxNesting),
                         "a platform file needs a few levels of nesting"};
        }
        continue;
      }
      line_start = false;
    }
    if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n')) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;
    if (c == '"' || c == '\'') {
      // A quote opens a string only at the start of a scalar.
      if (last == '\n' || last == '-' || last == ':' || last == '[' || last == '{' || last == ',' ||
          last == '?') {
        quote = c;
      }
      last = c;
      continue;
    }
    last = c;
    if (c == '[' || c == '{') {
      if (++flow > kMaxNesting) {
        *bad_line = line;
        return Problem{fmt::format("brackets nested more than {} levels deep", kMaxNesting),
                       "a platform file needs a few levels of nesting"};
      }
    } else if ((c == ']' || c == '}') && flow > 0) {
      --flow;
    }
  }
  return std::nullopt;
}

// Receives the events of the document-counting pass.
class IgnoreEvents : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

std::string NodeKind(const YAML::Node& n) {
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  if (n.IsNull()) return "empty";
  return "a scalar";
}

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  void Note(const std::string& path, const YAML::Node& n) {
    if (n.Mark().line >= 0) lines_.emplace(path, n.Mark().line + 1);
  }

  // "<file>:<line>" for a key path, from the nearest recorded ancestor.
  std::string Where(const std::string& key_path) const {
    std::string path = key_path;
    while (true) {
      auto it = lines_.find(path);
      if (it != lines_.end()) return fmt::format("{}:{}", file_, it->second);
      size_t cut = path.find_last_of(".[");
      if (cut == std::string::npos || cut == 0) break;
      path.resize(cut);
    }
    return fmt::format("{}:1", file_);
  }

  Status Fail(const std::string& path, const Problem& p) const {
    if (path.empty()) {
      return Error(ErrorCode::kInvalidArgument, "{}: {}; {}", Where(path), p.what, p.fix);
    }
    return Error(ErrorCode::kInvalidArgument, "{}: {}: {}; {}", Where(path), path, p.what, p.fix);
  }

  // The entries of a map, keys checked (scalar, unique) and their lines noted.
  Result<std::vector<std::pair<std::string, YAML::Node>>> Entries(const YAML::Node& map,
                                                                   const std::string& path) {
    std::vector<std::pair<std::string, YAML::Node>> out;
    for (const auto& kv : map) {
      const YAML::Node k = kv.first;
      if (!k.IsScalar()) {
        Note(path + ".?", k);
        return Fail(path + ".?", {fmt::format("a key is {}", NodeKind(k)), "keys must be plain names"});
      }
      std::string key = k.Scalar();
      std::string child = path.empty() ? key : path + "." + key;
      Note(child, k);
      for (const auto& [seen, unused] : out) {
        if (seen == key) {
          return Error(ErrorCode::kInvalidArgument, "{}:{}: {}: duplicate key '{}'; keep one of them", file_,
                       k.Mark().line + 1, child, Shorten(key));
        }
      }
      out.emplace_back(key, kv.second);
    }
    return out;
  }

  // A scalar value, or a problem if the node is a map, list or empty.
  Check AsScalar(const YAML::Node& n, std::string_view expected, Scalar* out) const {
    if (n.IsNull()) return Problem{"has no value", fmt::format("write {}", expected)};
    if (!n.IsScalar()) return Problem{fmt::format("must be {}, got {}", expected, NodeKind(n)),
                                      fmt::format("write {}", expected)};
    out->text = n.Scalar();
    out->quoted = n.Tag() == "!";
    return std::nullopt;
  }

  Status ReadString(const YAML::Node& n, const std::string& path, std::string* out) const {
    Scalar s;
    if (Check c = AsScalar(n, "a string", &s)) return Fail(path, *c);
    if (Check c = ParseStringText(s, out)) return Fail(path, *c);
    return Status::Ok();
  }

  Status ReadPu(const YAML::Node& n, const std::string& path, ProcessingUnit* pu) {
    if (!n.IsMap()) {
      return Fail(path, {fmt::format("must be a map, got {}", NodeKind(n)),
                         "write each PU as a map with at least name: and kind:"});
    }
    HETPLAN_ASSIGN_OR_RETURN(auto entries, Entries(n, path));
    auto find = [&](std::string_view key) -> const YAML::Node* {
      for (const auto& [k, v] : entries) {
        if (k == key) return &v;
      }
      return nullptr;
    };
    for (std::string_view required : {"name", "kind"}) {
      if (find(required) == nullptr) {
        return Fail(path, {fmt::format("missing required key '{}'", required),
                           required == "name" ? "add name: <PU name>" : "add kind: cpu, cim, gpu or npu"});
      }
    }
    HETPLAN_RETURN_IF_ERROR(ReadString(*find("name"), path + ".name", &pu->name));
    // kind first: it sets the defaults of execution and cost.
    for (std::string_view key : {"kind", "execution", "cost"}) {
      const YAML::Node* v = find(key);
      if (v == nullptr) continue;
      std::string child = fmt::format("{}.{}", path, key);
      Scalar s;
      if (Check c = AsScalar(*v, "a name", &s)) return Fail(child, *c);
      if (Check c = SetPuScalar(*pu, key, s)) return Fail(child, *c);
      if (key == "kind") ApplyKindDefaults(*pu);
    }
    for (const auto& [key, v] : entries) {
      if (key == "name" || key == "kind" || key == "execution" || key == "cost") continue;
      std::string child = fmt::format("{}.{}", path, key);
      const KeySpec* spec = FindPuKey(key);
      if (spec == nullptr) {
        return Fail(child, {fmt::format("unknown key '{}'", Shorten(key)),
                            fmt::format("valid keys for this PU: {}", ValidPuKeys(*pu, false))});
      }
      if (!Applies(spec->scope, *pu)) {
        return Fail(child, {fmt::format("'{}' applies only to {}; this PU is kind: {}, cost: {}", key,
                                        ScopeText(spec->scope), ToString(pu->kind), ToString(pu->cost_source)),
                            fmt::format("remove it; valid keys for this PU: {}", ValidPuKeys(*pu, false))});
      }
      if (spec->type == KeyType::kList) {
        if (!v.IsSequence()) {
          return Fail(child, {fmt::format("must be a list, got {}", NodeKind(v)),
                              "write e.g. [Conv, Gemm, MatMul]"});
        }
        pu->cim.supported_ops.clear();
        for (size_t k = 0; k < v.size(); ++k) {
          std::string item_path = fmt::format("{}[{}]", child, k);
          Note(item_path, v[k]);
          std::string op;
          HETPLAN_RETURN_IF_ERROR(ReadString(v[k], item_path, &op));
          pu->cim.supported_ops.push_back(std::move(op));
        }
        continue;
      }
      if (spec->type == KeyType::kNumberMap) {
        if (!v.IsMap()) {
          return Fail(child, {fmt::format("must be a map, got {}", NodeKind(v)),
                              key == "peak_gflops" ? "write e.g. {float32: 50, int8: 200}"
                                                   : "write e.g. {Conv: 0.6, default: 0.5}"});
        }
        HETPLAN_ASSIGN_OR_RETURN(auto sub, Entries(v, child));
        (key == "peak_gflops" ? pu->roofline.peak_gflops : pu->roofline.efficiency).clear();
        for (const auto& [entry, ev] : sub) {
          std::string entry_path = fmt::format("{}.{}", child, entry);
          Scalar s;
          if (Check c = AsScalar(ev, "a number", &s)) return Fail(entry_path, *c);
          if (Check c = SetPuMapEntry(*pu, key, entry, s)) return Fail(entry_path, *c);
        }
        continue;
      }
      Scalar s;
      std::string_view expected = spec->type == KeyType::kInt      ? "a whole number"
                                  : spec->type == KeyType::kNumber ? "a number"
                                  : spec->type == KeyType::kBool   ? "true or false"
                                                                   : "a string";
      if (Check c = AsScalar(v, expected, &s)) return Fail(child, *c);
      if (Check c = SetPuScalar(*pu, key, s)) return Fail(child, *c);
    }
    return Status::Ok();
  }

  Status ReadLink(const YAML::Node& n, const std::string& path, Link* link) {
    if (!n.IsMap()) {
      return Fail(path, {fmt::format("must be a map, got {}", NodeKind(n)),
                         "write each link as {between: [a, b], bandwidth_gbps: <GB/s>}"});
    }
    HETPLAN_ASSIGN_OR_RETURN(auto entries, Entries(n, path));
    bool has_between = false, has_bandwidth = false;
    for (const auto& [key, v] : entries) {
      std::string child = fmt::format("{}.{}", path, key);
      if (!Contains(kLinkKeys, key)) {
        return Fail(child, {fmt::format("unknown key '{}'", Shorten(key)),
                            fmt::format("valid keys for a link: {}", JoinKeys(kLinkKeys))});
      }
      if (key == "between") {
        has_between = true;
        if (!v.IsSequence() || v.size() != 2) {
          return Fail(child, {v.IsSequence() ? fmt::format("names {} PUs", v.size())
                                             : fmt::format("must be a list, got {}", NodeKind(v)),
                              "name exactly two PUs, e.g. between: [cpu, cim]"});
        }
        HETPLAN_RETURN_IF_ERROR(ReadString(v[0], child, &link->a));
        HETPLAN_RETURN_IF_ERROR(ReadString(v[1], child, &link->b));
        continue;
      }
      has_bandwidth |= key == "bandwidth_gbps";
      Scalar s;
      if (Check c = AsScalar(v, key == "element_bytes" ? "a whole number" : "a number", &s)) {
        return Fail(child, *c);
      }
      if (Check c = SetLinkScalar(*link, key, s)) return Fail(child, *c);
    }
    if (!has_between) {
      return Fail(path, {"missing required key 'between'", "add between: [<pu>, <pu>]"});
    }
    if (!has_bandwidth) {
      return Fail(path, {"missing required key 'bandwidth_gbps'", "add bandwidth_gbps: <GB/s>, e.g. 10.24"});
    }
    return Status::Ok();
  }

  Result<Platform> Read(std::string_view text) {
    if (text.size() > kMaxPlatformYamlBytes) {
      return Error(ErrorCode::kLimitExceeded,
                   "{}: the platform file has {} bytes, more than the limit of {} (1 MiB); a platform "
                   "file is a few hundred bytes, check that this is the right file",
                   file_, text.size(), kMaxPlatformYamlBytes);
    }
    if (std::string bad = DescribeInvalidUtf8(text, file_); !bad.empty()) {
      return Error(ErrorCode::kParseError, "{}; save the file as UTF-8", bad);
    }
    int bad_line = 0;
    if (Check c = ScanNesting(text, &bad_line)) {
      return Error(ErrorCode::kParseError, "{}:{}: {}; {}", file_, bad_line, c->what, c->fix);
    }
    // Count documents with the event parser rather than YAML::LoadAll, which
    // loops forever on some malformed input in yaml-cpp 0.7 (a lone ',';
    // jbeder/yaml-cpp#1040, fixed by #1319): stop at the second document.
    YAML::Node root;
    try {
      std::istringstream in{std::string(text)};
      YAML::Parser parser(in);
      IgnoreEvents ignore;
      int docs = 0;
      while (docs < 2 && parser.HandleNextDocument(ignore)) ++docs;
      if (docs == 0) {
        return Error(ErrorCode::kParseError,
                     "{}:1: the platform file is empty; write name:, pus: and links: (see "
                     "docs/platform-format.md)",
                     file_);
      }
      if (docs > 1) {
        return Error(ErrorCode::kParseError,
                     "{}:1: the file holds more than one YAML document (a second '---', or stray text "
                     "such as a lone ',' that starts one); keep one platform map per file",
                     file_);
      }
      root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
      return Error(ErrorCode::kParseError, "{}:{}: YAML syntax error: {}; fix the YAML at that line",
                   file_, e.mark.line >= 0 ? e.mark.line + 1 : 1, e.msg);
    }
    if (root.IsNull()) {
      return Error(ErrorCode::kParseError, "{}:1: the platform file is empty; write name:, pus: and links: "
                   "(see docs/platform-format.md)", file_);
    }
    if (!root.IsMap()) {
      return Fail("", {fmt::format("the document is {}, not a map", NodeKind(root)),
                       "write name:, pus: and links: at the top level"});
    }
    Platform p;
    p.source = file_;
    HETPLAN_ASSIGN_OR_RETURN(auto entries, Entries(root, ""));
    bool has_name = false, has_pus = false;
    for (const auto& [key, v] : entries) {
      if (!Contains(kTopKeys, key)) {
        return Fail(key, {fmt::format("unknown key '{}'", Shorten(key)),
                          fmt::format("valid top-level keys: {}", JoinKeys(kTopKeys))});
      }
      if (key == "name") {
        has_name = true;
        HETPLAN_RETURN_IF_ERROR(ReadString(v, key, &p.name));
      } else if (key == "description") {
        HETPLAN_RETURN_IF_ERROR(ReadString(v, key, &p.description));
      } else if (key == "pus" || key == "links") {
        has_pus |= key == "pus";
        if (v.IsNull()) continue;  // checked by ValidateImpl (pus) or means "no links"
        if (!v.IsSequence()) {
          return Fail(key, {fmt::format("must be a list, got {}", NodeKind(v)),
                            fmt::format("write each {} as a '- ' entry", key == "pus" ? "PU" : "link")});
        }
        if (key == "pus" && v.size() > static_cast<size_t>(kMaxPus)) {
          return Fail(key, {fmt::format("{} processing units, more than the limit of {}", v.size(), kMaxPus),
                            "merge or remove PUs"});
        }
        for (size_t i = 0; i < v.size(); ++i) {
          std::string path = fmt::format("{}[{}]", key, i);
          Note(path, v[i]);
          if (key == "pus") {
            p.pus.emplace_back();
            HETPLAN_RETURN_IF_ERROR(ReadPu(v[i], path, &p.pus.back()));
          } else {
            p.links.emplace_back();
            HETPLAN_RETURN_IF_ERROR(ReadLink(v[i], path, &p.links.back()));
          }
        }
      }
    }
    if (!has_name) return Fail("", {"missing required key 'name'", "add name: <platform name>"});
    if (!has_pus) return Fail("", {"missing required key 'pus'", "add pus: with at least one PU"});
    HETPLAN_RETURN_IF_ERROR(ValidateImpl(p, [this](const std::string& path) { return Where(path); }));
    return p;
  }

 private:
  std::string file_;
  std::map<std::string, int> lines_;
};

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::vector<std::string> PresetDirs() {
  std::vector<std::string> dirs;
  const char* env = std::getenv("HETPLAN_PLATFORM_DIR");
  if (env != nullptr && *env != '\0') dirs.emplace_back(env);
  std::string source_dir = HETPLAN_SOURCE_DIR;
  if (!source_dir.empty()) dirs.push_back(source_dir + "/platforms");
  return dirs;
}

std::vector<std::string> PresetNames(const std::vector<std::string>& dirs) {
  std::set<std::string> names;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() == ".yaml") names.insert(it->path().stem().string());
    }
  }
  return {names.begin(), names.end()};
}

}  // namespace

// ---------------------------------------------------------------------------

int Platform::FindPu(std::string_view pu_name) const {
  for (size_t i = 0; i < pus.size(); ++i) {
    if (pus[i].name == pu_name) return static_cast<int>(i);
  }
  return -1;
}

const Link* Platform::FindLink(std::string_view a, std::string_view b) const {
  for (const Link& l : links) {
    if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) return &l;
  }
  return nullptr;
}

std::string ToString(PuKind kind) { return ChoiceName(kind, kKinds); }
std::string ToString(Execution execution) { return ChoiceName(execution, kExecutions); }
std::string ToString(CostSource source) { return ChoiceName(source, kCostSources); }
std::string ToString(GroupedConvMapping mapping) { return ChoiceName(mapping, kMappings); }

Result<PuKind> ParsePuKind(std::string_view text) { return PublicChoice(text, "kind", kKinds); }
Result<Execution> ParseExecution(std::string_view text) {
  return PublicChoice(text, "execution", kExecutions);
}
Result<CostSource> ParseCostSource(std::string_view text) {
  return PublicChoice(text, "cost", kCostSources);
}
Result<GroupedConvMapping> ParseGroupedConvMapping(std::string_view text) {
  return PublicChoice(text, "grouped_conv", kMappings);
}

Result<Platform> ParsePlatformYaml(std::string_view yaml_text, const std::string& file_label) {
  // yaml-cpp reports errors by exception; none may escape the library.
  try {
    YamlReader reader(file_label);
    return reader.Read(yaml_text);
  } catch (const YAML::Exception& e) {
    return Error(ErrorCode::kParseError, "{}:{}: YAML error: {}; fix the YAML at that line", file_label,
                 e.mark.line >= 0 ? e.mark.line + 1 : 1, e.msg);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kParseError, "{}: cannot read the platform: {}; check the file", file_label,
                 e.what());
  }
}

Result<Platform> LoadPlatform(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  bool is_path = name_or_path.find('/') != std::string::npos || EndsWith(name_or_path, ".yaml") ||
                 EndsWith(name_or_path, ".yml");
  std::string path = name_or_path;
  std::string source = name_or_path;
  if (!is_path) {
    std::vector<std::string> dirs = PresetDirs();
    path.clear();
    bool valid_name = !name_or_path.empty() && ValidPuName(name_or_path);
    for (const std::string& dir : dirs) {
      std::error_code ec;
      std::string candidate = dir + "/" + name_or_path + ".yaml";
      if (valid_name && fs::is_regular_file(candidate, ec)) {
        path = candidate;
        break;
      }
    }
    if (path.empty()) {
      std::vector<std::string> searched;
      for (const std::string& dir : dirs) searched.push_back(dir + "/" + name_or_path + ".yaml");
      return Error(ErrorCode::kNotFound,
                   "platform '{}': no such preset (looked for {}); use one of: {}, or give a path to a "
                   ".yaml file",
                   Shorten(name_or_path), searched.empty() ? "no preset folders" : Join(searched),
                   Join(PresetNames(dirs)));
    }
    source = "preset:" + name_or_path;
  } else {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      return Error(ErrorCode::kNotFound,
                   "{}: platform file not found; check the path, or use a preset: {}", path,
                   Join(PresetNames(PresetDirs())));
    }
  }
  Result<std::string> text = ReadFile(path, static_cast<int64_t>(kMaxPlatformYamlBytes));
  if (!text.ok()) {
    if (text.status().code() == ErrorCode::kLimitExceeded) {
      return Error(ErrorCode::kLimitExceeded,
                   "{}: the platform file is larger than 1 MiB; a platform file is a few hundred bytes, "
                   "check that this is the right file",
                   path);
    }
    return text.status();
  }
  HETPLAN_ASSIGN_OR_RETURN(Platform p, ParsePlatformYaml(*text, path));
  p.source = source;
  fs::path folder = fs::path(path).parent_path();
  for (ProcessingUnit& pu : p.pus) {
    if (!pu.table.empty() && fs::path(pu.table).is_relative()) {
      pu.table = (folder / pu.table).lexically_normal().string();
    }
  }
  return p;
}

Status ValidatePlatform(const Platform& p) {
  std::string where = p.source.empty() ? "platform" : p.source;
  return ValidateImpl(p, [&where](const std::string&) { return where; });
}

Status ApplyOverride(Platform& p, std::string_view assignment) {
  auto fail = [&](std::string_view what, std::string_view fix) {
    return Error(ErrorCode::kInvalidArgument, "override '{}': {}; {}", Shorten(assignment), what, fix);
  };
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  std::vector<std::string> pu_names;
  for (const ProcessingUnit& pu : p.pus) pu_names.push_back(pu.name);
  constexpr std::string_view kForm = "write <pu>.<key>=<value> (e.g. cim.crossbars=200) or "
                                     "link.<a>-<b>.<key>=<value> (e.g. link.cpu-cim.bandwidth_gbps=5)";
  size_t eq = assignment.find('=');
  if (eq == std::string_view::npos) return fail("expected KEY=VALUE", kForm);
  std::string_view key = trim(assignment.substr(0, eq));
  std::string_view value = trim(assignment.substr(eq + 1));
  if (key.empty()) return fail("no key before '='", kForm);
  if (value.empty()) return fail(fmt::format("no value for '{}'", key), "write a value after '='");
  Scalar scalar{value, false};
  Platform copy = p;

  if (key.substr(0, 5) == "link.") {
    std::string_view rest = key.substr(5);
    size_t dot = rest.rfind('.');
    std::vector<std::string> link_names;
    for (const Link& l : p.links) link_names.push_back(l.a + "-" + l.b);
    if (dot == std::string_view::npos) {
      return fail("a link override needs a key", "write link.<a>-<b>.<key>=<value>, e.g. link.cpu-cim.latency_us=1");
    }
    std::string_view pair = rest.substr(0, dot);
    std::string_view field = rest.substr(dot + 1);
    // PU names may contain '-': try every split.
    std::vector<int> matches;
    for (size_t i = 0; i < pair.size(); ++i) {
      if (pair[i] != '-') continue;
      const Link* l = p.FindLink(pair.substr(0, i), pair.substr(i + 1));
      if (l != nullptr) matches.push_back(static_cast<int>(l - p.links.data()));
    }
    std::sort(matches.begin(), matches.end());
    matches.erase(std::unique(matches.begin(), matches.end()), matches.end());
    if (matches.empty()) {
      return fail(fmt::format("no link '{}'", Shorten(pair)),
                  link_names.empty() ? std::string("the platform has no links")
                                     : fmt::format("links: {}", Join(link_names)));
    }
    if (matches.size() > 1) {
      return fail(fmt::format("'{}' names more than one link", pair), "rename PUs so their names hold no '-'");
    }
    if (!Contains(kLinkKeys, field) || field == "between") {
      return fail(fmt::format("unknown link key '{}'", Shorten(field)),
                  "valid keys for a link: bandwidth_gbps, latency_us, element_bytes");
    }
    if (Check c = SetLinkScalar(copy.links[matches[0]], field, scalar)) {
      return fail(fmt::format("{}: {}", key, c->what), c->fix);
    }
  } else {
    size_t dot = key.find('.');
    if (dot == std::string_view::npos) return fail(fmt::format("'{}' names no PU key", key), kForm);
    std::string_view pu_name = key.substr(0, dot);
    std::string_view field = key.substr(dot + 1);
    int index = p.FindPu(pu_name);
    if (index < 0) {
      return fail(fmt::format("no PU named '{}'", Shorten(pu_name)),
                  fmt::format("PUs: {}; links: link.<a>-<b>.<key>", Join(pu_names)));
    }
    ProcessingUnit& pu = copy.pus[index];
    std::string_view sub;
    size_t dot2 = field.find('.');
    if (dot2 != std::string_view::npos) {
      sub = field.substr(dot2 + 1);
      field = field.substr(0, dot2);
    }
    const KeySpec* spec = FindPuKey(field);
    std::string valid = fmt::format("valid keys for {} (kind: {}, cost: {}): {}", pu.name, ToString(pu.kind),
                                    ToString(pu.cost_source), ValidPuKeys(pu, true));
    if (spec == nullptr || !Applies(spec->scope, pu)) {
      return fail(fmt::format("unknown key '{}' for PU '{}'", Shorten(field), pu.name), valid);
    }
    if (!spec->overridable) {
      return fail(fmt::format("'{}' cannot be overridden", field),
                  fmt::format("write another platform file instead; {}", valid));
    }
    if (spec->type == KeyType::kNumberMap) {
      if (sub.empty()) {
        return fail(fmt::format("'{}' is a map", field),
                    fmt::format("set one entry: {}.{}.<{}>=<value>", pu.name, field,
                                field == "peak_gflops" ? "dtype" : "op type"));
      }
      if (Check c = SetPuMapEntry(pu, field, sub, scalar)) return fail(fmt::format("{}: {}", key, c->what), c->fix);
    } else {
      if (!sub.empty()) return fail(fmt::format("'{}' has no entries", field), valid);
      if (Check c = SetPuScalar(pu, field, scalar)) return fail(fmt::format("{}: {}", key, c->what), c->fix);
    }
  }
  if (Status s = ValidatePlatform(copy); !s.ok()) {
    return Error(ErrorCode::kInvalidArgument, "override '{}': {}", Shorten(assignment), s.message());
  }
  copy.overrides.emplace_back(assignment);
  p = std::move(copy);
  return Status::Ok();
}

nlohmann::json PlatformToJson(const Platform& p) {
  nlohmann::json j;
  j["name"] = p.name;
  j["description"] = p.description;
  j["source"] = p.source;
  j["overrides"] = p.overrides;
  nlohmann::json names = nlohmann::json::array();
  for (const ProcessingUnit& pu : p.pus) {
    names.push_back(pu.name);
    nlohmann::json u;
    u["kind"] = ToString(pu.kind);
    u["execution"] = ToString(pu.execution);
    u["cost_source"] = ToString(pu.cost_source);
    u["power_w"] = pu.power_w ? nlohmann::json(*pu.power_w) : nlohmann::json(nullptr);
    if (pu.cost_source == CostSource::kProfile) u["threads"] = pu.threads;
    if (pu.cost_source == CostSource::kTable) u["table"] = pu.table;
    if (pu.kind == PuKind::kCim) {
      const CimParams& c = pu.cim;
      u["crossbar_rows"] = c.crossbar_rows;
      u["crossbar_cols"] = c.crossbar_cols;
      u["crossbars"] = c.crossbars;
      u["mvm_latency_ns"] = c.mvm_latency_ns;
      u["bandwidth_gbps"] = c.bandwidth_gbps;
      u["element_bytes"] = c.element_bytes;
      u["supported_ops"] = c.supported_ops;
      u["grouped_conv"] = ToString(c.grouped_conv);
      u["im2col_load"] = c.im2col_load;
    }
    if (pu.cost_source == CostSource::kRoofline) {
      const RooflineParams& r = pu.roofline;
      u["peak_gflops"] = r.peak_gflops;
      u["memory_bandwidth_gbps"] = r.memory_bandwidth_gbps;
      u["dispatch_us"] = r.dispatch_us;
      u["efficiency"] = r.efficiency;
    }
    j[pu.name] = std::move(u);
  }
  j["pus"] = std::move(names);
  nlohmann::json links = nlohmann::json::array();
  for (const Link& l : p.links) {
    links.push_back({{"a", l.a},
                     {"b", l.b},
                     {"bandwidth_gbps", l.bandwidth_gbps},
                     {"latency_us", l.latency_us},
                     {"element_bytes", l.element_bytes ? nlohmann::json(*l.element_bytes) : nlohmann::json(nullptr)}});
  }
  j["links"] = std::move(links);
  return j;
}

}  // namespace hetplan
