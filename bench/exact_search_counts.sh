#!/usr/bin/env bash
# Instruction counts of the exact search alone (valgrind's callgrind, collecting only inside SolveLatencyBySearch),
# for two hetplan binaries side by side on the same fixed cost tables: a change to the search that must not slow it
# down is checked by counts, which do not depend on the machine's load. One thread, so that the local search on a
# second thread is not counted (docs/results.md, "Refactoring: the same plans, no more instructions").
# The function is matched by its whole signature, `SolveLatencyBySearch(*, int, int)`: `SolveLatencyBySearch*` would
# also match lambdas defined inside it, and entering one switches the collection off (earlier versions ran their
# searches inside such lambdas, so a count by that pattern left the searches out).
#
#   bench/exact_search_counts.sh OLD_HETPLAN NEW_HETPLAN [ZOO_DIR] [TABLES_DIR] [MODEL:CROSSBARS ...]
#
# Default points: resnet18, mobilenetv2, resnet50, yolov5n and vit_b_16 at 25 and 200 crossbars on klein-arm.
# Prints a Markdown table: point, old and new instruction counts, relative change, and both statuses.
set -euo pipefail
# shellcheck source=bench/cost_tables.sh
source "$(dirname "$0")/cost_tables.sh"
OLD=${1:?old hetplan binary}; NEW=${2:?new hetplan binary}
ZOO=${3:-build/models}; TABLES=${4:-build/bench-tables}
shift $(( $# < 4 ? $# : 4 ))
POINTS=("$@")
if (( ${#POINTS[@]} == 0 )); then
  for m in resnet18 mobilenetv2 resnet50 yolov5n vit_b_16; do POINTS+=("$m:25" "$m:200"); done
fi
command -v valgrind >/dev/null || { echo "exact_search_counts.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
command -v jq >/dev/null || { echo "exact_search_counts.sh: jq is not installed (apt-get install jq)" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
count() {  # BIN MODEL CROSSBARS -> "instructions status"
  local out=$tmp/c.cg
  rm -f "$out" "$tmp/s.json"
  valgrind --tool=callgrind --toggle-collect='hetplan::exact_internal::SolveLatencyBySearch(*, int, int)' \
    --callgrind-out-file="$out" "$1" partition "$ZOO/$2.onnx" --platform klein-arm --set cim.crossbars="$3" \
    --costs "$TABLES/$2.csv" --solver exact --threads 1 --out "$tmp/s.json" >/dev/null 2>&1
  echo "$(grep -m1 '^summary:' "$out" | awk '{print $2}') $(jq -r .solver.status "$tmp/s.json")"
}
echo "| exact search, klein-arm | old instructions | new instructions | change | status old / new |"
echo "|---|---:|---:|---:|---|"
for pt in "${POINTS[@]}"; do
  m=${pt%%:*}; c=${pt#*:}
  ensure_cost_table "$NEW" "$ZOO" "$TABLES" "$m" || exit 2
  read -r a sa <<<"$(count "$OLD" "$m" "$c")"
  read -r b sb <<<"$(count "$NEW" "$m" "$c")"
  awk -v n="$m C=$c" -v a="$a" -v b="$b" -v s="$sa / $sb" \
    'BEGIN { printf "| %s | %\047.0f | %\047.0f | %+.2f %% | %s |\n", n, a, b, 100 * (b - a) / a, s }'
done
