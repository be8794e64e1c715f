#!/usr/bin/env bash
# Installs what is missing, builds the hetplan command in build/ (only it:
# the tests, benchmarks and the Python module are ./test.sh's), generates the
# default model (ResNet-18) if absent and runs the main job on it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
./scripts/setup.sh --main-job
MODEL=build/models/resnet18.onnx
# The default model's export (torch, about 20 s) runs beside the compiles; it writes the file atomically.
export_pid=""
if [[ ! -f "$MODEL" ]]; then
  mkdir -p build/models
  /usr/bin/python3 models/export.py --out-dir build/models --models resnet18 >build/models/export.log 2>&1 &
  export_pid=$!
fi
./scripts/build.sh --target hetplan
if [[ -n "$export_pid" ]] && ! wait "$export_pid"; then
  tail -20 build/models/export.log >&2
  echo "run.sh: exporting ResNet-18 failed (the lines above are the end of build/models/export.log)" >&2
  exit 1
fi
exec ./scripts/main_job.sh "$MODEL" "$@"
