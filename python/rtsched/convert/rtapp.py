"""rt-app JSON in and out (docs/workloads.md "From and to rt-app" has the mapping tables).

Reading is rtapp_dialect.py (rt-app's JSON dialect: comments, trailing commas, repeated keys),
rtapp_read.py (the thread keys, ``global``, the legacy ``exec``/``period`` form) and
rtapp_events.py (the events as tasks, triggers, suspensions, sections and chains); this module
re-exports their entry points and holds the writing side.

Writing: one thread per task, ``run`` events split around ``lock``/``unlock`` for the
critical sections, a ``timer`` with the period, and the policy of the chosen real backend
(``kernel:fifo[:rm|:dm|:file]`` → SCHED_FIFO priorities, ``kernel:deadline`` → SCHED_DEADLINE
reservations with rtsched's own runtime rule). A fork-join task becomes one thread per lane joined by
barriers after each region.
"""

from __future__ import annotations

import math

from .._core import InputError
from .rtapp_dialect import DialectError, Obj, loads  # noqa: F401  (the reading side's entry points)
from .rtapp_read import POLICY_OF, from_rtapp, is_rtapp  # noqa: F401

#: rtsched's policies as rt-app's.
RTAPP_POLICY = {"other": "SCHED_OTHER", "fifo": "SCHED_FIFO", "rr": "SCHED_RR", "deadline": "SCHED_DEADLINE"}

# ----------------------------------------------------------------------------- writing

#: rt-app's ``run`` is a busy loop whose count is calibrated once, at rt-app's start (``pLoad``,
#: ns per loop): on this 2-vCPU VM a 3 ms ``run`` lasted 15–27 % longer than asked on a quiet
#: machine (and shorter or longer by more while others ran), so a SCHED_DEADLINE reservation of
#: rtsched's own size (the work + 10 %) was overrun and the CBS throttled the thread, stretching
#: its period (``update_curr_dl`` → ``dl_runtime_exceeded``). The exported ``dl-runtime`` is
#: rtsched's reservation times this factor (capped at the deadline), so rt-app's own error fits
#: in it; rt-app 1.0 has no ``runtime`` event (wall-time work) that would avoid the loop.
RTAPP_RUN_ERROR = 1.3


def fifo_levels(prio):
    """SCHED_FIFO priorities (10…89) for rtsched priorities, order kept: the mapping
    ``rtsched run -b kernel:fifo`` applies (crates/linux/src/kernel/plan.rs ``fifo_levels``)."""
    levels = sorted(set(prio))
    k = max(len(levels), 2)
    return [10 + levels.index(p) * 79 // (k - 1) for p in prio]


def _monotonic(tasks, key):
    order = sorted(range(len(tasks)), key=lambda i: (tasks[i][key], i))
    prio = [0] * len(tasks)
    for rank, i in enumerate(order):
        prio[i] = len(tasks) - rank
    return prio


def _us(ns: int, where: str, warn) -> int:
    us = round(ns / 1000)
    if us * 1000 != ns:
        warn(f"{where}: {ns} ns is not a whole number of microseconds (rt-app's unit): written as {us} us")
    return us


class _Events:
    """The events of one rt-app thread, numbered per kind (``run0``, ``run1``, ``lock0``...)
    so every key is unique, as rt-app 1.0's JSON reader needs."""

    def __init__(self):
        self.items, self.n = [], {}

    def add(self, kind, value):
        if kind == "run" and value == 0:
            return
        k = self.n.get(kind, 0)
        self.items.append((f"{kind}{k}", value))
        self.n[kind] = k + 1


def _work_events(ev, work_ns, sections, where, warn):
    """``work_ns`` of a thread's work as runs split at each lock/unlock of ``sections``."""
    points = []
    for i, s in enumerate(sections):
        points.append((s["start_ns"], 1, -s["length_ns"], i, "lock", s["resource"]))
        points.append((s["start_ns"] + s["length_ns"], 0, -s["start_ns"], -i, "unlock", s["resource"]))
    # At one position: unlocks first (the innermost, latest taken, first), then locks (the
    # outermost, longest, first).
    points.sort()
    pos = 0
    for at, _, _, _, kind, res in points:
        if at > pos:
            ev.add("run", _us(at - pos, where, warn))
            pos = at
        ev.add(kind, res)
    if work_ns > pos:
        ev.add("run", _us(work_ns - pos, where, warn))


def _lanes(t, where, warn):
    """The rt-app threads of one task, as lists of events before the timer: one for a
    sequential task; for a fork-join task one per lane (lane k runs thread k of every region
    that has one, as ``rtsched run`` places them), each region closed by a barrier that
    every lane reaches (rt-app counts a barrier's users by its references)."""
    if t.get("dag"):
        raise InputError(f"{where}: a DAG task (field 'dag') has no rt-app form: rt-app's barriers join every lane, "
                         f"so only fork-join regions convert (docs/dag.md)")
    regions = t["regions"] or [[t["wcet_ns"]]]
    width = max(len(r) for r in regions)
    lanes = []
    for k in range(width):
        ev = _Events()
        for ri, threads in enumerate(regions):
            if k < len(threads):
                secs = [s for s in t["sections"] if s["region"] == ri and s["thread"] == k]
                _work_events(ev, threads[k], secs, where, warn)
            if width > 1:
                ev.add("barrier", f"{t['name']}-join{ri}")
        lanes.append(ev.items)
    return lanes


def _fair_thread(t, where, warn) -> dict:
    """A best-effort task as an rt-app SCHED_OTHER thread without a timer: a hog runs 1 s at a
    time forever, a sleeper runs and sleeps, a bursty task its mean burst and sleep."""
    kind, run, sleep = t["behaviour"]
    th = {"policy": "SCHED_OTHER"}
    if t["nice"]:
        th["nice"] = t["nice"]
    if t["cpu"] is not None:
        th["cpus"] = [t["cpu"]]
    if t["offset_ns"]:
        th["delay"] = _us(t["offset_ns"], f"{where}: offset", warn)
    if kind == "hog":
        th["run0"] = 1_000_000
        return th
    if kind == "bursty":
        warn(f"{where}: a bursty task's random bursts and sleeps have no rt-app form: written as their means")
    th["run0"] = max(1, _us((run[0] + run[1]) // 2, f"{where}: run", warn))
    th["sleep0"] = _us((sleep[0] + sleep[1]) // 2, f"{where}: sleep", warn)
    return th


def to_rtapp(ts, backend: str, warn, pi: bool = False) -> dict:
    """An rt-app JSON document (a dict) running the task set ``ts`` under ``backend``:
    ``kernel:fifo`` (``:file`` if every task has a priority, else ``:rm``), ``kernel:fifo:rm``,
    ``kernel:fifo:dm``, ``kernel:fifo:file``, ``kernel:deadline``, or ``kernel:linux`` (each
    task under its own Linux policy: SCHED_DEADLINE with its ``runtime``, SCHED_FIFO/RR with
    its priority, SCHED_OTHER with its nice; best-effort tasks as SCHED_OTHER threads)."""
    from .._core import linux_runtimes, sched_deadline_runtimes

    src = ts.source
    tasks = ts.tasks()
    parts = backend.split(":")
    if parts[0] != "kernel" or len(parts) < 2 or parts[1] not in ("fifo", "deadline", "linux") or len(parts) > 3 \
            or (parts[1] == "fifo" and len(parts) == 3 and parts[2] not in ("rm", "dm", "file")) \
            or (parts[1] in ("deadline", "linux") and len(parts) == 3):
        raise InputError(f"--backend: '{backend}': expected kernel:fifo, kernel:fifo:rm, kernel:fifo:dm, kernel:fifo:file, "
                         "kernel:deadline or kernel:linux")
    if ts.has_fair_tasks and parts[1] != "linux":
        raise InputError(f"{src}: best-effort tasks (class: fair) have no rt-app period: remove them before exporting, "
                         "or export with --backend kernel:linux (a SCHED_OTHER thread each)")
    if parts[1] == "fifo":
        mode = parts[2] if len(parts) == 3 else ("file" if all(t["priority"] is not None for t in tasks) else "rm")
        if mode == "file":
            missing = next((t for t in tasks if t["priority"] is None), None)
            if missing:
                raise InputError(f"{src}: task '{missing['name']}': field 'priority': missing, and kernel:fifo:file needs every task's priority")
            prio = [t["priority"] for t in tasks]
            if not all(1 <= p <= 99 for p in prio):
                prio = fifo_levels(prio)
                warn(f"{src}: priorities outside SCHED_FIFO's 1…99: mapped to {prio} in the same order, as 'rtsched run -b kernel:fifo:file' maps them")
        else:
            prio = fifo_levels(_monotonic(tasks, "period_ns" if mode == "rm" else "deadline_ns"))
    if ts.has_tufs:
        warn(f"{src}: time-utility functions have no rt-app meaning: not exported")
    # kernel:deadline's rule (WCET plus an allowance), or each task's own reservation.
    runtimes = linux_runtimes(ts) if parts[1] == "linux" else sched_deadline_runtimes(ts)
    out_tasks = {}
    for i, t in enumerate(tasks):
        where = f"{src}: task '{t['name']}'"
        if t["fair"]:
            out_tasks[t["name"]] = _fair_thread(t, where, warn)
            continue
        if t["max_interarrival_ns"] is not None:
            raise InputError(f"{where}: field 'max_interarrival': random inter-arrival times have no rt-app timer")
        lanes = _lanes(t, where, warn)
        if len(lanes) > 1:
            warn(f"{where}: a fork-join task: exported as {len(lanes)} threads '{t['name']}.0'… joined by barriers "
                 "after each region (rt-app 1.0 has no fork; 'convert' does not read such a file back)")
        for k, events in enumerate(lanes):
            th = {}
            if parts[1] == "linux":
                _linux_policy(th, t, runtimes[i][k] if runtimes[i] else None, where, warn)
            elif parts[1] == "fifo":
                th["policy"] = "SCHED_FIFO"
                th["priority"] = prio[i]
                if t["deadline_ns"] != t["period_ns"]:
                    # rt-app ignores dl-* under SCHED_FIFO: the deadline kept for the way back.
                    th["dl-deadline"] = _us(t["deadline_ns"], f"{where}: deadline", warn)
            else:
                th["policy"] = "SCHED_DEADLINE"
                th["dl-runtime"] = min(math.ceil(runtimes[i][k] * RTAPP_RUN_ERROR / 1000), _us(t["deadline_ns"], f"{where}: deadline", warn))
                th["dl-period"] = _us(t["period_ns"], f"{where}: period", warn)
                th["dl-deadline"] = _us(t["deadline_ns"], f"{where}: deadline", warn)  # rt-app 1.0 needs it given
            if t["cpu"] is not None:
                th["cpus"] = [t["cpu"]]
            if t["offset_ns"]:
                th["delay"] = _us(t["offset_ns"], f"{where}: offset", warn)
            th.update(events)
            th["timer0"] = {"ref": "unique", "period": _us(t["period_ns"], f"{where}: period", warn)}
            tname = t["name"] if len(lanes) == 1 else f"{t['name']}.{k}"
            if tname in out_tasks:
                raise InputError(f"{where}: its rt-app thread '{tname}' has the name of another task's thread: rename one")
            out_tasks[tname] = th
    dur_s = ts.duration_ns / 1e9
    if not dur_s.is_integer():
        warn(f"{src}: run duration {ts.duration_ns / 1e6:g} ms: rt-app counts whole seconds, written as {math.ceil(dur_s)} s")
    glob = {"duration": max(1, math.ceil(dur_s)), "default_policy": "SCHED_OTHER", "calibration": "CPU0", "pi_enabled": bool(pi),
            "lock_pages": True, "logdir": "./", "log_basename": "rt-app"}
    return {"global": glob, "tasks": out_tasks}


def _linux_policy(th, t, lane_runtime_ns, where, warn):
    """The thread's own Linux policy (``kernel:linux``): SCHED_DEADLINE with its lane's
    runtime (``_core.linux_runtimes``: the task's ``runtime``, else its WCET; a parallel task's
    lane, the lane's work), SCHED_FIFO/RR with its priority, SCHED_OTHER with its nice."""
    policy = t["sched_policy"]
    th["policy"] = RTAPP_POLICY[policy]
    if policy == "deadline":
        th["dl-runtime"] = math.ceil(lane_runtime_ns / 1000)
        th["dl-period"] = _us(t["period_ns"], f"{where}: period", warn)
        th["dl-deadline"] = _us(t["deadline_ns"], f"{where}: deadline", warn)
    elif policy in ("fifo", "rr"):
        th["priority"] = t["priority"]
        if t["deadline_ns"] != t["period_ns"]:
            th["dl-deadline"] = _us(t["deadline_ns"], f"{where}: deadline", warn)
    else:
        if t["nice"]:
            th["nice"] = t["nice"]
        if t["deadline_ns"] != t["period_ns"]:
            th["dl-deadline"] = _us(t["deadline_ns"], f"{where}: deadline", warn)


# ----------------------------------------------------------------------------- rt-app's log

#: Columns of rt-app's per-thread log (one row per loop of the thread's phases; µs except
#: start/end, which are ns of CLOCK_MONOTONIC): rt-app 1.0's and upstream's first columns.
LOG_COLUMNS = ("idx", "perf", "run", "period", "start", "end", "rel_st", "slack", "c_duration", "c_period", "wu_lat")


def read_log(path) -> dict:
    """rt-app's log of one thread (``LOGDIR/BASENAME-THREAD-INDEX.log``, written when
    ``global.logdir`` is set): ``{"policy": the header's policy line, "rows": [{column: int}]}``,
    one row per activation (``run``: µs spent in the run events; ``period``: µs from the
    activation's start to its end, timer wait included; ``c_duration``/``c_period``: the
    configured run and timer period)."""
    rows, policy = [], None
    with open(path) as f:
        for line in f:
            if line.startswith("# Policy"):
                policy = line[1:].strip()
                continue
            if line.startswith("#") or not line.strip():
                continue
            vals = line.split()
            try:
                rows.append({k: int(v) for k, v in zip(LOG_COLUMNS, vals)})
            except ValueError:
                raise InputError(f"{path}: not an rt-app log row: {line.strip()[:80]!r}") from None
    return {"policy": policy, "rows": rows}
