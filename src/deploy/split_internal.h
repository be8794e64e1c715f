// What the split sources share (split.cc, split_schedule.cc,
// split_requests.cc). Internal to the deploy module.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/deploy/split.h"

namespace hetplan::deploy_internal {

// --- the schedule, as split reads it (split_schedule.cc) ----------------------

struct ScheduleDevice {
  std::string name, kind, costs, execution;
  int threads = 0;  // for profiled CPUs: the threads the costs were measured with
  // The boundary cost the planner charged per segment on this PU, inside the
  // transfer_us of every edge into it (devices[].boundary_us; 0 if absent).
  double boundary_us = 0;
  // The platform's ONNX Runtime configuration of a `cost: profile` PU.
  bool configured = false;
  std::string provider = "cpu";
  std::map<std::string, std::string> provider_options;
  std::vector<int> cores;
  // Runs here for real (a CPU, or a PU measured with ONNX Runtime) rather
  // than being charged from the cost model.
  bool executable() const { return kind == "cpu" || costs == "measured"; }
};

struct ScheduleOp {
  std::string name, device;
  int device_index = -1;
  double start_us = 0, finish_us = 0, predicted_us = 0;
};

struct ParsedSchedule {
  std::vector<ScheduleDevice> devices;
  std::vector<ScheduleOp> ops;
  std::vector<std::tuple<int, int, double>> transfers;  // (from, to, µs) where given
  std::string model_name, model_file, model_sha256, fusion;
  double makespan_us = 0;
  // The profile's prediction of the whole model on the plan's CPU (the
  // cpu_only_us baseline) when that CPU's costs were measured here.
  double predicted_unsplit_us = 0;
  std::string solver, solver_status, platform;
  int violations = 0;
};

// The schedule file's PUs, operators and edges as split needs them; errors
// name `label` and the key.
Result<ParsedSchedule> ParseSchedule(const nlohmann::json& s, const std::string& label);

// --- splitting ------------------------------------------------------------------

// SplitModel for a schedule of one request; `extra_cuts` (one flag per
// operator, or empty) open segments on top of TimedCuts.
Result<SplitResult> SplitOneRequest(const LoadedModel& model, const nlohmann::json& schedule,
                                    const std::string& schedule_label, const SplitOptions& options,
                                    const std::vector<bool>& extra_cuts);

// SplitModel for a schedule of two requests of `model` (split_requests.cc).
Result<SplitResult> SplitRequests(const LoadedModel& model, const nlohmann::json& schedule,
                                  const std::string& schedule_label, const SplitOptions& options);

}  // namespace hetplan::deploy_internal
