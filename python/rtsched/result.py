"""Run results in the one results schema, as Python objects and pandas DataFrames."""

from __future__ import annotations

import json
import numbers
from functools import cached_property
from pathlib import Path

from . import _core
from ._core import InputError, TaskSet


def duration_ns(value) -> int:
    """A duration as users write it — a number of ms, or a string with a unit — in ns."""
    if isinstance(value, bool):
        raise InputError(f"duration: expected a number (ms) or a string like '2s', got {value!r}")
    if isinstance(value, numbers.Integral):
        return _core.parse_duration(str(int(value)))
    if isinstance(value, numbers.Real):
        return _core.parse_duration(repr(float(value)))
    if isinstance(value, str):
        return _core.parse_duration(value)
    raise InputError(f"duration: expected a number (ms) or a string like '2s', got {value!r}")


def _as_taskset(taskset) -> TaskSet:
    if isinstance(taskset, TaskSet):
        return taskset
    if isinstance(taskset, (str, Path)):
        return _core.load_taskset(str(taskset))
    raise InputError(f"expected a TaskSet or a path to a task-set file, got {type(taskset).__name__}")


#: Run-level counters (``counters`` in the results document) that :attr:`Result.summary` adds
#: to the total summary: decisions asked of the policy, work stealing (0 for policies that do
#: not steal), priority inversions, and deadlocks the policy resolved by an abort
#: (docs/semantics.md "Run-level counters").
RUN_COUNTERS = ("scheduler_invocations", "steals", "steal_attempts", "failed_steals", "priority_inversions",
                "priority_inversion_ns", "deadlocks")


class Result:
    """One run. ``summary`` is the total summary (a dict), ``tasks`` the per-task summaries and
    ``jobs`` the per-job records (pandas DataFrames); ``gantt()`` draws the schedule."""

    def __init__(self, raw: _core.RunResult, taskset: TaskSet):
        self.raw = raw
        self.taskset = taskset

    @property
    def scheduler(self) -> str:
        return self.raw.scheduler

    @property
    def substrate(self) -> str:
        return self.raw.substrate

    @cached_property
    def document(self) -> dict:
        """The results document (header, counters, total and per-task summaries)."""
        return json.loads(self.raw.to_json(False))

    @property
    def measurements(self) -> dict:
        """Real runs: decision overhead, release jitter, preemption latency, kernel counters.
        Real testbed runs and simulations with ``measure_policy=True``: the time the policy
        took per decision (``policy_ns_per_invocation``, ``policy_ns_max``, ``policy_ns_total``)."""
        return dict(self.raw.measurements)

    @property
    def counters(self) -> dict:
        """Run-level counters: scheduler invocations, events (simulator), releases, steals,
        steal attempts, failed steals, priority inversions and the time they held (ns)."""
        return dict(self.document["counters"])

    @property
    def summary(self) -> dict:
        """Total summary: jobs, met, missed, aborted, dsr, utility (``accrued_utility``,
        ``possible_utility``, ``aur`` = accrued / possible), tardiness, response times,
        preemptions, migrations, context switches, and the run-level counters of
        ``RUN_COUNTERS``."""
        d = dict(self.document["total"])
        c = self.document["counters"]
        for k in RUN_COUNTERS:
            d[k] = c.get(k, 0)
        return d

    @cached_property
    def tasks(self):
        import pandas as pd

        return pd.DataFrame(self.document["tasks"]).set_index("name")

    @cached_property
    def jobs(self):
        """Per-job records (times in ns; ``cpus`` is the list of CPUs the job ran on)."""
        import pandas as pd

        df = pd.DataFrame(self.raw.jobs_columns())
        for c in ("start_ns", "finish_ns", "response_ns"):
            df[c] = df[c].astype("Int64")
        return df

    @cached_property
    def intervals(self):
        """Execution intervals (only if the run recorded them: ``simulate(..., trace=True)``)."""
        import pandas as pd

        return pd.DataFrame(self.raw.intervals_columns())

    def to_json(self, path=None, jobs: bool = True):
        """The results document as a dict, or written atomically to ``path``."""
        if path is None:
            return json.loads(self.raw.to_json(jobs))
        _core.write_results_json([self.raw], str(path))

    def gantt(self, path=None, start=None, end=None, ax=None):
        """Draw a Gantt chart (one row per CPU). Needs a run with ``trace=True``."""
        from .gantt import gantt

        return gantt([self], path=path, start=start, end=end, ax=ax)

    def __repr__(self) -> str:
        s = self.summary
        return (f"<Result {self.scheduler} ({self.substrate}): {s['jobs']} jobs, {s['missed']} missed, DSR {s['dsr']:.4f}, "
                f"AUR {s.get('aur', float('nan')):.4f}>")


def simulate(taskset, scheduler: str = "gedf", duration=None, seed=None, on_miss=None, trace: bool = False,
             measure_policy: bool = False) -> Result:
    """Simulate ``taskset`` (a :class:`TaskSet` or a file path) under ``scheduler``.

    ``duration`` (number in ms, or "2s"), ``seed`` and ``on_miss`` override the file's run
    options. ``trace=True`` records execution intervals (for ``gantt()`` and Perfetto traces).
    ``measure_policy=True`` times every decision of the policy (wall-clock, so not
    deterministic): ``measurements["policy_ns_per_invocation"]``, ``policy_ns_max``,
    ``policy_ns_total``. The GIL is released while the simulation runs. A deadlock the
    scheduler does not resolve raises :class:`InputError` naming the jobs and resources.
    """
    ts = _as_taskset(taskset)
    if duration is not None or seed is not None or on_miss is not None:
        if seed is not None and (not isinstance(seed, numbers.Integral) or seed < 0):
            raise InputError(f"seed: expected a non-negative integer, got {seed!r}")
        ts = ts.with_run(
            duration_ns=None if duration is None else duration_ns(duration),
            seed=None if seed is None else int(seed),
            on_miss=on_miss,
        )
    return Result(_core.simulate(ts, scheduler, trace, measure_policy=bool(measure_policy)), ts)


def run(taskset, backend: str = "testbed:gedf", duration=None, seed=None, on_miss=None, allow_overload: bool = False,
        model: str = "stw", trace: bool = True) -> Result:
    """Run ``taskset`` for real on Linux.

    ``backend``: ``kernel:deadline[:reclaim]``, ``kernel:fifo[:rm|:dm|:file]``, ``kernel:other``
    (each with an optional ``:pi``: critical sections lock mutexes with priority inheritance) or
    ``testbed:POLICY`` (any rtsched policy enforced on real cores). ``model``: the testbed's
    global model, ``stw`` (stop-the-world) or ``concurrent`` (application-concurrent).
    Needs real-time privilege (root or CAP_SYS_NICE); raises ``PrivilegeError`` otherwise,
    having run nothing. Returns a :class:`Result` in the same schema as :func:`simulate`, with
    ``measurements`` (decision overhead, release jitter, preemption latency).
    """
    ts = _as_taskset(taskset)
    if duration is not None or seed is not None or on_miss is not None:
        ts = ts.with_run(duration_ns=None if duration is None else duration_ns(duration),
                         seed=None if seed is None else int(seed), on_miss=on_miss)
    return Result(_core.run_real(ts, backend, allow_overload, model, trace), ts)
