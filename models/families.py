#!/usr/bin/python3
"""BIDENT's workload families for hetplan's zoo (random weights, no downloads).

    /usr/bin/python3 models/families.py --out-dir build/models [--models llama_layer,...] [--force] \
        [--calibrator build/hetplan_calibrate]     # needed for the *_int8 models

BIDENT (../shared/papers/bident-operator-level-mapping.txt) evaluates model
families chosen because their operators favour different processing units.
This script writes one scaled-down stand-in per family, at batch 1, opset 17
(for `DFT`), with the same export path, seeding and Identity check as the
zoo (models/export.py). Sizes are chosen so that each profiles in seconds on
a 2-core host. Each also exists as <name>_int8: QDQ over the FP32 graph (Conv,
MatMul and Gemm weights per channel, activations per tensor, ranges measured
by ONNX Runtime; models/int8.py). What each keeps and what it scales down:

  llama_layer   one LLaMA decoder layer: RMSNorm, rotary embedding, grouped-query
                causal attention (8 query heads, 2 key/value heads), SwiGLU MLP.
                d=512, FFN 1376, 64 tokens (LLaMA-7B: d=4096, 32 heads, FFN 11008).
  mamba         two Mamba blocks (in-projection, causal depthwise conv, selective
                scan with input-dependent dt/B/C unrolled over all 16 tokens,
                SiLU gate, out-projection). d=256, state 16, expand 2
                (Mamba-370M: d=1024, 48 blocks, sequences of thousands).
  hyena         two Hyena blocks of order 2: short depthwise conv, gating and the
                long convolution by FFT (ONNX `DFT` forward, complex product with
                the filter's spectrum, `DFT` inverse), then an MLP. d=128, 256
                tokens. The implicit filter is evaluated at export (as inference
                does) and kept as its spectrum.
  kan           a KAN of widths 784-128-64-10: every edge a cubic B-spline on a
                grid of 5 intervals (Cox-de Boor recursion, exported as
                comparisons and arithmetic) plus a SiLU base term.
  snn_vgg9      VGG9 (7 conv + 2 linear, half width) of leaky integrate-and-fire
                neurons over 4 time steps: each step reuses the layer's weights,
                membranes leak (0.9), spike at 1 (GreaterOrEqual -> Cast) and reset
                by subtraction. CIFAR-sized input 3x32x32.
  bitnet        two BitNet b1.58 decoder blocks: every linear layer has ternary
                weights {-1, 0, +1} with one scale, activations quantized per token
                to 8 bits (absmax, Round, Clip) inside the graph. d=256, 64 tokens.
  vla_pipeline  a three-stage vision-language-action pipeline standing in for
                pi0.5: a ViT encoder (112x112 image, 49 patches, d=192, 2 blocks)
                -> projection into a language decoder (2 LLaMA layers, d=256, over
                the image tokens and a 16-token prompt given as embeddings)
                -> an action expert (one flow-matching step: 50 actions x 7 DoF
                conditioned on the decoder's output). Inputs: image, text.
"""

import argparse
import math
import os
import signal
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export  # noqa: E402  (models/export.py: the zoo's export path)
import int8  # noqa: E402  (models/int8.py: the INT8 zoo)

OPSET = 17  # DFT (Hyena) is opset 17


# --------------------------------------------------------------------------
# Shared pieces
# --------------------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class BitLinear(nn.Module):
    """BitNet b1.58: ternary weights (absmean), 8-bit absmax activations."""

    def __init__(self, d_in, d_out):
        super().__init__()
        w = torch.randn(d_out, d_in) / math.sqrt(d_in)
        scale = w.abs().mean().clamp(min=1e-5)
        self.register_buffer("wq", torch.clamp(torch.round(w / scale), -1, 1).t().contiguous())
        self.register_buffer("scale", scale.reshape(1))

    def forward(self, x):
        s = 127.0 / x.abs().amax(-1, keepdim=True).clamp(min=1e-5)
        xq = torch.clamp(torch.round(x * s), -128, 127) / s
        return torch.matmul(xq, self.wq) * self.scale


_TABLES = {}


def attention_tables(seq, head_dim, base=10000.0):
    """Rotary cos/sin and the causal mask, one set per shape: layers share the
    tensors (equal copies would be merged by the exporter into Identity nodes)."""
    if (seq, head_dim) not in _TABLES:
        inv = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
        f = torch.outer(torch.arange(seq).float(), inv)
        emb = torch.cat([f, f], dim=-1)
        mask = torch.triu(torch.full((seq, seq), -1e9), diagonal=1)
        _TABLES[(seq, head_dim)] = (emb.cos(), emb.sin(), mask)
    return _TABLES[(seq, head_dim)]


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


class Attention(nn.Module):
    """Causal grouped-query attention with rotary embedding (LLaMA)."""

    def __init__(self, d, heads, kv_heads, seq, linear=nn.Linear, rotary=True):
        super().__init__()
        self.h, self.kv, self.hd = heads, kv_heads, d // heads
        bias = {} if linear is BitLinear else {"bias": False}
        self.q = linear(d, heads * self.hd, **bias)
        self.k = linear(d, kv_heads * self.hd, **bias)
        self.v = linear(d, kv_heads * self.hd, **bias)
        self.o = linear(heads * self.hd, d, **bias)
        self.rotary = rotary
        cos, sin, mask = attention_tables(seq, self.hd)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)
        self.register_buffer("mask", mask)

    def forward(self, x):
        b, n, _ = x.shape
        q = self.q(x).reshape(b, n, self.h, self.hd).transpose(1, 2)
        k = self.k(x).reshape(b, n, self.kv, self.hd).transpose(1, 2)
        v = self.v(x).reshape(b, n, self.kv, self.hd).transpose(1, 2)
        if self.rotary:
            q = q * self.cos + rotate_half(q) * self.sin
            k = k * self.cos + rotate_half(k) * self.sin
        rep = self.h // self.kv
        if rep > 1:  # each key/value head serves `rep` query heads
            k = k[:, :, None].expand(b, self.kv, rep, n, self.hd).reshape(b, self.h, n, self.hd)
            v = v[:, :, None].expand(b, self.kv, rep, n, self.hd).reshape(b, self.h, n, self.hd)
        att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd) + self.mask
        y = torch.matmul(torch.softmax(att, dim=-1), v)
        return self.o(y.transpose(1, 2).reshape(b, n, self.h * self.hd))


class SwiGLU(nn.Module):
    def __init__(self, d, hidden, linear=nn.Linear):
        super().__init__()
        bias = {} if linear is BitLinear else {"bias": False}
        self.gate = linear(d, hidden, **bias)
        self.up = linear(d, hidden, **bias)
        self.down = linear(hidden, d, **bias)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class DecoderLayer(nn.Module):
    def __init__(self, d, heads, kv_heads, ffn, seq, linear=nn.Linear):
        super().__init__()
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)
        self.att = Attention(d, heads, kv_heads, seq, linear)
        self.mlp = SwiGLU(d, ffn, linear)

    def forward(self, x):
        x = x + self.att(self.n1(x))
        return x + self.mlp(self.n2(x))


# --------------------------------------------------------------------------
# LLaMA decoder layer
# --------------------------------------------------------------------------

def llama_layer():
    return DecoderLayer(d=512, heads=8, kv_heads=2, ffn=1376, seq=64)


# --------------------------------------------------------------------------
# Mamba: selective scan unrolled over the sequence
# --------------------------------------------------------------------------

class MambaBlock(nn.Module):
    def __init__(self, d, seq, state=16, expand=2, conv=4):
        super().__init__()
        e = expand * d
        self.e, self.n, self.seq, self.dt_rank = e, state, seq, math.ceil(d / 16)
        self.norm = RMSNorm(d)
        self.in_proj = nn.Linear(d, 2 * e, bias=False)
        self.conv = nn.Conv1d(e, e, conv, groups=e, padding=conv - 1)
        self.x_proj = nn.Linear(e, self.dt_rank + 2 * state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, e)
        a = torch.arange(1, state + 1).float().repeat(e, 1)
        self.A_log = nn.Parameter(torch.log(a) + 0.01 * torch.randn(e, state))
        self.D = nn.Parameter(torch.ones(e))
        self.out_proj = nn.Linear(e, d, bias=False)

    def forward(self, u):
        b, n, _ = u.shape
        x, z = self.in_proj(self.norm(u)).chunk(2, dim=-1)
        x = F.silu(self.conv(x.transpose(1, 2))[:, :, :n].transpose(1, 2))  # causal
        dbc = self.x_proj(x)
        dt = F.softplus(self.dt_proj(dbc[..., :self.dt_rank]))          # (b, n, e)
        bm = dbc[..., self.dt_rank:self.dt_rank + self.n]                 # (b, n, N)
        cm = dbc[..., self.dt_rank + self.n:]                             # (b, n, N)
        a = -torch.exp(self.A_log)                                        # (e, N)
        ys, h = [], None
        for t in range(n):  # h_t = exp(dt_t A) h_{t-1} + dt_t B_t x_t;  y_t = C_t h_t
            dtt = dt[:, t, :, None]
            dbx = dtt * bm[:, t, None, :] * x[:, t, :, None]
            h = dbx if h is None else torch.exp(dtt * a) * h + dbx
            ys.append((h * cm[:, t, None, :]).sum(-1))
        y = torch.stack(ys, dim=1) + x * self.D
        return u + self.out_proj(y * F.silu(z))


class Mamba(nn.Module):
    def __init__(self, d=256, seq=16, blocks=2):
        super().__init__()
        self.blocks = nn.Sequential(*[MambaBlock(d, seq) for _ in range(blocks)])
        self.norm = RMSNorm(d)

    def forward(self, x):
        return self.norm(self.blocks(x))


# --------------------------------------------------------------------------
# Hyena: long convolution by FFT (ONNX DFT)
# --------------------------------------------------------------------------

class Dft(torch.autograd.Function):
    """(..., n, 2) real/imaginary -> its DFT along n; exported as ONNX DFT-17."""

    @staticmethod
    def forward(ctx, x, inverse):
        c = torch.view_as_complex(x.contiguous())
        r = torch.fft.ifft(c, dim=-1) if inverse else torch.fft.fft(c, dim=-1)
        return torch.view_as_real(r).contiguous()

    @staticmethod
    def symbolic(g, x, inverse):
        return g.op("DFT", x, axis_i=2, inverse_i=int(inverse), onesided_i=0)


def complex_mul(x, y):
    xr, xi = x[..., 0:1], x[..., 1:2]
    yr, yi = y[..., 0:1], y[..., 1:2]
    return torch.cat([xr * yr - xi * yi, xr * yi + xi * yr], dim=-1)


class HyenaBlock(nn.Module):
    def __init__(self, d, seq, emb=17, hidden=64):
        super().__init__()
        self.seq = seq
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.in_proj = nn.Linear(d, 3 * d)
        self.short = nn.Conv1d(3 * d, 3 * d, 3, groups=3 * d, padding=2)
        self.out_proj = nn.Linear(d, d)
        self.bias = nn.Parameter(torch.randn(d, 1) * 0.1)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        with torch.no_grad():  # the implicit filter (positional MLP with sine, decay window), evaluated once
            t = torch.linspace(0, 1, seq)[:, None]
            bands = torch.arange(1, (emb - 1) // 2 + 1).float()[None]
            z = torch.cat([t, torch.sin(2 * math.pi * bands * t), torch.cos(2 * math.pi * bands * t)], dim=-1)
            f = torch.sin(nn.Linear(emb, hidden)(z))
            f = torch.sin(nn.Linear(hidden, hidden)(f))
            h = nn.Linear(hidden, d)(f).t()                              # (d, seq)
            decay = torch.exp(-torch.linspace(0, 1, seq)[None] * torch.linspace(0.5, 4, d)[:, None])
            h = F.pad(h * decay, (0, seq))[..., None]                    # zero-padded to 2 seq
            spec = torch.view_as_real(torch.fft.fft(torch.view_as_complex(F.pad(h, (0, 1))), dim=-1))
        self.register_buffer("filter_spectrum", spec[None].contiguous())  # (1, d, 2 seq, 2)

    def forward(self, u):
        n = self.seq
        x = self.in_proj(self.norm1(u)).transpose(1, 2)                  # (b, 3d, n)
        x = self.short(x)[..., :n]                                       # causal
        x0, x1, v = x.chunk(3, dim=1)
        v = F.pad((v * x1)[..., None], (0, 1, 0, n))                      # (b, d, 2n, 2): real, zero-padded
        y = Dft.apply(complex_mul(Dft.apply(v, False), self.filter_spectrum), True)
        y = y[:, :, :n, 0] + (v[:, :, :n, 0] * self.bias)
        u = u + self.out_proj((y * x0).transpose(1, 2))
        return u + self.mlp(self.norm2(u))


class Hyena(nn.Module):
    def __init__(self, d=128, seq=256, blocks=2):
        super().__init__()
        self.blocks = nn.Sequential(*[HyenaBlock(d, seq) for _ in range(blocks)])

    def forward(self, x):
        return self.blocks(x)


# --------------------------------------------------------------------------
# KAN: B-spline edges
# --------------------------------------------------------------------------

class KanLayer(nn.Module):
    def __init__(self, d_in, d_out, grid=5, order=3):
        super().__init__()
        h = 2.0 / grid
        g = torch.arange(-order, grid + order + 1).float() * h - 1.0
        self.register_buffer("grid", g.expand(d_in, -1).contiguous())  # (in, grid + 2 order + 1)
        self.order = order
        self.base = nn.Linear(d_in, d_out, bias=False)
        self.spline = nn.Linear(d_in * (grid + order), d_out, bias=False)

    def forward(self, x):
        g = self.grid
        xe = x[..., None]
        bases = ((xe >= g[:, :-1]) & (xe < g[:, 1:])).to(x.dtype)
        for k in range(1, self.order + 1):  # Cox-de Boor
            bases = ((xe - g[:, :-(k + 1)]) / (g[:, k:-1] - g[:, :-(k + 1)]) * bases[..., :-1]
                     + (g[:, k + 1:] - xe) / (g[:, k + 1:] - g[:, 1:-k]) * bases[..., 1:])
        return self.base(F.silu(x)) + self.spline(bases.flatten(-2))


class Kan(nn.Module):
    def __init__(self, widths=(784, 128, 64, 10)):
        super().__init__()
        self.layers = nn.Sequential(*[KanLayer(a, b) for a, b in zip(widths[:-1], widths[1:])])

    def forward(self, x):
        return self.layers(torch.tanh(x))  # inputs into the grid's range


# --------------------------------------------------------------------------
# SNN-VGG9: leaky integrate-and-fire over time steps
# --------------------------------------------------------------------------

class SnnVgg9(nn.Module):
    CFG = [32, 32, "P", 64, 64, "P", 128, 128, 128, "P"]  # VGG9 at half width

    def __init__(self, steps=4, beta=0.9, threshold=1.0, classes=10):
        super().__init__()
        self.steps, self.beta, self.threshold = steps, beta, threshold
        layers, c = [], 3
        for v in self.CFG:
            if v == "P":
                layers.append(nn.AvgPool2d(2))
            else:
                layers.append(nn.Conv2d(c, v, 3, padding=1))
                c = v
        self.features = nn.ModuleList(layers)
        self.fc1 = nn.Linear(c * 4 * 4, 512)
        self.fc2 = nn.Linear(512, classes)

    def fire(self, current, v):
        v = current if v is None else self.beta * v + current
        spikes = (v >= self.threshold).to(current.dtype)
        return spikes, v - spikes * self.threshold  # reset by subtraction

    def forward(self, img):
        mem = [None] * (len(self.features) + 1)
        out = None
        for _ in range(self.steps):  # direct encoding: the image is the input current at every step
            x = img
            for i, layer in enumerate(self.features):
                if isinstance(layer, nn.AvgPool2d):
                    x = layer(x)
                else:
                    x, mem[i] = self.fire(layer(x), mem[i])
            x, mem[-1] = self.fire(self.fc1(x.flatten(1)), mem[-1])
            o = self.fc2(x)
            out = o if out is None else out + o
        return out / self.steps


# --------------------------------------------------------------------------
# BitNet b1.58
# --------------------------------------------------------------------------

class BitNet(nn.Module):
    def __init__(self, d=256, seq=64, blocks=2):
        super().__init__()
        self.blocks = nn.Sequential(*[DecoderLayer(d, 4, 4, 4 * d, seq, linear=BitLinear) for _ in range(blocks)])
        self.norm = RMSNorm(d)

    def forward(self, x):
        return self.norm(self.blocks(x))


# --------------------------------------------------------------------------
# Vision -> language -> action (pi0.5 stand-in)
# --------------------------------------------------------------------------

class VitBlock(nn.Module):
    def __init__(self, d, heads, seq):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.att = Attention(d, heads, heads, seq, rotary=False)
        self.att.register_buffer("mask", torch.zeros(seq, seq) + 1e-3 * torch.randn(seq, seq))  # not causal
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.att(self.n1(x))
        return x + self.mlp(self.n2(x))


class VlaPipeline(nn.Module):
    def __init__(self, image=112, patch=16, d_vis=192, d=256, text=16, actions=50, dof=7):
        super().__init__()
        patches = (image // patch) ** 2
        self.patch = nn.Conv2d(3, d_vis, patch, stride=patch)
        self.pos = nn.Parameter(torch.randn(1, patches, d_vis) * 0.02)
        self.vision = nn.Sequential(*[VitBlock(d_vis, 3, patches) for _ in range(2)])
        self.project = nn.Linear(d_vis, d)
        seq = patches + text
        self.decoder = nn.Sequential(*[DecoderLayer(d, 4, 2, 3 * d, seq) for _ in range(2)])
        self.norm = RMSNorm(d)
        # Action expert: one flow-matching step from noise, conditioned on the context.
        self.register_buffer("noise", torch.randn(1, actions, dof))
        self.act_in = nn.Linear(dof, d)
        self.cond = nn.Linear(d, d)
        self.expert = nn.Sequential(nn.Linear(d, 2 * d), nn.SiLU(), nn.Linear(2 * d, d), nn.SiLU())
        self.act_out = nn.Linear(d, dof)

    def forward(self, image, text):
        v = self.patch(image).flatten(2).transpose(1, 2) + self.pos
        v = self.project(self.vision(v))
        h = self.norm(self.decoder(torch.cat([v, text], dim=1)))
        ctx = self.cond(h.mean(dim=1, keepdim=True))
        velocity = self.act_out(self.expert(self.act_in(self.noise) + ctx))
        return self.noise + velocity  # one Euler step of the flow


# name -> (builder, input shape(s), output names[, input names])
FAMILIES = {
    "llama_layer": (llama_layer, (1, 64, 512), ["output"]),
    "mamba": (Mamba, (1, 16, 256), ["output"]),
    "hyena": (Hyena, (1, 256, 128), ["output"]),
    "kan": (Kan, (1, 784), ["output"]),
    "snn_vgg9": (SnnVgg9, (1, 3, 32, 32), ["output"]),
    "bitnet": (BitNet, (1, 64, 256), ["output"]),
    "vla_pipeline": (VlaPipeline, [(1, 3, 112, 112), (1, 16, 256)], ["actions"], ["image", "text"]),
}
# Each family at INT8 too: QDQ over its FP32 graph with activation ranges
# measured by ONNX Runtime (models/int8.py's "onnx" route; needs --calibrator).
FAMILIES_INT8 = {m + "_int8": ("onnx", m) for m in FAMILIES}
ALL_FAMILIES = list(FAMILIES) + list(FAMILIES_INT8)


def export_fp32(name, out_dir, force):
    export.export_one(name, out_dir, force, zoo=FAMILIES, opset=OPSET)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", required=True, help="directory for <name>.onnx")
    ap.add_argument("--models", default=",".join(ALL_FAMILIES),
                    help="comma-separated subset of: " + ",".join(ALL_FAMILIES))
    ap.add_argument("--force", action="store_true", help="re-export existing files")
    ap.add_argument("--calibrator", default="", help="the hetplan_calibrate binary (the *_int8 models)")
    args = ap.parse_args(argv)
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in names if m not in FAMILIES and m not in FAMILIES_INT8]
    if unknown:
        ap.error(f"unknown model(s): {', '.join(unknown)}; known: {', '.join(ALL_FAMILIES)}")
    os.makedirs(args.out_dir, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    for name in names:
        if name in FAMILIES_INT8:
            int8.export_int8(name, args.out_dir, args.force, args.calibrator, export_fp32, export.randomize, OPSET,
                             zoo=FAMILIES_INT8)
        else:
            export_fp32(name, args.out_dir, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
