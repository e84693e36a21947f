"""Running a sweep: :func:`sweep` expands the spec into units, skips rows already written,
sends batches to an executor (a local process pool by default, or Dask's
``Client.get_executor()``), resubmits failed batches, and appends the returned columns to the
table.

Batches are sized by what a row costs: the first ones are small, then each worker's own
timing of the batches it computed sets the next size to about ``TARGET_S`` of work, so the
bar moves several times a second whatever a row costs, and a worker that dies loses at most
the batch it was computing (resubmitted whole).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import functools
import itertools
import os
import sys
from pathlib import Path

from .._core import InputError
from .keys import Batcher, Spans, units
from .progress import Progress
from .spec import Spec, load_spec, parse_spec
from .table import _fmt, _read_all, _Sink, consolidate, current_schema, parts_dir, stale
from .worker import run_batch, run_batch_to, watch_coordinator

#: Seconds of work a batch aims at: long enough that the round trip (a process pool's pickle,
#: a Dask task) and the per-batch costs stay small beside it, short enough that the bar moves
#: and a lost batch costs little.
TARGET_S = 0.3
#: The first batches' rows, before any timing; a batch never has more than MAX_ROWS.
FIRST_ROWS, MAX_ROWS = 64, 200_000
#: Seconds of work below which the last batches are not cut (a round trip costs milliseconds).
MIN_S = 0.05


class InProcess(cf.Executor):
    """An executor that runs each batch when it is submitted, in the calling process: a sweep
    without workers (``sweep(spec, executor=InProcess())``). The one-process reference of
    ``benchmarks/sweep_scale.py``, and the profile-guided build's training sweep."""

    _max_workers = 1

    def submit(self, fn, /, *args, **kwargs):
        f = cf.Future()
        try:
            f.set_result(fn(*args, **kwargs))
        except BaseException as e:  # noqa: BLE001 - delivered through the future, as any executor does
            f.set_exception(e)
        return f


class _Sizer:
    """Rows per batch from the workers' timings: about TARGET_S of work, growing at most 4x
    per completed batch (the first timings include fixed costs and a cold start), and at most
    an even share of what is left (but MIN_S of work), so the end of a sweep keeps every
    worker busy."""

    def __init__(self, workers):
        self.workers, self.rows, self.per_row = workers, FIRST_ROWS, None

    def measured(self, rows, seconds):
        if rows and seconds > 0:
            x = seconds / rows
            self.per_row = x if self.per_row is None else 0.5 * self.per_row + 0.5 * x
            self.rows = int(min(4 * self.rows, TARGET_S / self.per_row, MAX_ROWS))

    def next(self, left):
        share = -(-left // (2 * self.workers))  # ceil: the tail is cut into even pieces
        floor = 1 if self.per_row is None else int(MIN_S / self.per_row)
        return max(1, min(self.rows, max(share, floor)))


def _workers(executor):
    n = getattr(executor, "_max_workers", None)
    if n:
        return n
    client = getattr(executor, "_client", None)
    if client is not None:
        try:
            return max(1, sum(client.nthreads().values()))
        except Exception:  # noqa: BLE001 - only a sizing hint
            pass
    return os.cpu_count() or 1


def sweep(spec, executor=None, output=None, progress=None, workers=None, batch_rows=5000, batch_seconds=10.0,
          resume=True):
    """Run a sweep and return its rows (a pandas DataFrame, sorted by ``key``).

    ``spec``: a :class:`Spec`, a dict, or a path to a YAML/JSON spec (docs/sweeps.md).
    ``executor``: any ``concurrent.futures.Executor`` — default a ``ProcessPoolExecutor`` on
    ``workers`` processes (default: every core); for Dask, ``Client(...).get_executor()``.
    ``output``: a ``.parquet`` or ``.csv`` table (default the spec's ``output``; None keeps the
    rows in memory only). Rows already in the table (or in part files of an interrupted run)
    are skipped when ``resume`` — unless computed under an older results schema, which lacks
    columns added since: those are recomputed and replaced. New rows are appended, batch by
    batch, atomically.
    ``progress``: None (a bar on stderr when it is a terminal), True, False, or a
    :class:`Progress`.
    """
    if isinstance(spec, (str, os.PathLike)):
        spec = load_spec(spec)
    elif isinstance(spec, dict):
        spec = parse_spec(spec)
    elif not isinstance(spec, Spec):
        raise InputError(f"sweep: expected a spec (path, dict or Spec), got {type(spec).__name__}")
    output = os.fspath(output) if output is not None else spec.output
    if output is None:
        return _sweep(spec, executor, None, progress, workers, batch_rows, batch_seconds, resume)
    _fmt(output)
    with table_lock(output):
        return _sweep(spec, executor, output, progress, workers, batch_rows, batch_seconds, resume)


@contextlib.contextmanager
def table_lock(output):
    """One sweep at a time writes a table: an advisory lock on ``TABLE.lock`` (flock), held for
    the whole sweep; a second sweep into the same table is refused at once (InputError, exit
    2) instead of deleting the first one's part files when it consolidates. The lock file is
    removed when the sweep ends, however it ends (an error, Ctrl-C), while the lock is still
    held: a sweep that opened the file before it went and locks it after finds, on checking,
    that the path no longer names the file it locked, and opens and locks the new one (so two
    sweeps never both hold a lock). A run that dies releases the lock with its last descriptor
    and leaves the file, which the next sweep takes over."""
    import fcntl

    lock = os.fspath(output) + ".lock"
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            finally:
                os.close(fd)
            raise InputError(f"{output}: another sweep (pid {holder}) is writing this table now; wait for it to end, "
                             "or give this one another output") from None
        if os.path.exists(lock) and os.path.samestat(os.fstat(fd), os.stat(lock)):
            break
        os.close(fd)  # the file was replaced while we waited for it: lock the new one
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        try:
            os.unlink(lock)  # still locked: see the docstring
        except FileNotFoundError:
            pass
        finally:
            os.close(fd)


def _sweep(spec, executor, output, progress, workers, batch_rows, batch_seconds, resume):
    done, outdated, others = set(), set(), False
    if output is not None and resume:
        existing, _ = _read_all(output)
        old = stale(existing)
        done, outdated, others = set(existing["key"][~old]), set(existing["key"][old]), len(existing) > 0
    elif output is not None:
        for p in [Path(output), *(parts_dir(output).glob("part-*") if parts_dir(output).is_dir() else [])]:
            p.unlink(missing_ok=True)
    if others:
        # Rows already there (this spec's, another's): find what is left, and this spec's keys.
        every = units(spec)
        keys = {k for u in every for _, k in u.schedulers}
        todo = []
        for u in every:
            left = [(s, k) for s, k in u.schedulers if k not in done]
            if left:
                u.schedulers = left
                todo.append(u)
        total_rows = sum(len(u.schedulers) for u in todo)
    else:
        # Nothing there: every row is to run, and the table will hold only this spec's rows.
        # Batches go as spans of coordinates; the workers make the units, seeds and keys.
        keys, todo, total_rows = None, None, spec.size
    redo = len(keys & outdated) if outdated else 0
    if redo and progress is not False:
        print(f"sweep {spec.name}: {redo} rows in {output} are from an older results schema "
              f"(not {current_schema()}): recomputing them", file=sys.stderr)
    if not total_rows and progress is not False:
        print(f"sweep {spec.name}: all {spec.size} rows already in {output}; nothing to run", file=sys.stderr)
        progress = False
    if isinstance(progress, Progress):
        bar = progress
        bar.total = total_rows
    else:
        bar = Progress(total_rows, label=f"sweep {spec.name}",
                       enabled=sys.stderr.isatty() if progress is None else bool(progress))
    # A fresh Parquet table is encoded while the sweep runs (table._Stream).
    sink = _Sink(output, batch_rows, batch_seconds, stream=todo is None and bool(total_rows))
    fn = run_batch
    if output is not None and (executor is None or isinstance(executor, cf.ProcessPoolExecutor)):
        # Workers on this machine: each writes its batch to a file the sink maps and keeps as
        # a part, rather than pickling it through the pool's pipe (worker.run_batch_to).
        parts_dir(output).mkdir(parents=True, exist_ok=True)
        fn = functools.partial(run_batch_to, where=os.fspath(parts_dir(output)))
    ran = False
    try:
        if total_rows:
            batcher = Spans(spec) if todo is None else Batcher(todo, spec.runs, total_rows)
            _run(batcher, spec.retries, executor, workers, sink, bar, fn=fn)
        ran = True
    finally:
        if not ran:
            sink.flush()  # whatever completed is kept, even on an interrupt
            sink.abandon()
        bar.close()  # ends the bar's line before any error message
        for w in sweep_warnings(spec.name, sink.notes):
            print(w, file=sys.stderr)
    if output is None:
        return sink.frame()
    table = consolidate(output, sink=sink)  # the rows still buffered go straight into the table
    return table if keys is None else table[table["key"].isin(keys)].reset_index(drop=True)


def sweep_warnings(name, notes) -> list[str]:
    """The workers' notes (:func:`~.worker.run_batch`) as one warning per kind for the whole sweep."""
    from ..checks import deadlock_warning, tuf_warning

    tufs = sorted({n[1] for n in notes if n[0] == "tufs"})
    dl = sorted({n[1] for n in notes if n[0] == "deadlock"})
    out = []
    if tufs:
        out.append(tuf_warning(f"sweep {name}: generated task sets have", tufs))
    if dl:
        cycle = min(n[2] for n in notes if n[0] == "deadlock")
        out.append(deadlock_warning(f"sweep {name}: generated task sets can deadlock, e.g.", cycle, dl,
                                    "a run that deadlocks gets status 'deadlock' and no metrics"))
    return out


def _context(first: bool):
    """How the pool's workers start. The first pool is forked from the coordinator when it has
    one thread: nothing can hold a lock across that fork, and the workers start at once with
    every module already imported (a fork server costs 0.3-0.4 s before the first batch: a
    new interpreter, its imports, then each worker's). A replacement pool — or any pool of a
    coordinator with other threads (a notebook's, a caller's) — starts from a fork server:
    forking while another thread (the broken pool's) holds a lock can leave the new worker
    deadlocked (a sweep hung so after a worker was killed)."""
    import multiprocessing as mp
    import threading

    if first and threading.active_count() == 1:
        return mp.get_context("fork")
    ctx = mp.get_context("forkserver")
    # The server imports the worker's modules once; every worker forked from it has them.
    ctx.set_forkserver_preload(["rtsched.sweep.worker"])
    return ctx


def _run(batcher, retries, executor, workers, sink, bar, fn=run_batch):
    """Send ``batcher``'s batches to ``executor`` (``fn(batch)`` each: what ``run_batch``
    returns), resubmit failures, hand the results to ``sink`` and ``bar``."""
    own = executor is None
    nworkers = (workers or os.cpu_count() or 1) if own else _workers(executor)
    if own:
        executor = cf.ProcessPoolExecutor(max_workers=nworkers, mp_context=_context(first=True),
                                          initializer=watch_coordinator, initargs=(os.getpid(),))
    # A Dask executor would hash every argument to name the task (pure=True): a batch is new work.
    extra = {"pure": False} if getattr(executor, "_client", None) is not None else {}
    sizer = _Sizer(nworkers)
    pending = {}  # future -> batch
    tries = {}  # id(batch) -> failures so far
    order, cut = {}, itertools.count()  # id(batch) -> its number in the order batches were cut (the sink's key order)

    def replace_pool(lost):
        # Every future of a broken pool fails: replace the pool, resubmit them all. (A pool
        # breaks as a whole when one worker dies, seen by a result or by the next submit.)
        nonlocal executor
        lost = lost + [pending.pop(f) for f in list(pending)]
        executor.shutdown(wait=False, cancel_futures=True)
        executor = cf.ProcessPoolExecutor(max_workers=nworkers, mp_context=_context(first=False),
                                          initializer=watch_coordinator, initargs=(os.getpid(),))
        bar.update(note=f"a worker died: resubmitted {len(lost)} batches", force=True)
        for c in lost:
            submit(c)

    def submit(b):
        try:
            pending[executor.submit(fn, b, **extra)] = b
        except cf.process.BrokenProcessPool:
            if not own:
                raise
            replace_pool([b])

    def refill():
        # Two batches per worker in flight: one computing, one queued behind it.
        while batcher and len(pending) < 2 * nworkers:
            b = batcher.take(sizer.next(batcher.left))
            tries[id(b)] = 0
            order[id(b)] = next(cut)
            submit(b)

    try:
        refill()
        while pending:
            finished, _ = cf.wait(list(pending), timeout=1.0, return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                if fut not in pending:  # resubmitted with a replaced pool below
                    continue
                b = pending.pop(fut)
                try:
                    table, notes, seconds = fut.result()
                except Exception as e:  # noqa: BLE001 - a worker died or failed: retry the batch
                    tries[id(b)] += 1
                    if tries[id(b)] > retries:
                        raise RuntimeError(f"a batch of {b.rows} rows ({b.sets} task sets) failed {tries[id(b)]} times; "
                                           f"last error: {type(e).__name__}: {e}") from e
                    if own and isinstance(e, cf.process.BrokenProcessPool):
                        replace_pool([b])
                    else:
                        bar.update(note=f"retrying a batch after {type(e).__name__}", force=True)
                        submit(b)
                    continue
                del tries[id(b)]
                sizer.measured(b.rows, seconds)
                sink.add(table, notes, order.pop(id(b)))
                bar.update(b.rows)
            refill()
            bar.update()
    except BaseException:
        for f in pending:
            f.cancel()
        raise
    finally:
        if own:
            executor.shutdown(wait=True, cancel_futures=True)
