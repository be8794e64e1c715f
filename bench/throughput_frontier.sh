#!/usr/bin/env bash
# A stream's exact frontier over the crossbar budget: `hetplan frontier --objective throughput` on zoo models and
# the Klein platforms (their own T_mvm), on fixed cost tables. Per curve: its breakpoints, whether the sweep
# finished (every step proven), its time, the saturation budget, and the throughput over the CPU-only model's at
# the CIM paper's budgets (25, 50, 100, 200 crossbars) and at saturation, read off the steps.
#
#   bench/throughput_frontier.sh [HETPLAN] [ZOO_DIR] [TABLES_DIR] [LIMIT_S] [PLATFORMS] [MODELS...]
#
# One thread; LIMIT_S seconds per curve (default 600); PLATFORMS comma-separated (default klein-arm,klein-x86);
# MODELS default: every model in ZOO_DIR; CROSSBARS=LO:HI in the environment limits the budgets swept (default: to
# saturation). Prints a Markdown table. Exits 1 when a curve fails to plan.
set -euo pipefail
# shellcheck source=bench/cost_tables.sh
source "$(dirname "$0")/cost_tables.sh"
BIN=${1:-build/hetplan}; ZOO=${2:-build/models}; TABLES=${3:-build/bench-tables}; LIMIT=${4:-600}
PLATFORMS=${5:-klein-arm,klein-x86}
shift $(( $# < 5 ? $# : 5 ))
MODELS=("$@")
if (( ${#MODELS[@]} == 0 )); then
  for f in "$ZOO"/*.onnx; do MODELS+=("$(basename "$f" .onnx)"); done
fi
command -v jq >/dev/null || { echo "throughput_frontier.sh: jq is not installed (apt-get install jq)" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# The speedup of the step holding at budget B (the last breakpoint at or below it).
at='def at($b): ([.breakpoints[] | select(.crossbars <= $b)] | last | .speedup // null);'
failed=0
echo "| model | platform | breakpoints | sweep | seconds | saturation (crossbars) | ×CPU-only at 25 | at 50 | at 100 | at 200 | at saturation |"
echo "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
for m in "${MODELS[@]}"; do
  ensure_cost_table "$BIN" "$ZOO" "$TABLES" "$m" || exit 2
  for p in ${PLATFORMS//,/ }; do
    out=$tmp/f.json
    rm -f "$out"
    if ! "$BIN" frontier "$ZOO/$m.onnx" --platform "$p" --costs "$TABLES/$m.csv" --objective throughput --threads 1 \
         --time-limit "$LIMIT" --saturation ${CROSSBARS:+--crossbars "$CROSSBARS"} --out "$out" >/dev/null \
         2>"$tmp/err"; then
      echo "| $m | $p | error: $(head -c 100 "$tmp/err" | tr '\n|' '  ') |||||||||"
      failed=1
      continue
    fi
    jq -r --arg m "$m" --arg p "$p" "$at"'
      def x: if . == null then "—" else (. * 100 | round / 100 | tostring) + "×" end;
      "| \($m) | \($p) | \(.breakpoints | length) | \(if .solver.complete then "complete" else "stopped: " + .solver.termination end)"
      + " | \(.solver.seconds * 100 | round / 100) | \(.saturation.crossbars // "—") | \(at(25) | x) | \(at(50) | x)"
      + " | \(at(100) | x) | \(at(200) | x) | \(.saturation.speedup | x) |"' "$out"
  done
done
exit $failed
