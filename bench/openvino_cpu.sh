#!/usr/bin/env bash
# ONNX Runtime's CPU against OpenVINO's CPU device on the zoo (issue 62,
# docs/openvino.md): each model profiled by `hetplan profile` with both
# runtimes on one thread, then one table row per model (whole-model medians,
# each profiler's sum of operators against its whole model, OpenVINO's
# executed (fused) nodes, as BIDENT's Table I counts them for FP32 and INT8)
# and one row per operator type (the operators' times added over the models).
#
#   bench/openvino_cpu.sh [--warmup W] [--runs R] [--out DIR] [MODEL ...]
#
# MODEL: a zoo name (build/models/MODEL.onnx). Default: resnet18, mobilenetv2,
# googlenet, yolov5n, vgg8, and the INT8 exports of ResNet-18 and YOLOv5n, at
# --warmup 10 --runs 50.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
warmup=10 runs=50 out= models=()
while [ $# -gt 0 ]; do
  case "$1" in
    --warmup) warmup=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    --*) echo "bench/openvino_cpu.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
[ ${#models[@]} -gt 0 ] || models=(resnet18 mobilenetv2 googlenet yolov5n vgg8 resnet18_int8 yolov5n_int8)
out=${out:-$(mktemp -d /tmp/hetplan_openvino_cpu.XXXXXX)}
mkdir -p "$out"
hetplan=${HETPLAN_BINARY:-$root/build/hetplan}
zoo=${HETPLAN_ZOO_DIR:-$root/build/models}
cat >"$out/platform.yaml" <<'YAML'
name: ort-and-openvino
description: "this host's CPU, once through ONNX Runtime and once through OpenVINO"
pus:
  - {name: ort, kind: cpu, cost: profile}
  - {name: ov, kind: cpu, cost: profile, runtime: openvino, device: CPU}
YAML
echo "# $(date -u +%Y-%m-%dT%H:%MZ) · $(uptime | sed 's/.*load average: /load /') · warmup $warmup, runs $runs, 1 thread"
for m in "${models[@]}"; do
  [ -f "$zoo/$m.onnx" ] || { echo "bench/openvino_cpu.sh: $zoo/$m.onnx missing (build the zoo)" >&2; exit 1; }
  for pu in ort ov; do
    "$hetplan" profile "$zoo/$m.onnx" --platform "$out/platform.yaml" --pu "$pu" --warmup "$warmup" --runs "$runs" \
      --out "$out/$m.$pu.csv" --json "$out/$m.$pu.json" >"$out/$m.$pu.log"
  done
done
/usr/bin/python3 - "$out" "$zoo" "${models[@]}" <<'PY'
import collections, json, sys
import onnx
out, zoo, models = sys.argv[1], sys.argv[2], sys.argv[3:]
def load(m, pu):
    return json.load(open(f"{out}/{m}.{pu}.json"))
def op_us(t):
    return {r["op_name"]: r["exec_us"] for r in t["rows"] if r["kind"] == "op"}
def whole_us(t):
    return next(r["exec_us"] for r in t["rows"] if r["kind"] == "model")
print("| model | operators | ORT whole ms | ORT Σ ops err | OpenVINO whole ms | OpenVINO Σ ops err | OpenVINO executed nodes | ONNX nodes named / through graph |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
by_type = collections.defaultdict(lambda: [0.0, 0.0])
for m in models:
    a, b = load(m, "ort"), load(m, "ov")
    types = {n.name: n.op_type for n in onnx.load(f"{zoo}/{m}.onnx", load_external_data=False).graph.node}
    ua, ub = op_us(a), op_us(b)
    for name in ua:
        t = types.get(name, "?") + (" (INT8)" if m.endswith("_int8") else "")
        by_type[t][0] += ua[name]
        by_type[t][1] += ub.get(name, 0.0)
    ma, mb = a["meta"], b["meta"]
    print(f"| {m} | {ma['operators']} | {whole_us(a)/1e3:.2f} | {float(ma['relative_error'])*100:+.1f} % | "
          f"{whole_us(b)/1e3:.2f} | {float(mb['relative_error'])*100:+.1f} % | {mb['executed_nodes']} | "
          f"{mb['onnx_nodes_named']} / {mb['onnx_nodes_attributed']} of {mb['onnx_nodes']} |")
print()
print("| operator type | ORT ms (Σ over the models) | OpenVINO ms | OpenVINO / ORT |")
print("|---|---:|---:|---:|")
for t, (x, y) in sorted(by_type.items(), key=lambda kv: -kv[1][0]):
    if x < 1 and y < 1:
        continue
    print(f"| {t} | {x/1e3:.2f} | {y/1e3:.2f} | {y/x if x else float('nan'):.2f} |")
PY
echo "(tables in $out)"
