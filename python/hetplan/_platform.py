"""Platforms: presets, YAML files and Python dicts (docs/platform-format.md)."""

import json
import os
from typing import Any, Dict, List, Union

from . import _args, _core
from ._errors import ArgumentTypeError

PathLike = Union[str, "os.PathLike[str]"]


class Platform:
    """A validated platform: its PUs, links and the overrides applied to it.

    Made by :func:`platform` (a preset name, a YAML file or a dict). Immutable:
    :meth:`with_overrides` returns a new platform.
    """

    __slots__ = ("_h",)

    def __init__(self, handle: Any) -> None:
        if not isinstance(handle, _core.Platform):
            raise ArgumentTypeError("Platform: use hetplan.platform(name, path or dict)")
        self._h = handle

    @property
    def name(self) -> str:
        return self._h.name

    @property
    def description(self) -> str:
        return self._h.description

    @property
    def source(self) -> str:
        """``preset:<name>``, the YAML file's path, or ``<dict>``."""
        return self._h.source

    @property
    def pus(self) -> List[str]:
        """The PU names in order."""
        return self._h.pus

    @property
    def overrides(self) -> List[str]:
        """The assignments applied, in order (``cim.crossbars=200``)."""
        return self._h.overrides

    def with_overrides(self, overrides: Any) -> "Platform":
        """A copy with ``overrides`` applied, as ``--set`` applies them.

        ``overrides``: ``{"cim.crossbars": 100, "link.cpu-cim.bandwidth_gbps": 5}``
        or ``["cim.crossbars=100"]``. Lists become comma lists
        (``{"cim.supported_ops": ["Conv", "Gemm"]}``). An unknown key or a bad
        value raises :class:`InvalidArgumentError` naming the assignment and
        the valid keys; this platform is unchanged.
        """
        return Platform(self._h.with_overrides(_args.overrides("Platform.with_overrides", overrides)))

    def to_dict(self) -> Dict[str, Any]:
        """Every resolved parameter, as the schedule file's ``platform`` block holds it."""
        return self._h.to_dict()

    def layers(self, model: Any) -> Dict[str, Any]:
        """Each operator of ``model`` (a :class:`hetplan.Model`) as every CIM PU
        holds and runs it, as ``hetplan platform layers --json`` prints it:
        ``{pu: {"operators": [{"name", "rows", "cols", "row_tiles",
        "col_tiles", "copies", "crossbars", "mvms", "latency_us", "energy_pj"},
        ...], "crossbars", "budget", "latency_us", "mvm_latency_ns",
        "energy_pj", "adc_share"}}`` (docs/platform-format.md)."""
        handle = getattr(model, "_h", None)
        if not isinstance(handle, _core.Model):
            raise _args.fail_type("Platform.layers", "model", model, "a hetplan.Model (hetplan.load_model)")
        return self._h.layers(handle)

    def __repr__(self) -> str:
        extra = f" with {' '.join(self.overrides)}" if self.overrides else ""
        return f"<hetplan.Platform {self.name} ({self.source}): {', '.join(self.pus)}{extra}>"


def platform(spec: Union[str, PathLike, Dict[str, Any], Platform] = "klein-arm", overrides: Any = None) -> Platform:
    """A platform from a preset name (``"klein-arm"``, ``"klein-x86"``,
    ``"soc-example"``), a YAML file, or a dict with the YAML's structure;
    ``overrides`` are applied as :meth:`Platform.with_overrides` applies them.

    A name is a path when it contains ``/`` or ends in ``.yaml``/``.yml``,
    as for ``--platform``. Errors name the file (``<dict>`` for a dict), the
    line, the key and the fix.
    """
    func = "platform"
    if isinstance(spec, Platform):
        p = spec
    elif isinstance(spec, dict):
        try:
            text = json.dumps(spec, indent=1, allow_nan=False)  # JSON is YAML: one parser for both
        except (TypeError, ValueError) as e:
            raise ArgumentTypeError(f"{func}: the dict cannot be written as YAML: {e}") from e
        p = Platform(_core.parse_platform(text, "<dict>"))
    elif isinstance(spec, (str, os.PathLike)):
        p = Platform(_core.load_platform(_args.path(func, "spec", spec)))
    else:
        raise _args.fail_type(func, "spec", spec, "a preset name, a YAML path, a dict or a hetplan.Platform")
    if overrides:
        p = p.with_overrides(overrides)
    return p


def presets() -> List[str]:
    """The preset names, from $HETPLAN_PLATFORM_DIR and hetplan's platforms/ folder."""
    names = set()
    dirs = [os.environ.get("HETPLAN_PLATFORM_DIR", ""), os.path.join(_core.source_dir, "platforms")]
    for d in dirs:
        if d and os.path.isdir(d):
            names.update(f[:-5] for f in os.listdir(d) if f.endswith(".yaml"))
    return sorted(names)


def as_platform(func: str, value: Any, overrides: Any) -> Platform:
    if isinstance(value, (Platform, dict, str, os.PathLike)):
        return platform(value, _args.overrides(func, overrides))
    raise _args.fail_type(func, "platform", value, "a preset name, a YAML path, a dict or a hetplan.Platform")
