"""dse: sweeps with progress, resume and the CLI's errors."""

import threading

import pytest

import hetplan
from conftest import cli_error


def test_a_sweep_returns_its_rows_with_progress(data, tmp_path):
    seen = []
    main = threading.get_ident()
    r = hetplan.dse([data / "branchy.onnx"], ["soc-example"], sweep={"gpu.power_w": [1, 5]},
                    solvers=["exact", "greedy"], objectives=["latency", "energy"], jobs=2, out=tmp_path / "r.jsonl",
                    schedules=tmp_path / "s", progress=lambda p: seen.append((p, threading.get_ident())))
    assert len(r) == 8 and r.summary["points"] == 8 and r.summary["ran"] == 8 and not r.interrupted
    assert {row["solver"] for row in r} == {"exact", "greedy"}
    assert {row["params"]["gpu.power_w"] for row in r} == {"1", "5"}
    assert all(row["status"] in ("optimal", "heuristic") for row in r)
    for row in r:
        assert hetplan.validate(row["schedule_file"]).ok
    phases = [p["phase"] for p, _ in seen]
    assert phases[0] == "profiling" and "solving" in phases and phases[-1] == "done"
    assert all(tid == main for _, tid in seen)  # callbacks run on the calling thread
    assert r.path == str(tmp_path / "r.jsonl")
    pytest.importorskip("pandas")
    df = r.df
    assert len(df) == 8 and "gpu.power_w" in df.columns


def test_resume_and_an_existing_file(data, tmp_path, binary):
    out = tmp_path / "r.jsonl"
    args = dict(platforms="soc-example", sweep={"gpu.power_w": [1, 2]}, solvers=["greedy"], out=out)
    first = hetplan.dse(data / "tiny.onnx", **args)
    assert len(first) == 2
    with pytest.raises(hetplan.InvalidArgumentError) as e:
        hetplan.dse(data / "tiny.onnx", **args)
    assert str(e.value) == cli_error(binary, "dse", data / "tiny.onnx", "--platform", "soc-example", "--sweep",
                                     "gpu.power_w=1,2", "--solvers", "greedy", "--out", out)
    again = hetplan.dse(data / "tiny.onnx", resume=True, **{**args, "sweep": {"gpu.power_w": [1, 2, 3]}})
    assert again.summary["resumed"] == 2 and again.summary["ran"] == 1 and len(again) == 3


def test_boundary_cost_is_in_each_key_and_line_and_refused_for_two_requests(data, tmp_path, binary):
    args = dict(platforms="soc-example", sweep={"gpu.power_w": [1, 2]}, solvers=["greedy"])
    plain = hetplan.dse(data / "tiny.onnx", out=tmp_path / "none.jsonl", **args)
    fitted = hetplan.dse(data / "tiny.onnx", out=tmp_path / "fitted.jsonl", boundary_cost="fitted", **args)
    assert [row["boundary_cost"] for row in plain] == ["none", "none"]
    assert [row["boundary_cost"] for row in fitted] == ["fitted", "fitted"]
    assert sorted(row["key"] + "|boundary=fitted" for row in plain) == sorted(row["key"] for row in fitted)
    with pytest.raises(hetplan.InvalidArgumentError) as e:
        hetplan.dse(data / "tiny.onnx", "soc-example", solvers=["map_concurrent"], boundary_cost="fitted",
                    out=tmp_path / "pair.jsonl")
    assert str(e.value) == cli_error(binary, "dse", data / "tiny.onnx", "--platform", "soc-example", "--solvers",
                                     "map_concurrent", "--boundary-cost", "fitted", "--out", tmp_path / "pair.jsonl")
    assert not (tmp_path / "pair.jsonl").exists()
    with pytest.raises(hetplan.InvalidArgumentError, match="boundary_cost 'maybe'"):
        hetplan.dse(data / "tiny.onnx", "soc-example", boundary_cost="maybe")


def test_without_out_a_temporary_file_is_used(data):
    r = hetplan.dse(data / "tiny.onnx", "soc-example", solvers="baselines")
    assert r.path is None and len(r) == r.summary["points"] > 3


def test_dse_errors(data, binary, tmp_path):
    tiny = data / "tiny.onnx"
    with pytest.raises(hetplan.InvalidArgumentError) as e:
        hetplan.dse(tiny, "soc-example", solvers=["nope"])
    assert str(e.value) == cli_error(binary, "dse", tiny, "--platform", "soc-example", "--solvers", "nope", "--out",
                                     tmp_path / "x.jsonl")
    with pytest.raises(hetplan.Error):
        hetplan.dse(tiny, "soc-example", sweep={"gpu.warp_speed": [1]})
    with pytest.raises(hetplan.NotFoundError):
        hetplan.dse(tmp_path / "missing.onnx", "soc-example")
    with pytest.raises(hetplan.InvalidArgumentError, match="loaded from bytes"):
        hetplan.dse(hetplan.load_model(tiny.read_bytes()), "soc-example")
    with pytest.raises(hetplan.InvalidArgumentError, match="dict"):
        hetplan.dse(tiny, hetplan.platform({"name": "d", "pus": [{"name": "cpu", "kind": "cpu", "cost": "roofline",
                                                                   "peak_gflops": {"float32": 1},
                                                                   "memory_bandwidth_gbps": 1}]}))
    with pytest.raises(hetplan.InvalidArgumentError, match="overrides"):
        hetplan.dse(tiny, hetplan.platform("soc-example", {"gpu.power_w": 2}))
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.dse(42)
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.dse(tiny, "soc-example", sweep={"gpu.power_w": 5})
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.dse(tiny, "soc-example", progress=1)


def test_platform_objects_and_models_from_files_work(data):
    m = hetplan.load_model(data / "tiny.onnx")
    r = hetplan.dse([m], [hetplan.platform("soc-example")], solvers=["greedy"])
    assert len(r) == 1 and r[0]["platform"] == "soc-example" and r[0]["model_file"] == m.path
