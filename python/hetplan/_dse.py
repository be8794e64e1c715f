"""Design-space exploration: ``hetplan dse`` from Python (docs/dse.md)."""

import os
import shutil
import tempfile
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

from . import _args, _core
from ._errors import InvalidArgumentError
from ._model import Model, _pandas
from ._platform import Platform

PathLike = Union[str, "os.PathLike[str]"]
DseProgress = Callable[[Dict[str, Any]], Any]


class DseResults(Sequence):
    """The results rows of a sweep (one dict per point, as the results file's JSON lines), in file order.

    ``summary`` holds the run's counts and times (points, ran, resumed,
    failed, not_applicable, time_limited, wall_s, ...); ``interrupted`` is
    True when Ctrl-C stopped the sweep (the file then holds the points done:
    run again with ``resume=True`` for the rest). ``path`` is the results
    file, or None when it was a temporary one.
    """

    def __init__(self, rows: List[Dict[str, Any]], summary: Dict[str, Any], bad_lines: int,
                 path: Optional[str]) -> None:
        self.rows = rows
        self.summary = summary
        self.bad_lines = bad_lines
        self.path = path

    @property
    def interrupted(self) -> bool:
        return bool(self.summary.get("interrupted"))

    def __getitem__(self, i: Any) -> Any:
        return self.rows[i]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        return iter(self.rows)

    @property
    def df(self) -> Any:
        """The rows as a pandas DataFrame (needs pandas); params become one column per swept key."""
        pandas = _pandas("DseResults.df")
        rows = []
        for r in self.rows:
            row = dict(r)
            for k, v in (r.get("params") or {}).items():
                row[k] = v
            rows.append(row)
        return pandas.DataFrame(rows)

    def __repr__(self) -> str:
        return f"<hetplan.DseResults {len(self)} rows{' (interrupted)' if self.interrupted else ''}>"


def _model_path(func: str, m: Any) -> str:
    if isinstance(m, Model):
        if not m._h.from_file:
            raise InvalidArgumentError(
                f"{func}: model '{m.path}' was loaded from bytes; dse reads models from files: pass a path "
                "(from_torch(..., path='model.onnx') keeps the export)")
        return m.path
    return _args.path(func, "every model", m)


def _platform_name(func: str, p: Any) -> str:
    if isinstance(p, Platform):
        if p.overrides:
            raise InvalidArgumentError(
                f"{func}: platform {p.name} has overrides ({' '.join(p.overrides)}); dse applies them to every "
                "point: pass them as overrides= (or sweep=) and the platform without them")
        if p.source.startswith("preset:"):
            return p.source[len("preset:"):]
        if p.source == "<dict>":
            raise InvalidArgumentError(
                f"{func}: platform {p.name} was built from a dict; dse loads platforms by preset name or YAML "
                "file: write it to a .yaml file and pass the path")
        return p.source
    return _args.path(func, "every platform", p)


def _sweeps(func: str, sweep: Any) -> List[str]:
    if sweep is None:
        return []
    if isinstance(sweep, dict):
        out = []
        for k, values in sweep.items():
            if not isinstance(k, str):
                raise _args.fail_type(func, "every key of sweep", k, "a str such as 'cim.crossbars'")
            if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, range)):
                raise _args.fail_type(func, f"sweep[{k!r}]", values, "a list of values")
            out.append(f"{k}={','.join(_args.override_value(func, k, v) for v in values)}")
        return out
    return _args.strings(func, "sweep", sweep)


def dse(models: Any, platforms: Any = "klein-arm", *, sweep: Any = None, overrides: Any = None,
        solvers: Any = ("exact",), objectives: Any = ("latency",), latency_cap: Optional[float] = None,
        fusion: str = "none", out: Optional[PathLike] = None, resume: bool = False, jobs: int = 0,
        schedules: Optional[PathLike] = None, time_limit: float = 600, gap: float = 1e-4, threads: int = 0,
        search_nodes: int = 100000, warm_start: bool = True, warmup: int = 20, runs: int = 200,
        cache_dir: Optional[PathLike] = _core.default_cache_dir, boundary_cost: str = "none",
        progress: Optional[DseProgress] = None) -> DseResults:
    """Sweeps models × platforms × swept values × objectives × methods, as ``hetplan dse`` does.

    ``models``: ONNX paths (or models loaded from files). ``platforms``:
    preset names or YAML paths. ``sweep``: ``{"cim.crossbars": [25, 50, 100]}``
    (or ``["cim.crossbars=25,50,100"]``), the first key varying slowest.
    ``solvers``: method names, ``"baselines"`` for every one-request
    baseline. ``out``: the results file (JSON lines, appended as points
    finish; an existing one needs ``resume=True``); without it a temporary
    file is used and removed. ``schedules``: a folder for each point's
    schedule file. ``boundary_cost="fitted"``: every point charges each
    measured PU's fitted segment boundary (``--boundary-cost fitted``; in
    each point's key and line). ``progress(p)`` is called on the calling thread with a
    dict: phase (profiling, solving, done), done, total, resumed, elapsed_s,
    eta_s, message. Ctrl-C stops the sweep cleanly: the points done are
    returned (``interrupted`` True) and stay in ``out`` for ``resume``.
    """
    func = "dse"
    model_list = [models] if isinstance(models, (str, os.PathLike, Model)) else list(models) \
        if isinstance(models, (list, tuple)) else None
    if model_list is None:
        raise _args.fail_type(func, "models", models, "a path, a Model or a list of them")
    platform_list = [platforms] if isinstance(platforms, (str, os.PathLike, Platform)) else list(platforms) \
        if isinstance(platforms, (list, tuple)) else None
    if platform_list is None:
        raise _args.fail_type(func, "platforms", platforms, "a preset name, a YAML path or a list of them")
    paths = [_model_path(func, m) for m in model_list]
    names = [_platform_name(func, p) for p in platform_list]
    tmp = None
    if out is None:
        tmp = tempfile.mkdtemp(prefix="hetplan-dse-")
        out_path = os.path.join(tmp, "results.jsonl")
    else:
        out_path = _args.path(func, "out", out)
    try:
        summary, rows, bad = _core.dse(
            paths, names, _args.overrides(func, overrides), _sweeps(func, sweep), _args.strings(func, "solvers",
                                                                                              solvers),
            _args.strings(func, "objectives", objectives), _args.optional_number(func, "latency_cap", latency_cap),
            _args.string(func, "fusion", fusion), _args.integer(func, "warmup", warmup, 0),
            _args.integer(func, "runs", runs, 1), _args.optional_path(func, "cache_dir", cache_dir),
            _args.number(func, "time_limit", time_limit), _args.number(func, "gap", gap),
            _args.integer(func, "threads", threads, 0), _args.integer(func, "search_nodes", search_nodes, 0),
            _args.boolean(func, "warm_start", warm_start), _args.integer(func, "jobs", jobs, 0), out_path,
            _args.boolean(func, "resume", resume), _args.optional_path(func, "schedules", schedules),
            _args.string(func, "boundary_cost", boundary_cost), _args.callback(func, "progress", progress))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return DseResults(rows, summary, bad, None if tmp is not None else out_path)


def read_results(path: PathLike) -> DseResults:
    """Reads a results file (``hetplan report`` reads the same); lines cut off by a kill are skipped and
    counted in ``bad_lines``."""
    rows, bad = _core.read_dse_results(_args.path("read_results", "path", path))
    return DseResults(rows, {}, bad, os.fspath(path))
