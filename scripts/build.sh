#!/usr/bin/env bash
# Configures and builds hetplan in build/ (or $HETPLAN_BUILD_DIR) with Ninja.
# Arguments go to `cmake --build` (./test.sh: `--target all zoo`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR="${HETPLAN_BUILD_DIR:-build}"
EXTRA=()
[[ "${CI:-}" == "true" || "${HETPLAN_WERROR:-0}" == "1" ]] && EXTRA+=(-DHETPLAN_WERROR=ON)
[[ "${HETPLAN_SANITIZE:-0}" == "1" ]] && EXTRA+=(-DHETPLAN_SANITIZE=ON)
# Configure again when a dependency the setup builds (third_party/*) was
# installed after the last configure: ./run.sh's setup leaves HiGHS out,
# ./test.sh's adds it, and CMake finds it only when it configures.
stale=0
for stamp in third_party/*/.installed-*; do
  [[ -e "$stamp" && "$stamp" -nt "$BUILD_DIR/CMakeCache.txt" ]] && stale=1
done
if [[ ! -f "$BUILD_DIR/build.ninja" ]] || ((${#EXTRA[@]})) || ((stale)); then
  cmake -S . -B "$BUILD_DIR" -G Ninja "${EXTRA[@]+"${EXTRA[@]}"}" >/dev/null
fi
cmake --build "$BUILD_DIR" -j"$(nproc)" "$@"
