#!/usr/bin/env bash
# Which host cost predicts a one-segment (CPU-only) plan, measured (issue 25).
#
# For each model: `hetplan profile` (a fresh cache: every operator alone, the
# whole model, the whole model under ORT's profiler, the split executions the
# boundary cost is fitted from), then the CPU-only plan on klein-arm
# (cim.crossbars=0: one segment) from that profile, split and run REPEATS
# times with `hetplan run`. Prints one Markdown row per model: what one
# whole-model Run is made of, and the measured host time against the two
# predictions made from the same profile: Σ isolated operators (exec_us, the
# planners' cost before issue 25) and Σ in-context operators (in_context_us +
# framework_us, the planners' cost now).
#
#   bench/host_cost_accuracy.sh [path/to/hetplan] [models dir]
#
# Environment: MODELS_LIST ("resnet18 mobilenetv2 resnet50"), REPEATS (3),
# RUNS (20) / WARMUP (3) per `hetplan run`, CACHE_DIR (a fresh temporary one).
set -euo pipefail

BIN=${1:-build/hetplan}
MODELS=${2:-build/models}
REPEATS=${REPEATS:-3}
RUNS=${RUNS:-20}
WARMUP=${WARMUP:-3}
read -r -a ZOO <<<"${MODELS_LIST:-resnet18 mobilenetv2 resnet50}"
if [[ ! -x "$BIN" ]]; then
  echo "host_cost_accuracy: $BIN is not an executable; build it (ninja -C build hetplan) or pass its path" >&2
  exit 2
fi
OUT=$(mktemp -d "${TMPDIR:-/tmp}/hetplan_host_cost.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
CACHE_DIR=${CACHE_DIR:-$OUT/cache}
PY=/usr/bin/python3

echo "$(date -u '+%Y-%m-%d %H:%M UTC') · $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') · load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| model | ops | whole-model Run ms | Σ isolated ms | Σ in-context kernels ms | executor between kernels ms | outside model_run µs | measured one-segment plan ms (runs) | error, Σ isolated | error, Σ in context + executor | boundary µs/segment (R²) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for m in "${ZOO[@]}"; do
  model="$MODELS/$m.onnx"
  "$BIN" profile "$model" --cache-dir "$CACHE_DIR" --out "$OUT/$m.csv" --json "$OUT/$m.json" >/dev/null
  "$BIN" partition "$model" --platform klein-arm --set cim.crossbars=0 --cache-dir "$CACHE_DIR" \
    --out "$OUT/$m.cpu.json" >/dev/null
  rm -rf "$OUT/$m.split"
  "$BIN" split "$OUT/$m.cpu.json" --out "$OUT/$m.split" >/dev/null
  for r in $(seq 1 "$REPEATS"); do
    "$BIN" run "$OUT/$m.split" --runs "$RUNS" --warmup "$WARMUP" --json "$OUT/$m.run$r.json" >/dev/null
  done
  "$PY" - "$m" "$OUT/$m.json" "$OUT/$m.cpu.json" "$REPEATS" "$OUT/$m.run" <<'EOF'
import json, statistics, sys
m, table, sched, repeats, prefix = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
t = json.load(open(table))
meta = t["meta"]
ops = [r for r in t["rows"] if r["kind"] == "op"]
model = next(r for r in t["rows"] if r["kind"] == "model")
iso = sum(r["exec_us"] for r in ops)
ctx = sum(r["in_context_us"] + r.get("framework_us", 0) if "in_context_us" in r else r["exec_us"] for r in ops)
kern = float(meta["in_context_kernel_sum_us"])
executor = float(meta["in_context_run_us"]) - kern
outside = float(meta["run_overhead_us"])
runs = [json.load(open(f"{prefix}{i}.json")) for i in range(1, repeats + 1)]
measured = [r["host"]["measured_us"] for r in runs]
predicted = runs[0]["host"]["predicted_us"]  # what the planner charged (Σ in context + executor)
med = statistics.median(measured)
b = next((r for r in t["rows"] if r["kind"] == "boundary"), None)
bound = "n/a" if b is None else f"{b['exec_us']:.1f} ({float(meta['boundary_r2']):.2f})"
print(f"| {m} | {len(ops)} | {model['exec_us'] / 1000:.2f} | {iso / 1000:.2f} | {kern / 1000:.2f} | {executor / 1000:.2f} | "
      f"{outside:.1f} | {med / 1000:.2f} ({', '.join(f'{x / 1000:.2f}' for x in measured)}) | "
      f"{100 * (med / iso - 1):+.1f} % | {100 * (med / predicted - 1):+.1f} % | {bound} |")
if abs(predicted - ctx) > 1e-6 * ctx + 0.01:
    print(f"<!-- {m}: the plan charged {predicted:.1f} µs, the table's in-context sum is {ctx:.1f} µs -->")
EOF
done
echo
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
