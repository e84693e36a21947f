"""Scale check: sweeps of (task set, scheduler) simulations, every executor timed in one run.

    .venv/bin/python benchmarks/sweep_scale.py [--rows 300000] [--heavy-rows 60000] [--rounds 3]
        [--out benchmarks/results/sweep_scale.json] [--skip-dask]

Two kinds of rows (RandFixedSum, 4 tasks on 2 CPUs, periods 1-10 ms, 4 schedulers):

- **scale-check rows**: 50 ms simulated, a few dozen jobs a row; 300,000 of them by default;
- **heavy rows**: 500 ms simulated, 10x the work of a row; 60,000 of them by default.

Either sweep lasts about 2-3 s on 2 workers here. With the earlier 100,000 and 20,000 rows
(about 0.8 and 1 s), the part of a sweep that does not scale (setting up, the first and last
batches, finishing the table: about 0.1 s) held the ratios below their steady state: pool
x1.68 at 100,000 rows against x1.81 at 300,000, Dask x1.68 at 20,000 heavy rows against x1.84
at 60,000 (docs/sweeps.md). ``--rows 100000 --heavy-rows 20000`` measures the short sweeps.

Each is run three ways, each writing a fresh Parquet table (part files, then one atomic
consolidation), each checked to hold every key exactly once and to equal every other:

1. one process: the whole sweep in this process (an executor that runs each batch when it is
   submitted), the reference for the ratios;
2. the local process pool with 2 processes (``workers=2``);
3. a Dask ``LocalCluster`` with 2 worker processes of 1 thread, through ``Client.get_executor()``
   (the cluster is started, and its workers import what a batch needs, before the clock starts;
   after the local pool's runs, as a user's sweep on the local pool has no cluster in its process):
   first with Dask's defaults, then as ``rtsched.sweep.local_cluster`` starts it (Dask's
   housekeeping slowed down: ``sweep.cluster.DASK_CONFIG``), the one the ratios are of.

The sweeps run in ``--rounds`` rounds of (one process, the pool), then as many of (one
process, Dask's default cluster, rtsched's cluster), each ratio taken to the one-process
sweep of its own round and the medians reported (``rounds``): this machine's speed drifts by
tens of percent within a minute, so single sweeps timed a minute apart gave "ratios" from
x0.97 to x2.26 in one hour. Each round starts its Dask clusters afresh, untimed, after its
one-process sweep.

First the machine's own ceiling: the same batch computed by one process and by two at once.
Then the coordinator alone: batches computed beforehand (pickled as an executor sends them)
are received, appended to a table and counted on a progress bar, as fast as it can, to show
how many rows/s the coordinating process could absorb from any number of workers. Wall times
depend on what else the machine runs: the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import functools
import importlib
import io
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

import rtsched
from _results import write_atomic

S = importlib.import_module("rtsched.sweep")
T = importlib.import_module("rtsched.sweep.table")


def spec(rows: int, duration: str = "50ms", name: str = "scale") -> dict:
    schedulers = ["gedf", "pedf:ffd", "gfp:rm", "gnpedf"]
    points = [0.8, 1.0, 1.2, 1.4, 1.6, 1.7, 1.8, 1.9, 1.95, 2.0]
    seeds = max(1, rows // (len(points) * len(schedulers)))
    return {
        "name": name,
        "seed": 1,
        "generator": {"name": "randfixedsum", "params": {"n": 4, "m": 2, "tmin": "1ms", "tmax": "10ms"}},
        "utilisation": {"points": points},
        "schedulers": schedulers,
        "seeds": seeds,
        "duration": duration,
    }


#: Runs each batch when it is submitted, in this process: a sweep in one process.
InProcess = importlib.import_module("rtsched.sweep.runner").InProcess


def warm():
    """What a batch and the table import, imported once per process before any clock starts
    (pandas alone takes about a second here): fixed costs, not costs of rows."""
    for m in ("numpy", "pandas", "pyarrow", "pyarrow.parquet", "pyarrow.compute", "rtsched.sweep.table",
              "rtsched.sweep.worker"):
        importlib.import_module(m)


def timed_sweep(sp, executor, out, workers=None):
    t = time.perf_counter()
    df = rtsched.sweep(sp, executor=executor, output=out, workers=workers, progress=False, batch_rows=50_000)
    wall = time.perf_counter() - t
    assert df["key"].is_unique and len(df) == sp.size, (len(df), sp.size)
    return wall


def load():
    return tuple(round(x, 2) for x in os.getloadavg())


def rounds(sp, d: Path, tag: str, res: dict, others: dict, n: int):
    """``n`` rounds of: the sweep in one process, then on each of ``others`` ({name: a context
    manager giving (executor, workers), entered after the one-process sweep, its start not
    timed}). Each ratio is to the one-process sweep of its own round, seconds before: the
    machine's speed drifts by tens of percent within minutes (other tenants), so a ratio of
    sweeps far apart in time measures the drift. The one-process sweep runs with no cluster
    in its process (a cluster's scheduler and nannies there would slow it). Reported: the
    medians of the rounds."""
    import statistics

    r = res.setdefault(tag, {"rows": sp.size, "duration": sp.duration_ns / 1e6, "samples": {}})
    one = r["samples"].setdefault("one_process", [])
    mine = {name: r["samples"].setdefault(name, []) for name in others}
    ratios = {name: r["samples"].setdefault(f"{name}_vs_one", []) for name in others}
    for i in range(n):
        k = len(one)
        one.append(sp.size / timed_sweep(sp, InProcess(), d / f"{tag}-one-{k}.parquet"))
        line = f"[{tag}] round {i + 1}/{n}: one process {one[-1]:,.0f} rows/s"
        for name, start in others.items():
            with start() as (executor, workers):
                mine[name].append(sp.size / timed_sweep(sp, executor, d / f"{tag}-{name}-{k}.parquet", workers))
            ratios[name].append(mine[name][-1] / one[-1])
            line += f", {name} {mine[name][-1]:,.0f} (x{ratios[name][-1]:.2f})"
        print(line + f"; load {load()}", flush=True)
    r["one_process_rows_per_s"] = statistics.median(one)
    for name in others:
        r[f"{name}_rows_per_s"] = statistics.median(mine[name])
        r[f"{name}_vs_one"] = statistics.median(ratios[name])
        print(f"[{tag}] {name}: median {r[f'{name}_rows_per_s']:,.0f} rows/s, median ratio x{r[f'{name}_vs_one']:.2f} "
              f"(rounds x{min(ratios[name]):.2f}-x{max(ratios[name]):.2f})", flush=True)


@contextlib.contextmanager
def pool2():
    """The local pool: ``sweep(workers=2)`` starts and ends its own, as a user's sweep does."""
    yield None, 2


@contextlib.contextmanager
def dask2(tuned: bool):
    """A Dask LocalCluster of 2 workers x 1 thread, started (and its workers' imports done)
    before the clock starts: Dask's defaults, or rtsched's ``sweep.local_cluster``."""
    from distributed import Client, LocalCluster

    if tuned:
        cluster = S.local_cluster(2, silence_logs=40)
    else:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=40)
    with cluster, Client(cluster) as client:
        client.run(warm)
        yield client.get_executor(), None


def same_tables(d: Path, tag: str, res: dict):
    """Whether every executor's every table is the same."""
    tables = sorted(d.glob(f"{tag}-*.parquet"))
    a = S.read_table(tables[0])
    res[tag]["tables_identical"] = all(a.equals(S.read_table(p)) for p in tables[1:])
    print(f"[{tag}] tables identical across executors ({len(tables)} tables): {res[tag]['tables_identical']}",
          flush=True)


def _timed_batch(b, start, q):
    while time.time() < start:  # both processes begin together
        time.sleep(0.001)
    t = time.perf_counter()
    S.run_batch(b)
    q.put(time.perf_counter() - t)


def machine_scaling(sp, rows: int = 20_000) -> dict:
    """The ceiling of any 2-worker ratio on this machine at this moment: the same batch
    computed by this process alone, then by two forked processes at once (no coordinator, no
    table): rows/s of the two together over one's. Cores shared with other tenants keep it
    below 2. The batch is ``sp`` with fewer seeds, so it holds every utilisation point as the
    whole sweep does (the sweep's first rows alone are its lightest points: about 10% faster)."""
    import dataclasses
    import multiprocessing as mp

    seeds = max(1, rows // (len(sp.points) * len(sp.generators) * len(sp.schedulers)))
    sample = dataclasses.replace(sp, replications=tuple(sp.replications[:seeds]))
    b = S.keys.Spans(sample).take(rows).batch()
    S.run_batch(S.keys.Spans(sp).take(400))  # warm
    one = max(b.rows / S.run_batch(b)[2] for _ in range(3))  # the best of three: noise only slows
    ctx = mp.get_context("fork")
    two = 0.0
    for _ in range(3):
        q = ctx.Queue()
        start = time.time() + 0.3
        ps = [ctx.Process(target=_timed_batch, args=(b, start, q)) for _ in range(2)]
        for p in ps:
            p.start()
        walls = [q.get() for _ in ps]
        for p in ps:
            p.join()
        two = max(two, 2 * b.rows / max(walls))
    print(f"machine: batch computation alone {one:,.0f} rows/s in one process, {two:,.0f} rows/s in two at once "
          f"(x{two / one:.2f}: the ceiling of a 2-worker ratio now); load {load()}", flush=True)
    return {"one_rows_per_s": one, "two_rows_per_s": two, "ratio": two / one}


def _canned(b, where=None):
    """On a worker: a real batch result, computed once per process and then returned at
    once, under keys of its own, so the coordinator alone sets the pace. With ``where`` (the
    local pool), handed over as a sweep's local workers do: written to a file there
    (``worker.run_batch_to``)."""
    import pyarrow as pa

    # Kept on a module every worker has (Dask sends this script's functions by value, globals
    # and all, so a global here would be new at every call).
    cache = vars(sys).setdefault("_sweep_scale_canned", {})
    if "t" not in cache:
        cache["t"] = S.run_batch(b.span)
    table, notes, _ = cache["t"]
    # Keys that ascend from batch to batch, as a sweep's do: the table streams in key order.
    keys = pa.array([f"{b.i:06d}/{k}" for k in table["key"].to_pylist()])
    table = table.set_column(0, "key", keys)
    return (table if where is None else T.write_transfer(table, where)), notes, 0.3


class _Canned:
    def __init__(self, span, i):
        self.span, self.i, self.rows, self.sets = span, i, span.rows, span.sets


class _CannedBatches:
    def __init__(self, span, count):
        self.span, self.count, self.i, self.left = span, count, 0, count * span.rows

    def __bool__(self):
        return self.i < self.count

    def take(self, rows):
        self.i += 1
        self.left -= self.span.rows
        return _Canned(self.span, self.i)


def coordinator_through(executor, workers, sp, d: Path, rows: int, batch: int, tag: str) -> float:
    """Rows/s the sweep's own loop (``runner._run``) absorbs through ``executor`` from workers
    that answer at once: receive, append, encode the table as it streams, progress; then
    finish the table (its last row group), as a sweep into a new Parquet table does."""
    R = importlib.import_module("rtsched.sweep.runner")
    span = S.keys.Spans(sp).take(batch)
    count = -(-rows // span.rows)
    bar = S.Progress(count * span.rows, stream=io.StringIO(), interval=1.0)
    R._run(_CannedBatches(span, 4), 0, executor, workers, T._Sink(None), bar, fn=_canned)  # workers compute theirs
    out = d / f"through-{tag}.parquet"
    sink = T._Sink(out, batch_rows=50_000, batch_seconds=10.0, stream=True)
    fn = _canned
    if isinstance(executor, cf.ProcessPoolExecutor):  # as runner.sweep hands a local pool its batches
        S.parts_dir(out).mkdir(parents=True, exist_ok=True)
        fn = functools.partial(_canned, where=os.fspath(S.parts_dir(out)))
    t = time.perf_counter()
    R._run(_CannedBatches(span, count), 0, executor, workers, sink, bar, fn=fn)
    S.consolidate(out, frame=False, sink=sink)
    return count * span.rows / (time.perf_counter() - t)


def coordinator(sp, d: Path, rows: int, batch: int = 10_000) -> dict:
    """The coordinating process's own cost per row: receive a batch (unpickle it, as the pool
    or Dask deliver it), append it to the table (part files, atomic), encode it into the
    streaming table and move the bar; then finish the table; and, separately, cutting the work
    into batches and pickling them (spans for a fresh table; units with their keys when
    resuming). Batches are real rows, copied under new keys so every key stays unique."""
    import pyarrow as pa

    us = S.units(sp)
    table, notes, _ = S.run_batch(S.Batcher(us, sp.schedulers).take(batch))
    blobs = []
    for i in range(-(-rows // batch)):
        keys = pa.array([f"{i:06d}/{k}" for k in table["key"].to_pylist()])  # ascending, batch to batch
        blobs.append(pickle.dumps((table.set_column(0, "key", keys), notes, 0.3), protocol=pickle.HIGHEST_PROTOCOL))
    n = len(blobs) * len(table)
    # As a sweep into a new Parquet table: the table is encoded on the sink's thread as the
    # batches come in; the final consolidation finishes it (its last row group) and reads the
    # parts for the returned rows. Then, apart, the consolidation of a table that did not
    # stream (a resumed sweep's): every part read, each key once, the whole table encoded.
    res = {"rows": n, "batch_rows": len(table)}
    for streamed in (True, False):
        out = d / f"coordinator-{streamed}.parquet"
        bar = S.Progress(n, stream=io.StringIO(), interval=1.0)
        sink = T._Sink(out, batch_rows=50_000, batch_seconds=10.0, stream=streamed)
        t = time.perf_counter()
        for i, blob in enumerate(blobs):
            tb, nt, _ = pickle.loads(blob)
            sink.add(tb, nt, i)
            bar.update(len(tb))
        append = time.perf_counter() - t
        bar.close()
        t = time.perf_counter()
        S.consolidate(out, frame=False, sink=sink)
        merge = time.perf_counter() - t
        tag = "streamed" if streamed else "resumed"
        res[f"append_{tag}_rows_per_s"], res[f"consolidate_{tag}_rows_per_s"] = n / append, n / merge
    append, merge = n / res["append_streamed_rows_per_s"], n / res["consolidate_streamed_rows_per_s"]
    big = S.parse_spec(spec(n), "<scale>")
    t = time.perf_counter()
    b = S.keys.Spans(big)
    while b:
        pickle.dumps(b.take(batch), protocol=pickle.HIGHEST_PROTOCOL)
    spans = time.perf_counter() - t
    t = time.perf_counter()
    b = S.Batcher(S.units(big), big.schedulers)
    while b:
        pickle.dumps(b.take(batch), protocol=pickle.HIGHEST_PROTOCOL)
    plan = time.perf_counter() - t
    res.update(append_rows_per_s=n / append, consolidate_rows_per_s=n / merge, absorb_rows_per_s=n / (append + merge),
               spans_rows_per_s=big.size / spans, resume_plan_rows_per_s=big.size / plan)
    with cf.ProcessPoolExecutor(2) as ex:
        res["through_pool2_rows_per_s"] = coordinator_through(ex, 2, sp, d, rows, batch, "pool")
    print(f"coordinator through the 2-process pool, workers answering at once: "
          f"{res['through_pool2_rows_per_s']:,.0f} rows/s; load {load()}", flush=True)
    print(f"coordinator: receive, append, encode the table, progress and finish the table {n / (append + merge):,.0f} "
          f"rows/s ({n} rows in batches of {len(table)}; the loop alone {n / append:,.0f} rows/s, the table's encoding "
          f"on its own thread; finishing the table {n / merge:,.0f} rows/s) (a table that did not stream: "
          f"{res['append_resumed_rows_per_s']:,.0f} rows/s receiving, {res['consolidate_resumed_rows_per_s']:,.0f} "
          f"consolidating); sending work: {big.size / spans:,.0f} rows/s as spans (a fresh table), "
          f"{big.size / plan:,.0f} rows/s as units and keys (resuming); load {load()}", flush=True)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=300_000)
    ap.add_argument("--heavy-rows", type=int, default=60_000)
    ap.add_argument("--coordinator-rows", type=int, default=500_000)
    ap.add_argument("--out", default="benchmarks/results/sweep_scale.json")
    ap.add_argument("--skip-dask", action="store_true")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of (one process, then the executor) per comparison")
    a = ap.parse_args(argv)
    light = S.parse_spec(spec(a.rows), "<scale>")
    heavy = S.parse_spec(spec(a.heavy_rows, "500ms", "heavy"), "<heavy>")
    res = {"cpus": os.cpu_count(), "load_before": load(), "spec": spec(a.rows), "heavy_spec": spec(a.heavy_rows, "500ms", "heavy")}
    warm()
    print(f"sweep scale check on {os.cpu_count()} cores, load average {load()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        res["machine"] = machine_scaling(light)
        # The pool's rounds first, before any Dask client has been in this process: a coordinator
        # with other threads (a client's, which outlive it) starts its pool from a fork server
        # (runner._context). Then Dask's rounds: its default LocalCluster, for comparison, and
        # rtsched's (sweep.local_cluster: Dask's housekeeping slowed down), which the ratios are of.
        # The coordinator alone also forks a pool: it too comes before any Dask client.
        for sp, tag in ((light, "scale"), (heavy, "heavy")):
            rounds(sp, d, tag, res, {"pool2": pool2}, a.rounds)
        c = res["coordinator"] = coordinator(light, d, a.coordinator_rows)
        if not a.skip_dask:
            for sp, tag in ((light, "scale"), (heavy, "heavy")):
                rounds(sp, d, tag, res, {"dask2_default": functools.partial(dask2, False),
                                         "dask2": functools.partial(dask2, True)}, a.rounds)
            t = time.perf_counter()
            with dask2(True) as (executor, _):
                res["dask_startup_s"] = time.perf_counter() - t
                c["through_dask2_rows_per_s"] = coordinator_through(executor, None, light, d, a.coordinator_rows,
                                                                    10_000, "dask")
            print(f"coordinator through Dask (2 workers), workers answering at once: "
                  f"{c['through_dask2_rows_per_s']:,.0f} rows/s; load {load()}", flush=True)
        same_tables(d, "scale", res)
        same_tables(d, "heavy", res)
    res["load_after"] = load()
    write_atomic(Path(a.out), res)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
