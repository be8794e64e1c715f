// Graph analyses at scale: building an OpGraph (topological order + E⁺
// bitsets), counting parallel pairs and computing phases, on a 5,000-operator
// chain and on random branchy DAGs. The foundation issue's target: transitive
// closure for 5,000 operators in < 1 s.
//
//   build/bench/graph_benchmark [--benchmark_filter=...]
#include <random>

#include <benchmark/benchmark.h>

#include "hetplan/graph/algorithms.h"

namespace {

using hetplan::Edge;
using hetplan::OpGraph;
using hetplan::Operator;

// A DAG over n operators: a chain plus, per operator, `extra` forward edges
// of random length (residual / concat-style skips).
std::pair<std::vector<Operator>, std::vector<Edge>> MakeDag(int n, int extra, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Operator> ops(n);
  std::vector<Edge> edges;
  for (int i = 0; i < n; ++i) {
    ops[i].id = i;
    ops[i].name = "o" + std::to_string(i);
    if (i > 0) edges.push_back(Edge{i - 1, i, {"t"}, 1, 4});
    for (int k = 0; k < extra && i + 2 < n; ++k) {
      int j = i + 2 + static_cast<int>(rng() % std::min(50, n - i - 2));
      edges.push_back(Edge{i, j, {"s"}, 1, 4});
    }
  }
  return {ops, edges};
}

void BM_BuildWithClosure(benchmark::State& state) {
  auto [ops, edges] = MakeDag(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), 1);
  for (auto _ : state) {
    auto g = OpGraph::Create("bench", ops, edges);
    benchmark::DoNotOptimize(g.ok());
  }
  state.SetLabel("operators=" + std::to_string(state.range(0)) + " extra_edges/op=" + std::to_string(state.range(1)));
}
BENCHMARK(BM_BuildWithClosure)->Args({5000, 0})->Args({5000, 2})->Args({1000, 2})->Unit(benchmark::kMillisecond);

void BM_CountParallelPairs(benchmark::State& state) {
  auto [ops, edges] = MakeDag(static_cast<int>(state.range(0)), 2, 2);
  auto g = OpGraph::Create("bench", ops, edges);
  for (auto _ : state) benchmark::DoNotOptimize(hetplan::CountParallelPairs(*g));
}
BENCHMARK(BM_CountParallelPairs)->Arg(5000)->Unit(benchmark::kMillisecond);

void BM_Phases(benchmark::State& state) {
  auto [ops, edges] = MakeDag(static_cast<int>(state.range(0)), 2, 3);
  auto g = OpGraph::Create("bench", ops, edges);
  for (auto _ : state) benchmark::DoNotOptimize(hetplan::Phases(*g).size());
}
BENCHMARK(BM_Phases)->Arg(5000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
