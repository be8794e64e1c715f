#!/usr/bin/env python3
"""The peers' side of bench/peers.sh: CP-SAT and SCIP on the instances that
build/bench/peers_benchmark wrote (DIR/<id>.json, DIR/<id>.mps), with the
same time limit and gap, then one table of all five methods.

  (d) cpsat  a CP-SAT model of the same problem (OR-Tools): an optional
      interval per operator and PU, no-overlap on each serial PU, the
      crossbar knapsack on each spatial PU, a transfer delay on every edge
      whose ends run on different PUs, minimise the makespan. Times in
      integer nanoseconds (rounded); its schedule is re-timed exactly in µs
      (its assignment, its order on each PU) and its bound lowered by the
      largest rounding a path can carry.
  (e) scip   the paper's MIP as hetplan writes it (the .mps file), on SCIP.

  bench/peers.py DIR [--limit S] [--threads N] [--table OUT.md]
  bench/peers.py DIR --check     random instances: every proven optimum of
                                 every method equals brute force
Run it with the virtual environment bench/peers.sh creates (ortools,
pyscipopt pinned in bench/peers-requirements.txt), not a system Python.
"""

import argparse
import glob
import itertools
import json
import math
import os
import platform
import sys
import time

from ortools.sat.python import cp_model
import ortools
import pyscipopt

SCALE = 1000  # CP-SAT's time unit: 1 ns


def candidates(inst):
    """cand[v]: the PUs v may run on (supported, and on a spatial PU fitting alone)."""
    out = []
    for op in inst["ops"]:
        c = []
        for p, pu in enumerate(inst["pus"]):
            if op["latency_us"][p] is None:
                continue
            if pu["spatial"] and op["crossbars"][p] > pu["capacity"]:
                continue
            c.append(p)
        out.append(c)
    return out


def topo_order(n, edges):
    indeg = [0] * n
    succ = [[] for _ in range(n)]
    for e in edges:
        indeg[e["to"]] += 1
        succ[e["from"]].append(e["to"])
    ready = [v for v in range(n) if indeg[v] == 0]
    order = []
    while ready:
        v = min(ready)
        ready.remove(v)
        order.append(v)
        for w in succ[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    return order


def list_schedule(inst, assign, order):
    """Finish times when the operators are dispatched in `order` (topological):
    each starts when its inputs have arrived and, on a serial PU, when the
    PU is free. Returns the makespan in µs."""
    n = len(inst["ops"])
    preds = [[] for _ in range(n)]
    for e in inst["edges"]:
        preds[e["to"]].append(e)
    free = [0.0] * len(inst["pus"])
    finish = [0.0] * n
    for v in order:
        p = assign[v]
        start = 0.0
        for e in preds[v]:
            u = e["from"]
            t = e["transfer_us"][assign[u]][p] if assign[u] != p else 0.0
            start = max(start, finish[u] + t)
        if not inst["pus"][p]["spatial"]:
            start = max(start, free[p])
        finish[v] = start + inst["ops"][v]["latency_us"][p]
        if not inst["pus"][p]["spatial"]:
            free[p] = finish[v]
    return max(finish) if n else 0.0


def fits(inst, assign):
    for p, pu in enumerate(inst["pus"]):
        if pu["spatial"]:
            used = sum(inst["ops"][v]["crossbars"][p] for v in range(len(assign)) if assign[v] == p)
            if used > pu["capacity"]:
                return False
    return True


def brute_force(inst):
    """The optimum over every assignment and every topological dispatch order."""
    n = len(inst["ops"])
    cand = candidates(inst)
    preds = [set() for _ in range(n)]
    for e in inst["edges"]:
        preds[e["to"]].add(e["from"])
    best = math.inf

    def orders(done, order):
        if len(order) == n:
            yield list(order)
            return
        for v in range(n):
            if v not in done and preds[v] <= done:
                done.add(v)
                order.append(v)
                yield from orders(done, order)
                order.pop()
                done.remove(v)

    all_orders = list(orders(set(), []))
    for assign in itertools.product(*cand):
        if not fits(inst, assign):
            continue
        for order in all_orders:
            best = min(best, list_schedule(inst, assign, order))
    return best


def solve_cpsat(inst, limit, threads, gap):
    n = len(inst["ops"])
    cand = candidates(inst)
    dur = [[0 if l is None else int(round(l * SCALE)) for l in op["latency_us"]] for op in inst["ops"]]
    trans = [[[int(round(t * SCALE)) for t in row] for row in e["transfer_us"]] for e in inst["edges"]]
    horizon = sum(max(dur[v][p] for p in cand[v]) for v in range(n) if cand[v])
    horizon += sum(max(max(row) for row in t) for t in trans) + 1
    m = cp_model.CpModel()
    x = {}
    start = [m.NewIntVar(0, horizon, f"s{v}") for v in range(n)]
    end = [m.NewIntVar(0, horizon, f"e{v}") for v in range(n)]
    per_pu = [[] for _ in inst["pus"]]
    for v in range(n):
        for p in cand[v]:
            x[v, p] = m.NewBoolVar(f"x{v}_{p}")
            if not inst["pus"][p]["spatial"]:
                per_pu[p].append(m.NewOptionalFixedSizeIntervalVar(start[v], dur[v][p], x[v, p], f"i{v}_{p}"))
        m.AddExactlyOne(x[v, p] for p in cand[v])
        m.Add(end[v] == start[v] + sum(dur[v][p] * x[v, p] for p in cand[v]))
    for p, pu in enumerate(inst["pus"]):
        if pu["spatial"]:
            m.Add(sum(inst["ops"][v]["crossbars"][p] * x[v, p] for v in range(n) if (v, p) in x) <= pu["capacity"])
        elif per_pu[p]:
            m.AddNoOverlap(per_pu[p])
    for k, e in enumerate(inst["edges"]):
        u, v = e["from"], e["to"]
        m.Add(start[v] >= end[u])
        for p in cand[u]:
            for q in cand[v]:
                if p != q and trans[k][p][q] > 0:
                    m.Add(start[v] >= end[u] + trans[k][p][q]).OnlyEnforceIf([x[u, p], x[v, q]])
    makespan = m.NewIntVar(0, horizon, "T")
    m.AddMaxEquality(makespan, end)
    m.Minimize(makespan)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = limit
    solver.parameters.num_workers = threads
    solver.parameters.relative_gap_limit = gap
    solver.parameters.random_seed = 1
    t0 = time.monotonic()
    status = solver.Solve(m)
    seconds = time.monotonic() - t0
    # A path carries at most n durations and n - 1 transfers, each rounded by
    # at most its largest rounding: the bound in µs is lowered by that much.
    dur_err = max((abs(l * SCALE - round(l * SCALE)) for op in inst["ops"] for l in op["latency_us"] if l is not None),
                  default=0.0)
    trans_err = max((abs(t * SCALE - round(t * SCALE)) for e in inst["edges"] for row in e["transfer_us"] for t in row),
                    default=0.0)
    slack = (n * dur_err + max(0, n - 1) * trans_err) / SCALE
    out = {"solver": f"CP-SAT {ortools.__version__}", "seconds": seconds, "schedule_us": None, "bound_us": None,
           "gap": None, "time_to_optimal_s": None}
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        assign = [next(p for p in cand[v] if solver.Value(x[v, p])) for v in range(n)]
        topo = {v: i for i, v in enumerate(topo_order(n, inst["edges"]))}
        order = sorted(range(n), key=lambda v: (solver.Value(start[v]), solver.Value(end[v]), topo[v]))
        out["schedule_us"] = list_schedule(inst, assign, order)
        out["bound_us"] = max(0.0, solver.BestObjectiveBound() / SCALE - slack)
    out["status"] = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible", cp_model.INFEASIBLE: "infeasible"}.get(
        status, "no_solution")
    if out["schedule_us"] is not None:
        out["bound_us"] = min(out["bound_us"], out["schedule_us"])
        out["gap"] = (out["schedule_us"] - out["bound_us"]) / out["schedule_us"] if out["schedule_us"] > 0 else 0.0
        # Optimal in hetplan's sense: within the gap once rounding is undone.
        if status == cp_model.OPTIMAL and out["gap"] > gap:
            out["status"] = "feasible"
        if out["status"] == "optimal":
            out["time_to_optimal_s"] = seconds
    return out


def solve_scip(mps, limit, gap):
    m = pyscipopt.Model()
    m.hideOutput()
    m.readProblem(mps)
    m.setParam("limits/time", limit)
    m.setParam("limits/gap", gap)
    m.setParam("randomization/randomseedshift", 0)
    t0 = time.monotonic()
    m.optimize()
    seconds = time.monotonic() - t0
    status = m.getStatus()
    out = {"solver": f"SCIP {m.version()} (pyscipopt {pyscipopt.__version__})", "seconds": seconds,
           "schedule_us": None, "bound_us": None, "gap": None, "time_to_optimal_s": None}
    if m.getNSols() > 0:
        out["schedule_us"] = m.getObjVal()
        out["bound_us"] = min(m.getDualbound(), out["schedule_us"])
        out["gap"] = (out["schedule_us"] - out["bound_us"]) / out["schedule_us"] if out["schedule_us"] > 0 else 0.0
    # "gaplimit": stopped within limits/gap, the gap asked of every method.
    out["status"] = {"optimal": "optimal", "gaplimit": "optimal", "infeasible": "infeasible"}.get(
        status, "feasible" if out["schedule_us"] is not None else "no_solution")
    out["scip_status"] = status
    if out["status"] == "optimal":
        out["time_to_optimal_s"] = seconds
    return out


METHODS = ["exact", "mip_cbc", "mip_highs", "cpsat", "scip"]


def fmt(x, spec="{:.1f}"):
    return "-" if x is None else spec.format(x)


def cell(r):
    if r is None:
        return "-"
    if r["status"] == "optimal":
        return f"optimal {r['time_to_optimal_s']:.2f} s"
    if r["gap"] is not None:
        return f"{100 * r['gap']:.2f} %"
    return r["status"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--limit", type=float, default=None, help="seconds (default: the instance's)")
    ap.add_argument("--threads", type=int, default=None, help="CP-SAT workers (default: the instance's)")
    ap.add_argument("--check", action="store_true", help="compare every proven optimum with brute force")
    ap.add_argument("--table", default=None, help="also write the Markdown table here")
    ap.add_argument("--report", action="store_true", help="only the table, from the <id>.peers.json of an earlier run")
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.dir, "*.json")))
    files = [f for f in files if not f.endswith(".peers.json")]
    if not files:
        sys.exit(f"peers.py: {args.dir}: no instance files (<id>.json); run build/bench/peers_benchmark --out {args.dir}")
    lines = []
    full = []
    failures = 0
    versions = {}
    wins = {"schedule": [], "bound": []}
    proven = {m: 0 for m in METHODS}
    for f in files:
        with open(f) as fh:
            inst = json.load(fh)
        limit = args.limit or inst["limit_s"]
        threads = args.threads or inst["threads"]
        if args.report:
            with open(f[:-5] + ".peers.json") as fh:
                res = json.load(fh)
        else:
            res = dict(inst["results"])
            res["cpsat"] = solve_cpsat(inst, limit, threads, inst["gap"])
            mps = f[:-5] + ".mps"
            res["scip"] = solve_scip(mps, limit, inst["gap"]) if os.path.exists(mps) else None
        for m in METHODS:
            if res.get(m):
                versions[m] = res[m]["solver"]
                proven[m] += res[m]["status"] == "optimal"
        with open(f[:-5] + ".peers.json", "w") as fh:
            json.dump(res, fh, indent=1)
        # Every proven optimum agrees (within the gap, and CP-SAT's rounding).
        opt = {m: res[m]["schedule_us"] for m in METHODS if res.get(m) and res[m]["status"] == "optimal"}
        ref = None
        if args.check:
            ref = brute_force(inst)
        values = list(opt.values()) + ([ref] if ref is not None else [])
        for m, v in opt.items():
            for w in values:
                if abs(v - w) > inst["gap"] * max(v, w) + 2e-3 * len(inst["ops"]) / SCALE + 1e-9:
                    print(f"DISAGREEMENT {inst['id']}: {m} proves {v}, another {w}", file=sys.stderr)
                    failures += 1
        for m, r in res.items():
            if r and r["bound_us"] is not None and min(values or [math.inf]) < r["bound_us"] - 1e-6 * r["bound_us"]:
                print(f"DISAGREEMENT {inst['id']}: {m}'s bound {r['bound_us']} above a proven optimum", file=sys.stderr)
                failures += 1
        peers = [m for m in METHODS if m != "exact" and res.get(m)]
        best_sched = min((res[m]["schedule_us"] for m in peers if res[m]["schedule_us"] is not None), default=None)
        best_bound = max((res[m]["bound_us"] for m in peers if res[m]["bound_us"] is not None), default=None)
        ex = res.get("exact")
        ratio = None
        if ex and ex["schedule_us"] is not None and best_sched:
            ratio = ex["schedule_us"] / best_sched
            eps = 1e-9 * best_sched
            if ex["schedule_us"] > best_sched + eps:
                wins["schedule"].append(inst["id"])
            if best_bound is not None and (ex["bound_us"] is None or ex["bound_us"] < best_bound - eps):
                wins["bound"].append(inst["id"])
        for m in METHODS:
            r = res.get(m)
            if r:
                full.append(f"| {inst['id']} | {m} | {r['status']} | {fmt(r['schedule_us'])} | {fmt(r['bound_us'])} | "
                            f"{fmt(None if r['gap'] is None else 100 * r['gap'], '{:.3f}')} | "
                            f"{fmt(r['time_to_optimal_s'], '{:.2f}')} |")
        lines.append("| " + " | ".join([inst["id"], str(len(inst["ops"]))] + [cell(res.get(m)) for m in METHODS] + [
            fmt(ex["schedule_us"] if ex else None), fmt(best_sched), fmt(ex["bound_us"] if ex else None),
            fmt(best_bound), fmt(ratio, "{:.4f}")]) + " |")
        print(lines[-1], flush=True)
        if ref is not None:
            print(f"  brute force {ref:.3f} µs", flush=True)
    head = ("| instance | ops | exact | mip CBC | mip HiGHS | CP-SAT | SCIP | exact µs | best peer µs | exact bound µs "
            "| best peer bound µs | exact / best peer |\n|---|---:|---|---|---|---|---|---:|---:|---:|---:|---:|")
    summary = [f"proven optimal: " + ", ".join(f"{m} {proven[m]}/{len(files)}" for m in METHODS),
               f"a peer's schedule shorter than exact's: {len(wins['schedule'])} ({', '.join(wins['schedule']) or 'none'})",
               f"a peer's bound stronger than exact's: {len(wins['bound'])} ({', '.join(wins['bound']) or 'none'})",
               "versions: " + "; ".join(f"{m}: {v}" for m, v in versions.items()),
               f"python {platform.python_version()}, {os.cpu_count()} CPUs; SCIP runs one thread",
               f"disagreements: {failures}"]
    text = head + "\n" + "\n".join(lines) + "\n\n" + "\n".join("- " + s for s in summary) + "\n"
    text += ("\n<details><summary>every method at every instance</summary>\n\n| instance | method | status | schedule µs "
             "| bound µs | gap % | time to optimal s |\n|---|---|---|---:|---:|---:|---:|\n" + "\n".join(full) +
             "\n\n</details>\n")
    print("\n" + "\n".join(summary))
    if args.table:
        with open(args.table, "w") as fh:
            fh.write(text)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
