#!/usr/bin/env bash
# Configures and builds hetplan in build/ (or $HETPLAN_BUILD_DIR) with Ninja.
# Arguments go to `cmake --build` (./test.sh: `--target all zoo`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR="${HETPLAN_BUILD_DIR:-build}"
EXTRA=()
[[ "${CI:-}" == "true" || "${HETPLAN_WERROR:-0}" == "1" ]] && EXTRA+=(-DHETPLAN_WERROR=ON)
[[ "${HETPLAN_SANITIZE:-0}" == "1" ]] && EXTRA+=(-DHETPLAN_SANITIZE=ON)
if [[ ! -f "$BUILD_DIR/build.ninja" ]] || ((${#EXTRA[@]})); then
  cmake -S . -B "$BUILD_DIR" -G Ninja "${EXTRA[@]+"${EXTRA[@]}"}" >/dev/null
fi
cmake --build "$BUILD_DIR" -j"$(nproc)" "$@"
