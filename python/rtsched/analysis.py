"""Task-set generation, schedulability tests and partitioning (the analysis crate)."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import _core
from ._core import InputError, TaskSet


@dataclass
class Generated:
    """A generated task set, and what the model cannot hold yet (PAWS threads, ChronOS utilities)."""

    taskset: TaskSet
    utilisations: list = field(default_factory=list)
    threads: list | None = None
    utilities: list | None = None


def _params(params: dict) -> str:
    for k, v in params.items():
        if "," in str(v) or "=" in str(v):
            raise InputError(f"generator parameter {k}={v!r}: values may not contain ',' or '='")
    return ",".join(f"{k}={v}" for k, v in params.items())


def generate(name: str, seed: int = 1, **params) -> Generated:
    """Generate a task set, e.g. ``generate("randfixedsum", n=8, m=4, U=2.5, seed=3)``.

    Generators: ``rtsched.generators()``; each paper's named setup (``lelli2011``, ``paws2013``,
    ``chronos2011``, LWFG's ``mlu`` … ``mwhu``) and the classic ones (``uunifast``,
    ``uunifast-discard``, ``randfixedsum``). Impossible parameters raise :class:`InputError`
    naming the parameter.
    """
    ts, utils, threads, utilities = _core.generate(name, _params(params), seed)
    return Generated(ts, utils, threads, utilities)


def generators() -> list[dict]:
    return [{"name": n, "summary": s, "params": p} for n, s, p in _core.generators()]


def analyze(taskset) -> list[dict]:
    """Every applicable schedulability test: ``{"test", "schedulable" (True/False/None), "detail"}``."""
    from .result import _as_taskset

    return [{"test": t, "schedulable": v, "detail": d} for t, v, d in _core.analyze(_as_taskset(taskset))]


def partition(taskset, heuristic: str = "ffd", admission: str = "edf"):
    """Assign every task a CPU with ``heuristic`` (``ffd``, ``wfd``, ``bfd``, ``nfd``, ``bf``,
    ``lwfg``, or a chain such as ``lwfg+ffd+global``). Returns ``(TaskSet or None, heuristic)``:
    None when a chain fell back to ``global``. Raises :class:`InputError` naming the task that
    does not fit."""
    from .result import _as_taskset

    return _core.partition_taskset(_as_taskset(taskset), heuristic, admission)


def to_yaml(taskset: TaskSet) -> str:
    return _core.to_yaml(taskset)
