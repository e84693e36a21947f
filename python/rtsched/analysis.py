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
    ``uunifast-discard``, ``randfixedsum``). A generator gives the U asked (within integer-ns
    rounding) or raises :class:`InputError` naming the parameter: ``uunifast`` refuses U > 1 (a
    task could get u > 1), ``uunifast-discard`` and ``randfixedsum`` take any U up to n·u_max
    with u_max ≤ 1 (docs/generators.md, "What each generator promises").
    """
    return generate_from(name, seed, params)


def generate_from(name: str, seed: int, params: dict) -> Generated:
    """:func:`generate` with the parameters as a dict: a parameter may be called anything,
    ``name`` or ``seed`` too (the generator refuses it, naming it), where keyword arguments
    would collide with ``generate``'s own (a sweep spec's ``params: {name: …}`` did)."""
    ts, utils, threads, utilities = _core.generate(name, _params(params), seed)
    return Generated(ts, utils, threads, utilities)


def generators() -> list[dict]:
    return [{"name": n, "summary": s, "params": p} for n, s, p in _core.generators()]


def analyze(taskset, overheads: str | None = None, statistic: str = "p99") -> list[dict]:
    """Every applicable schedulability test: ``{"test", "schedulable" (True/False/None), "detail",
    "verdict"}``; ``verdict`` says it in words: "schedulable", "NOT schedulable", "inconclusive",
    or "not refuted" where the necessary condition holds (``schedulable`` None: no proof).

    With ``overheads`` (an overhead profile, ``rtsched.overheads/1``; its ``statistic`` column,
    ``"p99"`` by default), or when the task file sets ``run.overheads``, each entry also has
    ``"with_overheads"`` (True/False/None), ``"verdict_with_overheads"`` and ``"overhead_detail"``:
    the same test on the WCETs inflated by the overheads (:func:`overhead_analysis`, whose rows
    are these, in this order). Without overheads the three keys are absent. :func:`tests` lists
    every test.
    """
    from .result import _as_taskset

    ts = _as_taskset(taskset)
    plain = [{"test": t, "schedulable": v, "detail": d, "verdict": w} for t, v, d, w in _core.analyze(ts)]
    oa = overhead_analysis(ts, overheads, statistic)
    if oa is None:
        return plain
    return [dict(v, with_overheads=o["schedulable"], overhead_detail=o["detail"], verdict_with_overheads=o["verdict"])
            for v, o in zip(plain, oa["verdicts"], strict=True)]


def chain_bounds(taskset) -> list[dict]:
    """Every chain's end-to-end bounds (docs/chains.md, "Analysis"), in the set's order:
    ``{"chain", "communication" (None for an event chain, "implicit", "let"), "latency_ns",
    "data_age_ns", "reaction_time_ns" (None where the metric does not apply or no bound was
    found), "deadline_ns", "meets_deadline" (the latency, or data age, bound within the chain's
    deadline; None without one), "method", "exact" (True for LET's exact maxima, else upper
    bounds), "note" (why there is no bound)}``. Event chains: holistic response-time analysis
    (Tindell & Clark; Palencia & González Harbour's offsets); implicit chains: Davare et al.'s
    bounds; LET chains: exact. Under the priorities the fixed-priority schedulers give the set,
    on one CPU or each task's ``cpu``."""
    from .result import _as_taskset

    keys = ("chain", "communication", "latency_ns", "data_age_ns", "reaction_time_ns", "deadline_ns", "meets_deadline",
            "method", "exact", "note")
    return [dict(zip(keys, row, strict=True)) for row in _core.chain_bounds(_as_taskset(taskset))]


def tests() -> list[dict]:
    """Every schedulability test (the analysis crate's registry), in the order :func:`analyze`
    reports them: ``{"name", "summary", "applies" (the sets it applies to, in words),
    "citation", "kind" ("exact", "sufficient" or "necessary")}``; the last is the family
    ``partition:HEURISTIC``. A sweep runs any of them as ``test:NAME``."""
    return [dict(zip(("name", "summary", "applies", "citation", "kind"), t)) for t in _core.tests()]


def overhead_analysis(taskset, overheads: str | None = None, statistic: str = "p99") -> dict | None:
    """The overhead-aware analysis (docs/overheads.md, "Overhead-aware analysis"): every
    applicable test on the task set with each WCET inflated by the overheads the simulator can
    charge its job (dispatches, ticks) and each deadline shortened by the release latency.

    Overheads: the profile file ``overheads`` (``statistic``: ``"median"`` or ``"p99"``), or
    else the task file's own ``run.overheads``; None when there are none. Returns
    ``{"overheads": str, "costs": {kind: ns}, "verdicts": [{"test", "schedulable", "detail"}],
    "tasks": [{"name", "wcet_ns", "deadline_ns", "period_ns", "wcet_partitioned_ns",
    "deadline_inflated_ns", "dispatches_partitioned", "wcet_global_ns", "dispatches_global",
    "migrations_global"}]}`` (the ``global`` fields are None on one CPU). A pass proves the
    set schedulable with the overheads; a failure on the inflated set is reported as None
    (inconclusive), except where the overheads alone make a miss certain. A bad profile raises
    :class:`InputError` naming the field.
    """
    from .result import _as_taskset

    ts = _as_taskset(taskset)
    r = _core.analyze_overheads(ts, overheads, statistic)
    if r is None:
        return None
    desc, verdicts, rows = r
    costs = dict(_core.analysis_overheads(ts, overheads, statistic)[1])
    keys = ["name", "wcet_ns", "deadline_ns", "period_ns", "wcet_partitioned_ns", "deadline_inflated_ns", "dispatches_partitioned",
            "wcet_global_ns", "dispatches_global", "migrations_global"]
    return {
        "overheads": desc,
        "costs": costs,
        "verdicts": [{"test": t, "schedulable": v, "detail": d, "verdict": w} for t, v, d, w in verdicts],
        "tasks": [dict(zip(keys, row)) for row in rows],
    }


def partition(taskset, heuristic: str = "ffd", admission: str = "edf", overheads: str | None = None, statistic: str = "p99"):
    """Assign every task a CPU with ``heuristic`` (``ffd``, ``wfd``, ``bfd``, ``nfd``, ``bf``,
    ``lwfg``, or a chain such as ``lwfg+ffd+global``). Returns ``(TaskSet or None, heuristic)``:
    None when a chain fell back to ``global``. Raises :class:`InputError` naming the task that
    does not fit.

    Admission charges overheads — the profile ``overheads`` (its ``statistic``), or else the
    task file's own ``run.overheads`` — on the WCETs, as :func:`overhead_analysis` does per CPU."""
    from .result import _as_taskset

    return _core.partition_taskset(_as_taskset(taskset), heuristic, admission, overheads, statistic)


def to_yaml(taskset: TaskSet) -> str:
    return _core.to_yaml(taskset)
