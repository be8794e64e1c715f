"""hetplan's openvino-affinity export applied by OpenVINO's own Python API
(the PyPI wheel in third_party/openvino): ResNet-18 planned on klein-arm, its
CPU and CIM PUs given two OpenVINO devices (the CPU plugin registered a second
time as CPUB, as docs/openvino-notes.md found), every operation OpenVINO reads
named by the export, the model compiled on the HETERO device the export names,
split where the plan splits it, and its output equal to the CPU's. Also: a PU
without a device is refused in one line. Run by CTest
(OpenVino.TheAffinityExportCompilesOnHetero...)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import openvino as ov


def hetplan(binary, *args):
    r = subprocess.run([binary, *args], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hetplan", required=True)
    ap.add_argument("--zoo", required=True)
    a = ap.parse_args()
    model_path = os.path.join(a.zoo, "resnet18.onnx")
    d = tempfile.mkdtemp(prefix="hetplan_ov_affinity_")
    schedule = os.path.join(d, "s.json")
    code, out = hetplan(a.hetplan, "partition", model_path, "--platform", "klein-arm", "--warmup", "1", "--runs", "2",
                        "--out", schedule)
    assert code == 0, out
    plan = json.load(open(schedule))
    on_cim = sum(1 for op in plan["operators"] if op["device"] == "cim")
    assert 0 < on_cim < len(plan["operators"]), f"{on_cim} operators on the CIM: the test needs both PUs"

    code, out = hetplan(a.hetplan, "export", schedule, "--format", "openvino-affinity", "--out", os.path.join(d, "bad"))
    assert code != 0 and "PU 'cpu' runs operators but is no OpenVINO device; give it one with --device cpu=" in out, out
    assert out.strip().count("\n") == 0, out
    assert not os.path.exists(os.path.join(d, "bad", "affinity.json"))

    ex = os.path.join(d, "ex")
    code, out = hetplan(a.hetplan, "export", schedule, "--format", "openvino-affinity", "--device", "cpu=CPU",
                        "--device", "cim=CPUB", "--out", ex)
    assert code == 0, out
    affinity = json.load(open(os.path.join(ex, "affinity.json")))
    hetero = json.load(open(os.path.join(ex, "hetero.json")))
    assert hetero["device"] == "HETERO:CPU,CPUB", hetero

    core = ov.Core()
    libs = os.path.join(os.path.dirname(ov.__file__), "libs")
    core.register_plugin(os.path.join(libs, "libopenvino_intel_cpu_plugin.so"), "CPUB")
    for dev in ("CPU", "CPUB"):
        core.set_property(dev, {"INFERENCE_PRECISION_HINT": "f32"})
    model = core.read_model(model_path)
    # Every operation with a name of the file's is in the map; the others are
    # OpenVINO's own helpers (Type_N, named from a process-wide counter), which
    # take the device of the operation they feed, as hetero.json says.
    ops = model.get_ordered_ops()
    named = {op.get_friendly_name() for op in ops if op.get_friendly_name() != op.get_name()}
    assert named == set(affinity), (sorted(named - set(affinity))[:5], sorted(set(affinity) - named)[:5])
    helpers = [op for op in ops if op.get_friendly_name() == op.get_name()]
    assert len(helpers) == hetero["automatically_named_operations"], (len(helpers), hetero)
    device = {op.get_friendly_name(): affinity[op.get_friendly_name()] for op in ops if op.get_friendly_name() in affinity}
    for op in reversed(ops):  # consumers first
        if op.get_friendly_name() in device:
            continue
        readers = [i.get_node().get_friendly_name() for o in op.outputs() for i in o.get_target_inputs()]
        found = [device[r] for r in readers if r in device]
        assert found, op.get_friendly_name()
        device[op.get_friendly_name()] = found[0]
    for op in ops:
        op.get_rt_info()["affinity"] = device[op.get_friendly_name()]
    compiled = core.compile_model(model, hetero["device"])
    submodels = int(compiled.get_property("HETERO_NUMBER_OF_SUBMODELS"))
    assert submodels >= 2, submodels
    # The plan's placement, by name: each operator's ONNX node (the Conv's Add
    # and its /WithoutBiases Convolution) on its PU's device.
    checked = 0
    for op in plan["operators"]:
        want_device = "CPUB" if op["device"] == "cim" else "CPU"
        for name in (op["name"], op["name"] + "/WithoutBiases"):
            if name in affinity:
                assert affinity[name] == want_device, (name, affinity[name], want_device)
                checked += 1
    assert checked >= on_cim, checked

    x = np.random.default_rng(7).random((1, 3, 224, 224), dtype=np.float32)
    got = compiled(x)[compiled.output(0)]
    want = core.compile_model(core.read_model(model_path), "CPU")(x)
    want = want[0] if isinstance(want, (list, tuple)) else list(want.values())[0]
    assert np.allclose(got, want, rtol=1e-4, atol=1e-4), float(np.abs(got - want).max())
    print(f"ok: {len(affinity)} operations, {submodels} HETERO sub-models, {hetero['operations_per_device']}, "
          f"max |diff| {float(np.abs(got - want).max()):.2e}")


if __name__ == "__main__":
    sys.exit(main())
