#!/usr/bin/python3
"""Synthetic per-layer weight/input CSVs for NeuroSim V1.3 (DNN_NeuroSim_V1.3/Inference_pytorch/NeuroSIM/main),
so that NeuroSim's C++ simulator can be run on a network without its PyTorch wrapper (issue 44; the run and its
numbers: docs/results.md, "CIM energy against NeuroSim"). NeuroSim itself is built outside this repository:

    # NeuroSim V1.3 at 388f421204cd97b0b980f79ce92d4b8c6e4c3d44, Param.cpp unchanged
    cd DNN_NeuroSim_V1.3/Inference_pytorch/NeuroSIM && make -j2
    /usr/bin/python3 bench/neurosim_trace.py NetWork_ResNet18.csv data/resnet18 normal 2
    ./main NetWork_ResNet18.csv 8 8 $(cat data/resnet18/args.txt) > resnet18.out
    /usr/bin/python3 bench/neurosim_energy.py --second build/models/resnet18.onnx NetWork_ResNet18.csv resnet18.out

Usage: neurosim_trace.py NETWORK.csv OUT_DIR [normal|wage] [SEED]; ZERO_FRAC (default 0.5) sets the share of zero
activations.

Mirrors utee/hook.py of the V1.3 wrapper:
  weight<i>.csv : (Cin*kH*kW) rows x Cout cols, real values in [-1,1] = WAGE Q(w,8) = round(w*128)/128
                  row index = c*kH*kW + ky*kW + kx (PyTorch weight.reshape(Cout,-1).T)
  input<i>.csv  : (Cin*kH*kW) rows x (numVectors*8) cols of 0/1; column v*8+b = bit b of the
                  im2col vector v, b=0 is the sign bit (dec2bin two's complement, -1 weight), then MSB..LSB,
                  value quantised as k/128 (delta = 1/2^(8-1)).
Data: weights ~ N(0, 1/fan_in) (mode 'normal') or WAGE init uniform(-(1-1/128), 1-1/128) (mode 'wage');
      activations post-ReLU: each entry 0 with prob 0.5, else uniform integer k in 1..127 (value k/128).
Feature map per layer drawn iid (no propagation); im2col with PyTorch padding k//2 and the CSV stride;
only the first numInVector vectors that NeuroSim reads are written
(numInVector = int((H-kH+1)/s * (W-kW+1)/s), Chip.cpp ChipCalculatePerformance).
"""
import math, os, random, sys

net_csv, outdir, wmode = sys.argv[1], sys.argv[2], (sys.argv[3] if len(sys.argv) > 3 else 'normal')
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
rng = random.Random(seed)
NB = 8
ZERO_FRAC = float(os.environ.get("ZERO_FRAC", "0.5"))  # fraction of zero activations
os.makedirs(outdir, exist_ok=True)

# bit strings per activation level k (0..127): sign bit 0 then 7 magnitude bits MSB first
def bits(k):
    out = ['0']
    rest = k
    base = 128
    for _ in range(NB - 1):
        base //= 2
        if rest >= base:
            out.append('1'); rest -= base
        else:
            out.append('0')
    return ','.join(out)
BITSTR = [bits(k) for k in range(128)]
WSTR = {k: repr(k / 128.0) for k in range(-127, 128)}

layers = []
for line in open(net_csv):
    line = line.strip()
    if line:
        layers.append([int(float(x)) for x in line.split(',')])

stats = []
files = []
for li, (H, W, C, KH, KW, CO, pool, S) in enumerate(layers, start=1):
    rows = C * KH * KW
    fan_in = rows
    # ---- weights
    wf = os.path.join(outdir, 'weight%d.csv' % li)
    std = math.sqrt(1.0 / fan_in)
    lim = 1 - 1 / 128.0
    nz = 0; tot = 0; hist_abs = 0
    with open(wf, 'w') as f:
        for r in range(rows):
            ks = []
            for c in range(CO):
                if wmode == 'normal':
                    w = rng.gauss(0.0, std)
                else:
                    w = rng.uniform(-lim, lim)
                k = int(round(w * 128))
                k = max(-127, min(127, k))
                nz += (k != 0); tot += 1; hist_abs += abs(k)
                ks.append(WSTR[k])
            f.write(','.join(ks) + '\n')
    # ---- inputs
    nvec_ns = int((H - KH + 1) / S * (W - KW + 1) / S)
    P = KH // 2
    OH = (H + 2 * P - KH) // S + 1
    OW = (W + 2 * P - KW) // S + 1
    assert OH * OW >= nvec_ns, (li, OH, OW, nvec_ns)
    fmap = [[[0 if rng.random() < ZERO_FRAC else rng.randint(1, 127) for _ in range(W)] for _ in range(H)] for _ in range(C)]
    vec_pos = [(v // OW, v % OW) for v in range(nvec_ns)]
    inf = os.path.join(outdir, 'input%d.csv' % li)
    ones = 0; nzact = 0; acts = 0
    with open(inf, 'w') as f:
        for c in range(C):
            fm = fmap[c]
            for ky in range(KH):
                for kx in range(KW):
                    vals = []
                    for (oy, ox) in vec_pos:
                        y = oy * S + ky - P; x = ox * S + kx - P
                        a = fm[y][x] if (0 <= y < H and 0 <= x < W) else 0
                        vals.append(a)
                    acts += len(vals); nzact += sum(1 for a in vals if a)
                    ones += sum(bin(a).count('1') for a in vals)
                    f.write(','.join(BITSTR[a] for a in vals) + '\n')
    stats.append((li, rows, CO, nvec_ns, nz / tot, hist_abs / tot, nzact / acts, ones / (acts * NB)))
    files += [wf, inf]
    print('layer %d: W %dx%d nonzero-frac %.3f mean|k| %.2f LSB; IN %d vec, nonzero-act %.3f, 1-bit density %.3f'
          % (li, rows, CO, stats[-1][4], stats[-1][5], nvec_ns, stats[-1][6], stats[-1][7]), flush=True)

with open(os.path.join(outdir, 'args.txt'), 'w') as f:
    f.write(' '.join(files) + '\n')
