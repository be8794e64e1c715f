"""LLM generation planned as one request: ``hetplan partition MODEL --llm prompt=P,new=N`` (docs/generation.md)."""

import json
import os
from typing import Any, Dict, Optional

from . import _args, _core
from ._model import Model
from ._platform import as_platform

PathLike = Any


class Generation:
    """A planned generation request: the generation file and its two phases' schedule files.

    ``file`` is the generation file (``format: hetplan-generation``) as the
    CLI writes it, already passed by the validator with ``prefill`` and
    ``decode``, the two phases' schedule files. :meth:`write` writes all
    three, which ``hetplan split``, ``run --generate`` and ``export --format
    ort-genai`` read.
    """

    __slots__ = ("file", "prefill", "decode")

    def __init__(self, files: Dict[str, Any]) -> None:
        self.file: Dict[str, Any] = files["generation"]
        self.prefill: Dict[str, Any] = files["prefill"]
        self.decode: Dict[str, Any] = files["decode"]

    @property
    def metrics(self) -> Dict[str, Any]:
        """TTFT, TPOT per step, tokens/s, energy, KV cache bytes, crossbars, rewrites (the file's ``metrics``)."""
        return self.file["metrics"]

    @property
    def status(self) -> str:
        """``optimal`` when the two phases are proven together, else ``feasible``."""
        return self.file["solver"]["status"]

    @property
    def gap(self) -> Optional[float]:
        """The pair's relative gap, as the search proved it."""
        return self.file["solver"]["gap"]

    def write(self, path: PathLike) -> None:
        """Writes the generation file at ``path`` and the phases beside it (``STEM.prefill.json``, ``STEM.decode.json``)."""
        path = os.fspath(path)
        folder = os.path.dirname(path)
        for phase in ("prefill", "decode"):
            with open(os.path.join(folder, self.file["phases"][phase]["schedule_file"]), "w") as f:
                json.dump(getattr(self, phase), f, indent=1)
                f.write("\n")
        with open(path, "w") as f:
            json.dump(self.file, f, indent=1)
            f.write("\n")

    def __repr__(self) -> str:
        m = self.metrics
        return (f"<hetplan.Generation prompt {self.file['prompt']}, {self.file['new_tokens']} new tokens: "
                f"TTFT {m['ttft_us']:.1f} µs, {m['tokens_per_s']:.1f} tokens/s, {self.status}>")


def plan_generation(model: Any, prompt: int, new_tokens: int, platform: Any = "klein-arm", overrides: Any = None, *,
                    objective: str = "latency", max_tpot: Optional[float] = None, solver: str = "exact", time_limit: Optional[float] = None, gap: Optional[float] = None,
                    threads: Optional[int] = None, search_nodes: Optional[int] = None, warmup: int = 20,
                    runs: int = 200, cache_dir: Optional[PathLike] = _core.default_cache_dir,
                    name: str = "generation") -> Generation:
    """Plans a generation request: ``hetplan partition MODEL --llm prompt=P,new=N``.

    The prefill at ``prompt`` tokens and ``new_tokens`` decode steps, planned
    together (the spatial PUs' crossbars shared by both phases). ``model``: a
    decoder's ONNX path, or a :class:`Model` loaded from one. ``platform``: a
    preset name or a YAML path (or a :class:`Platform` from one), with
    ``overrides`` as :meth:`Platform.with_overrides` takes them.
    ``objective``: ``latency`` (TTFT + N × TPOT), ``tokens`` (decode tokens/s,
    then TTFT at that TPOT) or ``ttft`` (TTFT with the decode's TPOT at most
    ``max_tpot`` µs, which bounds the others too when given). The solver
    options and the profiling options are :func:`partition`'s. ``name``: the
    stem of the phases' file names the generation file refers to
    (``NAME.prefill.json``, ``NAME.decode.json``). Releases the GIL while it
    runs; errors raise :class:`Error` subclasses with the CLI's messages.
    """
    func = "plan_generation"
    if isinstance(model, Model):
        if not os.path.isfile(model.path):
            raise _args.fail_type(func, "model", model, "a decoder's ONNX path, or a Model loaded from a file")
        model_path = model.path
    else:
        model_path = _args.path(func, "model", model)
    p = as_platform(func, platform, overrides)
    source = p.source
    if source.startswith("preset:"):
        source = source[len("preset:"):]
    elif not os.path.isfile(source):
        raise _args.fail_type(func, "platform", platform, "a preset name or a YAML path (a dict platform: write it "
                              "to a YAML file)")
    spec, _ = _core.solver_spec(_args.string(func, "solver", solver), "latency", None, False,
                                _args.optional_number(func, "time_limit", time_limit),
                                _args.optional_number(func, "gap", gap),
                                _args.optional_integer(func, "threads", threads, 0),
                                _args.optional_integer(func, "search_nodes", search_nodes, 0), None, None, "", "",
                                None, None, None, None, None, None, None, None)
    stem = _args.string(func, "name", name)
    llm = (f"prompt={_args.integer(func, 'prompt', prompt, 1)},new={_args.integer(func, 'new_tokens', new_tokens, 1)},"
           f"objective={_args.string(func, 'objective', objective)}")
    if max_tpot is not None:
        llm += f",max_tpot={_args.number(func, 'max_tpot', max_tpot)!r}"
    files = _core.plan_generation(model_path, source, list(p.overrides), llm, spec,
                                  _args.integer(func, "warmup", warmup, 0), _args.integer(func, "runs", runs, 1),
                                  _args.optional_path(func, "cache_dir", cache_dir), stem + ".prefill.json",
                                  stem + ".decode.json")
    return Generation(files)
