"""Argument checks shared by the public functions: wrong types become
:class:`ArgumentTypeError` naming the function and the parameter, before any
work starts."""

import os
from typing import Any, Iterable, List, Optional

from ._errors import ArgumentTypeError, InvalidArgumentError


def type_name(value: Any) -> str:
    return type(value).__name__


def fail_type(func: str, param: str, value: Any, expected: str) -> "ArgumentTypeError":
    return ArgumentTypeError(f"{func}: {param} must be {expected}, not {type_name(value)}")


def path(func: str, param: str, value: Any) -> str:
    """A str or os.PathLike as a str path."""
    if isinstance(value, (str, os.PathLike)):
        p = os.fspath(value)
        if isinstance(p, bytes):
            p = os.fsdecode(p)
        if not p:
            raise InvalidArgumentError(f"{func}: {param} is an empty path; give a file name")
        return p
    raise fail_type(func, param, value, "a path (str or os.PathLike)")


def optional_path(func: str, param: str, value: Any) -> str:
    return "" if value is None else path(func, param, value)


def string(func: str, param: str, value: Any) -> str:
    if not isinstance(value, str):
        raise fail_type(func, param, value, "a str")
    return value


def optional_string(func: str, param: str, value: Any) -> Optional[str]:
    return None if value is None else string(func, param, value)


def integer(func: str, param: str, value: Any, minimum: Optional[int] = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail_type(func, param, value, "an int")
    if minimum is not None and value < minimum:
        raise InvalidArgumentError(f"{func}: {param} {value} must be ≥ {minimum}")
    return value


def optional_integer(func: str, param: str, value: Any, minimum: Optional[int] = None) -> Optional[int]:
    return None if value is None else integer(func, param, value, minimum)


def number(func: str, param: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail_type(func, param, value, "a number")
    return float(value)


def optional_number(func: str, param: str, value: Any) -> Optional[float]:
    return None if value is None else number(func, param, value)


def boolean(func: str, param: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise fail_type(func, param, value, "a bool")
    return value


def optional_boolean(func: str, param: str, value: Any) -> Optional[bool]:
    return None if value is None else boolean(func, param, value)


def callback(func: str, param: str, value: Any) -> Any:
    if value is not None and not callable(value):
        raise fail_type(func, param, value, "callable or None")
    return value


def strings(func: str, param: str, value: Any) -> List[str]:
    """A str or an iterable of str as a list."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, (bytes, dict)):
        out = list(value)
        for v in out:
            if not isinstance(v, str):
                raise fail_type(func, f"every item of {param}", v, "a str")
        return out
    raise fail_type(func, param, value, "a str or a list of str")


def override_value(func: str, key: str, value: Any) -> str:
    """A Python value as the text of an override (`--set KEY=VALUE`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return ",".join(override_value(func, key, v) for v in value)
    raise fail_type(func, f"the value of override {key!r}", value, "a str, number, bool or list")


def overrides(func: str, value: Any) -> List[str]:
    """{"cim.crossbars": 100} or ["cim.crossbars=100"] as the CLI's --set list."""
    if value is None:
        return []
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            if not isinstance(k, str):
                raise fail_type(func, "every key of overrides", k, "a str such as 'cim.crossbars'")
            out.append(f"{k}={override_value(func, k, v)}")
        return out
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        for v in value:
            if not isinstance(v, str):
                raise fail_type(func, "every item of overrides", v, "a str such as 'cim.crossbars=100'")
        return list(value)
    raise fail_type(func, "overrides", value, "a dict {key: value}, a list of 'key=value' or None")


def shapes(func: str, value: Any) -> dict:
    """{"input": (1, 3, 224, 224)} or ["input=1x3x224x224"] as {name: [dims]}."""
    if value is None:
        return {}
    if isinstance(value, dict):
        out = {}
        for k, dims in value.items():
            if not isinstance(k, str):
                raise fail_type(func, "every key of shapes", k, "a str (a graph input's name)")
            if isinstance(dims, str) or not isinstance(dims, Iterable):
                raise fail_type(func, f"shapes[{k!r}]", dims, "a sequence of ints such as (1, 3, 224, 224)")
            dims = list(dims)
            for d in dims:
                if isinstance(d, bool) or not isinstance(d, int):
                    raise fail_type(func, f"every dimension of shapes[{k!r}]", d, "an int")
            out[k] = dims
        return out
    if isinstance(value, (list, tuple, str)):
        from . import _core  # the library parses "name=1x3x224x224" as the CLI's --shape

        out = {}
        for t in [value] if isinstance(value, str) else list(value):
            if not isinstance(t, str):
                raise fail_type(func, "every item of shapes", t, "a str such as 'input=1x3x224x224'")
            name, dims = _core.parse_shape(t)
            out[name] = dims
        return out
    raise fail_type(func, "shapes", value, "a dict {input: dims}, a list of 'input=1x3x224x224' or None")
