#!/usr/bin/env bash
# Installs what is missing, builds everything (the model zoo included) and
# runs the whole test suite through CTest (tests labelled `slow` excluded).
#
#   ./test.sh [CTEST ARGS]              build/ ($HETPLAN_BUILD_DIR), every test but `slow`
#   HETPLAN_SANITIZE=1 ./test.sh [ARGS] only the fast unit tests, built with ASan + UBSan in build-asan/
#   CI=true ./test.sh                   the normal run, then the sanitizer run
#
# The sanitizer run builds only the test modules in $HETPLAN_SANITIZE_MODULES
# (default: util graph platform validate) and the libraries they link (the CLI
# too when one of them runs it), in $HETPLAN_ASAN_BUILD_DIR
# (default build-asan), sharing the model zoo of the normal build. See docs/testing.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
./scripts/setup.sh

BUILD_DIR="${HETPLAN_BUILD_DIR:-build}"
SANITIZE_MODULES="${HETPLAN_SANITIZE_MODULES:-util graph platform validate}"

run_sanitized() {
  local dir="${HETPLAN_ASAN_BUILD_DIR:-build-asan}"
  local start=$SECONDS
  local werror=OFF
  [[ "${CI:-}" == "true" || "${HETPLAN_WERROR:-0}" == "1" ]] && werror=ON
  cmake -S . -B "$dir" -G Ninja -DHETPLAN_SANITIZE=ON -DHETPLAN_BUILD_BENCH=OFF -DHETPLAN_WERROR="$werror" \
    -DHETPLAN_ZOO_DIR="$PWD/$BUILD_DIR/models" >/dev/null
  # Only the test binaries: the ones whose tests run the CLI depend on it
  # (tests/CMakeLists.txt), so `hetplan` is built only when one of them is
  # asked for; the default four need neither it nor the modules above solve.
  local targets=() labels=()
  for m in $SANITIZE_MODULES; do
    targets+=("hetplan_${m}_test")
    labels+=("$m")
  done
  echo "[test] ASan + UBSan build of ${targets[*]} in $dir"
  cmake --build "$dir" -j"$(nproc)" --target "${targets[@]}"
  # The zoo is shared with the normal build; export it only when it is missing
  # (building `zoo` in a fresh build folder would re-export it every time).
  if ! compgen -G "$BUILD_DIR/models/*.onnx" >/dev/null; then
    cmake --build "$dir" --target zoo
  fi
  local regex
  regex="^($(IFS='|'; echo "${labels[*]}"))\$"
  # Leaks and undefined behaviour fail the test that caused them.
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
    ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" -L "$regex" -LE slow "$@"
  echo "[test] sanitizer run (build + tests) took $((SECONDS - start)) s"
}

if [[ "${HETPLAN_SANITIZE:-0}" == "1" ]]; then
  run_sanitized "$@"
  exit 0
fi

# The zoo in the same Ninja run: the FP32 export (~35 s of torch) then runs
# beside the first compiles instead of after the last.
HETPLAN_SANITIZE=0 ./scripts/build.sh --target all zoo
# Skips are counted and named at the end, so that a suite that passes by
# skipping cannot pass unseen.
log="$BUILD_DIR/ctest.log"
rc=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)" -LE slow "$@" 2>&1 | tee "$log" || rc=$?
skipped=$(grep -c '(Skipped)$' "$log" || true)
echo "[test] $skipped test(s) skipped$( ((skipped > 0)) && echo ': '"$(grep '(Skipped)$' "$log" | sed -E 's/^[[:space:]]*[0-9]+ - //; s/ +#.*//; s/ \(Skipped\)$//' | tr '\n' ' ')")"
((rc == 0)) || exit "$rc"
if [[ "${CI:-}" == "true" ]]; then
  run_sanitized
fi
