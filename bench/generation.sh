#!/usr/bin/env bash
# LLM generation planned as one request (docs/generation.md): `hetplan
# partition --llm` on the decoders tests/llm/make_decoders.py writes, one
# table row per point: TTFT, TPOT at the first and last step, decode tokens/s,
# energy per decode token, crossbars kept, the pair's status, its search
# (nodes, phase solves), the references' request latency over the plan's (the
# best single PU; the better phase's placement kept for both phases) and the
# wall time of the command (profiling included unless the cache holds it).
#
#   bench/generation.sh [--size test|1b] [--prompt P] [--new N] [--time-limit S] [--warmup W --runs R]
#                       [--cache-dir DIR] [--out DIR] [POINT ...]
#
# A POINT is MODEL@PLATFORM[@PU.KEY=VALUE ...], MODEL one of make_decoders.py's
# (decoder, decoder_tied, decoder_int4, decoder_fp16, decoder_opset23, decoder_genai,
# decoder_genai_int4).
# Defaults: --size test, P=16, N=8, 10 s, every test form on klein-arm and
# decoder at 10 and 5 crossbars; with --size 1b: decoder_int4 at P=N=128 on
# klein-arm, puma and soc-example with --warmup 2 --runs 5 (the 1B model is
# 0.9 GB of external data, a profile of it about 80 s and 13 GB resident at
# the peak, four profiles a point).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
size=test prompt=16 new=8 limit=10 cache= out= warmup= runs=
points=()
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size=$2; shift 2 ;;
    --prompt) prompt=$2; shift 2 ;;
    --new) new=$2; shift 2 ;;
    --time-limit) limit=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --cache-dir) cache=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    --*) echo "bench/generation.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) points+=("$1"); shift ;;
  esac
done
out=${out:-$(mktemp -d /tmp/hetplan_generation.XXXXXX)}
cache=${cache:-$out/cache}
mkdir -p "$out/models"
# The 1B model's defaults hold for points given too.
if [ "$size" = 1b ]; then
  [ "$prompt" = 16 ] && prompt=128
  [ "$new" = 8 ] && new=128
  warmup=${warmup:-2} runs=${runs:-5}
fi
if [ ${#points[@]} -eq 0 ]; then
  if [ "$size" = 1b ]; then
    points=(decoder_int4@klein-arm decoder_int4@puma decoder_int4@soc-example)
  else
    points=(decoder@klein-arm decoder_tied@klein-arm decoder_int4@klein-arm decoder_fp16@klein-arm
            decoder_opset23@klein-arm decoder_genai@klein-arm decoder_genai_int4@klein-arm
            decoder@klein-arm@cim.crossbars=10 decoder@klein-arm@cim.crossbars=5)
  fi
fi
models=$(printf '%s\n' "${points[@]}" | cut -d@ -f1 | sort -u | sed 's/$/.onnx/' | paste -sd,)
"$root/third_party/models-venv/bin/python" "$root/tests/llm/make_decoders.py" --out "$out/models" --size "$size" \
  --only "$models" >/dev/null
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); size $size, P=$prompt, N=$new, --time-limit $limit${warmup:+, --warmup $warmup}${runs:+ --runs $runs}"
echo "| model | platform | TTFT µs | TPOT first µs | TPOT last µs | tokens/s | µJ/token | crossbars | rewrites (prefill / decode step) | endurance h | status | nodes, solves | single PU | one placement | wall s |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---|---|---:|---:|---:|"
i=0
for point in "${points[@]}"; do
  IFS=@ read -r model platform set <<<"$point"
  i=$((i + 1))
  file="$out/point$i.json"
  args=(partition "$out/models/$model.onnx" --llm "prompt=$prompt,new=$new" --platform "$platform"
        --time-limit "$limit" --cache-dir "$cache" --out "$file")
  if [ -n "$set" ]; then
    IFS=@ read -r -a sets <<<"$set"
    for kv in "${sets[@]}"; do args+=(--set "$kv"); done
  fi
  [ -n "$warmup" ] && args+=(--warmup "$warmup")
  [ -n "$runs" ] && args+=(--runs "$runs")
  start=$(date +%s%N)
  if ! "$root/build/hetplan" "${args[@]}" >"$out/point$i.log" 2>&1; then
    echo "| $model | $platform ${set} | failed: $(tail -1 "$out/point$i.log") |"
    continue
  fi
  wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  /usr/bin/python3 - "$file" "$model" "$platform${set:+ $set}" "$wall_ms" <<'EOF'
import json, sys
g = json.load(open(sys.argv[1]))
m, s = g["metrics"], g["solver"]
xb = ", ".join(f"{k} {v}" for k, v in m["crossbars"].items()) or "-"
e = m["energy_per_token_uj"]
def ratio(key, name):
    r = g["references"][key]
    return "-" if r["request_us"] is None else f"{r['request_us'] / m['request_us']:.2f}× ({r[name]})"
nodes = s["coupling"].split(": ", 1)[1] if ": " in s["coupling"] else s["coupling"]
rw = m.get("rewrites")
rewrites = "-" if rw is None else f"{rw['prefill']['operators']} / {rw['decode']['operators']}"
hours = "-" if rw is None else ("no wear" if rw["endurance_hours"] is None else f"{rw['endurance_hours']:.3g}")
print(f"| {sys.argv[2]} | {sys.argv[3].replace('@', ' ')} | {m['ttft_us']:,.1f} | {m['tpot_first_us']:,.1f} | {m['tpot_last_us']:,.1f} | "
      f"{m['tokens_per_s']:,.1f} | {'-' if e is None else f'{e:,.1f}'} | {xb} | {rewrites} | {hours} | {s['status']} (gap {100 * s['gap']:.3g} %) | "
      f"{nodes} | {ratio('single_pu', 'pu')} | {ratio('one_placement', 'from')} | {int(sys.argv[4]) / 1000:.1f} |")
EOF
done
echo "# files in $out"
