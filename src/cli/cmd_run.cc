#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "hetplan/deploy/generation.h"
#include "hetplan/deploy/export_openvino.h"
#include "hetplan/deploy/export_ort.h"
#include "hetplan/deploy/run.h"
#include "hetplan/util/io.h"

namespace hetplan::cli {
namespace {

std::string Percent(const std::optional<double>& v) {
  return v ? fmt::format("{:+.1f}%", 100.0 * *v) : std::string("n/a");
}
std::string FormatUs(const std::optional<double>& v) { return v ? fmt::format("{:.1f} µs", *v) : std::string("n/a"); }

// Per PU, per request and the makespan, measured against the plan.
// `run --stream N`: the stream's rate and latency against the plan.
void PrintStream(const StreamReport& st) {
  const std::string predicted =
      st.predicted_ii_us ? fmt::format("predicted II {:.1f} µs", *st.predicted_ii_us)
                         : fmt::format("a plan for one inference (makespan {:.1f} µs)", st.predicted_latency_us);
  std::printf("stream     %d inputs, up to %d in flight, %.1f ms: II %.1f µs measured (%.1f inputs/s) vs %s, %s\n",
              st.inputs, st.in_flight, st.wall_ms, st.measured_ii_us, st.inputs_per_s, predicted.c_str(),
              Percent(st.relative_error).c_str());
  std::printf("stream     latency per input median %.1f µs, p95 %.1f µs (planned %.1f µs); one input at a time %s "
              "inputs/s, unsplit model %s inputs/s\n",
              st.latency_median_us, st.latency_p95_us, st.predicted_latency_us,
              st.one_at_a_time_per_s ? fmt::format("{:.1f}", *st.one_at_a_time_per_s).c_str() : "-",
              st.unsplit_per_s ? fmt::format("{:.1f}", *st.unsplit_per_s).c_str() : "-");
  if (st.outputs_checked > 0) {
    std::printf("stream     outputs of %d inputs checked against the unsplit model: %d differ\n", st.outputs_checked,
                st.outputs_mismatched);
  }
}

void PrintPuThreads(const PuThreadReport& p) {
  for (const PuRun& pu : p.pus) {
    const std::string cores = pu.cores.empty() ? std::string("unpinned") : fmt::format("cores {}", fmt::join(pu.cores, ","));
    std::printf("PU         %-8s %s, %s, %d thread%s: %d segments, busy %.1f µs measured vs %.1f µs predicted (%s)\n",
                pu.name.c_str(), pu.provider.c_str(), cores.c_str(), pu.threads, pu.threads == 1 ? "" : "s",
                pu.segments, pu.busy_us, pu.predicted_busy_us,
                Percent(pu.predicted_busy_us > 0 ? std::optional<double>(pu.busy_us / pu.predicted_busy_us - 1.0)
                                                 : std::nullopt)
                    .c_str());
  }
  if (p.requests.size() > 1) {
    for (const RequestRun& q : p.requests) {
      std::printf("request %d  finished at %.1f µs measured vs %.1f µs predicted (%s)\n", q.request, q.finish_us,
                  q.predicted_finish_us, Percent(q.relative_error).c_str());
    }
  }
  int critical = 0;
  double gap = 0;
  for (const BoundaryRun& b : p.boundaries) {
    if (!b.critical) continue;
    ++critical;
    gap += b.gap_us;
  }
  std::printf("overlap    %.1f µs with two or more PUs busy; %zu cross-PU hand-offs, %d on the critical path "
              "(mean gap %s)\n",
              p.overlap_us, p.boundaries.size(), critical,
              critical > 0 ? fmt::format("{:.1f} µs", gap / critical).c_str() : "n/a");
  std::printf("makespan   %.1f µs measured (p10 %.1f, p90 %.1f) vs %.1f µs predicted by the schedule: error %s\n",
              p.makespan_us, p.makespan_p10_us, p.makespan_p90_us, p.predicted_makespan_us,
              Percent(p.relative_error).c_str());
}

// "float32", or "float32 computed in float16" when a narrower type on the
// output's path chose its default tolerance.
std::string JudgedType(const OutputCheck& c) {
  return c.tolerance_dtype.empty() || !c.default_tolerance ? c.dtype
                                                           : fmt::format("{} computed in {}", c.dtype, c.tolerance_dtype);
}

std::string ToleranceText(const OutputCheck& c) {
  if (c.rtol == 0 && c.atol == 0) return "exact";
  return fmt::format("rtol {:g}, atol {:g}{}", c.rtol, c.atol, c.default_tolerance ? " by default" : "");
}

// The tolerances the outputs were judged with, one entry per element type.
std::string TolerancesText(const RunReport& r) {
  std::map<std::string, std::string> by_type;
  for (const auto& c : r.outputs) by_type.emplace(JudgedType(c), ToleranceText(c));
  std::vector<std::string> parts;
  for (const auto& [dtype, text] : by_type) parts.push_back(fmt::format("{}: {}", dtype, text));
  return fmt::format("{}", fmt::join(parts, "; "));
}

// What explains the host error (run --costs): boundaries and operators,
// per measured segment.
void PrintBreakdown(const RunReport& r) {
  const ErrorBreakdown& b = *r.breakdown;
  std::printf("explain    %s: the host error %.1f µs over %d measured segments = boundaries %s + operators "
              "%.1f µs; hand-offs across PUs %.1f µs measured vs %.1f µs predicted\n",
              b.costs_file.c_str(), b.host_error_us, b.measured_segments,
              b.boundary_known ? fmt::format("{:.1f} µs", b.boundary_us).c_str() : "n/a (no boundary row)",
              b.ops_residue_us, b.transfer_measured_us, b.transfer_predicted_us);
  auto opt = [](const std::optional<double>& v) { return v ? fmt::format("{:.1f}", *v) : std::string("n/a"); };
  std::printf("%4s  %13s %13s %13s %13s %13s %13s\n", "seg", "predicted_us", "isolated_us", "in_context_us",
              "run_us", "boundary_us", "ops_resid_us");
  for (const auto& s : r.segments) {
    if (!s.measured) continue;
    std::printf("%4d  %13.1f %13s %13s %13.1f %13s %13s\n", s.id, s.predicted_us, opt(s.isolated_us).c_str(),
                opt(s.in_context_us).c_str(), s.run_us, opt(s.boundary_us).c_str(),
                opt(s.ops_residue_us).c_str());
  }
}

// The run's segments, host, hand-offs and drift against the plan.
void PrintRun(const RunReport& r) {
  std::printf("deployment %s (%s): %zu segments, %d PU boundaries; %s executor, %d runs after %d warm-up\n",
              r.dir.c_str(), r.model.c_str(), r.segments.size(), r.boundaries,
              r.pu_threads ? "PU-thread" : r.resident ? "resident" : "load-per-run", r.runs, r.warmup);
  std::printf("host       %s, %s, %d thread%s\n", r.cpu.c_str(), r.runtime.c_str(), r.threads,
              r.threads == 1 ? "" : "s");
  std::printf("%4s  %-8s %-9s %5s %13s %13s %13s %8s %11s\n", "seg", "device", "timing", "ops", "predicted_us",
              "run_us", "charged_us", "error", "handoff_us");
  for (const auto& s : r.segments) {
    std::string err = s.measured && s.predicted_us > 0 ? Percent(s.run_us / s.predicted_us - 1.0) : "";
    std::string handoff = s.id == 0 ? "" : fmt::format("{:.1f}{}", s.handoff_in_us, s.boundary_in ? "" : "*");
    std::printf("%4d  %-8s %-9s %5d %13.1f %13.1f %13.1f %8s %11s%s\n", s.id, s.device.c_str(),
                s.measured ? "measured" : "modelled", s.operators, s.predicted_us, s.run_us, s.charged_us,
                err.c_str(), handoff.c_str(), s.measured ? "" : "  (run_us: emulated on the CPU, not charged)");
  }
  std::printf("           handoff_us: executor time before the segment's Run (* = same PU as the previous one)\n");
  std::printf("host       predicted %.1f µs, measured %.1f µs, error %s\n", r.predicted_host_us, r.measured_host_us,
              Percent(r.host_relative_error).c_str());
  if (r.breakdown) PrintBreakdown(r);
  std::printf("modelled   accelerators %.1f µs (emulated on the CPU in %.1f µs), transfers %.1f µs\n",
              r.modelled_accelerator_us, r.emulated_accelerator_us, r.predicted_transfer_us);
  const std::string setup =
      r.resident ? fmt::format(", sessions created once in {:.1f} ms", r.setup_ms) : std::string();
  std::printf("hand-off   %.1f µs over %d transitions: %s per boundary (entry %.1f µs, exit %.1f µs%s)\n",
              r.handoff_us, r.transitions, FormatUs(r.handoff_per_boundary_us).c_str(), r.entry_us, r.exit_us,
              setup.c_str());
  std::printf("split      %.1f µs end to end on this CPU vs unsplit %s: %s per boundary\n", r.split_wall_us,
              FormatUs(r.unsplit_wall_us).c_str(), FormatUs(r.split_overhead_per_boundary_us).c_str());
  if (r.reference_drift) {
    std::printf("drift      unsplit model %.1f µs now vs %.1f µs predicted by the profile: %s (the machine's speed "
                "since profiling, inside every host error above)\n",
                *r.unsplit_wall_us, *r.predicted_unsplit_us, Percent(r.reference_drift).c_str());
  }
  if (r.pu_threads) {
    PrintPuThreads(*r.pu_threads);
  } else {
    std::printf(
        "total      estimated %.1f µs (measured host + modelled + hand-offs) vs predicted %.1f µs sequential,"
        " %.1f µs schedule makespan\n",
        r.estimated_us, r.predicted_sequential_us, r.predicted_makespan_us);
  }
}

// `run DIR --generate N`: the generation loop against the plan and the unsplit model's tokens.
int RunGenerate(const std::string& dir, const GenerateOptions& g, const std::string& json) {
  auto r = RunGeneration(dir, g);
  if (!r.ok()) return ReportError(r.status());
  if (!json.empty()) {
    if (Status st = WriteFileAtomic(json, GenerateReportToJson(*r).dump(1) + "\n"); !st.ok()) return ReportError(st);
  }
  std::printf("generation %s (%s): prompt %lld tokens, %lld new; %s executor, %d generations after %d warm-up (%s)\n",
              r->dir.c_str(), r->model.c_str(), static_cast<long long>(r->prompt),
              static_cast<long long>(r->new_tokens), r->executor.c_str(), r->repeats, r->warmup,
              r->measured ? "measured" : "functional: modelled PUs ran on the CPU");
  std::printf("TTFT       %.1f µs measured vs %.1f µs planned\n", r->ttft_us, r->predicted_ttft_us);
  std::printf("TPOT       median %.1f µs, p95 %.1f µs; first step %.1f µs, last %.1f µs\n", r->tpot_median_us,
              r->tpot_p95_us, r->tpot_first_us, r->tpot_last_us);
  std::printf("tokens/s   %.1f measured vs %.1f planned (decode %.1f µs vs %.1f µs): %s\n", r->tokens_per_s,
              r->predicted_tokens_per_s, r->decode_us, r->predicted_decode_us, Percent(r->tokens_per_s_error).c_str());
  if (r->unsplit_decode_us) {
    std::printf("unsplit    TTFT %.1f µs, decode %.1f µs", *r->unsplit_ttft_us, *r->unsplit_decode_us);
    if (r->drift) {
      std::printf(" vs %.1f µs predicted by the profile: drift %s; tokens/s error after the drift %s",
                  *r->predicted_unsplit_decode_us, Percent(r->drift).c_str(),
                  Percent(r->tokens_per_s_error_after_drift).c_str());
    }
    std::printf("\n");
  }
  std::printf("tokens     %s\n", fmt::format("{}", fmt::join(r->tokens, " ")).c_str());
  if (r->tokens_equal) {
    std::printf("check      %s\n", *r->tokens_equal ? "the token ids equal the unsplit model's own loop"
                                                    : fmt::format("the token ids differ from the unsplit model's from "
                                                                  "token {}", r->first_mismatch).c_str());
  }
  for (const auto& n : r->notes) std::printf("note       %s\n", n.c_str());
  return r->tokens_equal.value_or(true) ? 0 : 1;
}

// `run SCHEDULE --hetero`: the plan as one model compiled on OpenVINO's HETERO device.
int RunHetero(const std::string& schedule, const RunOptions& run, const std::vector<std::string>& device_flags,
              const std::vector<std::string>& plugin_flags, const std::string& model, const std::string& json) {
  HeteroRunOptions options;
  auto devices = ParsePairs(device_flags, "--device", "cim=NPU");
  if (!devices.ok()) return ReportError(devices.status());
  auto plugins = ParsePairs(plugin_flags, "--plugin", "CPUB=libopenvino_intel_cpu_plugin.so");
  if (!plugins.ok()) return ReportError(plugins.status());
  options.devices = *devices;
  options.plugins = *plugins;
  options.runs = run.runs;
  options.warmup = run.warmup;
  if (run.rtol) options.rtol = *run.rtol;
  if (run.atol) options.atol = *run.atol;
  options.split.model_path = model;
  auto r = RunOnHetero(schedule, options);
  if (!r.ok()) return ReportError(r.status());
  if (!json.empty()) {
    if (Status st = WriteFileAtomic(json, HeteroRunToJson(*r).dump(1) + "\n"); !st.ok()) return ReportError(st);
  }
  std::string per_device;
  for (const auto& [d, n] : r->operations) per_device += fmt::format("{}{} {}", per_device.empty() ? "" : ", ", d, n);
  std::printf("model      %s: %d operations named by the plan, every operation set (%s)\n",
              r->affinity.model_file.c_str(), r->affinity.operations, per_device.c_str());
  std::printf("compiled   on %s: %d sub-models (the plan's segments: %d), executing on %s\n", r->device.c_str(),
              r->submodels, r->plan_segments, fmt::format("{}", fmt::join(r->execution_devices, ", ")).c_str());
  std::printf("measured   %.1f µs median (p10 %.1f, p90 %.1f; %d runs); %s alone %.1f µs; the plan predicted "
              "%.1f µs\n", r->median_us, r->p10_us, r->p90_us, options.runs,
              r->reference_device.c_str(),
              r->reference_median_us, r->planned_us);
  if (!r->outputs_match) {
    std::fprintf(stderr, "hetplan: error: %s: the HETERO outputs differ from %s's alone (max abs %.3g, max rel "
                 "%.3g) beyond atol %.3g + rtol %.3g; give --rtol and --atol to judge otherwise\n",
                 schedule.c_str(), r->reference_device.c_str(), r->max_abs_diff, r->max_rel_diff, options.atol, options.rtol);
    return 1;
  }
  std::printf("outputs    match the model on %s alone (max abs %.3g, max rel %.3g)\n", r->reference_device.c_str(),
              r->max_abs_diff, r->max_rel_diff);
  return 0;
}

// `run DIR --one-session`: an ort-layer-assignment export in one ONNX Runtime session.
int RunOneSessionCommand(const std::string& dir, const RunOptions& run, const std::string& json) {
  OneSessionOptions options;
  options.runs = run.runs;
  options.warmup = run.warmup;
  if (run.threads > 0) options.threads = run.threads;
  if (run.rtol) options.rtol = *run.rtol;
  if (run.atol) options.atol = *run.atol;
  auto r = RunOneSession(dir, options);
  if (!r.ok()) return ReportError(r.status());
  if (!json.empty()) {
    if (Status st = WriteFileAtomic(json, OneSessionToJson(*r).dump(1) + "\n"); !st.ok()) return ReportError(st);
  }
  std::string ran;
  for (const auto& [ep, n] : r->ran_on) ran += fmt::format("{}{} {}", ran.empty() ? "" : ", ", ep, n);
  std::printf("record     %d nodes in ONNX Runtime's record (%s): %d as planned, %d elsewhere, %d made by its "
              "fusions; %d annotated nodes not in it (removed by its optimizer)\n",
              r->recorded_nodes, ran.c_str(), r->as_planned, r->elsewhere, r->unannotated, r->not_recorded);
  std::printf("measured   %.1f µs median (p10 %.1f, p90 %.1f; %d runs); the model in a plain session %.1f µs\n",
              r->median_us, r->p10_us, r->p90_us, options.runs, r->reference_median_us);
  if (r->elsewhere > 0) {
    std::fprintf(stderr, "hetplan: error: %s: %d nodes ran elsewhere than planned, e.g. %s; give those PUs a provider "
                 "this ONNX Runtime has (export --device PU=...), or run where the planned providers are\n",
                 dir.c_str(), r->elsewhere, r->first_elsewhere.c_str());
    return 1;
  }
  if (r->mismatches > 0) {
    std::fprintf(stderr, "hetplan: error: %s: %lld of %lld output elements differ from the plain session's beyond "
                 "atol %.3g + rtol %.3g (max abs %.3g); give --rtol and --atol to judge otherwise\n", dir.c_str(),
                 static_cast<long long>(r->mismatches), static_cast<long long>(r->elements), options.atol,
                 options.rtol, r->max_abs_diff);
    return 1;
  }
  std::printf("outputs    match the model in a plain session (%lld elements, max abs %.3g)\n",
              static_cast<long long>(r->elements), r->max_abs_diff);
  return 0;
}

}  // namespace

void RegisterRun(CLI::App& app) {
  auto* sub =
      app.add_subcommand("run",
                         "Run a split plan with ONNX Runtime: measured CPU segments, modelled accelerator segments, "
                         "outputs checked against the unsplit model");
  struct Opts {
    std::string dir, json, model;
    RunOptions run;
    bool no_reference = false;
    bool sequential = false;
    int generate = 0;
    bool hetero = false;
    bool one_session = false;
    std::vector<std::string> devices, plugins;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("dir", o->dir, "Folder written by hetplan split (with --hetero: the schedule file; with "
                                  "--one-session: the folder export --format ort-layer-assignment wrote)")->required();
  sub->add_flag("--hetero", o->hetero,
                "Run the schedule as one model compiled on OpenVINO's HETERO device, each operation's affinity from "
                "the plan (docs/openvino.md); outputs checked against the first device alone");
  sub->add_flag("--one-session", o->one_session,
                "Run a folder written by export --format ort-layer-assignment in one ONNX Runtime session with its "
                "layer assignment; fail when ONNX Runtime's record shows a node elsewhere than planned");
  sub->add_option("--device", o->devices,
                  "--hetero: the OpenVINO device of a PU that is not runtime: openvino, PU=DEVICE (repeatable)");
  sub->add_option("--plugin", o->plugins,
                  "--hetero: register an OpenVINO plugin library as a device, NAME=LIBRARY (repeatable), e.g. "
                  "CPUB=libopenvino_intel_cpu_plugin.so for a second CPU device");
  sub->add_option("--runs", o->run.runs, "Timed runs (medians are reported)")->default_val(20);
  sub->add_option("--warmup", o->run.warmup, "Untimed runs first")->default_val(3);
  sub->add_flag("--resident,!--no-resident", o->run.resident,
                "Resident executor: sessions created once, tensors bound in place (default); --no-resident "
                "creates the sessions every run and copies tensors through host buffers")
      ->default_val(true);
  sub->add_option("--threads", o->run.threads, "ONNX Runtime intra-op threads (0 = as planned)")->default_val(0);
  sub->add_flag("--sequential", o->sequential,
                "Run multi-PU plans one segment after another on this thread instead of on pinned PU threads");
  sub->add_option("--model", o->model, "The unsplit model, when not at the manifest's model.file");
  sub->add_flag("--no-reference", o->no_reference, "Do not run the unsplit model nor compare outputs");
  sub->add_option("--rtol", o->run.rtol,
                  "Relative tolerance of the output check (default: by each output's type, float32 1e-4, "
                  "float16 1e-2, bfloat16 5e-2)");
  sub->add_option("--atol", o->run.atol,
                  "Absolute tolerance of the output check (default: by each output's type, float32 1e-5, "
                  "float16 1e-2, bfloat16 5e-2)");
  sub->add_option("--stream", o->run.stream,
                  "Then stream N different inputs through the plan, PUs on their own threads and several inputs in "
                  "flight: inputs per second and latency against the plan (docs/throughput.md)")
      ->default_val(0);
  sub->add_option("--generate", o->generate,
                  "A split generation plan (partition --llm, then split): run the prefill and N decode steps, greedy "
                  "tokens; TTFT, TPOT and tokens/s against the plan, token ids against the unsplit model's loop "
                  "(--runs generations, default 3 here)")
      ->default_val(0);
  sub->add_option("--json", o->json, "Write the report as JSON");
  sub->add_option("--costs", o->run.costs_path,
                  "The host profile the plan was made from (hetplan profile --json, or the profile cache's "
                  ".json): explain each segment's error by operator and boundary costs");
  Register(sub, [o, sub]() -> int {
    if (o->one_session) return RunOneSessionCommand(o->dir, o->run, o->json);
    if (o->hetero) return RunHetero(o->dir, o->run, o->devices, o->plugins, o->model, o->json);
    if (o->generate != 0) {
      GenerateOptions g;
      g.new_tokens = o->generate;
      g.repeats = sub->count("--runs") > 0 ? o->run.runs : 3;
      g.warmup = sub->count("--warmup") > 0 ? o->run.warmup : 1;
      g.reference = !o->no_reference;
      g.model_path = o->model;
      g.pu_threads = !o->sequential;
      return RunGenerate(o->dir, g, o->json);
    }
    RunOptions ro = o->run;
    if (ro.stream > 0 && o->no_reference) {
      std::printf("note       --no-reference: the stream's outputs are not checked either\n");
    }
    ro.model_path = o->model;
    ro.reference = !o->no_reference;
    ro.pu_threads = !o->sequential;
    auto r = RunDeployment(o->dir, ro);
    if (!r.ok()) return ReportError(r.status());
    if (!o->json.empty()) {
      if (Status st = WriteFileAtomic(o->json, RunReportToJson(*r).dump(1) + "\n"); !st.ok()) return ReportError(st);
    }
    PrintRun(*r);
    if (!r->types_note.empty()) std::printf("types      %s\n", r->types_note.c_str());
    if (!r->reference_checked) {
      std::printf("outputs    not checked (--no-reference)\n");
      return 0;
    }
    for (const auto& c : r->outputs) {
      std::printf("output     %-12s %s: max abs error %.3g, max rel error %.3g, %lld of %lld elements off "
                  "(%s: %s)\n",
                  c.name.c_str(), c.match ? "matches" : "DIFFERS", c.max_abs_error, c.max_rel_error,
                  static_cast<long long>(c.mismatches), static_cast<long long>(c.elements), JudgedType(c).c_str(),
                  ToleranceText(c).c_str());
    }
    if (r->stream) PrintStream(*r->stream);
    if (!r->outputs_match || (r->stream && r->stream->outputs_mismatched > 0)) {
      std::fprintf(stderr,
                   "hetplan: error: %s: the split outputs differ from the unsplit model beyond %s; give "
                   "--rtol and --atol to judge with other tolerances\n",
                   o->dir.c_str(), TolerancesText(*r).c_str());
      return 1;
    }
    std::printf("outputs    match the unsplit model (%s)\n", TolerancesText(*r).c_str());
    return 0;
  });
}

}  // namespace hetplan::cli
