// The hardware a model is planned for: processing units (PUs) and the links
// between them. Loaded from YAML (docs/platform-format.md), validated, and
// adjusted with `key=value` overrides. Presets live in platforms/.
//
// Units: bandwidths in GB/s with 1 GB/s = 10^9 bytes/s, times in µs unless the
// name says otherwise (mvm_latency_ns), power in W.
#pragma once

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/util/status.h"

namespace hetplan {

enum class PuKind { kCpu, kCim, kGpu, kNpu };

// kSerial: one operator at a time. kSpatial: concurrent operators on
// disjoint resources with a capacity (the crossbars of a CIM accelerator).
enum class Execution { kSerial, kSpatial };

// Where a PU's operator costs come from. kProfile: measured with ONNX
// Runtime; kCim: the analytical CIM model (cost/cim_model.h); kTable: a user
// CSV; kRoofline: an analytical roofline.
enum class CostSource { kProfile, kCim, kTable, kRoofline };

// How a grouped convolution (groups > 1) is laid out on crossbars; see
// cost/cim_model.h.
enum class GroupedConvMapping { kBlockDiagonal, kPerGroup };
// How a signed weight is stored: an offset (one column per bit slice, the sign
// folded into a bias) or a differential pair (two columns per bit slice).
enum class SignedWeights { kOffset, kDifferential };
// Where a weight's bit slices (and a differential pair's two signs) go:
// adjacent columns of the same crossbars (NeuroSim's numColPerSynapse, ISAAC),
// or each slice and sign in crossbars of its own (PUMA's bit-sliced MVMUs).
enum class SliceMapping { kColumns, kCrossbars };

// The circuit behind one MVM (docs/platform-format.md, "The MVM circuit").
// Given (input_bits > 0), T_mvm follows from it: the input streams into the
// rows dac_bits per cycle, ceil(input_bits / dac_bits) cycles, each cycle a
// read of the array and columns_per_adc conversions by each ADC, the two
// pipelined (a cycle takes the longer), plus a fixed mvm_overhead_ns. The
// energies (pJ), where given, price every MVM (cost/cim_model.h, CimEnergy).
struct CimCircuit {
  int64_t input_bits = 0;        // bits of each input element; 0 = no circuit
  int64_t dac_bits = 1;          // bits a row's DAC applies per cycle
  int64_t adc_bits = 8;          // ADC resolution (the energies are per conversion at it)
  int64_t columns_per_adc = 1;   // columns one ADC converts in turn
  double adc_conversion_ns = 0;  // one conversion
  double array_read_ns = 0;      // one read of the array (one input cycle)
  double mvm_overhead_ns = 0;    // fixed per MVM: pipeline fill, sample-and-hold, the last shift-and-add
  std::optional<double> adc_energy_pj;        // per conversion
  std::optional<double> dac_energy_pj;        // per row driven per cycle
  std::optional<double> array_energy_pj;      // per crossbar read (one cycle)
  std::optional<double> shift_add_energy_pj;  // per conversion accumulated
  std::optional<double> buffer_energy_pj_per_byte;  // per byte loaded or stored

  bool given() const { return input_bits > 0; }
  // The energy keys by name, as YAML writes them.
  std::array<std::pair<std::string_view, std::optional<double>>, 5> EnergyKeys() const {
    return {{{"adc_energy_pj", adc_energy_pj},
             {"dac_energy_pj", dac_energy_pj},
             {"array_energy_pj", array_energy_pj},
             {"shift_add_energy_pj", shift_add_energy_pj},
             {"buffer_energy_pj_per_byte", buffer_energy_pj_per_byte}}};
  }
  bool HasEnergy() const {
    return adc_energy_pj || dac_energy_pj || array_energy_pj || shift_add_energy_pj || buffer_energy_pj_per_byte;
  }
  int64_t InputCycles() const { return dac_bits <= 0 ? 0 : (input_bits + dac_bits - 1) / dac_bits; }
  // One cycle: the array read and the ADCs' conversions, pipelined.
  double CycleNs() const {
    const double convert = static_cast<double>(columns_per_adc) * adc_conversion_ns;
    return array_read_ns > convert ? array_read_ns : convert;
  }
  double MvmLatencyNs() const { return static_cast<double>(InputCycles()) * CycleNs() + mvm_overhead_ns; }
};

inline constexpr double kDefaultMvmLatencyNs = 50;

struct CimParams {
  int64_t crossbar_rows = 256;  // N: input-vector length one crossbar takes
  int64_t crossbar_cols = 256;  // M: outputs one crossbar produces
  int64_t crossbars = 100;      // C: the crossbar budget; 0 = nothing fits
  // T_mvm fixed (the CIM paper's mode): when given it wins over the circuit
  // (whose energies still apply); absent: from the circuit when it is given,
  // else kDefaultMvmLatencyNs. Read it through MvmLatencyNs().
  std::optional<double> mvm_latency_ns;
  CimCircuit circuit;
  double bandwidth_gbps = 10.24;  // B_cim, internal load/store bandwidth
  // b_elem for every tensor the CIM loads and stores; absent = each tensor's
  // own element size (1 for the int8/uint8 tensors of a quantized model).
  std::optional<int64_t> element_bytes;
  std::vector<std::string> supported_ops = {"Conv", "Gemm", "MatMul", "LSTM", "GRU", "RNN"};
  GroupedConvMapping grouped_conv = GroupedConvMapping::kBlockDiagonal;
  bool im2col_load = false;     // load the im2col'd input instead of the raw input
  // Weights as cells store them: a weight of `weight_bits` bits takes
  // ⌈weight_bits / bits_per_cell⌉ cells (×2 for differential pairs), in
  // adjacent columns or in crossbars of their own (slice_mapping). Unset
  // bits_per_cell: one cell holds a whole weight (the CIM paper's eq. 1).
  std::optional<int64_t> bits_per_cell;
  int64_t weight_bits = 8;
  SignedWeights signed_weights = SignedWeights::kOffset;
  SliceMapping slice_mapping = SliceMapping::kColumns;
  // ADCs the PU's crossbars share (docs/platform-format.md, "Shared ADCs"):
  // unset, every crossbar has its own (crossbar_cols / columns_per_adc of
  // them). Set, a pool of this many ADCs serves whichever crossbars read: an
  // operator holds AdcDemand of them while it runs, and operators that run at
  // the same time hold at most the pool. Needs the circuit.
  std::optional<int64_t> shared_adcs;
  // Reprogramming (docs/platform-format.md, "Reprogramming"): with
  // `reprogram`, an operator may be rewritten into free crossbars every
  // inference instead of staying resident: its weights are written row by row
  // (every crossbar it takes in parallel) when it is dispatched, then it runs,
  // then its crossbars are free again. The endurance budget: each cell takes
  // at most `endurance_writes` writes over `lifetime_inferences` inferences.
  bool reprogram = false;
  double write_ns_per_row = 0;                    // programming one row of one crossbar
  std::optional<double> write_energy_pj_per_row;  // per row written
  double endurance_writes = 0;                    // writes a cell survives
  double lifetime_inferences = 0;                 // inferences the device must serve
  double MvmLatencyNs() const {
    if (mvm_latency_ns) return *mvm_latency_ns;
    return circuit.given() ? circuit.MvmLatencyNs() : kDefaultMvmLatencyNs;
  }
  // Cells one weight occupies: its bit slices times its signs. A model whose
  // weights are stored as integers of `model_bits` bits (int8, int4,
  // MatMulNBits; Operator::weight_bits) needs no more than those: the CIM
  // stores min(model_bits, weight_bits) bits; 0 (a float weight): weight_bits.
  int64_t CellsPerWeight(int64_t model_bits = 0) const {
    const int64_t bits = model_bits > 0 && model_bits < weight_bits ? model_bits : weight_bits;
    const int64_t slices = bits_per_cell ? (bits + *bits_per_cell - 1) / *bits_per_cell : 1;
    return slices * (signed_weights == SignedWeights::kDifferential ? 2 : 1);
  }
  // The ADCs an operator holding `crossbars` crossbars takes from the shared
  // pool: one per columns_per_adc columns of its crossbars, at most the pool
  // (an operator that would need more converts with the whole pool, each ADC
  // taking more columns in turn: AdcCycleNs). 0 without a pool.
  int64_t AdcDemand(int64_t crossbars) const {
    if (!shared_adcs || crossbars <= 0) return 0;
    const int64_t per_crossbar = (crossbar_cols + circuit.columns_per_adc - 1) / circuit.columns_per_adc;
    const int64_t want = crossbars > INT64_MAX / per_crossbar ? INT64_MAX : crossbars * per_crossbar;
    return want < *shared_adcs ? want : *shared_adcs;
  }
  // T_mvm of an operator holding `crossbars` crossbars: MvmLatencyNs, unless
  // the shared pool is smaller than what its columns need; then each ADC
  // converts ceil(crossbars × crossbar_cols / shared_adcs) columns per cycle.
  double MvmLatencyNs(int64_t crossbars) const {
    if (!shared_adcs || !circuit.given() || mvm_latency_ns || crossbars <= 0) return MvmLatencyNs();
    const double columns = static_cast<double>(crossbars) * static_cast<double>(crossbar_cols);
    const double per_adc = std::ceil(columns / static_cast<double>(*shared_adcs));
    if (per_adc <= static_cast<double>(circuit.columns_per_adc)) return MvmLatencyNs();
    const double cycle = std::max(circuit.array_read_ns, per_adc * circuit.adc_conversion_ns);
    return static_cast<double>(circuit.InputCycles()) * cycle + circuit.mvm_overhead_ns;
  }
};

struct RooflineParams {
  std::map<std::string, double> peak_gflops;  // by ONNX dtype: float32, float16, int8, ...
  double memory_bandwidth_gbps = 0;
  double dispatch_us = 0;                     // fixed cost per operator
  std::map<std::string, double> efficiency;   // by op type, or "default"; absent = 1
};

struct ProcessingUnit {
  std::string name;
  PuKind kind = PuKind::kCpu;
  Execution execution = Execution::kSerial;
  CostSource cost_source = CostSource::kProfile;
  std::optional<double> power_w;
  int threads = 1;      // intra-op threads when profiling and running (cost: profile)
  // How a measured PU (cost: profile) runs: an ONNX Runtime configuration.
  // `provider` is the execution provider by hetplan's name (cpu, cuda,
  // openvino, ...; kKnownProviders), `provider_options` its options as ORT
  // takes them, `cores` the logical CPUs its threads are pinned to (empty:
  // not pinned, the OS places them).
  std::string provider = "cpu";
  std::map<std::string, std::string> provider_options;
  std::vector<int> cores;
  // The runtime that measures and runs the PU: "onnxruntime" (the default,
  // configured by `provider`) or "openvino" (docs/openvino.md), which runs
  // it on the OpenVINO device `device` (CPU, GPU, GPU.1, NPU, ...; empty:
  // CPU) and takes `provider_options` as that device's properties
  // (INFERENCE_PRECISION_HINT: bf16, ...).
  std::string runtime = "onnxruntime";
  std::string device;
  bool OpenVino() const { return runtime == "openvino"; }
  std::string OpenVinoDevice() const { return device.empty() ? std::string("CPU") : device; }
  std::string table;    // CSV path for cost: table; LoadPlatform resolves it against the YAML's folder
  CimParams cim;        // meaningful for kind kCim
  RooflineParams roofline;  // meaningful for cost kRoofline
};

// An undirected link between two PUs. Transfers over it take
// latency_us + bytes / bandwidth (cost/cim_model.h, TransferUs). For a pair
// without a link the cost model uses measured device copies instead
// (cost/build.h).
struct Link {
  std::string a, b;
  double bandwidth_gbps = 0;
  double latency_us = 0;
  std::optional<int64_t> element_bytes;  // bytes per transferred element; absent = each tensor's own
};

struct Platform {
  std::string name;
  std::string description;
  std::string source;  // file path, or "preset:klein-arm"
  std::vector<ProcessingUnit> pus;
  std::vector<Link> links;
  std::vector<std::string> overrides;  // assignments applied by ApplyOverride, in order

  // Index of the PU called `name`, -1 if absent.
  int FindPu(std::string_view name) const;
  // The link between a and b in either direction, nullptr if none.
  const Link* FindLink(std::string_view a, std::string_view b) const;
};

// Limits enforced by the parser and ValidatePlatform.
inline constexpr int kMaxPus = 64;
inline constexpr size_t kMaxPlatformStringChars = 4096;
inline constexpr size_t kMaxPlatformYamlBytes = size_t{1} << 20;
inline constexpr int kMaxCoreId = 4095;

// The execution providers a PU may name (`provider:`), lower case. Whether
// the installed ONNX Runtime has one is checked where it is used
// (cost/pu_runtime.h), not here: a platform file describes hardware that
// need not be this machine.
// The runtimes a PU may name (`runtime:`).
inline constexpr std::array<std::string_view, 2> kRuntimes = {"onnxruntime", "openvino"};

inline constexpr std::array<std::string_view, 13> kKnownProviders = {
    "cpu", "cuda", "tensorrt", "rocm", "openvino", "dnnl", "qnn", "snpe", "xnnpack", "coreml", "vitisai", "webgpu",
    "azure"};

// Parses and validates a platform document. `file_label` prefixes every
// error (`<file_label>:<line>: <key path>: <problem>; <fix>`) and becomes
// Platform::source. Never throws and never crashes, whatever the input.
Result<Platform> ParsePlatformYaml(std::string_view yaml_text, const std::string& file_label);

// `name_or_path` is a path when it contains '/' or ends in .yaml/.yml;
// otherwise a preset name, looked up as <dir>/<name>.yaml in
// $HETPLAN_PLATFORM_DIR, then in HETPLAN_SOURCE_DIR/platforms. Relative
// `table:` paths are resolved against the YAML file's folder.
Result<Platform> LoadPlatform(const std::string& name_or_path);
// LoadPlatform, then ApplyOverride with each of `overrides` in order.
Result<Platform> LoadPlatform(const std::string& name_or_path, const std::vector<std::string>& overrides);

// Applies one assignment: "<pu>.<key>=<value>" (e.g. "cim.crossbars=200",
// "cpu.power_w=5", "gpu.peak_gflops.float32=80", "gpu.efficiency.Conv=0.6",
// "cim.supported_ops=Conv,Gemm") or "link.<a>-<b>.<key>=<value>" (e.g.
// "link.cpu-cim.bandwidth_gbps=5"). The PU's name and kind cannot be
// overridden. The result is re-validated; on any error `p` is unchanged and
// the message names the assignment and the valid keys.
Status ApplyOverride(Platform& p, std::string_view assignment);

// Checks every rule of docs/platform-format.md on a platform however it was
// built. Errors read `<source>: <key path>: <problem>; <fix>`.
Status ValidatePlatform(const Platform& p);

// {name, description, source, overrides, pus: [names in order],
//  <pu name>: {kind, execution, cost_source, power_w (null if absent), every
//  resolved parameter that applies to the PU}, links: [{a, b, bandwidth_gbps,
//  latency_us, element_bytes (null if absent)}]}.
nlohmann::json PlatformToJson(const Platform& p);

// A provider name in hetplan's spelling: `name` lower-cased, ORT's
// "ExecutionProvider" suffix dropped ("CUDAExecutionProvider" and "CUDA" are
// "cuda"); "" when it is not one of kKnownProviders.
std::string CanonicalProvider(std::string_view name);

// Lower-case names as written in YAML.
std::string ToString(PuKind kind);
std::string ToString(Execution execution);
std::string ToString(CostSource source);
std::string ToString(GroupedConvMapping mapping);
std::string ToString(SignedWeights s);
std::string ToString(SliceMapping s);
Result<PuKind> ParsePuKind(std::string_view text);
Result<Execution> ParseExecution(std::string_view text);
Result<CostSource> ParseCostSource(std::string_view text);
Result<GroupedConvMapping> ParseGroupedConvMapping(std::string_view text);

}  // namespace hetplan
