"""The registered policies as their descriptions say (``PolicyInfo``, crates/policies/src/spec.rs):
what each takes and needs of a task set — a partition (and how it is named), fixed priorities,
fork-join and DAG tasks, critical sections, best-effort tasks — and what it does with TUFs and
deadlocks. The CLI reads these instead of lists of names: which schedulers ``--partition``
reaches, which use TUFs or resolve deadlocks (``checks.py``), how a sweep's partitioner hint is
spelt.
"""

from __future__ import annotations

from functools import lru_cache

from . import _core


@lru_cache(maxsize=1)
def _by_name() -> dict:
    return {p["name"]: p for p in _core.policies()}


def descriptions() -> list[dict]:
    """Every policy's description (a fresh copy), in the registry's order."""
    return _core.policies()


def info(name: str) -> dict:
    """The description of policy ``name`` (a registered name, without options)."""
    return _by_name()[name]


def partitioned() -> list[str]:
    """The policies that run on a partition (``partition`` set), in the registry's order."""
    return [n for n, p in _by_name().items() if p["partition"] is not None]


def with_heuristic(name: str, heuristic: str) -> str:
    """Scheduler ``name`` (a partitioned policy) with partitioner ``heuristic``, written as its
    description says: the bare option where it names the heuristic (``pedf:ffd``), else
    ``partition=`` (``pfp:partition=ffd``, whose bare option is its priority assignment)."""
    return f"{name}:{heuristic}" if info(name)["partition"]["bare"] else f"{name}:partition={heuristic}"


_PARTS = (("fork_join", "fork-join tasks"), ("dag", "DAG tasks"), ("sections", "critical sections"))


def needs(p: dict) -> str:
    """What description ``p`` says the policy takes and needs of a set, in a few words (the
    ``rtsched schedulers`` table): the partition it runs on and how a heuristic is named,
    priorities, TUFs, deadlocks, and the parts of a set it takes beyond the real-time ones
    (best-effort tasks) or does not take."""
    out = []
    how = p["partition"]
    if how:
        named = f"{p['name']}:NAME" if how["bare"] else "partition=NAME"
        out.append(f"a partition ({named}, or cpu fields; admission {how['admission']})")
    if p["fixed_priorities"]:
        out.append("priorities (file, rm or dm)")
    if p["tufs"] != "ignored":
        out.append(f"{p['tufs']} TUFs")
    if p["resolves_deadlocks"]:
        out.append("breaks deadlocks")
    if p["takes"]["fair"]:
        out.append("best-effort tasks too")
    out += [f"no {what}" for key, what in _PARTS if not p["takes"][key]]
    return "; ".join(out) or "-"
