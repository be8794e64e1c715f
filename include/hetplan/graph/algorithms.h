// Graph analyses the solvers need, on an OpGraph.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/graph/op_graph.h"

namespace hetplan {

// The set P of parallelizable pairs (u, v), u < v, neither reachable from the
// other. O(V²/64) words plus the output.
std::vector<std::pair<int, int>> ParallelPairs(const OpGraph& g);
int64_t CountParallelPairs(const OpGraph& g);

// Operators comparable to every other operator (every other operator is an
// ancestor or a descendant): the fork/join points that cut the graph.
std::vector<bool> CutOperators(const OpGraph& g);

// BIDENT's phases in execution order. Consecutive cut operators form a
// sequential phase (one branch). The operators between two cut points form a
// phase whose branches are the weakly connected components of the subgraph
// they induce, each in topological order; the phase is parallel when it has
// more than one branch.
std::vector<Phase> Phases(const OpGraph& g);

// The narrowest floating type among the tensors graph output `name` is
// computed from (its producer's and every ancestor's inputs and outputs)
// when narrower than `own`, the output's type: "float16" for a float32
// output of float16 layers between Casts (bfloat16 narrowest, then
// float16); "" when none is narrower or no operator writes `name`.
std::string NarrowestFloatOnPath(const OpGraph& g, const std::string& name, const std::string& own);

}  // namespace hetplan
