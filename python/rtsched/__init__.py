"""rtsched — multicore real-time scheduling.

Simulate, analyse and really run (on Linux's threads and, through sched_ext, in its kernel)
the schedulers of five papers on one results schema. The Rust core does the work; this package is the user-facing API::

    import rtsched
    ts = rtsched.load_taskset("examples/dhall.yaml")
    r = rtsched.simulate(ts, scheduler="gedf", duration="1s", seed=1)
    r.summary["dsr"], r.jobs.head()
    r.gantt("gantt.png")
"""

from __future__ import annotations

# plots: the standard figures (matplotlib is imported only when drawing); sweep: the package
# rtsched.sweep, which called runs a sweep (rtsched.sweep(spec) is rtsched.sweep.sweep(spec)).
from . import plots, sweep
from ._core import InputError, PrivilegeError, RunFailed, TaskSet, parse_duration, parse_scheduler, parse_taskset
from .analysis import analyze, chain_bounds, generate, generators, partition
from .checks import LoadWarning, set_warnings
from .result import NotRun, Result, read_jobs, run, simulate
from .taskset import load_taskset

__all__ = [
    "analyze",
    "chain_bounds",
    "generate",
    "generators",
    "partition",
    "InputError",
    "LoadWarning",
    "NotRun",
    "PrivilegeError",
    "RunFailed",
    "Result",
    "TaskSet",
    "load_taskset",
    "parse_duration",
    "parse_scheduler",
    "parse_taskset",
    "plots",
    "read_jobs",
    "run",
    "schedulers",
    "simulate",
    "sweep",
]
__version__ = "0.1.0"

# ``TaskSet.warnings``: the set's load and window warnings (rtsched.checks.set_warnings), the
# texts rtsched.simulate gives as LoadWarning and the commands print.
TaskSet.warnings = property(set_warnings, doc="The task set's warnings: load (U > m, C > D, C > T, a likely unit "
                                              "mix) and counted window (shorter than its periods need), as texts.")


def schedulers() -> list[dict]:
    """Every scheduling policy: name, one-line summary, paper, options (text), and what it takes
    and needs (its ``PolicyInfo``, crates/policies/src/spec.rs): ``partition`` (None, or how a
    heuristic is named: ``bare``, ``admission``, ``own`` heuristics besides the partitioners of
    ``rtsched partition``), ``fixed_priorities``, ``takes`` (``fork_join``, ``dag``,
    ``sections``, ``fair``: the parts of a task set it runs; a set with another is refused),
    ``tufs`` (``ignored`` or ``non-increasing``), ``resolves_deadlocks``, ``grants_resources``."""
    from .policies import descriptions

    return descriptions()
