#!/usr/bin/env bash
# Creates third_party/models-venv: a Python virtual environment with ONNX 1.22
# (and its dependencies) from PyPI, pinned by version and hash in
# scripts/models-requirements.txt. The tests write their opset 18+ models with
# it (tests/exporters/make_models_2026.py); Debian's onnx 1.12 stops at opset
# 17. Reused while the requirements file is unchanged.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQ="$ROOT/scripts/models-requirements.txt"
VENV="$ROOT/third_party/models-venv"
STAMP="$VENV/.installed-$(sha256sum "$REQ" | cut -c1-16)"
[[ -f "$STAMP" ]] && exit 0
start=$SECONDS
echo "[setup] creating $VENV (onnx 1.22, onnxscript 0.7 and onnxruntime 1.29 from PyPI, pinned)"
rm -rf "$VENV"
/usr/bin/python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check --no-deps --only-binary :all: --require-hashes -r "$REQ" ||
  { rm -rf "$VENV"; echo "[setup] error: installing $REQ into $VENV failed (above)" >&2; exit 1; }
"$VENV/bin/python" -c "import onnx, numpy, onnxscript, onnxruntime.quantization" ||
  { rm -rf "$VENV"; echo "[setup] error: $VENV cannot import onnx" >&2; exit 1; }
touch "$STAMP"
echo "[setup] $VENV ready ($((SECONDS - start)) s)"
