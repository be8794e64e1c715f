// The paper's ILP formulation and the "strong" one (docs/ilp.md) side by side
// on the same instances: for each model, platform and grid point
// (C crossbars × T_mvm), both solve the same problem through PlanPartition,
// which validates every schedule with the independent validator; the table
// gives operators, the paper model's variables and constraints, the strong
// search's size, each one's status, seconds and gap at its limit, both
// makespans, and the speed ratio (paper seconds / strong seconds; "≥" when
// the paper formulation stopped at its time limit).
//
//   build/bench/formulations_benchmark [--models yolov5n,vit_b_16]
//       [--platforms klein-arm,klein-x86] [--crossbars 25,50,100,200]
//       [--mvm 50,100,500,1000] [--paper-limit 60] [--strong-limit 10]
//       [--threads 0] [--runs 20] [--warmup 5] [--formulations paper,strong]
//       [--zoo DIR]
//
// Host costs come from the ONNX Runtime profiler through the profile cache
// (.cache/hetplan; its key includes --runs and --warmup).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench_support.h"
#include "hetplan/app/plan.h"

namespace {

constexpr double kGap = 1e-4;  // relative gap for both formulations

using hetplan::SolveOptions;
using hetplan::SolveResult;
using hetplan::SolveStatus;

struct Run {
  bool done = false;
  SolveResult result;
  double makespan_us = std::numeric_limits<double>::quiet_NaN();
  std::string search;  // the strong search's size, from its note
};

std::string Status(const Run& r) { return r.done ? hetplan::ToString(r.result.status) : "-"; }

std::string Seconds(const Run& r) {
  if (!r.done) return "-";
  return r.result.seconds < 0.1 ? fmt::format("{:.4f}", r.result.seconds) : fmt::format("{:.2f}", r.result.seconds);
}

std::string GapPercent(const Run& r) {
  if (!r.done || std::isnan(r.result.gap)) return "-";
  return fmt::format("{:.3f}", 100.0 * r.result.gap);
}

std::string Ratio(const Run& paper, const Run& strong) {
  if (!paper.done || !strong.done) return "-";
  // Paper seconds / strong seconds; "≥" when the paper's model stopped at
  // its limit (it would need longer); "-" when the strong search did not
  // prove its result either.
  if (strong.result.status != SolveStatus::kOptimal) return "-";
  const double ratio = paper.result.seconds / std::max(strong.result.seconds, 1e-6);
  const bool at_limit = paper.result.status != SolveStatus::kOptimal;
  return fmt::format("{}{:.0f}×", at_limit ? "≥ " : "", ratio);
}

// Cross-checks between the two results on one instance; empty when they
// agree. Each schedule is feasible (validated), so each makespan is an upper
// bound on the optimum and each reported bound a lower bound: a bound above
// the other's makespan, or two "optimal" results further apart than the gap,
// is a bug.
std::string Disagreement(const Run& paper, const Run& strong, double gap) {
  if (!paper.done || !strong.done || std::isnan(paper.makespan_us) || std::isnan(strong.makespan_us)) return "";
  const double slack = 1e-9 * std::max(paper.makespan_us, strong.makespan_us);
  if (!std::isnan(strong.result.bound) && strong.result.bound > paper.makespan_us + slack) {
    return fmt::format("strong bound {} above the paper's schedule {}", strong.result.bound, paper.makespan_us);
  }
  if (!std::isnan(paper.result.bound) && paper.result.bound > strong.makespan_us + slack) {
    return fmt::format("paper bound {} above the strong schedule {}", paper.result.bound, strong.makespan_us);
  }
  if (paper.result.status == SolveStatus::kOptimal && strong.result.status == SolveStatus::kOptimal &&
      std::fabs(paper.makespan_us - strong.makespan_us) >
          gap * std::max(paper.makespan_us, strong.makespan_us) + slack) {
    return fmt::format("both optimal but {} vs {}", paper.makespan_us, strong.makespan_us);
  }
  return "";
}

// "strong: 45 segments (largest 79 operators), 76 searches, 31175 ..." →
// "45 seg / 31175 nodes".
std::string SearchSize(const SolveResult& r) {
  if (!r.exact) return "-";
  return fmt::format("{} seg / {} nodes", r.exact->segments, r.exact->nodes);
}

}  // namespace

int main(int argc, char** argv) {
  bench::Grid grid;
  grid.models = "yolov5n,vit_b_16";
  std::string formulations = "paper,strong";
  double paper_limit = 60, strong_limit = 10;
  int threads = 0;
  for (int i = 1; i < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--help" || k == "-h" || i + 1 >= argc) {
      std::fprintf(k == "--help" || k == "-h" ? stdout : stderr,
                   "usage: formulations_benchmark [--models yolov5n,vit_b_16] [--platforms klein-arm,klein-x86]\n"
                   "  [--crossbars 25,50,100,200] [--mvm 50,100,500,1000] [--paper-limit 60] [--strong-limit 10]\n"
                   "  [--threads 0] [--runs 20] [--warmup 5] [--formulations paper,strong] [--zoo DIR]\n");
      return k == "--help" || k == "-h" ? 0 : 2;
    }
    const std::string v = argv[i + 1];
    if (grid.Parse(k, v)) continue;
    if (k == "--formulations") {
      formulations = v;
    } else if (k == "--paper-limit") {
      paper_limit = std::stod(v);
    } else if (k == "--strong-limit") {
      strong_limit = std::stod(v);
    } else if (k == "--threads") {
      threads = std::stoi(v);
    } else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  const std::vector<std::string> which = bench::Split(formulations);
  auto wanted = [&](const std::string& f) { return std::find(which.begin(), which.end(), f) != which.end(); };

  std::printf("Time limits: paper %g s (CBC, %s threads), strong %g s (1 thread); relative gap %g.\n\n", paper_limit,
              threads == 0 ? "all" : std::to_string(threads).c_str(), strong_limit, kGap);
  std::printf(
      "| model | platform | C | T_mvm ns | operators | paper vars | paper cons | paper | paper s | paper gap %% | "
      "strong search | strong | strong s | strong gap %% | makespan paper µs | paper bound µs | makespan strong µs | paper s / strong s |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|\n");
  struct Summary {
    int instances = 0, strong_optimal = 0, paper_optimal = 0;
    double strong_max_s = 0, paper_max_s = 0, strong_worst_gap = 0;
  };
  std::map<std::string, Summary> summary;
  int failures = 0;
  const int prepared = bench::ForEachGridPoint(grid, [&](const bench::GridPoint& pt, hetplan::PreparedProblem& pp) {
    Run paper, strong;
    for (const std::string& f : {std::string("paper"), std::string("strong")}) {
      if (!wanted(f)) continue;
      SolveOptions so;
      so.relative_gap = kGap;
      so.time_limit_s = f == "paper" ? paper_limit : strong_limit;
      so.threads = f == "paper" ? threads : 1;
      // PlanPartition validates the schedule with the independent
      // validator; an invalid one is an error.
      auto plan =
          hetplan::PlanPartition(pp, f == "paper" ? "mip" : "exact", hetplan::Objective::kLatency, std::nullopt, so);
      if (!plan.ok()) {
        std::fprintf(stderr, "%s %s C=%s T=%s %s: %s\n", pt.model.c_str(), pt.platform.c_str(), pt.crossbars.c_str(),
                     pt.mvm_ns.c_str(), f.c_str(), plan.status().message().c_str());
        ++failures;
        continue;
      }
      Run& run = f == "paper" ? paper : strong;
      run.done = true;
      run.result = plan->result;
      if (run.result.schedule) run.makespan_us = run.result.schedule->makespan_us;
    }
    std::printf("| %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                pt.model.c_str(), pt.platform.c_str(), pt.crossbars.c_str(), pt.mvm_ns.c_str(), pp.model.graph.size(),
                paper.done && paper.result.mip ? std::to_string(paper.result.mip->variables).c_str() : "-",
                paper.done && paper.result.mip ? std::to_string(paper.result.mip->constraints).c_str() : "-",
                Status(paper).c_str(), Seconds(paper).c_str(), GapPercent(paper).c_str(),
                strong.done ? SearchSize(strong.result).c_str() : "-", Status(strong).c_str(),
                Seconds(strong).c_str(), GapPercent(strong).c_str(),
                std::isnan(paper.makespan_us) ? "-" : fmt::format("{:.1f}", paper.makespan_us).c_str(),
                !paper.done || std::isnan(paper.result.bound) ? "-" : fmt::format("{:.1f}", paper.result.bound).c_str(),
                std::isnan(strong.makespan_us) ? "-" : fmt::format("{:.1f}", strong.makespan_us).c_str(),
                Ratio(paper, strong).c_str());
    const std::string why = Disagreement(paper, strong, kGap);
    if (!why.empty()) {
      std::fprintf(stderr, "DISAGREEMENT %s %s C=%s T=%s: %s\n", pt.model.c_str(), pt.platform.c_str(),
                   pt.crossbars.c_str(), pt.mvm_ns.c_str(), why.c_str());
      ++failures;
    }
    std::fflush(stdout);
    Summary& s = summary[pt.model + " / " + pt.platform];
    ++s.instances;
    if (strong.done) {
      s.strong_optimal += strong.result.status == SolveStatus::kOptimal;
      s.strong_max_s = std::max(s.strong_max_s, strong.result.seconds);
      if (!std::isnan(strong.result.gap)) s.strong_worst_gap = std::max(s.strong_worst_gap, strong.result.gap);
    }
    if (paper.done) {
      s.paper_optimal += paper.result.status == SolveStatus::kOptimal;
      s.paper_max_s = std::max(s.paper_max_s, paper.result.seconds);
    }
  });
  if (prepared != 0) return prepared;
  std::printf(
      "\n| model / platform | instances | paper optimal | paper max s | strong optimal | strong max s | "
      "strong worst gap %% |\n|---|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& [key, s] : summary) {
    std::printf("| %s | %d | %d | %.2f | %d | %.2f | %.4f |\n", key.c_str(), s.instances, s.paper_optimal,
                s.paper_max_s, s.strong_optimal, s.strong_max_s, 100.0 * s.strong_worst_gap);
  }
  return failures == 0 ? 0 : 1;
}
