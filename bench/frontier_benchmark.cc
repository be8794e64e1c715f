// One crossbar frontier (hetplan frontier, docs/frontier.md) against solving
// every breakpoint separately with the exact method, and against the CIM
// paper's 16-point grid (C ∈ {25,50,100,200} × T_mvm ∈ {50,100,500,1000} ns,
// one exact solve each) and against the four frontiers that cover that grid
// (one curve per T_mvm, what `hetplan frontier --sweep` computes), in the
// same run, per model and platform. Checks that every breakpoint's separate
// solve equals the frontier and every grid point equals its curve. Host costs come
// from the profile cache (.cache/hetplan; profiled once when absent).
//
//   build/bench/frontier_benchmark [--platforms klein-arm,klein-x86]
//       [--models resnet18,resnet50,mobilenetv2,yolov5n] [--mvm 50] [--threads 1]
//       [--time-limit 600] [--gap 0]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_support.h"
#include "hetplan/app/plan.h"
#include "hetplan/solve/frontier.h"

using namespace hetplan;

namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

int CimPu(const CostModel& c) {
  for (int p = 0; p < c.num_pus(); ++p) {
    if (c.pu(p).spatial) return p;
  }
  return -1;
}

// The exact method at budget b (b as the capacity).
Result<SolveResult> ExactAt(const Problem& p, int pu, int64_t b, const SolveOptions& so) {
  CostModel c = *p.costs;
  c.mutable_pu(pu).capacity = b;
  Problem q = p;
  q.costs = &c;
  return Solve("exact", q, so);
}

}  // namespace

int main(int argc, char** argv) {
  std::string platforms = "klein-arm,klein-x86", models = "resnet18,resnet50,mobilenetv2,yolov5n";
  std::string zoo = HETPLAN_ZOO_DIR, mvm = "50";
  SolveOptions so;
  so.threads = 1;
  so.relative_gap = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--platforms") platforms = v;
    else if (k == "--models") models = v;
    else if (k == "--zoo") zoo = v;
    else if (k == "--mvm") mvm = v;
    else if (k == "--threads") so.threads = std::stoi(v);
    else if (k == "--time-limit") so.time_limit_s = std::stod(v);
    else if (k == "--gap") so.relative_gap = std::stod(v);
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  std::printf("| model | platform | T_mvm ns | operators | crossbars for all | breakpoints | saturation C | speedup there "
              "| frontier s | every breakpoint separately s | 16-point grid s | 4 curves (every T_mvm of the grid) s "
              "| breakpoints per T_mvm 50/100/500/1000 | agree |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
  int bad = 0;
  for (const std::string& name : bench::Split(models)) {
    for (const std::string& platform : bench::Split(platforms)) {
      PlanInputs in;
      in.model_path = zoo + "/" + name + ".onnx";
      in.platform = platform;
      in.overrides = {"cim.mvm_latency_ns=" + mvm};
      in.costs.profile.cache_dir = ".cache/hetplan";
      auto pp = PrepareProblem(in);
      if (!pp.ok()) {
        std::fprintf(stderr, "%s\n", pp.status().message().c_str());
        return 1;
      }
      const Problem problem{&pp->model.graph, &pp->costs, Objective::kLatency, std::nullopt};
      const int pu = CimPu(pp->costs);
      const double cpu_only = ComputeReferences(problem).values.at("cpu_only_us");
      auto t0 = Clock::now();
      auto f = SolveCrossbarFrontier(problem, pu, so);
      const double frontier_s = Since(t0);
      if (!f.ok()) {
        std::fprintf(stderr, "%s\n", f.status().message().c_str());
        return 1;
      }
      // Every breakpoint solved on its own.
      bool agree = f->complete;
      t0 = Clock::now();
      for (const FrontierStep& s : f->steps) {
        auto r = ExactAt(problem, pu, s.crossbars, so);
        if (!r.ok() || !r->schedule ||
            std::fabs(r->objective - s.makespan_us) > 1e-6 * std::max(1.0, s.makespan_us)) {
          agree = false;
        }
      }
      const double separate_s = Since(t0);
      // The paper's grid: 4 budgets × 4 MVM latencies, the problems prepared
      // first (model import and costs are not timed, as for the frontier).
      std::vector<PreparedProblem> grid;
      const std::vector<std::string> latencies = {"50", "100", "500", "1000"};
      for (const std::string& t : latencies) {
        PlanInputs gin = in;
        gin.overrides = {"cim.mvm_latency_ns=" + t};
        auto gp = PrepareProblem(gin);
        if (!gp.ok()) return 1;
        grid.push_back(std::move(*gp));
      }
      t0 = Clock::now();
      std::vector<double> grid_makespans;
      for (size_t ti = 0; ti < grid.size(); ++ti) {
        const Problem gprob{&grid[ti].model.graph, &grid[ti].costs, Objective::kLatency, std::nullopt};
        for (int64_t c : {25, 50, 100, 200}) {
          auto r = ExactAt(gprob, pu, c, so);
          if (!r.ok()) return 1;
          grid_makespans.push_back(r->schedule ? r->objective : NAN);
        }
      }
      const double grid_s = Since(t0);
      // The four curves that hold the whole grid, each grid point read off
      // its curve.
      t0 = Clock::now();
      std::vector<CrossbarFrontier> curves;
      for (size_t ti = 0; ti < grid.size(); ++ti) {
        const Problem gprob{&grid[ti].model.graph, &grid[ti].costs, Objective::kLatency, std::nullopt};
        auto g = SolveCrossbarFrontier(gprob, pu, so);
        if (!g.ok()) return 1;
        curves.push_back(std::move(*g));
      }
      const double curves_s = Since(t0);
      std::string counts;
      for (size_t ti = 0; ti < curves.size(); ++ti) {
        counts += (ti ? "/" : "") + std::to_string(curves[ti].steps.size());
        agree = agree && curves[ti].complete;
        int ci = 0;
        for (int64_t c : {25, 50, 100, 200}) {
          const auto on = curves[ti].MakespanAt(c);
          const double want = grid_makespans[ti * 4 + ci++];
          if (!on || std::fabs(*on - want) > 1e-6 * std::max(1.0, *on)) agree = false;
        }
      }
      const FrontierStep& last = f->steps.back();
      std::printf("| %s | %s | %s | %d | %lld | %zu | %lld | %.2f | %.3f | %.3f | %.3f | %.3f | %s | %s |\n",
                  name.c_str(), platform.c_str(), mvm.c_str(), pp->model.graph.size(),
                  static_cast<long long>(f->crossbars_for_all), f->steps.size(), static_cast<long long>(last.crossbars),
                  cpu_only / last.makespan_us, frontier_s, separate_s, grid_s, curves_s, counts.c_str(),
                  agree ? "yes" : "NO");
      std::fflush(stdout);
      if (!agree) ++bad;
    }
  }
  return bad == 0 ? 0 : 1;
}
