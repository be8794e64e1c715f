#!/usr/bin/python3
"""The `neurosim-rram` preset's energies, fitted to NeuroSim's published VGG-8
breakdown, and hetplan's energy per inference against NeuroSim's (issue 44).

    /usr/bin/python3 bench/neurosim_energy.py [--hetplan build/hetplan] [--zoo build/models] \
        [--second MODEL.onnx NETWORK.csv NEUROSIM_STDOUT]

1. Counts, for NeuroSim's VGG-8 as NeuroSim evaluates it, the events each of
   the preset's energy keys prices (conversions, array reads, bytes) and
   divides NeuroSim's published energies by them: the preset's values.
2. Runs `hetplan platform layers neurosim-rram build/models/vgg8.onnx` and
   sets its energy per inference and ADC share beside NeuroSim's (the fit's
   own network: the gap is the difference between hetplan's operator graph and
   NeuroSim's layer table, e.g. padded against valid convolutions).
3. With --second (repeatable), the same for a network whose NeuroSim run
   (its stdout; bench/neurosim_trace.py makes its inputs) is given: the check
   of the fitted model on a network it was not fitted to.

Sources (numbers only):
- VGG-8's layer table: NeuroSim's NetWork_VGG8.csv (neurosim/DNN_NeuroSim_V1.3
  at 388f421204cd97b0b980f79ce92d4b8c6e4c3d44, Inference_pytorch/NeuroSIM/).
  NeuroSim counts (H - kH + 1) / stride * (W - kW + 1) / stride input vectors
  a layer (Chip.cpp, ChipCalculatePerformance), 1 for a fully connected one.
- NeuroSim's mapping: ceil(8 / cell bits) columns a weight (main.cpp l.142);
  a 3x3 layer of at least 128 rows in nine kernel-position matrices of Cin
  rows, otherwise one (Cin*kH*kW)-row matrix (Chip.cpp, ChipDesignInitialize);
  128x128 subarrays, all 128 rows read at once (parallelRead 128), 8-bit
  inputs one bit a cycle.
- The published run: the NeuroSim V1.3 manual, Fig. 24 (= V1.4 manual
  Fig. 27): 8-bit VGG-8 on CIFAR-10, 2-bit RRAM cells, 22 nm, layer by layer:
  readDynamicEnergy 3.77518e7 pJ; ADC 1.8274e7 pJ, accumulation 5.16853e6 pJ,
  other peripheries 1.43092e7 pJ (these three sum to the total; the buffer's
  412,969 pJ and the interconnect's 8.94262e6 pJ are inside "other").
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cim_mapping import LAYERS as VGG8  # noqa: E402  (NetWork_VGG8.csv's rows)

PUBLISHED = {"total": 3.77518e7, "adc": 1.8274e7, "accumulation": 5.16853e6, "other": 1.43092e7,
             "buffer": 412969.0, "interconnect": 8.94262e6}
SUB = 128
CELL_BITS, WEIGHT_BITS, INPUT_BITS = 2, 8, 8


def events(layer):
    """Conversions, array reads and bytes moved of one layer as NeuroSim evaluates it."""
    h, w, cin, kh, kw, cout, _, stride = layer
    vectors = ((h - kh + 1) // stride) * ((w - kw + 1) // stride)
    cols = cout * math.ceil(WEIGHT_BITS / CELL_BITS)
    if kh * kw == 9 and cin * 9 >= SUB:
        row_tiles = 9 * math.ceil(cin / SUB)
    else:
        row_tiles = math.ceil(cin * kh * kw / SUB)
    col_tiles = math.ceil(cols / SUB)
    cycles = vectors * INPUT_BITS
    return {"conversions": cycles * row_tiles * cols,
            "reads": cycles * row_tiles * col_tiles,
            "bytes": h * w * cin + vectors * cout}  # 8-bit activations in and out


def fit():
    tot = {"conversions": 0, "reads": 0, "bytes": 0}
    for layer in VGG8:
        for k, v in events(layer).items():
            tot[k] += v
    buffer_pj = PUBLISHED["buffer"] + PUBLISHED["interconnect"]
    return tot, {
        "adc_energy_pj": PUBLISHED["adc"] / tot["conversions"],
        "shift_add_energy_pj": PUBLISHED["accumulation"] / tot["conversions"],
        "buffer_energy_pj_per_byte": buffer_pj / tot["bytes"],
        "array_energy_pj": (PUBLISHED["other"] - buffer_pj) / tot["reads"],
    }


def hetplan_energy(hetplan, model, sets=()):
    cmd = [hetplan, "platform", "layers", "neurosim-rram", model, "--json"]
    for s in sets:
        cmd += ["--set", s]
    u = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)["pus"]["cim"]
    adc = sum(r["energy_pj"]["adc"] for r in u["operators"])
    return u["energy_pj"], adc / u["energy_pj"], len(u["operators"])


def neurosim_stdout(path):
    """Chip totals from a NeuroSim run's stdout."""
    text = open(path, encoding="utf-8", errors="replace").read()

    def last(pattern):
        m = re.findall(pattern, text)
        if not m:
            sys.exit(f"{path}: no line matching {pattern!r}; give the stdout of NeuroSim's main")
        return float(m[-1])
    total = last(r"Chip total readDynamicEnergy is:\s*([0-9.eE+-]+)pJ")
    adc = last(r"ADC \(.*?\) readDynamicEnergy is\s*:\s*([0-9.eE+-]+)pJ")  # the last: the chip's
    return total, adc / total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hetplan", default="build/hetplan")
    ap.add_argument("--zoo", default="build/models")
    ap.add_argument("--second", nargs=3, action="append", default=[], metavar=("MODEL", "NETWORK", "STDOUT"),
                    help="a network NeuroSim was run on here (repeatable)")
    a = ap.parse_args()
    tot, values = fit()
    print("NeuroSim's VGG-8 events per image (2-bit cells, 8-bit weights and inputs):")
    print(f"  conversions {tot['conversions']:,}, array reads {tot['reads']:,}, bytes {tot['bytes']:,}")
    print("fitted energies (the neurosim-rram preset's):")
    for k, v in values.items():
        print(f"  {k}: {v:.6g}")
    share = PUBLISHED["adc"] / PUBLISHED["total"]
    e, s, n = hetplan_energy(a.hetplan, f"{a.zoo}/vgg8.onnx")
    print()
    print("| network | NeuroSim energy µJ | hetplan energy µJ | ratio | NeuroSim ADC share | hetplan ADC share |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| VGG-8 (fitted; published run) | {PUBLISHED['total'] * 1e-6:.2f} | {e * 1e-6:.2f} | "
          f"{e / PUBLISHED['total']:.3f} | {100 * share:.1f} % | {100 * s:.1f} % |")
    for model, network, out in a.second:
        total, adc_share = neurosim_stdout(out)
        e2, s2, _ = hetplan_energy(a.hetplan, model)
        print(f"| {model.split('/')[-1]} ({network}, NeuroSim run here) | {total * 1e-6:.2f} | {e2 * 1e-6:.2f} | "
              f"{e2 / total:.3f} | {100 * adc_share:.1f} % | {100 * s2:.1f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
