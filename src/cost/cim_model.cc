#include "hetplan/cost/cim_model.h"

#include <algorithm>
#include <limits>

#include "hetplan/graph/quantization.h"

namespace hetplan {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t CeilDiv(int64_t a, int64_t b) { return b <= 0 ? 0 : (a <= 0 ? 0 : (a - 1) / b + 1); }

// a * b, saturating; both >= 0.
int64_t SatMul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  return a > kMax / b ? kMax : a * b;
}

int64_t Groups(const Operator& op) { return std::max<int64_t>(op.groups, 1); }

constexpr double kBytesPerUsPerGbps = 1e3;  // 1 GB/s = 1e9 B/s = 1e3 B/µs

}  // namespace

bool CimSupports(const Operator& op, const CimParams& p) {
  if (!op.has_weight || op.weight_rows <= 0 || op.weight_cols <= 0) return false;
  // An operator of another type that computes a standard product (FusedConv
  // is a Conv, MatMulNBits a MatMul) is matched by that product too, and a
  // quantized operator (QLinearConv, ...) runs where its float type does.
  auto listed = [&](std::string_view t) {
    return !t.empty() && std::find(p.supported_ops.begin(), p.supported_ops.end(), t) != p.supported_ops.end();
  };
  return listed(op.type) || listed(op.matrix_op) || listed(FloatOpType(op.type));
}

CimLayout CimLayoutOf(const Operator& op, const CimParams& p) {
  CimLayout l;
  if (!op.has_weight || op.weight_rows <= 0 || op.weight_cols <= 0) return l;
  l.rows = op.weight_rows;
  // A weight's cells (bit slices, differential signs): adjacent columns, or
  // copies of the whole tiling in crossbars of their own.
  const bool adjacent = p.slice_mapping == SliceMapping::kColumns;
  l.cols = adjacent ? SatMul(op.weight_cols, p.CellsPerWeight(op.weight_bits)) : op.weight_cols;
  const int64_t groups = Groups(op);
  if (groups > 1) {
    if (p.grouped_conv == GroupedConvMapping::kBlockDiagonal) {
      l.rows = SatMul(l.rows, groups);
    } else {
      l.cols = CeilDiv(l.cols, groups);
    }
  }
  l.row_tiles = CeilDiv(l.rows, std::max<int64_t>(p.crossbar_rows, 1));
  l.col_tiles = CeilDiv(l.cols, std::max<int64_t>(p.crossbar_cols, 1));
  l.copies = SatMul(adjacent ? 1 : p.CellsPerWeight(op.weight_bits), std::max<int64_t>(op.directions, 1));
  return l;
}

int64_t CimCrossbars(const Operator& op, const CimParams& p) {
  const CimLayout l = CimLayoutOf(op, p);
  return SatMul(SatMul(l.row_tiles, l.col_tiles), l.copies);
}

CimWrite CimOperatorWrite(const Operator& op, const CimParams& p) {
  CimWrite w;
  const CimLayout l = CimLayoutOf(op, p);
  w.rows = std::min(l.rows, p.crossbar_rows);
  w.rows_written = SatMul(SatMul(l.rows, l.col_tiles), l.copies);
  w.write_us = static_cast<double>(w.rows) * p.write_ns_per_row * 1e-3;
  w.energy_pj = static_cast<double>(w.rows_written) * p.write_energy_pj_per_row.value_or(0.0);
  return w;
}

CimEnergy CimOperatorEnergy(const Operator& op, const CimParams& p) {
  CimEnergy e;
  const CimCircuit& k = p.circuit;
  const CimLayout l = CimLayoutOf(op, p);
  const double cycles = static_cast<double>(CimMvmCount(op, p)) * static_cast<double>(k.InputCycles());
  const double copies = static_cast<double>(l.copies);
  e.array_reads = cycles * static_cast<double>(l.row_tiles) * static_cast<double>(l.col_tiles) * copies;
  e.conversions = cycles * static_cast<double>(l.row_tiles) * static_cast<double>(l.cols) * copies;
  e.row_drives = cycles * static_cast<double>(l.rows) * static_cast<double>(l.col_tiles) * copies;
  e.shift_adds = e.conversions;
  e.buffer_bytes = CimLoadBytes(op, p) + CimStoreBytes(op, p);
  e.array_pj = e.array_reads * k.array_energy_pj.value_or(0.0);
  e.adc_pj = e.conversions * k.adc_energy_pj.value_or(0.0);
  e.dac_pj = e.row_drives * k.dac_energy_pj.value_or(0.0);
  e.shift_add_pj = e.shift_adds * k.shift_add_energy_pj.value_or(0.0);
  e.buffer_pj = e.buffer_bytes * k.buffer_energy_pj_per_byte.value_or(0.0);
  return e;
}

int64_t CimMvmCount(const Operator& op, const CimParams& p) {
  int64_t n = std::max<int64_t>(op.n_mvm, 0);
  if (p.grouped_conv == GroupedConvMapping::kPerGroup && Groups(op) > 1) return SatMul(n, Groups(op));
  return n;
}

int64_t CimLoadElements(const Operator& op, const CimParams& p) {
  if (p.im2col_load) return SatMul(SatMul(op.n_mvm, op.weight_rows), Groups(op));
  return std::max<int64_t>(op.input_elements, 0);
}

namespace {

// b_elem of one tensor: the platform's element_bytes when it sets one, else
// the tensor's own element size (its dtype's).
double ElementBytes(const TensorInfo& t, const CimParams& p) {
  return static_cast<double>(p.element_bytes ? *p.element_bytes : t.element_bytes);
}

double SumBytes(const std::vector<TensorInfo>& tensors, const CimParams& p) {
  double bytes = 0;
  for (const TensorInfo& t : tensors) bytes += ElementBytes(t, p) * static_cast<double>(std::max<int64_t>(t.elements, 0));
  return bytes;
}

}  // namespace

double CimLoadBytes(const Operator& op, const CimParams& p) {
  if (!p.im2col_load) return SumBytes(op.inputs, p);
  // The im2col'd copy of the activation (the first input) at its element size.
  const double b = op.inputs.empty() ? 0.0 : ElementBytes(op.inputs.front(), p);
  return b * static_cast<double>(CimLoadElements(op, p));
}

double CimStoreBytes(const Operator& op, const CimParams& p) { return SumBytes(op.outputs, p); }

double CimLatencyUs(const Operator& op, const CimParams& p) {
  const double bytes_per_us = p.bandwidth_gbps * kBytesPerUsPerGbps;
  const double load_us = CimLoadBytes(op, p) / bytes_per_us;
  const double mvm_us = static_cast<double>(CimMvmCount(op, p)) * p.MvmLatencyNs(CimCrossbars(op, p)) * 1e-3;
  const double store_us = CimStoreBytes(op, p) / bytes_per_us;
  return load_us + mvm_us + store_us;
}

namespace {

// One CIM operator as the PU holds and runs it.
nlohmann::json LayerRow(const Operator& op, const CimParams& c) {
  const CimLayout l = CimLayoutOf(op, c);
  nlohmann::json row = {{"id", op.id},
                        {"name", op.name},
                        {"type", op.type},
                        {"weight_rows", op.weight_rows},
                        {"weight_cols", op.weight_cols},
                        {"rows", l.rows},
                        {"cols", l.cols},
                        {"row_tiles", l.row_tiles},
                        {"col_tiles", l.col_tiles},
                        {"copies", l.copies},
                        {"crossbars", CimCrossbars(op, c)},
                        {"mvms", CimMvmCount(op, c)},
                        {"latency_us", CimLatencyUs(op, c)}};
  if (c.shared_adcs) {
    // What it holds of the shared pool, and its T_mvm with them.
    row["adcs"] = c.AdcDemand(CimCrossbars(op, c));
    row["mvm_latency_ns"] = c.MvmLatencyNs(CimCrossbars(op, c));
  }
  if (c.reprogram) {
    // Rewriting it each inference, as the planner may choose.
    const CimWrite w = CimOperatorWrite(op, c);
    row["write"] = {{"rows", w.rows}, {"rows_written", w.rows_written}, {"write_us", w.write_us},
                    {"energy_pj", w.energy_pj}};
  }
  if (c.circuit.given() && c.circuit.HasEnergy()) {
    const CimEnergy e = CimOperatorEnergy(op, c);
    row["energy_pj"] = {{"adc", e.adc_pj},          {"dac", e.dac_pj},       {"array", e.array_pj},
                        {"shift_add", e.shift_add_pj}, {"buffer", e.buffer_pj}, {"total", e.total_pj()}};
  }
  return row;
}

}  // namespace

nlohmann::json CimLayersJson(const Platform& p, const OpGraph& g) {
  nlohmann::json pus = nlohmann::json::object();
  for (const ProcessingUnit& pu : p.pus) {
    if (pu.kind != PuKind::kCim) continue;
    nlohmann::json rows = nlohmann::json::array();
    int64_t crossbars = 0;
    double latency = 0, energy = 0, adc = 0;
    for (const Operator& op : g.operators()) {
      if (!CimSupports(op, pu.cim)) continue;
      rows.push_back(LayerRow(op, pu.cim));
      crossbars += rows.back()["crossbars"].get<int64_t>();
      latency += rows.back()["latency_us"].get<double>();
      if (rows.back().contains("energy_pj")) {
        energy += rows.back()["energy_pj"]["total"].get<double>();
        adc += rows.back()["energy_pj"]["adc"].get<double>();
      }
    }
    nlohmann::json u = {{"operators", std::move(rows)},
                        {"crossbars", crossbars},
                        {"budget", pu.cim.crossbars},
                        {"latency_us", latency},
                        {"mvm_latency_ns", pu.cim.MvmLatencyNs()}};
    u["energy_pj"] = energy > 0 ? nlohmann::json(energy) : nlohmann::json(nullptr);
    u["adc_share"] = energy > 0 ? nlohmann::json(adc / energy) : nlohmann::json(nullptr);
    pus[pu.name] = std::move(u);
  }
  return pus;
}

double TransferUs(double bytes, const Link& link) {
  if (bytes <= 0) return 0;
  return link.latency_us + bytes / (link.bandwidth_gbps * kBytesPerUsPerGbps);
}

}  // namespace hetplan
