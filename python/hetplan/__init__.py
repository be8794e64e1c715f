"""hetplan from Python: plan how an ONNX model runs on heterogeneous hardware.

The same C++ library as the ``hetplan`` command, called directly::

    import hetplan
    model = hetplan.load_model("build/models/resnet18.onnx")
    s = hetplan.partition(model, "klein-arm", overrides={"cim.crossbars": 200})
    print(s.status, s.makespan_us, s.speedup)
    s.write("schedule.json")          # the file `hetplan partition --out` writes

docs/python.md documents every function; docs/ the formats and methods.
"""

from . import _errors
from ._errors import (ArgumentTypeError, Error, ExportError, InfeasibleError, InternalError, InvalidArgumentError,
                      IoError, LimitExceededError, MissingDependencyError, NoScheduleError, NotFoundError,
                      ParseError, UnsupportedError)

try:
    from . import _core
except ImportError as e:  # the extension is built by CMake (target hetplan_python)
    raise ImportError(
        f"hetplan: the C++ extension hetplan._core cannot be loaded ({e}); build it with "
        "`cmake --build build --target hetplan_python` and use PYTHONPATH=build/python, or "
        "`pip install --no-build-isolation .` (docs/python.md)") from e

import os as _os

# Installed by pip, the presets travel inside the package; the library looks
# in $HETPLAN_PLATFORM_DIR before the source tree it was built from.
_bundled = _os.path.join(_os.path.dirname(__file__), "platforms")
if _os.path.isdir(_bundled) and not _os.path.isdir(_os.path.join(_core.source_dir, "platforms")):
    _os.environ.setdefault("HETPLAN_PLATFORM_DIR", _bundled)

from ._costs import CostTable, load_costs, profile
from ._dse import DseResults, dse, read_results
from ._generation import Generation, plan_generation
from ._model import Model, from_torch, load_model
from ._plan import MethodInfo, Schedule, Validation, map, partition, plan, solvers, validate
from ._platform import Platform, platform, presets

__version__ = "0.1.0"

#: Fields of the schedule file that vary between identical runs (docs/schedule-format.md).
NONDETERMINISTIC_FIELDS = tuple(_core.nondeterministic_fields)
#: Where profiles are cached unless cache_dir says otherwise (relative to the working directory).
DEFAULT_CACHE_DIR = _core.default_cache_dir


def onnxruntime_version() -> str:
    """The ONNX Runtime version that measures host costs."""
    return _core.onnxruntime_version()


__all__ = [
    "ArgumentTypeError", "CostTable", "DEFAULT_CACHE_DIR", "DseResults", "Error", "ExportError", "Generation",
    "InfeasibleError",
    "InternalError", "InvalidArgumentError", "IoError", "LimitExceededError", "MethodInfo", "MissingDependencyError",
    "Model", "NONDETERMINISTIC_FIELDS", "NoScheduleError", "NotFoundError", "ParseError", "Platform", "Schedule",
    "UnsupportedError", "Validation", "dse", "from_torch", "load_costs", "load_model", "map", "onnxruntime_version",
    "partition", "plan", "plan_generation", "platform", "presets", "profile", "read_results", "solvers", "validate",
]
