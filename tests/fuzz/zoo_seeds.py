#!/usr/bin/python3
"""Writes fuzz seeds from zoo models: each model with its weights turned into
external-data references (dims and dtypes kept, no data), so that the whole
graph structure of a real model fits in a few hundred KiB. The importer
opens no weights' external data (it only sizes them), so these seeds import
like the real model; the integer tensors and the tiny ones (shapes, axes,
Resize scales), which it would read, keep their data.

    /usr/bin/python3 tests/fuzz/zoo_seeds.py --out DIR MODEL.onnx...
"""
import argparse
import os
import sys

import onnx
from onnx import TensorProto


KEEP = (TensorProto.INT64, TensorProto.INT32)


def strip(m):
    for t in m.graph.initializer:
        if t.data_type in KEEP or len(t.SerializeToString()) <= 256:
            continue
        for f in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data", "raw_data"):
            t.ClearField(f)
        del t.external_data[:]
        t.data_location = TensorProto.EXTERNAL
        kv = t.external_data.add()
        kv.key, kv.value = "location", "weights.bin"
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-bytes", type=int, default=256 << 10)
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for path in args.models:
        data = strip(onnx.load(path, load_external_data=False)).SerializeToString()
        name = "zoo_structure_" + os.path.basename(path)
        if len(data) > args.max_bytes:
            print(f"{name}: {len(data)} bytes, over --max-bytes; skipped")
            continue
        with open(os.path.join(args.out, name), "wb") as fh:
            fh.write(data)
        print(f"{name}: {len(data)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
