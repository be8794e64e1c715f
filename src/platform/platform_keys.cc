// The key table (which PU key applies to which PU, which can be
// overridden) and the setters that turn scalar text into PU and link fields.
// The YAML reader and ApplyOverride both set keys through these, so a value
// is read the same way wherever it is written.
#include <charconv>
#include <cctype>
#include <climits>
#include <cmath>

#include "platform/platform_internal.h"

namespace hetplan::platform_internal {
namespace {

constexpr std::array<KeySpec, 47> kPuKeys = {{
    {"name", Scope::kAll, KeyType::kString, false},
    {"kind", Scope::kAll, KeyType::kChoice, false},
    {"execution", Scope::kAll, KeyType::kChoice, true},
    {"cost", Scope::kAll, KeyType::kChoice, true},
    {"power_w", Scope::kAll, KeyType::kNumber, true},
    {"threads", Scope::kProfile, KeyType::kInt, true},
    {"provider", Scope::kProfile, KeyType::kString, true},
    {"provider_options", Scope::kProfile, KeyType::kStringMap, true},
    {"cores", Scope::kProfile, KeyType::kIntList, true},
    {"runtime", Scope::kDevice, KeyType::kString, true},
    {"device", Scope::kDevice, KeyType::kString, true},
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
    {"bits_per_cell", Scope::kCim, KeyType::kInt, true},
    {"weight_bits", Scope::kCim, KeyType::kInt, true},
    {"signed_weights", Scope::kCim, KeyType::kChoice, true},
    {"slice_mapping", Scope::kCim, KeyType::kChoice, true},
    {"input_bits", Scope::kCim, KeyType::kInt, true},
    {"dac_bits", Scope::kCim, KeyType::kInt, true},
    {"adc_bits", Scope::kCim, KeyType::kInt, true},
    {"columns_per_adc", Scope::kCim, KeyType::kInt, true},
    {"adc_conversion_ns", Scope::kCim, KeyType::kNumber, true},
    {"array_read_ns", Scope::kCim, KeyType::kNumber, true},
    {"mvm_overhead_ns", Scope::kCim, KeyType::kNumber, true},
    {"shared_adcs", Scope::kCim, KeyType::kInt, true},
    {"reprogram", Scope::kCim, KeyType::kBool, true},
    {"write_ns_per_row", Scope::kCim, KeyType::kNumber, true},
    {"write_energy_pj_per_row", Scope::kCim, KeyType::kNumber, true},
    {"endurance_writes", Scope::kCim, KeyType::kNumber, true},
    {"lifetime_inferences", Scope::kCim, KeyType::kNumber, true},
    {"adc_energy_pj", Scope::kCim, KeyType::kNumber, true},
    {"dac_energy_pj", Scope::kCim, KeyType::kNumber, true},
    {"array_energy_pj", Scope::kCim, KeyType::kNumber, true},
    {"shift_add_energy_pj", Scope::kCim, KeyType::kNumber, true},
    {"buffer_energy_pj_per_byte", Scope::kCim, KeyType::kNumber, true},
    {"peak_gflops", Scope::kRoofline, KeyType::kNumberMap, true},
    {"memory_bandwidth_gbps", Scope::kRoofline, KeyType::kNumber, true},
    {"dispatch_us", Scope::kRoofline, KeyType::kNumber, true},
    {"efficiency", Scope::kRoofline, KeyType::kNumberMap, true},
}};

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

}  // namespace

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
    case Scope::kDevice: return pu.kind != PuKind::kCim;
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
    case Scope::kDevice: return "PUs of kind cpu, gpu or npu";
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

Check ParseStringText(const Scalar& s, std::string* out) {
  if (s.text.size() > kMaxPlatformStringChars) {
    return Problem{fmt::format("the string has {} characters, more than the limit of {}",
                               s.text.size(), kMaxPlatformStringChars),
                   "shorten it"};
  }
  *out = std::string(s.text);
  return std::nullopt;
}

Check SetPuScalar(ProcessingUnit& pu, std::string_view key, const Scalar& v) {
  int64_t i = 0;
  double d = 0;
  if (key == "name") return ParseStringText(v, &pu.name);
  if (key == "kind") return ParseChoice(v.text, kKinds, &pu.kind);
  if (key == "execution") return ParseChoice(v.text, kExecutions, &pu.execution);
  if (key == "cost") return ParseChoice(v.text, kCostSources, &pu.cost_source);
  if (key == "grouped_conv") return ParseChoice(v.text, kMappings, &pu.cim.grouped_conv);
  if (key == "signed_weights") return ParseChoice(v.text, kSignedWeights, &pu.cim.signed_weights);
  if (key == "slice_mapping") return ParseChoice(v.text, kSliceMappings, &pu.cim.slice_mapping);
  if (key == "table") return ParseStringText(v, &pu.table);
  if (key == "provider") return ParseStringText(v, &pu.provider);
  if (key == "runtime") return ParseStringText(v, &pu.runtime);
  if (key == "device") return ParseStringText(v, &pu.device);
  if (key == "cores") {
    pu.cores.clear();
    for (const std::string& item : SplitList(v.text)) {
      if (Check c = AddPuCore(pu, Scalar{item, false})) return c;
    }
    if (pu.cores.empty()) return Problem{"names no core", "write core numbers such as 0,1"};
    return std::nullopt;
  }
  if (key == "im2col_load") return ParseBoolText(v, &pu.cim.im2col_load);
  if (key == "reprogram") return ParseBoolText(v, &pu.cim.reprogram);
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
  CimCircuit& circuit = pu.cim.circuit;
  int64_t* int_field = key == "crossbar_rows"     ? &pu.cim.crossbar_rows
                       : key == "crossbar_cols"   ? &pu.cim.crossbar_cols
                       : key == "crossbars"       ? &pu.cim.crossbars
                       : key == "weight_bits"     ? &pu.cim.weight_bits
                       : key == "input_bits"      ? &circuit.input_bits
                       : key == "dac_bits"        ? &circuit.dac_bits
                       : key == "adc_bits"        ? &circuit.adc_bits
                       : key == "columns_per_adc" ? &circuit.columns_per_adc
                                                  : nullptr;
  if (int_field != nullptr) {
    if (Check c = ParseIntText(v, &i)) return c;
    *int_field = i;
    return std::nullopt;
  }
  if (key == "element_bytes") {
    if (Check c = ParseIntText(v, &i)) return c;
    pu.cim.element_bytes = i;
    return std::nullopt;
  }
  if (key == "bits_per_cell" || key == "shared_adcs") {
    if (Check c = ParseIntText(v, &i)) return c;
    (key == "bits_per_cell" ? pu.cim.bits_per_cell : pu.cim.shared_adcs) = i;
    return std::nullopt;
  }
  if (key == "power_w") {
    if (Check c = ParseNumberText(v, &d)) return c;
    pu.power_w = d;
    return std::nullopt;
  }
  std::optional<double>* energy = key == "adc_energy_pj"               ? &circuit.adc_energy_pj
                                  : key == "dac_energy_pj"             ? &circuit.dac_energy_pj
                                  : key == "array_energy_pj"           ? &circuit.array_energy_pj
                                  : key == "shift_add_energy_pj"       ? &circuit.shift_add_energy_pj
                                  : key == "buffer_energy_pj_per_byte" ? &circuit.buffer_energy_pj_per_byte
                                  : key == "mvm_latency_ns"            ? &pu.cim.mvm_latency_ns
                                  : key == "write_energy_pj_per_row"   ? &pu.cim.write_energy_pj_per_row
                                                                       : nullptr;
  if (energy != nullptr) {
    if (Check c = ParseNumberText(v, &d)) return c;
    *energy = d;
    return std::nullopt;
  }
  double* num_field = key == "adc_conversion_ns"       ? &circuit.adc_conversion_ns
                      : key == "array_read_ns"         ? &circuit.array_read_ns
                      : key == "mvm_overhead_ns"       ? &circuit.mvm_overhead_ns
                      : key == "write_ns_per_row"      ? &pu.cim.write_ns_per_row
                      : key == "endurance_writes"      ? &pu.cim.endurance_writes
                      : key == "lifetime_inferences"   ? &pu.cim.lifetime_inferences
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

Check SetPuMapEntry(ProcessingUnit& pu, std::string_view key, std::string_view entry,
                    const Scalar& v) {
  if (entry.empty() || entry.size() > kMaxPlatformStringChars) {
    return Problem{"the entry name is empty or too long",
                   "name a dtype (peak_gflops), an op type (efficiency) or an option (provider_options)"};
  }
  if (key == "provider_options") {
    // ORT takes every provider option as text: numbers and booleans too.
    std::string text;
    if (Check c = ParseStringText(v, &text)) return c;
    pu.provider_options[std::string(entry)] = std::move(text);
    return std::nullopt;
  }
  double d = 0;
  if (Check c = ParseNumberText(v, &d)) return c;
  auto& map = key == "peak_gflops" ? pu.roofline.peak_gflops : pu.roofline.efficiency;
  map[std::string(entry)] = d;
  return std::nullopt;
}

Check AddPuCore(ProcessingUnit& pu, const Scalar& v) {
  int64_t i = 0;
  if (Check c = ParseIntText(v, &i)) return c;
  if (i < 0 || i > kMaxCoreId) {
    return Problem{fmt::format("core {} is out of range", i),
                   fmt::format("give logical CPU numbers 0 to {} (as `nproc` and /proc/cpuinfo count them)",
                               kMaxCoreId)};
  }
  pu.cores.push_back(static_cast<int>(i));
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

}  // namespace hetplan::platform_internal
