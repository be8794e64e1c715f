"""profile, load_costs and CostTable."""

import threading

import pytest

import hetplan
from conftest import cli_error, run_cli


def test_profile_measures_every_operator_and_caches(data, tmp_path):
    calls = []
    main = threading.get_ident()

    def progress(pu, done, total):
        calls.append((pu, done, total, threading.get_ident()))

    m = hetplan.load_model(data / "tiny.onnx")
    t = hetplan.profile(m, "klein-arm", warmup=1, runs=3, model_runs=2, cache_dir=tmp_path, progress=progress)
    assert len(t) == 3 and {r["op_name"] for r in t.rows if r["kind"] == "op"} == {"conv0", "relu0", "conv1"}
    assert t.meta["source"] == "measured" and t.meta["runs"] == "3" and t.meta["cache"] == "miss"
    assert all(r["exec_us"] > 0 for r in t.rows if r["kind"] == "op")
    assert calls and calls[-1][:3] == ("cpu", 3, 3) and all(c[3] == main for c in calls)
    again = hetplan.profile(hetplan.load_model(data / "tiny.onnx"), "klein-arm", warmup=1, runs=3, model_runs=2,
                            cache_dir=tmp_path)
    assert again.meta["cache"] == "hit" and again.rows == t.rows


def test_profile_measures_an_openvino_pu_on_its_device(data, tmp_path):
    platform = tmp_path / "ov.yaml"
    platform.write_text("name: ov\npus:\n  - {name: ov, kind: cpu, cost: profile, runtime: openvino, device: CPU}\n")
    t = hetplan.profile(hetplan.load_model(data / "tiny.onnx"), str(platform), warmup=1, runs=3, cache_dir=None)
    assert t.meta["runtime"].startswith("openvino 2026.4") and t.meta["device"] == "CPU"
    assert {r["op_name"] for r in t.rows if r["kind"] == "op"} == {"conv0", "relu0", "conv1"}
    assert int(t.meta["executed_nodes"]) >= 2 and t.meta["precision"] == "f32"
    missing = tmp_path / "gpu.yaml"
    missing.write_text("name: g\npus:\n  - {name: g, kind: gpu, cost: profile, runtime: openvino, device: GPU}\n")
    with pytest.raises(hetplan.UnsupportedError, match="OpenVINO device 'GPU' is not on this machine"):
        hetplan.profile(hetplan.load_model(data / "tiny.onnx"), str(missing), warmup=1, runs=3, cache_dir=None)


def test_profile_then_partition_measures_nothing_more(data, tmp_path):
    m = hetplan.load_model(data / "tiny.onnx")
    hetplan.profile(m, "klein-arm", warmup=1, runs=3, cache_dir=tmp_path)
    seen = []
    s = hetplan.partition(m, "klein-arm", warmup=1, runs=3, cache_dir=tmp_path, progress=lambda *a: seen.append(a))
    assert s.has_schedule and seen == []  # the table kept with the model: no profiling, no progress


def test_write_and_load_round_trip(data, tmp_path):
    t = hetplan.profile(data / "tiny.onnx", "klein-arm", warmup=1, runs=2, cache_dir=None)
    t.write(tmp_path / "c.csv", json=tmp_path / "c.json")
    for f in ("c.csv", "c.json"):
        back = hetplan.load_costs(tmp_path / f)
        assert [r.get("op_name") for r in back.rows] == [r.get("op_name") for r in t.rows]
    assert hetplan.load_costs(tmp_path / "c.csv").to_csv() == t.to_csv()
    pytest.importorskip("pandas")
    assert len(t.df) == len(t.rows)


def test_profile_errors_are_the_cli_messages(binary, data):
    with pytest.raises(hetplan.InvalidArgumentError) as e:
        hetplan.profile(data / "tiny.onnx", "soc-example")
    assert str(e.value) == cli_error(binary, "profile", data / "tiny.onnx", "--platform", "soc-example", "--out",
                                     "/nonexistent/never.csv")
    with pytest.raises(hetplan.InvalidArgumentError):
        hetplan.profile(data / "tiny.onnx", "klein-arm", pu="cim")
    with pytest.raises(hetplan.InvalidArgumentError):
        hetplan.profile(data / "tiny.onnx", runs=0)
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.profile(data / "tiny.onnx", runs="200")
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.profile(data / "tiny.onnx", progress=42)
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.profile(123)


def test_load_costs_errors(binary, data, tmp_path):
    with pytest.raises(hetplan.NotFoundError):
        hetplan.load_costs(tmp_path / "none.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("kind,op_name,pu,exec_us\nop,conv0,cpu,fast\n")
    with pytest.raises(hetplan.ParseError) as e:
        hetplan.load_costs(bad)
    assert str(e.value) == cli_error(binary, "partition", data / "tiny.onnx", "--costs", bad)
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.load_costs(None)


def test_a_table_for_another_model_is_refused(data, binary):
    t = hetplan.load_costs(data / "wide_costs.csv")
    with pytest.raises(hetplan.Error) as e:
        hetplan.partition(data / "tiny.onnx", costs=data / "wide_costs.csv")
    assert str(e.value) == cli_error(binary, "partition", data / "tiny.onnx", "--costs", data / "wide_costs.csv")
    with pytest.raises(hetplan.Error) as e2:
        hetplan.partition(data / "tiny.onnx", costs=t)
    assert str(e2.value) == str(e.value)  # a table loaded from a file is named by its path
