#!/usr/bin/env bash
# The main job on the default model: the operator graph summary.
# (Becomes the klein-arm partition once the ILP lands.)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MODEL="$1"; shift || true
mkdir -p out
exec build/hetplan graph "$MODEL" --json out/resnet18.graph.json --dot out/resnet18.dot "$@"
