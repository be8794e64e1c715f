// ValidatePlatform: every rule of docs/platform-format.md, on a platform
// however it was built. The YAML reader runs the same rules with a locator
// that turns key paths into file lines.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "hetplan/platform/platform.h"
#include "hetplan/util/utf8.h"
#include "platform/platform_internal.h"

namespace hetplan {
namespace platform_internal {
namespace {

constexpr int64_t kMaxCrossbarDim = int64_t{1} << 20;
constexpr int64_t kMaxCrossbars = int64_t{1} << 40;
constexpr int64_t kMaxElementBytes = 16;
constexpr int64_t kMaxSharedAdcs = int64_t{1} << 30;

// PU names that would collide with PlatformToJson's keys or the override
// syntax.
constexpr std::array<std::string_view, 7> kReservedNames = {
    "name", "description", "source", "overrides", "pus", "links", "link"};

// The ONNX Runtime configuration of a measured PU: provider, its options,
// cores (docs/platform-format.md).
template <typename Key, typename Fail>
Status ValidateRuntime(const ProcessingUnit& pu, const Key& key, const Fail& fail) {
  if (std::find(kRuntimes.begin(), kRuntimes.end(), pu.runtime) == kRuntimes.end()) {
    return fail(key("runtime"), fmt::format("unknown runtime '{}'", Shorten(pu.runtime)),
                fmt::format("use one of: {}", JoinKeys(kRuntimes)));
  }
  if (pu.OpenVino()) {
    if (pu.kind == PuKind::kCim) {
      return fail(key("runtime"), "a CIM PU is not an OpenVINO device",
                  "remove runtime: openvino, or make the PU kind cpu, gpu or npu");
    }
    if (CanonicalProvider(pu.provider) != "cpu") {
      return fail(key("provider"), "names an ONNX Runtime execution provider, but the PU runs on OpenVINO",
                  "remove provider, and name the OpenVINO device with device: (CPU, GPU, NPU, ...)");
    }
    if (!pu.cores.empty()) {
      return fail(key("cores"), "pinning is not supported with runtime: openvino (OpenVINO places its own threads)",
                  "remove cores");
    }
  } else if (!pu.device.empty()) {
    return fail(key("device"), "names an OpenVINO device, but the PU runs on ONNX Runtime",
                "add runtime: openvino, or remove device (ONNX Runtime PUs name a provider:)");
  }
  const bool plain = !pu.device.empty() && pu.device.size() <= 64 &&
                     std::all_of(pu.device.begin(), pu.device.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_';
                     });
  if (!pu.device.empty() && !plain) {
    return fail(key("device"), fmt::format("'{}' is not an OpenVINO device name", Shorten(pu.device)),
                "name one device as OpenVINO spells it: CPU, GPU, GPU.1, NPU (a plan's split makes HETERO itself)");
  }
  if (pu.provider.size() > kMaxPlatformStringChars) return fail(key("provider"), "longer than 4096 characters", "shorten it");
  if (CanonicalProvider(pu.provider).empty()) {
    return fail(key("provider"), fmt::format("unknown execution provider '{}'", Shorten(pu.provider)),
                fmt::format("use one of: {}", JoinKeys(kKnownProviders)));
  }
  for (const auto& [option, value] : pu.provider_options) {
    if (option.empty() || option.size() > kMaxPlatformStringChars || value.size() > kMaxPlatformStringChars) {
      return fail(key("provider_options"), "an option name is empty, or a name or value is too long",
                  "write options as name: value, e.g. device_id: 0");
    }
    if (!IsUtf8(option) || !IsUtf8(value)) return fail(key("provider_options"), "is not valid UTF-8", "write the text in UTF-8");
  }
  if (!pu.provider_options.empty() && CanonicalProvider(pu.provider) == "cpu" && !pu.OpenVino()) {
    return fail(key("provider_options"), "the cpu provider takes no options here",
                "remove provider_options, or name the provider they belong to (provider: cuda, ...)");
  }
  for (size_t c = 0; c < pu.cores.size(); ++c) {
    const std::string at = fmt::format("{}[{}]", key("cores"), c);
    if (pu.cores[c] < 0 || pu.cores[c] > kMaxCoreId) {
      return fail(at, fmt::format("core {} is out of range", pu.cores[c]),
                  fmt::format("give logical CPU numbers 0 to {}", kMaxCoreId));
    }
    for (size_t d = 0; d < c; ++d) {
      if (pu.cores[d] == pu.cores[c]) {
        return fail(at, fmt::format("core {} is listed twice", pu.cores[c]), "list each core once");
      }
    }
  }
  if (!pu.cores.empty() && pu.threads > static_cast<int>(pu.cores.size())) {
    return fail(key("threads"),
                fmt::format("{} intra-op threads pinned to {} core{}: the threads would share cores", pu.threads,
                            pu.cores.size(), pu.cores.size() == 1 ? "" : "s"),
                "give as many cores as threads (cores: [0, 1] for threads: 2), or fewer threads");
  }
  return Status::Ok();
}

// The one-line error of a platform key: where it is, what is wrong, the fix.
struct Failer {
  const Locator& where;
  Status operator()(const std::string& path, std::string_view what, std::string_view fix) const {
    return Error(ErrorCode::kInvalidArgument, "{}: {}: {}; {}", where(path), path, what, fix);
  }
};

bool Positive(double x) { return std::isfinite(x) && x > 0; }
bool NonNegative(double x) { return std::isfinite(x) && x >= 0; }
Status NotUtf8(const Failer& fail, const std::string& path) {
  return fail(path, "is not valid UTF-8", "write the text in UTF-8");
}
// A key whose value must be a finite number > 0.
Status RequirePositive(const Failer& fail, const std::string& path, double v, std::string_view fix) {
  if (Positive(v)) return Status::Ok();
  return fail(path, fmt::format("must be a finite number > 0, got {}", v), fix);
}

// The MVM circuit's keys: in range, and given only with input_bits.
template <typename Key>
Status ValidateCircuit(const CimParams& c, const Key& key, const Failer& fail) {
  const CimCircuit& k = c.circuit;
  const CimCircuit defaults;
  const bool timing_set = k.dac_bits != defaults.dac_bits || k.adc_bits != defaults.adc_bits ||
                          k.columns_per_adc != defaults.columns_per_adc || k.adc_conversion_ns != 0 ||
                          k.array_read_ns != 0 || k.mvm_overhead_ns != 0;
  if (k.input_bits < 0 || k.input_bits > 64) {
    return fail(key("input_bits"), fmt::format("must be 1 to 64, got {}", k.input_bits),
                "give the bits of each input element, e.g. 8");
  }
  if (!k.given()) {
    if (timing_set || k.HasEnergy()) {
      return fail(key("input_bits"), "the MVM circuit's keys are given without input_bits",
                  "add input_bits (the bits of each input element, e.g. 8), or remove the circuit's keys");
    }
    return Status::Ok();
  }
  if (k.dac_bits < 1 || k.dac_bits > k.input_bits) {
    return fail(key("dac_bits"), fmt::format("must be 1 to input_bits ({}), got {}", k.input_bits, k.dac_bits),
                "give the bits a row's DAC applies per cycle, e.g. 1");
  }
  if (k.adc_bits < 1 || k.adc_bits > 32) {
    return fail(key("adc_bits"), fmt::format("must be 1 to 32, got {}", k.adc_bits), "give the ADC's resolution, e.g. 8");
  }
  if (k.columns_per_adc < 1 || k.columns_per_adc > c.crossbar_cols) {
    return fail(key("columns_per_adc"),
                fmt::format("must be 1 to crossbar_cols ({}), got {}", c.crossbar_cols, k.columns_per_adc),
                "give the columns one ADC converts in turn, e.g. 128");
  }
  const std::pair<const char*, double> times[] = {{"adc_conversion_ns", k.adc_conversion_ns},
                                                  {"array_read_ns", k.array_read_ns},
                                                  {"mvm_overhead_ns", k.mvm_overhead_ns}};
  for (const auto& [name, v] : times) {
    if (!NonNegative(v)) {
      return fail(key(name), fmt::format("must be a finite number >= 0, got {}", v), "give a time in ns");
    }
  }
  if (!c.mvm_latency_ns && !Positive(k.MvmLatencyNs())) {
    return fail(key("array_read_ns"), "the circuit gives an MVM no time",
                "give array_read_ns or adc_conversion_ns (or a fixed mvm_latency_ns)");
  }
  for (const auto& [name, v] : k.EnergyKeys()) {
    if (v && !NonNegative(*v)) {
      return fail(key(std::string(name)), fmt::format("must be a finite number >= 0, got {}", *v),
                  "give an energy in pJ");
    }
  }
  return Status::Ok();
}

// Reprogramming: the write keys (the device's; they may be given before
// `reprogram: true`, which needs them, the analytical model that lays out the
// rows to write, and a spatial PU) in range.
template <typename Key>
Status ValidateReprogram(const ProcessingUnit& pu, const Key& key, const Failer& fail) {
  const CimParams& c = pu.cim;
  const std::pair<const char*, double> given[] = {{"write_ns_per_row", c.write_ns_per_row},
                                                  {"endurance_writes", c.endurance_writes},
                                                  {"lifetime_inferences", c.lifetime_inferences}};
  for (const auto& [name, v] : given) {
    if (v != 0 || c.reprogram) {
      HETPLAN_RETURN_IF_ERROR(RequirePositive(
          fail, key(name), v,
          c.reprogram ? "reprogram: true needs write_ns_per_row, endurance_writes and lifetime_inferences (e.g. 100, "
                        "1e6, 1e6), or remove reprogram"
                      : "give a number > 0"));
    }
  }
  if (c.write_energy_pj_per_row && !NonNegative(*c.write_energy_pj_per_row)) {
    return fail(key("write_energy_pj_per_row"),
                fmt::format("must be a finite number >= 0, got {}", *c.write_energy_pj_per_row),
                "give the energy to program one row in pJ");
  }
  if (c.reprogram && (pu.cost_source != CostSource::kCim || pu.execution != Execution::kSpatial)) {
    return fail(key("reprogram"), "reprogramming needs a spatial PU with cost: cim (the model lays out the rows to write)",
                "use execution: spatial and cost: cim, or remove reprogram");
  }
  return Status::Ok();
}

// A CIM PU's crossbars, timing and precision.
template <typename Key>
Status ValidateCim(const CimParams& c, const Key& key, const Failer& fail) {
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
  if (c.mvm_latency_ns) {
    HETPLAN_RETURN_IF_ERROR(
        RequirePositive(fail, key("mvm_latency_ns"), *c.mvm_latency_ns, "give the latency of one MVM in ns, e.g. 50"));
  }
  HETPLAN_RETURN_IF_ERROR(ValidateCircuit(c, key, fail));
  if (c.shared_adcs) {
    if (*c.shared_adcs < 1 || *c.shared_adcs > kMaxSharedAdcs) {
      return fail(key("shared_adcs"), fmt::format("must be 1 to {}, got {}", kMaxSharedAdcs, *c.shared_adcs),
                  "give the ADCs the crossbars share, e.g. 64 (or remove the key: every crossbar has its own)");
    }
    if (!c.circuit.given() || c.mvm_latency_ns) {
      return fail(key("shared_adcs"), "a shared ADC pool needs T_mvm from the circuit",
                  "give input_bits and the circuit's timing (docs/platform-format.md, \"The MVM circuit\") and "
                  "no fixed mvm_latency_ns, or remove shared_adcs");
    }
  }
  HETPLAN_RETURN_IF_ERROR(
      RequirePositive(fail, key("bandwidth_gbps"), c.bandwidth_gbps,
                      "give the internal bandwidth in GB/s, e.g. 10.24"));
  if (c.bits_per_cell && (*c.bits_per_cell < 1 || *c.bits_per_cell > 16)) {
    return fail(key("bits_per_cell"), fmt::format("must be 1 to 16, got {}", *c.bits_per_cell),
                "give the bits one cell stores, e.g. 2 (or remove the key: one cell holds a whole weight)");
  }
  if (c.weight_bits < 1 || c.weight_bits > 32) {
    return fail(key("weight_bits"), fmt::format("must be 1 to 32, got {}", c.weight_bits),
                "give the weights' precision in bits, e.g. 8 for INT8");
  }
  if (c.element_bytes && (*c.element_bytes <= 0 || *c.element_bytes > kMaxElementBytes)) {
    return fail(key("element_bytes"), fmt::format("must be 1 to {}, got {}", kMaxElementBytes, *c.element_bytes),
                "give bytes per element, e.g. 1 for INT8");
  }
  for (size_t k = 0; k < c.supported_ops.size(); ++k) {
    const std::string& op = c.supported_ops[k];
    if (op.empty() || op.size() > kMaxPlatformStringChars) {
      return fail(fmt::format("{}[{}]", key("supported_ops"), k), "an op type is empty or too long",
                  "write ONNX op types such as Conv, Gemm, MatMul");
    }
    if (!IsUtf8(op)) {
      return NotUtf8(fail, fmt::format("{}[{}]", key("supported_ops"), k));
    }
  }
  return Status::Ok();
}

// A roofline PU's peaks, bandwidth, dispatch cost and efficiencies.
template <typename Key>
Status ValidateRoofline(const RooflineParams& r, const Key& key, const Failer& fail) {
  if (r.peak_gflops.empty()) {
    return fail(key("peak_gflops"), "cost: roofline needs peak GFLOP/s for at least one dtype",
                "add peak_gflops: {float32: 50}");
  }
  for (const auto& [dtype, g] : r.peak_gflops) {
    if (dtype.empty() || dtype.size() > kMaxPlatformStringChars) {
      return fail(key("peak_gflops"), "a dtype name is empty or too long", "use ONNX dtype names such as float32");
    }
    if (!IsUtf8(dtype)) return NotUtf8(fail, key("peak_gflops"));
    if (!Positive(g)) {
      return fail(fmt::format("{}.{}", key("peak_gflops"), dtype),
                  fmt::format("must be a finite number > 0, got {}", g), "give GFLOP/s, e.g. 50");
    }
  }
  if (!Positive(r.memory_bandwidth_gbps)) {
    return fail(key("memory_bandwidth_gbps"),
                fmt::format("cost: roofline needs a finite memory bandwidth > 0, got {}", r.memory_bandwidth_gbps),
                "add memory_bandwidth_gbps: <GB/s>, e.g. 25.6");
  }
  if (!NonNegative(r.dispatch_us)) {
    return fail(key("dispatch_us"), fmt::format("must be a finite number >= 0, got {}", r.dispatch_us),
                "give the per-operator dispatch cost in µs, e.g. 5");
  }
  for (const auto& [op, e] : r.efficiency) {
    if (op.empty() || op.size() > kMaxPlatformStringChars) {
      return fail(key("efficiency"), "an op type is empty or too long", "use ONNX op types or default");
    }
    if (!IsUtf8(op)) return NotUtf8(fail, key("efficiency"));
    if (!std::isfinite(e) || e <= 0 || e > 1) {
      return fail(fmt::format("{}.{}", key("efficiency"), op), fmt::format("must be in (0, 1], got {}", e),
                  "give the fraction of peak reached, e.g. 0.6");
    }
  }
  return Status::Ok();
}

// PU i: its name (unique, not reserved), kind, execution, cost source and
// the parameters of each.
Status ValidatePu(const Platform& p, size_t i, const Failer& fail) {
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
  if (!IsUtf8(pu.table)) return NotUtf8(fail, key("table"));
  if (pu.power_w && !Positive(*pu.power_w)) {
    return fail(key("power_w"), fmt::format("must be a finite number > 0, got {}", *pu.power_w),
                "give the average power in W, or remove the key");
  }
  if (pu.threads < 1 || pu.threads > kMaxThreads) {
    return fail(key("threads"), fmt::format("must be 1 to {}, got {}", kMaxThreads, pu.threads),
                "give the number of intra-op threads, e.g. 1");
  }
  if (Status st = ValidateRuntime(pu, [&](std::string_view k) { return key(k); }, fail); !st.ok()) return st;
  if (pu.kind == PuKind::kCim) HETPLAN_RETURN_IF_ERROR(ValidateCim(pu.cim, key, fail));
  if (pu.kind == PuKind::kCim) HETPLAN_RETURN_IF_ERROR(ValidateReprogram(pu, key, fail));
  if (pu.kind == PuKind::kCim && pu.cim.shared_adcs && pu.cost_source != CostSource::kCim) {
    return fail(key("shared_adcs"), "a shared ADC pool needs cost: cim (the analytical model derives each operator's ADCs)",
                "use cost: cim, or remove shared_adcs");
  }
  if (pu.cost_source == CostSource::kRoofline) HETPLAN_RETURN_IF_ERROR(ValidateRoofline(pu.roofline, key, fail));
  return Status::Ok();
}

// Link i: two different PUs, once per pair, with its bandwidth and latency.
Status ValidateLink(const Platform& p, size_t i, const Failer& fail) {
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
  HETPLAN_RETURN_IF_ERROR(
      RequirePositive(fail, key("bandwidth_gbps"), l.bandwidth_gbps, "give the link bandwidth in GB/s, e.g. 10.24"));
  if (!NonNegative(l.latency_us)) {
    return fail(key("latency_us"), fmt::format("must be a finite number >= 0, got {}", l.latency_us),
                "give the per-transfer latency in µs, e.g. 0");
  }
  if (l.element_bytes && (*l.element_bytes <= 0 || *l.element_bytes > kMaxElementBytes)) {
    return fail(key("element_bytes"), fmt::format("must be 1 to {}, got {}", kMaxElementBytes, *l.element_bytes),
                "give bytes per element, or remove the key to use each tensor's own");
  }
  return Status::Ok();
}

}  // namespace

bool ValidPuName(std::string_view name) {
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

Status ValidateImpl(const Platform& p, const Locator& where) {
  const Failer fail{where};
  if (p.name.empty()) return fail("name", "the platform has no name", "add name: <platform name>");
  if (p.name.size() > kMaxPlatformStringChars || p.description.size() > kMaxPlatformStringChars) {
    return fail(p.name.size() > kMaxPlatformStringChars ? "name" : "description",
                "longer than 4096 characters", "shorten it");
  }
  if (!IsUtf8(p.name)) return NotUtf8(fail, "name");
  if (!IsUtf8(p.description)) return NotUtf8(fail, "description");
  if (p.pus.empty()) {
    return fail("pus", "the platform has no processing units",
                "add at least one entry under pus: (name, kind)");
  }
  if (p.pus.size() > static_cast<size_t>(kMaxPus)) {
    return fail("pus", fmt::format("{} processing units, more than the limit of {}", p.pus.size(), kMaxPus),
                "merge or remove PUs");
  }
  for (size_t i = 0; i < p.pus.size(); ++i) HETPLAN_RETURN_IF_ERROR(ValidatePu(p, i, fail));
  for (size_t i = 0, first = p.pus.size(); i < p.pus.size(); ++i) {
    if (!p.pus[i].cim.reprogram || p.pus[i].kind != PuKind::kCim) continue;
    if (first < i) {
      return fail(fmt::format("pus[{}].reprogram", i),
                  fmt::format("a second PU reprograms (pus[{}] does already)", first),
                  "reprogram one CIM PU per platform");
    }
    first = i;
  }
  for (size_t i = 0; i < p.links.size(); ++i) HETPLAN_RETURN_IF_ERROR(ValidateLink(p, i, fail));
  return Status::Ok();
}

}  // namespace platform_internal

Status ValidatePlatform(const Platform& p) {
  std::string where = p.source.empty() ? "platform" : p.source;
  return platform_internal::ValidateImpl(p, [&where](const std::string&) { return where; });
}

}  // namespace hetplan
