#!/usr/bin/env bash
# Label `builder` (docs/testing.md): ONNX Runtime GenAI's model builder run on
# this machine (third_party/builder-venv, scripts/setup_builder_venv.sh). Its
# fp32 and int4 models of a random LLaMA are make_decoders.py's decoder_genai
# forms node for node (tests/llm/check_builder.py); each plans with --llm on
# klein-arm, is exported to GenAI, runs with `run --generate` (the unsplit
# model's tokens), and GenAI generates from the export the tokens it generates
# from the builder's own folder.
#   tests/llm/builder_test.sh SOURCE_DIR HETPLAN_BINARY
set -euo pipefail
root=$1 hetplan=$2
builder=$root/third_party/builder-venv/bin/python genai=$root/third_party/genai-venv/bin/python
[ -x "$builder" ] || { echo "third_party/builder-venv is missing: run scripts/setup_builder_venv.sh"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$builder" "$root/tests/llm/check_builder.py" --out "$out" 2>/dev/null | grep -E "nodes|differ"
for p in fp32 int4; do
  "$hetplan" partition "$out/builder_$p/model.onnx" --platform klein-arm --llm prompt=16,new=8 --warmup 1 --runs 3 \
    --cache-dir "$out/cache" --out "$out/$p.json" | grep -E "^(prefill|decode|solver)"
  "$hetplan" export "$out/$p.json" --format ort-genai --out "$out/genai_$p" | tail -1
  "$hetplan" run "$out/genai_$p" --generate 8 --runs 1 --warmup 0 --json "$out/run_$p.json" | grep -E "^check"
  prompt=$("$genai" -c "import json; print(','.join(map(str, json.load(open('$out/run_$p.json'))['prompt_ids'])))")
  ours=$("$genai" "$root/tests/llm/genai_generate.py" "$out/genai_$p" --prompt "$prompt" 2>/dev/null | tail -1)
  theirs=$("$genai" "$root/tests/llm/genai_generate.py" "$out/builder_$p" --prompt "$prompt" --new 9 2>/dev/null | tail -1)
  "$genai" - "$out/run_$p.json" "$ours" "$theirs" <<'PY'
import json, sys
run, ours, theirs = json.load(open(sys.argv[1]))["tokens"], json.loads(sys.argv[2])["tokens"], json.loads(sys.argv[3])["tokens"]
n = min(len(ours), len(theirs))
print(f"GenAI on the export {ours}, on the builder's folder {theirs}, run --generate {run}")
sys.exit(0 if ours == run[:len(ours)] and ours[:n] == theirs[:n] and n > 0 else 1)
PY
done
