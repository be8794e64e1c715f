#!/usr/bin/env bash
# CIM resources over time (issue 44, items 4 and 5): what a shared ADC pool and reprogramming do to the plans of
# VGG-8 and ResNet-18 on the `puma` preset, planned by `--solver exact` on fixed host cost tables.
#
#   bench/cim_resources.sh [HETPLAN] [ZOO_DIR] [TABLES_DIR] [TIME_LIMIT_S]
#
# Two Markdown tables:
#  * reprogramming: at crossbar budgets from a sixteenth of what the model's weights take to all of it, the plan with
#    every CIM operator resident (the paper's static mapping) beside the plan that may rewrite operators each
#    inference (write_ns_per_row 100, endurance 1e8 writes over 1e6 inferences: assumed values, not a device's);
#  * a shared ADC pool: ResNet-18 with all its weights resident and the pool shrinking from one ADC per crossbar
#    to 16.
# Each row: status (optimal, or feasible at the time limit, with the gap), makespan, the operators on the CIM and
# those rewritten. Host costs come from TABLES_DIR (profiled once, as plans_before_after.sh does); one thread, so
# the load does not change a proven result (a time limit can).
set -euo pipefail
# shellcheck source=bench/cost_tables.sh
source "$(dirname "$0")/cost_tables.sh"
BIN=${1:-build/hetplan}; ZOO=${2:-build/models}; TABLES=${3:-build/bench-tables}; LIMIT=${4:-10}
command -v jq >/dev/null || { echo "cim_resources.sh: jq is not installed (apt-get install jq)" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
WRITES=(--set cim.write_ns_per_row=100 --set cim.endurance_writes=1e8 --set cim.lifetime_inferences=1e6)

plan() {  # MODEL SETS... -> "status|makespan|on cim|rewritten"
  local model=$1 out=$tmp/s.json
  shift
  rm -f "$out"
  if "$BIN" partition "$ZOO/$model.onnx" --platform puma --costs "$TABLES/$model.csv" "$@" --solver exact \
       --threads 1 --time-limit "$LIMIT" --out "$out" >/dev/null 2>"$tmp/err"; then
    jq -r '"\(.solver.status)\(if .solver.status == "optimal" then "" else " (\(.solver.termination), gap \(.solver.gap * 1000 | round / 10) %)" end)|\(.makespan_us | round)|\([.operators[] | select(.device == "cim")] | length)|\([.operators[] | select(.write != null)] | length)"' "$out"
  else
    echo "error: $(head -c 160 "$tmp/err" | tr '\n|' '  ')|||"
  fi
}

echo "| model | crossbars | resident only: status | makespan µs | on CIM | may rewrite: status | makespan µs | on CIM | rewritten |"
echo "|---|---:|---|---:|---:|---|---:|---:|---:|"
for m in vgg8 resnet18; do
  ensure_cost_table "$BIN" "$ZOO" "$TABLES" "$m"
  all=$("$BIN" platform layers puma "$ZOO/$m.onnx" --json | jq '.pus.cim.crossbars')
  for div in 16 8 4 2 1; do
    c=$(( (all + div - 1) / div ))
    IFS='|' read -r fs fm fc _ <<<"$(plan "$m" --set cim.crossbars="$c")"
    IFS='|' read -r rs rm rc rw <<<"$(plan "$m" --set cim.crossbars="$c" "${WRITES[@]}" --set cim.reprogram=true)"
    echo "| $m | $c | $fs | $fm | $fc | $rs | $rm | $rc | $rw |"
  done
done
echo
echo "| model | shared ADCs | status | makespan µs | on CIM |"
echo "|---|---:|---|---:|---:|"
for adcs in none 4096 1024 256 64 16; do
  sets=()
  [[ $adcs != none ]] && sets=(--set cim.shared_adcs="$adcs")
  IFS='|' read -r st ms oc _ <<<"$(plan resnet18 "${sets[@]}")"
  echo "| resnet18 | $adcs | $st | $ms | $oc |"
done
