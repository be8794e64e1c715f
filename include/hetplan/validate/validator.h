// The independent schedule validator. It reads only the schedule file
// (docs/schedule-format.md) and checks every constraint from it: supported
// device, finish − start = cost × slowdown, precedence with transfers, no
// overlap on serial PUs, capacity on spatial PUs, a spatial PU's shared ADC
// pool never over-held at any time, on a reprogramming PU every operator's
// physical crossbars (none shared while both hold them), every write's time
// and energy and the endurance budget, makespan = latest finish,
// energy = Σ (cost × slowdown × power + the operator's op_energy_uj on its
// device). It shares no code with the solvers.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/util/status.h"

namespace hetplan {

struct ValidationReport {
  std::vector<std::string> violations;  // one line each, naming operators
  int operators = 0;
  int edges = 0;
  bool ok() const { return violations.empty(); }
};

// The schedule file's format version (docs/schedule-format.md): 2 added
// solver.termination, the mapping and requests blocks, and names solvers by
// their registered method. This validator, `split` and `run` read versions 1
// and 2 (the checks are the same).
inline constexpr int kScheduleFormatVersion = 3;

// Relative tolerance on times (µs): |a − b| ≤ tol · max(1, |a|, |b|).
inline constexpr double kValidateTolerance = 1e-6;

// Structural problems (missing keys, wrong types) are violations too, never crashes.
ValidationReport ValidateScheduleJson(const nlohmann::json& schedule);
// A schedule file, or a generation file (`partition --llm`,
// docs/generation.md) with its two phases' schedule files beside it.
Result<ValidationReport> ValidateScheduleFile(const std::string& path);

// A generation file with its phases' schedule files: each phase as any
// schedule, then what joins them: the same model and operators; TTFT the
// prefill's makespan, one TPOT per decode step summing to decode_us,
// request_us and tokens/s from them, the decode plan at most the mean step
// (a step's time is convex in the past); the weights either phase keeps on a
// spatial device within its crossbars together, as metrics.crossbars says;
// the bound at most the planned TTFT + N × TPOT, and equal to it when the
// status is optimal.
ValidationReport ValidateGenerationJson(const nlohmann::json& generation, const nlohmann::json& prefill,
                                        const nlohmann::json& decode);
// The same, the phases read from the files the generation file names
// (relative to its folder); `path` names it in errors.
Result<ValidationReport> ValidateGenerationFile(const nlohmann::json& generation, const std::string& path);

}  // namespace hetplan
