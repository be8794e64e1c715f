// What the grid benchmarks (formulations, irregular, peers) share: their
// common flags (--models, --platforms, --crossbars, --mvm, --zoo, --runs,
// --warmup) and the loop over model × platform × C crossbars × T_mvm that
// prepares each point's problem, host costs from the ONNX Runtime profiler
// through the profile cache (.cache/hetplan; its key includes --runs and
// --warmup); the frontier and ILP grid benchmarks use its Split. Header-only:
// each bench/*_benchmark.cc is its own executable.
#pragma once

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "hetplan/app/plan.h"

namespace bench {

// A comma list → its items, empty ones dropped ("a,,b," → {"a", "b"}).
inline std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string t; std::getline(ss, t, ',');) {
    if (!t.empty()) out.push_back(t);
  }
  return out;
}

// The grid's flags; `models` has each benchmark's own default.
struct Grid {
  std::string zoo = HETPLAN_ZOO_DIR;
  std::string models;
  std::string platforms = "klein-arm,klein-x86";
  std::string crossbars = "25,50,100,200";
  std::string mvm = "50,100,500,1000";
  int runs = 20, warmup = 5;

  // Takes one of the seven flags above; false for any other flag (the
  // benchmark's own, or an unknown one), which it leaves to the caller.
  bool Parse(const std::string& flag, const std::string& value) {
    if (flag == "--models") {
      models = value;
    } else if (flag == "--platforms") {
      platforms = value;
    } else if (flag == "--crossbars") {
      crossbars = value;
    } else if (flag == "--mvm") {
      mvm = value;
    } else if (flag == "--zoo") {
      zoo = value;
    } else if (flag == "--runs") {
      runs = std::stoi(value);
    } else if (flag == "--warmup") {
      warmup = std::stoi(value);
    } else {
      return false;
    }
    return true;
  }
};

// One point of the grid, as its flags spell it.
struct GridPoint {
  std::string model, platform, crossbars, mvm_ns;
};

// For each model, platform, C and T_mvm (in that nesting), prepares the
// problem (zoo/<model>.onnx with cim.crossbars=C and cim.mvm_latency_ns=T) and
// calls fn(const GridPoint&, hetplan::PreparedProblem&); fn returns nothing (a
// `return` in it goes on with the next point). A preparation error is printed
// on stderr and ends the loop: 1, else 0.
template <class Fn>
int ForEachGridPoint(const Grid& g, Fn&& fn) {
  for (const std::string& model : Split(g.models)) {
    for (const std::string& platform : Split(g.platforms)) {
      for (const std::string& c : Split(g.crossbars)) {
        for (const std::string& t : Split(g.mvm)) {
          hetplan::PlanInputs in;
          in.model_path = g.zoo + "/" + model + ".onnx";
          in.platform = platform;
          in.overrides = {"cim.crossbars=" + c, "cim.mvm_latency_ns=" + t};
          in.costs.profile.cache_dir = ".cache/hetplan";
          in.costs.profile.runs = g.runs;
          in.costs.profile.warmup = g.warmup;
          auto pp = hetplan::PrepareProblem(in);
          if (!pp.ok()) {
            std::fprintf(stderr, "%s\n", pp.status().message().c_str());
            return 1;
          }
          fn(GridPoint{model, platform, c, t}, *pp);
        }
      }
    }
  }
  return 0;
}

}  // namespace bench
