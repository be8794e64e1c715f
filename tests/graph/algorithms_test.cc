// E⁺, parallel pairs and phases on hand-worked graphs.
#include "hetplan/graph/algorithms.h"

#include <chrono>
#include <random>

#include <gtest/gtest.h>

namespace hetplan {
namespace {

// Builds an OpGraph from an edge list over n operators named o0..o{n-1}.
OpGraph Make(int n, const std::vector<std::pair<int, int>>& edges) {
  std::vector<Operator> ops(n);
  for (int i = 0; i < n; ++i) {
    ops[i].id = i;
    ops[i].name = "o" + std::to_string(i);
    ops[i].type = "Op";
  }
  std::vector<Edge> es;
  for (auto [u, v] : edges) es.push_back(Edge{u, v, {"t"}, 1, 4});
  auto g = OpGraph::Create("test", std::move(ops), std::move(es));
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

std::vector<std::vector<std::vector<int>>> PhaseBranches(const OpGraph& g) {
  std::vector<std::vector<std::vector<int>>> out;
  for (const Phase& p : Phases(g)) out.push_back(p.branches);
  return out;
}

TEST(Algorithms, Chain) {
  OpGraph g = Make(4, {{0, 1}, {1, 2}, {2, 3}});
  EXPECT_EQ(g.topological_order(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(g.reaches(0, 3));
  EXPECT_FALSE(g.reaches(3, 0));
  EXPECT_EQ(g.descendants(1).count(), 2);
  EXPECT_TRUE(ParallelPairs(g).empty());
  EXPECT_EQ(CountParallelPairs(g), 0);
  // A chain is one sequential phase with one branch.
  EXPECT_EQ(PhaseBranches(g), (std::vector<std::vector<std::vector<int>>>{{{0, 1, 2, 3}}}));
}

TEST(Algorithms, Diamond) {
  //   0 → 1 → 3,  0 → 2 → 3
  OpGraph g = Make(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  EXPECT_EQ(ParallelPairs(g), (std::vector<std::pair<int, int>>{{1, 2}}));
  EXPECT_EQ(CountParallelPairs(g), 1);
  std::vector<bool> cut = CutOperators(g);
  EXPECT_EQ(cut, (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(PhaseBranches(g),
            (std::vector<std::vector<std::vector<int>>>{{{0}}, {{1}, {2}}, {{3}}}));
}

TEST(Algorithms, ResidualBlockWithIdentitySkip) {
  // 0 conv1 → 1 relu → 2 conv2 → 3 add, skip 0 → 3: every operator is on the
  // one path, so nothing is parallel.
  OpGraph g = Make(4, {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
  EXPECT_EQ(CountParallelPairs(g), 0);
  EXPECT_EQ(Phases(g).size(), 1u);
  EXPECT_FALSE(Phases(g)[0].parallel());
}

TEST(Algorithms, ResidualBlockWithDownsample) {
  // 0 in → {1 conv1 → 2 relu → 3 conv2} and {4 downsample conv} → 5 add.
  OpGraph g = Make(6, {{0, 1}, {1, 2}, {2, 3}, {0, 4}, {3, 5}, {4, 5}});
  EXPECT_EQ(ParallelPairs(g), (std::vector<std::pair<int, int>>{{1, 4}, {2, 4}, {3, 4}}));
  EXPECT_EQ(PhaseBranches(g),
            (std::vector<std::vector<std::vector<int>>>{{{0}}, {{1, 2, 3}, {4}}, {{5}}}));
}

TEST(Algorithms, InceptionFourBranches) {
  // 0 → b1 {1}, b2 {2 → 3}, b3 {4 → 5}, b4 {6 pool → 7} → 8 concat → 9.
  OpGraph g = Make(10, {{0, 1}, {0, 2}, {2, 3}, {0, 4}, {4, 5}, {0, 6}, {6, 7},
                        {1, 8}, {3, 8}, {5, 8}, {7, 8}, {8, 9}});
  // Pairs across branches: sizes 1,2,2,2 → 1·2+1·2+1·2+2·2+2·2+2·2 = 18.
  EXPECT_EQ(CountParallelPairs(g), 18);
  EXPECT_EQ(static_cast<int64_t>(ParallelPairs(g).size()), 18);
  auto phases = PhaseBranches(g);
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_EQ(phases[0], (std::vector<std::vector<int>>{{0}}));
  EXPECT_EQ(phases[1], (std::vector<std::vector<int>>{{1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(phases[2], (std::vector<std::vector<int>>{{8, 9}}));
}

TEST(Algorithms, TwoSourcesFormAParallelPhase) {
  // Two graph inputs feed 0 and 1; both join at 2.
  OpGraph g = Make(3, {{0, 2}, {1, 2}});
  EXPECT_EQ(PhaseBranches(g), (std::vector<std::vector<std::vector<int>>>{{{0}, {1}}, {{2}}}));
}

TEST(Algorithms, NestedForkStaysInOneBranch) {
  // 0 → {1 → {2, 3} → 4} and {5} → 6: the inner fork belongs to one branch.
  OpGraph g = Make(7, {{0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 4}, {0, 5}, {4, 6}, {5, 6}});
  auto phases = PhaseBranches(g);
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_EQ(phases[1], (std::vector<std::vector<int>>{{1, 2, 3, 4}, {5}}));
}

TEST(Algorithms, CycleIsRejected) {
  std::vector<Operator> ops(2);
  ops[0].id = 0;
  ops[0].name = "a";
  ops[1].id = 1;
  ops[1].name = "b";
  auto g = OpGraph::Create("cyc", ops, {Edge{0, 1, {"x"}, 1, 4}, Edge{1, 0, {"y"}, 1, 4}});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("cycle"), std::string::npos);
}

TEST(Algorithms, ParallelEdgesAreMerged) {
  std::vector<Operator> ops(2);
  ops[0].id = 0;
  ops[1].id = 1;
  auto g = OpGraph::Create("m", ops, {Edge{0, 1, {"x"}, 3, 12}, Edge{0, 1, {"y"}, 5, 20}});
  ASSERT_TRUE(g.ok());
  ASSERT_EQ(g->edges().size(), 1u);
  EXPECT_EQ(g->edges()[0].elements, 8);
  EXPECT_EQ(g->edges()[0].tensors, (std::vector<std::string>{"x", "y"}));
}

// Random DAGs: the bitset closure agrees with a DFS, and the pair count
// with the explicit list.
TEST(Algorithms, ClosureMatchesDfsOnRandomDags) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    int n = 2 + static_cast<int>(rng() % 40);
    std::vector<std::pair<int, int>> edges;
    for (int u = 0; u < n; ++u) {
      for (int v = u + 1; v < n; ++v) {
        if (rng() % 6 == 0) edges.emplace_back(u, v);
      }
    }
    OpGraph g = Make(n, edges);
    for (int s = 0; s < n; ++s) {
      std::vector<bool> seen(n, false);
      std::vector<int> stack = {s};
      while (!stack.empty()) {
        int u = stack.back();
        stack.pop_back();
        for (int w : g.successors(u)) {
          if (!seen[w]) {
            seen[w] = true;
            stack.push_back(w);
          }
        }
      }
      for (int v = 0; v < n; ++v) ASSERT_EQ(g.reaches(s, v), seen[v]) << s << "→" << v;
    }
    EXPECT_EQ(CountParallelPairs(g), static_cast<int64_t>(ParallelPairs(g).size()));
    // Phases partition the operators, and every branch is topologically ordered.
    std::vector<int> count(n, 0);
    for (const Phase& p : Phases(g)) {
      for (const auto& b : p.branches) {
        for (size_t i = 0; i < b.size(); ++i) {
          ++count[b[i]];
          if (i > 0) {
            EXPECT_LT(g.topo_position(b[i - 1]), g.topo_position(b[i]));
          }
        }
      }
      // Operators in different branches of a phase are parallelizable.
      for (size_t a = 0; a < p.branches.size(); ++a) {
        for (size_t b = a + 1; b < p.branches.size(); ++b) {
          for (int u : p.branches[a]) {
            for (int v : p.branches[b]) {
              EXPECT_TRUE(g.parallelizable(u, v));
            }
          }
        }
      }
    }
    for (int v = 0; v < n; ++v) EXPECT_EQ(count[v], 1);
  }
}

}  // namespace
}  // namespace hetplan
