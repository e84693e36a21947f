"""rt-app JSON in (docs/workloads.md "rt-app → rtsched" has the mapping tables) and rt-app's logs.

Reading is rtapp_dialect.py (rt-app's JSON dialect: comments, trailing commas, repeated keys),
rtapp_read.py (the thread keys, ``global``, the legacy ``exec``/``period`` form) and
rtapp_events.py (the events as tasks, triggers, suspensions, sections and chains); this module
re-exports their entry points and reads rt-app's per-thread logs. Writing is
:mod:`rtsched.convert.rtapp_export`.
"""

from __future__ import annotations

from .._core import InputError
from .rtapp_dialect import DialectError, Obj, loads  # noqa: F401  (the reading side's entry points)
from .rtapp_read import POLICY_OF, from_rtapp, is_rtapp  # noqa: F401

#: rtsched's policies as rt-app's.
RTAPP_POLICY = {"other": "SCHED_OTHER", "fifo": "SCHED_FIFO", "rr": "SCHED_RR", "deadline": "SCHED_DEADLINE"}


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
