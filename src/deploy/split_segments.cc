// Grouping operators into segments (PlanSegments,
// include/hetplan/deploy/split.h).
#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>

#include "hetplan/deploy/split.h"

namespace hetplan {

Result<std::vector<SegmentPlan>> PlanSegments(const OpGraph& g, const std::vector<int>& device_of,
                                              const std::vector<int>& order, const std::vector<bool>& cut_before) {
  const int n = g.size();
  if (static_cast<int>(device_of.size()) != n || static_cast<int>(order.size()) != n ||
      (!cut_before.empty() && static_cast<int>(cut_before.size()) != n)) {
    return Error(ErrorCode::kInvalidArgument, "segments: {} operators but {} devices, {} positions and {} cuts given",
                 n, device_of.size(), order.size(), cut_before.size());
  }
  std::vector<int> position(static_cast<size_t>(n), -1);
  for (int k = 0; k < n; ++k) {
    const int v = order[static_cast<size_t>(k)];
    if (v < 0 || v >= n || position[static_cast<size_t>(v)] >= 0) {
      return Error(ErrorCode::kInvalidArgument,
                   "segments: the execution order is not a permutation of the "
                   "{} operators (operator {} at position {})",
                   n, v, k);
    }
    position[static_cast<size_t>(v)] = k;
  }
  for (const Edge& e : g.edges()) {
    if (position[static_cast<size_t>(e.from)] > position[static_cast<size_t>(e.to)]) {
      return Error(ErrorCode::kInvalidArgument,
                   "segments: operator '{}' runs before '{}', whose output it "
                   "reads; the schedule is not in data-flow order (check it with hetplan validate)",
                   g.op(e.to).name, g.op(e.from).name);
    }
  }

  // Build segments in creation order with their DAG.
  std::vector<SegmentPlan> segs;
  std::vector<std::set<int>> succ;  // segment DAG (creation indices)
  std::vector<int> seg_of(static_cast<size_t>(n), -1);
  std::map<int, int> last_of_device;
  auto reaches = [&](int from, int to) {  // from →* to in the segment DAG
    std::vector<int> stack = {from};
    std::vector<bool> seen(segs.size(), false);
    while (!stack.empty()) {
      int u = stack.back();
      stack.pop_back();
      if (u == to) return true;
      if (seen[static_cast<size_t>(u)]) continue;
      seen[static_cast<size_t>(u)] = true;
      for (int w : succ[static_cast<size_t>(u)]) stack.push_back(w);
    }
    return false;
  };
  for (int v : order) {
    const int d = device_of[static_cast<size_t>(v)];
    int target = -1;
    const bool cut = !cut_before.empty() && cut_before[static_cast<size_t>(v)];
    if (auto it = last_of_device.find(d); !cut && it != last_of_device.end()) {
      target = it->second;
      for (int u : g.predecessors(v)) {
        const int su = seg_of[static_cast<size_t>(u)];
        if (su != target && reaches(target, su)) {
          target = -1;
          break;
        }
      }
    }
    if (target < 0) {
      target = static_cast<int>(segs.size());
      segs.push_back(SegmentPlan{d, {}, {}});
      succ.emplace_back();
      last_of_device[d] = target;
    }
    segs[static_cast<size_t>(target)].operators.push_back(v);
    seg_of[static_cast<size_t>(v)] = target;
    for (int u : g.predecessors(v)) {
      const int su = seg_of[static_cast<size_t>(u)];
      if (su != target) succ[static_cast<size_t>(su)].insert(target);
    }
  }

  // Topological order of the segments, smallest creation index first.
  const int k = static_cast<int>(segs.size());
  std::vector<int> indegree(static_cast<size_t>(k), 0);
  for (const auto& s : succ) {
    for (int t : s) ++indegree[static_cast<size_t>(t)];
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < k; ++i) {
    if (indegree[static_cast<size_t>(i)] == 0) ready.push(i);
  }
  std::vector<int> topo;
  while (!ready.empty()) {
    int u = ready.top();
    ready.pop();
    topo.push_back(u);
    for (int t : succ[static_cast<size_t>(u)]) {
      if (--indegree[static_cast<size_t>(t)] == 0) ready.push(t);
    }
  }
  if (static_cast<int>(topo.size()) != k) {
    return Error(ErrorCode::kInternal, "segments: the segment graph has a cycle (a bug in PlanSegments)");
  }
  std::vector<int> new_index(static_cast<size_t>(k));
  for (int i = 0; i < k; ++i) new_index[static_cast<size_t>(topo[static_cast<size_t>(i)])] = i;
  std::vector<SegmentPlan> out(static_cast<size_t>(k));
  for (int old = 0; old < k; ++old) {
    SegmentPlan& s = out[static_cast<size_t>(new_index[static_cast<size_t>(old)])];
    s = std::move(segs[static_cast<size_t>(old)]);
  }
  for (int old = 0; old < k; ++old) {
    for (int t : succ[static_cast<size_t>(old)]) {
      out[static_cast<size_t>(new_index[static_cast<size_t>(t)])].depends_on.push_back(
          new_index[static_cast<size_t>(old)]);
    }
  }
  for (auto& s : out) std::sort(s.depends_on.begin(), s.depends_on.end());
  return out;
}

}  // namespace hetplan
