// The planning call of the Python bindings, in plain C++ (no Python API), so
// that the binding and the call-overhead benchmark run exactly the same code:
// a model and a platform already loaded, the cost sources of app/costs.h, and
// the application layer's Plan() (app/plan.h), which the CLI calls too.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "hetplan/app/costs.h"
#include "hetplan/app/plan.h"
#include "hetplan/cost/cost_table.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/platform/platform.h"
#include "hetplan/util/status.h"

namespace hetplan::python {

// A loaded model as the Python objects share it, with the cost tables measured
// or read for it so far: a notebook that plans one model many times profiles
// it once per PU setting (the profile cache on disk makes later sessions fast;
// this makes later calls in one session skip reading it). `mu` guards `cache`
// (TableCache is not thread-safe); the model itself is never modified.
struct ModelRef {
  LoadedModel model;
  bool from_file = false;  // model.path names a file (not bytes' label)
  mutable std::recursive_mutex mu;  // recursive: a progress callback may plan the same model
  mutable TableCache cache;
};

// Where the costs of one request come from (CostInputs without the pointers).
struct CostChoice {
  std::shared_ptr<CostTable> table;  // costs= a table in memory
  std::string table_label = "cost table";
  std::string path;  // costs= a file
};

// The pointers are shared with Python objects, which never modify what they
// point to (const is left off because pybind11 holders cannot be const).
struct PlanCall {
  std::shared_ptr<ModelRef> model;
  std::shared_ptr<ModelRef> second;  // two-request methods; null: the same model twice
  std::shared_ptr<Platform> platform;
  CostChoice costs, second_costs;
  ProfileOptions profile;  // warmup, runs, cache_dir ("" = no cache)
  bool charge_boundary = false;  // boundary_cost="fitted" (CostInputs::charge_boundary)
  PlanSpec spec;
};

struct PlanRun {
  PlanOutput out;
  PreparedCosts costs;         // of the first request: notes, run notes, the cost model
  PreparedCosts second_costs;  // two models only
  std::shared_ptr<ModelRef> model, second;
  std::shared_ptr<Platform> platform;
};

// Called while a PU is profiled (pu, done, total), from the calling thread.
using ProfileProgress = std::function<void(const std::string& pu, int done, int total)>;

// Resolves the costs of each request (profiling through the profile cache, on
// disk and in the model's memory), then plans with Plan(); `interrupt` becomes
// SolveOptions::interrupt. Errors are the library's, unchanged.
Result<PlanRun> RunPlan(const PlanCall& call, const std::atomic<bool>* interrupt, const ProfileProgress& progress);

}  // namespace hetplan::python
