"""Platforms: presets, YAML files, dicts and overrides."""

import os

import pytest

import hetplan
from conftest import SOURCE_DIR, cli_error


def test_presets():
    assert {"klein-arm", "klein-x86", "soc-example"} <= set(hetplan.presets())
    p = hetplan.platform("klein-arm")
    assert p.name == "klein-arm" and p.source == "preset:klein-arm" and p.pus == ["cpu", "cim"]
    assert p.to_dict()["cim"]["crossbars"] == 100
    assert "klein-arm" in repr(p)


def test_yaml_file(tmp_path):
    text = open(os.path.join(SOURCE_DIR, "platforms", "klein-arm.yaml")).read().replace("crossbars: 100",
                                                                                       "crossbars: 42")
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    p = hetplan.platform(path)
    assert p.source == str(path) and p.to_dict()["cim"]["crossbars"] == 42


def test_dict():
    d = {"name": "tiny-soc", "pus": [
        {"name": "cpu", "kind": "cpu", "execution": "serial", "cost": "roofline", "power_w": 2.0,
         "peak_gflops": {"float32": 10}, "memory_bandwidth_gbps": 5},
        {"name": "cim", "kind": "cim", "execution": "spatial", "cost": "cim", "crossbars": 8}],
         "links": [{"between": ["cpu", "cim"], "bandwidth_gbps": 4, "latency_us": 1}]}
    p = hetplan.platform(d)
    assert p.source == "<dict>" and p.pus == ["cpu", "cim"] and p.to_dict()["cim"]["crossbars"] == 8


def test_a_bad_dict_names_the_key():
    with pytest.raises(hetplan.Error) as e:
        hetplan.platform({"name": "x", "pus": [{"name": "cpu", "kind": "toaster"}]})
    assert str(e.value).startswith("<dict>") and "kind" in str(e.value)
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.platform({"name": "x", "pus": [{"name": object()}]})


def test_with_overrides_returns_a_new_platform():
    p = hetplan.platform("klein-arm")
    q = p.with_overrides({"cim.crossbars": 200, "cim.mvm_latency_ns": 100.5, "cim.supported_ops": ["Conv", "Gemm"],
                          "cim.im2col_load": True})
    assert q.to_dict()["cim"]["crossbars"] == 200 and q.to_dict()["cim"]["mvm_latency_ns"] == 100.5
    assert q.to_dict()["cim"]["supported_ops"] == ["Conv", "Gemm"] and q.to_dict()["cim"]["im2col_load"] is True
    assert q.overrides == ["cim.crossbars=200", "cim.mvm_latency_ns=100.5", "cim.supported_ops=Conv,Gemm",
                           "cim.im2col_load=true"]
    assert p.to_dict()["cim"]["crossbars"] == 100 and p.overrides == []
    assert p.with_overrides(["link.cpu-cim.bandwidth_gbps=5"]).to_dict()["links"][0]["bandwidth_gbps"] == 5
    assert hetplan.platform("klein-arm", {"cim.crossbars": 25}).to_dict()["cim"]["crossbars"] == 25


def test_a_bad_override_raises_the_cli_message(binary, data):
    with pytest.raises(hetplan.InvalidArgumentError) as e:
        hetplan.platform("klein-arm").with_overrides({"cim.nonsense": 3})
    assert str(e.value) == cli_error(binary, "partition", data / "tiny.onnx", "--set", "cim.nonsense=3")
    with pytest.raises(hetplan.InvalidArgumentError):
        hetplan.platform("klein-arm").with_overrides({"cim.crossbars": -5})
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.platform("klein-arm").with_overrides({5: 3})
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.platform("klein-arm").with_overrides({"cim.crossbars": object()})
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.platform("klein-arm").with_overrides(42)


def test_unknown_preset_and_missing_file(binary, data, tmp_path):
    with pytest.raises(hetplan.NotFoundError) as e:
        hetplan.platform("klein-risc")
    assert str(e.value) == cli_error(binary, "partition", data / "tiny.onnx", "--platform", "klein-risc")
    assert "klein-arm" in str(e.value)
    with pytest.raises(hetplan.NotFoundError):
        hetplan.platform(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(hetplan.ParseError):
        hetplan.platform(bad)


def test_wrong_types():
    for bad in (3, None, ["klein-arm"]):
        with pytest.raises(hetplan.ArgumentTypeError):
            hetplan.platform(bad)
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.Platform("klein-arm")


def test_versions():
    assert hetplan.onnxruntime_version().startswith("1.") and hetplan.__version__
    assert hetplan.NONDETERMINISTIC_FIELDS == ("solver.seconds",)
    assert hetplan.DEFAULT_CACHE_DIR == ".cache/hetplan"


def test_layers_lays_each_operator_out_as_the_cli_does(zoo, binary):
    path = os.path.join(zoo, "vgg8.onnx")
    assert os.path.exists(path), f"{path} is missing (cmake --build build --target zoo)"
    model = hetplan.load_model(path)
    layers = hetplan.platform("puma").layers(model)
    cim = layers["cim"]
    assert [r["crossbars"] for r in cim["operators"]] == [8, 72, 144, 288, 576, 1152, 4096, 64]
    assert cim["crossbars"] == 6400 and cim["budget"] == 21504 and cim["mvm_latency_ns"] == 1800
    assert 0 < cim["adc_share"] < 1 and cim["energy_pj"] > 0
    import json
    import subprocess
    out = subprocess.run([binary, "platform", "layers", "puma", path, "--json"], check=True, capture_output=True,
                         text=True).stdout
    assert json.loads(out)["pus"] == layers
    # 8-bit weights in 1-bit cells of 128x128: NeuroSim's mapping.
    one_bit = hetplan.platform("klein-arm", {"cim.crossbar_rows": 128, "cim.crossbar_cols": 128,
                                             "cim.bits_per_cell": 1, "cim.weight_bits": 8}).layers(model)
    assert one_bit["cim"]["crossbars"] == 6344 and one_bit["cim"]["energy_pj"] is None
    assert hetplan.platform("soc-example").layers(model) == {}
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.platform("puma").layers(path)
