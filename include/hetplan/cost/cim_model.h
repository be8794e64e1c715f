// The analytical CIM accelerator and transfer models of Klein et al.,
// section IV-A (eqs. 1-4). Pure functions of an Operator's matrix view and
// the platform parameters; docs/platform-format.md ("Analytical models")
// states every convention. Units: bandwidths in GB/s = 10^9 bytes/s, latencies
// in µs, T_mvm in ns.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "hetplan/graph/op_graph.h"
#include "hetplan/platform/platform.h"

namespace hetplan {

// True when the accelerator can run `op`: its type is in supported_ops and it
// has a constant weight matrix with positive dimensions (a MatMul of two
// activations is not supported: there is nothing to program into crossbars).
bool CimSupports(const Operator& op, const CimParams& p);

// One operator's weights as the crossbars hold them: a rows x cols matrix
// (cols counting every weight's cells when they sit in adjacent columns)
// tiled row_tiles x col_tiles, `copies` times (bit slices and signs in
// crossbars of their own, times one stacked [W; R] per recurrent direction).
// All 0 for an operator without a weight. CimCrossbars is
// row_tiles * col_tiles * copies.
struct CimLayout {
  int64_t rows = 0, cols = 0, row_tiles = 0, col_tiles = 0, copies = 0;
};
CimLayout CimLayoutOf(const Operator& op, const CimParams& p);

// Eq. 1: crossbars the operator's weights occupy,
// ceil(rows / crossbar_rows) * ceil(cols / crossbar_cols), where for
// groups <= 1 rows = N_v = op.weight_rows and cols = M_v = op.weight_cols.
// Grouped conv (groups > 1), op.weight_rows being one group's input length:
//  - kBlockDiagonal: the block-diagonal matrix, rows = weight_rows * groups,
//    cols = weight_cols, tiled once;
//  - kPerGroup: one group's matrix, rows = weight_rows,
//    cols = ceil(weight_cols / groups), tiled once and reused group after
//    group (see CimMvmCount).
// 0 for an operator without a weight. Saturates at INT64_MAX.
int64_t CimCrossbars(const Operator& op, const CimParams& p);

// N_mvm: op.n_mvm input vectors; kPerGroup runs them once per group, so
// n_mvm * groups. Saturates at INT64_MAX.
int64_t CimMvmCount(const Operator& op, const CimParams& p);

// N_in of eq. 3: op.input_elements, or with im2col_load the im2col'd input,
// op.n_mvm * op.weight_rows * max(op.groups, 1) (every input vector loaded,
// overlapping windows counted again), independent of the mapping.
int64_t CimLoadElements(const Operator& op, const CimParams& p);

// b_elem·N_in and b_elem·N_out of eq. 3 in bytes, each tensor at its own
// element size (1 byte for the int8/uint8 tensors of a quantized model, 4
// for float32) unless the platform sets cim.element_bytes for all of them.
// With im2col_load the load is CimLoadElements at the first input's size.
double CimLoadBytes(const Operator& op, const CimParams& p);
double CimStoreBytes(const Operator& op, const CimParams& p);

// Eqs. 2-3: T_acc = load bytes/B_cim + N_mvm*T_mvm + store bytes/B_cim in
// µs, T_mvm as CimParams::MvmLatencyNs gives it (fixed, or the circuit's).
// Independent of the crossbar count (the crossbars of one operator work in
// parallel), unless a shared ADC pool is smaller than the operator's columns
// need (CimParams::MvmLatencyNs(crossbars)).
double CimLatencyUs(const Operator& op, const CimParams& p);

// What one operator's MVMs cost in energy on a CIM PU whose circuit gives
// energies (CimCircuit): counts per inference and pJ per component. Per
// input cycle (ceil(input_bits / dac_bits) of them per MVM) every crossbar
// the operator holds is read once, each of its row tiles' used columns is
// converted once (and the result shifted and added into the output), and
// each used row is driven once per column tile; per byte the CIM loads or
// stores, one buffer access. Used rows and columns: the operator's weight
// matrix as CimCrossbars lays it out (bit slices and signs counted, every
// copy and direction). Components without an energy key count 0 pJ.
struct CimEnergy {
  double array_reads = 0, conversions = 0, row_drives = 0, shift_adds = 0, buffer_bytes = 0;
  double array_pj = 0, adc_pj = 0, dac_pj = 0, shift_add_pj = 0, buffer_pj = 0;
  double total_pj() const { return array_pj + adc_pj + dac_pj + shift_add_pj + buffer_pj; }
};
CimEnergy CimOperatorEnergy(const Operator& op, const CimParams& p);

// Rewriting one operator's weights into crossbars (CimParams::reprogram):
// every crossbar it takes is programmed at once, row by row, so the write
// takes `rows` (its fullest crossbar's: min(rows, crossbar_rows)) times
// write_ns_per_row; `rows_written` rows in all (rows × col_tiles × copies)
// cost write_energy_pj_per_row each. All 0 without a weight.
struct CimWrite {
  int64_t rows = 0, rows_written = 0;
  double write_us = 0, energy_pj = 0;
};
CimWrite CimOperatorWrite(const Operator& op, const CimParams& p);

// Every CIM PU of `p` with each operator of `g` it can run, as it holds and
// runs it (what `hetplan platform layers` prints and Python's
// Platform.layers returns): {<pu>: {operators: [{id, name, type,
// weight_rows, weight_cols, rows, cols, row_tiles, col_tiles, copies,
// crossbars, mvms, latency_us, with a shared ADC pool adcs and
// mvm_latency_ns, on a reprogramming PU write: {rows, rows_written,
// write_us, energy_pj}, energy_pj: {adc, dac, array, shift_add,
// buffer, total} where the circuit gives energies}], crossbars, budget,
// latency_us, mvm_latency_ns, energy_pj, adc_share}}.
nlohmann::json CimLayersJson(const Platform& p, const OpGraph& g);

// Eq. 4 plus a fixed latency: latency_us + bytes/bandwidth, 0 for no bytes.
// The caller counts the bytes (cost/build.h: each tensor at its own element
// size unless the link or the CIM end sets element_bytes).
double TransferUs(double bytes, const Link& link);

}  // namespace hetplan
