// Before any point runs: the spec's checks, the platform variants, the
// models and their costs; and the prior that orders points largest first.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <thread>

#include "dse/internal.h"
#include "hetplan/solve/solver.h"

namespace hetplan::dse {

Status CheckSpec(DseSpec* spec) {
  if (spec->models.empty()) return Error(ErrorCode::kInvalidArgument, "dse: no models; name at least one ONNX file");
  if (spec->platforms.empty()) {
    return Error(ErrorCode::kInvalidArgument, "dse: no platform; add --platform klein-arm (or a YAML file)");
  }
  if (spec->solvers.empty()) return Error(ErrorCode::kInvalidArgument, "dse: no solver; e.g. --solvers ilp,greedy");
  if (spec->objectives.empty()) return Error(ErrorCode::kInvalidArgument, "dse: no objective");
  if (spec->out_path.empty()) {
    return Error(ErrorCode::kInvalidArgument, "dse: no results file; add --out results.jsonl");
  }
  if (spec->jobs < 0) {
    return Error(ErrorCode::kInvalidArgument, "dse: jobs {} must be ≥ 0 (0 = all cores)", spec->jobs);
  }
  for (std::string& s : spec->solvers) {
    auto resolved = ResolveSolverName(s);
    if (!resolved.ok()) return Error(ErrorCode::kInvalidArgument, "dse: {}", resolved.status().message());
    s = resolved->canonical;
  }
  const auto two_requests = [](const std::string& s) { return FindSolver(s)->info().requests == 2; };
  if (spec->all_pairs) {
    if (std::none_of(spec->solvers.begin(), spec->solvers.end(), two_requests)) {
      return Error(ErrorCode::kInvalidArgument,
                   "dse: --pairs all needs a two-request method; add e.g. --solvers pair:map,pair_serial,"
                   "pair_naive_multi_pu (hetplan solvers lists them)");
    }
  }
  if (spec->charge_boundary) {
    for (const std::string& s : spec->solvers) {
      if (two_requests(s)) {
        return Error(ErrorCode::kInvalidArgument,
                     "dse: --boundary-cost fitted: the two-request method {} does not model segment boundaries; "
                     "drop it from --solvers or use --boundary-cost none", s);
      }
    }
  }
  std::set<std::string> seen_keys;
  for (const SweepAxis& axis : spec->sweeps) {
    if (!seen_keys.insert(axis.key).second) {
      return Error(ErrorCode::kInvalidArgument, "dse: --sweep {} is given twice; give all its values in one --sweep",
                   axis.key);
    }
  }
  return Status::Ok();
}

Status LoadVariants(const DseSpec& spec, const std::vector<DsePoint>& points, Shared* sh,
                    std::vector<Platform>* bases_out) {
  std::vector<Platform> bases;
  for (const std::string& name : spec.platforms) {
    HETPLAN_ASSIGN_OR_RETURN(Platform p, LoadPlatform(name));
    bases.push_back(std::move(p));
  }
  for (const DsePoint& pt : points) {
    const std::string vk = VariantKey(pt.platform, pt.overrides);
    if (sh->variants.contains(vk)) continue;
    Platform p = bases[pt.platform];
    for (const std::string& o : pt.overrides) {
      if (Status st = ApplyOverride(p, o); !st.ok()) {
        return Error(st.code(), "dse: platform {}: {}", spec.platforms[pt.platform], st.message());
      }
    }
    sh->variants.emplace(vk, std::move(p));
  }
  if (bases_out != nullptr) *bases_out = std::move(bases);
  return Status::Ok();
}

Status LoadModelsAndCosts(const DseSpec& spec, Shared* sh, DseSummary* summary, const DseProgressFn& progress,
                          Clock::time_point t0) {
  TableCache tables;
  DseProgress prog;
  prog.phase = DseProgress::Phase::kProfiling;
  prog.total = static_cast<int>(spec.models.size());
  for (size_t m = 0; m < spec.models.size(); ++m) {
    prog.message = "loading and profiling " + spec.models[m];
    prog.done = static_cast<int>(m);
    prog.elapsed_s = SecondsSince(t0);
    if (progress) progress(prog);
    HETPLAN_ASSIGN_OR_RETURN(LoadedModel model, LoadOnnxModel(spec.models[m], spec.import));
    CostInputs in;
    in.profile = spec.profile;
    in.charge_boundary = spec.charge_boundary;
    if (progress) {
      in.progress = [&, name = ModelName(model.path)](const std::string& pu, int done, int total) {
        DseProgress pp = prog;
        pp.message = fmt::format("profiling {} on {}: {}/{} operators", name, pu, done, total);
        pp.elapsed_s = SecondsSince(t0);
        progress(pp);
      };
    }
    for (const auto& [vk, platform] : sh->variants) {
      auto resolved = ResolveCosts(model, platform, in, &tables);
      if (!resolved.ok()) return Error(resolved.status().code(), "dse: {}", resolved.status().message());
      for (const ResolvedCosts::Profiled& pr : resolved->profiled) {
        summary->profile_notes.push_back(fmt::format("{}: {} profiled with {} thread{} (cache {}, {:.1f} s)",
                                                     ModelName(model.path), pr.pu, pr.threads,
                                                     pr.threads == 1 ? "" : "s", pr.cache, pr.seconds));
      }
      sh->costs.emplace(std::make_pair(static_cast<int>(m), vk), std::move(resolved).value());
    }
    sh->models.push_back(std::move(model));
  }
  return Status::Ok();
}

double EstimatedSeconds(const DseSpec& spec, const DsePoint& pt, int operators) {
  const Solver* solver = FindSolver(pt.solver);
  if (solver == nullptr) return 0;
  const MethodInfo& info = solver->info();
  // Both requests of a two-request method are planned together.
  const double n = static_cast<double>(std::max(1, operators)) * info.requests;
  // Per family: seconds ≈ a · n^b, a rough fit of the Klein grid's solve
  // times here (docs/results.md); only the order matters.
  double a = 2e-6, b = 1.0;  // baselines: a pass or a few over the operators
  switch (info.family) {
    case MethodFamily::kExact: a = 1e-6, b = 2.5; break;     // branch and bound: grows fast with n
    case MethodFamily::kMip: a = 1e-5, b = 2.5; break;       // CBC, usually stopped by its limit
    case MethodFamily::kMapping: a = 2e-6, b = 2.0; break;   // shortest paths over a state space
    case MethodFamily::kBaseline: break;
  }
  if (info.requests == 2) b += 0.5;  // the joint space of two requests
  double s = a * std::pow(n, b);
  if (solver->UsesCbc(pt.objective, spec.solve)) s *= 10;  // CBC: the MIP, the energy objective, a fallback
  if (info.time_limit) s = std::min(s, spec.solve.time_limit_s);
  return s;
}

}  // namespace hetplan::dse
