#include "hetplan/graph/algorithms.h"

#include <algorithm>
#include <numeric>

#include "hetplan/graph/dtype.h"

namespace hetplan {
std::vector<std::pair<int, int>> ParallelPairs(const OpGraph& g) {
  std::vector<std::pair<int, int>> pairs;
  const int n = g.size();
  for (int u = 0; u < n; ++u) {
    for (int v = u + 1; v < n; ++v) {
      if (g.parallelizable(u, v)) pairs.emplace_back(u, v);
    }
  }
  return pairs;
}

int64_t CountParallelPairs(const OpGraph& g) {
  // comparable pairs = Σ_u |desc(u)|; P = C(n,2) − comparable.
  const int64_t n = g.size();
  int64_t comparable = 0;
  for (int u = 0; u < n; ++u) comparable += g.descendants(u).count();
  return n * (n - 1) / 2 - comparable;
}

std::vector<bool> CutOperators(const OpGraph& g) {
  const int n = g.size();
  std::vector<int> anc_count(n, 0);
  for (int u = 0; u < n; ++u) {
    const auto& words = g.descendants(u).words();
    for (size_t w = 0; w < words.size(); ++w) {
      uint64_t bits = words[w];
      while (bits) {
        ++anc_count[static_cast<int>(w * 64) + std::countr_zero(bits)];
        bits &= bits - 1;
      }
    }
  }
  std::vector<bool> cut(n);
  for (int v = 0; v < n; ++v) cut[v] = anc_count[v] + g.descendants(v).count() + 1 == n;
  return cut;
}

std::vector<Phase> Phases(const OpGraph& g) {
  std::vector<Phase> phases;
  const std::vector<bool> cut = CutOperators(g);
  const std::vector<int>& topo = g.topological_order();
  // Cut operators appear in the topological order exactly between the groups
  // they separate, so a single scan splits the order into runs.
  std::vector<int> run;
  auto flush_parallel = [&]() {
    if (run.empty()) return;
    // Weakly connected components of the induced subgraph (union-find).
    std::vector<int> parent(g.size());
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](int x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    std::vector<bool> in_run(g.size(), false);
    for (int v : run) in_run[v] = true;
    for (int v : run) {
      for (int e : g.out_edges(v)) {
        int w = g.edges()[e].to;
        if (in_run[w]) parent[find(v)] = find(w);
      }
    }
    Phase phase;
    std::vector<int> slot(g.size(), -1);
    for (int v : run) {  // run is in topological order; so is each branch
      int r = find(v);
      if (slot[r] < 0) {
        slot[r] = static_cast<int>(phase.branches.size());
        phase.branches.emplace_back();
      }
      phase.branches[slot[r]].push_back(v);
    }
    phases.push_back(std::move(phase));
    run.clear();
  };
  for (int v : topo) {
    if (cut[v]) {
      flush_parallel();
      if (phases.empty() || phases.back().parallel() || phases.back().branches.empty() ||
          !cut[phases.back().branches[0].back()]) {
        phases.push_back(Phase{{{}}});
      }
      phases.back().branches[0].push_back(v);
    } else {
      run.push_back(v);
    }
  }
  flush_parallel();
  return phases;
}

// The narrowest floating type among the tensors that graph output `name`
// is computed from (its producer's and every ancestor's inputs and outputs)
// when narrower than the output's own: "float16" for a float32 output of a
// model that computes in float16 between Casts. "" when none is narrower.
std::string NarrowestFloatOnPath(const OpGraph& g, const std::string& name, const std::string& own) {
  const auto rank = [](const std::string& dtype) { return dtype == "bfloat16" ? 1 : dtype == "float16" ? 2 : 3; };
  int producer = -1;
  for (const Operator& op : g.operators()) {
    for (const auto& t : op.outputs) {
      if (t.name == name) producer = op.id;
    }
  }
  if (producer < 0) return "";
  std::string narrowest = own;
  for (const Operator& op : g.operators()) {
    if (op.id != producer && !g.reaches(op.id, producer)) continue;
    for (const auto* list : {&op.inputs, &op.outputs}) {
      for (const auto& t : *list) {
        if (IsFloatingDtype(DtypeFromName(t.dtype)) && rank(t.dtype) < rank(narrowest)) narrowest = t.dtype;
      }
    }
  }
  return narrowest == own || rank(narrowest) == 3 ? "" : narrowest;
}

}  // namespace hetplan
