#!/usr/bin/env bash
# Throughput of `hetplan dse` on the CIM paper's Klein grid (4 models x 2
# platforms x 4 crossbar counts x 4 MVM latencies x the exact search and every
# baseline: 1024 points) as one process and under mpirun with 2, 3, ... ranks,
# printed as a Markdown table (docs/results.md#dse-under-mpi).
#
#   bench/dse_mpi.sh [path/to/hetplan] [models dir] [ranks...]
#
# Defaults: build/hetplan, build/models, ranks "1 2 3". One rank is the plain
# binary (no mpirun). Runs as root pass --allow-run-as-root; --oversubscribe is
# always given (this VM has 2 cores). The host costs come from the profile
# cache (.cache/hetplan): a first, untimed run fills it. REPEAT=n runs each
# count n times and keeps the fastest points phase.
set -euo pipefail

BIN=${1:-build/hetplan}
MODELS=${2:-build/models}
shift $(( $# > 2 ? 2 : $# ))
RANKS=("$@")
((${#RANKS[@]})) || RANKS=(1 2 3)
REPEAT=${REPEAT:-1}

if [[ ! -x "$BIN" ]]; then
  echo "dse_mpi: $BIN is not an executable; build it (ninja -C build hetplan) or pass its path" >&2
  exit 2
fi
MPIRUN=(mpirun --oversubscribe)
[[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)
OUT=$(mktemp -d "${TMPDIR:-/tmp}/hetplan_dse_mpi.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

ARGS=()
for m in resnet18 resnet50 mobilenetv2 yolov5n; do ARGS+=("$MODELS/$m.onnx"); done
ARGS+=(--platform klein-arm --platform klein-x86 --sweep cim.crossbars=25,50,100,200
       --sweep cim.mvm_latency_ns=50,100,500,1000 --solvers exact,baselines --time-limit 10 --warmup 20 --runs 200)

echo "filling the profile cache (untimed) ..." >&2
"$BIN" dse "${ARGS[@]}" --out "$OUT/warm.jsonl" >"$OUT/warm.log"

# field LOG REGEX: the first capture of REGEX (sed -E) in LOG.
field() { sed -nE "s/${2}.*/\1/p" "$1" | head -n 1; }

echo "| ranks | threads in all | points | wall s | loading + profiling s | points phase s | points/s (points phase) | points/s (wall) | messages in / out at rank 0 | bytes per result | rank 0 busy per result |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for n in "${RANKS[@]}"; do
  best=""
  for ((r = 0; r < REPEAT; ++r)); do
    log="$OUT/n$n.$r.log"
    rm -f "$OUT/n$n.jsonl"
    if [[ $n -eq 1 ]]; then
      "$BIN" dse "${ARGS[@]}" --out "$OUT/n$n.jsonl" >"$log"
    else
      "${MPIRUN[@]}" -n "$n" "$BIN" dse "${ARGS[@]}" --out "$OUT/n$n.jsonl" >"$log"
    fi
    solve=$(field "$log" '^wall .*points ([0-9.]+) s\)')
    if [[ -z "$best" ]] || awk "BEGIN{exit !($solve < $(field "$best" '^wall .*points ([0-9.]+) s\)'))}"; then
      best=$log
    fi
  done
  points=$(field "$best" '^points +([0-9]+) \(')
  wall=$(field "$best" '^wall +([0-9.]+) s')
  prof=$(field "$best" '^wall .*profiling ([0-9.]+) s,')
  solve=$(field "$best" '^wall .*points ([0-9.]+) s\)')
  threads=$(field "$best" '^host .*, ([0-9]+) worker thread')
  if [[ $n -gt 1 ]]; then
    msg_in=$(field "$best" '^ranks .*got ([0-9]+) messages')
    results=$(field "$best" '^ranks .*messages \(([0-9]+) results')
    kib=$(field "$best" '^ranks .*results, ([0-9.]+) KiB')
    msg_out=$(field "$best" '^ranks .*sent ([0-9]+),')
    busy=$(field "$best" '^ranks .*busy ([0-9.]+) s')
    traffic="$msg_in / $msg_out"
    per_result=$(awk "BEGIN{printf \"%.0f\", $kib * 1024 / ($results > 0 ? $results : 1)}")
    per_busy=$(awk "BEGIN{printf \"%.0f µs\", $busy * 1e6 / $points}")
  else
    traffic="—" per_result="—" per_busy="—"
  fi
  printf '| %s | %s | %s | %s | %s | %s | %.0f | %.0f | %s | %s | %s |\n' "$n" "$threads" "$points" "$wall" "$prof" \
    "$solve" "$(awk "BEGIN{print $points / $solve}")" "$(awk "BEGIN{print $points / $wall}")" "$traffic" \
    "$per_result" "$per_busy"
done
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
