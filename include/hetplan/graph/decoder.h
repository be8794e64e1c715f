// A decoder-only language model's interface, as exporters write it
// (docs/generation.md): the token input, the attention mask and position
// ids, and one KV-cache pair per layer (past_key_values.N.key/value in,
// present.N.key/value out). `--llm` reads it to give every input its shape
// at the prefill (P tokens, an empty past) and at a decode step (one token, a
// past of L), and to refuse, in one line, a model that does not generate.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/util/status.h"

namespace hetplan {

struct KvLayer {
  int layer = 0;
  std::string past_key, past_value, present_key, present_value;
};

struct DecoderSignature {
  std::string path;
  std::string tokens;          // input_ids (int64 [batch, sequence]) or inputs_embeds ([batch, sequence, hidden])
  int64_t hidden = 0;          // inputs_embeds' last dim; 0 for input_ids
  std::string attention_mask;  // [batch, past + sequence]; empty when absent
  std::string position_ids;    // [batch, sequence]; empty when absent (the rotary is inside the attention)
  std::vector<KvLayer> layers;  // by layer number
  int64_t kv_heads = 0, head_dim = 0;
  int32_t kv_elem_type = 0;  // the past's element type (onnx::TensorProto::DataType)
  // The positions the rotary table holds (its initializer's first dim), and
  // that initializer's name; nullopt when no table is found.
  std::optional<int64_t> max_positions;
  std::string position_table;

  // Every input's shape for one step of batch 1: `sequence` new tokens after
  // a past of `past` (prefill: past 0).
  std::map<std::string, std::vector<int64_t>> Shapes(int64_t sequence, int64_t past) const;
  // The KV cache's bytes at `length` tokens: every layer's key and value.
  int64_t KvBytes(int64_t length) const;
};

// Reads the model's inputs, outputs and rotary table. Errors (one line,
// naming the file and what is missing): no past_key_values inputs (an encoder,
// or a decoder exported without its cache), a past without its present or a
// key without its value, a past whose heads or head size differ from its
// present's or another layer's, no token input.
Result<DecoderSignature> ReadDecoderSignature(const std::string& path);

}  // namespace hetplan
