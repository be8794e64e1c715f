"""hetplan's exceptions.

Every error the library reports reaches Python as a subclass of
:class:`Error` whose message is the one line the CLI prints after
``hetplan: error:`` — it names the file, the element and the fix. Where a
built-in exception means the same thing, the class derives from it too, so
``except ValueError`` and ``except OSError`` keep working.
"""


class Error(Exception):
    """Base class of every error hetplan raises.

    ``code`` is the library's error code (``"invalid_argument"``,
    ``"not_found"``, ...); ``str(error)`` is the one-line message.
    """

    code = "internal"


class InvalidArgumentError(Error, ValueError):
    """A bad option or parameter value (the CLI exits 2 on these)."""

    code = "invalid_argument"


class ArgumentTypeError(Error, TypeError):
    """An argument of the wrong Python type."""

    code = "invalid_argument"


class NotFoundError(Error):
    """A file, preset, method or element that does not exist."""

    code = "not_found"


class ParseError(Error, ValueError):
    """A malformed input file (ONNX, YAML, CSV, JSON)."""

    code = "parse_error"


class UnsupportedError(Error):
    """Valid input that hetplan cannot handle (control flow, a method that does not apply)."""

    code = "unsupported"


class InfeasibleError(Error):
    """The problem has no solution (an operator no PU supports)."""

    code = "infeasible"


class LimitExceededError(Error):
    """A configured size or time limit was exceeded."""

    code = "limit_exceeded"


class InternalError(Error):
    """A bug in hetplan: an invariant was violated. Please report it."""

    code = "internal"


class IoError(Error, OSError):
    """A file could not be read or written."""

    code = "io_error"


class MissingDependencyError(Error, ImportError):
    """An optional Python package (torch, pandas, matplotlib) is not installed."""

    code = "unsupported"


class ExportError(Error):
    """``torch.onnx.export`` could not export the module (``from_torch``)."""

    code = "unsupported"


class NoScheduleError(Error):
    """The plan has no schedule (infeasible, or a limit hit before any was found)."""

    code = "infeasible"


for _cls in (Error, InvalidArgumentError, ArgumentTypeError, NotFoundError, ParseError, UnsupportedError,
             InfeasibleError, LimitExceededError, InternalError, IoError, MissingDependencyError, ExportError,
             NoScheduleError):
    _cls.__module__ = "hetplan"  # tracebacks show hetplan.NotFoundError, where users catch it

# The library's error codes (hetplan::ErrorCode) → the class raised for them.
BY_CODE = {
    "invalid_argument": InvalidArgumentError,
    "not_found": NotFoundError,
    "parse_error": ParseError,
    "unsupported": UnsupportedError,
    "infeasible": InfeasibleError,
    "limit_exceeded": LimitExceededError,
    "internal": InternalError,
    "io_error": IoError,
}
