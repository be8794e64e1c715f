"""Long calls: the GIL is released, two threads solve at once, Ctrl-C stops a solve with its best schedule.

wide.onnx (10 parallel Conv → Relu chains of 5) on soc-example (three serial
PUs) is an instance neither the exact search without its node budget nor CBC
on the paper's MIP finishes in two minutes here, so each test's solve is
still running when the signal arrives.
"""

import os
import signal
import threading
import time

import pytest

import hetplan



@pytest.fixture
def sigint_after():
    """Sends this process SIGINT after `seconds` (as Ctrl-C does), from a timer thread."""
    timers = []
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)

    def arm(seconds):
        t = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
        t.start()
        timers.append(t)
        return t

    yield arm
    for t in timers:
        t.cancel()
    signal.signal(signal.SIGINT, previous)


def _hard(data, solver, model=None, **kw):
    return hetplan.partition(model or data / "wide.onnx", "soc-example", solver=solver, threads=1, **kw)


@pytest.mark.parametrize("solver,extra", [("exact", {"search_nodes": 0}), ("mip", {})])
def test_ctrl_c_returns_the_best_schedule_so_far(data, sigint_after, solver, extra):
    sigint_after(1.0)
    t0 = time.monotonic()
    s = _hard(data, solver, time_limit=120, **extra)
    elapsed = time.monotonic() - t0
    # CBC looks at the interrupt once its root node is done: seconds of CPU
    # time on this instance (more wall time on a loaded machine).
    assert elapsed < 100, f"{solver}: Ctrl-C did not stop the solve ({elapsed:.1f} s)"
    assert s.interrupted and s.status == "feasible" and s.termination == "interrupted", (solver, s.status,
                                                                                         s.termination, s.notes)
    assert s.has_schedule and s.validate().ok
    assert s.gap is None or s.gap > 0


def test_ctrl_c_in_a_call_without_a_schedule_raises_keyboard_interrupt(data, sigint_after):
    # Profiling cannot stop early: it ends, then the KeyboardInterrupt is raised.
    sigint_after(0.3)
    with pytest.raises(KeyboardInterrupt):
        hetplan.profile(data / "wide.onnx", "klein-arm", warmup=5, runs=400, model_runs=5, cache_dir=None)


def test_a_failing_progress_callback_propagates(data):
    def progress(pu, done, total):
        raise ValueError(f"stop at {done}")

    with pytest.raises(ValueError, match="stop at 0"):  # the first call (0 done) raises
        hetplan.profile(data / "tiny.onnx", "klein-arm", warmup=0, runs=2, cache_dir=None, progress=progress)


def test_the_gil_is_released_while_solving(data):
    done = threading.Event()
    out = {}

    def solve():
        out["s"] = _hard(data, "exact", time_limit=1.5, search_nodes=0)
        done.set()

    t = threading.Thread(target=solve)
    t.start()
    spins = 0
    while not done.is_set():
        spins += 1
    t.join()
    assert out["s"].termination == "time_limit" and out["s"].status == "feasible"
    # With the GIL held for 1.5 s this thread could not have run at all.
    assert spins > 100000, spins


def test_two_threads_solve_at_once(data):
    model = hetplan.load_model(data / "wide.onnx")  # one Model shared by both threads
    times, results = {}, {}

    def solve(key, solver):
        t0 = time.monotonic()
        results[key] = _hard(data, solver, model=model, time_limit=2, search_nodes=0)
        times[key] = (t0, time.monotonic())

    threads = [threading.Thread(target=solve, args=(k, sv)) for k, sv in (("a", "exact"), ("b", "exact"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert max(t0 for t0, _ in times.values()) < min(t1 for _, t1 in times.values()), times  # they overlapped
    for s in results.values():
        assert s.has_schedule and s.validate().ok and s.termination == "time_limit"


def test_ctrl_c_stops_a_sweep_and_keeps_what_is_done(data, sigint_after, tmp_path):
    out = tmp_path / "r.jsonl"
    sigint_after(1.5)
    t0 = time.monotonic()
    r = hetplan.dse([data / "wide.onnx"], "soc-example", sweep={"cpu.power_w": [1, 2, 3, 4]}, jobs=1,
                    time_limit=120, search_nodes=0, out=out)
    assert time.monotonic() - t0 < 30
    assert r.interrupted and r.summary["interrupted"] and len(r) < 4
    assert all(row["termination"] != "interrupted" for row in r)  # cut-short points are not written
    assert hetplan.read_results(out).rows == r.rows


def test_python_gets_ctrl_c_back_after_a_solve(data):
    """The chained handler is removed after each call, and Clp's never installed: Ctrl-C reaches Python again."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        for solver in ("exact", "mip"):
            s = hetplan.partition(data / "branchy.onnx", "soc-example", solver=solver, threads=1)
            assert s.status == "optimal" and not s.interrupted
            with pytest.raises(KeyboardInterrupt):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)  # the handler raises long before this ends
    finally:
        signal.signal(signal.SIGINT, previous)


def test_an_ignored_sigint_stops_nothing(data):
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        t = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        t.start()
        s = _hard(data, "exact", time_limit=1.5, search_nodes=0)
        t.join()
        assert s.termination == "time_limit" and not s.interrupted
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_call_inside_a_progress_callback(data):
    inner = []

    def progress(pu, done, total):
        if not inner:
            inner.append(hetplan.partition(data / "tiny.onnx", costs=data / "tiny_costs.csv"))

    hetplan.profile(data / "tiny.onnx", "klein-arm", warmup=0, runs=2, cache_dir=None, progress=progress)
    assert inner and inner[0].status == "optimal"


def test_planning_the_same_model_from_its_own_progress_callback(data, tmp_path):
    m = hetplan.load_model(data / "tiny.onnx")
    inner = []

    def progress(pu, done, total):
        if not inner:
            inner.append(hetplan.partition(m, warmup=0, runs=2, cache_dir=tmp_path))

    outer = hetplan.partition(m, warmup=0, runs=2, cache_dir=tmp_path, progress=progress)
    assert inner and inner[0].has_schedule and outer.has_schedule
