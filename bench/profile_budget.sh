#!/usr/bin/env bash
# What the built-in profile of `partition` costs on a slow model (issue 47):
# `partition --warmup 2 --runs 10` on ResNet-18 at a large input (about 1-3 s
# per inference on a 2-vCPU VM), once with the budget following --runs (the
# default) and once with the old fixed whole-model and boundary repetitions
# (--model-runs 50 --boundary-runs 10). Each run starts from an empty profile
# cache. Prints, per run: the whole model's median, the wall time of the
# command, the profile's stage lines as partition printed them (stderr is not
# a terminal), and the whole-model inferences the profile made besides the
# operators' runs, from the profile's own meta.
#
#   bench/profile_budget.sh [path/to/hetplan] [model] [shape]
#
# Defaults: build/hetplan, build/models/resnet18.onnx, input=1x3x1536x1536.
# Run it alone on the machine (uptime's load below 1).
set -euo pipefail

BIN=${1:-build/hetplan}
MODEL=${2:-build/models/resnet18.onnx}
SHAPE=${3:-input=1x3x1536x1536}
if [[ ! -x "$BIN" || ! -f "$MODEL" ]]; then
  echo "profile_budget: $BIN or $MODEL missing; build hetplan and the zoo (cmake --build build --target hetplan zoo)" >&2
  exit 2
fi
OUT=$(mktemp -d "${TMPDIR:-/tmp}/hetplan_profile_budget.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "model:   $MODEL --shape $SHAPE"
run() {
  local label=$1
  shift
  local dir="$OUT/$label"
  mkdir -p "$dir"
  local start end
  start=$(date +%s.%N)
  "$BIN" partition "$MODEL" --shape "$SHAPE" --platform klein-arm --warmup 2 --runs 10 "$@" \
    --cache-dir "$dir/cache" --out "$dir/s.json" >"$dir/out.txt" 2>"$dir/err.txt"
  end=$(date +%s.%N)
  python3 - "$label" "$start" "$end" "$dir" <<'EOF'
import glob, json, sys
label, start, end, d = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
meta = next(json.load(open(f))["meta"] for f in glob.glob(f"{d}/cache/**/*.json", recursive=True)
            if "meta" in json.load(open(f)))
model_s = float(meta["model_median_us"]) / 1e6 if "model_median_us" in meta else float(meta["in_context_plain_us"]) / 1e6
ops_s = float(meta["sum_of_op_medians_us"]) / 1e6
print(f"\n## {label}: model_runs {meta['model_runs']}, boundary_runs {meta.get('boundary_runs', 0)}")
print(f"whole model median {model_s:.2f} s; sum of operator medians {ops_s:.2f} s; partition wall {end - start:.0f} s")
print(f"operator runs: 12 x {ops_s:.2f} s = {12 * ops_s:.0f} s; rest (whole-model runs, boundary fit, sessions, "
      f"planning): {end - start - 12 * ops_s:.0f} s = {(end - start - 12 * ops_s) / model_s:.0f} model inferences")
print("stages:")
for line in open(f"{d}/err.txt"):
    if line.startswith("profiling"):
        print("  " + line.rstrip())
EOF
}
run "budget follows --runs (default)"
run "fixed budget (--model-runs 50 --boundary-runs 10)" --model-runs 50 --boundary-runs 10
