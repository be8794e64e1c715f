#!/usr/bin/python3
"""What a Python call costs over the C++ call it makes: hetplan.partition on ResNet-18 with cached costs.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_call_overhead.py \
        [--model build/models/resnet18.onnx] [--platform klein-arm] [--repeats 400] [--cache-dir .cache/hetplan]

Both sides plan the same problem through the same C++ function
(python/src/plan_call.cc, RunPlan: the cost sources from the tables kept with
the model, then the application layer's Plan(), schedule file and validation
included):

  C++       hetplan._core._time_run_plan(call, n): RunPlan n times in C++, each
            timed with steady_clock, with the GIL released;
  Python    hetplan.partition(model, platform) n times, each timed with
            time.perf_counter: argument checks, the call object, the worker
            thread, the GIL released and taken back, the Schedule object;
  + dict    the same plus Schedule.to_dict() (the schedule file as Python
            objects; converted lazily, so only when asked for).

The rounds alternate (C++, Python, Python + dict) so that drift on a shared
machine hits all three alike. The overhead is the difference of the medians.
The host costs are measured once first (or read from the profile cache).
"""

import argparse
import os
import platform as host
import statistics
import sys
import time


def stats(xs):
    xs = sorted(xs)
    return {"median": statistics.median(xs), "mean": statistics.fmean(xs), "p10": xs[len(xs) // 10],
            "p90": xs[(len(xs) * 9) // 10], "n": len(xs)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="build/models/resnet18.onnx")
    ap.add_argument("--platform", default="klein-arm")
    ap.add_argument("--repeats", type=int, default=400, help="calls per side (in rounds of 20)")
    ap.add_argument("--cache-dir", default=".cache/hetplan")
    args = ap.parse_args()

    import hetplan
    from hetplan import _core, _plan

    model = hetplan.load_model(args.model)
    platform = hetplan.platform(args.platform)
    t0 = time.perf_counter()
    table = hetplan.profile(model, platform, cache_dir=args.cache_dir)  # the partition defaults: 20 warm-up, 200 runs
    print(f"costs: {table.meta.get('cache')} in {time.perf_counter() - t0:.1f} s ({table.meta.get('cpu')})",
          file=sys.stderr)
    first = hetplan.partition(model, platform, cache_dir=args.cache_dir)
    assert first.status == "optimal" and first.run_notes == ["cpu: profile cache hit"], first.run_notes

    call = _plan._plan_call(model, platform, "exact", cache_dir=args.cache_dir).call
    cpp, py, py_dict = [], [], []
    rounds = max(1, args.repeats // 20)
    for _ in range(rounds):
        cpp += _core._time_run_plan(call, 20)
        for _ in range(20):
            t = time.perf_counter()
            s = hetplan.partition(model, platform, cache_dir=args.cache_dir)
            py.append(time.perf_counter() - t)
        for _ in range(20):
            t = time.perf_counter()
            s = hetplan.partition(model, platform, cache_dir=args.cache_dir)
            s.to_dict()
            py_dict.append(time.perf_counter() - t)
        assert s.makespan_us == first.makespan_us
    c, p, d = stats(cpp), stats(py), stats(py_dict)
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    ms = lambda v: f"{1e3 * v:.3f}"  # noqa: E731
    print(f"model {args.model} ({model.num_operators} operators), platform {args.platform}, exact search, "
          f"costs cached; {c['n']} calls per side; {os.cpu_count()} vCPU, {cpu}; Python {host.python_version()}")
    print()
    print("| call | median ms | mean ms | p10 ms | p90 ms | overhead over C++ (median) ms |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| C++ RunPlan (`_core._time_run_plan`) | {ms(c['median'])} | {ms(c['mean'])} | {ms(c['p10'])} | "
          f"{ms(c['p90'])} | – |")
    print(f"| `hetplan.partition(model, platform)` | {ms(p['median'])} | {ms(p['mean'])} | {ms(p['p10'])} | "
          f"{ms(p['p90'])} | {ms(p['median'] - c['median'])} |")
    print(f"| the same + `Schedule.to_dict()` | {ms(d['median'])} | {ms(d['mean'])} | {ms(d['p10'])} | "
          f"{ms(d['p90'])} | {ms(d['median'] - c['median'])} |")
    overhead = p["median"] - c["median"]
    print()
    print(f"overhead {1e3 * overhead:.3f} ms per call: {'under' if overhead < 1e-3 else 'NOT under'} the 1 ms goal")
    return 0 if overhead < 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main())
