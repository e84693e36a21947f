"""Running a sweep: :func:`sweep` expands the spec into units, skips rows already written,
sends chunks to an executor (a local process pool by default, or Dask's
``Client.get_executor()``), resubmits failed chunks, and collects the rows into the table.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import sys
from pathlib import Path

from .._core import InputError
from .keys import units
from .progress import Progress
from .spec import Spec, load_spec, parse_spec
from .table import _frame, _fmt, _read_all, _Sink, consolidate, current_schema, parts_dir, stale
from .worker import WARNINGS, run_chunk


def _chunks(us, workers):
    # Enough chunks to keep every worker busy and to resubmit little on a failure; few enough
    # that the round trip (a process pool pickle, a Dask task) stays small beside the work.
    size = max(1, min(64, len(us) // max(1, workers * 16)))
    return [us[i:i + size] for i in range(0, len(us), size)]


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
    if output is not None:
        _fmt(output)
    done, outdated = set(), set()
    if output is not None and resume:
        existing, _ = _read_all(output)
        old = stale(existing)
        done, outdated = set(existing["key"][~old]), set(existing["key"][old])
    elif output is not None:
        for p in [Path(output), *(parts_dir(output).glob("part-*") if parts_dir(output).is_dir() else [])]:
            p.unlink(missing_ok=True)
    every = units(spec)
    keys = {k for u in every for _, k in u.schedulers}
    todo = []
    for u in every:
        left = [(s, k) for s, k in u.schedulers if k not in done]
        if left:
            u.schedulers = left
            todo.append(u)
    total_rows = sum(len(u.schedulers) for u in todo)
    redo = len(keys & outdated)
    if redo and progress is not False:
        print(f"sweep {spec.name}: {redo} rows in {output} are from an older results schema "
              f"(not {current_schema()}): recomputing them", file=sys.stderr)
    if not todo and progress is not False:
        print(f"sweep {spec.name}: all {spec.size} rows already in {output}; nothing to run", file=sys.stderr)
        progress = False
    if isinstance(progress, Progress):
        bar = progress
        bar.total = total_rows
    else:
        bar = Progress(total_rows, label=f"sweep {spec.name}",
                       enabled=sys.stderr.isatty() if progress is None else bool(progress))
    sink = _Sink(output, batch_rows, batch_seconds)
    try:
        if todo:
            _run(todo, spec.retries, executor, workers, sink, bar)
    finally:
        sink.flush()  # whatever completed is kept, even on an interrupt
        bar.close()  # ends the bar's line before any error message
        for w in sweep_warnings(spec.name, sink.notes):
            print(w, file=sys.stderr)
    if output is None:
        df = _frame(sink.rows).sort_values("key", kind="stable").reset_index(drop=True)
        return df
    table = consolidate(output)
    return table[table["key"].isin(keys)].reset_index(drop=True)


def sweep_warnings(name, notes) -> list[str]:
    """The workers' notes (``worker.WARNINGS``) as one warning per kind for the whole sweep."""
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


def _run(todo, retries, executor, workers, sink, bar):
    own = executor is None
    nworkers = (workers or os.cpu_count() or 1) if own else _workers(executor)
    if own:
        executor = cf.ProcessPoolExecutor(max_workers=nworkers)
    pending = {}  # future -> chunk
    tries = {}  # id(chunk) -> failures so far

    def submit(chunk):
        pending[executor.submit(run_chunk, chunk)] = chunk

    try:
        for c in _chunks(todo, nworkers):
            tries[id(c)] = 0
            submit(c)
        while pending:
            finished, _ = cf.wait(list(pending), timeout=1.0, return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                if fut not in pending:  # resubmitted with a replaced pool below
                    continue
                chunk = pending.pop(fut)
                try:
                    rows = fut.result()
                except Exception as e:  # noqa: BLE001 - a worker died or failed: retry the chunk
                    tries[id(chunk)] += 1
                    if tries[id(chunk)] > retries:
                        raise RuntimeError(f"a chunk of {len(chunk)} task sets failed {tries[id(chunk)]} times; "
                                           f"last error: {type(e).__name__}: {e}") from e
                    if own and isinstance(e, cf.process.BrokenProcessPool):
                        # Every future of a broken pool fails: replace the pool, resubmit them all.
                        lost = [chunk] + [pending.pop(f) for f in list(pending)]
                        executor.shutdown(wait=False, cancel_futures=True)
                        executor = cf.ProcessPoolExecutor(max_workers=nworkers)
                        bar.update(note=f"a worker died: resubmitted {len(lost)} chunks", force=True)
                        for c in lost:
                            submit(c)
                    else:
                        bar.update(note=f"retrying a chunk after {type(e).__name__}", force=True)
                        submit(chunk)
                    continue
                sink.add(rows)
                bar.update(len(rows))
            bar.update()
    except BaseException:
        for f in pending:
            f.cancel()
        raise
    finally:
        if own:
            executor.shutdown(wait=True, cancel_futures=True)
