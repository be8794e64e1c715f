// What profiling holds in memory (cost/ort_profiler_internal.h): the
// footprint of a session running a part of the model, estimated from the
// model's tensors before it is created, the budget a profile stays under
// (--max-memory), and the process's resident and peak memory as Linux
// reports them.
#include <algorithm>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "cost/ort_profiler_internal.h"
#include "hetplan/graph/dtype.h"

namespace hetplan::ort_profiler_internal {
namespace {

// A "Key:   1234 kB" line's value in bytes, from a /proc file.
std::optional<int64_t> ProcKilobytes(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    int64_t kb = 0;
    if (fields >> kb) return kb * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> AvailableMemoryBytes() { return ProcKilobytes("/proc/meminfo", "MemAvailable"); }
std::optional<int64_t> ResidentBytes() { return ProcKilobytes("/proc/self/status", "VmRSS"); }
std::optional<int64_t> PeakResidentBytes() { return ProcKilobytes("/proc/self/status", "VmHWM"); }

int64_t MemoryBudgetBytes(const ProfileOptions& o) {
  if (o.max_memory_bytes > 0) return o.max_memory_bytes;
  const int64_t held = ResidentBytes().value_or(0);
  const auto available = AvailableMemoryBytes();
  // Unknown (no /proc): no budget to reduce to.
  if (!available) return std::numeric_limits<int64_t>::max();
  return held + static_cast<int64_t>(kDefaultMemoryShare * static_cast<double>(*available));
}

FootprintEstimator::FootprintEstimator(const LoadedModel& m) : m_(m) {
  const onnx::GraphProto& g = m.model->graph();
  // Every tensor of the imported graph with a static shape, in bytes.
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()}) {
    for (const auto& vi : *list) {
      const auto& tt = vi.type().tensor_type();
      if (!tt.has_shape()) continue;
      int64_t n = std::max<int64_t>(1, DtypeBytes(tt.elem_type()));
      bool known = true;
      for (const auto& d : tt.shape().dim()) {
        known = known && d.has_dim_value() && d.dim_value() >= 0;
        if (known) n *= d.dim_value();
      }
      if (known) bytes_[vi.name()] = n;
    }
  }
  for (const auto& o : g.output()) graph_outputs_.insert(o.name());
  for (const auto& init : g.initializer()) initializers_.insert(init.name());
  for (int k = 0; k < g.node_size(); ++k) {
    for (const auto& t : g.node(k).input()) {
      if (!t.empty()) readers_[t].push_back(k);
    }
  }
}

int64_t FootprintEstimator::Size(const std::string& tensor) const {
  auto it = bytes_.find(tensor);
  return it == bytes_.end() ? 0 : it->second;
}

int64_t FootprintEstimator::Bytes(const std::vector<int>& ops) const {
  const onnx::GraphProto& g = m_.model->graph();
  // The part's ONNX nodes in execution order: operators in `ops` order, each
  // operator's nodes in its own (fused units and quantization nodes inside
  // an operator hold tensors the operator graph does not list).
  std::vector<int> nodes;
  int64_t weights = 0;
  for (int id : ops) {
    const Operator& op = m_.graph.op(id);
    weights += op.param_bytes;
    nodes.insert(nodes.end(), op.node_indices.begin(), op.node_indices.end());
  }
  std::unordered_map<int, size_t> position;  // node index → its place in the part
  for (size_t i = 0; i < nodes.size(); ++i) position.emplace(nodes[i], i);
  int64_t bound = 0;
  // Internal tensors live from their producer to their last reader in the
  // part; the arena holds the most that are alive at once. A tensor a node
  // outside reads, a graph output, or one no node of the part reads is bound
  // by the caller for the part's whole life.
  std::vector<int64_t> alive_delta(nodes.size() + 1, 0);
  std::unordered_set<std::string> produced;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& t : g.node(nodes[i]).output()) {
      if (t.empty()) continue;
      produced.insert(t);
      const int64_t b = Size(t);
      bool outside = graph_outputs_.count(t) > 0, inside = false;
      size_t last = 0;
      if (auto r = readers_.find(t); r != readers_.end()) {
        for (int k : r->second) {
          auto at = position.find(k);
          if (at == position.end()) {
            outside = true;
          } else {
            inside = true;
            last = std::max(last, at->second);
          }
        }
      }
      if (outside || !inside) {
        bound += b;
        continue;
      }
      alive_delta[i] += b;
      alive_delta[std::max(i, last) + 1] -= b;
    }
  }
  // Inputs from outside the part: another part's output or a model input,
  // bound; constants are the weights above.
  std::unordered_set<std::string> counted;
  for (int k : nodes) {
    for (const auto& t : g.node(k).input()) {
      if (!t.empty() && !produced.count(t) && !initializers_.count(t) && counted.insert(t).second) bound += Size(t);
    }
  }
  int64_t alive = 0, peak = 0;
  for (int64_t d : alive_delta) {
    alive += d;
    peak = std::max(peak, alive);
  }
  return weights + bound + static_cast<int64_t>(kArenaFactor * static_cast<double>(peak)) + kSessionOverheadBytes;
}

std::string BytesText(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  return fmt::format("{:.0f} KiB", b / 1024.0);
}

}  // namespace hetplan::ort_profiler_internal
