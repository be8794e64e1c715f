// What the validator's sources share (validator.cc reads and checks the
// schedule; recompute.cc recomputes what the file derives from its inputs).
// Internal to the validate module.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hetplan::validate_internal {

// |a − b| within the validator's relative tolerance (kValidateTolerance).
bool Near(double a, double b);
// The number at `key` of object `j` (finite), or nullopt.
std::optional<double> Number(const nlohmann::json& j, const char* key);
// The string at `key` of object `j`, or "".
std::string Text(const nlohmann::json& j, const char* key);
// A name as quoted in a violation: cut to 80 characters, line breaks blanked.
std::string Short(const std::string& name);

// devices[] against the platform block the file states: every device a PU
// of it, of its kind and execution, a spatial one with its crossbars.
void CheckDevicesAgainstPlatform(const nlohmann::json& s, std::vector<std::string>& out);
// Every cross-device edge's transfer_us recomputed from its bytes (or
// elements × the link's or a CIM end's element size), the link's bandwidth
// and latency, and the receiving device's boundary_us; edges between devices
// with no link in the platform block (measured hand-offs) are not.
// `device_of`: operator id → device.
void CheckTransfers(const nlohmann::json& s, const std::map<int64_t, std::string>& device_of,
                    std::vector<std::string>& out);
// The operators listed against model.operators and each requests[].operators.
// `per_request`: request → operators listed.
void CheckCounts(const nlohmann::json& s, const std::map<int64_t, int64_t>& per_request,
                 std::vector<std::string>& out);

// Every operator on a CIM the CIM model prices: its weight block present,
// its type or product in the PU's supported_ops, and its crossbars, shared
// ADCs and write rows recomputed from the weight and the PU's geometry in
// the platform block (cost/cim_model.cc's layout).
void CheckCimLayouts(const nlohmann::json& s, std::vector<std::string>& out);

// What the file reports about itself: speedup = baselines.cpu_only_us ÷ the
// makespan (a stream's: the II); cpu_only_us = Σ every operator's cost on the
// one serial CPU; pipelined_ii_us = the busiest resource's load per input;
// a stream's serial devices carry their operators and boundaries within the
// II; inputs_per_s only with an II.
void CheckSummary(const nlohmann::json& s, std::vector<std::string>& out);

}  // namespace hetplan::validate_internal
