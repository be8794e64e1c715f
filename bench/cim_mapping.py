#!/usr/bin/python3
"""Crossbars per layer of VGG-8 as hetplan lays the weights out, beside what
NeuroSim's mapping and PUMA's configuration give (issue 44).

    /usr/bin/python3 bench/cim_mapping.py [--hetplan build/hetplan] [--model build/models/vgg8.onnx]

Prints three Markdown tables and exits 1 if any count differs:

1. 128x128 arrays, 8-bit weights, 1- and 2-bit cells in adjacent columns
   (klein-arm with those keys set): hetplan's crossbars per layer beside the
   subarrays NeuroSim's mapping gives (the formulas below).
2. NeuroSim's published floorplan for that network with 2-bit cells: hetplan's
   crossbars times NeuroSim's published duplication per layer equal the
   subarrays of the tiles NeuroSim allocates.
3. The `puma` preset (16-bit weights in 2-bit cells, each slice in a crossbar
   of its own): hetplan's crossbars beside PUMA's configuration: 128x128
   logical tiles of the layer's matrix, each 8 physical crossbars.

Sources (numbers only; no code taken):
- The network: NeuroSim's NetWork_VGG8.csv (neurosim/DNN_NeuroSim_V1.4 at
  ac828e6723bf077c9b1423c5c72ff6e4981e90f4, Inference_pytorch/NeuroSIM/;
  the same in V1.3 at 388f421204cd97b0b980f79ce92d4b8c6e4c3d44): rows
  (H, W, Cin, kH, kW, Cout, pool, stride), below as LAYERS.
- The mapping (same commit, NeuroSIM/main.cpp l.142, Chip.cpp
  ChipDesignInitialize l.78-185, TileDesignCM/NM l.1140-1178): a synapse
  takes numColPerSynapse = ceil(synapseBit / cellBit) columns; a layer is
  "conventionally" mapped as a (Cin*kH*kW) x (Cout*numColPerSynapse) matrix,
  or "novel" mapped (3x3 layers with Cin*9 >= 128 rows) with one processing
  element per kernel position, each a Cin x (Cout*numColPerSynapse) matrix.
  At subarray granularity (128x128) a conventional layer takes
  ceil(Cin*kH*kW/128) * ceil(Cout*c/128) subarrays, a novel one
  kH*kW * ceil(Cin/128) * ceil(Cout*c/128).
- The published floorplan (NeuroSim V1.4 manual, Fig. 27 = V1.3 manual
  Fig. 24: 8-bit VGG-8, 2-bit RRAM cells, 128x128 subarrays, layer by
  layer): tiles per layer 1, 1, 2, 2, 4, 4, 32, 1 with a conventional tile of
  1024x1024 (64 subarrays) and a novel tile of 9 PEs of 512x512 (144
  subarrays); speed-up (weight duplication) per layer 16, 4, 4, 2, 2, 1, 1, 8.
- PUMA's configuration (Aayush-Ankit/puma-simulator at
  a206f75a4b253cbca9c47ca775c8359b232f7495, include/config.py): 128x128
  crossbars (xbar_size), 2-bit cells (xbar_bits), 16-bit weights, 8 physical
  crossbars per logical one (phy2log_ratio = num_bits / xbar_bits).
"""

import argparse
import json
import math
import subprocess
import sys

# (H, W, Cin, kH, kW, Cout, pool, stride): NetWork_VGG8.csv
LAYERS = [
    (32, 32, 3, 3, 3, 128, 0, 1),
    (32, 32, 128, 3, 3, 128, 1, 1),
    (16, 16, 128, 3, 3, 256, 0, 1),
    (16, 16, 256, 3, 3, 256, 1, 1),
    (8, 8, 256, 3, 3, 512, 0, 1),
    (8, 8, 512, 3, 3, 512, 1, 1),
    (1, 1, 8192, 1, 1, 1024, 0, 1),
    (1, 1, 1024, 1, 1, 10, 0, 1),
]
SUBARRAY = 128
PUBLISHED_TILES = [1, 1, 2, 2, 4, 4, 32, 1]
PUBLISHED_SPEEDUP = [16, 4, 4, 2, 2, 1, 1, 8]
CM_TILE_SUBARRAYS = (1024 // SUBARRAY) ** 2       # 64
NM_TILE_SUBARRAYS = 9 * (512 // SUBARRAY) ** 2    # 144


def novel(layer):
    _, _, cin, kh, kw, _, _, _ = layer
    return kh * kw == 9 and cin * kh * kw >= SUBARRAY


def neurosim_subarrays(layer, cell_bits, weight_bits=8):
    _, _, cin, kh, kw, cout, _, _ = layer
    c = math.ceil(weight_bits / cell_bits)
    if novel(layer):
        return kh * kw * math.ceil(cin / SUBARRAY) * math.ceil(cout * c / SUBARRAY)
    return math.ceil(cin * kh * kw / SUBARRAY) * math.ceil(cout * c / SUBARRAY)


def puma_crossbars(layer):
    _, _, cin, kh, kw, cout, _, _ = layer
    return math.ceil(cin * kh * kw / 128) * math.ceil(cout / 128) * (16 // 2)


def hetplan_crossbars(hetplan, model, platform, sets):
    cmd = [hetplan, "platform", "layers", platform, model, "--json"]
    for s in sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = json.loads(out)["pus"]["cim"]["operators"]
    return [r["crossbars"] for r in rows], [r["name"] for r in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hetplan", default="build/hetplan")
    ap.add_argument("--model", default="build/models/vgg8.onnx")
    a = ap.parse_args()
    bad = 0

    geometry = ["cim.crossbar_rows=128", "cim.crossbar_cols=128", "cim.weight_bits=8"]
    per_cell = {}
    for cell in (1, 2):
        per_cell[cell], names = hetplan_crossbars(a.hetplan, a.model, "klein-arm",
                                                  geometry + [f"cim.bits_per_cell={cell}"])
    if len(names) != len(LAYERS):
        sys.exit(f"{a.model}: {len(names)} CIM operators, NeuroSim's VGG-8 has {len(LAYERS)} layers")
    print("| layer | operator | mapping | NeuroSim 1-bit | hetplan 1-bit | NeuroSim 2-bit | hetplan 2-bit |")
    print("|---:|---|---|---:|---:|---:|---:|")
    for i, layer in enumerate(LAYERS):
        ns = [neurosim_subarrays(layer, c) for c in (1, 2)]
        hp = [per_cell[1][i], per_cell[2][i]]
        bad += sum(x != y for x, y in zip(ns, hp))
        print(f"| {i + 1} | `{names[i]}` | {'novel' if novel(layer) else 'conventional'} | "
              f"{ns[0]} | {hp[0]} | {ns[1]} | {hp[1]} |")
    print(f"| all | | | {sum(neurosim_subarrays(l, 1) for l in LAYERS)} | {sum(per_cell[1])} | "
          f"{sum(neurosim_subarrays(l, 2) for l in LAYERS)} | {sum(per_cell[2])} |")

    print()
    print("| layer | hetplan 2-bit | x published speed-up | = subarrays | published tiles x subarrays a tile |")
    print("|---:|---:|---:|---:|---:|")
    for i, layer in enumerate(LAYERS):
        dup = per_cell[2][i] * PUBLISHED_SPEEDUP[i]
        tile = NM_TILE_SUBARRAYS if novel(layer) else CM_TILE_SUBARRAYS
        alloc = PUBLISHED_TILES[i] * tile
        bad += dup != alloc
        print(f"| {i + 1} | {per_cell[2][i]} | {PUBLISHED_SPEEDUP[i]} | {dup} | {PUBLISHED_TILES[i]} x {tile} = {alloc} |")

    print()
    puma, _ = hetplan_crossbars(a.hetplan, a.model, "puma", [])
    print("| layer | PUMA (logical tiles x 8) | hetplan `puma` |")
    print("|---:|---:|---:|")
    for i, layer in enumerate(LAYERS):
        ref = puma_crossbars(layer)
        bad += ref != puma[i]
        print(f"| {i + 1} | {ref} | {puma[i]} |")
    print(f"| all | {sum(puma_crossbars(l) for l in LAYERS)} | {sum(puma)} |")
    if bad:
        print(f"\n{bad} counts differ", file=sys.stderr)
        return 1
    print("\nevery count equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
