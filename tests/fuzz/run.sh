#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan) and runs each for
# SECONDS (default 60), one after the other.
#
#   tests/fuzz/run.sh [SECONDS] [TARGET...]      TARGET: onnx platform cost_table validator
#
# Seeds: the bad-input corpus (tests/bad_inputs/make_corpus.py) with its good
# models, tables and schedules, the platform presets, tests/data/*.csv, the
# zoo models without their weights (tests/fuzz/zoo_seeds.py; from
# $HETPLAN_ZOO_DIR, default build/models), and schedule files
# written by build/hetplan ($HETPLAN_BINARY) when it exists. The growing corpus is kept in
# $HETPLAN_FUZZ_WORK (default build-fuzz/work/<target>/corpus) so that a later
# run starts where the last one stopped. Crashes, leaks and timeouts land in
# build-fuzz/work/<target>/crashes/; each one becomes a regression test in
# tests/robustness/ (see docs/testing.md). Stats go to build-fuzz/work/<target>/log.txt.
# Exit status: 1 when any target found a crash.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SECONDS_EACH="${1:-60}"
shift || true
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(onnx platform cost_table validator)
BUILD="${HETPLAN_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
WORK="${HETPLAN_FUZZ_WORK:-$BUILD/work}"
PY=/usr/bin/python3

if ! command -v clang++-14 >/dev/null; then
  echo "[fuzz] clang-14 is missing: apt-get install -y clang-14 libclang-rt-14-dev" >&2
  exit 2
fi
if [[ ! -f "$BUILD/build.ninja" ]]; then
  CC=clang-14 CXX=clang++-14 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DHETPLAN_FUZZ=ON \
    -DHETPLAN_BUILD_TESTS=OFF -DHETPLAN_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
if ! ninja -C "$BUILD" $(printf 'fuzz_%s ' "${TARGETS[@]}") >"$BUILD/ninja.log" 2>&1; then
  tail -n 30 "$BUILD/ninja.log" >&2
  echo "[fuzz] building the fuzz targets failed; the full log is $BUILD/ninja.log" >&2
  exit 2
fi

# Seed corpora, rebuilt every run (cheap); the fuzzer's own corpus is kept.
SEEDS="$BUILD/seeds"
rm -rf "$SEEDS"
mkdir -p "$SEEDS"/{onnx,platform,cost_table,validator}
"$PY" "$ROOT/tests/bad_inputs/make_corpus.py" --out "$SEEDS/bad_inputs" >/dev/null
cp "$SEEDS"/bad_inputs/*.onnx "$SEEDS/onnx/" 2>/dev/null || true
# The zoo models (8-350 MB) with their weights turned into external-data
# references: the whole graph of a real model in 10-210 KiB.
ZOO="${HETPLAN_ZOO_DIR:-$ROOT/build/models}"
if compgen -G "$ZOO/*.onnx" >/dev/null; then
  "$PY" "$ROOT/tests/fuzz/zoo_seeds.py" --out "$SEEDS/onnx" "$ZOO"/*.onnx >/dev/null
fi
cp "$ROOT"/platforms/*.yaml "$SEEDS/platform/"
cp "$SEEDS"/bad_inputs/*.yaml "$SEEDS/platform/" 2>/dev/null || true
cp "$SEEDS"/bad_inputs/*.csv "$SEEDS/cost_table/" 2>/dev/null || true
cp "$ROOT"/tests/data/*.csv "$SEEDS/cost_table/" 2>/dev/null || true
for f in "$SEEDS"/bad_inputs/*.json; do
  case "$(basename "$f")" in
    cost*) cp "$f" "$SEEDS/cost_table/" ;;
    *) cp "$f" "$SEEDS/validator/" ;;
  esac
done
# Real schedule files, when a hetplan binary is around (build/ or $HETPLAN_BINARY).
BIN="${HETPLAN_BINARY:-$ROOT/build/hetplan}"
if [[ -x "$BIN" ]]; then
  "$BIN" partition "$SEEDS/bad_inputs/tiny.onnx" --costs "$SEEDS/bad_inputs/tiny_costs.csv" \
    --out "$SEEDS/validator/partition.json" >/dev/null 2>&1 || true
  "$BIN" partition "$SEEDS/bad_inputs/branchy.onnx" --platform soc-example \
    --out "$SEEDS/validator/branchy.json" >/dev/null 2>&1 || true
  "$BIN" map "$SEEDS/bad_inputs/branchy.onnx" --platform soc-example --mode parallel \
    --out "$SEEDS/validator/map_parallel.json" >/dev/null 2>&1 || true
fi
find "$SEEDS" -size +1M -delete  # big files are for the binary, not the fuzzers

status=0
for t in "${TARGETS[@]}"; do
  dir="$WORK/$t"
  mkdir -p "$dir/corpus" "$dir/crashes"
  # Text inputs stay short (longer ones only slow the fuzzer down: the size
  # limits are checked by the corpus test); ONNX seeds go up to ViT-B/16's
  # 210 KiB graph.
  max_len=32768
  [[ $t == onnx ]] && max_len=262144
  echo "[fuzz] $t for ${SECONDS_EACH}s (corpus $dir/corpus, crashes $dir/crashes)"
  set +e
  ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1" UBSAN_OPTIONS="print_stacktrace=1" \
    "$BUILD/tests/fuzz/fuzz_$t" "$dir/corpus" "$SEEDS/$t" \
    -max_total_time="$SECONDS_EACH" -timeout=25 -rss_limit_mb=4096 -max_len=$max_len \
    -artifact_prefix="$dir/crashes/" -print_final_stats=1 >"$dir/log.txt" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/log.txt" | grep -o '[0-9]*$' || echo '?')
  eps=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$dir/log.txt" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$dir/log.txt" | tail -1 || true)
  crashes=$(find "$dir/crashes" -type f | wc -l)
  echo "[fuzz] $t: rc=$rc execs=$execs exec/s=$eps $cov crash files=$crashes"
  if ((rc != 0 || crashes > 0)); then
    status=1
    grep -m3 -E 'ERROR|runtime error|SUMMARY' "$dir/log.txt" || true
  fi
done
exit $status
