"""partition, map, plan, solvers, validate and the Schedule object."""

import json
import warnings

import pytest

import hetplan
from conftest import cli_error, run_cli, without_per_run_fields


def without_seconds_line(text):
    """The file's lines but the one of solver.seconds (the file is written one key per line)."""
    lines = text.splitlines(keepends=True)
    kept = [ln for ln in lines if not ln.lstrip().startswith('"seconds": ')]
    assert len(kept) == len(lines) - 1
    return "".join(kept)


def test_partition_returns_a_validated_schedule(data, tmp_path):
    s = hetplan.partition(data / "tiny.onnx", costs=data / "tiny_costs.csv")
    assert s.has_schedule and s.solver == "exact" and s.status == "optimal" and s.termination == "proved"
    assert s.formulation == "strong" and s.gap == 0 and s.bound == pytest.approx(s.objective)
    assert s.makespan_us == pytest.approx(s.objective) and s.energy_uj is None
    assert [op["name"] for op in s.operators] == ["conv0", "relu0", "conv1"]
    assert {op["device"] for op in s.operators} <= {"cpu", "cim"}
    assert s.baselines["cpu_only_us"] == pytest.approx(24.0)
    assert s.speedup == pytest.approx(24.0 / s.makespan_us)
    assert s.validate().ok and s.validate().operators == 3 and hetplan.validate(s)
    d = s.to_dict()
    assert d["format"] == "hetplan-schedule" and d["solver"]["name"] == "exact"
    text = s.to_json()
    assert text.endswith("\n") and json.loads(text) == d
    s.write(tmp_path / "s.json", csv=tmp_path / "s.csv", trace=tmp_path / "t.json")
    assert (tmp_path / "s.json").read_text() == text
    assert (tmp_path / "s.csv").read_text() == s.to_csv() and s.to_csv().startswith("id,name,type,device")
    assert json.loads((tmp_path / "t.json").read_text()) == s.to_trace()
    assert hetplan.validate(tmp_path / "s.json").ok and hetplan.validate(d).ok
    devices = s.devices()
    assert sum(v["operators"] for v in devices.values()) == 3 and "crossbars" in devices["cim"]
    assert "optimal" in repr(s)


def test_schedule_dataframe(data):
    pytest.importorskip("pandas")
    df = hetplan.partition(data / "tiny.onnx", costs=data / "tiny_costs.csv").df
    assert list(df["name"]) == ["conv0", "relu0", "conv1"] and "cost_cpu_us" in df.columns


def test_the_file_from_python_is_the_cli_file(data, binary, tmp_path):
    """Byte-identical apart from the documented per-run fields (solver.seconds)."""
    model, costs = str(data / "branchy.onnx"), str(data / "tiny_costs.csv")
    for args, call in [
        (["partition", model, "--platform", "klein-arm", "--set", "cim.crossbars=3"],
         lambda: hetplan.partition(model, "klein-arm", {"cim.crossbars": 3})),
        (["partition", model, "--platform", "soc-example", "--solver", "mip", "--threads", "1"],
         lambda: hetplan.partition(model, "soc-example", solver="mip", threads=1)),
        (["partition", model, "--platform", "soc-example", "--objective", "energy"],
         lambda: hetplan.partition(model, "soc-example", objective="energy")),
        (["map", model, "--platform", "soc-example", "--mode", "parallel", "--accounting", "neighbour"],
         lambda: hetplan.map(model, "soc-example", "parallel", accounting="neighbour")),
        (["map", model, "--mode", "concurrent"], lambda: hetplan.map(model, mode="concurrent")),
        (["partition", str(data / "tiny.onnx"), "--costs", costs],
         lambda: hetplan.partition(str(data / "tiny.onnx"), costs=costs)),
    ]:
        out = tmp_path / "cli.json"
        code, stdout, err = run_cli(binary, *args, "--out", out)
        assert code == 0, err
        s = call()
        s.write(tmp_path / "py.json")
        cli_text, py_text = out.read_text(), (tmp_path / "py.json").read_text()
        assert without_per_run_fields(cli_text) == without_per_run_fields(py_text), args
        assert without_seconds_line(cli_text) == without_seconds_line(py_text), args  # byte for byte
        assert py_text == s.to_json()


def test_resnet18_with_measured_costs_matches_the_cli(resnet18, binary, profile_cache, tmp_path):
    """The CLI measures ResNet-18 into the profile cache; Python plans from the same cache."""
    out = tmp_path / "cli.json"
    code, stdout, err = run_cli(binary, "partition", resnet18, "--warmup", "2", "--runs", "5", "--cache-dir",
                                profile_cache, "--set", "cim.crossbars=50", "--out", out)
    assert code == 0, err
    s = hetplan.partition(resnet18, "klein-arm", {"cim.crossbars": 50}, warmup=2, runs=5, cache_dir=profile_cache)
    assert s.run_notes == ["cpu: profile cache hit"]
    assert any(n.startswith("cpu: measured with onnxruntime") for n in s.cost_notes)
    assert without_per_run_fields(out.read_text()) == without_per_run_fields(s.to_json())
    assert f"makespan  {s.makespan_us:.1f} µs" in stdout


def _file_devices(doc):
    """Schedule.devices() as it was computed from the schedule file's JSON: the reference the typed path must equal
    exactly (busy_us summed in the same order)."""
    devices, operators = doc.get("devices"), doc.get("operators")
    spatial = {d.get("name") for d in devices if d.get("execution") == "spatial"}
    out = {}
    for d in devices:
        out[d.get("name")] = {"operators": 0, "busy_us": 0.0}
        if d.get("name") in spatial:
            out[d.get("name")].update(crossbars=0, capacity=d.get("capacity_crossbars"))
    for op in operators:
        entry = out[op.get("device")]
        entry.update(operators=entry.get("operators") + 1,
                     busy_us=entry.get("busy_us") + (op.get("finish_us") - op.get("start_us")))
        if op.get("device") in spatial and op.get("crossbars") is not None:
            entry.update(crossbars=entry.get("crossbars") + op.get("crossbars"))
    return out


def _assert_typed_plan_is_the_file(s):
    """Schedule.operators and Schedule.devices(), read through the typed PlanFile, equal the file's JSON exactly
    (same keys in the same order, same values and types)."""
    doc = s.to_dict()
    file_ops = doc.get("operators")
    assert s.operators == file_ops and s.operators is not file_ops  # built from the typed PlanFile
    assert [list(op) for op in s.operators] == [list(op) for op in file_ops]
    types = [[type(v) for v in op.values()] for op in s.operators]
    assert types == [[type(v) for v in op.values()] for op in file_ops]
    assert s.devices() == _file_devices(doc)
    assert [list(v) for v in s.devices().values()] == [list(v) for v in _file_devices(doc).values()]


def test_typed_plan_equals_the_schedule_file(resnet18, data, profile_cache):
    """ResNet-18 on klein-arm with measured CPU costs, plus a two-request mapping (operators with a request)."""
    s = hetplan.partition(resnet18, "klein-arm", {"cim.crossbars": 50}, warmup=2, runs=5, cache_dir=profile_cache)
    _assert_typed_plan_is_the_file(s)
    assert s.devices()["cim"]["crossbars"] <= 50 and sum(v["operators"] for v in s.devices().values()) > 20
    assert any(op["device"] == "cim" for op in s.operators) and all(op["nodes"] for op in s.operators)
    # A circuit-modelled CIM's per-operator energies (op_energy_uj) come through too.
    puma = hetplan.partition(resnet18, "puma", {"cpu.power_w": 5}, objective="energy", solver="greedy", warmup=2,
                             runs=5, cache_dir=profile_cache)
    _assert_typed_plan_is_the_file(puma)
    assert any("op_energy_uj" in op for op in puma.operators)
    # A reprogramming CIM with a shared ADC pool: each operator's ADCs, physical crossbars and write come through.
    rp = hetplan.partition(resnet18, "puma", {"cim.crossbars": 700, "cim.shared_adcs": 256,
                                              "cim.write_ns_per_row": 100, "cim.endurance_writes": 1e8,
                                              "cim.lifetime_inferences": 1e6, "cim.reprogram": "true"},
                           time_limit=3, threads=1, warmup=2, runs=5, cache_dir=profile_cache)
    _assert_typed_plan_is_the_file(rp)
    on_cim = [op for op in rp.operators if op["device"] == "cim"]
    assert on_cim and all("crossbar_ids" in op and "adcs" in op for op in on_cim)
    assert {info.name for info in hetplan.solvers() if info.reprogram and info.shared_adcs} >= {"exact", "greedy"}
    # A stream (objective="throughput"): each operator's copies and stage, the II, latency_cap as --max-latency.
    st = hetplan.partition(resnet18, "klein-arm", {"cim.crossbars": 200}, objective="throughput", threads=1, warmup=2,
                           runs=5, cache_dir=profile_cache)
    _assert_typed_plan_is_the_file(st)
    assert st.initiation_interval_us == st.to_dict()["initiation_interval_us"] > 0
    assert all(op["replicas"] >= 1 and op["stage"] >= 0 for op in st.operators)
    assert st.speedup == pytest.approx(st.baselines["cpu_only_us"] / st.initiation_interval_us)
    one = hetplan.partition(resnet18, "klein-arm", {"cim.crossbars": 200}, threads=1, warmup=2, runs=5,
                            cache_dir=profile_cache)
    assert one.initiation_interval_us is None and one.to_dict()["pipelined_ii_us"] >= st.initiation_interval_us * 0.9999
    conc = hetplan.map(data / "branchy.onnx", mode="concurrent", second_model=data / "tiny.onnx")
    _assert_typed_plan_is_the_file(conc)
    assert {op.get("request", 0) for op in conc.operators} == {0, 1}


def test_boundary_cost_fitted_is_the_cli_flag(resnet18, binary, profile_cache, tmp_path):
    """boundary_cost="fitted" plans as --boundary-cost fitted: the same schedule file, never below the uncharged plan."""
    out = tmp_path / "cli.json"
    code, _, err = run_cli(binary, "partition", resnet18, "--warmup", "2", "--runs", "5", "--cache-dir", profile_cache,
                           "--set", "cim.crossbars=50", "--boundary-cost", "fitted", "--out", out)
    assert code == 0, err
    args = dict(warmup=2, runs=5, cache_dir=profile_cache)
    s = hetplan.partition(resnet18, "klein-arm", {"cim.crossbars": 50}, boundary_cost="fitted", **args)
    assert without_per_run_fields(out.read_text()) == without_per_run_fields(s.to_json())
    assert any(n.startswith("cpu: boundary cost") for n in s.cost_notes), s.cost_notes
    plain = hetplan.partition(resnet18, "klein-arm", {"cim.crossbars": 50}, **args)
    assert not any(n.startswith("cpu: boundary cost") for n in plain.cost_notes)
    assert s.makespan_us >= plain.makespan_us * (1 - 1e-9)
    # BIDENT's mapping on a SoC whose CPU is measured here.
    mapped = hetplan.map(resnet18, "soc-example", overrides={"cpu.cost": "profile"}, boundary_cost="fitted", **args)
    assert any(n.startswith("cpu: boundary cost") for n in mapped.cost_notes)
    with pytest.raises(hetplan.InvalidArgumentError, match="boundary_cost 'maybe'"):
        hetplan.partition(resnet18, "klein-arm", boundary_cost="maybe", **args)


def test_map_modes(data):
    m = hetplan.load_model(data / "branchy.onnx")
    seq = hetplan.map(m)
    assert seq.solver == "map" and seq.platform.name == "soc-example"
    assert seq.stats["mapping"]["accounting"] == "conservative" and "best_single_us" in seq.baselines
    par = hetplan.map(m, mode="parallel", objective="energy")
    assert par.solver == "map_parallel" and par.energy_uj is not None
    conc = hetplan.map(m, mode="concurrent", second_model=data / "tiny.onnx")
    assert conc.solver == "map_concurrent" and conc.stats["concurrent"]["space"] == "joint"
    assert {op.get("request", 0) for op in conc.operators} == {0, 1}
    assert hetplan.map(m, mode="concurrent").stats["concurrent"]["space"] == "aligned"
    for s in (seq, par, conc):
        assert s.validate().ok


def test_map_errors(data, binary):
    with pytest.raises(hetplan.InvalidArgumentError) as e:
        hetplan.map(data / "tiny.onnx", mode="concurrent", accounting="neighbour")
    assert str(e.value) == cli_error(binary, "map", data / "tiny.onnx", "--mode", "concurrent", "--accounting",
                                     "neighbour")
    with pytest.raises(hetplan.InvalidArgumentError):
        hetplan.map(data / "tiny.onnx", mode="sequential", joint=True)
    with pytest.raises(hetplan.InvalidArgumentError):
        hetplan.map(data / "tiny.onnx", mode="sideways")
    with pytest.raises(hetplan.InvalidArgumentError):
        hetplan.map(data / "tiny.onnx", algorithm="astar")


def _method_case(info):
    """A problem each method applies to: spatial PUs only where it takes them; every PU with a power, for the
    methods that minimise energy (AxoNN)."""
    if info.spatial_pus:
        platform = hetplan.platform("klein-arm", {"cpu.power_w": 3, "cim.power_w": 1})
    else:
        platform = hetplan.platform("soc-example")
    objective = "latency" if "latency" in info.objectives else info.objectives[0]
    return platform, objective


def test_every_registered_method_is_reachable(data):
    names = [m.name for m in hetplan.solvers()]
    assert names[:2] == ["exact", "mip"] and "map_concurrent" in names and "single:<pu>" in names
    m = hetplan.load_model(data / "branchy.onnx")
    for info in hetplan.solvers():
        name = "single:cpu" if info.name == "single:<pu>" else info.name
        platform, objective = _method_case(info)
        # threads only where the method reads it: elsewhere it would be refused
        s = hetplan.plan(m, platform, name, objective=objective, **({"threads": 1} if info.time_limit else {}))
        assert s.solver == name and s.has_schedule, name
        assert s.validate().ok, name
        assert s.to_dict()["mode"] == info.schedule_mode, name
        if info.requests == 2:
            assert {op.get("request", 0) for op in s.operators} == {0, 1}, name


def test_solvers_describe_themselves():
    exact = hetplan.solvers()[0]
    assert isinstance(exact, hetplan.MethodInfo)
    assert exact.family == "exact" and exact.proves_optimality and exact.time_limit and exact.docs == "docs/ilp.md"
    assert set(exact.objectives) == {"latency", "energy", "throughput"}


def test_plan_options_reach_the_method(data, tmp_path):
    s = hetplan.plan(data / "branchy.onnx", "klein-arm", "mip", threads=1, write_lp=tmp_path / "m.lp",
                     overrides={"cim.crossbars": 3})
    assert s.formulation == "paper" and s.stats["mip"]["variables"] > 0 and (tmp_path / "m.lp").exists()
    s = hetplan.plan(data / "wide.onnx", "klein-arm", "exact", costs=data / "wide_costs.csv", search_nodes=10,
                     overrides={"cim.crossbars": 24}, threads=1)
    assert s.stats["exact"]["nodes"] >= 10
    s = hetplan.plan(data / "branchy.onnx", "soc-example", "map", accounting="neighbour", algorithm="dijkstra",
                     method_references=True)
    assert s.stats["mapping"]["algorithm"] == "dijkstra" and s.baselines == s.stats["mapping"]["references"]


def test_old_method_names_warn_with_the_cli_notice(data):
    with pytest.warns(FutureWarning, match="exact"):
        s = hetplan.partition(data / "tiny.onnx", costs=data / "tiny_costs.csv", solver="ilp")
    assert s.solver == "exact"


def test_planning_errors_are_the_cli_messages(data, binary):
    tiny = str(data / "tiny.onnx")
    with pytest.raises(hetplan.NotFoundError) as e:
        hetplan.plan(tiny, solver="simulated-annealing")
    assert str(e.value) == cli_error(binary, "partition", tiny, "--solver", "simulated-annealing")
    with pytest.raises(hetplan.InvalidArgumentError) as e:
        hetplan.partition(tiny, objective="speed")
    assert str(e.value) == cli_error(binary, "partition", tiny, "--objective", "speed")
    with pytest.raises(hetplan.InvalidArgumentError) as e:
        hetplan.partition(tiny, costs=data / "tiny_costs.csv", objective="energy")
    assert str(e.value) == cli_error(binary, "partition", tiny, "--costs", data / "tiny_costs.csv", "--objective",
                                     "energy")
    with pytest.raises(hetplan.InvalidArgumentError):
        hetplan.partition(tiny, costs=data / "tiny_costs.csv", gap=-1)
    with pytest.raises(hetplan.UnsupportedError):
        hetplan.plan(tiny, "klein-arm", "map")  # BIDENT's mapping takes no spatial PU
    with pytest.raises(hetplan.InvalidArgumentError):
        hetplan.plan(tiny, "soc-example", "exact", second_model=tiny)  # one-request method


def test_an_option_the_method_ignores_is_refused_as_the_cli_refuses_it(data, binary):
    """An option left None keeps its default; one given to a method that does not read it is refused."""
    tiny, costs = str(data / "tiny.onnx"), str(data / "tiny_costs.csv")
    with pytest.raises(hetplan.InvalidArgumentError) as e:
        hetplan.partition(tiny, costs=costs, solver="greedy", search_nodes=5)
    assert "does not apply to solver 'greedy'" in str(e.value) and "exact" in str(e.value)
    assert str(e.value) == cli_error(binary, "partition", tiny, "--costs", costs, "--solver", "greedy",
                                     "--search-nodes", "5")
    with pytest.raises(hetplan.InvalidArgumentError):
        hetplan.plan(tiny, "klein-arm", "greedy", costs=costs, time_limit=5)
    # The same options left unset, or given to a method that reads them, plan.
    assert hetplan.partition(tiny, costs=costs, solver="greedy").has_schedule
    assert hetplan.partition(tiny, costs=costs, search_nodes=5, time_limit=60).status == "optimal"


def test_wrong_types(data):
    tiny = data / "tiny.onnx"
    cases = [dict(model=42), dict(platform=3.5), dict(time_limit="600"), dict(overrides=7), dict(costs=12),
             dict(objective=None), dict(progress="yes"), dict(threads=1.5), dict(cache_dir=5)]
    for kw in cases:
        args = {"model": tiny, **kw}
        with pytest.raises(hetplan.ArgumentTypeError):
            hetplan.partition(**args)
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.plan(tiny, solver=["exact"])
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.validate(3)


def test_an_outcome_without_a_schedule_is_returned(data):
    s = hetplan.partition(data / "wide.onnx", costs=data / "wide_costs.csv", solver="mip", time_limit=0.001,
                          warm_start=False, threads=1, overrides={"cim.crossbars": 24})
    if s.has_schedule:  # a machine fast enough to find one in 1 ms
        pytest.skip("CBC found a schedule within 1 ms")
    assert s.status == "no_solution" and s.makespan_us is None and s.operators == [] and s.devices() == {}
    with pytest.raises(hetplan.InvalidArgumentError, match="no schedule"):
        s._r.plan_file()
    with pytest.raises(hetplan.NoScheduleError):
        s.to_dict()
    with pytest.raises(hetplan.NoScheduleError):
        s.write("/tmp/never.json")


def test_validate_reports_violations(data, tmp_path):
    d = hetplan.partition(data / "tiny.onnx", costs=data / "tiny_costs.csv").to_dict()
    d["makespan_us"] += 5
    v = hetplan.validate(d)
    assert not v.ok and not v and any("makespan" in x for x in v.violations)
    with pytest.raises(hetplan.NotFoundError):
        hetplan.validate(tmp_path / "missing.json")
    with pytest.raises(hetplan.InvalidArgumentError):
        hetplan.validate({"x": float("nan")})
