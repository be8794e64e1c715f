#!/usr/bin/env bash
# Creates third_party/models-venv: a Python virtual environment with ONNX 1.22
# (and its dependencies) from PyPI, pinned by version and hash in
# scripts/models-requirements.txt. The tests write their opset 18+ models with
# it (tests/exporters/make_models_2026.py); Debian's onnx 1.12 stops at opset
# 17. Reused while the requirements file is unchanged.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec "$ROOT/scripts/setup_venv.sh" models-venv "$ROOT/scripts/models-requirements.txt" \
  "onnx, numpy, onnxscript, onnxruntime.quantization" "onnx 1.22, onnxscript 0.7 and onnxruntime 1.29"
