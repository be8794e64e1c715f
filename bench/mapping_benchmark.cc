// BIDENT mapping search at scale (issue 5): the sequential search for 448
// operators × 3 PUs (BIDENT's Hyena; its Python took 0.03 s, target ≤ 0.3 ms)
// and a 4,600-operator chain (π0.5), with linear growth to 100,000 operators;
// the joint two-request search with ≈ 2 million states (π0.5 + Hyena, 4,601 ×
// 449; BIDENT 12 s, target ≤ 0.2 s). Costs are random but fixed (seeded):
// the search's work does not depend on their values.
//
// Memory: every allocation made by the search is counted (global operator
// new below); `peak_heap_MiB` is the largest amount the search held at once,
// beyond what the benchmark held before it. `max_rss_MiB` is the process's
// peak resident set (getrusage), for the whole run so far.
//
//   build-map/mapping_benchmark [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>

#include "hetplan/solve/mapping.h"

namespace {

std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_peak_bytes{0};

void Track(int64_t delta) {
  const int64_t now = g_live_bytes.fetch_add(delta, std::memory_order_relaxed) + delta;
  int64_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (now > peak && !g_peak_bytes.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

}  // namespace

void* operator new(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  Track(static_cast<int64_t>(malloc_usable_size(p)));
  return p;
}
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  Track(-static_cast<int64_t>(malloc_usable_size(p)));
  std::free(p);
}
void operator delete(void* p, size_t) noexcept { operator delete(p); }

namespace {

using hetplan::ChainOptions;
using hetplan::MappingCosts;
using hetplan::Objective;
using hetplan::PuInfo;
using hetplan::TransferAccounting;

std::vector<PuInfo> Pus() {
  std::vector<PuInfo> pus(3);
  const char* names[] = {"cpu", "gpu", "npu"};
  const hetplan::PuKind kinds[] = {hetplan::PuKind::kCpu, hetplan::PuKind::kGpu, hetplan::PuKind::kNpu};
  const double power[] = {3.0, 4.5, 2.0};
  for (int p = 0; p < 3; ++p) {
    pus[p].name = names[p];
    pus[p].kind = kinds[p];
    pus[p].power_w = power[p];
  }
  return pus;
}

// Every operator runs on the CPU; 85 % on the GPU, 70 % on the NPU.
MappingCosts RandomCosts(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> w(1, 500), copy(0, 30), unit(0, 1);
  MappingCosts c(n, Pus());
  for (int v = 0; v < n; ++v) {
    c.set_latency(v, 0, w(rng));
    for (int p = 1; p < 3; ++p) {
      if (unit(rng) < (p == 1 ? 0.85 : 0.7)) {
        c.set_latency(v, p, w(rng));
        c.set_h2d(v, p, copy(rng));
        c.set_d2h(v, p, copy(rng));
      }
    }
  }
  return c;
}

std::vector<int> Iota(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

double MaxRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // KiB on Linux
}

// Sets the memory counters from the peak reached since `baseline`.
void ReportMemory(benchmark::State& state, int64_t baseline) {
  state.counters["peak_heap_MiB"] = static_cast<double>(g_peak_bytes.load() - baseline) / (1 << 20);
  state.counters["max_rss_MiB"] = MaxRssMiB();
}

template <auto Search>
void BM_Sequential(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const MappingCosts c = RandomCosts(n, 1);
  const std::vector<int> chain = Iota(n);
  const ChainOptions o{Objective::kLatency, TransferAccounting::kNeighbour};
  const int64_t baseline = g_live_bytes.load();
  g_peak_bytes.store(baseline);
  for (auto _ : state) {
    auto m = Search(c, chain, o);
    benchmark::DoNotOptimize(m.ok());
  }
  ReportMemory(state, baseline);
  state.SetComplexityN(n);
  state.SetItemsProcessed(state.iterations() * n);
  // CPU seconds per operator (printed with an SI prefix: 25n = 25 ns).
  state.counters["time_per_op"] = benchmark::Counter(
      static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// 448 (BIDENT's Hyena), 4,600 (π0.5) and the range for the growth fit.
#define SEQUENTIAL_ARGS           \
  Arg(448)                        \
      ->Arg(1000)                 \
      ->Arg(4600)                 \
      ->Arg(10000)                \
      ->Arg(30000)                \
      ->Arg(100000)               \
      ->Complexity(benchmark::oN) \
      ->Unit(benchmark::kMicrosecond)

BENCHMARK(BM_Sequential<hetplan::MapChainDp>)->Name("BM_SequentialDp")->SEQUENTIAL_ARGS;
BENCHMARK(BM_Sequential<hetplan::MapChainDijkstra>)->Name("BM_SequentialDijkstra")->SEQUENTIAL_ARGS;

// range(0) × range(1) operators; range(2): 0 Dijkstra, 1 DP; range(3): solo steps.
void BM_JointConcurrent(benchmark::State& state) {
  const int n0 = static_cast<int>(state.range(0)), n1 = static_cast<int>(state.range(1));
  const MappingCosts c0 = RandomCosts(n0, 2), c1 = RandomCosts(n1, 3);
  const std::vector<int> chain0 = Iota(n0), chain1 = Iota(n1);
  const hetplan::CoexecCosts coexec;
  hetplan::ConcurrentOptions o;
  o.algorithm = state.range(2) == 0 ? hetplan::ChainAlgorithm::kDijkstra : hetplan::ChainAlgorithm::kDp;
  o.solo_steps = state.range(3) != 0;
  const int64_t baseline = g_live_bytes.load();
  g_peak_bytes.store(baseline);
  int64_t states = 0, expanded = 0;
  for (auto _ : state) {
    auto m = hetplan::SearchConcurrent(c0, chain0, c1, chain1, coexec, o);
    states = m->states;
    expanded = m->expanded;
    benchmark::DoNotOptimize(m->cost);
  }
  ReportMemory(state, baseline);
  state.counters["states"] = static_cast<double>(states);
  state.counters["settled"] = static_cast<double>(expanded);
  state.SetLabel(fmt::format("{} {}", o.algorithm == hetplan::ChainAlgorithm::kDp ? "dp" : "dijkstra",
                             o.solo_steps ? "solo-steps" : "lockstep"));
}
BENCHMARK(BM_JointConcurrent)
    ->Args({4600, 448, 0, 1})
    ->Args({4600, 448, 1, 1})
    ->Args({4600, 448, 0, 0})
    ->Args({448, 448, 0, 1})
    ->Unit(benchmark::kMillisecond);

// Same model twice: aligned states (ℓ, d0, d1).
void BM_AlignedConcurrent(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const MappingCosts c = RandomCosts(n, 4);
  const std::vector<int> chain = Iota(n);
  hetplan::ConcurrentOptions o;
  o.space = hetplan::ConcurrentSpace::kAligned;
  o.algorithm = state.range(1) == 0 ? hetplan::ChainAlgorithm::kDijkstra : hetplan::ChainAlgorithm::kDp;
  const int64_t baseline = g_live_bytes.load();
  g_peak_bytes.store(baseline);
  for (auto _ : state) {
    auto m = hetplan::SearchConcurrent(c, chain, c, chain, hetplan::CoexecCosts(), o);
    benchmark::DoNotOptimize(m->cost);
  }
  ReportMemory(state, baseline);
  state.SetLabel(state.range(1) == 0 ? "dijkstra" : "dp");
}
BENCHMARK(BM_AlignedConcurrent)->Args({4600, 0})->Args({4600, 1})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
