#!/usr/bin/env bash
# Creates third_party/builder-venv: ONNX Runtime GenAI's model builder with
# transformers and PyPI's torch (its CUDA wheels included: about 6 GB, a
# minute or two), pinned by version and hash in scripts/builder-requirements.txt.
# Only the `builder` CTest label needs it (docs/testing.md); the default setup
# does not run this.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec "$ROOT/scripts/setup_venv.sh" builder-venv "$ROOT/scripts/builder-requirements.txt" \
  "torch, transformers, tokenizers, onnxruntime_genai.models.builder" \
  "onnxruntime-genai 0.18's builder, transformers and torch 2.15"
