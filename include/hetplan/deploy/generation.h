// A generation plan (`partition --llm`, docs/generation.md) split and run:
// `hetplan split GEN.json --out DIR` writes each phase's sub-models
// (DIR/prefill/, DIR/decode/, each a split that runs at any prompt and past
// length) and DIR/generation.json; `hetplan run DIR --generate N` runs the
// generation loop through them (the prefill, then N decode steps, each
// step's presents fed back as the next past, greedy tokens), times it
// against the plan and checks the token ids against the unsplit model's own
// loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/deploy/split.h"
#include "hetplan/util/status.h"

namespace hetplan {

// The generation file's format tag (app/generation.h writes it).
inline constexpr const char* kGenerationFormat = "hetplan-generation";
// DIR/generation.json of a split generation plan.
inline constexpr const char* kGenerationSplitFormat = "hetplan-generation-split";
inline constexpr const char* kGenerationSplitFile = "generation.json";

struct GenerationSplit {
  SplitResult prefill, decode;  // as written to DIR/prefill and DIR/decode
  nlohmann::json index;         // DIR/generation.json
};

// Reads the generation file and its two phase schedules, splits each phase
// with SplitOptions::dynamic_shapes and writes DIR/prefill/, DIR/decode/ and
// DIR/generation.json (the decoder's interface, the plan's TTFT and TPOT per
// step, the profile's prediction of the unsplit model for the drift, and
// what `hetplan validate` finds in the files). Errors name the file.
Result<GenerationSplit> SplitGenerationFile(const std::string& path, const std::string& out_dir,
                                            const SplitOptions& options = {});

// `hetplan export SOURCE --format ort-genai --out OUT`: ONNX Runtime GenAI's
// form of a generation plan. SOURCE is a generation file (split into OUT
// first) or a folder `hetplan split` wrote from one (its phases copied into
// OUT). OUT/genai_config.json is a "decoder-pipeline": one stage per
// segment in the manifests' order, the prefill's with run_on_prompt only,
// the decode's with run_on_token_gen only, each with its PU's threads and
// execution provider; greedy search to the plan's P + N + 1 tokens, without
// share-buffer (the past grows by concatenation); eos and pad are the
// vocabulary's last id (GenAI wants them within it: a generation that
// reaches that token stops there). OUT stays a split `hetplan run OUT
// --generate N` runs.
struct OrtGenaiExport {
  std::string out_dir;
  nlohmann::json config;  // genai_config.json
  int stages = 0;
  std::vector<std::string> notes;  // stages on PUs no execution provider runs (they run on the CPU)
};
Result<OrtGenaiExport> ExportOrtGenai(const std::string& source, const std::string& out_dir);

struct GenerateOptions {
  int new_tokens = 16;  // decode steps after the prefill (P + N within the model's positions)
  int repeats = 3;      // whole generations timed; medians
  int warmup = 1;       // untimed generations first
  bool reference = true;  // also run the unsplit model's loop: token ids and its time (the drift)
  std::string model_path;  // the unsplit model; empty = the split's model.file
  uint64_t seed = 0x6865747061;  // the prompt's token ids, uniform over the vocabulary
  bool pu_threads = true;  // each PU's segments on its own pinned thread (plans whose PUs all run here)
};

struct GenerateReport {
  std::string dir, model;
  int64_t prompt = 0, new_tokens = 0, vocabulary = 0;
  int repeats = 0, warmup = 0;
  bool measured = true;  // every segment ran on its PU here; else modelled PUs ran functionally (times not compared)
  std::string executor;  // "PU-thread" or "sequential"
  std::vector<int64_t> prompt_ids, tokens;  // the prefill's token, then one per decode step (N + 1)
  std::vector<int64_t> reference_tokens;    // the unsplit model's, when run
  std::optional<bool> tokens_equal;
  int first_mismatch = -1;
  // Measured, medians over the repeats (TPOT over every step of every repeat).
  double ttft_us = 0, tpot_median_us = 0, tpot_p95_us = 0, tpot_first_us = 0, tpot_last_us = 0;
  double decode_us = 0, request_us = 0, tokens_per_s = 0;
  // The plan's, at the run's steps (its TPOT per step; linear beyond its N).
  double predicted_ttft_us = 0, predicted_decode_us = 0, predicted_tokens_per_s = 0;
  std::optional<double> tokens_per_s_error;  // measured / predicted − 1
  // The unsplit model's loop, and the profile's prediction of it: the
  // machine's drift since profiling, divided out of the error.
  std::optional<double> unsplit_ttft_us, unsplit_decode_us, predicted_unsplit_decode_us, drift;
  std::optional<double> tokens_per_s_error_after_drift;
  std::vector<std::string> notes;
};

// Errors (one line): DIR without generation.json, a manifest that is not a
// dynamic split, P + N beyond the positions, an input the loop cannot feed.
Result<GenerateReport> RunGeneration(const std::string& dir, const GenerateOptions& options);
nlohmann::json GenerateReportToJson(const GenerateReport& r);

}  // namespace hetplan
