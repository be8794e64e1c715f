#!/usr/bin/env bash
# Where the exact search stalls on INT8 YOLOv5n (issue 63, goal 1): `partition --solver exact` at fusion
# `activation` over the CIM paper's grid corners (klein-arm and klein-x86 × 25/100 crossbars × T_mvm 50/1000 ns),
# each at 1 s, 10 s and 60 s, with the search's statistics (segments after the series decomposition, the largest
# segment, searches, branch-and-bound nodes; whether it spent its node budget and fell back to the paper's MIP) and
# its status, schedule, bound and gap at each limit. Host costs are
# measured once (the profile cache in OUT) and shared by every point.
#
#   bench/int8_search_stats.sh [HETPLAN] [ZOO_DIR] [OUT_DIR] [LIMITS]      (LIMITS default "1 10 60")
set -euo pipefail
BIN=${1:-build/hetplan}; ZOO=${2:-build/models}; OUT=${3:-$(mktemp -d /tmp/hetplan_int8stats.XXXXXX)}
LIMITS=${4:-1 10 60}
mkdir -p "$OUT"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); yolov5n_int8, --fusion activation, --warmup 5 --runs 20, limits: $LIMITS s"
echo "| platform | crossbars | T_mvm ns | limit s | status | schedule µs | bound µs | gap % | s | segments (largest) | searches | nodes | MIP after the search |"
echo "|---|---:|---:|---:|---|---:|---:|---:|---:|---|---:|---:|---|"
for platform in klein-arm klein-x86; do
  for xb in 25 100; do
    for t in 50 1000; do
      for limit in $LIMITS; do
        log="$OUT/$platform-$xb-$t-$limit.log"
        if ! "$BIN" partition "$ZOO/yolov5n_int8.onnx" --fusion activation --platform "$platform" \
             --set cim.crossbars="$xb" --set cim.mvm_latency_ns="$t" --solver exact --time-limit "$limit" \
             --warmup 5 --runs 20 --cache-dir "$OUT/cache" --out "$OUT/$platform-$xb-$t-$limit.json" >"$log" 2>&1; then
          echo "| $platform | $xb | $t | $limit | failed: $(tail -1 "$log") |"
          continue
        fi
        /usr/bin/python3 - "$OUT/$platform-$xb-$t-$limit.json" "$log" "$platform" "$xb" "$t" "$limit" <<'EOF'
import json, re, sys
s = json.load(open(sys.argv[1]))["solver"]
line = next(l for l in open(sys.argv[2]) if l.startswith("solver"))
m = re.search(r"(\d+) segments? \(largest (\d+) operators\), (\d+) searches, (\d+) branch-and-bound nodes", line)
seg, largest, searches, nodes = m.groups() if m else ("?", "?", "?", "?")
status = s["status"] + ("" if s["termination"] in ("proved", s["status"]) else f" ({s['termination']})")
def num(v, fmt):
    return "-" if v is None else format(v, fmt)
gap = s.get("gap")
print(f"| {sys.argv[3]} | {sys.argv[4]} | {sys.argv[5]} | {sys.argv[6]} | {status} | {num(s['objective'], ',.1f')} | "
      f"{num(s['bound'], ',.1f')} | {num(None if gap is None else 100 * gap, '.2f')} | {s['seconds']:.2f} | "
      f"{seg} ({largest}) | {searches} | {nodes} | {s.get('mip_solver', 'no')} |")
EOF
      done
    done
  done
done
echo "# files in $OUT"
