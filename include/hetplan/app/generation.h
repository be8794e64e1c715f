// LLM generation planned as one request (`hetplan partition MODEL --llm
// prompt=P,new=N`, docs/generation.md): the prefill at P tokens and the N
// decode steps (past P … P+N−1) of one decoder file, each phase with its own
// placement on the serial PUs, the spatial PUs' weights shared by both
// phases (a weight either phase keeps on a crossbar holds it for the whole
// request), judged by TTFT, TPOT, tokens/s and energy per token.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/app/plan.h"
#include "hetplan/graph/decoder.h"
#include "hetplan/validate/validator.h"

namespace hetplan {

// What the request is planned for (docs/generation.md, "Objectives"):
// request latency (TTFT + N × TPOT); decode tokens/s (N × TPOT, then TTFT
// at that TPOT); TTFT under a TPOT bound.
enum class GenerationObjective { kRequestLatency, kTokensPerS, kTtft };
std::string ToString(GenerationObjective o);  // request_latency, tokens_per_s, ttft

struct GenerationSpec {
  int64_t prompt = 0;      // P: the prompt's tokens, one prefill
  int64_t new_tokens = 0;  // N: decode steps after it
  GenerationObjective objective = GenerationObjective::kRequestLatency;
  // The decode plan's TPOT (at the mean past) at most this; needed by kTtft.
  std::optional<double> max_tpot_us;
};

// "prompt=P,new=N[,objective=latency|tokens|ttft][,max_tpot=US]" (P, N
// whole numbers ≥ 1, US > 0, any order; objective=ttft needs max_tpot).
Result<GenerationSpec> ParseGenerationSpec(std::string_view text);

// Rewrites on the reprogramming PU (docs/generation.md, "Rewrites"): the
// operators each phase writes into free crossbars every time it runs, and how
// long the free crossbars last. The platform's lifetime_inferences counts
// requests; each cell of the free crossbars takes, wear-levelled, Σ crossbars
// written per request (the prefill's + N × a decode step's) / free writes a
// request.
struct GenerationRewrites {
  std::string pu;
  int64_t prefill_operators = 0, prefill_crossbars = 0;  // written once a request
  int64_t decode_operators = 0, decode_crossbars = 0;    // written every decode step
  int64_t writes_per_request = 0;                        // crossbar writes: prefill + N × decode
  int64_t free_crossbars = 0;                            // the PU's crossbars no resident weight holds
  double endurance_writes = 0, lifetime_requests = 0;
  // endurance × free / writes per request, and those requests at the
  // planned request time; null without rewrites (nothing wears).
  std::optional<double> requests_until_worn, endurance_hours;
};

struct GenerationPhase {
  PreparedProblem pp;  // the model at the phase's shapes, with the costs it was planned on
  PlanOutput plan;     // its validated schedule file
};

struct GenerationOutput {
  DecoderSignature signature;
  GenerationSpec spec;
  GenerationPhase prefill;
  // Planned on each operator's cost at the decode's mean past length
  // P + (N−1)/2, linearly interpolated between the costs measured (or
  // modelled) at P and at P+N−1: where an operator's cost is linear in the
  // past, N × that is its cost summed over the N steps.
  GenerationPhase decode;
  std::vector<double> tpot_us;  // the decode plan re-timed at each step's past length, in step order
  double ttft_us = 0, decode_us = 0, request_us = 0, tokens_per_s = 0;
  std::optional<double> request_energy_uj, energy_per_token_uj;  // energy per decode token
  int64_t kv_bytes = 0;  // the cache after the request (P+N tokens)
  // Per spatial PU: the crossbars of the weights either phase keeps there.
  std::map<std::string, int64_t> crossbars;
  std::optional<GenerationRewrites> rewrites;  // with a reprogramming PU
  // The two phases solved together (SolveTwoPhase): "optimal" when proven,
  // else "feasible"; the bound and gap of TTFT + N × TPOT(mean past).
  std::string status, termination;
  double bound_us = 0, gap = 0, solve_seconds = 0;
  std::string coupling;  // the search, in words
  // References, timed like the plan (each decode step re-timed): the best
  // single PU for the whole request, and the better of the two phases' own
  // placements (and orders) kept for both phases; NaN when none fits.
  std::string single_pu, one_placement_from;
  double single_pu_request_us = std::numeric_limits<double>::quiet_NaN();
  double single_pu_ttft_us = std::numeric_limits<double>::quiet_NaN();  // its prefill
  double one_placement_request_us = std::numeric_limits<double>::quiet_NaN();
  // The interpolation checked at the middle past length: the decode plan
  // re-timed on the interpolated costs and on the costs obtained there.
  std::optional<int64_t> check_past;
  double check_interpolated_us = 0, check_obtained_us = 0;
  std::vector<std::string> notes;
};

// Errors (one line each): a model without a KV cache or with mismatched
// pairs, P + N beyond the model's positions, an objective other than
// latency, a reprogramming CIM with a solver other than exact, phases whose
// graphs differ.
Result<GenerationOutput> PlanGeneration(const PlanInputs& in, const GenerationSpec& g, const PlanSpec& spec);

// The generation file (docs/generation.md): the metrics, the solver's status,
// bound and gap, and the two phases' schedule files by name (`prefill_file`,
// `decode_file`, written beside it).
nlohmann::json GenerationToJson(const GenerationOutput& out, const std::string& prefill_file,
                                const std::string& decode_file);

// GenerationToJson once the validator passes it with both phases' schedule
// files (what `partition --llm` writes and Python's plan_generation returns);
// an internal error naming the first violation otherwise. `report`, when
// given, receives the validator's report.
Result<nlohmann::json> CheckedGenerationJson(const GenerationOutput& out, const std::string& prefill_file,
                                             const std::string& decode_file, ValidationReport* report = nullptr);

}  // namespace hetplan
