#!/usr/bin/env bash
# Measured multi-PU execution on this machine's two cores (issue 20,
# docs/results.md#two-cores-as-two-pus-measured).
#
# For each model, on platforms/host-2core.yaml (cpu0 on core 0, cpu1 on core
# 1, both profiled pinned, their slowdowns, co-execution and hand-offs
# measured by co-running):
#   single core  everything on cpu0 (single:cpu0)
#   parallel     BIDENT's intra-model parallel mapping (map --mode parallel)
#   exact        the exact search on both cores (partition --solver exact)
#   2 serial     two requests back to back on one core (pair_serial)
#   2 concurrent two requests at once (map --mode concurrent)
# Each plan is split and run with the PU-thread executor REPEATS times
# (`hetplan run --runs RUNS`); the table gives the schedule's predicted
# makespan, the median over the repeats of each run's median makespan, and
# the error measured / predicted - 1. Prints a Markdown table and the machine.
#
#   bench/multipu_results.sh [path/to/hetplan] [models dir]
#
# Environment: MODELS_LIST ("resnet50 vit_b_16 yolov5n googlenet"),
# RUNS (20), WARMUP (3), REPEATS (3), TIME_LIMIT (300, the exact search),
# CACHE_DIR (.cache/hetplan), PROFILE_FLAGS (extra flags for the planning
# commands, e.g. "--warmup 5 --runs 30" for fewer profiler runs per operator
# than BIDENT's 20 + 200; "--corun-runs 3 --corun-rounds 1" for a short co-run
# profile), NO_HEADER (print only rows). A quick check that it works:
#   MODELS_LIST=googlenet RUNS=2 WARMUP=1 REPEATS=1 TIME_LIMIT=5 CACHE_DIR=$(mktemp -d) \
#     PROFILE_FLAGS="--warmup 1 --runs 3 --corun-runs 3 --corun-rounds 1" bench/multipu_results.sh
set -euo pipefail

BIN=${1:-build/hetplan}
MODELS=${2:-build/models}
RUNS=${RUNS:-20}
WARMUP=${WARMUP:-3}
REPEATS=${REPEATS:-3}
TIME_LIMIT=${TIME_LIMIT:-300}
CACHE_DIR=${CACHE_DIR:-.cache/hetplan}
read -r -a ZOO <<<"${MODELS_LIST:-resnet50 vit_b_16 yolov5n googlenet}"

if [[ ! -x "$BIN" ]]; then
  echo "multipu_results: $BIN is not an executable; build it (ninja -C build hetplan) or pass its path" >&2
  exit 2
fi
OUT=${KEEP_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/hetplan_multipu.XXXXXX")}
mkdir -p "$OUT"
[[ -n "${KEEP_DIR:-}" ]] || trap 'rm -rf "$OUT"' EXIT
read -r -a EXTRA <<<"${PROFILE_FLAGS:-}"
COMMON=(--platform host-2core --cache-dir "$CACHE_DIR" "${EXTRA[@]}")

# row MODEL PLAN SCHEDULE SINGLE_US REPORT...: one Markdown row.
row() {
  /usr/bin/python3 - "$@" <<'EOF'
import json, statistics, sys
model, plan, sched_path, single = sys.argv[1:5]
reports = [json.load(open(p)) for p in sys.argv[5:]]
s = json.load(open(sched_path))
solver = s["solver"]
status = solver["status"] + (f", gap {100 * solver['gap']:.1f}%" if solver["status"] == "feasible" and solver.get("gap") else "")
pt = [r["pu_threads"] for r in reports]
predicted = pt[0]["makespan"]["predicted_us"]
measured = statistics.median(p["makespan"]["measured_us"] for p in pt)
err = measured / predicted - 1
segs = len(reports[0]["segments"])
hand = len(pt[0]["boundaries"])
busy = " / ".join(f"{statistics.median(p['pus'][i]['busy_us'] for p in pt) / 1000:.1f}" for i in range(len(pt[0]["pus"])))
req = ""
if len(pt[0]["requests"]) > 1:
    req = "; requests " + ", ".join(
        f"{100 * (statistics.median(p['requests'][q]['finish_us'] for p in pt) / pt[0]['requests'][q]['predicted_finish_us'] - 1):+.1f}%"
        for q in range(len(pt[0]["requests"])))
speed = "" if single == "-" else f"{float(single) / measured:.2f}x"
spread = ", ".join(f"{p['makespan']['measured_us'] / 1000:.1f}" for p in pt)
ok = all(r["check"]["outputs_match"] for r in reports)
print(f"| {model} | {plan} | {status} | {segs} | {hand} | {predicted / 1000:.2f} | {measured / 1000:.2f} ({spread}) | "
      f"{100 * err:+.1f}%{req} | {busy} | {speed} | {'yes' if ok else 'NO'} |")
EOF
}

if [[ -z "${NO_HEADER:-}" ]]; then
  echo "| model | plan | solver | segments | cross-PU hand-offs | predicted ms | measured ms (runs) | error | busy ms cpu0 / cpu1 | speedup (vs single core; 2-request rows vs one after the other) | outputs = unsplit |"
  echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
fi
for model in "${ZOO[@]}"; do
  onnx="$MODELS/$model.onnx"
  d="$OUT/$model"
  mkdir -p "$d"
  "$BIN" partition "$onnx" "${COMMON[@]}" --solver single:cpu0 --out "$d/single.json" >"$d/single.log"
  "$BIN" map "$onnx" "${COMMON[@]}" --mode parallel --out "$d/parallel.json" >"$d/parallel.log"
  "$BIN" partition "$onnx" "${COMMON[@]}" --solver exact --time-limit "$TIME_LIMIT" --out "$d/exact.json" >"$d/exact.log"
  "$BIN" partition "$onnx" "${COMMON[@]}" --solver pair_serial --out "$d/serial2.json" >"$d/serial2.log"
  "$BIN" map "$onnx" "${COMMON[@]}" --mode concurrent --out "$d/concurrent.json" >"$d/concurrent.log"
  single="-"
  serial_us="-"
  for plan in single parallel exact serial2 concurrent; do
    "$BIN" split "$d/$plan.json" --out "$d/$plan" >/dev/null
    reports=()
    for k in $(seq 1 "$REPEATS"); do
      "$BIN" run "$d/$plan" --runs "$RUNS" --warmup "$WARMUP" --json "$d/$plan.run$k.json" >"$d/$plan.run$k.log"
      reports+=("$d/$plan.run$k.json")
    done
    median=$(/usr/bin/python3 -c 'import json,statistics,sys; print(statistics.median(json.load(open(p))["pu_threads"]["makespan"]["measured_us"] for p in sys.argv[1:]))' "${reports[@]}")
    case $plan in
      single) label="single core (cpu0)"; ref="-"; single=$median ;;
      parallel) label="map --mode parallel"; ref=$single ;;
      exact) label="exact, two cores"; ref=$single ;;
      serial2) label="2 requests, one after the other"; ref="-"; serial_us=$median ;;
      concurrent) label="2 requests, map --mode concurrent"; ref=$serial_us ;;
    esac
    row "$model" "$label" "$d/$plan.json" "$ref" "${reports[@]}"
  done
done
if [[ -z "${NO_HEADER:-}" ]]; then
  echo
  echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs, $(uname -sr); $(date -u '+%Y-%m-%d %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
fi
