#!/usr/bin/env bash
# Prediction accuracy of deployed plans (issue 9, docs/deployment.md).
#
# For each zoo model: a CPU-only plan (cim.crossbars=0: one segment) and the
# ILP plan at C = 100 crossbars, T_mvm = 50 ns on klein-arm. Each is split
# with `hetplan split` and run with `hetplan run`, once with the resident
# executor and once loading the sessions every run. Prints a Markdown table:
# predicted vs measured host (CPU) time, their relative error, the PU
# boundaries, and the cost per boundary with and without the resident
# executor, plus the machine it ran on.
#
#   bench/deploy_accuracy.sh [path/to/hetplan] [models dir]
#
# Defaults: build/hetplan and build/models. Host costs come from the profile
# cache (partition's default .cache/hetplan, its default 20 warm-ups + 200
# runs per operator): a model profiled once is not measured again, and the
# CPU-only and the ILP plan share its profile. Run it alone on the machine
# (the README numbers were measured with no other job running), one model at a
# time if the whole zoo takes too long. Environment:
#   RUNS (10) / WARMUP (2)        resident executor timed / warm-up runs
#   NR_RUNS (3) / NR_WARMUP (1)   load-per-run executor
#   TIME_LIMIT (60)               ILP time limit per model, seconds
#   CACHE_DIR (.cache/hetplan)    profile cache
#   MODELS_LIST ("resnet18 resnet50 mobilenetv2 yolov5n vit_b_16")
#   NO_HEADER (unset)             print only the table rows (to join runs)
#   BOUNDARY_COST (none)          partition's --boundary-cost: none | fitted
set -euo pipefail

BIN=${1:-build/hetplan}
MODELS=${2:-build/models}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
NR_RUNS=${NR_RUNS:-3}
NR_WARMUP=${NR_WARMUP:-1}
TIME_LIMIT=${TIME_LIMIT:-60}
BOUNDARY_COST=${BOUNDARY_COST:-none}
CACHE_DIR=${CACHE_DIR:-.cache/hetplan}
read -r -a ZOO <<<"${MODELS_LIST:-resnet18 resnet50 mobilenetv2 yolov5n vit_b_16}"

if [[ ! -x "$BIN" ]]; then
  echo "deploy_accuracy: $BIN is not an executable; build it (ninja -C build hetplan) or pass its path" >&2
  exit 2
fi
OUT=$(mktemp -d "${TMPDIR:-/tmp}/hetplan_deploy_accuracy.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
PROFILE=(--cache-dir "$CACHE_DIR")

# row MODEL PLAN SCHEDULE RESIDENT_REPORT LOADING_REPORT: one Markdown row.
row() {
  python3 - "$@" <<'EOF'
import json, sys
model, plan, sched_path, res_path, nr_path = sys.argv[1:6]
s = json.load(open(sched_path))
r = json.load(open(res_path))
n = json.load(open(nr_path))
def us(v):
    return "n/a" if v is None else f"{v:.1f}"
solver = s["solver"]
label = plan
if plan == "ILP":
    label += f" ({solver['status']}" + (f", gap {100 * solver['gap']:.1f}%" if solver["status"] != "optimal" else "") + ")"
err = r["host"]["relative_error"]
ok = r["check"]["outputs_match"] and n["check"]["outputs_match"]
# The unsplit model ran interleaved with the plan; against the schedule's
# CPU-only prediction it shows how busy the machine was meanwhile.
cpu_only = s.get("baselines", {}).get("cpu_only_us")
drift = "n/a" if not cpu_only else f"{100 * (r['end_to_end']['unsplit_wall_us'] / cpu_only - 1):+.1f}"
print(f"| {model} | {label} | {len(s['operators'])} | {len(r['segments'])} | {r['boundaries']} | "
      f"{r['host']['predicted_us'] / 1000:.2f} | {r['host']['measured_us'] / 1000:.2f} | "
      f"{'n/a' if err is None else f'{100 * err:+.1f}'} | "
      f"{us(r['handoff']['per_boundary_us'])} | {us(n['handoff']['per_boundary_us'])} | "
      f"{us(r['end_to_end']['split_overhead_per_boundary_us'])} | "
      f"{us(n['end_to_end']['split_overhead_per_boundary_us'])} | "
      f"{r['end_to_end']['unsplit_wall_us'] / 1000:.2f} | {drift} | {'yes' if ok else 'NO'} |")
EOF
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?"; }
load_start=$(loadavg)
rows=()
notes=()
cpu="" runtime=""
for m in "${ZOO[@]}"; do
  model="$MODELS/$m.onnx"
  if [[ ! -f "$model" ]]; then
    notes+=("- $m: skipped, $model not found (ninja -C build zoo exports it)")
    continue
  fi
  for plan in cpu ilp; do
    d="$OUT/$m.$plan"
    sets=()
    label="CPU-only"
    if [[ $plan == cpu ]]; then
      sets=(--set cim.crossbars=0)
    else
      sets=(--set cim.crossbars=100 --set cim.mvm_latency_ns=50)
      label="ILP"
    fi
    echo "$m: $label plan ..." >&2
    if ! "$BIN" partition "$model" --platform klein-arm "${sets[@]}" "${PROFILE[@]}" --time-limit "$TIME_LIMIT" \
        --boundary-cost "$BOUNDARY_COST" --out "$d.json" >"$d.partition.log" 2>&1; then
      notes+=("- $m $label: partition failed: $(tail -n 1 "$d.partition.log")")
      continue
    fi
    if ! "$BIN" split "$d.json" --out "$d" >"$d.split.log" 2>&1; then
      notes+=("- $m $label: split failed: $(tail -n 1 "$d.split.log")")
      continue
    fi
    echo "$m: $label plan: running $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["segments"]))' \
      "$d/manifest.json") segments ..." >&2
    failed=""
    if ! "$BIN" run "$d" --runs "$RUNS" --warmup "$WARMUP" --json "$d.resident.json" >"$d.run.log" 2>&1; then
      failed="run failed: $(tail -n 1 "$d.run.log")"
    elif ! "$BIN" run "$d" --no-resident --runs "$NR_RUNS" --warmup "$NR_WARMUP" --json "$d.loading.json" \
        >"$d.run-nr.log" 2>&1; then
      failed="run --no-resident failed: $(tail -n 1 "$d.run-nr.log")"
    fi
    if [[ -n "$failed" ]]; then
      notes+=("- $m $label: $failed")
      continue
    fi
    rows+=("$(row "$m" "$label" "$d.json" "$d.resident.json" "$d.loading.json")")
    cpu=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cpu"])' "$d.resident.json")
    runtime=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["runtime"])' "$d.resident.json")
    rm -rf "$d"  # the sub-models of big models add up
  done
done

if [[ -z "${NO_HEADER:-}" ]]; then
  echo "Host CPU: ${cpu:-unknown} ($(nproc) cores visible) · ${runtime:-onnxruntime ?} · 1 thread · klein-arm" \
    "(C = 100, T_mvm = 50 ns) · host costs from the profile cache ($CACHE_DIR; 20 warm-ups + 200 runs per" \
    "operator) · resident executor ${RUNS} runs after ${WARMUP}, load-per-run ${NR_RUNS} after ${NR_WARMUP} ·" \
    "load average ${load_start} at the start, $(loadavg) at the end"
  echo
  echo "| model | plan | operators | segments | PU boundaries | predicted host ms | measured host ms | host error % |" \
    "hand-off µs/boundary resident | hand-off µs/boundary load-per-run | split − unsplit µs/boundary resident |" \
    "split − unsplit µs/boundary load-per-run | unsplit model ms | unsplit vs CPU-only prediction % |" \
    "outputs equal |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
fi
for r in "${rows[@]+"${rows[@]}"}"; do echo "$r"; done
if [[ -z "${NO_HEADER:-}" ]]; then
  echo
  echo "host = Σ over CPU segments (CIM segments run functionally on this CPU and are charged from the cost model);" \
    "hand-off = executor time between one segment's Session::Run and the next, per transition; split − unsplit =" \
    "(split end-to-end wall time, every segment run on this CPU − the unsplit model's) / transitions; unsplit vs" \
    "CPU-only prediction = the unsplit model, timed interleaved with the plan, against the schedule's cpu_only_us."
else
  echo "(${m:-?}: load average ${load_start} at the start, $(loadavg) at the end)" >&2
fi
if ((${#notes[@]})); then
  echo
  printf '%s\n' "${notes[@]}"
fi
