"""Warnings about a task set and the schedulers chosen for it, printed before a run.

Two mismatches are legal but easy to miss:

- a task set with time-utility functions (TUFs) under a scheduler that ignores them: the run
  still measures the accrued utility ratio (AUR), but nothing tried to maximise it;
- nested critical sections that can deadlock (``TaskSet.lock_order_cycle``) under a scheduler
  that does not resolve deadlocks: if the cycle closes, the run stops with an error.

A warning is one line on stderr; it never changes the exit code. Each kind is said once per
run (naming every scheduler it concerns), and once per sweep (see ``sweep/runner.py``). What
to warn about is decided in Rust, for a run and for a sweep's rows alike
(``_core.taskset_notes``, crates/py/src/sweep_row.rs); this module words it.
"""

from __future__ import annotations

import sys
from functools import lru_cache

from . import _core
from ._core import InputError

# The smallest task set every policy builds for (one CPU, the task placed on it), to ask each
# registered policy what it does with TUFs and deadlocks.
_PROBE = "platform: {cpus: 1}\nrun: {duration: 1}\ntasks:\n  - {name: a, period: 10, wcet: 1, cpu: 0}\n"


@lru_cache(maxsize=1)
def registered_traits() -> dict:
    """``{name: (uses_tufs, resolves_deadlocks)}`` for every registered policy, as built by
    its bare name (a policy that does not build for the probe is left out)."""
    ts = _core.parse_taskset(_PROBE, "yaml", "<probe>")
    out = {}
    for name, *_ in _core.schedulers():
        try:
            out[name] = tuple(_core.policy_traits(ts, name))
        except InputError:
            pass
    return out


def utility_accrual_schedulers() -> list[str]:
    return [n for n, (tufs, _) in registered_traits().items() if tufs]


def deadlock_resolving_schedulers() -> list[str]:
    return [n for n, (_, dl) in registered_traits().items() if dl]


def _quoted(names) -> str:
    return ", ".join(f"'{n}'" for n in names)


def _which(names, one: str, many: str) -> str:
    return f"scheduler {_quoted(names)} {one}" if len(names) == 1 else f"schedulers {_quoted(names)} {many}"


def tuf_warning(subject: str, ignoring: list[str]) -> str:
    ua = utility_accrual_schedulers()
    known = f"the utility-accrual schedulers are {', '.join(ua)}" if ua else "this build has no utility-accrual scheduler"
    return (f"warning: {subject} time-utility functions; {_which(ignoring, 'ignores them', 'ignore them')} "
            f"(AUR is still measured); {known}")


def deadlock_warning(subject: str, cycle: str, unresolving: list[str],
                     consequence: str = "if it happens the run stops with an error") -> str:
    res = deadlock_resolving_schedulers()
    known = f" ({', '.join(res)} abort a job to break one)" if res else ""
    return (f"warning: {subject}: {cycle}; {_which(unresolving, 'does not resolve deadlocks', 'do not resolve deadlocks')}"
            f"{known}; {consequence}")


def taskset_warnings(ts, schedulers) -> list[str]:
    """The warnings for running ``ts`` under each of ``schedulers`` (at most one per kind)."""
    notes = _core.taskset_notes(ts, list(dict.fromkeys(schedulers)))
    out = []
    ignoring = [n[1] for n in notes if n[0] == "tufs"]
    if ignoring:
        out.append(tuf_warning(f"task set {ts.source} has", ignoring))
    deadlocks = [n for n in notes if n[0] == "deadlock"]
    if deadlocks:
        out.append(deadlock_warning(f"task set {ts.source}", deadlocks[0][2], [n[1] for n in deadlocks]))
    return out


def warn(ts, schedulers, out=None) -> None:
    for w in taskset_warnings(ts, schedulers):
        print(w, file=out or sys.stderr)
