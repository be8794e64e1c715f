#!/usr/bin/env bash
# Streams against single inferences: every zoo model on both Klein platforms at the CIM paper's 16 grid points
# (C ∈ {25,50,100,200} crossbars × T_mvm ∈ {50,100,500,1000} ns), planned twice by the default method on the same
# fixed cost tables: for the throughput objective (the smallest initiation interval, docs/throughput.md) and for
# latency; the latency-optimal plan's own II when its inputs are pipelined (pipelined_ii_us) against the optimal II.
#
#   bench/throughput.sh [HETPLAN] [ZOO_DIR] [TABLES_DIR] [OUT_TSV] [MODELS...]
#
# One thread per solve; the throughput solve has 60 s, the latency solve 10 s (its status is recorded: a latency
# plan stopped at the limit is still a plan whose II can be compared). Prints a Markdown table (one row per model
# and platform) and writes every point to OUT_TSV (default build/bench-throughput.tsv). Exits 1 when a throughput
# point is not proven optimal or a schedule fails to plan.
set -euo pipefail
# shellcheck source=bench/cost_tables.sh
source "$(dirname "$0")/cost_tables.sh"
BIN=${1:-build/hetplan}; ZOO=${2:-build/models}; TABLES=${3:-build/bench-tables}; TSV=${4:-build/bench-throughput.tsv}
shift $(( $# < 4 ? $# : 4 ))
MODELS=("$@")
if (( ${#MODELS[@]} == 0 )); then
  for f in "$ZOO"/*.onnx; do MODELS+=("$(basename "$f" .onnx)"); done
fi
command -v jq >/dev/null || { echo "throughput.sh: jq is not installed (apt-get install jq)" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
plan() {  # MODEL PLATFORM C T OBJECTIVE LIMIT JQ -> the jq fields, or "error ..."
  local out=$tmp/s.json
  rm -f "$out"
  if "$BIN" partition "$ZOO/$1.onnx" --platform "$2" --costs "$TABLES/$1.csv" --set cim.crossbars="$3" \
       --set cim.mvm_latency_ns="$4" --objective "$5" --threads 1 --time-limit "$6" \
       --out "$out" >/dev/null 2>"$tmp/err"; then
    jq -r "$7" "$out"
  else
    echo "error $(head -c 120 "$tmp/err" | tr '\n' ' ')"
  fi
}
failed=0
printf "model\tplatform\tC\tT_mvm_ns\tstatus\tii_us\tstream_latency_us\tseconds\tlatency_status\tlatency_us\tlatency_plan_ii_us\n" >"$TSV"
echo "| model | platform | points | II proven | slowest solve (s) | latency plan's II / optimal II: median | max | stream latency / latency plan's: median |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for m in "${MODELS[@]}"; do
  ensure_cost_table "$BIN" "$ZOO" "$TABLES" "$m" || exit 2
  for p in klein-arm klein-x86; do
    rows=$tmp/rows; : >"$rows"
    for c in 25 50 100 200; do
      for t in 50 100 500 1000; do
        s=$(plan "$m" "$p" "$c" "$t" throughput 60 '"\(.solver.status)\t\(.initiation_interval_us)\t\(.makespan_us)\t\(.solver.seconds)"')
        l=$(plan "$m" "$p" "$c" "$t" latency 10 '"\(.solver.status)\t\(.makespan_us)\t\(.pipelined_ii_us)"')
        if [[ $s == error* || $l == error* ]]; then
          echo "- $m $p C=$c T=$t: throughput '$s', latency '$l'" >&2
          failed=1
          continue
        fi
        printf "%s\t%s\t%s\t%s\t%s\t%s\n" "$m" "$p" "$c" "$t" "$s" "$l" | tee -a "$TSV" >>"$rows"
      done
    done
    awk -F'\t' -v m="$m" -v p="$p" '
      function median(a, n,   i, j, x) { for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
                                        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
      { n++; proven += $5 == "optimal"; if ($8 > slow) slow = $8
        r[n] = $11 / $6; if (r[n] > mx) mx = r[n]; q[n] = $7 / $10 }
      END { if (n == 0) exit; printf "| %s | %s | %d | %d | %.2f | %.3f | %.3f | %.2f |\n", m, p, n, proven, slow, median(r, n), mx, median(q, n) }' "$rows"
    awk -F'\t' '$5 != "optimal" { bad = 1 } END { exit bad }' "$rows" || failed=1
  done
done
exit $failed
