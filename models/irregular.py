#!/usr/bin/python3
"""Export seeded networks that no operator cuts: NAS cells, randomly wired
stages, dense skip grids (random weights, no downloads).

Run with Debian's interpreter (python3-torch, python3-onnx):

    /usr/bin/python3 models/irregular.py --out-dir build/models \
        [--models nasnet_s0,randwire_ws_s0,...] [--force]

A model name is <family>_s<seed>; the seed fixes both the wiring (genotype,
random graph) and the weights, so reruns write the same file. Families:

  nasnet       DARTS-style network (Liu et al. 2019): 8 cells, reductions at
               1/3 and 2/3, each cell reading the outputs of the two previous
               cells; a random genotype (two inputs and two ops per node from
               DARTS's primitives) drawn from the seed.
  randwire_ws  RandWire small regime (Xie et al. 2019): conv1, conv2, three
  randwire_er  random stages (Watts-Strogatz N=32 K=4 P=0.75, Erdos-Renyi
  randwire_ba  N=26 P=0.2, Barabasi-Albert N=24 M=5), each node a sum of
               its inputs then ReLU-SepConv3x3-BN, the stage output the mean
               of its sink nodes.
  unetpp       UNet++ (Zhou et al. 2018), depth 5: node X(i,j) concatenates
               every X(i,k<j) of its row with the upsampled X(i+1,j-1);
               each node a four-layer DenseNet block (every layer reads the
               concatenation of all before it); deep supervision heads
               averaged.
  bifpn        EfficientDet-style BiFPN neck (Tan et al. 2020) on a small
               five-level backbone: four BiFPN layers of top-down and
               bottom-up fast-normalised fusions (constant weights), Swish,
               SepConv-BN.

Exported like models/export.py: batch 1, static shapes, opset 13, eval(),
constant folding, input "input", BatchNorm statistics randomised (the
exporter folds BN into the Conv before it) and no Identity node left.
"""

import argparse
import collections
import os
import random
import signal
import sys
import tempfile
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export import randomize  # noqa: E402  (same directory)

OPSET = 13
FAMILIES = ["nasnet", "randwire_ws", "randwire_er", "randwire_ba", "unetpp", "bifpn"]
DEFAULT_MODELS = [f + "_s0" for f in FAMILIES]


# --------------------------------------------------------------------------
# DARTS-style NAS cells
# --------------------------------------------------------------------------

PRIMITIVES = ["max_pool_3x3", "avg_pool_3x3", "skip_connect", "sep_conv_3x3", "sep_conv_5x5",
              "dil_conv_3x3", "dil_conv_5x5"]


class ReLUConvBN(nn.Module):
    def __init__(self, c_in, c_out, k, stride, pad):
        super().__init__()
        self.op = nn.Sequential(nn.ReLU(inplace=False), nn.Conv2d(c_in, c_out, k, stride, pad, bias=False),
                                nn.BatchNorm2d(c_out))

    def forward(self, x):
        return self.op(x)


class DilConv(nn.Module):
    def __init__(self, c_in, c_out, k, stride, pad, dil):
        super().__init__()
        self.op = nn.Sequential(
            nn.ReLU(inplace=False),
            nn.Conv2d(c_in, c_in, k, stride, pad, dilation=dil, groups=c_in, bias=False),
            nn.Conv2d(c_in, c_out, 1, bias=False), nn.BatchNorm2d(c_out))

    def forward(self, x):
        return self.op(x)


class SepConv(nn.Module):
    def __init__(self, c_in, c_out, k, stride, pad):
        super().__init__()
        self.op = nn.Sequential(DilConv(c_in, c_in, k, stride, pad, 1), DilConv(c_in, c_out, k, 1, pad, 1))

    def forward(self, x):
        return self.op(x)


class FactorizedReduce(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.relu = nn.ReLU(inplace=False)
        self.c1 = nn.Conv2d(c_in, c_out // 2, 1, 2, bias=False)
        self.c2 = nn.Conv2d(c_in, c_out // 2, 1, 2, bias=False)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x):
        x = self.relu(x)
        return self.bn(torch.cat([self.c1(x), self.c2(x[:, :, 1:, 1:])], dim=1))


def make_op(name, c, stride):
    if name == "max_pool_3x3":
        return nn.MaxPool2d(3, stride, 1)
    if name == "avg_pool_3x3":
        return nn.AvgPool2d(3, stride, 1, count_include_pad=False)
    if name == "skip_connect":
        return nn.Identity() if stride == 1 else FactorizedReduce(c, c)
    if name == "sep_conv_3x3":
        return SepConv(c, c, 3, stride, 1)
    if name == "sep_conv_5x5":
        return SepConv(c, c, 5, stride, 2)
    if name == "dil_conv_3x3":
        return DilConv(c, c, 3, stride, 2, 2)
    if name == "dil_conv_5x5":
        return DilConv(c, c, 5, stride, 4, 2)
    raise ValueError(name)


def random_genotype(rng, steps=4):
    """Per node: two distinct earlier states and an op for each (DARTS never
    picks 'none'); normal and reduction cells differ."""
    def cell():
        nodes = []
        for i in range(steps):
            a, b = rng.sample(range(2 + i), 2)
            nodes.append(((rng.choice(PRIMITIVES), a), (rng.choice(PRIMITIVES), b)))
        return nodes
    return cell(), cell()


class Cell(nn.Module):
    def __init__(self, genotype, c_pp, c_p, c, reduction, reduction_prev):
        super().__init__()
        self.pre0 = FactorizedReduce(c_pp, c) if reduction_prev else ReLUConvBN(c_pp, c, 1, 1, 0)
        self.pre1 = ReLUConvBN(c_p, c, 1, 1, 0)
        self.nodes = genotype
        self.ops = nn.ModuleList()
        for (op_a, a), (op_b, b) in genotype:
            self.ops.append(make_op(op_a, c, 2 if reduction and a < 2 else 1))
            self.ops.append(make_op(op_b, c, 2 if reduction and b < 2 else 1))

    def forward(self, s0, s1):
        states = [self.pre0(s0), self.pre1(s1)]
        for i, ((_, a), (_, b)) in enumerate(self.nodes):
            states.append(self.ops[2 * i](states[a]) + self.ops[2 * i + 1](states[b]))
        return torch.cat(states[2:], dim=1)


class NasNet(nn.Module):
    def __init__(self, seed, c=32, cells=8, classes=10):
        super().__init__()
        normal, reduce = random_genotype(random.Random(seed))
        self.stem = nn.Sequential(nn.Conv2d(3, 3 * c, 3, padding=1, bias=False), nn.BatchNorm2d(3 * c))
        c_pp, c_p, c_cur = 3 * c, 3 * c, c
        self.cells = nn.ModuleList()
        reduction_prev = False
        for i in range(cells):
            reduction = i in (cells // 3, 2 * cells // 3)
            if reduction:
                c_cur *= 2
            self.cells.append(Cell(reduce if reduction else normal, c_pp, c_p, c_cur, reduction, reduction_prev))
            reduction_prev = reduction
            c_pp, c_p = c_p, 4 * c_cur
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c_p, classes)

    def forward(self, x):
        s0 = s1 = self.stem(x)
        for cell in self.cells:
            s0, s1 = s1, cell(s0, s1)
        return self.fc(torch.flatten(self.pool(s1), 1))


# --------------------------------------------------------------------------
# RandWire
# --------------------------------------------------------------------------

def watts_strogatz(rng, n, k, p):
    """Undirected ring lattice (each node to its k/2 neighbours on each side),
    each edge rewired with probability p (networkx's algorithm)."""
    adj = [set() for _ in range(n)]
    for i in range(n):
        for j in range(1, k // 2 + 1):
            adj[i].add((i + j) % n)
            adj[(i + j) % n].add(i)
    for j in range(1, k // 2 + 1):
        for i in range(n):
            w = (i + j) % n
            if rng.random() < p and w in adj[i]:
                choices = [u for u in range(n) if u != i and u not in adj[i]]
                if not choices:
                    continue
                u = rng.choice(choices)
                adj[i].discard(w)
                adj[w].discard(i)
                adj[i].add(u)
                adj[u].add(i)
    return [(min(a, b), max(a, b)) for a in range(n) for b in adj[a] if a < b]


def erdos_renyi(rng, n, p):
    return [(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < p]


def barabasi_albert(rng, n, m):
    """Start with m isolated nodes; each new node attaches to m distinct
    existing nodes chosen with probability proportional to degree."""
    edges, repeated, targets = [], [], list(range(m))
    for v in range(m, n):
        for t in set(targets):
            edges.append((t, v))
        repeated.extend(targets)
        repeated.extend([v] * m)
        chosen = set()
        while len(chosen) < m:
            chosen.add(rng.choice(repeated))
        targets = list(chosen)
    return sorted(set((min(a, b), max(a, b)) for a, b in edges))


class SepConvBN(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.relu = nn.ReLU()
        self.dw = nn.Conv2d(c_in, c_in, 3, stride, 1, groups=c_in, bias=False)
        self.pw = nn.Conv2d(c_in, c_out, 1, bias=False)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x):
        return self.bn(self.pw(self.dw(self.relu(x))))


class RandomStage(nn.Module):
    """A DAG over n nodes, edges oriented from the smaller index to the larger
    (Xie et al.'s node ordering); sources read the stage input with stride 2."""

    def __init__(self, edges, n, c_in, c_out):
        super().__init__()
        self.preds = [[a for a, b in edges if b == v] for v in range(n)]
        has_succ = {a for a, _ in edges}
        self.sinks = [v for v in range(n) if v not in has_succ]
        self.nodes = nn.ModuleList(
            SepConvBN(c_in if not self.preds[v] else c_out, c_out, 2 if not self.preds[v] else 1) for v in range(n))

    def forward(self, x):
        out = []
        for v, node in enumerate(self.nodes):
            if self.preds[v]:
                agg = out[self.preds[v][0]]
                for u in self.preds[v][1:]:
                    agg = agg + out[u]
            else:
                agg = x
            out.append(node(agg))
        y = out[self.sinks[0]]
        for v in self.sinks[1:]:
            y = y + out[v]
        return y * (1.0 / len(self.sinks)) if len(self.sinks) > 1 else y


class RandWire(nn.Module):
    def __init__(self, seed, kind, c=78, classes=1000):
        super().__init__()
        rng = random.Random(seed)
        # Nodes per stage: Xie et al. use 32; fewer for the denser ER and BA
        # graphs keep the networks within 200-500 operators (each extra
        # in-edge is one more Add).
        n = {"ws": 32, "er": 26, "ba": 24}[kind]

        def graph():
            if kind == "ws":
                return watts_strogatz(rng, n, 4, 0.75)
            if kind == "er":
                return erdos_renyi(rng, n, 0.2)
            return barabasi_albert(rng, n, 5)

        self.conv1 = nn.Sequential(nn.Conv2d(3, c // 2, 3, 2, 1, bias=False), nn.BatchNorm2d(c // 2))
        self.conv2 = SepConvBN(c // 2, c, 2)
        self.stages = nn.ModuleList([RandomStage(graph(), n, c, c), RandomStage(graph(), n, c, 2 * c),
                                     RandomStage(graph(), n, 2 * c, 4 * c)])
        self.head = nn.Sequential(nn.ReLU(), nn.Conv2d(4 * c, 1280, 1, bias=False), nn.BatchNorm2d(1280),
                                  nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(1280, classes)

    def forward(self, x):
        x = self.conv2(self.conv1(x))
        for stage in self.stages:
            x = stage(x)
        return self.fc(torch.flatten(self.head(x), 1))


# --------------------------------------------------------------------------
# Dense skip grids
# --------------------------------------------------------------------------

class DenseNode(nn.Module):
    """A UNet++ node as a small DenseNet block: each of `layers` (ReLU-Conv3x3)
    reads the concatenation of the node's input and every earlier layer's
    output; a 1x1 Conv-BN fuses them to the node's width."""

    def __init__(self, c_in, c_out, layers=4, growth=None):
        super().__init__()
        growth = growth or max(4, c_out // 2)
        self.layers = nn.ModuleList()
        c = c_in
        for _ in range(layers):
            self.layers.append(nn.Sequential(nn.Conv2d(c, growth, 3, padding=1, bias=False), nn.BatchNorm2d(growth),
                                             nn.ReLU()))
            c += growth
        self.fuse = nn.Sequential(nn.Conv2d(c, c_out, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU())

    def forward(self, x):
        feats = [x]
        for layer in self.layers:
            feats.append(layer(torch.cat(feats, dim=1) if len(feats) > 1 else x))
        return self.fuse(torch.cat(feats, dim=1))


class UNetPP(nn.Module):
    """Nested U-Net with deep supervision. The seed draws the channel widths
    (and the weights)."""

    def __init__(self, seed, depth=5, classes=2):
        super().__init__()
        rng = random.Random(seed)
        base = rng.choice([8, 12, 16])
        ch = [base * 2 ** i for i in range(depth)]
        self.depth = depth
        self.pool = nn.MaxPool2d(2)
        self.blocks = nn.ModuleDict()
        for j in range(depth):
            for i in range(depth - j):
                c_in = (3 if i == 0 else ch[i - 1]) if j == 0 else ch[i] * j + ch[i + 1]
                self.blocks[f"{i}_{j}"] = DenseNode(c_in, ch[i])
        self.heads = nn.ModuleList(nn.Conv2d(ch[0], classes, 1) for _ in range(depth - 1))

    def forward(self, x):
        X = {}
        for i in range(self.depth):
            X[(i, 0)] = self.blocks[f"{i}_0"](x if i == 0 else self.pool(X[(i - 1, 0)]))
        for j in range(1, self.depth):
            for i in range(self.depth - j):
                up = F.interpolate(X[(i + 1, j - 1)], scale_factor=2.0, mode="nearest")
                X[(i, j)] = self.blocks[f"{i}_{j}"](torch.cat([X[(i, k)] for k in range(j)] + [up], dim=1))
        y = self.heads[0](X[(0, 1)])
        for j in range(2, self.depth):
            y = y + self.heads[j - 1](X[(0, j)])
        return y * (1.0 / (self.depth - 1))


class FusedNode(nn.Module):
    """BiFPN node: fast normalised fusion (its weights are constants at
    inference), Swish, depthwise-separable conv, BN."""

    def __init__(self, inputs, c, seed_weights):
        super().__init__()
        w = torch.tensor(seed_weights[:inputs], dtype=torch.float32)
        self.register_buffer("w", w / (w.sum() + 1e-4))
        self.dw = nn.Conv2d(c, c, 3, padding=1, groups=c, bias=False)
        self.pw = nn.Conv2d(c, c, 1, bias=False)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, xs):
        y = xs[0] * self.w[0]
        for i in range(1, len(xs)):
            y = y + xs[i] * self.w[i]
        y = y * torch.sigmoid(y)
        return self.bn(self.pw(self.dw(y)))


class BiFPN(nn.Module):
    def __init__(self, seed, levels=5, layers=4, c=64, classes=10):
        super().__init__()
        rng = random.Random(seed)
        self.levels = levels
        widths = [16 * 2 ** i for i in range(levels)]
        self.backbone = nn.ModuleList()
        c_prev = 3
        for w in widths:
            self.backbone.append(nn.Sequential(nn.Conv2d(c_prev, w, 3, 2, 1, bias=False), nn.BatchNorm2d(w),
                                               nn.ReLU()))
            c_prev = w
        self.lateral = nn.ModuleList(nn.Conv2d(w, c, 1) for w in widths)
        self.td = nn.ModuleList()
        self.bu = nn.ModuleList()
        for _ in range(layers):
            self.td.append(nn.ModuleList(FusedNode(2, c, [rng.uniform(0.5, 1.5) for _ in range(3)])
                                         for _ in range(levels - 1)))
            self.bu.append(nn.ModuleList(FusedNode(3, c, [rng.uniform(0.5, 1.5) for _ in range(3)])
                                         for _ in range(levels - 1)))
        self.head = nn.Conv2d(c, classes, 1)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        feats = []
        for stage in self.backbone:
            x = stage(x)
            feats.append(x)
        p = [lat(f) for lat, f in zip(self.lateral, feats)]
        top = self.levels - 1
        for td, bu in zip(self.td, self.bu):
            t = [None] * self.levels
            t[top] = p[top]
            for i in range(top - 1, -1, -1):
                t[i] = td[i]([p[i], F.interpolate(t[i + 1], scale_factor=2.0, mode="nearest")])
            out = [t[0]] + [None] * top
            for i in range(1, self.levels):
                down = F.max_pool2d(out[i - 1], 3, 2, 1)
                out[i] = bu[i - 1]([p[i], t[i], down] if i < top else [p[i], down])
            p = out
        y = self.pool(self.head(p[0]))
        for i in range(1, self.levels):
            y = y + self.pool(self.head(p[i]))
        return torch.flatten(y, 1)


# --------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------

def build(name):
    family, _, seed = name.rpartition("_s")
    if family not in FAMILIES or not seed.isdigit():
        raise ValueError(f"unknown model '{name}': expected <family>_s<seed>, family one of {', '.join(FAMILIES)}")
    seed = int(seed)
    if family == "nasnet":
        return NasNet(seed), (1, 3, 32, 32)
    if family.startswith("randwire_"):
        return RandWire(seed, family[len("randwire_"):]), (1, 3, 224, 224)
    if family == "unetpp":
        return UNetPP(seed), (1, 3, 96, 96)
    return BiFPN(seed), (1, 3, 128, 128)


def export_one(name, out_dir, force):
    import onnx

    path = os.path.join(out_dir, name + ".onnx")
    if os.path.exists(path) and not force:
        print(f"{name:16s} exists, skipped ({path})", flush=True)
        return
    t0 = time.time()
    seed = int(name.rpartition("_s")[2])
    torch.manual_seed(seed)
    model, shape = build(name)
    randomize(model)
    model.eval()
    x = torch.randn(*shape)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".onnx.tmp", dir=out_dir)
    os.close(fd)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (x,), tmp, export_params=True, opset_version=OPSET, do_constant_folding=True,
                              input_names=["input"], output_names=["output"],
                              training=torch.onnx.TrainingMode.EVAL)
        proto = onnx.load(tmp)
        ops = collections.Counter(n.op_type for n in proto.graph.node)
        if ops.get("Identity"):
            raise RuntimeError(f"{name}: exported graph has {ops['Identity']} Identity node(s)")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dt = time.time() - t0
    top = ", ".join(f"{k} {v}" for k, v in ops.most_common(6))
    print(f"{name:16s} nodes={len(proto.graph.node):5d}  {dt:6.1f}s  ({top}) -> {path}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", required=True, help="directory for <name>.onnx")
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS),
                    help="comma-separated <family>_s<seed>, family one of: " + ",".join(FAMILIES))
    ap.add_argument("--force", action="store_true", help="re-export existing files")
    args = ap.parse_args(argv)
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    for n in names:
        family, _, seed = n.rpartition("_s")
        if family not in FAMILIES or not seed.isdigit():
            ap.error(f"unknown model '{n}': expected <family>_s<seed>, family one of {', '.join(FAMILIES)}")
    os.makedirs(args.out_dir, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    for name in names:
        export_one(name, args.out_dir, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
