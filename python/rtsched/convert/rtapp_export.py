"""rt-app JSON out: ``rtsched convert --to rt-app`` (docs/workloads.md "From and to rt-app").

Writing: one thread per task, ``run`` events split around ``lock``/``unlock`` for the
critical sections, a ``timer`` with the period, and the policy of the chosen real backend
(``kernel:fifo[:rm|:dm|:file]`` → SCHED_FIFO priorities, ``kernel:deadline`` → SCHED_DEADLINE
reservations with rtsched's own runtime rule). A fork-join task becomes one thread per lane joined by
barriers after each region. An event-triggered task is a thread without a timer that
``suspend``s until the threads of its triggers ``resume`` it at the end of their jobs (a join
suspends once per trigger); a self-suspending task ``sleep``s between its run segments; an
event chain is the suspend/resume events of its tasks (rt-app has no chain object). Reading
rt-app files is :mod:`rtsched.convert.rtapp`.
"""

from __future__ import annotations

import math

from .._core import InputError
from ..durations import words
from .rtapp import RTAPP_POLICY

#: rt-app's ``run`` is a busy loop whose count is calibrated once, at rt-app's start (``pLoad``,
#: ns per loop): on this 2-vCPU VM a 3 ms ``run`` lasted 15–27 % longer than asked on a quiet
#: machine (and shorter or longer by more while others ran), so a SCHED_DEADLINE reservation of
#: rtsched's own size (the work + 10 %) was overrun and the CBS throttled the thread, stretching
#: its period (``update_curr_dl`` → ``dl_runtime_exceeded``). The exported ``dl-runtime`` is
#: rtsched's reservation times this factor (capped at the deadline), so rt-app's own error fits
#: in it. With ``work="runtime"`` (rt-app's ``runtime`` event, in rt-app since 1.0: it loops
#: until that much CLOCK_MONOTONIC time has passed, rt-app/src/rt-app.c ``rtapp_runtime``) the
#: CPU time a job takes is at most its wall time, so the reservation is rtsched's own.
RTAPP_RUN_ERROR = 1.3

#: How a job's work is written: ``run`` (rt-app's calibrated loop count: the same work whether
#: or not the thread is preempted, but its length moves with rt-app's once-per-start calibration,
#: −15 %…+48 % here) or ``runtime`` (wall time: the length asked for, to rt-app's 32 µs loop
#: step, but time the thread spends preempted counts as done; exact for a thread that is never
#: preempted). rt-app/doc/tutorial.txt describes both events.
WORK_EVENTS = ("run", "runtime")


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


def _suspension_us(lo_hi, where, warn) -> int:
    """A self-suspension as rt-app's ``sleep`` (one length): a range is written as its mean."""
    lo, hi = lo_hi
    if lo != hi:
        warn(f"{where}: a suspension of {words(lo)}..{words(hi)} drawn per job has no rt-app form: "
             f"written as its mean, a sleep of {words((lo + hi) // 2)}")
    return _us((lo + hi) // 2, f"{where}: suspension", warn)


def _lanes(t, where, warn, waits=(), wakes=()):
    """The rt-app threads of one task, as lists of events before the timer: one for a
    sequential task; for a fork-join task one per lane (lane k runs thread k of every region
    that has one, as ``rtsched run`` places them), each region closed by a barrier that
    every lane reaches (rt-app counts a barrier's users by its references).

    A self-suspending task's run segments are its regions, one thread each, with a ``sleep``
    for each suspension between them (a sleep leaves the CPU for that long, as a suspension
    does). ``waits``: the names its first lane ``suspend``s on in turn before its work (an
    event-triggered task: one per trigger, so a join waits for each); ``wakes``: the names its
    first lane ``resume``s once the whole job is done (the tasks it triggers); a fork-join
    task's other lanes start at a barrier after the waits."""
    if t.get("dag"):
        raise InputError(f"{where}: a DAG task (field 'dag') has no rt-app form: rt-app's barriers join every lane, "
                         f"so only fork-join regions convert (docs/dag.md)")
    regions = t["regions"] or [[t["wcet_ns"]]]
    suspensions = t.get("suspensions") or []
    width = max(len(r) for r in regions)
    lanes = []
    for k in range(width):
        ev = _Events()
        if k == 0:
            for name in waits:
                ev.add("suspend", name)
        if waits and width > 1:
            ev.add("barrier", f"{t['name']}-release")
        for ri, threads in enumerate(regions):
            if k < len(threads):
                secs = [s for s in t["sections"] if s["region"] == ri and s["thread"] == k]
                _work_events(ev, threads[k], secs, where, warn)
            if width > 1:
                ev.add("barrier", f"{t['name']}-join{ri}")
            if ri < len(suspensions):
                ev.add("sleep", _suspension_us(suspensions[ri], where, warn))
        if k == 0:
            for name in wakes:
                ev.add("resume", name)
        lanes.append(ev.items)
    return lanes


def _triggers(tasks, where_of, warn):
    """rt-app's ``suspend``/``resume`` names of the set's triggers: (waits, wakes) per task
    name. A task triggered by one task suspends on its own name (rt-app's convention, as its
    tutorial writes it) and that task resumes it after each job; a join (``trigger: {all:
    [A, B]}``) suspends on ``NAME-A`` and then ``NAME-B``, each resumed by its task.

    rt-app's ``resume`` is a condition variable's broadcast (``pthread_cond_broadcast``): it
    wakes a thread already suspended and is lost otherwise, where an rtsched trigger releases
    a job whenever its task finishes one. The export therefore runs as the model says while a
    triggered thread is back in ``suspend`` before its trigger's next job ends (a pipeline whose
    stages keep up with its head); a join waits for its triggers in file order, so a job of B
    that ends before A's is lost."""
    waits = {t["name"]: [] for t in tasks}
    wakes = {t["name"]: [] for t in tasks}
    for t in tasks:
        g = t.get("trigger")
        if not g:
            continue
        names = [t["name"]] if len(g["tasks"]) == 1 else [f"{t['name']}-{a}" for a in g["tasks"]]
        for a, n in zip(g["tasks"], names):
            waits[t["name"]].append(n)
            wakes[a].append(n)
    if any(waits.values()):
        warn(f"{where_of}: triggers written as rt-app suspend/resume: a resume wakes a thread only while it is "
             "suspended (rt-app has no counting event), so a triggered thread that is still busy when its trigger "
             "ends a job misses that job (docs/workloads.md, \"Triggers, suspensions and chains in rt-app\")")
    return waits, wakes


def _chains_note(ts, warn):
    """Chains have no rt-app object: an event chain is its tasks' triggers (written as
    suspend/resume); a data-flow chain's registers and an end-to-end deadline are not written."""
    for c in ts.chains():
        where = f"{ts.source}: chain '{c['name']}'"
        if c["communication"]:
            warn(f"{where}: a data-flow chain ({c['communication']}) has no rt-app form: its tasks are exported, "
                 "the registers between them are not")
        elif c["deadline_ns"] is not None:
            warn(f"{where}: rt-app has no end-to-end deadline: not exported (the chain is its tasks' "
                 "suspend/resume events)")


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


def to_rtapp(ts, backend: str, warn, pi: bool = False, work: str = "run") -> dict:
    """An rt-app JSON document (a dict) running the task set ``ts`` under ``backend``:
    ``kernel:fifo`` (``:file`` if every task has a priority, else ``:rm``), ``kernel:fifo:rm``,
    ``kernel:fifo:dm``, ``kernel:fifo:file``, ``kernel:deadline``, or ``kernel:linux`` (each
    task under its own Linux policy: SCHED_DEADLINE with its ``runtime``, SCHED_FIFO/RR with
    its priority, SCHED_OTHER with its nice; best-effort tasks as SCHED_OTHER threads).
    ``work``: one of ``WORK_EVENTS``, the rt-app event a job's work is written as."""
    from .._core import linux_runtimes, sched_deadline_runtimes

    if work not in WORK_EVENTS:
        raise InputError(f"--work: '{work}': expected one of {', '.join(WORK_EVENTS)}")

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
    waits, wakes = _triggers(tasks, src, warn)
    _chains_note(ts, warn)
    out_tasks = {}
    for i, t in enumerate(tasks):
        where = f"{src}: task '{t['name']}'"
        if t["fair"]:
            out_tasks[t["name"]] = _fair_thread(t, where, warn)
            continue
        if t["max_interarrival_ns"] is not None:
            raise InputError(f"{where}: field 'max_interarrival': random inter-arrival times have no rt-app timer")
        lanes = _lanes(t, where, warn, waits[t["name"]], wakes[t["name"]])
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
                factor = RTAPP_RUN_ERROR if work == "run" else 1.0
                th["dl-runtime"] = min(math.ceil(runtimes[i][k] * factor / 1000), _us(t["deadline_ns"], f"{where}: deadline", warn))
                th["dl-period"] = _us(t["period_ns"], f"{where}: period", warn)
                th["dl-deadline"] = _us(t["deadline_ns"], f"{where}: deadline", warn)  # rt-app 1.0 needs it given
            if t["cpu"] is not None:
                th["cpus"] = [t["cpu"]]
            if t["offset_ns"]:
                th["delay"] = _us(t["offset_ns"], f"{where}: offset", warn)
            th.update(events)
            if not t.get("trigger"):  # a triggered thread is released by its resume, not a timer
                th["timer0"] = {"ref": "unique", "period": _us(t["period_ns"], f"{where}: period", warn)}
            tname = t["name"] if len(lanes) == 1 else f"{t['name']}.{k}"
            if tname in out_tasks:
                raise InputError(f"{where}: its rt-app thread '{tname}' has the name of another task's thread: rename one")
            out_tasks[tname] = th
    dur_s = ts.duration_ns / 1e9
    if not dur_s.is_integer():
        warn(f"{src}: run duration {words(ts.duration_ns)}: rt-app counts whole seconds, written as {math.ceil(dur_s)} s")
    glob = {"duration": max(1, math.ceil(dur_s)), "default_policy": "SCHED_OTHER", "calibration": "CPU0", "pi_enabled": bool(pi),
            "lock_pages": True, "logdir": "./", "log_basename": "rt-app"}
    if work == "runtime":
        out_tasks = {name: _as_runtime(th) for name, th in out_tasks.items()}
    return {"global": glob, "tasks": out_tasks}


def _as_runtime(th: dict) -> dict:
    """The thread with each ``runN`` event written as rt-app's ``runtimeN`` (same value, in
    order; ``runtime`` without a number would be read as the thread's ``dl-runtime``)."""
    return {(f"runtime{key[3:]}" if key[:3] == "run" and key[3:].isdigit() else key): v for key, v in th.items()}


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
