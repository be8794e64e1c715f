"""load_model, from_torch and the Model object."""

import os
import sys

import pytest

import hetplan
from conftest import cli_error


def test_load_model_from_a_file(data):
    m = hetplan.load_model(data / "tiny.onnx")
    assert m.path == str(data / "tiny.onnx")
    assert m.num_operators == 3 and m.num_edges == 2
    assert [op["name"] for op in m.operators] == ["conv0", "relu0", "conv1"]
    assert [op["type"] for op in m.operators] == ["Conv", "Relu", "Conv"]
    assert m.operators[0]["weight"] == {"rows": 27, "cols": 4}
    assert [(e["from"], e["to"]) for e in m.edges] == [(0, 1), (1, 2)]
    assert m.to_dict()["format"] == "hetplan-graph"
    assert m.fusion == "none" and len(m.sha256) == 64
    assert "Conv" in m.summary() and "conv0" in m.to_dot() and "digraph" in m.to_dot()
    assert "3 operators" in repr(m)


def test_the_model_dict_is_what_hetplan_graph_json_writes(data, binary, tmp_path):
    import json

    from conftest import run_cli
    code, _, err = run_cli(binary, "graph", data / "tiny.onnx", "--json", tmp_path / "g.json")
    assert code == 0, err
    assert hetplan.load_model(data / "tiny.onnx").to_dict() == json.loads((tmp_path / "g.json").read_text())


def test_load_model_from_bytes_keeps_the_hash_and_names_the_label(data):
    raw = (data / "tiny.onnx").read_bytes()
    m = hetplan.load_model(raw, label="<mine>")
    assert m.sha256 == hetplan.load_model(str(data / "tiny.onnx")).sha256
    assert m.path == "<mine>"
    assert hetplan.load_model(bytearray(raw)).path == "<bytes>"


def test_dataframes(data):
    pytest.importorskip("pandas")
    m = hetplan.load_model(data / "branchy.onnx")
    ops = m.operators_df
    assert list(ops.index) == list(range(m.num_operators))
    assert ops.loc[0, "weight_rows"] > 0 and "macs" in ops.columns
    edges = m.edges_df
    assert len(edges) == m.num_edges and list(edges.columns) == ["from", "to", "tensor", "elements", "bytes"]


def test_dataframes_without_pandas_say_what_to_install(data, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    m = hetplan.load_model(data / "tiny.onnx")
    with pytest.raises(hetplan.MissingDependencyError, match="python3-pandas"):
        m.operators_df
    assert isinstance(m.operators, list)  # the lists need nothing


def test_fusion(data):
    m = hetplan.load_model(data / "tiny.onnx", fusion="activation")
    assert m.fusion == "activation" and m.num_operators == 2
    with pytest.raises(hetplan.InvalidArgumentError) as e:
        hetplan.load_model(data / "tiny.onnx", fusion="everything")
    assert "everything" in str(e.value)


def _symbolic_model(corpus):
    from onnx import TensorProto, helper
    m = corpus.model([helper.make_node("Relu", ["x"], ["y"], name="r")],
                     [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                     [corpus.tensor_out("y")])
    return m.SerializeToString()


def test_shapes_fix_symbolic_inputs_in_both_spellings(corpus):
    raw = _symbolic_model(corpus)
    for shapes in ({"x": (2, 4)}, ["x=2x4"], "x=2x4"):
        m = hetplan.load_model(raw, shapes=shapes)
        assert m.operators[0]["inputs"][0]["shape"] == [2, 4]
    with pytest.raises(hetplan.Error):
        hetplan.load_model(raw)  # N unknown: the importer says to give --shape
    with pytest.raises(hetplan.InvalidArgumentError):
        hetplan.load_model(raw, shapes=["x=2xq"])
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.load_model(raw, shapes={"x": "2x4"})
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.load_model(raw, shapes=42)


def test_a_missing_file_raises_the_cli_message(binary, tmp_path):
    missing = tmp_path / "nope.onnx"
    with pytest.raises(hetplan.NotFoundError) as e:
        hetplan.load_model(missing)
    assert str(e.value) == cli_error(binary, "graph", missing)
    assert isinstance(e.value, hetplan.Error) and e.value.code == "not_found"


def test_a_broken_file_raises_parse_error(data, tmp_path, binary):
    bad = tmp_path / "broken.onnx"
    bad.write_bytes((data / "tiny.onnx").read_bytes()[:20])
    with pytest.raises(hetplan.ParseError) as e:
        hetplan.load_model(bad)
    assert str(e.value) == cli_error(binary, "graph", bad)
    assert "\n" not in str(e.value)
    with pytest.raises(hetplan.ParseError):
        hetplan.load_model(b"not a model at all")


def test_wrong_types_raise_argument_type_error(data):
    for bad in (42, None, ["tiny.onnx"]):
        with pytest.raises(hetplan.ArgumentTypeError) as e:
            hetplan.load_model(bad)
        assert isinstance(e.value, TypeError) and "path_or_bytes" in str(e.value)
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.load_model(data / "tiny.onnx", fusion=1)
    with pytest.raises(hetplan.ArgumentTypeError):
        hetplan.Model("tiny.onnx")


def test_limits(data):
    with pytest.raises(hetplan.LimitExceededError):
        hetplan.load_model(data / "wide.onnx", max_operators=10)
    with pytest.raises(hetplan.LimitExceededError):
        hetplan.load_model((data / "wide.onnx").read_bytes(), max_model_mib=0.001)
    with pytest.raises(hetplan.InvalidArgumentError):
        hetplan.load_model(data / "tiny.onnx", max_operators=0)


def test_from_torch_without_torch_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(hetplan.MissingDependencyError) as e:
        hetplan.from_torch(object(), None)
    assert "python3-torch" in str(e.value) and isinstance(e.value, ImportError)
