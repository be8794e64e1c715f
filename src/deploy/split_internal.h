// What the split sources share (split.cc, split_requests.cc). Internal to
// the deploy module.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/deploy/split.h"
#include "hetplan/plan/plan_file.h"

namespace hetplan::deploy_internal {

// --- splitting ------------------------------------------------------------------

// SplitModel for a schedule of one request; `extra_cuts` (one flag per
// operator, or empty) open segments on top of TimedCuts.
Result<SplitResult> SplitOneRequest(const LoadedModel& model, const PlanFile& schedule, int violations,
                                    const std::string& schedule_label, const SplitOptions& options,
                                    const std::vector<bool>& extra_cuts);

// SplitModel for a schedule of two requests of `model` (split_requests.cc).
Result<SplitResult> SplitRequests(const LoadedModel& model, const PlanFile& schedule, int violations,
                                  const std::string& schedule_label, const SplitOptions& options);

}  // namespace hetplan::deploy_internal
