#!/usr/bin/env bash
# The main job on the default model: partition ResNet-18 between the host CPU
# (measured with ONNX Runtime, cached in .cache/hetplan) and the CIM
# accelerator of the klein-arm platform, then check the schedule.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MODEL="$1"; shift || true
mkdir -p out
build/hetplan graph "$MODEL" --json out/resnet18.graph.json --dot out/resnet18.dot | head -6
echo
build/hetplan partition "$MODEL" --platform klein-arm --out out/resnet18.klein-arm.json \
  --csv out/resnet18.klein-arm.csv --trace out/resnet18.klein-arm.trace.json "$@"
build/hetplan validate out/resnet18.klein-arm.json
echo "open out/resnet18.klein-arm.trace.json in https://ui.perfetto.dev to see the schedule"
