"""Models: ONNX files, ONNX bytes and PyTorch modules as hetplan's operator graph."""

import io
import os
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _args, _core
from ._errors import ArgumentTypeError, ExportError, MissingDependencyError

PathLike = Union[str, "os.PathLike[str]"]


def _pandas(what: str) -> Any:
    try:
        import pandas
    except ImportError as e:
        raise MissingDependencyError(
            f"{what}: pandas is not installed ({e}); install python3-pandas (Debian) or use the list of dicts "
            "instead") from e
    return pandas


class Model:
    """An ONNX model imported into hetplan's operator graph (docs/graph-format.md).

    Made by :func:`load_model` or :func:`from_torch`. Immutable; one model can
    be planned any number of times, from several threads at once. The cost
    tables measured for it are kept with it, so planning it again with the
    same profiling settings measures nothing (the profile cache on disk,
    ``cache_dir``, makes the next session fast too).
    """

    __slots__ = ("_h", "_graph")

    def __init__(self, handle: Any) -> None:
        if not isinstance(handle, _core.Model):
            raise ArgumentTypeError("Model: use hetplan.load_model(path) or hetplan.from_torch(module, inputs)")
        self._h = handle
        self._graph: Optional[Dict[str, Any]] = None

    @property
    def path(self) -> str:
        """The file it was read from (as given), or the label of bytes."""
        return self._h.path

    @property
    def sha256(self) -> str:
        """SHA-256 of the ONNX bytes as read."""
        return self._h.sha256

    @property
    def fusion(self) -> str:
        """The fusion level: ``"none"`` or ``"activation"``."""
        return self._h.fusion

    @property
    def num_operators(self) -> int:
        return self._h.num_operators

    @property
    def num_edges(self) -> int:
        return self._h.num_edges

    @property
    def onnx_nodes(self) -> int:
        """Nodes in the file's main graph."""
        return self._h.onnx_nodes

    @property
    def folded_nodes(self) -> int:
        """Nodes removed by constant folding."""
        return self._h.folded_nodes

    def to_dict(self) -> Dict[str, Any]:
        """The graph as ``hetplan graph --json`` writes it (docs/graph-format.md)."""
        if self._graph is None:
            self._graph = self._h.graph_json()
        return self._graph

    @property
    def operators(self) -> List[Dict[str, Any]]:
        """One dict per operator: id, name, type, nodes, inputs, outputs, macs, weight, ..."""
        return self.to_dict()["operators"]

    @property
    def edges(self) -> List[Dict[str, Any]]:
        """One dict per edge: from, to, tensor, elements, bytes."""
        return self.to_dict()["edges"]

    @property
    def operators_df(self) -> Any:
        """The operators as a pandas DataFrame (needs pandas); ``weight`` becomes weight_rows/weight_cols."""
        pandas = _pandas("Model.operators_df")
        rows = []
        for op in self.operators:
            row = dict(op)
            weight = row.pop("weight")
            row["weight_rows"] = weight["rows"] if weight else None
            row["weight_cols"] = weight["cols"] if weight else None
            rows.append(row)
        return pandas.DataFrame(rows).set_index("id")

    @property
    def edges_df(self) -> Any:
        """The edges as a pandas DataFrame (needs pandas)."""
        pandas = _pandas("Model.edges_df")
        return pandas.DataFrame(self.edges, columns=["from", "to", "tensor", "elements", "bytes"])

    def summary(self) -> str:
        """The table ``hetplan graph`` prints."""
        return self._h.summary()

    def to_dot(self) -> str:
        """Graphviz DOT, one node per operator (``hetplan graph --dot``)."""
        return self._h.dot()

    def __repr__(self) -> str:
        return f"<hetplan.Model {self.path!r}: {self.num_operators} operators, {self.num_edges} edges, " \
               f"fusion {self.fusion}>"


def load_model(path_or_bytes: Union[PathLike, bytes, bytearray, memoryview], fusion: str = "none",
               shapes: Any = None, *, max_operators: int = 100000, max_model_mib: float = 4096,
               label: str = "<bytes>") -> Model:
    """Imports an ONNX model, as ``hetplan graph MODEL`` does.

    ``path_or_bytes``: a file path, or the model's bytes (``label`` then names
    it in errors and in the schedule's model.file). ``fusion``: ``"none"`` or
    ``"activation"``. ``shapes``: static shapes for symbolic inputs, as
    ``{"input": (1, 3, 224, 224)}`` or ``["input=1x3x224x224"]`` (``--shape``).
    Raises :class:`NotFoundError` for a missing file, :class:`ParseError` for a
    broken one, :class:`UnsupportedError` for what hetplan cannot import.
    """
    func = "load_model"
    fusion = _args.string(func, "fusion", fusion)
    dims = _args.shapes(func, shapes)
    max_operators = _args.integer(func, "max_operators", max_operators, 1)
    max_model_mib = _args.number(func, "max_model_mib", max_model_mib)
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        label = _args.string(func, "label", label)
        return Model(_core.load_model_bytes(bytes(path_or_bytes), label, fusion, dims, max_operators, max_model_mib))
    if isinstance(path_or_bytes, Model):
        raise ArgumentTypeError(f"{func}: path_or_bytes is already a hetplan.Model; use it directly")
    p = _args.path(func, "path_or_bytes", path_or_bytes)
    return Model(_core.load_model(p, fusion, dims, max_operators, max_model_mib))


def as_model(func: str, value: Any) -> Model:
    """A Model, or a path/bytes loaded with the defaults."""
    if isinstance(value, Model):
        return value
    if isinstance(value, (str, os.PathLike, bytes, bytearray, memoryview)):
        return load_model(value)
    raise _args.fail_type(func, "model", value, "a hetplan.Model, a path to an ONNX file or ONNX bytes")


def _one_line(text: str) -> str:
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    return lines[0] if lines else type(text).__name__


def from_torch(module: Any, example_inputs: Any, *, path: Optional[PathLike] = None, fusion: str = "none",
               shapes: Any = None, **export_options: Any) -> Model:
    """Exports a PyTorch module with ``torch.onnx.export`` and imports it.

    ``example_inputs``: a tensor or a tuple of tensors, as torch.onnx.export
    takes them. ``path``: where the ONNX file goes (kept); without it the
    export stays in memory and the model is labelled ``<torch ClassName>``.
    ``export_options`` go to torch.onnx.export unchanged; ``opset_version``
    defaults to 17, the newest the ONNX library here knows.
    Raises :class:`MissingDependencyError` without torch, :class:`ExportError`
    when the export fails.
    """
    func = "from_torch"
    try:
        import torch
    except ImportError as e:
        raise MissingDependencyError(
            f"{func}: PyTorch is not installed ({e}); install python3-torch (Debian), or export the model to "
            "ONNX elsewhere and use hetplan.load_model") from e
    if not isinstance(module, torch.nn.Module):
        raise _args.fail_type(func, "module", module, "a torch.nn.Module")
    if isinstance(example_inputs, torch.Tensor):
        args: Any = (example_inputs,)
    elif isinstance(example_inputs, (tuple, list)):
        args = tuple(example_inputs)
    else:
        raise _args.fail_type(func, "example_inputs", example_inputs, "a torch.Tensor or a tuple of them")
    export_options.setdefault("opset_version", 17)
    name = type(module).__name__
    target: Any = io.BytesIO() if path is None else _args.path(func, "path", path)
    try:
        torch.onnx.export(module, args, target, **export_options)
    except Exception as e:  # torch raises many types (RuntimeError, TypeError, its own errors)
        raise ExportError(f"{func}: torch.onnx.export could not export {name}: {type(e).__name__}: {_one_line(e)}; "
                          "see the chained exception, or change the module (ONNX has no equivalent for what it "
                          "uses)") from e
    if path is None:
        return load_model(target.getvalue(), fusion, shapes, label=f"<torch {name}>")
    return load_model(target, fusion, shapes)
