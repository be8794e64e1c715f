#!/usr/bin/env bash
# The peak resident memory of `hetplan partition` (its built-in profile:
# klein-arm, --warmup 2 --runs 10, no cache) per model, by /usr/bin/time's
# maximum RSS, with the profile's own line ("profile memory: peak ..., budget
# ..., estimated ...") and the boundary fit's cuts left out. Each model runs
# with the default budget (--max-memory unset) and, unless it is named in
# SKIP_UNBOUNDED, with --max-memory 100G: every cut alive together, as the
# profiler ran before it had a budget (issue 58). Never run the unbounded
# mode on a model whose cuts need more than the machine has: the kernel's
# out-of-memory killer takes the machine down.
#
#   bench/profile_memory.sh [path/to/hetplan] MODEL...
#   SKIP_UNBOUNDED="seg1024.onnx" bench/profile_memory.sh build/hetplan build/models/resnet18.onnx seg1024.onnx
#
# bench/make_segmentation.py writes the 512x512 and 1024x1024 models.
set -euo pipefail
BIN=${1:-build/hetplan}
shift || true
echo "| model | budget | peak RSS GiB (time) | the profile's line | cuts left out |"
echo "|---|---|---:|---|---|"
for m in "$@"; do
  for mode in default 100G; do
    extra=()
    if [[ $mode == 100G ]]; then
      [[ " ${SKIP_UNBOUNDED:-} " == *" $(basename "$m") "* ]] && continue
      extra=(--max-memory 100G)
    fi
    out=$(/usr/bin/time -f "maxrss %M" "$BIN" partition "$m" --platform klein-arm --warmup 2 --runs 10 --no-cache \
      --out "$(mktemp -d)/p.json" "${extra[@]+"${extra[@]}"}" 2>&1) || { echo "$m $mode failed: $out" >&2; exit 1; }
    rss=$(echo "$out" | awk '/^maxrss/ {printf "%.2f", $2 / 1048576}')
    line=$(echo "$out" | grep -o "profile memory: .*" | sed 's/profile memory: //')
    left=$(echo "$out" | grep -o "the cuts into [0-9, ]* segments left out" | sed 's/the cuts into //; s/ segments left out//' || true)
    echo "| $(basename "$m") | $mode | $rss | $line | ${left:-none} |"
  done
done
