"""Real runs for the reproductions: generated task sets on this machine's cores, one after another.

Each (task set, backend) pair runs once for ``duration``; its row (the results summary, the run
counters, host steal, or why it did not run) is appended to ``OUT/real[-quick].csv`` as soon as
it ends (rewritten atomically), so an interrupted reproduction resumes where it stopped. Real
runs never overlap: two at once would share the CPUs they measure.

Real runs start real-time threads on this machine's CPUs, so a reproduction makes them only
when asked (``rtsched reproduce NAME --real``), as root too. It first prints its plan (a list
of :class:`RealPart`: what it will run, on which CPUs, at which policy and priority, for how
long). Without ``--real`` the report's real-core sections say they were not run and give the
command that runs them (:func:`not_run`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

#: The run counters a row carries beside the summary (0 where a substrate does not count them).
COUNTERS = ["steals", "steal_attempts", "failed_steals", "priority_inversions", "priority_inversion_ns"]
#: The rows' layout; rows of another version (an older rtsched) are run again, not reused.
ROW_VERSION = 4
SUMMARY = ["jobs", "completed", "missed", "aborted", "dsr", "aur", "max_tardiness_ns", "mean_response_ns", "max_response_ns",
           "preemptions", "migrations", "context_switches", "exec_inflation", "ipc_proxy"]


#: The testbed's thread priorities (crates/linux/src/testbed.rs WORKER_PRIO, userspace.rs DECIDER_PRIO;
#: tests/test_reproduce.py keeps them equal).
TESTBED_WORKER_PRIO, TESTBED_DECIDER_PRIO = 50, 60


@dataclass(frozen=True)
class RealPart:
    """One part of a reproduction's real runs, for the plan printed before any of them starts:
    ``runs`` runs of ``seconds`` each under every backend of ``backends`` (or, for a part that
    is not a task set on a backend, what ``policy`` says), on ``cpus`` (m: CPUs 0..m-1)."""

    what: str
    backends: tuple = ()
    runs: int = 1
    seconds: float = 1.0
    cpus: int | str = 2
    policy: str = ""

    def total_seconds(self) -> float:
        return self.runs * self.seconds * max(1, len(self.backends))


def policy_of(backend: str) -> str:
    """The scheduling policy and priority of a backend's threads, in words (docs/real-runs.md)."""
    kind, _, rest = backend.partition(":")
    if kind == "testbed":
        return (f"SCHED_FIFO {TESTBED_WORKER_PRIO} (one worker pinned to each CPU) and SCHED_FIFO {TESTBED_DECIDER_PRIO} "
                f"(the thread where {rest or 'the policy'} decides)")
    if rest.startswith("deadline"):
        return "SCHED_DEADLINE (a reservation per thread: runtime = WCET + max(250 us, 10%), the task's deadline and period)"
    if rest.startswith("fifo"):
        return "SCHED_FIFO 10-89 (a thread per task, priorities in RM order)"
    if rest.startswith("other"):
        return "SCHED_OTHER (no real-time priority)"
    if rest.startswith("scx"):
        return "SCHED_EXT (rtsched's sched_ext scheduler, docs/kernel.md)"
    return "see docs/real-runs.md"


def _cpus(c) -> str:
    if isinstance(c, int):
        return "CPU 0" if c == 1 else f"CPUs 0-{c - 1}"
    return str(c)


def _dur(s: float) -> str:
    if s >= 90:
        return f"{s / 60:.1f} min"
    return f"{s:g} s" if s >= 1 else f"{s * 1000:.0f} ms"


def plan_text(name: str, parts, quick: bool = False) -> str:
    """What ``rtsched reproduce NAME --real`` is about to run, part by part, and how long."""
    lines = [f"rtsched reproduce {name}{' --quick' if quick else ''} --real: after the simulations, real runs on this "
             f"machine ({os.cpu_count() or 1} CPUs online), one at a time:"]
    for p in parts:
        on = f" under each of {', '.join(p.backends)}" if p.backends else ""
        lines.append(f"  - {p.what}: {p.runs} run(s) of {_dur(p.seconds)}{on}, on {_cpus(p.cpus)}")
        lines += [f"      {b}: {policy_of(b)}" for b in p.backends]
        if p.policy:
            lines.append(f"      {p.policy}")
    total = sum(p.total_seconds() for p in parts)
    lines.append(f"  about {_dur(total)} of real runs in all (Ctrl-C stops them)")
    return "\n".join(lines)


def not_run(name: str, quick: bool) -> str:
    """Why real runs were not made when they were not asked for, and the command that makes them
    (a report writes "Not run: " before it)."""
    return ("real runs start real-time threads on this machine's CPUs, so they are made only when asked; "
            f"to run them (as root): `sudo rtsched reproduce {name}{' --quick' if quick else ''} --real`")


def can_run_real() -> tuple[bool, str]:
    """Whether real runs can happen here, and if not why (they need root or CAP_SYS_NICE). Tried
    as the real runs do (crates/linux/src/sys.rs ``check_rt_privilege``): SCHED_FIFO 1 on a
    short-lived thread, so nothing of the caller changes."""
    import threading

    if not hasattr(os, "sched_setscheduler") or not hasattr(os, "sched_getaffinity"):
        return False, "real runs need Linux"
    if len(os.sched_getaffinity(0)) < 2:
        return False, "real runs need at least 2 CPUs"
    err = []

    def probe():
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        except OSError as e:
            err.append(e)

    t = threading.Thread(target=probe, name="rtsched-rt-probe")
    t.start()
    t.join()
    if err:
        return False, (f"real-time scheduling is not permitted here ({err[0].strerror}): real runs need root or CAP_SYS_NICE "
                       "(SCHED_FIFO / SCHED_DEADLINE threads); rerun as root")
    return True, ""


def run_real_sets(units, backends, duration: str, out_csv: Path, label="real runs", progress=True, **run_options):
    """Run every ``(key, taskset)`` of ``units`` under each backend; returns a DataFrame.

    ``key`` is a dict of coordinates (e.g. window and seed) copied into each row. A run the
    backend refuses (admission control, a partition that does not fit) is a row with
    ``status='refused'`` and the message in ``error``; nothing is retried silently.
    ``run_options`` go to :func:`rtsched.run` (e.g. ``allow_overload=True``)."""
    import pandas as pd

    import rtsched
    from rtsched.sweep.progress import Progress

    from .._io import write_text_atomic

    out_csv = Path(out_csv)
    done = pd.read_csv(out_csv) if out_csv.exists() else pd.DataFrame()
    if len(done):
        done = done[done["row_version"] == ROW_VERSION] if "row_version" in done.columns else done.iloc[0:0]
    have = set()
    if len(done):
        have = {(json.dumps({k: _py(r[k]) for k in units[0][0]}, sort_keys=True), r["backend"], r["duration"])
                for _, r in done.iterrows()} if units else set()
    rows = done.to_dict("records") if len(done) else []
    todo = [(key, ts, b) for key, ts in units for b in backends
            if (json.dumps(key, sort_keys=True), b, duration) not in have]
    bar = Progress(len(todo), label=label, enabled=progress and bool(todo))
    try:
        for key, ts, backend in todo:
            row = dict(key, backend=backend, duration=duration, row_version=ROW_VERSION)
            try:
                r = rtsched.run(ts, backend=backend, duration=duration, **run_options)
            except (rtsched.InputError, rtsched.RunFailed) as e:
                row.update(status="refused", error=str(e).splitlines()[0][:500])
            else:
                doc = r.document
                row.update({k: _num(doc["total"].get(k)) for k in SUMMARY})
                # null (kernel runs: not measured) becomes NaN, shown as n/a.
                row.update({k: _num(doc.get("counters", {}).get(k)) for k in COUNTERS})
                row.update(status="ok", error="", host_steal_ms=r.measurements.get("host.steal_ms", 0.0))
            rows.append(row)
            write_text_atomic(os.fspath(out_csv), pd.DataFrame(rows).to_csv(index=False))
            bar.update(1, note=f"{key} {backend}")
    finally:
        bar.close()
    return pd.DataFrame(rows)


def _num(v):
    return float("nan") if v is None else v


def _py(v):
    """A CSV cell back as the Python value a key was written with (ints stay ints)."""
    try:
        f = float(v)
        return int(f) if f.is_integer() else f
    except (TypeError, ValueError):
        return v
