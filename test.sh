#!/usr/bin/env bash
# Installs what is missing, builds everything (the model zoo included) and
# runs the whole test suite through CTest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
./scripts/setup.sh
./scripts/build.sh
BUILD_DIR="${HETPLAN_BUILD_DIR:-build}"
cmake --build "$BUILD_DIR" --target zoo
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)" -LE slow "$@"
