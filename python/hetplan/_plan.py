"""Planning: every registered method through the application layer, and the schedules it returns."""

import inspect
import os
import warnings
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Union

from . import _args, _core
from ._costs import CostTable, as_costs, load_costs
from ._errors import ArgumentTypeError, NoScheduleError
from ._model import Model, _pandas, as_model
from ._platform import Platform, as_platform

PathLike = Union[str, "os.PathLike[str]"]
ProfileProgress = Callable[[str, int, int], Any]


class MethodInfo(NamedTuple):
    """A registered planning method, as ``hetplan solvers --json`` lists it."""

    name: str
    family: str  # exact | mip | mapping | baseline
    summary: str
    objectives: List[str]
    requests: int  # 1, or 2 for the two-request methods
    spatial_pus: bool
    shared_adcs: bool  # accepts a CIM whose operators share an ADC pool (shared_adcs)
    reprogram: bool  # accepts a reprogramming CIM (exact rewrites operators; the baselines never do)
    proves_optimality: bool
    time_limit: bool
    schedule_mode: str
    docs: str


def solvers() -> List[MethodInfo]:
    """Every method of the planner registry, in registration order (``hetplan solvers``).

    Parametric families appear as ``"single:<pu>"``; call them as ``"single:cpu"``.
    """
    return [MethodInfo(**m) for m in _core.list_solvers()]


class Validation(NamedTuple):
    """What the independent validator found (``hetplan validate``)."""

    ok: bool
    violations: List[str]
    operators: int
    edges: int

    def __bool__(self) -> bool:
        return self.ok


def _validation(d: Dict[str, Any]) -> Validation:
    return Validation(d["ok"], d["violations"], d["operators"], d["edges"])


def validate(schedule: Union[PathLike, Dict[str, Any], "Schedule"]) -> Validation:
    """Checks a schedule file, a schedule dict or a :class:`Schedule` against every constraint, from the schedule
    alone (docs/schedule-format.md). Structural problems are violations; an unreadable file raises."""
    if isinstance(schedule, Schedule):
        return schedule.validate()
    if isinstance(schedule, dict):
        return _validation(_core.validate_json(schedule))
    return _validation(_core.validate_file(_args.path("validate", "schedule", schedule)))


class Schedule:
    """A plan: which PU runs each operator and when, with the solver's outcome.

    ``status`` says what it is worth (``optimal``: proven within the gap;
    ``feasible``: a limit or Ctrl-C stopped the search, see ``gap``;
    ``heuristic``; ``infeasible`` and ``no_solution`` carry no schedule),
    ``termination`` why the method stopped. :meth:`write` writes the same
    file the CLI's ``--out`` writes; every schedule has passed the
    independent validator before it is returned.
    """

    __slots__ = ("_r", "model", "platform", "_dict", "_plan_file", "_operators")

    def __init__(self, result: Any, model: Model, platform: Platform) -> None:
        if not isinstance(result, _core.PlanResult):
            raise ArgumentTypeError("Schedule: returned by hetplan.partition, hetplan.map and hetplan.plan")
        self._r = result
        self.model = model
        self.platform = platform
        self._dict: Optional[Dict[str, Any]] = None
        self._plan_file: Any = None  # _core.PlanFile, read once
        self._operators: Optional[List[Dict[str, Any]]] = None

    # The outcome.
    @property
    def has_schedule(self) -> bool:
        """False for infeasible problems and limits hit before any schedule."""
        return self._r.has_schedule

    @property
    def solver(self) -> str:
        """The method's canonical name."""
        return self._r.solver

    @property
    def status(self) -> str:
        return self._r.status

    @property
    def termination(self) -> str:
        """optimal | time_limit | node_limit | heuristic | infeasible | interrupted | numerical."""
        return self._r.termination

    @property
    def interrupted(self) -> bool:
        """Ctrl-C stopped the solve; this is its best schedule so far."""
        return self._r.interrupted

    @property
    def objective(self) -> Optional[float]:
        return self._r.objective

    @property
    def bound(self) -> Optional[float]:
        return self._r.bound

    @property
    def gap(self) -> Optional[float]:
        """(objective − bound) / |objective|; None without a bound."""
        return self._r.gap

    @property
    def seconds(self) -> float:
        """The solve's wall time (the file's one per-run field, solver.seconds)."""
        return self._r.seconds

    @property
    def formulation(self) -> str:
        return self._r.formulation

    @property
    def notes(self) -> List[str]:
        """The solver's notes (search size, warm start, what is heuristic)."""
        return self._r.notes

    @property
    def cost_notes(self) -> List[str]:
        """Where each PU's costs come from (also in the file's notes)."""
        return self._r.cost_notes

    @property
    def run_notes(self) -> List[str]:
        """About this run only (profile cache hit or miss); not in the file."""
        return self._r.run_notes

    @property
    def stats(self) -> Dict[str, Dict[str, Any]]:
        """Per-family statistics: ``mip``, ``exact``, ``mapping``, ``concurrent`` where they apply."""
        return self._r.stats

    # The plan.
    @property
    def makespan_us(self) -> Optional[float]:
        return self._r.makespan_us

    @property
    def energy_uj(self) -> Optional[float]:
        """None when a used PU has no power_w."""
        return self._r.energy_uj

    @property
    def initiation_interval_us(self) -> Optional[float]:
        """A stream's II (objective="throughput"; then makespan_us is one input's latency); None otherwise."""
        return self._plan().initiation_interval_us if self.has_schedule else None

    @property
    def references(self) -> Dict[str, float]:
        """The problem's reference schedules: cpu_only_us, <pu>_only_us, best_single_us, ..."""
        return self._r.references

    @property
    def baselines(self) -> Dict[str, float]:
        """The file's ``baselines`` (for map: BIDENT's single-PU totals under its accounting)."""
        return self._r.baselines

    @property
    def speedup(self) -> Optional[float]:
        """cpu_only_us / makespan_us (a stream's: / its II), as the CLI prints it; None where either is missing."""
        cpu = self.baselines.get("cpu_only_us")
        ms = self.initiation_interval_us or self.makespan_us
        return cpu / ms if cpu is not None and ms else None

    def _need(self, what: str) -> None:
        if not self.has_schedule:
            raise NoScheduleError(f"Schedule.{what}: solver {self.solver}: {self.status} after {self.seconds:.2f} s "
                                  "— no schedule (nothing to return or write)")

    def to_dict(self) -> Dict[str, Any]:
        """The schedule file as a dict (docs/schedule-format.md)."""
        self._need("to_dict")
        if self._dict is None:
            self._dict = self._r.schedule()
        return self._dict

    def _plan(self) -> Any:
        """The schedule file read back into its type (_core.PlanFile, ReadPlanFile), as split and run read it."""
        if self._plan_file is None:
            self._plan_file = self._r.plan_file()
        return self._plan_file

    def to_json(self) -> str:
        """The schedule file's exact text, as :meth:`write` and the CLI write it."""
        self._need("to_json")
        return self._r.schedule_text()

    def to_csv(self) -> str:
        """The CSV summary (``--csv``), one row per operator."""
        self._need("to_csv")
        return self._r.csv()

    def to_trace(self) -> Dict[str, Any]:
        """The Chrome trace (``--trace``; open in ui.perfetto.dev)."""
        self._need("to_trace")
        return self._r.trace()

    def write(self, path: PathLike, *, csv: Optional[PathLike] = None, trace: Optional[PathLike] = None) -> None:
        """Writes the schedule file (the bytes of the CLI's ``--out``), and the CSV and trace when asked;
        each atomically, so a failed write leaves no partial file."""
        self._need("write")
        f = "Schedule.write"
        self._r.write(_args.path(f, "path", path), _args.optional_path(f, "csv", csv),
                      _args.optional_path(f, "trace", trace))

    def validate(self) -> Validation:
        """Runs the independent validator on the schedule (it already passed once, inside the call)."""
        self._need("validate")
        return _validation(self._r.validate())

    @property
    def operators(self) -> List[Dict[str, Any]]:
        """One dict per operator: id, name, type, device, start_us, finish_us, cost_us, crossbars, ..."""
        if not self.has_schedule:
            return []
        if self._operators is None:
            self._operators = [_operator_dict(i, op) for i, op in enumerate(self._plan().operators)]
        return self._operators

    @property
    def df(self) -> Any:
        """The operators as a pandas DataFrame (needs pandas); cost_us becomes one cost_<pu>_us column per PU."""
        pandas = _pandas("Schedule.df")
        rows = []
        for op in self.operators:
            row = {k: v for k, v in op.items() if k != "cost_us"}
            for pu, cost in op["cost_us"].items():
                row[f"cost_{pu}_us"] = cost
            rows.append(row)
        return pandas.DataFrame(rows).set_index("id") if rows else pandas.DataFrame()

    def devices(self) -> Dict[str, Dict[str, Any]]:
        """Per PU: operators, busy_us and (spatial PUs) crossbars used, as the CLI's summary prints them."""
        out: Dict[str, Dict[str, Any]] = {}
        if not self.has_schedule:
            return out
        plan = self._plan()
        devices = plan.devices
        count = [0] * len(devices)
        busy = [0.0] * len(devices)
        crossbars = [0] * len(devices)
        for op in plan.operators:
            i = op.device_index
            count[i] += 1
            busy[i] += op.finish_us - op.start_us
            if op.crossbars is not None:
                crossbars[i] += op.crossbars
        for i, d in enumerate(devices):
            out[d.name] = {"operators": count[i], "busy_us": busy[i]}
            if d.spatial():
                out[d.name].update(crossbars=crossbars[i], capacity=d.capacity_crossbars)
        return out

    def __repr__(self) -> str:
        if not self.has_schedule:
            return f"<hetplan.Schedule {self.solver}: {self.status}, no schedule>"
        sp = f", speedup {self.speedup:.2f}x" if self.speedup else ""
        return f"<hetplan.Schedule {self.solver}: {self.status}, makespan {self.makespan_us:.1f} µs{sp}>"


def _operator_dict(op_id: int, op: Any) -> Dict[str, Any]:
    """One typed operator (_core.PlanFileOperator) as the schedule file's operators[] entry, keys sorted as in
    the file (to_dict()); adcs, crossbar_ids, op_energy_uj, slowdown, request, weight and write only where the
    file has them (a shared ADC pool, a reprogramming CIM, a CIM circuit's energies, not 1, not 0, a weight
    matrix, a rewritten operator)."""
    d: Dict[str, Any] = {}
    if op.adcs:
        d["adcs"] = op.adcs
    d["cost_us"] = op.cost_us
    if op.crossbar_ids:
        d["crossbar_ids"] = [list(r) for r in op.crossbar_ids]
    d.update({"crossbars": op.crossbars, "device": op.device, "finish_us": op.finish_us, "id": op_id})
    if op.mvms:
        d["mvm_us"] = op.mvm_us
        d["mvms"] = op.mvms
    d.update({"name": op.name, "nodes": op.nodes})
    if op.op_energy_uj:
        d["op_energy_uj"] = op.op_energy_uj
    d["output_bytes"] = op.output_bytes
    if op.stage is not None:
        d["replicas"] = op.replicas
    if op.request != 0:
        d["request"] = op.request
    if op.slowdown != 1:
        d["slowdown"] = op.slowdown
    if op.stage is not None:
        d["stage"] = op.stage
    d["start_us"] = op.start_us
    d["type"] = op.type
    if op.weight is not None:
        w = op.weight
        d["weight"] = {"bits": w.bits, "cols": w.cols, "directions": w.directions, "groups": w.groups,
                       "n_mvm": w.n_mvm, "product": w.product, "rows": w.rows}
    if op.write is not None:
        w = op.write
        d["write"] = {"energy_uj": w.energy_uj, "finish_us": w.finish_us, "rows": w.rows,
                      "rows_written": w.rows_written, "start_us": w.start_us, "write_us": w.write_us}
    return d


def _cost_args(func: str, param: str, value: Any):
    c = as_costs(func, param, value)
    if isinstance(c, CostTable):
        return c._h, c.label, ""
    return None, "cost table", c or ""


class _Call(NamedTuple):
    """A planning call ready to run: what plan/partition/map hand to the library."""

    call: Any  # _core.PlanCall
    model: Model
    platform: Platform
    progress: Any

    def run(self) -> Schedule:
        return Schedule(_core.run_plan(self.call, self.progress), self.model, self.platform)


def _call(func: str, spec: Any, model: Model, platform: Platform, costs: Any, second: Optional[Model],
          second_costs: Any, warmup: int, runs: int, cache_dir: Optional[PathLike], progress: Any,
          boundary_cost: str = "none") -> _Call:
    table, label, path = _cost_args(func, "costs", costs)
    table2, label2, path2 = _cost_args(func, "second_costs", second_costs)
    warmup = _args.integer(func, "warmup", warmup, 0)
    runs = _args.integer(func, "runs", runs, 1)
    cache = _args.optional_path(func, "cache_dir", cache_dir)
    _args.callback(func, "progress", progress)
    call = _core.make_call(spec, model._h, platform._h, table, label, path, second._h if second else None, table2,
                           label2, path2, warmup, runs, cache, _args.string(func, "boundary_cost", boundary_cost))
    return _Call(call, model, platform, progress)


def _coexec(func: str, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, CostTable):
        return value._h
    return load_costs(_args.path(func, "coexec", value))._h


def plan(model: Any, platform: Any = "klein-arm", solver: str = "exact", **options: Any) -> Schedule:
    return _plan_call(model, platform, solver, **options).run()


def _plan_call(model: Any, platform: Any = "klein-arm", solver: str = "exact", *, objective: str = "latency",
         latency_cap: Optional[float] = None, overrides: Any = None, costs: Any = None,
         second_model: Any = None, second_costs: Any = None, coexec: Any = None, method_references: bool = False,
         time_limit: Optional[float] = None, gap: Optional[float] = None, threads: Optional[int] = None,
         search_nodes: Optional[int] = None, warm_start: Optional[bool] = None, log: Optional[bool] = None,
         write_lp: Optional[PathLike] = None, write_mps: Optional[PathLike] = None, mip_backend: Optional[str] = None,
         accounting: Optional[str] = None, algorithm: Optional[str] = None, space: Optional[str] = None, solo_steps: Optional[bool] = None,
         axonn_max_switches: Optional[int] = None, hetero_max_pus: Optional[int] = None, warmup: int = 20, runs: int = 200, cache_dir: Optional[PathLike] = _core.default_cache_dir,
         boundary_cost: str = "none", progress: Optional[ProfileProgress] = None, _func: str = "plan") -> _Call:
    """Plans with any registered method (:func:`solvers` lists them) through the application layer the CLI uses.

    ``model``: a :class:`Model` or an ONNX path. ``platform``: a preset name,
    a YAML path, a dict or a :class:`Platform`; ``overrides`` as in
    :meth:`Platform.with_overrides`. ``costs``: a :class:`CostTable` or a
    table file, for ``cost: table`` PUs and instead of profiling where it
    covers a PU (``--costs``); otherwise ``cost: profile`` PUs are measured
    with ``warmup``/``runs`` through ``cache_dir`` (``None``: afresh).
    ``boundary_cost="fitted"`` charges each measured PU's fitted segment
    boundary on every edge into it from another PU (``--boundary-cost``).
    Two-request methods (``map_concurrent``, ``pair_serial``, ...) plan
    ``second_model`` (default: the model twice). The solver options are the
    CLI's, with the same defaults: ``time_limit`` (s, 600), ``gap`` (1e-4),
    ``threads`` (0: all cores), ``search_nodes`` (exact, 100000),
    ``warm_start``, ``write_lp``/``write_mps`` (the paper's MIP),
    ``mip_backend`` (mip, and exact's fallback: ``"auto"``, HiGHS where built,
    else CBC; ``"cbc"``; ``"highs"``),
    ``accounting``/``algorithm`` (mapping), ``space``/``solo_steps``
    (map_concurrent), ``axonn_max_switches``/``hetero_max_pus`` (baselines).
    An option left ``None`` keeps its default; one given to a method that
    ignores it is refused (``InvalidArgumentError``), as the CLI refuses the
    flag (``hetplan solvers --options`` lists which method reads which).
    ``method_references``: the file's baselines are the method's own
    (BIDENT's single-PU totals) instead of the problem's.

    Releases the GIL while it runs; Ctrl-C stops a solve that honours it
    (exact, mip) with its best schedule so far (status ``feasible``,
    termination ``interrupted``). Errors raise :class:`Error` subclasses with
    the CLI's messages; outcomes without a schedule are returned
    (``has_schedule`` False).
    """
    func = _func
    m = as_model(func, model)
    p = as_platform(func, platform, overrides)
    second = None if second_model is None else as_model(func, second_model)
    spec, notice = _core.solver_spec(
        _args.string(func, "solver", solver), _args.string(func, "objective", objective),
        _args.optional_number(func, "latency_cap", latency_cap), _args.boolean(func, "method_references",
                                                                               method_references),
        _args.optional_number(func, "time_limit", time_limit), _args.optional_number(func, "gap", gap),
        _args.optional_integer(func, "threads", threads, 0),
        _args.optional_integer(func, "search_nodes", search_nodes, 0),
        _args.optional_boolean(func, "warm_start", warm_start), _args.optional_boolean(func, "log", log),
        _args.optional_path(func, "write_lp", write_lp), _args.optional_path(func, "write_mps", write_mps),
        _args.optional_string(func, "mip_backend", mip_backend),
        _args.optional_string(func, "accounting", accounting), _args.optional_string(func, "algorithm", algorithm),
        _args.optional_string(func, "space", space), _args.optional_boolean(func, "solo_steps", solo_steps),
        _args.optional_integer(func, "axonn_max_switches", axonn_max_switches),
        _args.optional_integer(func, "hetero_max_pus", hetero_max_pus), _coexec(func, coexec))
    if notice:
        warnings.warn(notice, FutureWarning, stacklevel=3)
    return _call(func, spec, m, p, costs, second, second_costs, warmup, runs, cache_dir, progress, boundary_cost)


# plan's signature and docstring are _plan_call's (one definition of the options).
_sig = inspect.signature(_plan_call)
plan.__signature__ = _sig.replace(parameters=[p for p in _sig.parameters.values() if p.name != "_func"],
                                  return_annotation=Schedule)  # type: ignore[attr-defined]
plan.__doc__ = _plan_call.__doc__


def partition(model: Any, platform: Any = "klein-arm", overrides: Any = None, objective: str = "latency",
              time_limit: Optional[float] = None, costs: Any = None, *, solver: str = "exact",
              latency_cap: Optional[float] = None, gap: Optional[float] = None, threads: Optional[int] = None,
              search_nodes: Optional[int] = None, warm_start: Optional[bool] = None, log: Optional[bool] = None,
              write_lp: Optional[PathLike] = None, write_mps: Optional[PathLike] = None,
              mip_backend: Optional[str] = None, warmup: int = 20, runs: int = 200, cache_dir: Optional[PathLike] = _core.default_cache_dir,
              boundary_cost: str = "none", progress: Optional[ProfileProgress] = None) -> Schedule:
    """Assigns every operator to a PU and schedules it: ``hetplan partition``.

    The defaults are the CLI's: the exact search on ``klein-arm``, latency,
    600 s. ``solver="mip"`` solves the CIM paper's MIP (on HiGHS where built, else CBC;
    ``mip_backend="cbc"``: on CBC); any other
    method works too (:func:`plan` takes every option). The same model,
    platform and options give the CLI's schedule file byte for byte, apart
    from ``solver.seconds``.
    """
    return _plan_call(model, platform, solver, objective=objective, latency_cap=latency_cap, overrides=overrides,
                      costs=costs, time_limit=time_limit, gap=gap, threads=threads, search_nodes=search_nodes,
                      warm_start=warm_start, log=log, write_lp=write_lp, write_mps=write_mps,
                      mip_backend=mip_backend, warmup=warmup,
                      runs=runs, cache_dir=cache_dir, boundary_cost=boundary_cost, progress=progress,
                      _func="partition").run()


def map(model: Any, platform: Any = "soc-example", mode: str = "sequential", *, overrides: Any = None,
        objective: str = "latency", accounting: Optional[str] = None, algorithm: str = "dp", costs: Any = None,
        second_model: Any = None, second_costs: Any = None, coexec: Any = None, joint: bool = False,
        lockstep: bool = False, warmup: int = 20, runs: int = 200,
        cache_dir: Optional[PathLike] = _core.default_cache_dir, boundary_cost: str = "none",
        progress: Optional[ProfileProgress] = None) -> Schedule:
    """BIDENT's operator-level mapping: ``hetplan map``.

    ``mode``: ``sequential`` (shortest path over the operator chain),
    ``parallel`` (intra-model branches, phase-wise) or ``concurrent`` (two
    requests: ``second_model``, default the model twice; ``joint`` searches
    the joint space for the same model, ``lockstep`` uses BIDENT's literal
    transitions only, ``coexec`` adds co-execution rows). ``accounting``:
    ``conservative`` (default) or ``neighbour`` (one-request modes).
    ``algorithm``: ``dp`` or ``dijkstra``. The schedule's ``baselines`` are
    BIDENT's single-PU totals under the same accounting, as the CLI's.
    """
    func = "map"
    m = as_model(func, model)
    p = as_platform(func, platform, overrides)
    second = None if second_model is None else as_model(func, second_model)
    spec = _core.map_spec(_args.string(func, "mode", mode), _args.string(func, "objective", objective),
                          _args.optional_string(func, "accounting", accounting),
                          _args.string(func, "algorithm", algorithm), second is not None,
                          _args.boolean(func, "joint", joint), _args.boolean(func, "lockstep", lockstep),
                          _coexec(func, coexec))
    return _call(func, spec, m, p, costs, second, second_costs, warmup, runs, cache_dir, progress,
                 boundary_cost).run()
