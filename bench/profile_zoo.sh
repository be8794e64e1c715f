#!/usr/bin/env bash
# Profiles the model zoo with `hetplan profile` (ONNX Runtime, one thread,
# default warm-up and runs, no cache so that the wall time is real) and
# prints a Markdown table: how well the sum of isolated per-operator medians
# predicts the whole-model median, and what profiling costs.
#
#   bench/profile_zoo.sh [path/to/hetplan] [models dir]
#
# Defaults: build/hetplan and build/models (make them with `ninja -C build
# hetplan zoo`). Missing models are skipped with a note. Extra options for
# every run can be given in HETPLAN_PROFILE_ARGS (e.g. "--fusion activation"),
# other models in MODELS_LIST (e.g. "resnet18_int8 yolov5n_int8": the INT8 zoo).
set -euo pipefail

BIN=${1:-build/hetplan}
MODELS=${2:-build/models}
read -r -a ZOO <<<"${MODELS_LIST:-resnet18 resnet50 mobilenetv2 vit_b_16 yolov5n}"

if [[ ! -x "$BIN" ]]; then
  echo "profile_zoo: $BIN is not an executable; build it (ninja -C build hetplan) or pass its path" >&2
  exit 2
fi
OUT=$(mktemp -d "${TMPDIR:-/tmp}/hetplan_profile_zoo.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

# meta KEY FILE: the value of a "# key=value" line of a cost table.
meta() { sed -n "s/^# $1=//p" "$2" | head -n 1; }

rows=()
notes=()
cpu="" runtime=""
for m in "${ZOO[@]}"; do
  model="$MODELS/$m.onnx"
  if [[ ! -f "$model" ]]; then
    notes+=("- $m: skipped, $model not found (ninja -C build zoo exports it)")
    continue
  fi
  table="$OUT/$m.csv"
  echo "profiling $m ..." >&2
  start=$(date +%s.%N)
  # shellcheck disable=SC2086  # HETPLAN_PROFILE_ARGS is a list of words
  if ! "$BIN" profile "$model" --threads 1 --no-cache --out "$table" ${HETPLAN_PROFILE_ARGS:-} \
      >"$OUT/$m.log" 2>&1; then
    notes+=("- $m: failed: $(tail -n 1 "$OUT/$m.log")")
    continue
  fi
  end=$(date +%s.%N)
  # Whole-model median: the exec_us cell of the `model` row, found by header name.
  model_us=$(awk -F, '/^#/ {next} !h {for (i = 1; i <= NF; i++) col[$i] = i; h = 1; next}
                      $col["kind"] == "model" {print $col["exec_us"]; exit}' "$table")
  sum_us=$(meta sum_of_op_medians_us "$table")
  ops=$(meta operators "$table")
  cpu=$(meta cpu "$table")
  runtime=$(meta runtime "$table")
  rows+=("$(awk -v m="$m" -v ops="$ops" -v model="$model_us" -v sum="$sum_us" -v s="$start" -v e="$end" \
    'BEGIN {printf "| %s | %d | %.2f | %.2f | %+.1f | %.1f |", m, ops, model / 1000, sum / 1000,
            (sum / model - 1) * 100, e - s}')")
done

settings="default warm-up/runs (20 + 200 per operator, 20 + 50 whole model)"
if [[ -n "${HETPLAN_PROFILE_ARGS:-}" ]]; then settings="extra options: ${HETPLAN_PROFILE_ARGS}"; fi
echo "Host CPU: ${cpu:-unknown} · ${runtime:-onnxruntime ?} · 1 thread · ${settings} · no cache"
echo
echo "| model | operators | whole-model median ms | sum of per-op medians ms | relative error % | profiling wall s |"
echo "|---|---:|---:|---:|---:|---:|"
for r in "${rows[@]+"${rows[@]}"}"; do echo "$r"; done
if ((${#notes[@]})); then
  echo
  printf '%s\n' "${notes[@]}"
fi
