// PlatformToJson and the enums' names (ToString, Parse*).
#include "hetplan/platform/platform.h"
#include "platform/platform_internal.h"

namespace hetplan {

using platform_internal::Check;
using platform_internal::kKinds;
using platform_internal::kExecutions;
using platform_internal::kCostSources;
using platform_internal::kMappings;
using platform_internal::ParseChoice;

namespace {

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

}  // namespace

std::string ToString(PuKind kind) { return ChoiceName(kind, kKinds); }
std::string ToString(Execution execution) { return ChoiceName(execution, kExecutions); }
std::string ToString(CostSource source) { return ChoiceName(source, kCostSources); }
std::string ToString(GroupedConvMapping mapping) { return ChoiceName(mapping, kMappings); }
std::string ToString(SignedWeights s) { return ChoiceName(s, platform_internal::kSignedWeights); }
std::string ToString(SliceMapping s) { return ChoiceName(s, platform_internal::kSliceMappings); }

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
    if (pu.OpenVino()) {  // only then, so that ONNX Runtime PUs' JSON stays what it was
      u["runtime"] = pu.runtime;
      u["device"] = pu.OpenVinoDevice();
    }
    if (pu.cost_source == CostSource::kProfile) {
      u["threads"] = pu.threads;
      if (!pu.OpenVino()) u["provider"] = CanonicalProvider(pu.provider);
      u["provider_options"] = pu.provider_options;
      u["cores"] = pu.cores;
    }
    if (pu.cost_source == CostSource::kTable) u["table"] = pu.table;
    if (pu.kind == PuKind::kCim) {
      const CimParams& c = pu.cim;
      u["crossbar_rows"] = c.crossbar_rows;
      u["crossbar_cols"] = c.crossbar_cols;
      u["crossbars"] = c.crossbars;
      u["mvm_latency_ns"] = c.MvmLatencyNs();
      u["bandwidth_gbps"] = c.bandwidth_gbps;
      u["element_bytes"] = c.element_bytes ? nlohmann::json(*c.element_bytes) : nlohmann::json(nullptr);
      u["supported_ops"] = c.supported_ops;
      u["grouped_conv"] = ToString(c.grouped_conv);
      u["im2col_load"] = c.im2col_load;
      // Only when set: the CIM paper's idealisation (one cell a weight) writes what it always wrote.
      if (c.bits_per_cell) {
        u["bits_per_cell"] = *c.bits_per_cell;
        u["weight_bits"] = c.weight_bits;
      }
      if (c.signed_weights != SignedWeights::kOffset) u["signed_weights"] = ToString(c.signed_weights);
      if (c.slice_mapping != SliceMapping::kColumns) u["slice_mapping"] = ToString(c.slice_mapping);
      // Only when given: the circuit T_mvm above derives from, its energies.
      if (c.circuit.given()) {
        const CimCircuit& k = c.circuit;
        u["input_bits"] = k.input_bits;
        u["dac_bits"] = k.dac_bits;
        u["adc_bits"] = k.adc_bits;
        u["columns_per_adc"] = k.columns_per_adc;
        u["adc_conversion_ns"] = k.adc_conversion_ns;
        u["array_read_ns"] = k.array_read_ns;
        u["mvm_overhead_ns"] = k.mvm_overhead_ns;
      }
      if (c.shared_adcs) u["shared_adcs"] = *c.shared_adcs;
      // Only when given: reprogramming and the device's writes.
      if (c.reprogram) u["reprogram"] = true;
      if (c.write_ns_per_row > 0) u["write_ns_per_row"] = c.write_ns_per_row;
      if (c.write_energy_pj_per_row) u["write_energy_pj_per_row"] = *c.write_energy_pj_per_row;
      if (c.endurance_writes > 0) u["endurance_writes"] = c.endurance_writes;
      if (c.lifetime_inferences > 0) u["lifetime_inferences"] = c.lifetime_inferences;
      for (const auto& [name, value] : c.circuit.EnergyKeys()) {
        if (value) u[name] = *value;
      }
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
