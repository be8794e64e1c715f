#!/usr/bin/env bash
# Imports every model of ONNX's backend test corpus (ONNX 1.22's
# onnx/backend/test/data, kept by scripts/setup_onnx.sh) with `hetplan graph
# MODEL` (no options) and counts, per folder, the models that import, those
# refused with one line, those refused with more than one line, and crashes
# (a signal) or hangs (over 60 s). Prints a Markdown table and, with --list
# FILE, writes the names that import (tests/data/backend_corpus_imported.txt).
#   scripts/backend_corpus.sh [--bin build/hetplan] [--list FILE]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN=build/hetplan
LIST=""
while (($#)); do
  case "$1" in
    --bin) BIN="$2"; shift 2 ;;
    --list) LIST="$2"; shift 2 ;;
    *) echo "usage: $0 [--bin build/hetplan] [--list FILE]" >&2; exit 2 ;;
  esac
done
CORPUS=third_party/onnx/share/onnx/backend-test-data
[[ -d "$CORPUS" ]] || { echo "error: $CORPUS is missing: run scripts/setup_onnx.sh" >&2; exit 1; }
declare -A total ok oneline multiline crashed
imported=()
reasons=$(mktemp)
trap 'rm -f "$reasons"' EXIT
while IFS= read -r f; do
  rel="${f#"$CORPUS"/}"
  folder="${rel%%/*}"
  name="${rel%/model.onnx}"
  total[$folder]=$((${total[$folder]:-0} + 1))
  set +e
  err="$(timeout 60 "$BIN" graph "$f" 2>&1 >/dev/null)"
  rc=$?
  set -e
  if ((rc == 0)); then
    ok[$folder]=$((${ok[$folder]:-0} + 1))
    imported+=("$name")
  elif ((rc >= 124)); then
    crashed[$folder]=$((${crashed[$folder]:-0} + 1))
    echo "CRASH rc=$rc $rel" >&2
  elif [[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ]]; then
    oneline[$folder]=$((${oneline[$folder]:-0} + 1))
    printf '%s\t%s\n' "$rel" "$err" >>"$reasons"
  else
    multiline[$folder]=$((${multiline[$folder]:-0} + 1))
    echo "MULTILINE $rel: $err" >&2
  fi
done < <(find "$CORPUS" -name '*.onnx' | sort)
echo "| folder | models | import | refused, one line | refused, more lines | crashed or hung |"
echo "|---|---:|---:|---:|---:|---:|"
T=0 O=0 R=0 M=0 C=0
for folder in $(printf '%s\n' "${!total[@]}" | sort); do
  echo "| $folder | ${total[$folder]} | ${ok[$folder]:-0} | ${oneline[$folder]:-0} | ${multiline[$folder]:-0} | ${crashed[$folder]:-0} |"
  T=$((T + total[$folder])) O=$((O + ${ok[$folder]:-0})) R=$((R + ${oneline[$folder]:-0}))
  M=$((M + ${multiline[$folder]:-0})) C=$((C + ${crashed[$folder]:-0}))
done
echo "| all | $T | $O | $R | $M | $C |"
if [[ -n "$LIST" ]]; then
  {
    echo "# ONNX backend test models (ONNX $(cat third_party/onnx/.installed-* | cut -d' ' -f2)'s onnx/backend/test/data, kept by"
    echo "# scripts/setup_onnx.sh) that 'hetplan graph MODEL' imported at $(git describe --always --dirty): tests/graph/backend_corpus_test.cc"
    printf '%s\n' "${imported[@]}"
  } >"$LIST"
fi
# The refusals' messages, by their text without the file name, most common first.
cut -f2 "$reasons" | sed -E 's/^hetplan: error: [^:]*: //' | sed -E "s/'[^']*'/'…'/g; s/[0-9]+/N/g" | sort | uniq -c |
  sort -rn | head -40 >&2
