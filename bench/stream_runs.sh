#!/usr/bin/env bash
# Streams measured on this host's two cores (docs/throughput.md): for each model, the throughput-optimal plan on
# `host-2core` with the fitted segment-boundary cost (both cores measured here), split, and `hetplan run --stream N`
# three times; per model the median of the three runs of the measured II against the predicted II, raw and after
# the drift correction docs/results.md uses (the unsplit model timed in the same run against the profile's
# prediction of it: corrected = measured II / (predicted II × (1 + drift)) − 1), with inputs per second beside the
# same plan one input at a time and the unsplit model on one core.
#
#   bench/stream_runs.sh [HETPLAN] [ZOO_DIR] [INPUTS] [MODELS...]
#
# Run it on an idle machine (`uptime` load below 1). Prints a Markdown table; every run's report stays in
# build/bench-stream/MODEL/run-K.json.
set -euo pipefail
BIN=${1:-build/hetplan}; ZOO=${2:-build/models}; N=${3:-200}
shift $(( $# < 3 ? $# : 3 ))
MODELS=("$@")
(( ${#MODELS[@]} > 0 )) || MODELS=(resnet18 mobilenetv2 googlenet)
command -v jq >/dev/null || { echo "stream_runs.sh: jq is not installed (apt-get install jq)" >&2; exit 2; }
out=build/bench-stream
mkdir -p "$out"
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "| model | segments | predicted II (µs) | measured II (µs) | error | drift | error after drift | inputs/s | one at a time /s | unsplit (one core) /s | latency median / p95 (ms) | outputs |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
for m in "${MODELS[@]}"; do
  d=$out/$m
  rm -rf "$d"; mkdir -p "$d"
  "$BIN" partition "$ZOO/$m.onnx" --platform host-2core --objective throughput --boundary-cost fitted \
    --time-limit 60 --out "$d/plan.json" >"$d/plan.txt"
  "$BIN" split "$d/plan.json" --out "$d/split" >"$d/split.txt"
  for k in 1 2 3; do
    "$BIN" run "$d/split" --runs 10 --warmup 2 --stream "$N" --json "$d/run-$k.json" >"$d/run-$k.txt"
  done
  field() { for k in 1 2 3; do jq -r "$1" "$d/run-$k.json"; done | median; }
  pred=$(jq -r '.stream.predicted_ii_us' "$d/run-1.json")
  meas=$(field '.stream.measured_ii_us')
  drift=$(field '.end_to_end.reference_drift')
  rate=$(field '.stream.inputs_per_s')
  one=$(field '.stream.one_at_a_time_per_s')
  unsplit=$(field '.stream.unsplit_per_s')
  lat=$(field '.stream.latency_median_us')
  p95=$(field '.stream.latency_p95_us')
  segs=$(jq -r '.segments | length' "$d/run-1.json")
  bad=$(for k in 1 2 3; do jq -r '.stream.outputs_mismatched' "$d/run-$k.json"; done | awk '{ s += $1 } END { print s }')
  awk -v m="$m" -v s="$segs" -v p="$pred" -v x="$meas" -v dr="$drift" -v r="$rate" -v o="$one" -v u="$unsplit" \
      -v l="$lat" -v q="$p95" -v b="$bad" -v n="$N" 'BEGIN {
    printf "| %s | %d | %.1f | %.1f | %+.1f %% | %+.1f %% | %+.1f %% | %.1f | %.1f | %.1f | %.1f / %.1f | %s |\n",
      m, s, p, x, 100 * (x / p - 1), 100 * dr, 100 * (x / (p * (1 + dr)) - 1), r, o, u, l / 1000, q / 1000,
      b == 0 ? "all " 3 * n " equal" : b " differ" }'
done
