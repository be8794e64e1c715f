#!/usr/bin/env bash
# Creates third_party/genai-venv: ONNX Runtime GenAI 0.18 and the ONNX
# Runtime Python package it needs, from PyPI, pinned by version and hash in
# scripts/genai-requirements.txt. The tests load hetplan's ort-genai exports
# with it (tests/llm/genai_generate.py).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec "$ROOT/scripts/setup_venv.sh" genai-venv "$ROOT/scripts/genai-requirements.txt" onnxruntime_genai \
  "onnxruntime-genai 0.18 and onnxruntime 1.31"
