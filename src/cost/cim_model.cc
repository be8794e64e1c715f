#include "hetplan/cost/cim_model.h"

#include <algorithm>
#include <limits>

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
  // is a Conv, MatMulNBits a MatMul) is matched by that product too.
  auto listed = [&](const std::string& t) {
    return !t.empty() && std::find(p.supported_ops.begin(), p.supported_ops.end(), t) != p.supported_ops.end();
  };
  return listed(op.type) || listed(op.matrix_op);
}

int64_t CimCrossbars(const Operator& op, const CimParams& p) {
  if (!op.has_weight || op.weight_rows <= 0 || op.weight_cols <= 0) return 0;
  int64_t rows = op.weight_rows;
  int64_t cols = op.weight_cols;
  int64_t groups = Groups(op);
  if (groups > 1) {
    if (p.grouped_conv == GroupedConvMapping::kBlockDiagonal) {
      rows = SatMul(rows, groups);
    } else {
      cols = CeilDiv(cols, groups);
    }
  }
  // A recurrent operator holds one stacked [W; R] matrix per direction.
  return SatMul(SatMul(CeilDiv(rows, std::max<int64_t>(p.crossbar_rows, 1)),
                       CeilDiv(cols, std::max<int64_t>(p.crossbar_cols, 1))),
                std::max<int64_t>(op.directions, 1));
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

double CimLatencyUs(const Operator& op, const CimParams& p) {
  const double bytes_per_us = p.bandwidth_gbps * kBytesPerUsPerGbps;
  const double b_elem = static_cast<double>(p.element_bytes);
  const double load_us = b_elem * static_cast<double>(CimLoadElements(op, p)) / bytes_per_us;
  const double mvm_us = static_cast<double>(CimMvmCount(op, p)) * p.mvm_latency_ns * 1e-3;
  const double store_us =
      b_elem * static_cast<double>(std::max<int64_t>(op.output_elements, 0)) / bytes_per_us;
  return load_us + mvm_us + store_us;
}

double TransferUs(int64_t elements, int64_t element_bytes, const Link& link) {
  if (elements <= 0) return 0;
  const double bytes = static_cast<double>(elements) * static_cast<double>(element_bytes);
  return link.latency_us + bytes / (link.bandwidth_gbps * kBytesPerUsPerGbps);
}

}  // namespace hetplan
