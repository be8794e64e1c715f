#!/usr/bin/python3
"""A torchvision model on both of Klein et al.'s CPU + CIM platforms: speedup over CPU-only vs crossbars.

    PYTHONPATH=build/python /usr/bin/python3 examples/torchvision_speedup.py \
        [--model resnet18] [--crossbars 25,50,100,200,400] [--out speedup.png] [--warmup 20] [--runs 200]

The model comes straight from torchvision (random weights, seeded: costs do
not depend on weight values, and a fixed seed gives the same ONNX bytes, so
the profile cache in .cache/hetplan is hit on the next run). hetplan exports
it with torch.onnx.export, measures every operator on this machine's CPU with
ONNX Runtime (the first run takes a while; the platforms' CPUs are both one
thread, so the measurement is shared), models the CIM accelerator
analytically, and partitions it with the exact search for each crossbar
budget. Needs Debian's python3-torch, python3-torchvision and
python3-matplotlib; writes a PNG (matplotlib's Agg backend, no display).
"""

import argparse
import sys

import hetplan


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="resnet18", help="a torchvision.models constructor (resnet18, mobilenet_v2, ...)")
    ap.add_argument("--crossbars", default="25,50,100,200,400", help="crossbar budgets C, comma-separated")
    ap.add_argument("--platforms", default="klein-arm,klein-x86")
    ap.add_argument("--out", default="speedup.png")
    ap.add_argument("--warmup", type=int, default=20, help="profiler warm-up runs per operator")
    ap.add_argument("--runs", type=int, default=200, help="profiler timed runs per operator")
    ap.add_argument("--cache-dir", default=hetplan.DEFAULT_CACHE_DIR)
    args = ap.parse_args()

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import torch
        import torchvision
    except ImportError as e:
        sys.exit(f"examples/torchvision_speedup.py: {e}; install python3-torch python3-torchvision "
                 "python3-matplotlib (Debian)")

    torch.manual_seed(0)
    net = getattr(torchvision.models, args.model)(weights=None).eval()
    model = hetplan.from_torch(net, torch.randn(1, 3, 224, 224))
    print(f"{args.model}: {model.num_operators} operators, {model.num_edges} edges")
    crossbars = [int(c) for c in args.crossbars.split(",")]

    def progress(pu, done, total):  # the first run measures the CPU: say how far it is on a terminal
        if sys.stderr.isatty():
            print(f"\rprofiling {pu}: {done}/{total} operators", end="\n" if done == total else "", file=sys.stderr)

    results = {}
    for name in args.platforms.split(","):
        base = hetplan.platform(name)
        rows = []
        for c in crossbars:
            s = hetplan.partition(model, base, {"cim.crossbars": c}, warmup=args.warmup, runs=args.runs,
                                  cache_dir=args.cache_dir, progress=progress)
            cim = s.devices().get("cim", {})
            rows.append((c, s.speedup, s.makespan_us, s.status, cim.get("operators", 0)))
            print(f"{name:10s} C={c:4d}  makespan {s.makespan_us:10.1f} µs  speedup {s.speedup:6.2f}x  "
                  f"{s.status:8s} ({cim.get('operators', 0)} operators on the CIM)")
        results[name] = rows

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, rows in results.items():
        ax.plot([r[0] for r in rows], [r[1] for r in rows], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xticks(crossbars, [str(c) for c in crossbars])
    ax.set_xlabel("CIM crossbars (C)")
    ax.set_ylabel("speedup over CPU-only")
    ax.set_title(f"{args.model}: CPU (measured here) + CIM (analytical), exact search")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
