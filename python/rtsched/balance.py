"""The operation-zone load balancer on real Linux, in user space (opzone paper, §3).

The paper's balancer lives in the kernel; this one runs beside the kernel's own and acts
through CPU affinity. Every decision is the Rust ``ZoneBalancer`` (``_core.ZoneBalancer``),
the very code the simulator's fair policy asks, so the simulated and the real balancer cannot
drift. This module only measures and moves:

1. **Utilisation** (§3.2): every ``period`` (100 ms), each CPU's busy share of the window
   from /proc/stat (busy = total - idle - iowait; steal counts as busy: the vCPU wanted to
   run). /proc/stat counts in USER_HZ (10 ms), so one 100 ms sample has 1 % resolution per
   10 ms, i.e. utilisations move in steps of 10 %: coarse but enough for 30/50/80 % zones.
2. **Check points** (§3, Fig 2), found by comparing two samples:
   - *task created*: a managed thread id not seen before;
   - *idle CPU's task wakes up*: a CPU under ``IDLE_PERMILLE`` in the last window and busy now;
   - *task of the busiest group*: a managed task ran on the busiest CPU in this window
     (evaluated every sample).
   Each check point asks ``check``; between them ``observe`` feeds the weight-based score.
3. **What moves** (§3.1.3, Fig 4): on Balance{from, to}, ONE managed task is pinned to ``to``
   with sched_setaffinity, the one the simulator's own rule picks (``ZoneBalancer.choose``,
   Rust ``ZoneBalancer::choose``): among the runnable managed tasks (state R) whose last CPU
   (/proc/PID/task/TID/stat field 39) is ``from``, none when ``from`` has fewer than two or
   not two more than ``to`` (the guard), under a warm policy none whose own usage is below
   the warm zone; of the rest the heaviest (nice, field 19), then the latest vruntime
   (/proc/PID/task/TID/sched, 0 where the kernel has no such file), then the lowest tid. A
   task's usage is the simulator's (``task_usage``): by default its *demand*, the share of
   the window it was runnable — time on a CPU plus time waiting on a run queue, fields 1 and
   2 of /proc/PID/task/TID/schedstat, differenced over the window (0 where unreadable) — or
   with ``task_usage=running`` field 1 alone. At most one move per sample: after a move the
   window's utilisations are stale.

Managed tasks: the processes the balancer started (``-- CMD``), the ``--pid`` processes, and
all their descendants and threads; with ``all_tasks`` every user thread instead (never kernel
threads, never SCHED_FIFO/RR/DEADLINE threads, never the balancer itself). A task is known
by (tid, start time), so a recycled tid is never touched.

``dry_run`` decides and logs but changes nothing: the same process, the same /proc reading,
what the zone balancer would do (the baseline of a fair comparison with the kernel's balancer).

``hold`` pins each managed task to the CPU it is first seen on, so the kernel's balancer
cannot move it and the zone balancer is the only one (as in the paper, where it replaces the
kernel's). Without it both balancers act on the managed tasks.

Safety: every affinity the balancer changes is recorded (the original mask) the first time
and restored on every exit — normal end, Ctrl-C, SIGTERM, SIGHUP, an exception. A task that
has exited meanwhile is skipped silently.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from . import _core
from ._core import InputError
from ._io import write_text_atomic
from .durations import in_unit

#: A CPU under 5 % in a window counts as idle for the "idle CPU's task wakes up" check point.
IDLE_PERMILLE = 50
#: sched policies the balancer never moves (SCHED_FIFO, SCHED_RR, SCHED_DEADLINE): they have
#: the kernel's RT push/pull and are what the balancer is meant to protect.
RT_POLICIES = {1, 2, 6}
#: PF_KTHREAD in /proc/PID/stat field 9 (flags).
PF_KTHREAD = 0x00200000
#: Triggers in the order they are asked within one sample.
TRIGGERS = ("task-created", "idle-wakeup", "busiest-group")


def read_cpu_times(path="/proc/stat") -> dict:
    """Per online CPU: (busy, total, steal) jiffies since boot."""
    out = {}
    with open(path) as f:
        for line in f:
            if not line.startswith("cpu") or line.startswith("cpu "):
                continue
            parts = line.split()
            v = [int(x) for x in parts[1:9]]  # user nice system idle iowait irq softirq steal (guest is in user)
            total = sum(v)
            out[int(parts[0][3:])] = (total - v[3] - v[4], total, v[7])
    return out


def read_steal(path="/proc/stat") -> tuple[int, int]:
    """(steal, total) jiffies of all CPUs since boot, for a steal share over a run."""
    with open(path) as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return v[7], sum(v)


@dataclass
class TaskStat:
    tid: int
    pid: int
    start: int  # field 22: start time since boot, with tid the task's identity
    cpu_time: int  # fields 14 + 15, clock ticks
    processor: int  # field 39, the CPU it last ran on
    policy: int  # field 41
    flags: int  # field 9
    ppid: int  # field 4
    comm: str
    nice: int = 0  # field 19
    state: str = "R"  # field 3: R runnable (running or waiting), S sleeping, ...
    run_ns: int = 0  # schedstat field 1: ns on a CPU since it started (0: unreadable)
    wait_ns: int = 0  # schedstat field 2: ns waiting on a run queue since it started


def read_task(pid: int, tid: int) -> TaskStat | None:
    """One thread's /proc stat, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            s = f.read()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return _parse_stat(s, pid, tid)


def _parse_stat(s: str, pid: int, tid: int) -> TaskStat | None:
    # comm may hold spaces and parentheses: the fields start after the last ')'.
    r = s.rfind(")")
    rest = s[r + 2:].split()
    if len(rest) < 39:
        return None

    def f(n):  # field n of proc(5), 1-based
        return int(rest[n - 3])

    return TaskStat(tid=tid, pid=pid, start=f(22), cpu_time=f(14) + f(15), processor=f(39), policy=f(41), flags=f(9),
                    ppid=f(4), comm=s[s.find("(") + 1:r], nice=f(19), state=rest[0])


def read_schedstat(pid: int, tid: int) -> tuple[int, int]:
    """(ns on a CPU, ns waiting on a run queue) of the thread since it started, fields 1 and
    2 of /proc/PID/task/TID/schedstat; (0, 0) if the kernel does not show it or the thread is
    gone."""
    try:
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            run, wait = f.read().split()[:2]
        return int(run), int(wait)
    except (FileNotFoundError, ProcessLookupError, PermissionError, ValueError, OSError):
        return 0, 0


def read_vruntime(pid: int, tid: int) -> int:
    """The thread's CFS virtual runtime in ns (``se.vruntime`` of /proc/PID/task/TID/sched, in
    ms with six decimals), or 0 if the kernel does not show it or the thread is gone."""
    try:
        with open(f"/proc/{pid}/task/{tid}/sched") as f:
            for line in f:
                if line.startswith("se.vruntime"):
                    ms, _, frac = line.split(":", 1)[1].strip().partition(".")
                    return max(0, int(ms) * 1_000_000 + int((frac + "000000")[:6]))
    except (FileNotFoundError, ProcessLookupError, PermissionError, ValueError, OSError):
        pass
    return 0


def _pids() -> list[int]:
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def _tids(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return []


def _children(pid: int) -> list[int]:
    out = []
    for tid in _tids(pid):
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(x) for x in f.read().split()]
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            pass
    return out


def _proc_start(pid: int) -> int | None:
    t = read_task(pid, pid)
    return t.start if t else None


@dataclass
class Counters:
    samples: int = 0
    checks: dict = field(default_factory=lambda: {t: 0 for t in TRIGGERS})
    balances: int = 0  # check answered Balance{from, to}
    migrations: int = 0  # a task was moved
    no_task: int = 0  # a balance on which the shared rule moves no managed task (ZoneBalancer.choose)
    held: int = 0  # tasks pinned where first seen (hold)
    restored: int = 0
    restore_gone: int = 0  # changed tasks that had exited by the restore
    decide_ns: int = 0  # inside ZoneBalancer.check / observe
    scan_ns: int = 0  # reading /proc
    migrate_ns: int = 0  # choosing and moving the task


class Stop(Exception):
    """A signal asked the balancer to stop (after restoring every affinity)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class Balancer:
    """The user-space zone balancer. ``options``: ZoneConfig (key, value) pairs; ``pids``:
    processes to manage with their descendants; ``all_tasks``: manage every user thread."""

    def __init__(self, options=(), period_ns=100_000_000, pids=(), all_tasks=False, hold=False, log=None, dry_run=False):
        self.cpu_ids = sorted(read_cpu_times())
        self.zb = _core.ZoneBalancer(list(options), len(self.cpu_ids), "balance")
        if period_ns < 1_000_000:
            raise InputError(f"--period: {in_unit(period_ns)} ms is below 1 ms (/proc/stat counts in 10 ms steps; 100 ms is the default)")
        self.period_ns = period_ns
        self.all_tasks = all_tasks
        if dry_run and hold:
            raise InputError("--hold: changes affinities, --dry-run changes none; give one of them")
        self.hold = hold
        self.dry_run = dry_run
        self.log = log
        self.self_pid = os.getpid()
        # Managed processes as (pid, start): the roots and every descendant ever seen.
        self.procs: dict[int, int] = {}
        for p in pids:
            s = _proc_start(p)
            if s is None:
                raise InputError(f"--pid {p}: no such process")
            self.procs[p] = s
        self.original: dict[tuple[int, int], set[int]] = {}  # (tid, start) -> mask before we changed it
        self.applied: dict[int, set[int]] = {}  # tid -> the mask we set on it (to recognise inheritance)
        self.seen: set[tuple[int, int]] = set()
        self.prev_cpu_time: dict[tuple[int, int], int] = {}
        # Per task, its schedstat (run_ns, wait_ns) at the last sample; when that sample was.
        self.prev_sched: dict[tuple[int, int], tuple[int, int]] = {}
        self.demand = dict(self.zb.config())["task_usage"] == "demand"
        self.migrations: list[dict] = []
        # The last samples' utilisations (for plotting what the balancer saw), bounded.
        self.trace: deque = deque(maxlen=10_000)
        self.counters = Counters()
        self.t0 = time.monotonic_ns()
        self.prev_now = self.t0
        self._stopping = False

    def add_process(self, pid: int):
        """Manage a process the caller started (and its descendants)."""
        s = _proc_start(pid)
        if s is not None:
            self.procs[pid] = s

    # -- measuring ---------------------------------------------------------------------

    def _managed_pids(self) -> list[int]:
        if self.all_tasks:
            return [p for p in _pids() if p != self.self_pid]
        # The managed processes still alive and their children, through /proc/PID/task/TID/
        # children (only managed processes are read); an orphan stays managed, being remembered.
        live: dict[int, int] = {}
        frontier = list(self.procs.items())
        while frontier:
            p, start = frontier.pop()
            if p in live or p == self.self_pid:
                continue
            t = read_task(p, p)
            if t is None or t.start != start:
                continue
            live[p] = start
            for c in _children(p):
                ct = read_task(c, c) if c not in live else None
                if ct is not None:
                    frontier.append((c, ct.start))
        self.procs = live
        return sorted(live)

    def scan(self) -> list[TaskStat]:
        """Every managed thread now (movable or not)."""
        out = []
        for pid in self._managed_pids():
            for tid in _tids(pid):
                t = read_task(pid, tid)
                if t is None:
                    continue
                if self.all_tasks and (t.flags & PF_KTHREAD or pid == 2 or t.ppid == 2):
                    continue
                t.run_ns, t.wait_ns = read_schedstat(pid, tid)
                out.append(t)
        return out

    # -- moving ------------------------------------------------------------------------

    def _movable(self, t: TaskStat) -> bool:
        return t.policy not in RT_POLICIES and t.pid != self.self_pid

    def _set_affinity(self, t: TaskStat, cpu: int) -> bool:
        """Pin ``t`` to ``cpu``, recording its original mask the first time. False if it is
        gone, not ours to change, or its own mask excludes ``cpu`` (a user's pinning wins)."""
        key = (t.tid, t.start)
        try:
            before = os.sched_getaffinity(t.tid)
        except (ProcessLookupError, PermissionError, OSError):
            return False
        allowed = self.original.get(key, before)
        if cpu not in allowed:
            return False
        # The tid may have been recycled between the scan and now: check its identity again.
        again = read_task(t.pid, t.tid)
        if again is None or again.start != t.start:
            return False
        # Recorded before the change, so a signal between the two cannot lose it (restoring a
        # mask that was never changed is harmless).
        self.original.setdefault(key, before)
        try:
            os.sched_setaffinity(t.tid, {cpu})
        except (ProcessLookupError, PermissionError, OSError):
            return False
        self.applied[t.tid] = {cpu}
        return True

    @staticmethod
    def _mask(t: TaskStat) -> set[int]:
        try:
            return os.sched_getaffinity(t.tid)
        except OSError:
            return set()

    def _inherit(self, t: TaskStat):
        """A new task created by a task we pinned inherits that pin (fork and clone copy the
        mask): record the creator's original mask as its own, so the restore undoes it too.
        The creator is taken to be the thread group's leader (a thread) or the parent (a
        process); a mask the program set itself (not the one we applied) is left alone."""
        key = (t.tid, t.start)
        if key in self.original or not self.original:
            return
        creator = t.pid if t.tid != t.pid else t.ppid
        mask = self.applied.get(creator)
        if mask is None:
            return
        orig = next((m for (tid, _), m in self.original.items() if tid == creator), None)
        try:
            if orig is not None and os.sched_getaffinity(t.tid) == mask:
                self.original[key] = orig
                self.applied[t.tid] = mask
        except (ProcessLookupError, PermissionError, OSError):
            pass

    def restore(self):
        """Give every task we changed its original mask back; skip those that exited."""
        for (tid, start), mask in list(self.original.items()):
            t = None
            try:
                # The thread's pid is not needed to read it: /proc/TID/stat exists for every thread.
                with open(f"/proc/{tid}/stat") as f:
                    t = _parse_stat(f.read(), tid, tid)
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                pass
            if t is None or t.start != start:
                self.counters.restore_gone += 1
            else:
                try:
                    os.sched_setaffinity(tid, mask)
                    self.counters.restored += 1
                except (ProcessLookupError, PermissionError, OSError):
                    self.counters.restore_gone += 1
            del self.original[(tid, start)]
            self.applied.pop(tid, None)

    def _migrate(self, frm: int, to: int, tasks: list[TaskStat], usage: dict, utils, now_s: float) -> bool:
        """Move the task the simulator's rule picks (``ZoneBalancer.choose``) from CPU ``frm`` to
        ``to``; ``usage``: each task's usage in the window, per-mille (see ``step``)."""
        runnable = [t for t in tasks if t.state == "R" and self._movable(t)]
        nf = sum(t.processor == frm for t in runnable)
        nt = sum(t.processor == to for t in runnable)
        cands = [t for t in runnable if t.processor == frm]
        rows = [(usage.get((t.tid, t.start), 0), max(-20, min(19, t.nice)), read_vruntime(t.pid, t.tid), t.tid) for t in cands]
        while True:
            i = self.zb.choose(nf, nt, rows)
            if i is None:
                break
            t = cands.pop(i)
            rows.pop(i)
            # A task the affinity cannot move (gone, or its own mask excludes `to`): the next.
            if self.dry_run and to in self._mask(t) or not self.dry_run and self._set_affinity(t, to):
                rec = {"t_s": round(now_s, 4), "tid": t.tid, "pid": t.pid, "comm": t.comm, "from": frm, "to": to,
                       "utils_permille": list(utils), **({"dry_run": True} if self.dry_run else {})}
                self.migrations.append(rec)
                self.counters.migrations += 1
                if self.log:
                    self.log(f"{now_s:8.3f} s  {'would move' if self.dry_run else 'move'} tid {t.tid} ({t.comm}) CPU{frm} -> CPU{to}  utils {' '.join(f'{u / 10:.0f}%' for u in utils)}")
                return True
        self.counters.no_task += 1
        return False

    # -- the loop ----------------------------------------------------------------------

    def step(self, prev_cpu, cur_cpu, prev_utils, now_ns: int, tasks: list[TaskStat]):
        """One sample: utilisations of the window, check points, at most one move."""
        c = self.counters
        c.samples += 1
        utils = []
        for cpu in self.cpu_ids:
            b0, t0, _ = prev_cpu.get(cpu, (0, 0, 0))
            b1, t1, _ = cur_cpu[cpu]
            dt = t1 - t0
            utils.append(min(1000, max(0, (b1 - b0) * 1000 // dt)) if dt > 0 else 0)
        # Each task's usage in the window (per-mille of it, for the task floor): its demand, ns
        # on a CPU + ns waiting on a run queue (schedstat), or ns on a CPU alone (task_usage).
        window = now_ns - self.prev_now
        self.prev_now = now_ns
        deltas, usage, new = {}, {}, False
        for t in tasks:
            key = (t.tid, t.start)
            deltas[key] = t.cpu_time - self.prev_cpu_time.get(key, t.cpu_time)
            self.prev_cpu_time[key] = t.cpu_time
            run0, wait0 = self.prev_sched.get(key, (t.run_ns, t.wait_ns))
            used = max(0, t.run_ns - run0) + (max(0, t.wait_ns - wait0) if self.demand else 0)
            usage[key] = min(1000, used * 1000 // window) if window > 0 else 0
            self.prev_sched[key] = (t.run_ns, t.wait_ns)
            if key not in self.seen:
                self.seen.add(key)
                new = True
                self._inherit(t)
                if self.hold and self._movable(t) and self._set_affinity(t, t.processor):
                    c.held += 1
        live = {(t.tid, t.start) for t in tasks}
        for k in [k for k in self.prev_cpu_time if k not in live]:
            del self.prev_cpu_time[k]
            self.prev_sched.pop(k, None)
        busiest = max(range(len(utils)), key=lambda i: utils[i])
        fired = []
        if new:
            fired.append("task-created")
        if prev_utils is not None and any(p < IDLE_PERMILLE <= u for p, u in zip(prev_utils, utils)):
            fired.append("idle-wakeup")
        if any(t.processor == self.cpu_ids[busiest] and deltas[(t.tid, t.start)] > 0 for t in tasks):
            fired.append("busiest-group")
        now_s = (now_ns - self.t0) / 1e9
        t = time.perf_counter_ns()
        decision = None
        if not fired:
            self.zb.observe(utils, now_ns - self.t0)
        for trig in fired:
            c.checks[trig] += 1
            decision = self.zb.check(trig, utils, now_ns - self.t0)
            if decision:
                break
        c.decide_ns += time.perf_counter_ns() - t
        self.trace.append([round(now_s, 3), utils, fired, list(decision) if decision else None])
        if decision:
            c.balances += 1
            t = time.perf_counter_ns()
            frm, to = (self.cpu_ids[i] for i in decision)
            self._migrate(frm, to, tasks, usage, utils, now_s)
            c.migrate_ns += time.perf_counter_ns() - t
        return utils

    def run(self, until=None, duration_ns=None) -> int | None:
        """Sample every period until ``until()`` is true, ``duration_ns`` has passed, or a
        signal; restores every affinity before it returns or raises. Returns the signal
        number that stopped it, or None."""
        handlers = {}

        def on_signal(signum, _frame):
            # Raise once: a second signal during the restore must not interrupt it.
            if not self._stopping:
                self._stopping = True
                raise Stop(signum)

        # Signals reach only the main thread; from another thread the caller must stop us
        # through ``until`` (the restore still runs on every exit).
        if threading.current_thread() is threading.main_thread():
            for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                handlers[s] = signal.signal(s, on_signal)
        stopped = None
        try:
            try:
                self._loop(until, duration_ns)
            except Stop as e:
                stopped = e.signum
            finally:
                self._stopping = True  # from here on, signals are only noted
                self.restore()
        except Stop as e:
            # The one Stop landed after the loop, before or inside the restore: finish it.
            stopped = e.signum
            self.restore()
        finally:
            for s, h in handlers.items():
                signal.signal(s, h)
        return stopped

    def _loop(self, until, duration_ns):
        fault = os.environ.get("RTSCHED_BALANCE_FAULT")  # tests only: fail once an affinity is changed
        prev_cpu, prev_utils = read_cpu_times(), None
        self.prev_now = time.monotonic_ns()
        t = time.perf_counter_ns()
        tasks = self.scan()
        self.counters.scan_ns += time.perf_counter_ns() - t
        for ts in tasks:  # what exists at the start is not "newly created"
            self.seen.add((ts.tid, ts.start))
            self.prev_cpu_time[(ts.tid, ts.start)] = ts.cpu_time
            self.prev_sched[(ts.tid, ts.start)] = (ts.run_ns, ts.wait_ns)
            if self.hold and self._movable(ts) and self._set_affinity(ts, ts.processor):
                self.counters.held += 1
        next_t = time.monotonic_ns() + self.period_ns
        while True:
            if until is not None and until():
                return
            now = time.monotonic_ns()
            if duration_ns is not None and now - self.t0 >= duration_ns:
                return
            if next_t > now:
                time.sleep((next_t - now) / 1e9)
            next_t += self.period_ns
            now = time.monotonic_ns()
            if next_t < now:  # fell behind (a stalled vCPU): skip, do not burst
                next_t = now + self.period_ns
            cur_cpu = read_cpu_times()
            t = time.perf_counter_ns()
            tasks = self.scan()
            self.counters.scan_ns += time.perf_counter_ns() - t
            prev_utils = self.step(prev_cpu, cur_cpu, prev_utils, now, tasks)
            prev_cpu = cur_cpu
            if fault == "after-change" and self.original:
                raise RuntimeError("RTSCHED_BALANCE_FAULT: injected failure after an affinity change")

    def report(self) -> dict:
        c = self.counters
        return {
            "schema": "rtsched.balance/1",
            "config": dict(self.zb.config()),
            "cpus": self.cpu_ids,
            "period_ns": self.period_ns,
            "all": self.all_tasks,
            "hold": self.hold,
            "dry_run": self.dry_run,
            "elapsed_s": round((time.monotonic_ns() - self.t0) / 1e9, 3),
            "counters": {**{k: v for k, v in c.__dict__.items() if k != "checks"}, "checks": dict(c.checks),
                         "checks_total": sum(c.checks.values())},
            "scores_permille": self.zb.scores(),
            "migrations": self.migrations,
            "samples": {"columns": ["t_s", "utils_permille", "check_points", "balance"], "rows": list(self.trace)},
        }


def summary_lines(rep: dict) -> list[str]:
    c = rep["counters"]
    samples = max(1, c["samples"])
    checks = ", ".join(f"{k} {v}" for k, v in c["checks"].items())
    return [
        f"zone balancer {rep['config']['zone']} ({rep['config']['util']}), {rep['elapsed_s']:.1f} s, {c['samples']} samples every {in_unit(rep['period_ns'])} ms",
        f"checks {c['checks_total']} ({checks}); balances {c['balances']}; migrations {c['migrations']}"
        + (" (dry run: none done)" if rep["dry_run"] else "")
        + (f"; {c['no_task']} balances moved no task (the shared rule: guard, warm zone floor)" if c["no_task"] else "")
        + (f"; {c['held']} tasks held on their first CPU" if rep["hold"] else ""),
        f"deciding {in_unit(c['decide_ns'] / samples, 'us', 1)} us/sample, reading /proc {in_unit(c['scan_ns'] / samples, 'us', 0)} us/sample, "
        f"moving {in_unit(c['migrate_ns'] / max(1, c['balances']), 'us', 0)} us/balance",
        f"affinities restored {c['restored']}" + (f" ({c['restore_gone']} tasks had exited)" if c["restore_gone"] else ""),
    ]


def write_report(rep: dict, path: str):
    write_text_atomic(path, json.dumps(rep, indent=2) + "\n")


def run_balancer(options, command=(), pids=(), all_tasks=False, hold=False, period_ns=100_000_000, duration_ns=None,
                 json_out=None, quiet=False, verbose=False, dry_run=False) -> int:
    """What ``rtsched balance`` does: start ``command`` (if any), balance until it exits (or
    ``duration_ns``, or a signal), restore every affinity, stop the command, report.
    Returns the exit code: the command's, or 128 + signal."""
    if not command and not pids and not all_tasks:
        raise InputError("balance: nothing to manage: give a command after '--', --pid PID, or --all")
    if json_out:
        d = os.path.dirname(os.path.abspath(json_out))
        if not os.path.isdir(d):
            raise InputError(f"--json {json_out}: directory {d} does not exist")
    log = (lambda s: print(s, file=sys.stderr, flush=True)) if verbose else None
    b = Balancer(options, period_ns=period_ns, pids=pids, all_tasks=all_tasks, hold=hold, log=log, dry_run=dry_run)
    child = None
    if command:
        try:
            child = subprocess.Popen(list(command))
        except (FileNotFoundError, PermissionError) as e:
            raise InputError(f"command: cannot run '{command[0]}': {e.strerror}") from None
        b.add_process(child.pid)

    def until():
        if child is not None:
            return child.poll() is not None
        if pids and not all_tasks:
            return not b.procs  # every managed process has ended
        return False

    stopped, child_ended = None, False
    try:
        stopped = b.run(until=until, duration_ns=duration_ns)
        child_ended = child is not None and child.poll() is not None
    finally:
        # Affinities are restored by now; the command is ours, so it does not outlive us.
        if child is not None and child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=3)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        rep = b.report()
        if not quiet:
            for line in summary_lines(rep):
                print(line)
        if json_out:
            write_report(rep, json_out)
    if stopped is not None:
        return 128 + stopped
    if child_ended:  # else --duration ended it: that is success
        rc = child.returncode
        return rc if rc >= 0 else 128 - rc
    return 0
