"""The worker side: generate task sets and simulate each under its schedulers.

:func:`run_batch` is what a sweep runs: a whole :class:`~.keys.Batch` in one call into Rust
(generation, run options, simulation and summaries, the GIL released), its rows returned as
one Arrow table with the table's columns; :func:`run_batch_to`, on the local pool, writes that
table to a file the coordinator maps. :func:`run_unit` / :func:`run_chunk` compute the
same rows one Python dict at a time; they stay as the reference the batched path is tested
against (row for row). These functions are what an executor pickles and runs (a local process
or a Dask worker), so they live at module level and import little.
"""

from __future__ import annotations

import json

from .._core import InputError
from ..result import RUN_COUNTERS
from .keys import Batch, Span, Unit, _canon
from .spec import with_options
from .table import MODEL_COLUMNS, SUMMARY_COLUMNS

#: Row key (not a table column: the table keeps only its COLUMNS) carrying what the runner
#: warns about once per sweep: ``("tufs", scheduler)`` or ``("deadlock", scheduler, cycle)``.
WARNINGS = "_warnings"


def watch_coordinator(pid: int, every_s: float = 0.5):
    """A local pool worker's initializer: a thread that ends this process once the coordinator
    ``pid`` is gone, however it died (``kill -9`` included). Without it a worker whose
    coordinator was killed waited forever for work: every worker holds the write end of the
    pool's queue, so none ever reads its end."""
    import os
    import threading
    import time

    def watch():
        while True:
            time.sleep(every_s)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:  # a process of another user took the pid: ours is gone
                os._exit(1)

    threading.Thread(target=watch, name="rtsched-watch-coordinator", daemon=True).start()


def run_unit(u: Unit) -> list[dict]:
    """Generate the unit's task set and simulate it under each of its schedulers."""
    from .. import _core
    from ..analysis import generate_from

    g = generate_from(u.generator, u.seed, dict(u.params))
    ts = g.taskset.with_run(duration_ns=u.duration_ns, seed=u.seed, on_miss=u.on_miss)
    ts = with_options(ts, u.run, u.topology)
    base = {"sweep": u.sweep, "generator": u.label, "gen_params": _canon(u.params), "param": u.param,
            "point": float(u.point), "replication": u.replication, "taskset_seed": u.seed,
            "m": ts.cpus, "n": len(ts.task_names), "U": float(ts.utilization),
            "duration_ns": u.duration_ns, "on_miss": u.on_miss, "run": u.run or "", "topology": u.topology or ""}
    cycle = ts.lock_order_cycle
    rows = []
    for sched, key in u.schedulers:
        row = dict(base, key=key, scheduler=sched, schema=_core.RESULTS_SCHEMA)
        notes = _warnings(ts, sched, cycle)
        if notes:
            row[WARNINGS] = notes
        try:
            too_long = _core.sweep_row_too_long(ts, sched)
            if too_long:
                raise InputError(too_long)
            raw = _core.simulate(ts, sched, False)
        except InputError as e:
            # The scheduler was probed on a trivial set, so this is about this task set: a
            # partitioner that found no partition, a deadlock the scheduler did not resolve,
            # or a run that would take hours (not run).
            status = ("too-long" if str(e).startswith(_core.SWEEP_TOO_LONG) else
                      "deadlock" if "deadlock at" in str(e) else "partition-failed")
            row.update(status=status, error=str(e), schedulable=False)
        else:
            doc = json.loads(raw.to_json(False))
            total = doc["total"]
            row.update({c: total[c] for c in SUMMARY_COLUMNS if c in total})
            row.update({c: doc["counters"][c] for c in RUN_COUNTERS})
            row.update(_model_columns(total, doc["counters"]))
            row.update(status="ok", error="", schedulable=total["missed"] == 0)
        rows.append(row)
    return rows


def _model_columns(total: dict, counters: dict) -> dict:
    """The cache and overhead models' totals as flat columns (``table.MODEL_COLUMNS``)."""
    l1, l2, llc = total.get("misses") or (0, 0, 0)
    cache = counters.get("cache") or {}
    ovh = counters.get("overheads") or {}
    # CPU time the overheads took (release latency delays a job but takes no CPU).
    cpu = sum(v for k, v in ovh.items() if k != "release_ns" and isinstance(v, int))
    out = {"misses_l1": l1, "misses_l2": l2, "misses_llc": llc, "invalidations": cache.get("invalidations", 0),
           "evictions": cache.get("evictions", 0), "overhead_ns": cpu}
    assert set(out) == set(MODEL_COLUMNS)
    return out


def _warnings(ts, sched, cycle) -> tuple:
    if not ts.has_tufs and not cycle:
        return ()
    from ..checks import traits

    tufs, resolves = traits(ts, sched)
    out = []
    if ts.has_tufs and not tufs:
        out.append(("tufs", sched))
    if cycle and not resolves:
        out.append(("deadlock", sched, cycle))
    return tuple(out)


def run_chunk(chunk: list[Unit]) -> list[dict]:
    """What an executor runs: a few units at once (so tiny simulations amortise the round trip)."""
    out = []
    for u in chunk:
        out.extend(run_unit(u))
    return out


def run_batch(b: Batch | Span):
    """Compute a batch (a :class:`~.keys.Span` is made into one here): returns ``(table, notes, seconds)`` — its rows as a ``pyarrow.Table``
    with the table's COLUMNS (in the batch's row order), the distinct ``WARNINGS`` notes, and
    the seconds this call took (the runner sizes the next batches by it)."""
    import time

    from .. import _core
    from .table import batch_table

    t = time.perf_counter()
    if isinstance(b, Span):
        b = b.batch()
    names = [g[0] for g in b.generators]
    cols = _core.sweep_batch(list(b.schedulers), names, b.set_gen, b.set_params, b.set_seed, b.todo, b.duration_ns,
                             b.on_miss, b.run, b.topology)
    if cols["rows"] != b.rows:
        raise RuntimeError(f"a batch of {b.rows} rows computed {cols['rows']}")
    table = batch_table(b, cols)
    return table, tuple(cols["warnings"]), time.perf_counter() - t


def run_batch_to(b: Batch | Span, where: str):
    """:func:`run_batch` on a worker of the coordinator's machine (the local pool): the table
    is written as an Arrow IPC file (uncompressed, not fsynced) to a new temporary file in
    ``where``, the table's parts directory, and its path returned in place of the table.

    Why: a pool returns a result by pickling it through a pipe, and the worker waits until the
    coordinator has read it all: for 12,000 rows (6 MB) an 18 ms round trip here, 7% of the
    rows' computation. Written to a file it takes about 3 ms, the coordinator maps it without
    a copy, and the file becomes a part as it is (``table._Sink``). A file left by a worker
    killed while writing it is a ``.rtsched-*.tmp`` that consolidation removes."""
    import time

    from .table import write_transfer

    t = time.perf_counter()
    table, notes, _ = run_batch(b)
    path = write_transfer(table, where)
    return path, notes, time.perf_counter() - t
