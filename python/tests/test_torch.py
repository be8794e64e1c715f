"""from_torch: PyTorch modules through torch.onnx.export (Debian's python3-torch)."""

import pytest

import hetplan

torch = pytest.importorskip("torch")


def _net():
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.fc = torch.nn.Linear(8 * 8 * 8, 10)

        def forward(self, x):
            return self.fc(torch.relu(self.conv(x)).flatten(1))

    return Net().eval()


def test_from_torch_exports_and_imports(tmp_path):
    m = hetplan.from_torch(_net(), torch.zeros(1, 3, 8, 8))
    assert m.path == "<torch Net>"
    assert [op["type"] for op in m.operators][:2] == ["Conv", "Relu"]
    assert "Gemm" in {op["type"] for op in m.operators}
    kept = tmp_path / "net.onnx"
    m2 = hetplan.from_torch(_net(), (torch.zeros(1, 3, 8, 8),), path=kept, fusion="activation",
                            input_names=["image"])
    assert kept.exists() and m2.path == str(kept) and m2.fusion == "activation"
    assert m2.to_dict()["graph_inputs"][0]["name"] == "image"
    s = hetplan.partition(m2, "soc-example")  # a plan straight from the module
    assert s.has_schedule and s.validate().ok


def test_from_torch_a_module_that_cannot_be_exported():
    class NotExportable(torch.nn.Module):
        def forward(self, x):
            return torch.linalg.svd(x)[0]  # no ONNX symbolic in torch 1.13

    with pytest.raises(hetplan.ExportError) as e:
        hetplan.from_torch(NotExportable(), torch.zeros(4, 4))
    msg = str(e.value)
    assert "NotExportable" in msg and "torch.onnx.export" in msg and "\n" not in msg
    assert e.value.__cause__ is not None


def test_from_torch_bad_arguments():
    with pytest.raises(hetplan.ArgumentTypeError, match="torch.nn.Module"):
        hetplan.from_torch("resnet18", torch.zeros(1))
    with pytest.raises(hetplan.ArgumentTypeError, match="example_inputs"):
        hetplan.from_torch(_net(), 3)
