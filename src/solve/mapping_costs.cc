// MappingCosts and how it is built from a cost model, a platform and tables;
// the option enums' names.
#include <cmath>
#include <unordered_map>

#include "hetplan/solve/mapping.h"

namespace hetplan {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) {
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  }
  return out;
}

// Bytes of `tensors` over a link: the link's element size when it fixes one,
// else each tensor's own.
double LinkBytes(const std::vector<TensorInfo>& tensors, const Link& link) {
  double bytes = 0;
  for (const TensorInfo& t : tensors) {
    bytes += link.element_bytes ? static_cast<double>(t.elements) * static_cast<double>(*link.element_bytes)
                                : static_cast<double>(t.bytes());
  }
  return bytes;
}

double LinkUs(double bytes, const Link& link) {
  if (bytes <= 0) return 0.0;
  return link.latency_us + bytes / (link.bandwidth_gbps * 1e3);  // 1 GB/s = 1e3 bytes/µs
}

}  // namespace

Result<TransferAccounting> ParseTransferAccounting(std::string_view text) {
  const std::string t = Lower(text);
  if (t == "conservative") return TransferAccounting::kConservative;
  if (t == "neighbour" || t == "neighbor") return TransferAccounting::kNeighbour;
  return Error(ErrorCode::kInvalidArgument, "accounting '{}': unknown; use 'conservative' or 'neighbour'", text);
}

std::string ToString(TransferAccounting a) {
  return a == TransferAccounting::kConservative ? "conservative" : "neighbour";
}

Result<ChainAlgorithm> ParseChainAlgorithm(std::string_view text) {
  const std::string t = Lower(text);
  if (t == "dp") return ChainAlgorithm::kDp;
  if (t == "dijkstra") return ChainAlgorithm::kDijkstra;
  return Error(ErrorCode::kInvalidArgument, "algorithm '{}': unknown; use 'dp' or 'dijkstra'", text);
}

std::string ToString(ChainAlgorithm a) { return a == ChainAlgorithm::kDp ? "dp" : "dijkstra"; }

MappingCosts::MappingCosts(int num_ops, std::vector<PuInfo> pus)
    : n_(num_ops),
      k_(static_cast<int>(pus.size())),
      pus_(std::move(pus)),
      accelerator_(static_cast<size_t>(k_), 0),
      power_w_(static_cast<size_t>(k_), kNaN),
      latency_(static_cast<size_t>(n_) * k_, kNaN),
      h2d_(static_cast<size_t>(n_) * k_, 0.0),
      d2h_(static_cast<size_t>(n_) * k_, 0.0),
      slowdown_(static_cast<size_t>(k_) * k_, 1.0) {
  for (int p = 0; p < k_; ++p) {
    accelerator_[p] = pus_[p].kind != "cpu" ? 1 : 0;
    if (pus_[p].power_w) power_w_[p] = *pus_[p].power_w;
  }
}

Result<MappingCosts> BuildMappingCosts(const OpGraph& g, const CostModel& costs, const Platform& platform,
                                       const std::map<std::string, CostTable>& tables) {
  const int n = g.size();
  const int k = costs.num_pus();
  if (costs.num_ops() != n) {
    return Error(ErrorCode::kInvalidArgument, "cost model has {} operators but graph '{}' has {}", costs.num_ops(),
                 g.name(), n);
  }
  for (const PuInfo& pu : costs.pus()) {
    if (pu.spatial) {
      return Error(ErrorCode::kUnsupported,
                   "{}: PU '{}' is spatial (a crossbar budget); BIDENT mapping models serial CPU/GPU/NPU-style PUs "
                   "only; use `hetplan partition` for CIM platforms",
                   platform.source, pu.name);
    }
  }
  MappingCosts mc(n, costs.pus());
  for (int v = 0; v < n; ++v) {
    for (int p = 0; p < k; ++p) {
      if (costs.supported(v, p)) mc.set_latency(v, p, costs.latency_us(v, p));
    }
  }
  for (int p = 0; p < k; ++p) {
    for (int q = 0; q < k; ++q) mc.set_slowdown(p, q, costs.slowdown(p, q));
  }
  int host = -1;
  for (int p = 0; p < k && host < 0; ++p) {
    if (!mc.accelerator(p)) host = p;
  }
  std::unordered_map<std::string, int> id_of;
  for (const Operator& op : g.operators()) id_of.emplace(op.name, op.id);
  for (int p = 0; p < k; ++p) {
    if (!mc.accelerator(p)) continue;
    const std::string& name = costs.pu(p).name;
    std::vector<bool> from_table(static_cast<size_t>(n), false);
    if (auto t = tables.find(name); t != tables.end()) {
      for (const OpCost& row : t->second.ops) {
        if (row.pu != name) continue;
        auto id = id_of.find(row.op_name);
        if (id == id_of.end()) continue;
        mc.set_h2d(id->second, p, row.h2d_us);
        mc.set_d2h(id->second, p, row.d2h_us);
        from_table[id->second] = true;
      }
    }
    const Link* link = host >= 0 ? platform.FindLink(name, costs.pu(host).name) : nullptr;
    if (link == nullptr || link->bandwidth_gbps <= 0) continue;
    for (int v = 0; v < n; ++v) {
      if (from_table[v]) continue;
      mc.set_h2d(v, p, LinkUs(LinkBytes(g.op(v).inputs, *link), *link));
      mc.set_d2h(v, p, LinkUs(LinkBytes(g.op(v).outputs, *link), *link));
    }
  }
  return mc;
}

}  // namespace hetplan
