"""Real runs for the reproductions: generated task sets on this machine's cores, one after another.

Each (task set, backend) pair runs once for ``duration``; its row (the results summary, the run
counters, host steal, or why it did not run) is appended to ``OUT/real[-quick].csv`` as soon as
it ends (rewritten atomically), so an interrupted reproduction resumes where it stopped. Real
runs never overlap: two at once would share the CPUs they measure.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

#: The run counters a row carries beside the summary (0 where a substrate does not count them).
COUNTERS = ["steals", "steal_attempts", "failed_steals", "priority_inversions", "priority_inversion_ns"]
#: The rows' layout; rows of another version (an older rtsched) are run again, not reused.
ROW_VERSION = 4
SUMMARY = ["jobs", "completed", "missed", "aborted", "dsr", "aur", "max_tardiness_ns", "mean_response_ns", "max_response_ns",
           "preemptions", "migrations", "context_switches", "exec_inflation", "ipc_proxy"]


def can_run_real() -> tuple[bool, str]:
    """Whether real runs can happen here, and if not why (they need root or CAP_SYS_NICE)."""
    if not hasattr(os, "geteuid"):
        return False, "real runs need Linux"
    if os.geteuid() != 0:
        return False, "real runs need root (SCHED_FIFO / SCHED_DEADLINE threads); rerun as root"
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
