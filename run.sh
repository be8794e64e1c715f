#!/usr/bin/env bash
# Installs what is missing, builds the hetplan command in build/ (only it:
# the tests, benchmarks and the Python module are ./test.sh's), generates the
# default model (ResNet-18) if absent and runs the main job on it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
./scripts/setup.sh --main-job
./scripts/build.sh --target hetplan
MODEL=build/models/resnet18.onnx
[[ -f "$MODEL" ]] || /usr/bin/python3 models/export.py --out-dir build/models --models resnet18
exec ./scripts/main_job.sh "$MODEL" "$@"
