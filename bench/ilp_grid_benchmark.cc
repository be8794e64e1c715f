// The CIM paper's grid: for each model, C ∈ {25,50,100,200} crossbars and
// T_mvm ∈ {50,100,500,1000} ns on a Klein platform, solve the ILP and print
// operators, variables, constraints, solve seconds, gap, status and speedup
// (the inputs of the paper's Table I and Fig. 3–4). Host costs are measured
// with ONNX Runtime once per model (profile cache). Every schedule passes the
// independent validator.
//
//   build/bench/ilp_grid_benchmark [--platform klein-arm] [--time-limit 60]
//       [--formulation paper] [--threads 0] [--runs 200] [--models resnet18,...]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_support.h"
#include "hetplan/app/plan.h"

using namespace hetplan;

int main(int argc, char** argv) {
  std::string platform = "klein-arm", formulation = "paper", models = "resnet18,resnet50,mobilenetv2,yolov5n";
  std::string fusion = "none", zoo = HETPLAN_ZOO_DIR, crossbars = "25,50,100,200", mvm = "50,100,500,1000";
  double time_limit = 60;
  int threads = 0, runs = 200, warmup = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--platform") platform = v;
    else if (k == "--formulation") formulation = v;
    else if (k == "--models") models = v;
    else if (k == "--fusion") fusion = v;
    else if (k == "--zoo") zoo = v;
    else if (k == "--time-limit") time_limit = std::stod(v);
    else if (k == "--threads") threads = std::stoi(v);
    else if (k == "--runs") runs = std::stoi(v);
    else if (k == "--warmup") warmup = std::stoi(v);
    else if (k == "--crossbars") crossbars = v;
    else if (k == "--mvm") mvm = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  std::printf("| model | C | T_mvm ns | operators | variables | constraints | status | solve s | gap %% | on CIM | speedup |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n");
  for (const std::string& name : bench::Split(models)) {
    for (const std::string& c : bench::Split(crossbars)) {
      for (const std::string& t : bench::Split(mvm)) {
        PlanInputs in;
        in.model_path = zoo + "/" + name + ".onnx";
        auto fl = ParseFusionLevel(fusion);
        if (!fl.ok()) return 2;
        in.import.fusion = *fl;
        in.platform = platform;
        in.overrides = {"cim.crossbars=" + c, "cim.mvm_latency_ns=" + t};
        in.costs.profile.cache_dir = ".cache/hetplan";
        in.costs.profile.runs = runs;
        in.costs.profile.warmup = warmup;
        auto pp = PrepareProblem(in);
        if (!pp.ok()) {
          std::fprintf(stderr, "%s\n", pp.status().message().c_str());
          return 1;
        }
        SolveOptions so;
        so.time_limit_s = time_limit;
        so.threads = threads;
        auto plan = PlanPartition(*pp, formulation == "paper" ? "mip" : "exact", Objective::kLatency, std::nullopt, so);
        if (!plan.ok()) {
          std::fprintf(stderr, "%s\n", plan.status().message().c_str());
          return 1;
        }
        const SolveResult& r = plan->result;
        int on_cim = 0;
        if (r.schedule) {
          for (const auto& op : r.schedule->ops) on_cim += pp->costs.pu(op.device).spatial ? 1 : 0;
        }
        double speedup = r.schedule ? plan->baselines.at("cpu_only_us") / r.schedule->makespan_us : 0;
        std::printf("| %s | %s | %s | %d | %d | %d | %s | %.2f | %.2f | %d | %.2f |\n", name.c_str(), c.c_str(),
                    t.c_str(), pp->model.graph.size(), r.mip ? r.mip->variables : 0, r.mip ? r.mip->constraints : 0,
                    ToString(r.status).c_str(),
                    r.seconds, 100.0 * r.gap, on_cim, speedup);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
