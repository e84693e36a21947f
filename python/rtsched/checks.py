"""Warnings about a task set and the schedulers chosen for it, printed before a run.

A load no scheduler can meet (``load_warnings``: U > m, a task with C > D or C > T, a likely
unit mix) is said by ``validate``, ``simulate`` and ``gen``. Two mismatches between a set and
its schedulers are legal but easy to miss:

- a task set with time-utility functions (TUFs) under a scheduler that ignores them: the run
  still measures the accrued utility ratio (AUR), but nothing tried to maximise it;
- nested critical sections that can deadlock (``TaskSet.lock_order_cycle``) under a scheduler
  that does not resolve deadlocks: if the cycle closes, the run stops with an error.

A warning is one line on stderr; it never changes the exit code. A load warning names the task
set and the task; each scheduler mismatch is said once per run (naming every scheduler it
concerns), and once per sweep (see ``sweep/runner.py``).

The load warnings, and those about the counted window (``window_warnings``: shorter than the
longest period, or too short for a few jobs of every task), are the task set's
(``TaskSet.warnings``, the texts without ``warning: SOURCE:``'s first word). ``rtsched.simulate``
and ``rtsched.run`` give each as a Python warning of category :class:`LoadWarning` (a
``UserWarning``; ``warnings.catch_warnings`` sees it, ``warnings.simplefilter("ignore",
rtsched.LoadWarning)`` silences it); the commands print the same texts once, on stderr, and
a sweep's rows warn about nothing per row (``sweep/runner.py`` says what it says once per
sweep). What to warn about TUFs and deadlocks
is decided in Rust, for a run and for a sweep's rows alike (``_core.taskset_notes``,
crates/sweep/src/row.rs); this module words it. The load warnings read only the parsed task
set (``TaskSet.tasks()``), so they hold for a file, a dict and a generated set alike.
"""

from __future__ import annotations

import sys

from . import _core
from .durations import in_unit, words
from .policies import descriptions


def utility_accrual_schedulers() -> list[str]:
    """The policies that decide by TUFs, as their descriptions say (``rtsched.policies``)."""
    return [p["name"] for p in descriptions() if p["tufs"] != "ignored"]


def deadlock_resolving_schedulers() -> list[str]:
    """The policies that break a deadlock by an abort, as their descriptions say."""
    return [p["name"] for p in descriptions() if p["resolves_deadlocks"]]


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


class LoadWarning(UserWarning):
    """A task set whose results would mislead without a word: more work than the CPUs can do, a
    job longer than its deadline or period, a likely unit mix, or a counted window too short
    for the periods. Exported as ``rtsched.LoadWarning``."""


def warn(ts, schedulers, out=None) -> None:
    """Print, before a run of ``ts`` (its run options applied) under ``schedulers``, its load
    and window warnings and the warnings about the schedulers chosen for it."""
    for w in [f"warning: {t}" for t in set_warnings(ts)] + taskset_warnings(ts, schedulers):
        print(w, file=out or sys.stderr)


def set_warnings(ts) -> list[str]:
    """The task set's warnings (``TaskSet.warnings``): its load warnings and those about its
    counted window, each ``SOURCE: text`` (the CLI prints it after ``warning: ``)."""
    return [w.removeprefix("warning: ") for w in load_warnings(ts) + window_warnings(ts)]


def emit(ts, stacklevel: int = 3) -> None:
    """Give each of ``ts``'s warnings (:func:`set_warnings`) as a Python warning of category
    :class:`LoadWarning`, pointing ``stacklevel`` frames up (the API call's caller)."""
    import warnings

    for w in set_warnings(ts):
        warnings.warn(w, LoadWarning, stacklevel=stacklevel)


# --- Loads no scheduler can meet ---------------------------------------------------------------
#
# What a file says can be legal and still impossible: more work than the CPUs can do, a job
# longer than its deadline, or (the usual cause of both) a duration without a unit — a bare
# number is milliseconds, so `period: 1000us, wcet: 200` is a WCET of 200 ms every 1 ms.
# `load_warnings` says so for `validate`, `simulate` and `gen` (docs/taskset-format.md
# "Warnings"). Best-effort (fair) tasks never trigger a per-task warning: their `wcet` is one
# burst and their `period` the burst plus its sleep.

#: A task whose longest path (its WCET when sequential) is at least this many times its period
#: or its deadline, whichever is smaller, is reported as a likely unit mix rather than as an
#: overload: a job needing ten CPUs' worth of one CPU is rarely meant, while a WCET meant in
#: microseconds and read as milliseconds is a thousand times too large.
UNIT_MIX_FACTOR = 10

#: At most this many per-task warnings for one task set; one more line counts the rest.
MAX_TASK_WARNINGS = 5


def _task_warning(task) -> str | None:
    """The one warning for a task (unit mix, then C > D, then C > T), or None."""
    t_ns, d_ns = task["period_ns"], task["deadline_ns"]
    length = task["critical_path_ns"]  # Task::critical_path: a job's longest chain of work
    parallel = any(len(r) > 1 for r in task["regions"]) or len((task.get("dag") or {}).get("nodes", ())) > 1
    what = f"longest path {words(length)}" if parallel else f"wcet {words(length)}"
    period = "minimum inter-arrival time" if task["max_interarrival_ns"] is not None else "period"
    bound, bound_name = (d_ns, "deadline") if d_ns < t_ns else (t_ns, period)
    head = f"task '{task['name']}': {what}"
    if length >= UNIT_MIX_FACTOR * bound:
        hint = ""
        if not parallel:
            number = in_unit(length, "ms")
            if length <= bound * 1_000:
                hint = f"; did you mean wcet: {number}us?"
            elif length <= bound * 1_000_000:
                hint = f"; did you mean wcet: {number}ns?"
        return (f"{head} is {length / bound:,.0f}× its {bound_name} {words(bound)}: likely mixed units "
                f"(a number without a unit is ms){hint}")
    if length > d_ns:
        return (f"{head} > deadline {words(d_ns)}: a job that runs its worst case misses its deadline "
                "under every scheduler")
    if length > t_ns:
        return (f"{head} > {period} {words(t_ns)}: its jobs run one after another, so at their worst case "
                "each starts later than the one before and the delay grows without bound")
    return None


def load_warnings(ts) -> list[str]:
    """Warnings for a load no scheduler can meet: the total utilisation U above the CPU count m,
    and per task (at most ``MAX_TASK_WARNINGS`` lines, then a count): a likely unit mix (the
    longest path ``UNIT_MIX_FACTOR`` times its period or deadline or more), C > D, C > T.
    Each line starts ``warning: SOURCE:``; none changes the exit code."""
    out = []
    u, m = ts.utilization, ts.cpus
    if u > m * (1 + 1e-9):
        out.append(f"U = {u:,.3f} > m = {m} CPU{'s' if m != 1 else ''}: more work than the platform can do; "
                   "at their worst case every scheduler misses deadlines")
    tasks = [w for w in map(_task_warning, ts.tasks()) if w]
    out += tasks[:MAX_TASK_WARNINGS]
    if len(tasks) > MAX_TASK_WARNINGS:
        rest = len(tasks) - MAX_TASK_WARNINGS
        out.append(f"… and {rest} more task{'s' if rest != 1 else ''} like these")
    return [f"warning: {ts.source}: {w}" for w in out]


# --- A counted window too short for the periods ---------------------------------------------
#
# A run counts the jobs released in [0, duration). A window shorter than a task's period counts
# at most one job of it, and one of a few jobs says little: `--duration 5` against periods up to
# 81 ms gave DSR 1.0 from 8 jobs. Said for the task whose window holds fewest jobs.

#: Fewer jobs of a task than this in the counted window is reported: with two, a DSR is one of
#: 0, 0.5 or 1 for that task, and its response times are one or two samples.
MIN_JOBS_PER_TASK = 2


def _jobs_in_window(task, duration_ns: int) -> int:
    """The most jobs of ``task`` released in [0, duration): from its offset, one a period (a
    sporadic task's minimum inter-arrival time)."""
    offset, period = task.get("offset_ns", 0) or 0, task["period_ns"]
    return 0 if duration_ns <= offset else -(-(duration_ns - offset) // period)


def window_warnings(ts) -> list[str]:
    """A warning when the counted window (``run.duration``, or ``--duration``) is shorter than
    the longest period, or holds fewer than ``MIN_JOBS_PER_TASK`` jobs of some task: naming the
    task with fewest, how many tasks are short, the jobs counted in all, and the window that
    would count ``MIN_JOBS_PER_TASK`` of each. Best-effort (fair) tasks are not counted."""
    d = ts.duration_ns
    rt = [t for t in ts.tasks() if t["period_ns"] > 0 and not t["fair"]]
    if not rt or d <= 0:
        return []
    counts = [(_jobs_in_window(t, d), t) for t in rt]
    short = [(n, t) for n, t in counts if n < MIN_JOBS_PER_TASK]
    longest = max(t["period_ns"] for t in rt)
    if not short and d >= longest:
        return []
    n, t = min(short or counts, key=lambda x: (x[0], -x[1]["period_ns"]))
    need = max((t.get("offset_ns", 0) or 0) + MIN_JOBS_PER_TASK * t["period_ns"] for t in rt)
    others = f" (and {len(short) - 1} more task{'s' if len(short) != 2 else ''})" if len(short) > 1 else ""
    total = sum(c for c, _ in counts)
    return [f"warning: {ts.source}: the counted window {words(d)} holds {n} job{'s' if n != 1 else ''} of task "
            f"'{t['name']}' (period {words(t['period_ns'])}){others}, {total:,} jobs in all: its results rest on few jobs; "
            f"a window of {words(need)} or more counts at least {MIN_JOBS_PER_TASK} of every task (--duration)"]


def missing_m_warning(generator: str, params: dict, cpus: int) -> str | None:
    """The warning for a generator run without ``m``: the set is for the generator's default
    platform, which the user never chose (``gen randfixedsum n=8 U=2.5`` is for 1 CPU)."""
    if "m" in params:
        return None
    return (f"warning: gen {generator}: no m given, so the set is for the generator's default of "
            f"{cpus} CPU{'s' if cpus != 1 else ''} (platform.cpus: {cpus}); pass m=N for N CPUs")
