"""The worker side: generate task sets and simulate each under its schedulers.

:func:`run_batch` is what a sweep runs, whatever the executor (in this process, the local
pool, Dask): a whole :class:`~.keys.Batch` in one call into Rust (``_core.sweep_batch``, the
one implementation of a row: generation, run options, simulation, summaries, status and
notes, the GIL released), its rows returned as one Arrow table with the table's columns;
:func:`run_batch_to`, on the local pool, writes that table to a file the coordinator maps.
These functions are what an executor pickles and runs (a local process or a Dask worker), so
they live at module level and import little.
"""

from __future__ import annotations

from .keys import Batch, Span


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


def run_batch(b: Batch | Span):
    """Compute a batch (a :class:`~.keys.Span` is made into one here): returns ``(table, notes,
    seconds)`` — its rows as a ``pyarrow.Table`` with the table's COLUMNS (in the batch's row
    order), the distinct notes of its rows (``("tufs", scheduler)``, ``("deadlock", scheduler,
    cycle)``: what the runner warns about once per sweep), and the seconds this call took (the
    runner sizes the next batches by it)."""
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
