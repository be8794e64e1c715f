#include "cli/model_options.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "hetplan/app/refine.h"
#include "hetplan/cost/sample_shapes.h"
#include "hetplan/solve/solver.h"

namespace hetplan::cli {

void AddModelOptions(CLI::App* sub, ModelOptions* o) {
  sub->add_option("model", o->path, "ONNX model file")->required();
  sub->add_option("--fusion", o->fusion, "Operator fusion level: none | activation")
      ->default_val("none");
  sub->add_option("--shape", o->shapes,
                  "Static shape for a graph input, e.g. input=1x3x224x224; a 0 makes it empty, e.g. past=1x4x0x16; "
                  "the name may be a glob pattern for many inputs, e.g. 'past_key_values.*.key=1x2x128x32' "
                  "(repeatable; a name given exactly wins)");
  sub->add_option("--value", o->values,
                  "Fix a graph input to a constant, NAME=V[,V...], e.g. sr=16000 (repeatable); it folds like a "
                  "weight, and profiling, split and run feed it");
  sub->add_option("--sample-input", o->samples,
                  "Plan for the shapes a representative input gives, NAME=FILE.npy (repeatable): the model runs once "
                  "in ONNX Runtime on it to record shapes that depend on input values (durations, NonZero); the input "
                  "stays an input, and profiling and run feed it");
  sub->add_option("--branch", o->branches,
                  "Plan a data-dependent If as one branch, NODE=then|else (repeatable); the schedule records it");
  sub->add_option("--max-operators", o->max_operators, "Refuse models with more operators")
      ->default_val(100000);
  sub->add_option("--max-model-mib", o->max_model_mib, "Refuse model files larger than this many MiB")
      ->default_val(4096)
      ->check(CLI::PositiveNumber);
}

Result<ImportOptions> MakeImportOptions(const ModelOptions& o) {
  ImportOptions io;
  HETPLAN_ASSIGN_OR_RETURN(io.fusion, ParseFusionLevel(o.fusion));
  io.max_operators = o.max_operators;
  io.max_file_bytes = static_cast<int64_t>(o.max_model_mib * 1024 * 1024);
  for (const auto& s : o.shapes) {
    HETPLAN_ASSIGN_OR_RETURN(auto kv, ParseShapeOverride(s));
    io.input_shapes[kv.first] = kv.second;
  }
  for (const auto& s : o.values) {
    HETPLAN_ASSIGN_OR_RETURN(auto kv, ParseValueOverride(s));
    io.input_values[kv.first] = kv.second;
  }
  for (const auto& s : o.branches) {
    HETPLAN_ASSIGN_OR_RETURN(auto kv, ParseBranchOverride(s));
    io.branches[kv.first] = kv.second;
  }
  std::vector<std::pair<std::string, std::string>> samples;
  for (const auto& s : o.samples) {
    HETPLAN_ASSIGN_OR_RETURN(auto kv, ParseSampleInput(s));
    samples.push_back(std::move(kv));
  }
  HETPLAN_RETURN_IF_ERROR(RecordSampleShapes(o.path, samples, &io));
  return io;
}

Result<LoadedModel> LoadModel(const ModelOptions& o) {
  HETPLAN_ASSIGN_OR_RETURN(ImportOptions io, MakeImportOptions(o));
  return LoadOnnxModel(o.path, io);
}

void AddProfilingFlags(CLI::App* sub, ProfilingFlags* f) {
  sub->add_option("--warmup", f->warmup, "Profiler warm-up runs per operator")
      ->default_val(f->warmup)
      ->check(CLI::Range(0, 1000000));
  sub->add_option("--runs", f->runs, "Profiler timed runs per operator (the median is the cost)")
      ->default_val(f->runs)
      ->check(CLI::Range(1, 1000000));
  sub->add_option("--model-runs", f->model_runs,
                  "Profiler timed runs of the whole model, plain and with ONNX Runtime's profiler (default: --runs / "
                  "2, from 3 to 50)")
      ->check(CLI::Range(1, 1000000));
  sub->add_option("--boundary-runs", f->boundary_runs,
                  "Profiler passes of each split execution the boundary cost is fitted from (0: skip; default: "
                  "--runs / 20, from 1 to 10)")
      ->check(CLI::Range(0, 1000000));
  sub->add_flag("--no-in-context", f->no_in_context,
                "Skip ONNX Runtime's profiler on the whole model (no in_context_us column)");
  sub->add_option("--cache-dir", f->cache_dir, "Profile cache folder")->default_val(f->cache_dir);
  sub->add_flag("--no-cache", f->no_cache, "Profile afresh and do not cache");
  sub->add_flag("--no-corun", f->no_corun,
                "With two or more measured PUs: do not measure slowdowns, co-execution and hand-offs by co-running");
  sub->add_option("--corun-runs", f->corun_runs, "Co-run profiler: timed runs per block (medians are kept)")
      ->default_val(f->corun_runs)
      ->check(CLI::Range(1, 1000000));
  sub->add_option("--max-memory", f->max_memory,
                  "Resident memory the profile stays under, e.g. 8G or 512M (default: what hetplan holds plus 60 % "
                  "of the memory available when it starts); over it, the boundary fit's largest cuts, then the "
                  "in-context run are left out, and a model whose one session would not fit is refused")
      ->check([](const std::string& v) {
        return ParseByteSize(v) ? std::string()
                                : fmt::format("'{}' is not a size; give bytes or a number with K, M or G, e.g. 8G", v);
      });
  sub->add_option("--corun-rounds", f->corun_rounds,
                  "Co-run profiler: rounds of alternating solo and co-run blocks (their spread is the noise)")
      ->default_val(f->corun_rounds)
      ->check(CLI::Range(1, 1000));
}

void AddBoundaryCostFlag(CLI::App* sub, ProfilingFlags* f) {
  sub->add_option("--boundary-cost", f->boundary_cost,
                  "none: a segment boundary costs nothing; fitted: charge each measured PU's fitted cost of one "
                  "more segment (its profile's boundary row) on every edge into it from another PU")
      ->default_val(f->boundary_cost)
      ->check(CLI::IsMember({"none", "fitted"}));
}

void AddRefineFlags(CLI::App* sub, RefineFlags* f) {
  sub->add_option("--refine", f->rounds,
                  "Close the loop: split and run the plan, fit the measured PUs' costs to its segments, plan again; "
                  "at most N re-plans (0: measure the plan only), stopping when host prediction and measurement "
                  "agree within --refine-tolerance")
      ->check(CLI::Range(0, 100));
  sub->add_option("--refine-tolerance", f->tolerance,
                  "--refine stops when |measured host / predicted host - 1| is at most this")
      ->default_val(f->tolerance)
      ->check(CLI::Range(0.0, 10.0));
  sub->add_option("--refine-runs", f->runs, "--refine: timed runs of each round's plan")
      ->default_val(f->runs)
      ->check(CLI::Range(1, 10000));
  sub->add_option("--refine-warmup", f->warmup, "--refine: untimed runs first")
      ->default_val(f->warmup)
      ->check(CLI::Range(0, 10000));
  sub->add_option("--refine-dir", f->dir,
                  "--refine: keep each round's split in DIR/round-<r> (default: a temporary folder, removed)");
}

Result<PlanOutput> PlanRefined(const PreparedProblem& pp, const PlanSpec& spec, const RefineFlags& f,
                               std::vector<std::string>* lines) {
  RefineOptions ro;
  ro.rounds = f.rounds.value_or(0);
  ro.tolerance = f.tolerance;
  ro.run.runs = f.runs;
  ro.run.warmup = f.warmup;
  ro.work_dir = f.dir;
  ro.progress = [](int r, double predicted, double measured) {
    std::fprintf(stderr, "refine: round %d: host predicted %.3f ms, measured %.3f ms\n", r, predicted / 1e3,
                 measured / 1e3);
  };
  HETPLAN_ASSIGN_OR_RETURN(RefineOutput refined, Refine(pp, spec, ro));
  for (const RefineRound& r : refined.rounds) {
    lines->push_back(fmt::format(
        "round {}: {} segments, host predicted {:.3f} ms, measured {:.3f} ms ({:+.1f} %), makespan {:.3f} ms "
        "planned, {:.3f} ms on the final calibration",
        r.round, r.segments, r.predicted_host_us / 1e3, r.measured_host_us / 1e3, 100 * r.host_error,
        r.makespan_us / 1e3, r.calibrated_makespan_us / 1e3));
  }
  lines->push_back(fmt::format("kept round {} (least makespan on the final calibration); {}; {}", refined.best,
                               refined.converged ? "converged" : "not converged", refined.stopped));
  return std::move(refined.plan);
}

void ApplyProfilingFlags(const ProfilingFlags& f, CostInputs* in) {
  in->profile = MakeProfileOptions(f);
  in->charge_boundary = f.boundary_cost == "fitted";
  in->corun = !f.no_corun;
  in->corun_options.runs = f.corun_runs;
  in->corun_options.rounds = f.corun_rounds;
}

PlanInputs MakePlanInputs(const std::string& model, const ImportOptions& io, const std::string& platform,
                          const std::vector<std::string>& sets, const std::string& costs, const ProfilingFlags& f) {
  PlanInputs in;
  in.model_path = model;
  in.import = io;
  in.platform = platform;
  in.overrides = sets;
  in.costs.costs_path = costs;
  ApplyProfilingFlags(f, &in.costs);
  ReportProfileProgress(&in.costs);
  return in;
}

std::optional<int64_t> ParseByteSize(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(v > 0) || !std::isfinite(v)) return std::nullopt;
  std::string unit(end);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b') && unit.size() > 1) unit.pop_back();
  double scale = 1;
  if (unit == "K" || unit == "k" || unit == "Ki") scale = 1024.0;
  else if (unit == "M" || unit == "m" || unit == "Mi") scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "g" || unit == "Gi") scale = 1024.0 * 1024 * 1024;
  else if (!unit.empty()) return std::nullopt;
  const double bytes = v * scale;
  if (bytes < 1 || bytes > 9.0e18) return std::nullopt;
  return static_cast<int64_t>(bytes);
}

ProfileOptions MakeProfileOptions(const ProfilingFlags& f) {
  ProfileOptions po;
  if (!f.max_memory.empty()) po.max_memory_bytes = ParseByteSize(f.max_memory).value_or(0);
  po.warmup = f.warmup;
  po.runs = f.runs;
  po.model_runs = f.model_runs;  // unset: they follow --runs (ProfileOptions)
  po.boundary_runs = f.boundary_runs;
  po.in_context = !f.no_in_context;
  po.cache_dir = f.no_cache ? "" : f.cache_dir;
  return po;
}

ProfileProgress::ProfileProgress(bool terminal) : terminal_(terminal) {}

void ProfileProgress::Stage(const std::string& pu, const std::string& what, double seconds_left) {
  // Off a terminal, the first stage decides: a profile of a few seconds stays quiet.
  if (!terminal_ && last_tenth_ < 0 && quiet_) quiet_ = seconds_left < kQuietProfileS;
  if (!terminal_ && quiet_) return;
  Clear();
  const std::string left =
      seconds_left < 0 ? std::string() : fmt::format(" (about {:.0f} s of runs left)", seconds_left);
  std::fprintf(stderr, "profiling %s: %s%s\n", pu.c_str(), what.c_str(), left.c_str());
  std::fflush(stderr);
}

void ProfileProgress::Operators(const std::string& pu, int done, int total) {
  const auto now = Clock::now();
  if (done == 0) {
    ops_start_ = now;
    last_tenth_ = 0;
    return;
  }
  const double elapsed = std::chrono::duration<double>(now - ops_start_).count();
  // The co-run profiler reports its blocks under the pair's name ("cpu0+cpu1").
  const char* unit = pu.find('+') == std::string::npos ? "operators" : "co-run steps";
  const std::string text = fmt::format("profiling {}: {}/{} {}, {:.0f} s left", pu, done, total, unit,
                                       elapsed / done * (total - done));
  if (terminal_) {
    // Redraw at most 10 times a second, and always at the end.
    if (done < total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    Draw(text);
    if (done == total) Clear();
    return;
  }
  const int tenth = total > 0 ? 10 * done / total : 10;
  if (quiet_ || tenth == last_tenth_) return;
  last_tenth_ = tenth;
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

void ProfileProgress::Clear() {
  if (!terminal_ || !drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

void ProfileProgress::Draw(const std::string& text) {
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ReportProfileProgress(CostInputs* in) {
  auto p = std::make_shared<ProfileProgress>(isatty(fileno(stderr)) != 0);
  in->progress = [p](const std::string& pu, int done, int total) { p->Operators(pu, done, total); };
  in->stage = [p](const std::string& pu, const std::string& what, double left) { p->Stage(pu, what, left); };
}

void AddSolveFlags(CLI::App* sub, SolveFlags* f, bool lp_export) {
  auto& named = f->options;
  named.emplace_back("time_limit_s", sub->add_option("--time-limit", f->time_limit, "Time limit per solve in seconds")
                                         ->default_val(f->time_limit));
  named.emplace_back("relative_gap",
                     sub->add_option("--gap", f->gap, "Relative gap at which a solve stops")->default_val(f->gap));
  named.emplace_back("threads", sub->add_option("--threads", f->threads,
                                                "Threads of the MIP solver and of the exact search (0 = all cores)")
                                    ->default_val(0));
  named.emplace_back(
      "exact.node_limit",
      sub->add_option("--search-nodes", f->search_nodes,
                      "exact: nodes the search may spend before the paper's MIP (a stream's: the throughput MIP) is "
                      "tried too (0 = search only)")
          ->default_val(f->search_nodes)
          ->check(CLI::NonNegativeNumber));
  named.emplace_back("warm_start", sub->add_flag("--no-warm-start", f->no_warm_start,
                                                 "Do not start the solver from the best heuristic schedule"));
  named.emplace_back("log", sub->add_flag("--solver-log", f->log, "Show the solver's log on stderr"));
  named.emplace_back("mip.backend",
                     sub->add_option("--mip-backend", f->mip_backend,
                                     "The MIP solver of mip and of exact's fallback: auto (HiGHS where built, else CBC) | cbc | highs")
                         ->default_val(f->mip_backend)
                         ->check(CLI::IsMember({"auto", "cbc", "highs"}, CLI::ignore_case)));
  if (lp_export) {
    named.emplace_back("mip.write_lp", sub->add_option("--write-lp", f->write_lp,
                                                       "Write the paper's MIP of the instance in LP format"));
    named.emplace_back("mip.write_mps", sub->add_option("--write-mps", f->write_mps,
                                                        "Write the paper's MIP of the instance in MPS format"));
  }
  sub->add_option("--formulation", f->formulation,
                  "Old spelling: strong = --solver exact, paper = --solver mip");
}

SolveOptions MakeSolveOptions(const SolveFlags& f, bool record_given) {
  SolveOptions so;
  so.time_limit_s = f.time_limit;
  so.relative_gap = f.gap;
  so.threads = f.threads;
  so.warm_start = !f.no_warm_start;
  so.log = f.log;
  so.exact.node_limit = f.search_nodes;
  // CLI11 has checked the name (IsMember above).
  if (auto backend = ParseMipBackend(f.mip_backend); backend.ok()) so.mip.backend = *backend;
  so.mip.write_lp = f.write_lp;
  so.mip.write_mps = f.write_mps;
  for (const auto& [name, option] : f.options) {
    if (record_given && option->count() > 0) so.given.push_back(name);
  }
  return so;
}

std::string MethodChoicesHelp(const std::string& lead, const std::vector<std::string>& methods) {
  std::vector<std::string> parts;
  for (const std::string& m : methods) {
    const Solver* s = FindSolver(m);
    parts.push_back(s != nullptr ? m + " (" + s->info().summary + ")" : m);
  }
  return fmt::format("{}: {}", lead, fmt::join(parts, " | "));
}

Result<std::string> ResolveSolverFlag(const std::string& solver, const std::string& formulation) {
  HETPLAN_ASSIGN_OR_RETURN(ResolvedName name, ResolveSolverName(solver));
  if (!formulation.empty()) {
    const MethodFamily family = FindSolver(name.canonical)->info().family;
    if (family != MethodFamily::kExact && family != MethodFamily::kMip) {
      return Error(ErrorCode::kInvalidArgument,
                   "--formulation applies to the exact search and the paper's MIP, not to solver '{}'", solver);
    }
    if (formulation != "strong" && formulation != "paper") {
      return Error(ErrorCode::kInvalidArgument,
                   "--formulation '{}' is unknown; use --solver exact (was strong) or --solver mip (was paper)",
                   formulation);
    }
    const std::string canonical = formulation == "paper" ? "mip" : "exact";
    std::fprintf(stderr, "hetplan: note: --formulation %s is now --solver %s\n", formulation.c_str(),
                 canonical.c_str());
    return canonical;
  }
  if (name.notice) std::fprintf(stderr, "hetplan: note: %s\n", name.notice->c_str());
  return name.canonical;
}

}  // namespace hetplan::cli
