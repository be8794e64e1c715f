// What split.cc and split_requests.cc share. Internal to the deploy module.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/deploy/split.h"

namespace hetplan::deploy_internal {

// SplitModel for a schedule of one request; `extra_cuts` (one flag per
// operator, or empty) open segments on top of TimedCuts.
Result<SplitResult> SplitOneRequest(const LoadedModel& model, const nlohmann::json& schedule,
                                    const std::string& schedule_label, const SplitOptions& options,
                                    const std::vector<bool>& extra_cuts);

// SplitModel for a schedule of two requests of `model` (split_requests.cc).
Result<SplitResult> SplitRequests(const LoadedModel& model, const nlohmann::json& schedule,
                                  const std::string& schedule_label, const SplitOptions& options);

}  // namespace hetplan::deploy_internal
