#!/usr/bin/env bash
# Instruction counts (valgrind --tool=callgrind) of representative planning calls, for two hetplan binaries side
# by side: a refactoring that must not slow anything down is checked by counts, which do not depend on the load of
# the machine, rather than by wall times. Costs come from fixed cost tables (profiled once into $TABLES), so both
# binaries plan on the same numbers.
#
#   bench/instruction_counts.sh OLD_HETPLAN NEW_HETPLAN [ZOO_DIR] [TABLES_DIR]
#
# The calls use the spellings every release accepts (--solver ilp, --formulation paper). Prints a Markdown table:
# call, old and new instruction counts, relative change.
set -euo pipefail
# shellcheck source=bench/cost_tables.sh
source "$(dirname "$0")/cost_tables.sh"
OLD=${1:?old hetplan binary}; NEW=${2:?new hetplan binary}
ZOO=${3:-build/models}; TABLES=${4:-build/bench-tables}
command -v valgrind >/dev/null || { echo "instruction_counts.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
for m in resnet18 yolov5n mobilenetv2; do ensure_cost_table "$NEW" "$ZOO" "$TABLES" "$m" || exit 2; done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
calls=(
  "r18_exact|partition $ZOO/resnet18.onnx --platform klein-arm --costs $TABLES/resnet18.csv --solver ilp"
  "yolov5n_exact_c25|partition $ZOO/yolov5n.onnx --platform klein-arm --set cim.crossbars=25 --costs $TABLES/yolov5n.csv --solver ilp"
  "r18_mip|partition $ZOO/resnet18.onnx --platform klein-arm --costs $TABLES/resnet18.csv --solver ilp --formulation paper --threads 1"
  "mobilenetv2_greedy|partition $ZOO/mobilenetv2.onnx --platform klein-x86 --costs $TABLES/mobilenetv2.csv --solver greedy"
  "vit_b_16_map_parallel|map $ZOO/vit_b_16.onnx --platform soc-example --mode parallel"
  "resnet50_map_concurrent|map $ZOO/resnet50.onnx --platform soc-example --mode concurrent"
  "resnet18_graph|graph $ZOO/resnet18.onnx --json $tmp/g.json"
)
count() {  # BIN ARGS...
  local bin=$1; shift
  local out=$tmp/$RANDOM.cg
  local extra=()
  [[ $1 != graph ]] && extra=(--out "$tmp/s.json")
  valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" "$@" "${extra[@]}" >/dev/null 2>&1
  grep -m1 '^summary:' "$out" | awk '{print $2}'
}
echo "| call | old instructions | new instructions | change |"
echo "|---|---:|---:|---:|"
for c in "${calls[@]}"; do
  name=${c%%|*}; args=${c#*|}
  # shellcheck disable=SC2086
  a=$(count "$OLD" $args); b=$(count "$NEW" $args)
  awk -v n="$name" -v a="$a" -v b="$b" 'BEGIN { printf "| %s | %\047.0f | %\047.0f | %+.3f %% |\n", n, a, b, 100 * (b - a) / a }'
done
