"""The type stubs and docstrings stay in step with the code."""

import ast
import inspect
import os

import hetplan
from hetplan import _core

PKG = os.path.dirname(hetplan.__file__)


def _stub(name):
    with open(os.path.join(PKG, name)) as f:
        return ast.parse(f.read())


def _params(node):
    a = node.args
    names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    if a.vararg:
        names.append("*" + a.vararg.arg)
    if a.kwarg:
        names.append("**" + a.kwarg.arg)
    return [n for n in names if n != "self"]


def _signature_params(func):
    out = []
    for p in inspect.signature(func).parameters.values():
        prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        out.append(prefix + p.name)
    return [n for n in out if n != "self"]


def test_every_public_name_is_in_the_stub_with_its_parameters():
    tree = _stub("__init__.pyi")
    stubbed = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stubbed[node.name] = node
        elif isinstance(node, ast.AnnAssign):
            stubbed[node.target.id] = node
    for name in hetplan.__all__:
        assert name in stubbed, f"{name} is public but missing from __init__.pyi"
        obj = getattr(hetplan, name)
        node = stubbed[name]
        if inspect.isfunction(obj):
            assert _params(node) == _signature_params(obj), name
        if inspect.isclass(obj) and isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, ast.FunctionDef) and not member.name.startswith("__"):
                    assert hasattr(obj, member.name), f"{name}.{member.name} is in the stub only"
                    impl = getattr(obj, member.name)
                    if inspect.isfunction(impl):
                        assert _params(member) == _signature_params(impl), f"{name}.{member.name}"


def test_the_extension_stub_lists_what_the_extension_has():
    for node in _stub("_core.pyi").body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            assert hasattr(_core, node.name), f"_core.pyi names {node.name}, which _core lacks"
            if isinstance(node, ast.ClassDef):
                for member in node.body:
                    name = getattr(member, "name", None) or getattr(getattr(member, "target", None), "id", None)
                    if name:
                        assert hasattr(getattr(_core, node.name), name), f"_core.{node.name}.{name}"
    public = {n for n in dir(_core) if not n.startswith("__")}
    stubbed = {n.name for n in _stub("_core.pyi").body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    stubbed |= {n.target.id for n in _stub("_core.pyi").body if isinstance(n, ast.AnnAssign)}
    assert public <= stubbed, f"missing from _core.pyi: {sorted(public - stubbed)}"


def test_every_public_function_and_class_has_a_docstring():
    for name in hetplan.__all__:
        obj = getattr(hetplan, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            assert obj.__doc__ and len(obj.__doc__.strip()) > 20, name
