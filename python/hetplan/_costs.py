"""Cost tables: measured with ONNX Runtime, or read from CSV/JSON (docs/cost-table-format.md)."""

import os
from typing import Any, Callable, Dict, List, Optional, Union

from . import _args, _core
from ._errors import ArgumentTypeError
from ._model import Model, _pandas, as_model
from ._platform import Platform, as_platform

PathLike = Union[str, "os.PathLike[str]"]
ProfileProgress = Callable[[str, int, int], Any]


class CostTable:
    """What each operator costs on a PU, with its provenance (``meta``).

    Made by :func:`profile` or :func:`load_costs`; pass it to
    :func:`partition`/:func:`map`/:func:`plan` as ``costs=`` where the CLI
    takes ``--costs``.
    """

    __slots__ = ("_h", "label", "_dict")

    def __init__(self, handle: Any, label: str = "cost table") -> None:
        if not isinstance(handle, _core.CostTable):
            raise ArgumentTypeError("CostTable: use hetplan.profile(...) or hetplan.load_costs(path)")
        self._h = handle
        self.label = label
        self._dict: Optional[Dict[str, Any]] = None

    @property
    def meta(self) -> Dict[str, str]:
        """Provenance: source, model_sha256, host, cpu, threads, runtime, cache, ..."""
        return self._h.meta

    def to_dict(self) -> Dict[str, Any]:
        """The JSON form (``hetplan profile --json``)."""
        if self._dict is None:
            self._dict = self._h.to_dict()
        return self._dict

    @property
    def rows(self) -> List[Dict[str, Any]]:
        """One dict per row: kind (op, pu, slowdown, coexec), op_name, pu, exec_us, ..."""
        return self.to_dict()["rows"]

    @property
    def df(self) -> Any:
        """The rows as a pandas DataFrame (needs pandas)."""
        return _pandas("CostTable.df").DataFrame(self.rows)

    def to_csv(self) -> str:
        """The CSV form (``hetplan profile --out``)."""
        return self._h.to_csv()

    def write(self, path: PathLike, json: Optional[PathLike] = None) -> None:
        """Writes the CSV to ``path`` (and the JSON to ``json``), atomically."""
        self._h.save(_args.path("CostTable.write", "path", path), _args.optional_path("CostTable.write", "json", json))

    def __len__(self) -> int:
        return self._h.num_ops

    def __repr__(self) -> str:
        return f"<hetplan.CostTable {self.label}: {len(self)} operator rows, source {self.meta.get('source', '?')}>"


def load_costs(path: PathLike) -> CostTable:
    """Reads a cost table (.csv or .json by extension)."""
    p = _args.path("load_costs", "path", path)
    return CostTable(_core.load_cost_table(p), p)


def as_costs(func: str, param: str, value: Any) -> Any:
    """costs=: None, a CostTable, or a path (the CLI's --costs)."""
    if value is None or isinstance(value, CostTable):
        return value
    if isinstance(value, (str, os.PathLike)):
        return _args.path(func, param, value)
    raise _args.fail_type(func, param, value, "a hetplan.CostTable, a path to a cost table or None")


def profile(model: Any, platform: Any = "klein-arm", *, pu: Optional[str] = None, threads: Optional[int] = None,
            warmup: int = 20, runs: int = 200, model_runs: Optional[int] = None, in_context: bool = True,
            overrides: Any = None, cache_dir: Optional[PathLike] = _core.default_cache_dir,
            progress: Optional[ProfileProgress] = None) -> CostTable:
    """Measures every operator on this host with ONNX Runtime, as
    ``hetplan profile MODEL --platform P`` does: the platform's first
    ``cost: profile`` PU (or ``pu``), as it runs (its provider and cores, or
    for ``runtime: openvino`` its OpenVINO device, docs/openvino.md), with
    that PU's threads unless ``threads`` is given; the median of ``runs``
    timed runs after ``warmup`` (OpenVINO: its per-node means).
    ``model_runs`` whole-model runs (``None``: ``runs`` / 2, from 3 to 50).

    The table is cached in ``cache_dir`` (``None``: measure afresh, cache
    nothing) and with the model, so that planning it with the same settings
    measures nothing. ``progress(pu, done, total)`` is called after each
    operator, on the calling thread. Ctrl-C takes effect once the measurement
    ends (ONNX Runtime's profiler has no stop hook).
    """
    func = "profile"
    m = as_model(func, model)
    p = as_platform(func, platform, overrides)
    pu = _args.optional_string(func, "pu", pu)
    if threads is not None:
        threads = _args.integer(func, "threads", threads, 1)
    warmup = _args.integer(func, "warmup", warmup, 0)
    runs = _args.integer(func, "runs", runs, 1)
    if model_runs is not None:
        model_runs = _args.integer(func, "model_runs", model_runs, 1)
    in_context = _args.boolean(func, "in_context", in_context)
    cache = _args.optional_path(func, "cache_dir", cache_dir)
    _args.callback(func, "progress", progress)
    table = _core.profile(m._h, p._h, pu or "", threads, warmup, runs, model_runs, in_context, cache, progress)
    return CostTable(table, f"profile of {m.path}")
