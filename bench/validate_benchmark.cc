// The validator's time against the schedule file's size (issue 59: linear in
// the file, ids and crossbar ranges included). A valid file of n operators:
// a chain alternating between a serial CPU and a reprogramming CIM with a
// shared ADC pool, every CIM operator naming its own crossbars
// (crossbar_ids), every cross-device edge timed over the link, the platform
// block and model counts the validator recomputes from. Reports the time of
// one ValidateScheduleJson and its fitted complexity.
//
//   build/bench/validate_benchmark [--benchmark_filter=...]
#include <string>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "hetplan/validate/validator.h"

namespace {

nlohmann::json MakeSchedule(int64_t n) {
  const int64_t capacity = 2 * n, pool = 4 * n;
  nlohmann::json s;
  s["format"] = "hetplan-schedule";
  s["version"] = 2;
  s["model"] = {{"file", "chain.onnx"}, {"operators", n}, {"sha256", "0"}};
  s["platform"] = {
      {"name", "bench"},
      {"pus", {"cpu", "cim"}},
      {"cpu", {{"kind", "cpu"}, {"execution", "serial"}, {"cost_source", "profile"}}},
      {"cim",
       {{"kind", "cim"}, {"execution", "spatial"}, {"cost_source", "cim"}, {"crossbars", capacity},
        {"crossbar_rows", 256}, {"crossbar_cols", 256}, {"supported_ops", {"Conv"}}, {"shared_adcs", pool}}},
      {"links", {{{"a", "cpu"}, {"b", "cim"}, {"bandwidth_gbps", 10.0}, {"latency_us", 0.0}}}}};
  s["devices"] = {{{"name", "cpu"}, {"kind", "cpu"}, {"execution", "serial"}, {"capacity_crossbars", nullptr}},
                  {{"name", "cim"},
                   {"kind", "cim"},
                   {"execution", "spatial"},
                   {"capacity_crossbars", capacity},
                   {"shared_adcs", pool},
                   {"reprogram",
                    {{"write_ns_per_row", 100.0}, {"endurance_writes", 1e8}, {"lifetime_inferences", 1e6}}}}};
  auto& ops = s["operators"] = nlohmann::json::array();
  auto& edges = s["edges"] = nlohmann::json::array();
  const double transfer = 1000.0 / (10.0 * 1e3);  // 1,000 bytes over 10 GB/s
  double t = 0;
  for (int64_t i = 0; i < n; ++i) {
    const bool cim = i % 2 == 1;
    nlohmann::json o = {{"id", i},
                        {"name", "/op" + std::to_string(i)},
                        {"type", "Conv"},
                        {"device", cim ? "cim" : "cpu"},
                        {"cost_us", {{"cpu", 2.0}, {"cim", 1.0}}},
                        {"start_us", t},
                        {"finish_us", t + (cim ? 1.0 : 2.0)},
                        {"crossbars", 2},
                        {"weight", {{"rows", 256}, {"cols", 512}, {"bits", 0}, {"groups", 1}, {"directions", 1},
                                    {"product", "Conv"}}}};
    if (cim) {
      o["crossbar_ids"] = {{2 * i, 2 * i + 1}};
      o["adcs"] = {{"cim", 512}};
    }
    ops.push_back(std::move(o));
    t += (cim ? 1.0 : 2.0) + transfer;
    if (i > 0) edges.push_back({{"from", i - 1}, {"to", i}, {"bytes", 1000}, {"elements", 250}, {"transfer_us", transfer}});
  }
  s["makespan_us"] = ops.back()["finish_us"];
  return s;
}

void BM_Validate(benchmark::State& state) {
  const nlohmann::json s = MakeSchedule(state.range(0));
  const hetplan::ValidationReport first = hetplan::ValidateScheduleJson(s);
  if (!first.ok()) {
    state.SkipWithError(("the benchmark's file fails validation: " + first.violations.front()).c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(hetplan::ValidateScheduleJson(s));
  state.SetComplexityN(state.range(0));
  state.counters["operators"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_Validate)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->Complexity();

}  // namespace

BENCHMARK_MAIN();
