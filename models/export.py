#!/usr/bin/python3
"""Export hetplan's model zoo to ONNX (random weights, no downloads).

Run with Debian's interpreter (it has python3-torch, python3-torchvision and
python3-onnx):

    /usr/bin/python3 models/export.py --out-dir build/models \
        [--models resnet18,resnet50,mobilenetv2,vit_b_16,yolov5n,googlenet,vgg8] [--force]
    /usr/bin/python3 models/export.py --out-dir build/models --calibrator build/hetplan_calibrate \
        --models resnet18_int8,resnet50_int8,mobilenetv2_int8,vit_b_16_int8,yolov5n_int8,resnet18_int8_qop

The *_int8 models are the INT8 zoo (post-training static quantization,
models/int8.py); the ones quantized over the ONNX graph need the
hetplan_calibrate binary (models/calibrate.cc) for their activation ranges.

Every model is exported at batch 1 with fixed static input shapes, opset 13,
in eval() mode, with constant folding, input name "input".  Weights are random
(torch.manual_seed(0) per model), so reruns produce the same file content.

BatchNorm layers get random running statistics and every constant-filled
parameter/buffer is jittered: otherwise the exporter deduplicates identical
initializers and emits `Identity` nodes.  The written graph is checked to
contain no `Identity` node.
"""

import argparse
import collections
import os
import signal
import sys
import tempfile
import time
import warnings

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import int8  # noqa: E402  (models/int8.py: the INT8 zoo)

OPSET = 13
ALL_MODELS = ["resnet18", "resnet50", "mobilenetv2", "vit_b_16", "yolov5n", "googlenet", "vgg8"]


# --------------------------------------------------------------------------
# YOLOv5n (ultralytics YOLOv5 v6.x, yolov5n.yaml: depth 0.33, width 0.25)
# --------------------------------------------------------------------------

def autopad(k, p=None):
    return k // 2 if p is None else p


class Conv(nn.Module):
    """Conv2d(bias=False) + BatchNorm2d + SiLU."""

    def __init__(self, c1, c2, k=1, s=1, p=None):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, autopad(k, p), bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c1, c2, shortcut=True, e=1.0):
        super().__init__()
        c_ = int(c2 * e)
        self.cv1 = Conv(c1, c_, 1, 1)
        self.cv2 = Conv(c_, c2, 3, 1)
        self.add = shortcut and c1 == c2

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C3(nn.Module):
    def __init__(self, c1, c2, n=1, shortcut=True, e=0.5):
        super().__init__()
        c_ = int(c2 * e)
        self.cv1 = Conv(c1, c_, 1, 1)
        self.cv2 = Conv(c1, c_, 1, 1)
        self.cv3 = Conv(2 * c_, c2, 1, 1)
        self.m = nn.Sequential(*(Bottleneck(c_, c_, shortcut, e=1.0) for _ in range(n)))

    def forward(self, x):
        return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), 1))


class SPPF(nn.Module):
    def __init__(self, c1, c2, k=5):
        super().__init__()
        c_ = c1 // 2
        self.cv1 = Conv(c1, c_, 1, 1)
        self.cv2 = Conv(c_ * 4, c2, 1, 1)
        self.m = nn.MaxPool2d(kernel_size=k, stride=1, padding=k // 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.m(x)
        y2 = self.m(y1)
        y3 = self.m(y2)
        return self.cv2(torch.cat((x, y1, y2, y3), 1))


def make_divisible(x, divisor=8):
    return int(-(-x // divisor) * divisor)  # ceil to a multiple


class YOLOv5(nn.Module):
    """YOLOv5 v6.x/v7.0 backbone + PANet head + Detect with its inference-time
    decode (sigmoid, grid offsets, anchor scaling), one output per level.

    The decode is part of YOLOv5's exported inference graph (it is what the
    CIM paper's 251-operator YOLOv5n includes); the loss and target
    assignment are training-only and left out."""

    def __init__(self, depth_multiple=0.33, width_multiple=0.25, nc=80, na=3):
        super().__init__()

        def ch(c):
            return make_divisible(c * width_multiple, 8)

        def depth(n):
            return max(round(n * depth_multiple), 1) if n > 1 else n

        # Backbone
        self.b0 = Conv(3, ch(64), 6, 2, 2)                  # P1/2
        self.b1 = Conv(ch(64), ch(128), 3, 2)               # P2/4
        self.b2 = C3(ch(128), ch(128), depth(3))
        self.b3 = Conv(ch(128), ch(256), 3, 2)              # P3/8
        self.b4 = C3(ch(256), ch(256), depth(6))
        self.b5 = Conv(ch(256), ch(512), 3, 2)              # P4/16
        self.b6 = C3(ch(512), ch(512), depth(9))
        self.b7 = Conv(ch(512), ch(1024), 3, 2)             # P5/32
        self.b8 = C3(ch(1024), ch(1024), depth(3))
        self.b9 = SPPF(ch(1024), ch(1024), 5)
        # Head (PANet)
        self.h10 = Conv(ch(1024), ch(512), 1, 1)
        self.h11 = nn.Upsample(scale_factor=2, mode="nearest")
        self.h13 = C3(ch(512) * 2, ch(512), depth(3), shortcut=False)
        self.h14 = Conv(ch(512), ch(256), 1, 1)
        self.h15 = nn.Upsample(scale_factor=2, mode="nearest")
        self.h17 = C3(ch(256) * 2, ch(256), depth(3), shortcut=False)   # P3/8 out
        self.h18 = Conv(ch(256), ch(256), 3, 2)
        self.h20 = C3(ch(256) * 2, ch(512), depth(3), shortcut=False)   # P4/16 out
        self.h21 = Conv(ch(512), ch(512), 3, 2)
        self.h23 = C3(ch(512) * 2, ch(1024), depth(3), shortcut=False)  # P5/32 out
        # Detect: raw 1x1 convs, na * (nc + 5) channels each
        no = na * (nc + 5)
        self.detect = nn.ModuleList(
            nn.Conv2d(c, no, 1) for c in (ch(256), ch(512), ch(1024)))
        self.na, self.no = na, nc + 5
        anchors = torch.tensor([[10, 13, 16, 30, 33, 23],
                                [30, 61, 62, 45, 59, 119],
                                [116, 90, 156, 198, 373, 326]], dtype=torch.float32)
        self.strides = (8, 16, 32)
        for i, stride in enumerate(self.strides):
            ny = nx = 640 // stride
            yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
            grid = torch.stack((xv, yv), 2).view(1, 1, ny, nx, 2).expand(1, na, ny, nx, 2).float() - 0.5
            anchor_grid = anchors[i].view(1, na, 1, 1, 2).expand(1, na, ny, nx, 2).contiguous()
            self.register_buffer(f"grid{i}", grid.contiguous())
            self.register_buffer(f"anchor_grid{i}", anchor_grid)

    def decode(self, i, x):
        bs, _, ny, nx = x.shape
        x = x.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2)
        y = x.sigmoid()
        xy, wh, conf = y.split((2, 2, self.no - 4), 4)
        xy = (xy * 2 + getattr(self, f"grid{i}")) * self.strides[i]
        wh = (wh * 2) ** 2 * getattr(self, f"anchor_grid{i}")
        return torch.cat((xy, wh, conf), 4).view(bs, self.na * ny * nx, self.no)

    def forward(self, x):
        x = self.b1(self.b0(x))
        x = self.b3(self.b2(x))
        p3 = self.b4(x)
        x = self.b5(p3)
        p4 = self.b6(x)
        x = self.b9(self.b8(self.b7(p4)))
        h10 = self.h10(x)
        x = self.h13(torch.cat((self.h11(h10), p4), 1))
        h14 = self.h14(x)
        out3 = self.h17(torch.cat((self.h15(h14), p3), 1))
        out4 = self.h20(torch.cat((self.h18(out3), h14), 1))
        out5 = self.h23(torch.cat((self.h21(out4), h10), 1))
        return tuple(self.decode(i, m(t))
                     for i, (m, t) in enumerate(zip(self.detect, (out3, out4, out5))))


# --------------------------------------------------------------------------
# Zoo
# --------------------------------------------------------------------------

def _torchvision(name):
    import torchvision.models as tvm
    fn = {
        "resnet18": tvm.resnet18,
        "resnet50": tvm.resnet50,
        "mobilenetv2": tvm.mobilenet_v2,
        "vit_b_16": tvm.vit_b_16,
    }[name]
    return fn(weights=None)  # never download anything


def _googlenet():
    """torchvision GoogLeNet (Inception v1): nine Inception modules of four
    parallel branches each, the zoo's model with wide parallel branches.
    No auxiliary classifiers (inference), no input re-normalisation, and
    torch's default initialisation (init_weights=False skips the slow
    truncated-normal one; randomize() jitters it like every zoo model)."""
    import torchvision.models as tvm
    return tvm.googlenet(weights=None, aux_logits=False, transform_input=False, init_weights=False)


class VGG8(nn.Module):
    """NeuroSim's VGG-8 for CIFAR-10 (DNN_NeuroSim V1.3/V1.4,
    Inference_pytorch/models/VGG.py; the layer table NetWork_VGG8.csv):
    3x3 convolutions of 128, 128, 256, 256, 512, 512 channels ('same'
    padding, no BatchNorm), 2x2 max-pooling after every second, then
    Linear 8192 -> 1024 and 1024 -> 10; ReLU after every layer but the last.
    The network of NeuroSim's published mapping and energy breakdown, which
    the CIM model is checked against (docs/results.md)."""

    def __init__(self):
        super().__init__()
        layers, cin = [], 3
        for cout, pool in [(128, False), (128, True), (256, False), (256, True), (512, False), (512, True)]:
            layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU()]
            if pool:
                layers.append(nn.MaxPool2d(2, 2))
            cin = cout
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Linear(8192, 1024), nn.ReLU(), nn.Linear(1024, 10))

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


# name -> (builder, input shape, output names)
ZOO = {
    "resnet18": (lambda: _torchvision("resnet18"), (1, 3, 224, 224), ["output"]),
    "resnet50": (lambda: _torchvision("resnet50"), (1, 3, 224, 224), ["output"]),
    "mobilenetv2": (lambda: _torchvision("mobilenetv2"), (1, 3, 224, 224), ["output"]),
    "vit_b_16": (lambda: _torchvision("vit_b_16"), (1, 3, 224, 224), ["output"]),
    "yolov5n": (YOLOv5, (1, 3, 640, 640), ["p3", "p4", "p5"]),
    "googlenet": (_googlenet, (1, 3, 224, 224), ["output"]),
    "vgg8": (VGG8, (1, 3, 32, 32), ["output"]),
}


@torch.no_grad()
def randomize(model):
    """Random BN statistics, jitter BN affine params and any constant-filled tensor.

    Without this, identical initializers (all-ones BN/LayerNorm weights, zero
    biases, zero class token, ...) are deduplicated by the exporter into
    `Identity` nodes.
    """
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            if m.running_mean is not None:
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
            if m.weight is not None:
                m.weight.add_(torch.randn_like(m.weight) * 0.05)
            if m.bias is not None:
                m.bias.add_(torch.randn_like(m.bias) * 0.05)
    tensors = list(model.named_parameters()) + list(model.named_buffers())
    for _, t in tensors:
        if not t.is_floating_point() or t.numel() == 0:
            continue
        flat = t.reshape(-1)
        if bool((flat == flat[0]).all()):
            t.add_(torch.randn_like(t) * 0.02)


def export_one(name, out_dir, force, zoo=None, opset=OPSET):
    """Exports zoo[name] = (builder, input shape or list of shapes, output names[, input names])."""
    import onnx

    builder, shape, output_names, *rest = (zoo or ZOO)[name]
    shapes = shape if isinstance(shape, list) else [shape]
    input_names = rest[0] if rest else ["input"]
    path = os.path.join(out_dir, name + ".onnx")
    if os.path.exists(path) and not force:
        print(f"{name:12s} exists, skipped ({path})", flush=True)
        return
    t0 = time.time()
    torch.manual_seed(0)
    model = builder()
    randomize(model)
    model.eval()
    xs = tuple(torch.randn(*sh) for sh in shapes)

    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".onnx.tmp", dir=out_dir)
    os.close(fd)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # Grad stays enabled: it keeps nn.MultiheadAttention (ViT) off its
            # fused fast path, which the ONNX exporter cannot handle.
            torch.onnx.export(
                model, xs, tmp,
                export_params=True,
                opset_version=opset,
                do_constant_folding=True,
                input_names=input_names,
                output_names=output_names,
                training=torch.onnx.TrainingMode.EVAL,
            )
        proto = onnx.load(tmp)
        ops = collections.Counter(n.op_type for n in proto.graph.node)
        if ops.get("Identity"):
            raise RuntimeError(
                f"{name}: exported graph has {ops['Identity']} Identity node(s); "
                "some initializer was left constant-filled / duplicated")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dt = time.time() - t0
    print(f"{name:12s} nodes={len(proto.graph.node):5d}  {dt:6.1f}s  -> {path}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", required=True, help="directory for <name>.onnx")
    ap.add_argument("--models", default=",".join(ALL_MODELS),
                    help="comma-separated subset of: " + ",".join(ALL_MODELS))
    ap.add_argument("--force", action="store_true", help="re-export existing files")
    ap.add_argument("--calibrator", default="",
                    help="the hetplan_calibrate binary (INT8 models quantized over their ONNX graph)")
    args = ap.parse_args(argv)

    names = [m.strip() for m in args.models.split(",") if m.strip()]
    import families  # BIDENT's workload families (models/families.py), which builds on this module
    unknown = [m for m in names if m not in ZOO and m not in int8.INT8_ZOO and m not in families.ALL_FAMILIES]
    if unknown:
        ap.error(f"unknown model(s): {', '.join(unknown)}; known: "
                 f"{', '.join(ALL_MODELS + int8.INT8_MODELS + families.ALL_FAMILIES)}")
    os.makedirs(args.out_dir, exist_ok=True)
    # Turn SIGTERM into SystemExit so the temp file is removed on the way out.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    for name in names:
        if name in families.ALL_FAMILIES:
            families.main(["--out-dir", args.out_dir, "--models", name, "--calibrator", args.calibrator] +
                          (["--force"] if args.force else []))
        elif name in int8.INT8_ZOO:
            int8.export_int8(name, args.out_dir, args.force, args.calibrator, export_one, randomize, OPSET)
        else:
            export_one(name, args.out_dir, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
