"""Record a running application into a task set (`rtsched record`, issue #39).

Three parts, each usable alone:

- **Parsing** (:func:`parse_trace`): the text of the kernel's scheduler tracepoints, as tracefs'
  ``trace_pipe`` prints it or as ``trace-cmd report`` prints a ``.dat`` file (raw ``-R`` fields
  or trace-cmd's plugin format), into :class:`Event` records.
- **Extraction** (:func:`extract`): per thread, activations (a wakeup, then CPU time until the
  thread next sleeps), and from them a periodic or a sporadic task with its fit
  (:class:`ThreadFit`); who woke each activation (``sched_wakeup``'s ``common_pid``, the
  thread running when the kernel woke it: the waker of ``try_to_wake_up``), and from that the
  threads another thread's activations release (``trigger:``) and the pipelines they form
  (:func:`find_triggers`, :func:`pipelines`).
- **Recording** (:func:`record_live`, :func:`report_dat`): running a command under a tracefs
  instance of its own, or reading a ``.dat`` file through ``trace-cmd report``.

docs/workloads.md ("Recording a running application") gives the rules with a worked example.
"""

from __future__ import annotations

import json
import math
import os
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

from . import _core
from ._core import InputError, PrivilegeError
from .durations import in_unit

#: The tracepoints enabled (system sched).
EVENTS = ("sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_process_fork", "sched_process_exit")

# ---------------------------------------------------------------------------------------------
# Parsing

_HEAD = re.compile(
    r"^(?P<head>.*)-(?P<pid>\d+)\s+(?:\(\s*[\d-]+\)\s+)?"
    # "[001] d..2." (tracefs, trace-cmd report) or "1-0x1" (trace-cmd report -l: CPU-flags)
    r"(?:\[(?P<cpu>\d+)\]\s+(?:(?P<flags>[^\s\[\]]{4,6})\s+)?|(?P<lcpu>\d+)-0x(?P<hex>[0-9a-fA-F]+)\s+)"
    r"(?P<secs>\d+)\.(?P<frac>\d+):\s+(?P<event>\w+):\s*(?P<rest>.*?)\s*$")
_LOST = re.compile(r"CPU:\s*(\d+)\s+\[LOST\s+(\d+)\s+EVENTS\]")
_SWITCH = [
    # tracefs (print fmt, with ==>) and trace-cmd report -R (raw fields, numeric prev_state)
    re.compile(r"^prev_comm=(?P<pc>.*) prev_pid=(?P<pp>-?\d+) prev_prio=(?P<ppr>-?\d+) prev_state=(?P<st>\S+)"
               r"(?: ==>)? next_comm=(?P<nc>.*) next_pid=(?P<np>-?\d+) next_prio=(?P<npr>-?\d+)$"),
    # trace-cmd's sched_switch plugin: "bash:19325 [120] S ==> swapper/0:0 [120]"
    re.compile(r"^(?P<pc>.*):(?P<pp>-?\d+) \[(?P<ppr>-?\d+)\] (?P<st>\S+) ==> (?P<nc>.*):(?P<np>-?\d+) \[(?P<npr>-?\d+)\]$"),
]
_WAKEUP = [
    re.compile(r"^comm=(?P<c>.*) pid=(?P<p>-?\d+) prio=(?P<pr>-?\d+)(?: success=\d+)? target_cpu=(?P<t>\d+)$"),
    re.compile(r"^(?P<c>.*):(?P<p>-?\d+) \[(?P<pr>-?\d+)\](?: success=\d+)? CPU:(?P<t>\d+)$"),
]
_FORK = re.compile(r"^(?:parent_)?comm=(?P<c>.*) (?:parent_)?pid=(?P<p>-?\d+) child_comm=(?P<cc>.*) child_pid=(?P<cp>-?\d+)")
_EXIT = re.compile(r"^comm=(?P<c>.*) pid=(?P<p>-?\d+) prio=(?P<pr>-?\d+)")


@dataclass
class Event:
    """One tracepoint record. ``kind`` is "switch", "wakeup" (sched_wakeup and
    sched_wakeup_new: ``new`` tells which), "fork" or "exit"; times in ns."""

    ts: int
    cpu: int
    kind: str
    pid: int = 0          # switch: prev_pid; wakeup/exit: the thread; fork: the parent
    comm: str = ""
    prio: int = 0
    next_pid: int = 0     # switch only
    next_comm: str = ""
    next_prio: int = 0
    sleeping: bool = False  # switch: prev left the CPU to sleep (not preempted)
    exiting: bool = False   # switch: prev left the CPU dead (X/Z)
    child: int = 0        # fork only
    new: bool = False     # sched_wakeup_new
    waker: int | None = None  # wakeup: the thread that woke it (None: unknown, see waker_of)


#: trace-cmd report -l's flag bits (the kernel's ``enum trace_flag_type``): hard interrupt,
#: soft interrupt, NMI.
_IRQ_BITS = 0x08 | 0x10 | 0x40


def _hex_flags(hexflags: str | None) -> str | None:
    """trace-cmd report -l's numeric flags as the letter that matters here: "h" when the
    record was made in interrupt context, "." otherwise (None: no flags)."""
    if hexflags is None:
        return None
    return "h" if int(hexflags, 16) & _IRQ_BITS else "."


#: How long before its sched_wakeup a sched_waking of the same thread still names its waker.
WAKING_NS = 1_000_000


def waker_of(pid: int, flags: str | None) -> int | None:
    """The waker of a sched_wakeup record: the event's ``common_pid`` (the thread on the CPU
    when the kernel woke the thread, in ``try_to_wake_up``), unless that is the idle task (a
    wake-up queued to an idle CPU's wake list is traced there, by the IPI, not by its waker)
    or the record was made in interrupt context (latency flags ``h``/``H``/``s``, or
    ``report -l``'s bits: a timer or a device woke it, not the thread it interrupted). A
    trace-cmd ``report`` without ``-l`` prints no flags: its records are taken at their
    ``common_pid``."""
    if pid == 0 or (flags and any(c in flags for c in "hHs")):
        return None
    return pid


def state_sleeps(state: str) -> tuple[bool, bool]:
    """(sleeping, exiting) of a sched_switch prev_state: a number (trace-cmd report -R, the
    kernel's TASK_REPORT bits: 0 and 0x100 = preempted, running) or letters (tracefs: "R",
    "R+", "S", "D", "D|K", …)."""
    s = state.strip()
    if re.fullmatch(r"-?\d+|0x[0-9a-fA-F]+", s):
        v = int(s, 0) & 0xFF
        return v != 0, bool(v & 0x30)
    letters = s.rstrip("+")
    sleeping = letters not in ("", "R")
    return sleeping, sleeping and any(c in letters for c in "XZ")


@dataclass
class Trace:
    events: list = field(default_factory=list)
    lost: int = 0          # events the kernel reported lost ([LOST n EVENTS] lines, overruns)
    lines: int = 0
    unparsed: int = 0      # lines of a traced event that did not parse
    cpus: int | None = None  # "cpus=N" of trace-cmd report


def parse_trace(text_or_lines) -> Trace:
    """Parse tracepoint text (tracefs trace/trace_pipe, or trace-cmd report with or without
    -R/-t). Events other than the six traced ones, and other lines, are skipped; records of a
    traced event that do not parse are counted in ``unparsed``. Events come out in time order."""
    lines = text_or_lines.splitlines() if isinstance(text_or_lines, str) else text_or_lines
    tr = Trace()
    # sched_waking is traced by the waker (try_to_wake_up's start, on the waker's CPU); the
    # sched_wakeup that follows is traced where the wakee is woken, which for a wake-up
    # queued to an idle CPU's wake list is that CPU's IPI, not the waker: the waker of a
    # wake-up is its sched_waking's when one came within WAKING_NS before it.
    waking: dict[int, tuple[int, int | None]] = {}
    for line in lines:
        tr.lines += 1
        if line.startswith("cpus="):
            try:
                tr.cpus = int(line[5:].strip())
            except ValueError:
                pass
            continue
        m = _LOST.search(line)
        if m and not _HEAD.match(line):
            tr.lost += int(m.group(2))
            continue
        m = _HEAD.match(line)
        if not m or m.group("event") not in EVENTS:
            continue
        ts = int(m.group("secs")) * 1_000_000_000 + int(m.group("frac").ljust(9, "0")[:9])
        cpu, ev, rest = int(m.group("cpu") or m.group("lcpu")), m.group("event"), m.group("rest")
        e = None
        if ev == "sched_switch":
            f = next((x for x in (r.match(rest) for r in _SWITCH) if x), None)
            if f:
                sl, ex = state_sleeps(f.group("st"))
                e = Event(ts, cpu, "switch", int(f.group("pp")), f.group("pc"), int(f.group("ppr")),
                          int(f.group("np")), f.group("nc"), int(f.group("npr")), sl, ex)
        elif ev == "sched_waking":
            f = next((x for x in (r.match(rest) for r in _WAKEUP) if x), None)
            if f:
                waking[int(f.group("p"))] = (ts, waker_of(int(m.group("pid")), m.group("flags") or _hex_flags(m.group("hex"))))
                continue
        elif ev in ("sched_wakeup", "sched_wakeup_new"):
            f = next((x for x in (r.match(rest) for r in _WAKEUP) if x), None)
            if f:
                pid = int(f.group("p"))
                w = waking.pop(pid, None)
                waker = (w[1] if w is not None and 0 <= ts - w[0] <= WAKING_NS
                         else waker_of(int(m.group("pid")), m.group("flags") or _hex_flags(m.group("hex"))))
                e = Event(ts, cpu, "wakeup", pid, f.group("c"), int(f.group("pr")), new=ev == "sched_wakeup_new", waker=waker)
        elif ev == "sched_process_fork":
            f = _FORK.match(rest)
            if f:
                e = Event(ts, cpu, "fork", int(f.group("p")), f.group("cc"), child=int(f.group("cp")))
        else:
            f = _EXIT.match(rest)
            if f:
                e = Event(ts, cpu, "exit", int(f.group("p")), f.group("c"), int(f.group("pr")))
        if e is None:
            tr.unparsed += 1
        else:
            tr.events.append(e)
    tr.events.sort(key=lambda e: e.ts)  # stable: same-time events keep their order
    return tr


# ---------------------------------------------------------------------------------------------
# Extraction


@dataclass
class Activation:
    wakeup: int     # ns: the sched_wakeup (the release)
    cpu_ns: int     # CPU time from the wakeup until the thread next slept
    end: int        # ns: the switch-out to sleep
    inferred: int = 0  # run intervals whose switch-in was missing (counted from the wakeup or last switch-out)
    waker: int | None = None  # the thread whose wake-up started it (None: a timer, an interrupt, unknown)
    wakers: tuple = ()  # every thread that woke it from its start to its end, in order (the first is ``waker``)


@dataclass
class ThreadFit:
    """One thread's activations and the task made of them (``kind`` None: too few)."""

    tid: int
    comm: str
    prio: int | None
    activations: list
    kind: str | None = None          # "periodic", "sporadic" or None (not made a task)
    why: str = ""                    # why not a task, or how it was classed
    period: int = 0                  # periodic: median inter-activation time
    min_interarrival: int = 0
    max_interarrival: int = 0
    trigger: int | None = None       # the tid of the task whose activations release this one (find_triggers)
    waker: int | None = None         # the thread that woke most of its activations
    waker_share: float = 0.0         # the share of its activations that thread woke (of its jobs, with segments)
    segments: list = field(default_factory=list)  # a thread that suspends in its jobs: [run, (lo, hi), run, ...] in ns
    join: list = field(default_factory=list)      # a join (trigger: {all: [...]}): the tids it waits for
    join_wcet: int = 0                            # a join's WCET: the percentile of its jobs' CPU time
    alternatives: list = field(default_factory=list)  # [(tid, share), ...]: woken by one of several, no join (_alternatives)
    in_tolerance: float = 0.0        # share of inter-activation times within ±tol of the median
    jitter: int = 0                  # p95 (nearest rank) of |inter-activation time − median|
    wcet: int = 0                    # the percentile of per-activation CPU time
    exec_min: int = 0
    exec_median: int = 0
    exec_max: int = 0
    name: str = ""

    @property
    def inferred(self) -> int:
        """Run intervals of its activations whose switch-in was not in the trace."""
        return sum(a.inferred for a in self.activations)

    @property
    def policy(self) -> str:
        """From the kernel's prio: < 0 SCHED_DEADLINE, < 100 SCHED_FIFO/RR, else SCHED_OTHER."""
        if self.prio is None:
            return "?"
        return "deadline" if self.prio < 0 else "fifo/rr" if self.prio < 100 else "other"

    @property
    def rt_priority(self) -> int | None:
        """SCHED_FIFO/RR priority (1…99, larger is more urgent) = 99 − the kernel's prio."""
        return 99 - self.prio if self.prio is not None and 0 <= self.prio < 100 else None


def percentile(values, p: float) -> int:
    """Nearest-rank percentile: the ceil(p/100 · n)-th smallest value (a measured value)."""
    s = sorted(values)
    k = max(1, math.ceil(p / 100 * len(s)))
    return s[min(k, len(s)) - 1]


def activations(events, threads=None) -> dict:
    """Per thread id: [comm, prio, [Activation…]]. ``threads``: the tids to follow (None:
    every thread but the idle task 0). An activation starts at a wakeup of a sleeping thread
    and ends when it switches out sleeping; its CPU time is the sum of its run intervals (one
    whose switch-in is missing from the trace runs from the wakeup or the thread's previous
    switch-out, counted in ``Activation.inferred``). A
    thread already running when the trace starts, an activation still open at its end and one
    ended by the thread's exit are left out. The prio is the one most of the thread's events
    carry."""
    st: dict = {}  # tid -> dict(state, act_start, cpu, run_since, comm, prio, acts)

    def th(tid, comm=None, prio=None):
        t = st.get(tid)
        if t is None:
            t = st[tid] = {"state": "unknown", "start": None, "cpu": 0, "since": None, "off": None, "inferred": 0, "waker": None,
                           "wakers": [], "comm": comm or "", "prio": Counter(), "acts": []}
        if comm:
            t["comm"] = comm
        if prio is not None:
            t["prio"][prio] += 1
        return t

    def followed(tid):
        return tid != 0 and (threads is None or tid in threads)

    for e in events:
        if e.kind == "switch":
            if followed(e.pid):
                t = th(e.pid, e.comm, e.prio)
                if t["since"] is not None:
                    t["cpu"] += e.ts - t["since"]
                elif t["state"] == "active" and t["off"] is not None:
                    # Its switch-in was not recorded (this VM's kernel drops the idle task's
                    # switches on some CPUs): it ran from its wakeup or its last switch-out.
                    t["cpu"] += e.ts - t["off"]
                    t["inferred"] += 1
                t["since"], t["off"] = None, e.ts
                if e.sleeping:
                    if t["state"] == "active" and not e.exiting:
                        t["acts"].append(Activation(t["start"], t["cpu"], e.ts, t["inferred"], t["waker"], tuple(t["wakers"])))
                    t["state"], t["start"], t["cpu"], t["off"], t["inferred"] = "sleeping", None, 0, None, 0
            if followed(e.next_pid):
                t = th(e.next_pid, e.next_comm, e.next_prio)
                t["since"] = e.ts
                if t["state"] == "unknown":
                    t["state"] = "partial"  # running before the trace: its first activation is unknown
        elif e.kind == "wakeup":
            if followed(e.pid):
                t = th(e.pid, e.comm, e.prio)
                if t["state"] in ("sleeping", "unknown"):
                    # A switch-in already seen (CPU clocks a few us apart) counts from the wakeup.
                    t["state"], t["start"], t["cpu"], t["off"], t["inferred"] = "active", e.ts, 0, e.ts, 0
                    t["waker"], t["wakers"] = e.waker, [] if e.waker is None else [e.waker]
                    if t["since"] is not None:
                        t["since"] = max(t["since"], e.ts)
                elif t["state"] == "active" and e.waker is not None and e.waker != e.pid:
                    # Woken again before it slept (it had not reached schedule(), or was on its
                    # way there): the same activation, which both wake-ups are behind.
                    t["wakers"].append(e.waker)
        elif e.kind == "exit":
            if followed(e.pid):
                th(e.pid, e.comm, e.prio)
    # The thread's prio: the one of most of its events (a thread sets its policy after it
    # starts, a PI boost lends another for a while).
    return {tid: [t["comm"], t["prio"].most_common(1)[0][0] if t["prio"] else None, t["acts"]] for tid, t in st.items()}


def process_tree(events, roots) -> set:
    """The thread ids of ``roots`` and of everything they forked or cloned (fork events in time
    order)."""
    tree = set(roots)
    for e in events:
        if e.kind == "fork" and e.pid in tree:
            tree.add(e.child)
    return tree


def fit_thread(tid, comm, prio, acts, percentile_p=99.0, tolerance=0.10, min_activations=3) -> ThreadFit:
    """Class one thread's activations: periodic when at least 90 % of its inter-activation
    times lie within ±``tolerance`` of their median (the period), else sporadic with its
    minimum inter-activation time. WCET: the ``percentile_p`` nearest-rank percentile of the
    per-activation CPU times."""
    f = ThreadFit(tid, comm, prio, list(acts))
    n = len(acts)
    if n < min_activations:
        f.why = f"{n} complete activation{'s' if n != 1 else ''} (fewer than {min_activations})"
        return f
    cpu = [a.cpu_ns for a in acts]
    inter = [b.wakeup - a.wakeup for a, b in zip(acts, acts[1:])]
    med = round(statistics.median(inter))
    f.exec_min, f.exec_max = min(cpu), max(cpu)
    f.exec_median = round(statistics.median(cpu))
    f.wcet = max(1, percentile(cpu, percentile_p))
    f.min_interarrival, f.max_interarrival = min(inter), max(inter)
    f.jitter = percentile([abs(d - med) for d in inter], 95)
    f.in_tolerance = sum(abs(d - med) <= tolerance * med for d in inter) / len(inter)
    if med > 0 and f.in_tolerance >= 0.9:
        f.kind, f.period = "periodic", med
        f.why = f"{f.in_tolerance:.0%} of inter-activation times within ±{tolerance:.0%} of the median"
    else:
        f.kind = "sporadic"
        f.why = f"only {f.in_tolerance:.0%} of inter-activation times within ±{tolerance:.0%} of the median"
    return f


#: The most activations per job :func:`_periodic_suspending` looks for (runs per job).
MAX_RUNS_PER_JOB = 4


def _periodic_suspending(f, tolerance=0.10, share=None, percentile_p=99.0):
    """A timer-driven thread that runs, sleeps and runs again within one period (rt-app's
    ``run``, ``sleep``, ``run`` before its ``timer``; docs/chains.md "Self-suspension"): k ≥ 2
    activations per job, each woken by a timer (no thread). Tried when the activations alone
    are not periodic and at least ``share`` (``TRIGGER_SHARE``) of them no thread woke: for k
    = 2 … ``MAX_RUNS_PER_JOB`` (the fewest first) and each way of cutting the activations into
    consecutive groups of k (the first group starting at activation 0 … k − 1), taken when 3
    groups or more have starts periodic as :func:`fit_thread` reads a period (90 % of their
    inter-start times within ±``tolerance`` of the median) and, at each position i within the
    group, the time from run i − 1's wake-up to run i's within ±``tolerance`` of the period of
    its median in 90 % of them, and every suspension inside a job shorter than every idle
    time between two jobs; of the cuts that pass, the one whose jobs span least (from a job's
    first wake-up to its last sleep: the longest idle is between periods, not inside a job). Then the thread is periodic with ``segments`` (run i: the ``percentile_p`` of its CPU
    time; suspension i: the range of run i's sleep to run i + 1's wake-up), its WCET their
    sum, its exec and arrival statistics per job. A thread whose job suspends for longer than
    it idles between periods is read with its runs rotated (the trace cannot tell which of
    the wake-ups is the period's)."""
    share = TRIGGER_SHARE if share is None else share
    acts = f.activations
    if f.kind is None or f.kind == "periodic" or sum(a.waker is None for a in acts) < share * len(acts):
        return
    best = None
    for k in range(2, MAX_RUNS_PER_JOB + 1):
        for off in range(k):
            jobs = [acts[i:i + k] for i in range(off, len(acts) - k + 1, k)]
            if len(jobs) < 3:
                continue
            inter = [b[0].wakeup - a[0].wakeup for a, b in zip(jobs, jobs[1:])]
            med = round(statistics.median(inter))
            if med <= 0 or sum(abs(d - med) <= tolerance * med for d in inter) < 0.9 * len(inter):
                continue
            steady = True
            for i in range(1, k):
                d = [j[i].wakeup - j[i - 1].wakeup for j in jobs]
                m = statistics.median(d)
                steady &= sum(abs(x - m) <= tolerance * med for x in d) >= 0.9 * len(d)
            span = statistics.median(j[-1].end - j[0].wakeup for j in jobs)
            inside = max(b.wakeup - a.end for j in jobs for a, b in zip(j, j[1:]))
            between = min(b[0].wakeup - a[-1].end for a, b in zip(jobs, jobs[1:]))
            if steady and inside < between and (best is None or span < best[0]):
                best = (span, jobs, inter, med)
        if best:
            break
    if best is None:
        return
    _, jobs, inter, med = best
    k = len(jobs[0])
    f.segments = []
    for i in range(k):
        if i:
            gaps = [j[i].wakeup - j[i - 1].end for j in jobs]
            f.segments.append((max(0, min(gaps)), max(0, max(gaps))))
        f.segments.append(max(1, percentile([j[i].cpu_ns for j in jobs], percentile_p)))
    cpu = [sum(a.cpu_ns for a in j) for j in jobs]
    f.kind, f.period = "periodic", med
    f.wcet = sum(f.segments[::2])
    f.exec_min, f.exec_max, f.exec_median = min(cpu), max(cpu), round(statistics.median(cpu))
    f.min_interarrival, f.max_interarrival = min(inter), max(inter)
    f.jitter = percentile([abs(d - med) for d in inter], 95)
    f.in_tolerance = sum(abs(d - med) <= tolerance * med for d in inter) / len(inter)
    f.why = (f"{k} activations per job, woken by a timer each (self-suspending); {f.in_tolerance:.0%} of the jobs' "
             f"inter-release times within ±{tolerance:.0%} of the median")


def extract(events, roots=None, percentile_p=99.0, tolerance=0.10, min_activations=3, comm=None, all_threads=False) -> list:
    """The threads of a trace as :class:`ThreadFit` (ordered by tid): those of the process
    trees of ``roots`` (None: every thread), whose comm matches the regex ``comm`` if given.
    When some are SCHED_FIFO/RR threads, the others (SCHED_OTHER, e.g. a main thread that
    waits) are not made tasks unless ``all_threads``."""
    threads = process_tree(events, roots) if roots else None
    per = activations(events, threads)
    fits = []
    for tid in sorted(per):
        c, prio, acts = per[tid]
        if comm is not None and not re.search(comm, c):
            continue
        f = fit_thread(tid, c, prio, acts, percentile_p, tolerance, min_activations)
        _periodic_suspending(f, tolerance, percentile_p=percentile_p)
        fits.append(f)
    if not all_threads and any(f.kind and f.rt_priority is not None for f in fits):
        for f in fits:
            if f.kind and f.rt_priority is None:
                f.kind, f.why = None, f"{f.policy} thread beside real-time ones (--all-threads keeps it)"
    _name(fits)
    find_triggers(fits, percentile_p=percentile_p)
    return fits


#: A task is made ``trigger:`` of another when it woke at least this share of the other's
#: activations (the rest: its first activation, woken by the thread that started it; a
#: timer's wake-up traced while the waker's thread happened to run).
TRIGGER_SHARE = 0.8


def find_triggers(fits, share: float = TRIGGER_SHARE, percentile_p: float = 99.0):
    """Set ``waker``/``waker_share`` of every thread (the thread that woke most of its
    activations, and the share it woke), and ``trigger`` of each task another task's
    activations wake in at least ``share`` of its activations (docs/chains.md: a job released
    when a job of the trigger finishes; here: when the trigger's thread wakes it, which is how
    a thread hands its result on). A trigger that would close a cycle is not taken (the one of
    the smaller share gives way), as the task-set format refuses cycles. A task whose waker's
    share is too small may be a triggered task that suspends itself (:func:`_suspending`)."""
    tasks = {f.tid: f for f in fits if f.kind}
    for f in fits:
        n = Counter(a.waker for a in f.activations if a.waker is not None and a.waker != f.tid)
        if n:
            f.waker, k = max(n.items(), key=lambda kv: (kv[1], -kv[0]))
            f.waker_share = k / len(f.activations)
        if f.kind and f.waker in tasks and not f.segments:  # segments: timer-driven, self-suspending
            if f.waker_share < share:
                _suspending(f, share, percentile_p)
            if not f.segments:
                # also when one thread starts most activations: the others may wake them too
                _join(f, tasks, share, percentile_p)
            if not f.segments and not f.join and f.waker_share < share:
                _alternatives(f, tasks, share)
    cands = sorted((f for f in tasks.values() if f.waker in tasks and f.waker_share >= share),
                   key=lambda f: (-f.waker_share, f.tid))
    for f in cands:
        proposed, f.join = f.join or [f.waker], []
        if not any(_reaches(tasks, p, f.tid) for p in proposed):  # would it close a cycle?
            if len(proposed) > 1:
                f.join = proposed
            else:
                f.trigger = f.waker


def parents(f) -> list:
    """The tids of the tasks whose jobs release ``f``'s: its trigger, or a join's triggers."""
    return f.join or ([f.trigger] if f.trigger is not None else [])


def _reaches(tasks, start, target) -> bool:
    """Whether ``target`` is ``start`` or one of the tasks ``start``'s triggers come from."""
    todo, seen = [start], set()
    while todo:
        t = todo.pop()
        if t == target:
            return True
        if t in seen or t not in tasks:
            continue
        seen.add(t)
        todo.extend(parents(tasks[t]))
    return False


def _join(f, tasks, share, percentile_p=99.0):
    """A join (``trigger: {all: [A, B]}``): a thread each of whose jobs is preceded by a wake-up
    from each of several tasks since the last — woken by each in turn (rt-app's join waits for
    each: ``suspend`` on one, then the next), or by several within one activation (woken again
    before it slept). Counting each task once per activation it woke (``Activation.wakers``),
    taken when the tasks that woke at least ``share`` as many of its activations as the most
    frequent one are two or more; a job ends at the activation that completes the set (each of
    them has woken it since the last job), its CPU time the sum over the activations since the
    last. Needs 3 jobs or more, as many as ``share`` of the wake-ups of the rarest of them, at
    least ``share`` of the activations within jobs, at least ``share`` of the jobs *rounds*
    (no task woke twice within one: a task that wakes it again before the others is an
    alternative, :func:`_alternatives`), and the activations before a job's last short beside
    it (their median CPU time under half the last ones': a thread that does a whole job each
    time it is woken, whoever wakes it, takes alternatives in turn, not a join). Sets ``join``
    (the tids), ``join_wcet`` (the ``percentile_p`` of the jobs' CPU times) and
    ``waker_share`` (the share of its activations within jobs)."""
    n = Counter(w for a in f.activations for w in set(a.wakers) if w in tasks and w != f.tid)
    top = max(n.values(), default=0)
    members = sorted(w for w, c in n.items() if c >= share * top)
    if len(members) < 2:
        return
    jobs, rounds, seen, cpu, acts, used = [], 0, [], 0, [], 0
    first, last = [], []
    for a in f.activations:
        cpu += a.cpu_ns
        acts.append(a)
        seen.extend(w for w in a.wakers if w in members)
        if set(members) <= set(seen):
            jobs.append(cpu)
            rounds += len(seen) == len(set(seen))
            used += len(acts)
            first.extend(x.cpu_ns for x in acts[:-1])
            last.append(acts[-1].cpu_ns)
            seen, cpu, acts = [], 0, []
    if len(jobs) < 3 or len(jobs) < share * min(n[w] for w in members) or used < share * len(f.activations):
        return
    if rounds < share * len(jobs):
        return
    if first and statistics.median(first) >= statistics.median(last) / 2:
        return
    f.join, f.join_wcet = members, max(1, percentile(jobs, percentile_p))
    f.waker_share = used / len(f.activations)


#: A task that woke at least this share of a thread's activations counts among its
#: alternatives (:func:`_alternatives`).
ALTERNATIVE_SHARE = 0.1


def _alternatives(f, tasks, share):
    """A thread woken by one of several tasks per activation, not by all of them per job (no
    join, :func:`_join`; no one task in ``share`` of them): rtsched's trigger is one task or
    all of several, so it has no form for "a job whenever A or B finishes". Sets
    ``alternatives`` — each task that woke at least ``ALTERNATIVE_SHARE`` of its activations,
    with its share, most first — when two or more together woke at least ``share`` of them;
    the thread keeps the arrival pattern :func:`fit_thread` gave it (its measured releases:
    for a sporadic thread the minimum inter-arrival time of the union of its wakers'), the
    closest form the model has, said in the fit report and warned (:func:`warnings`)."""
    k = len(f.activations)
    n = Counter(a.waker for a in f.activations if a.waker in tasks and a.waker != f.tid)
    alts = sorted(((w, c / k) for w, c in n.items() if c >= ALTERNATIVE_SHARE * k), key=lambda x: (-x[1], x[0]))
    if len(alts) >= 2 and sum(x[1] for x in alts) >= share:
        f.alternatives = alts


def warnings(fits) -> list:
    """What the task set written cannot say of the recording, one line each: threads woken by
    one of several tasks (``alternatives``)."""
    names = {f.tid: f.name or f.comm for f in fits}
    return [f"{f.name}: woken by {alternatives_text(f, names)}, one of them per activation and not all of them "
            f"per job: rtsched's trigger is one task or all of several (a join), so it is written {f.kind} from its "
            "own activations, and no chain passes through it"
            for f in fits if f.kind and f.alternatives]


def alternatives_text(f, names) -> str:
    return " or ".join(f"{names.get(w, f'tid {w}')} ({s:.0%})" for w, s in f.alternatives)


def _suspending(f, share, percentile_p=99.0):
    """A thread woken by its waker W and, between two of W's wake-ups, by a timer (no waker):
    a triggered job that suspends itself (docs/chains.md "Self-suspension"; rt-app's ``sleep``
    between two ``run``s). Taken when the activations group into jobs — each starting at a
    wake-up by W, followed by those that no thread woke — of which at least ``share`` have the
    same number k ≥ 2 of run segments, and at most 1 − ``share`` of the activations are woken
    by a thread other than W or come before W's first. Then ``segments`` (run i: the
    ``percentile_p`` of its CPU time over those jobs; suspension i: the range of the time from
    run i's sleep to run i + 1's wake-up) and ``waker_share`` the share of such jobs."""
    jobs, stray = [], 0
    for a in f.activations:
        if a.waker == f.waker:
            jobs.append([a])
        elif a.waker is None and jobs:
            jobs[-1].append(a)
        else:
            stray += 1
    if len(jobs) < 3 or stray > (1 - share) * len(f.activations):
        return
    k, n = Counter(len(j) for j in jobs).most_common(1)[0]
    if k < 2 or n < share * len(jobs):
        return
    same = [j for j in jobs if len(j) == k]
    f.segments = []
    for i in range(k):
        if i:
            gaps = [j[i].wakeup - j[i - 1].end for j in same]
            f.segments.append((max(0, min(gaps)), max(0, max(gaps))))
        f.segments.append(max(1, percentile([j[i].cpu_ns for j in same], percentile_p)))
    f.waker_share = n / len(jobs)


def chain_names(chains) -> list:
    """A name per chain: its head's; ``HEAD-LAST`` when one head starts several; the whole
    path joined by ``-`` when that is still another's (two paths from HEAD to LAST)."""
    heads = Counter(c[0] for c in chains)
    names = [c[0] if heads[c[0]] == 1 else f"{c[0]}-{c[-1]}" for c in chains]
    twice = Counter(names)
    return [n if twice[n] == 1 else "-".join(c) for n, c in zip(names, chains)]


def pipelines(fits) -> list:
    """The chains of triggers found: every path from a task that no task triggers through the
    tasks its activations trigger to one that triggers none, as task names, head first
    (docs/chains.md "Chains"). Only paths of two tasks or more."""
    tasks = {f.tid: f for f in fits if f.kind}
    succ: dict = {}
    for f in tasks.values():
        for p in parents(f):
            succ.setdefault(p, []).append(f.tid)
    out = []

    def walk(path):
        nxt = succ.get(path[-1], [])
        if not nxt and len(path) > 1:
            out.append([tasks[t].name for t in path])
        for t in sorted(nxt):
            walk(path + [t])

    for f in tasks.values():
        if not parents(f):
            walk([f.tid])
    return out


def _name(fits):
    tasks = [f for f in fits if f.kind]
    count: dict = {}
    for f in tasks:
        count[f.comm] = count.get(f.comm, 0) + 1
    for f in fits:
        base = f.comm or "thread"
        f.name = base if f.kind and count.get(f.comm) == 1 else f"{base}-{f.tid}"


# ---------------------------------------------------------------------------------------------
# Writing


def _us(ns) -> str:
    return in_unit(ns, "us", 1)


def fit_table(fits, percentile_p) -> tuple[list, list]:
    """Header and rows of the fit report (times in µs); a thread left out of the task set says
    why in the last column (`note`), a triggered one what triggers it (its kind: triggered)."""
    head = ["task", "tid", "policy", "prio", "kind", "acts", "period/min_ia", "inter min..max", "jitter",
            "in ±tol", "exec min", "median", f"p{percentile_p:g}=wcet", "max", "note"]
    rows = []
    names = {f.tid: f.name or f.comm for f in fits}
    for f in fits:
        if not f.kind:
            rows.append([f.name, f.tid, f.policy, f.rt_priority if f.rt_priority is not None else f.prio, "-",
                         len(f.activations), "", "", "", "", "", "", "", "", f.why])
            continue
        t = f.period if f.kind == "periodic" else f.min_interarrival
        rows.append([f.name, f.tid, f.policy, f.rt_priority if f.rt_priority is not None else f.prio,
                     "triggered" if parents(f) else f.kind,
                     len(f.activations), _us(t), f"{_us(f.min_interarrival)}..{_us(f.max_interarrival)}", _us(f.jitter),
                     f"{f.in_tolerance:.0%}", _us(f.exec_min), _us(f.exec_median), _us(f.wcet), _us(f.exec_max),
                     waker_note(f, names)])
    return head, rows


def waker_note(f, names) -> str:
    """What woke the thread's activations: ``trigger: NAME, 98% of activations`` for a
    triggered task, ``woken by NAME in 40%`` when another recorded thread woke 10 % or more
    but too few to be its trigger, else empty."""
    if f.segments and f.trigger is None:
        return f"periodic, {len(f.segments) // 2 + 1} runs per job (self-suspending)"
    if f.waker is None or f.waker_share < 0.1:  # the thread that started it, once: no note
        return ""
    who = names.get(f.waker, f"tid {f.waker}")
    if f.join:
        return f"trigger: all of {', '.join(names.get(t, f'tid {t}') for t in f.join)}, {f.waker_share:.0%} of activations"
    if f.trigger is not None and f.segments:
        return f"trigger: {who}, {f.waker_share:.0%} of jobs of {len(f.segments) // 2 + 1} runs (self-suspending)"
    if f.trigger is not None:
        return f"trigger: {who}, {f.waker_share:.0%} of activations"
    if f.alternatives:
        return f"woken by {alternatives_text(f, names)}: alternatives, no trigger (warned)"
    return f"woken by {who} in {f.waker_share:.0%}"


def _release_period(f, tasks) -> int:
    """A triggered task's implicit deadline: the period (or minimum inter-arrival time) of the
    task at the head of its triggers (of a join's, the longest)."""
    if parents(f):  # the longest of its triggers' (the model's period of a triggered task)
        return max(_release_period(tasks[p], tasks) for p in parents(f))
    return f.period if f.kind == "periodic" else max(1, f.min_interarrival)


def taskset_yaml(fits, cpus: int, duration_ns: int, header: str = "", percentile_p: float = 99.0, times_file=None,
                 replay: bool = False) -> str:
    """The task set of ``fits`` (those with a kind) as YAML, written by the task-set writer
    (``_core.to_yaml``: durations exact, with units) with the fit of each task as a comment on
    its line and a sporadic task's T as ``min_interarrival``. Priorities are written when every
    task has a SCHED_FIFO/RR priority (the file's rule: all or none). With ``replay``, each task
    lists its measured CPU time per activation (`execution_times`, at least 1 ns each), which
    the simulator and `rtsched run` replay in turn in place of the run's execution model."""
    tasks = [f for f in fits if f.kind]
    if not tasks:
        raise InputError("no thread of the recording had enough activations to be a task "
                         "(see the table above; a longer --duration or --min-activations may help)")
    all_rt = all(f.rt_priority is not None for f in tasks)
    out = [f"# {line}" if line else "#" for line in header.splitlines()]
    out.append(f"# per task: policy and kernel prio from the trace; period = median inter-activation time; "
               f"wcet = p{percentile_p:g} of per-activation CPU time")
    if times_file:
        out.append(f"# the measured activations (release, CPU time) of every task: {times_file}")
    if not all_rt:
        out.append("# no priorities written: not every task had a SCHED_FIFO/RR priority in the trace")
    doc = {"platform": {"cpus": int(cpus)}, "run": {"duration": f"{max(duration_ns, 1_000_000)}ns"}, "tasks": []}
    notes = []
    by_tid = {f.tid: f for f in tasks}
    for f in tasks:
        t = {"name": f.name, "wcet": f"{f.wcet}ns"}
        if f.segments:
            del t["wcet"]  # the sum of the run segments
            t["segments"] = [f"{x}ns" if i % 2 == 0 else {"suspend": f"{max(1, x[0])}ns" if x[0] == x[1] else
                                                          [f"{max(1, x[0])}ns", f"{max(1, x[1])}ns"]}
                             for i, x in enumerate(f.segments)]
        if f.join:
            t["trigger"] = {"all": [by_tid[p].name for p in f.join]}
            t["wcet"] = f"{f.join_wcet}ns"
            t["deadline"] = f"{_release_period(f, by_tid)}ns"
        elif f.trigger is not None:
            # Released by its trigger's activations; its deadline the head's period (implicit).
            t["trigger"] = by_tid[f.trigger].name
            t["deadline"] = f"{_release_period(f, by_tid)}ns"
        elif f.kind == "periodic":
            t["period"] = f"{f.period}ns"
        else:
            t["min_interarrival"] = f"{max(1, f.min_interarrival)}ns"
        if all_rt:
            t["priority"] = f.rt_priority
        if replay and f.activations and not f.join and not f.segments:
            t["execution_times"] = [f"{max(1, a.cpu_ns)}ns" for a in f.activations]
        doc["tasks"].append(t)
        notes.append((f"tid {f.tid}, {f.policy} prio {f.prio}, {len(f.activations)} activations; inter-activation "
                      f"{_us(f.min_interarrival)}..{_us(f.max_interarrival)} us, jitter (p95) {_us(f.jitter)} us, "
                      f"{f.in_tolerance:.0%} within tolerance; exec min/median/max {_us(f.exec_min)}/"
                      f"{_us(f.exec_median)}/{_us(f.exec_max)} us"
                      + (f"; {f.inferred} switch-ins missing from the trace" if f.inferred else "")
                      + (f"; {len(f.segments) // 2 + 1} runs per job, each woken by its timer (self-suspending)"
                         if f.segments and f.trigger is None else "")
                      + (f"; woken by {by_tid[f.trigger].name} in {f.waker_share:.0%} of its "
                         + ("jobs (each of its runs but the first woken by a timer: self-suspending)" if f.segments else "activations")
                         if f.trigger is not None else "")
                      + (f"; woken by {', '.join(by_tid[p].name for p in f.join)} in {f.waker_share:.0%} "
                         "of its activations (a join: a job when each has woken it)" if f.join else "")
                      + (f"; woken by {alternatives_text(f, {x.tid: x.name for x in fits})}, one per activation: "
                         "alternatives, which no trigger expresses" if f.alternatives else ""),
                      f.kind == "sporadic" and not parents(f)))
    chains = pipelines(tasks)
    if chains:
        doc["chains"] = [{"name": n, "tasks": c} for n, c in zip(chain_names(chains), chains)]
    ts = _core.parse_taskset(json.dumps(doc), "json", "<recording>")
    return "\n".join(out) + "\n" + _core.to_yaml(ts, notes)


def times_csv(fits) -> str:
    """Every task's measured activations, one a row: task, tid, index, release_ns (from the
    first activation of the recording), inter_arrival_ns, cpu_ns, response_ns (wakeup to
    sleep)."""
    tasks = [f for f in fits if f.kind]
    t0 = min((f.activations[0].wakeup for f in tasks if f.activations), default=0)
    rows = ["task,tid,index,release_ns,inter_arrival_ns,cpu_ns,response_ns"]
    for f in tasks:
        prev = None
        for i, a in enumerate(f.activations):
            ia = "" if prev is None else str(a.wakeup - prev)
            name = f.name if not any(c in f.name for c in ',"\n') else '"' + f.name.replace('"', '""') + '"'
            rows.append(f"{name},{f.tid},{i},{a.wakeup - t0},{ia},{a.cpu_ns},{a.end - a.wakeup}")
            prev = a.wakeup
    return "\n".join(rows) + "\n"


# ---------------------------------------------------------------------------------------------
# Recording: tracefs and trace-cmd

TRACEFS_PATHS = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")


def find_tracefs():
    for p in TRACEFS_PATHS:
        if os.path.isdir(os.path.join(p, "instances")):
            return p
    return None


def _needs(what: str):
    return PrivilegeError(f"rtsched record {what}")


def _mount_tracefs() -> str | None:
    """Mount tracefs at /sys/kernel/tracing when the kernel has it and nothing is mounted
    there (as trace-cmd does); the caller unmounts it. None when it cannot."""
    try:
        with open("/proc/filesystems") as f:
            if "tracefs" not in f.read():
                return None
    except OSError:
        return None
    p = TRACEFS_PATHS[0]
    if not os.path.isdir(p):
        return None
    r = subprocess.run(["mount", "-t", "tracefs", "nodev", p], capture_output=True, text=True)
    return p if r.returncode == 0 and os.path.isdir(os.path.join(p, "instances")) else None


def _w(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def _r(path) -> str:
    with open(path) as f:
        return f.read()


@dataclass
class Recording:
    trace: Trace
    root: int
    started: int       # ns, CLOCK_MONOTONIC, when the command was released
    elapsed: int       # ns recorded
    exit_status: int | None  # the command's, None when it was stopped at the duration
    lost: int          # events lost (overruns + dropped + [LOST] lines)
    instance: str
    total: int = 0     # events read (every thread's); ``trace`` holds the command's
    settled: int = 0   # ns from the command's release to the start of the recording window
    settle_how: str = ""  # how that start was found (said in record's report)


#: ``--settle auto`` waits at most this long for the command to start a thread; a command
#: that starts none by then is recorded from its release.
SETTLE_LIMIT_NS = 30_000_000_000


def _settle_done(keep, started, settle_ns, now):
    """The start of the recording window (ns, CLOCK_MONOTONIC) once known, else None.
    ``settle_ns`` None (auto): the first wake-up of a thread the command started (rt-app's
    threads start after its calibration, ~4 s here), or the release itself once
    ``SETTLE_LIMIT_NS`` passed without one; else the release plus ``settle_ns``."""
    if settle_ns is not None:
        return started + settle_ns
    if keep.first_thread is not None:
        return max(started, keep.first_thread)
    return started if now - started >= SETTLE_LIMIT_NS else None


def record_live(cmd, duration_ns=None, buffer_kb=8192, log=None, settle_ns=None) -> Recording:
    """Run ``cmd`` under a tracefs instance of its own with the sched tracepoints enabled for
    every thread (the command's process tree is taken from fork events), reading trace_pipe as it goes; stop
    ``duration_ns`` after the start of the recording window or when the command exits; always remove the
    instance. The window starts ``settle_ns`` after the command's release, or with ``settle_ns`` None when
    its first thread other than its own first wakes (:func:`_settle_done`); events before it are dropped.
    Raises PrivilegeError (exit 2) without root or tracefs."""
    if os.geteuid() != 0:
        raise _needs("needs root: it enables the kernel's scheduler tracepoints through tracefs "
                     "(/sys/kernel/tracing); run it as root (or record elsewhere with trace-cmd and use --from FILE.dat)")
    if shutil.which(cmd[0]) is None and not os.path.exists(cmd[0]):
        raise InputError(f"{cmd[0]}: no such command")
    # /sys/kernel/tracing, mounted there for the recording when it is not (and unmounted
    # after); /sys/kernel/debug/tracing only when that fails (looking there may automount it).
    tracefs = TRACEFS_PATHS[0] if os.path.isdir(os.path.join(TRACEFS_PATHS[0], "instances")) else None
    mounted = None
    if tracefs is None:
        mounted = tracefs = _mount_tracefs()
        if tracefs is None:
            tracefs = find_tracefs()
        if tracefs is None:
            raise _needs("needs tracefs: none is mounted at /sys/kernel/tracing or /sys/kernel/debug/tracing and "
                         "mounting one failed (a kernel with CONFIG_FTRACE and the sched tracepoints is needed)")
    inst = os.path.join(tracefs, "instances", f"rtsched-record-{os.getpid()}")
    old_handlers = {}

    def stop(signum, frame):  # SIGTERM/SIGHUP: unwind through the cleanup below ("interrupted", 130)
        raise KeyboardInterrupt(signal.Signals(signum).name)

    for s in (signal.SIGTERM, signal.SIGHUP):
        old_handlers[s] = signal.signal(s, stop)
    child = fd = None
    rfd, wfd = os.pipe()
    keep = None
    try:
        try:
            os.mkdir(inst)
        except OSError as e:
            raise _needs(f"cannot create the tracefs instance {inst}: {e.strerror or e}") from None
        _w(os.path.join(inst, "tracing_on"), 0)
        _w(os.path.join(inst, "buffer_size_kb"), int(buffer_kb))
        try:  # one clock for every CPU (the default "local" may differ between CPUs)
            _w(os.path.join(inst, "trace_clock"), "mono")
        except OSError:
            pass
        for ev in EVENTS:
            _w(os.path.join(inst, "events", "sched", ev, "enable"), 1)

        # The command starts held: a small wrapper waits on the pipe, then execs it (same pid),
        # so tracing is on before it runs and its pid is known.
        wrapper = "import os, sys; os.read(int(sys.argv[1]), 1); os.close(int(sys.argv[1])); os.execvp(sys.argv[2], sys.argv[2:])"
        child = subprocess.Popen([sys.executable, "-c", wrapper, str(rfd), *cmd], start_new_session=True, pass_fds=(rfd,))
        os.close(rfd)
        rfd = None
        # No set_event_pid: with it this kernel (6.18) dropped the switch-in of a thread woken
        # on an idle CPU; every thread is traced and the command's tree taken from fork events.
        fd = os.open(os.path.join(inst, "trace_pipe"), os.O_RDONLY | os.O_NONBLOCK)
        _w(os.path.join(inst, "tracing_on"), 1)
        started = time.monotonic_ns()
        keep = _Keep(child.pid)
        os.write(wfd, b"g")
        os.close(wfd)
        wfd = None
        status = origin = None
        while True:
            r, _, _ = select.select([fd], [], [], 0.05)
            if r:
                try:
                    b = os.read(fd, 1 << 16)
                    if b:
                        keep.feed(b)
                except BlockingIOError:
                    pass
            status = child.poll()
            now = time.monotonic_ns()
            if origin is None:
                origin = _settle_done(keep, started, settle_ns, now)
            if status is not None or (origin is not None and duration_ns is not None and now >= origin + duration_ns):
                break
        end = time.monotonic_ns()
        _w(os.path.join(inst, "tracing_on"), 0)
        while True:  # drain what is left
            try:
                b = os.read(fd, 1 << 16)
            except BlockingIOError:
                break
            if not b:
                break
            keep.feed(b)
        lost = 0
        for cpu in sorted(os.listdir(os.path.join(inst, "per_cpu"))):
            try:
                stats = _r(os.path.join(inst, "per_cpu", cpu, "stats"))
            except OSError:
                continue
            for line in stats.splitlines():
                k, _, v = line.partition(":")
                if k.strip() in ("overrun", "dropped events"):
                    try:
                        lost += int(v.strip())
                    except ValueError:
                        pass
        tr = keep.finish()
        origin, how = _window_start(keep, started, end, origin, settle_ns)
        # Forks are kept whatever their time: extract() takes the command's tree from them.
        tr.events = [e for e in tr.events if e.ts >= origin or e.kind == "fork"]
        return Recording(tr, child.pid, started, end - origin, status, max(lost, tr.lost), inst, keep.total,
                         origin - started, how)
    finally:
        if child is not None and child.poll() is None:
            _kill_tree(child)
        for x in (rfd, wfd, fd):
            if x is not None:
                try:
                    os.close(x)
                except OSError:
                    pass
        if os.path.isdir(inst):
            for ev in EVENTS:
                try:
                    _w(os.path.join(inst, "events", "sched", ev, "enable"), 0)
                except OSError:
                    pass
            try:
                _w(os.path.join(inst, "tracing_on"), 0)
            except OSError:
                pass
            try:
                os.rmdir(inst)
            except OSError as e:
                if log:
                    log(f"rtsched record: could not remove the tracefs instance {inst}: {e.strerror or e}")
        if mounted:
            subprocess.run(["umount", mounted], capture_output=True)
        for s, h in old_handlers.items():
            signal.signal(s, h)


def _window_start(keep, started, end, origin, settle_ns):
    """The recording window's start (ns) once the recording ended at ``end``, and how it was
    found (for the report). A command that ended before its start was over is kept from the
    start it had (its first thread's wake-up, else its release)."""
    if origin is None:
        origin = keep.first_thread if settle_ns is None and keep.first_thread is not None else started
    if settle_ns is not None:
        how = f"--settle {in_unit(settle_ns, 's', 2)} s"
    elif keep.first_thread is not None:
        how = "its first thread woke"
    else:
        how = "no thread of its own started" + (f" within {SETTLE_LIMIT_NS // 10**9} s" if end - started >= SETTLE_LIMIT_NS else "")
    return min(origin, end), how


class _Keep:
    """Parses trace_pipe text as it comes and keeps only the events of ``root``'s process tree
    (trace_pipe is in time order, so a fork comes before its child's events): memory grows
    with the command's events, not the machine's."""

    def __init__(self, root):
        self.root = root
        self.tree = {root}
        self.tail = b""
        self.trace = Trace()
        self.total = 0
        self.first_thread = None  # ns: the first wake-up of a thread of the tree but the root

    def feed(self, data: bytes):
        data = self.tail + data
        cut = data.rfind(b"\n") + 1
        self.tail = data[cut:]
        if cut:
            self._lines(data[:cut])

    def _lines(self, data: bytes):
        tr = parse_trace(data.decode("utf-8", "replace"))
        self.trace.lost += tr.lost
        self.trace.unparsed += tr.unparsed
        self.trace.lines += tr.lines
        self.total += len(tr.events)
        tree = self.tree
        for e in tr.events:
            if e.kind == "fork":
                if e.pid in tree:
                    tree.add(e.child)
                    self.trace.events.append(e)
            elif e.pid in tree or (e.kind == "switch" and e.next_pid in tree):
                self.trace.events.append(e)
                if e.kind == "wakeup" and e.pid != self.root and self.first_thread is None:
                    self.first_thread = e.ts

    def finish(self) -> Trace:
        if self.tail:
            self._lines(self.tail + b"\n")
            self.tail = b""
        self.trace.events.sort(key=lambda e: e.ts)
        return self.trace


def _kill_tree(child):
    """SIGTERM the command's session (it was started in a new one), then SIGKILL after 2 s."""
    try:
        os.killpg(child.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        child.wait(timeout=2)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        child.wait()


def report_dat(path) -> str:
    """The text of ``trace-cmd report -R -t -l`` of a .dat file (raw fields, ns timestamps,
    the latency flags that say a wake-up came from an interrupt)."""
    exe = shutil.which("trace-cmd")
    if exe is None:
        raise InputError(f"{path}: reading a .dat file needs trace-cmd (Debian package trace-cmd), which is not installed")
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    r = subprocess.run([exe, "report", "-R", "-t", "-l", "-i", os.fspath(path)], capture_output=True, text=True, errors="replace")
    if r.returncode != 0:
        msg = (r.stderr.strip().splitlines() or ["failed"])[-1]
        raise InputError(f"{path}: trace-cmd report failed: {msg}")
    return r.stdout
