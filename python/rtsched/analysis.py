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


_BOUND_KEYS = ("task", "index", "quantity", "bound_ns", "deadline_ns", "slack_ns", "blocking_ns", "spin_ns", "cpu")


def _verdict(row) -> dict:
    t, v, d, w, bounds = row
    return {"test": t, "schedulable": v, "detail": d, "verdict": w, "tasks": [dict(zip(_BOUND_KEYS, b)) for b in bounds]}


def analyze(taskset, overheads: str | None = None, statistic: str = "p99") -> list[dict]:
    """Every applicable schedulability test, as data: ``{"test", "schedulable" (True/False/None),
    "detail", "verdict", "tasks"}``; ``verdict`` says it in words: "schedulable", "NOT
    schedulable", "inconclusive", or "not refuted" where the necessary condition holds
    (``schedulable`` None: no proof). ``tasks`` holds the test's per-task rows, for a test that
    has them (the response-time analyses, ``edf-exact``, and the global EDF and density tests'
    own quantities; empty otherwise): ``{"task" (name), "index", "quantity" ("response time";
    "BCL window load", "Baruah window load", "least passing deadline": deadline checks, not
    response times, docs/generators.md "Per-task rows"), "bound_ns" (None: not bounded within
    the deadline; a task passes iff bound ≤ deadline, and a test says schedulable iff all do),
    "deadline_ns", "slack_ns" (deadline − bound), "blocking_ns" (the blocking term B_i the bound
    charges for critical sections under pip, pcp, pcp:original, srp, msrp, mrsp or fmlp+, docs/locking.md
    "Analysis" (fmlp+ under EDF: the remote wait charged as execution plus the boost blocking;
    omlp on one CPU: pip's terms); under omlp in the global tests the s-oblivious b_i added to
    the WCET; None for a
    test that charges none), "spin_ns" (under msrp and mrsp, the most a
    job spins for global resources, added to its WCET in the bound; None otherwise), "cpu" (the
    CPU of a per-CPU test's row, ``p-NAME`` and partitioning attempts; None otherwise)}``;
    ``edf-exact`` under srp, pcp, pip, omlp (and msrp) gives each task's blocking as its
    ``"quantity" "blocking"``, under fmlp+ its response time. :func:`simulated_max_response` gives what to set beside them.

    With ``overheads`` (an overhead profile, ``rtsched.overheads/1``; its ``statistic`` column,
    ``"p99"`` by default), or when the task file sets ``run.overheads``, each entry also has
    ``"with_overheads"`` (True/False/None), ``"verdict_with_overheads"`` and ``"overhead_detail"``:
    the same test on the WCETs inflated by the overheads (:func:`overhead_analysis`, whose rows
    are these, in this order). Without overheads the three keys are absent. :func:`tests` lists
    every test.
    """
    from .result import _as_taskset

    ts = _as_taskset(taskset)
    plain = [_verdict(r) for r in _core.analyze(ts)]
    oa = overhead_analysis(ts, overheads, statistic)
    if oa is None:
        return plain
    return [dict(v, with_overheads=o["schedulable"], overhead_detail=o["detail"], verdict_with_overheads=o["verdict"])
            for v, o in zip(plain, oa["verdicts"], strict=True)]


def partition_attempts(taskset) -> list[dict]:
    """Partitioning tried, on a set of several CPUs of independent sequential tasks (else
    empty): each heuristic (``ffd``, ``wfd``, ``bfd``, and ``lwfg`` when a task gives a
    ``group``) with each uniprocessor admission test (``edf-exact``, ``edf-density``,
    ``fp-rta-rm``, ``fp-rta-dm``): ``{"heuristic", "admission", "cpu_loads" (each CPU's
    utilisation; empty when no placement was found)}`` and the per-CPU test's verdict on the
    placement as :func:`analyze` gives it (``test`` is ``p-ADMISSION``; ``tasks``: the per-task
    bounds), or, when the heuristic places not every task, "NOT schedulable" naming the task."""
    from .result import _as_taskset

    return [dict(heuristic=h, admission=t, cpu_loads=loads, **_verdict(row))
            for h, t, row, loads in _core.partition_attempts(_as_taskset(taskset))]


def simulated_max_response(taskset, test: str) -> dict | None:
    """What a test's per-task bounds are set beside: ``{"scheduler", "max_response_ns" (per
    task, in order; None where no job completed)}``, simulated under the scheduler the test
    speaks for from a synchronous periodic release, every job at its WCET, without overheads
    (over the hyperperiod and the longest deadline, at most 50 of the longest period). None for a
    test without per-task bounds."""
    from .result import _as_taskset

    r = _core.simulated_max_response(_as_taskset(taskset), test)
    return None if r is None else {"scheduler": r[0], "max_response_ns": r[1]}


def chain_bounds(taskset, implicit: str = "durr") -> list[dict]:
    """Every chain's end-to-end bounds (docs/chains.md, "Analysis"), in the set's order:
    ``{"chain", "communication" (None for an event chain, "implicit", "let"), "latency_ns",
    "data_age_ns", "reaction_time_ns" (None where the metric does not apply or no bound was
    found), "deadline_ns", "meets_deadline" (the latency, or data age, bound within the chain's
    deadline; None without one), "method", "exact" (True for LET's exact maxima, else upper
    bounds), "note" (why there is no bound), and for an event chain its bound under EDF:
    "edf_latency_ns", "edf_meets_deadline", "edf_method", "edf_note" (None for a data-flow
    chain)}``. Event chains: holistic response-time analysis (Tindell & Clark; Palencia &
    González Harbour's offsets) under fixed priority (``latency_ns``: the priorities the
    fixed-priority schedulers give the set) and under EDF (Spuri's holistic analysis), on one
    CPU or each task's ``cpu``; implicit chains: Dürr et al.'s (2019) bounds, or Davare et
    al.'s (2007) with ``implicit="davare"``, under fixed priority; LET chains: exact, or the
    LET sum's bounds where a task is sporadic."""
    from .result import _as_taskset

    keys = ("chain", "communication", "latency_ns", "data_age_ns", "reaction_time_ns", "deadline_ns", "meets_deadline",
            "method", "exact", "note")
    edf_keys = ("edf_latency_ns", "edf_meets_deadline", "edf_method", "edf_note")
    out = []
    for row in _core.chain_bounds(_as_taskset(taskset), implicit):
        b = dict(zip(keys, row[:-1], strict=True))
        b.update(zip(edf_keys, row[-1] or (None,) * 4, strict=True))
        out.append(b)
    return out


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
    "migrations_global", "wcet_gfp_rm_ns", "dispatches_gfp_rm", "migrations_gfp_rm", and the same
    for ``dm`` and ``file``}]}``: the inflation per CPU, under global EDF (the ``global`` fields)
    and under global FP with each priority assignment (``gfp_*``, what the ``gfp-rta-*`` tests
    run on); the global fields are None on one CPU, the ``file`` ones without every task's
    priority. A pass proves the
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

    def task(row) -> dict:
        t = dict(zip(keys, row[:-1], strict=True))
        for by, fp in zip(_GLOBAL_FP, row[-1], strict=True):
            t.update(zip((f"wcet_gfp_{by}_ns", f"dispatches_gfp_{by}", f"migrations_gfp_{by}"), fp or (None, None, None)))
        return t

    return {
        "overheads": desc,
        "costs": costs,
        "verdicts": [_verdict(r) for r in verdicts],
        "tasks": [task(row) for row in rows],
    }


#: The global FP priority assignments of the inflation rows (``overheads::GLOBAL_FP``).
_GLOBAL_FP = ("rm", "dm", "file")


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
