#!/usr/bin/env bash
# Planning results before and after a change: every zoo model on both Klein platforms at the CIM paper's 16 grid
# points (C ∈ {25,50,100,200} crossbars × T_mvm ∈ {50,100,500,1000} ns), planned by the default method with two
# hetplan binaries on the same fixed cost tables, and compared by status and makespan. A refactoring must leave
# every row equal.
#
#   bench/plans_before_after.sh OLD_HETPLAN NEW_HETPLAN [ZOO_DIR] [TABLES_DIR] [MODELS...]
#
# Host costs come from cost tables profiled once into TABLES_DIR (so both binaries plan on the same numbers);
# each solve runs with one thread and the default node budget of the search, so that the load does not change a
# result. Prints a Markdown table (one row per model and platform: points, equal, differing) and, after it, every
# differing point; exits 1 when a point differs.
set -euo pipefail
# shellcheck source=bench/cost_tables.sh
source "$(dirname "$0")/cost_tables.sh"
OLD=${1:?old hetplan binary}; NEW=${2:?new hetplan binary}
ZOO=${3:-build/models}; TABLES=${4:-build/bench-tables}
shift $(( $# < 4 ? $# : 4 ))
MODELS=("$@")
if (( ${#MODELS[@]} == 0 )); then
  for f in "$ZOO"/*.onnx; do MODELS+=("$(basename "$f" .onnx)"); done
fi
command -v jq >/dev/null || { echo "plans_before_after.sh: jq is not installed (apt-get install jq)" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
plan() {  # BIN MODEL PLATFORM C T -> "status makespan"
  local out=$tmp/s.json
  rm -f "$out"
  if "$1" partition "$ZOO/$2.onnx" --platform "$3" --costs "$TABLES/$2.csv" --set cim.crossbars="$4" \
       --set cim.mvm_latency_ns="$5" --solver exact --threads 1 --time-limit 60 \
       --out "$out" >/dev/null 2>"$tmp/err"; then
    jq -r '"\(.solver.status) \(.makespan_us)"' "$out"
  else
    echo "error $(head -c 120 "$tmp/err" | tr '\n' ' ')"
  fi
}
diffs=()
failed=0
echo "| model | platform | points | equal | differing |"
echo "|---|---|---:|---:|---:|"
for m in "${MODELS[@]}"; do
  ensure_cost_table "$NEW" "$ZOO" "$TABLES" "$m" || exit 2
  for p in klein-arm klein-x86; do
    points=0; equal=0
    for c in 25 50 100 200; do
      for t in 50 100 500 1000; do
        a=$(plan "$OLD" "$m" "$p" "$c" "$t"); b=$(plan "$NEW" "$m" "$p" "$c" "$t")
        points=$((points + 1))
        if [[ $a == "$b" && $a != error* ]]; then equal=$((equal + 1)); else diffs+=("$m $p C=$c T=$t: old '$a', new '$b'"); fi
      done
    done
    echo "| $m | $p | $points | $equal | $((points - equal)) |"
    (( equal == points )) || failed=1
  done
done
for d in "${diffs[@]+"${diffs[@]}"}"; do echo "- $d"; done
exit $failed
