// What the generation loop (generate.cc) and the ONNX Runtime GenAI export
// (export_genai.cc) read of a split generation plan. Internal to the deploy
// module.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/deploy/manifest.h"
#include "hetplan/util/status.h"

namespace hetplan::deploy_internal {

// DIR/generation.json (SplitGenerationFile writes it).
struct GenerationIndex {
  std::string path, model_file, model_sha256;
  int64_t prompt = 0, planned_new = 0;
  std::string tokens, mask, positions, logits;
  bool embeddings = false;
  std::map<std::string, std::string> past_of_present;  // present → the past it becomes
  std::map<std::string, std::vector<int64_t>> empty_past;  // each past at length 0: [batch, kv heads, 0, head]
  int32_t kv_elem_type = 0;
  std::optional<int64_t> max_positions;
  double ttft_us = 0;
  std::vector<double> tpot_us;
  // The profile's unsplit model on the plan's best single PU (when measured
  // here): its prefill and its N planned decode steps; 0 when unknown.
  double unsplit_ttft_us = 0, unsplit_decode_us = 0;
};

// Errors (one line): no generation.json in `dir`, another format, a key
// missing or of the wrong type, no decode steps.
Result<GenerationIndex> ReadGenerationIndex(const std::string& dir);

// The vocabulary: the logits' last dim among `m`'s outputs; 0 when unknown.
int64_t Vocabulary(const GenerationIndex& x, const Manifest& m);

}  // namespace hetplan::deploy_internal
