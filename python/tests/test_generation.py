"""hetplan.plan_generation: `partition --llm` from Python (docs/generation.md)."""

import json
import os
import subprocess

import pytest

import hetplan
from conftest import SOURCE_DIR, run_cli


@pytest.fixture(scope="module")
def decoder(tmp_path_factory):
    """The two-layer test decoder tests/llm/make_decoders.py writes (the models venv's onnx, as the C++ tests)."""
    python = os.path.join(SOURCE_DIR, "third_party", "models-venv", "bin", "python")
    out = tmp_path_factory.mktemp("decoders")
    subprocess.run([python, os.path.join(SOURCE_DIR, "tests", "llm", "make_decoders.py"), "--out", str(out), "--only",
                    "decoder.onnx"], check=True, capture_output=True)
    return str(out / "decoder.onnx")


def test_plans_the_request_as_the_cli_does(decoder, binary, tmp_path):
    cache = str(tmp_path / "cache")
    g = hetplan.plan_generation(decoder, 16, 8, "klein-arm", {"cim.crossbars": 10}, time_limit=20, warmup=1, runs=3,
                                cache_dir=cache, name="request")
    assert isinstance(g, hetplan.Generation)
    assert g.status == "optimal" and g.gap == 0
    m = g.metrics
    assert len(m["tpot_us"]) == 8
    assert m["crossbars"]["cim"] <= 10
    assert m["rewrites"] is None  # klein-arm does not reprogram
    assert m["tokens_per_s"] == pytest.approx(8 / m["decode_us"] * 1e6)
    assert "TTFT" in repr(g)
    # Written, it is the generation file the validator and `hetplan split` read.
    g.write(tmp_path / "request.json")
    assert hetplan.validate(tmp_path / "request.json").ok
    assert (tmp_path / "request.prefill.json").exists() and (tmp_path / "request.decode.json").exists()
    # The CLI on the same cached costs: the same plan, apart from the solve time.
    code, out, err = run_cli(binary, "partition", decoder, "--llm", "prompt=16,new=8", "--platform", "klein-arm",
                             "--set", "cim.crossbars=10", "--time-limit", "20", "--warmup", "1", "--runs", "3",
                             "--cache-dir", cache, "--out", tmp_path / "cli" / "request.json")
    assert code == 0, err
    cli = json.loads((tmp_path / "cli" / "request.json").read_text())
    for f in (cli, g.file):
        f["solver"].pop("seconds")
    assert cli == g.file


def test_plans_for_tokens_per_second(decoder, tmp_path):
    g = hetplan.plan_generation(decoder, 16, 8, "klein-arm", objective="tokens", time_limit=20, warmup=1, runs=3,
                                cache_dir=str(tmp_path / "cache"))
    assert g.file["objective"] == "tokens_per_s"
    assert g.status == "optimal"
    assert g.file["solver"]["bound_us"] == pytest.approx(8 * g.decode["makespan_us"])
    capped = hetplan.plan_generation(decoder, 16, 8, "klein-arm", objective="ttft",
                                     max_tpot=2 * g.decode["makespan_us"], time_limit=20, warmup=1, runs=3,
                                     cache_dir=str(tmp_path / "cache"))
    assert capped.file["objective"] == "ttft" and capped.decode["makespan_us"] <= 2 * g.decode["makespan_us"] + 1e-6


def test_refuses_what_the_cli_refuses_in_one_line(decoder, tmp_path):
    with pytest.raises(hetplan.InvalidArgumentError, match="holds 256 positions"):
        hetplan.plan_generation(decoder, 250, 8, warmup=1, runs=3, cache_dir=str(tmp_path))
    with pytest.raises(hetplan.UnsupportedError, match="use --solver exact"):
        hetplan.plan_generation(decoder, 16, 8, "klein-arm", {"cim.write_ns_per_row": 2, "cim.endurance_writes": 1e8,
                                                             "cim.lifetime_inferences": 1, "cim.reprogram": True},
                                solver="greedy", warmup=1, runs=3, cache_dir=str(tmp_path))
    with pytest.raises(hetplan.InvalidArgumentError, match="objective=ttft needs max_tpot"):
        hetplan.plan_generation(decoder, 16, 8, objective="ttft")
    with pytest.raises(hetplan.ArgumentTypeError, match="write it to a YAML file"):
        hetplan.plan_generation(decoder, 16, 8, {"name": "d", "pus": [{"name": "cpu", "kind": "cpu", "cost": "roofline",
                                                                      "peak_gflops": {"float32": 1},
                                                                      "memory_bandwidth_gbps": 1}]})
