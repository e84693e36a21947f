"""Sweeps: generator × utilisation points × schedulers × seeds, one row per (task set, scheduler).

A sweep spec (YAML or a dict; docs/sweeps.md) names a task-set generator and its parameters,
the utilisation points, the schedulers, the replications (seeds) and the simulated duration.
:func:`sweep` expands it into *units* — one generated task set with the schedulers still to
run on it — sends them in batches to a ``concurrent.futures`` executor (by default a local
process pool on every core; a Dask cluster through ``Client.get_executor()``), and collects
one row per (task set, scheduler). A worker computes a whole batch in one call into Rust and
returns its rows as columns (an Arrow table), appended to the table as they are.

Overview of the guarantees and where each is kept:

- **Deterministic.** A task set's seed is a hash of the spec seed and its coordinates
  (generator, parameters, utilisation point, replication), never of completion order
  (:func:`taskset_seed`); every scheduler sees the same task set and the same jobs. Rows hold
  no timings. The table is sorted by ``key``.
- **Keyed.** ``key`` (:func:`row_key`) is readable and sortable —
  ``GENERATOR/POINT/REPLICATION/SCHEDULER/HASH`` — where HASH covers what else defines the row
  (parameters, duration, on_miss, spec seed, and the spec's ``run:`` options and ``topology:``
  when given), so two specs that share a row share its key.
- **Resumable.** Completed rows are written in batches to part files beside the table
  (``TABLE.parts/``), each atomically (temporary file, fsync, rename). A rerun reads the table
  and any parts, skips the keys already there, and at the end rewrites the table atomically
  with every row once, sorted, and removes the parts. A crash at any point leaves whole files.
- **No lost results.** A batch whose worker died or raised is resubmitted whole (``retries``);
  a broken local process pool is replaced. Dask reschedules a dead worker's tasks by itself.

The package, one concern per module:

- :mod:`.spec` — the spec: its model, validation and the early probe (:func:`parse_spec`, :func:`load_spec`);
- :mod:`.schema` — the spec's checks (pydantic) and the wording of their errors;
- :mod:`.generator` — one generator of a sweep, as the spec holds it and the schema builds it;
- :mod:`.keys` — task-set seeds, row keys, the units of work (:func:`units`) and the batches sent to workers;
- :mod:`.worker` — what a worker process runs (:func:`run_batch`: a batch of rows in one call into Rust);
- :mod:`.table` — the results table on disk: columns, atomic writes, part files, consolidation;
- :mod:`.progress` — the progress bar;
- :mod:`.runner` — :func:`sweep`: executors (local process pool, Dask), batch sizes, retries;
- :mod:`.cluster` — Dask settings for a sweep's cluster, and a local cluster started with them.

``rtsched.sweep`` is this package, and calling it calls :func:`sweep`: ``rtsched.sweep(spec)``
runs a sweep and ``import rtsched.sweep``, ``rtsched.sweep.parse_spec`` reach the package, one
name for both (the package's class is :class:`_CallablePackage`).
"""

from __future__ import annotations

import inspect
import sys
import types

from .cluster import DASK_CONFIG, dask_env, local_cluster
from .generator import DEFAULT_PARAM, Generator
from .keys import Batch, Batcher, Unit, all_keys, row_key, taskset_seed, units
from .progress import Progress
from .runner import sweep
from .spec import Spec, load_spec, parse_spec
from .table import (
    COLUMNS,
    COORD_COLUMNS,
    MODEL_COLUMNS,
    OUTCOME_COLUMNS,
    SUMMARY_COLUMNS,
    _read_all,  # noqa: F401 - the table and its parts as one frame (tests reach it here)
    consolidate,
    parts_dir,
    read_table,
)
from .worker import run_batch

__all__ = [
    "COLUMNS", "COORD_COLUMNS", "DASK_CONFIG", "DEFAULT_PARAM", "MODEL_COLUMNS", "OUTCOME_COLUMNS",
    "SUMMARY_COLUMNS",
    "Batch", "Batcher", "Generator", "Progress", "Spec", "Unit",
    "all_keys", "consolidate", "dask_env", "load_spec", "local_cluster", "parse_spec", "parts_dir", "read_table",
    "row_key", "run_batch", "sweep", "taskset_seed", "units",
]


class _CallablePackage(types.ModuleType):
    """A package that, called, runs its :func:`sweep` (so ``rtsched.sweep`` names both)."""

    def __call__(self, *args, **kwargs):
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
__signature__ = inspect.signature(sweep)  # inspect.signature(rtsched.sweep) is sweep's
