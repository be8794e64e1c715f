// `hetplan partition MODEL --llm prompt=P,new=N`: the generation request
// planned as one problem (docs/generation.md), printed and written as the
// generation file with its two phases' schedule files beside it.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "cli/commands.h"
#include "hetplan/app/generation.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/util/io.h"
#include "hetplan/validate/validator.h"

namespace hetplan::cli {
namespace {

std::string PerDevice(const Schedule& s, const CostModel& c) {
  std::map<int, int> n;
  for (const ScheduledOp& op : s.ops) ++n[op.device];
  std::string out;
  for (const auto& [p, count] : n) out += fmt::format("{}{} {} operators", out.empty() ? "" : ", ", c.pu(p).name, count);
  return out;
}

void Print(const GenerationOutput& g, const ValidationReport& v) {
  const DecoderSignature& sig = g.signature;
  std::printf("model     %s (%zu layers; KV cache %lld heads × %lld per layer, %d operators)\n", sig.path.c_str(),
              sig.layers.size(), static_cast<long long>(sig.kv_heads), static_cast<long long>(sig.head_dim),
              g.prefill.pp.model.graph.size());
  std::printf("platform  %s\n", g.prefill.pp.platform.name.c_str());
  for (const auto& note : g.prefill.pp.notes) std::printf("costs     %s\n", note.c_str());
  for (const auto& note : g.decode.pp.notes) std::printf("costs     %s\n", note.c_str());
  std::printf("request   prompt %lld tokens, then %lld decode steps (past %lld … %lld)\n",
              static_cast<long long>(g.spec.prompt), static_cast<long long>(g.spec.new_tokens),
              static_cast<long long>(g.spec.prompt), static_cast<long long>(g.spec.prompt + g.spec.new_tokens - 1));
  std::printf("prefill   %s; TTFT %.1f µs\n", PerDevice(*g.prefill.plan.result.schedule, g.prefill.pp.costs).c_str(),
              g.ttft_us);
  std::printf("decode    %s; TPOT %.1f µs at the first step, %.1f µs at the last\n",
              PerDevice(*g.decode.plan.result.schedule, g.decode.pp.costs).c_str(), g.tpot_us.front(),
              g.tpot_us.back());
  std::printf("tokens/s  %.1f (decode), request %.1f µs\n", g.tokens_per_s, g.request_us);
  if (g.energy_per_token_uj) {
    std::printf("energy    %.1f µJ a decode token, %.1f µJ the request\n", *g.energy_per_token_uj, *g.request_energy_uj);
  }
  for (const auto& [pu, xb] : g.crossbars) {
    const int p = g.prefill.pp.costs.FindPu(pu);
    std::printf("crossbars %s %lld / %lld (both phases' weights)\n", pu.c_str(), static_cast<long long>(xb),
                static_cast<long long>(g.prefill.pp.costs.pu(p).capacity));
  }
  if (g.rewrites) {
    const GenerationRewrites& r = *g.rewrites;
    std::printf("rewrites  %s: prefill %lld operators (%lld crossbars), decode %lld (%lld crossbars) every step; "
                "%lld crossbar writes a request over %lld free crossbars\n",
                r.pu.c_str(), static_cast<long long>(r.prefill_operators), static_cast<long long>(r.prefill_crossbars),
                static_cast<long long>(r.decode_operators), static_cast<long long>(r.decode_crossbars),
                static_cast<long long>(r.writes_per_request), static_cast<long long>(r.free_crossbars));
    if (r.endurance_hours) {
      std::printf("endurance %.4g requests (%.4g hours of generation at the planned rate) until %g writes a cell\n",
                  *r.requests_until_worn, *r.endurance_hours, r.endurance_writes);
    } else {
      std::printf("endurance nothing rewritten: no wear\n");
    }
  }
  std::printf("kv cache  %lld bytes after the request\n", static_cast<long long>(g.kv_bytes));
  if (!g.single_pu.empty()) {
    std::printf("single PU %s: request %.1f µs (%.2fx the plan's)\n", g.single_pu.c_str(), g.single_pu_request_us,
                g.single_pu_request_us / g.request_us);
  }
  if (!g.one_placement_from.empty()) {
    std::printf("one placement for both phases (the %s's): request %.1f µs (%.2fx the plan's)\n",
                g.one_placement_from.c_str(), g.one_placement_request_us, g.one_placement_request_us / g.request_us);
  }
  if (g.check_past) {
    std::printf("interp.   at past %lld: TPOT %.2f µs interpolated, %.2f µs on its own costs (%+.2f %%)\n",
                static_cast<long long>(*g.check_past), g.check_interpolated_us, g.check_obtained_us,
                100.0 * (g.check_interpolated_us / g.check_obtained_us - 1.0));
  }
  const double ttft = g.prefill.plan.result.schedule->makespan_us, tpot = g.decode.plan.result.schedule->makespan_us;
  const double n = static_cast<double>(g.spec.new_tokens);
  const auto [what, planned] =
      g.spec.objective == GenerationObjective::kTokensPerS ? std::pair{"N × TPOT (tokens/s)", n * tpot}
      : g.spec.objective == GenerationObjective::kTtft     ? std::pair{"TTFT", ttft}
                                                           : std::pair{"TTFT + N × TPOT", ttft + n * tpot};
  if (g.spec.max_tpot_us) std::printf("bound     TPOT at most %.3f µs (the decode plan's: %.3f)\n", *g.spec.max_tpot_us, tpot);
  std::printf("solver    %s: %s, %s %.3f µs, bound %.3f, gap %.4g%%; %s\n", g.prefill.plan.result.solver.c_str(),
              g.status.c_str(), what, planned, g.bound_us, 100.0 * g.gap, g.coupling.c_str());
  std::printf("validate  ok (%d operators, %d edges checked)\n", v.operators, v.edges);
}

}  // namespace

int PartitionGeneration(const PlanInputs& in, const PlanSpec& spec, const std::string& llm, const std::string& out) {
  auto request = ParseGenerationSpec(llm);
  if (!request.ok()) return ReportError(request.status());
  auto g = PlanGeneration(in, *request, spec);
  if (!g.ok()) return ReportError(g.status());
  std::string stem = out.empty() ? std::string("generation") : out;
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0) stem.resize(stem.size() - 5);
  const std::string prefill_path = stem + ".prefill.json", decode_path = stem + ".decode.json";
  const auto base = [](const std::string& p) { return std::filesystem::path(p).filename().string(); };
  ValidationReport v;
  const auto file = CheckedGenerationJson(*g, base(prefill_path), base(decode_path), &v);
  if (!file.ok()) return ReportError(file.status());
  if (!out.empty()) {
    if (Status st = WriteFileAtomic(prefill_path, ScheduleFileText(g->prefill.plan.schedule)); !st.ok()) return ReportError(st);
    if (Status st = WriteFileAtomic(decode_path, ScheduleFileText(g->decode.plan.schedule)); !st.ok()) return ReportError(st);
    if (Status st = WriteFileAtomic(out, file->dump(1) + "\n"); !st.ok()) return ReportError(st);
  }
  Print(*g, v);
  if (!out.empty()) std::printf("wrote     %s (phases: %s, %s)\n", out.c_str(), prefill_path.c_str(), decode_path.c_str());
  return 0;
}

}  // namespace hetplan::cli
