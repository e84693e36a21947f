"""Scale check: a sweep of 100,000 (task set, scheduler) simulations, timed three ways in one run.

    .venv/bin/python benchmarks/sweep_scale.py [--rows 100000] [--out benchmarks/results/sweep_scale.json]

1. serial baseline: the same rows in this process, no executor (on a 10% sample, scaled up);
2. the local process pool (``rtsched.sweep`` default, every core);
3. a Dask ``LocalCluster`` (2 worker processes, 1 thread each) through ``Client.get_executor()``.

Each run writes a fresh Parquet table (resumable batches, then one atomic consolidation) and the
script checks every key landed exactly once. Task sets are small (4 tasks on 2 CPUs, periods
1-10 ms, 50 ms simulated) so the check measures the sweep machinery — generation, simulation,
chunking, transport, writing — more than the simulator. Wall times depend on what else the
machine is running; the script prints the load average beside them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import rtsched

S = importlib.import_module("rtsched.sweep")


def spec(rows: int) -> dict:
    schedulers = ["gedf", "pedf:ffd", "gfp:rm", "gnpedf"]
    points = [0.8, 1.0, 1.2, 1.4, 1.6, 1.7, 1.8, 1.9, 1.95, 2.0]
    seeds = max(1, rows // (len(points) * len(schedulers)))
    return {
        "name": "scale",
        "seed": 1,
        "generator": {"name": "randfixedsum", "params": {"n": 4, "m": 2, "tmin": "1ms", "tmax": "10ms"}},
        "utilisation": {"points": points},
        "schedulers": schedulers,
        "seeds": seeds,
        "duration": "50ms",
    }


def serial_baseline(sp: S.Spec, fraction: float = 0.1) -> tuple[float, int]:
    us = S.units(sp)
    sample = us[:: max(1, round(1 / fraction))]
    t = time.perf_counter()
    rows = sum(len(S.run_unit(u)) for u in sample)
    return time.perf_counter() - t, rows


def timed_sweep(sp, executor, out, workers=None):
    t = time.perf_counter()
    df = rtsched.sweep(sp, executor=executor, output=out, workers=workers, progress=True, batch_rows=20_000)
    wall = time.perf_counter() - t
    assert df["key"].is_unique and len(df) == sp.size, (len(df), sp.size)
    return wall, len(df)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--out", default="benchmarks/results/sweep_scale.json")
    ap.add_argument("--skip-dask", action="store_true")
    a = ap.parse_args(argv)
    sp = S.parse_spec(spec(a.rows), "<scale>")
    res = {"rows": sp.size, "cpus": os.cpu_count(), "spec": spec(a.rows), "load_before": os.getloadavg()}
    print(f"scale check: {sp.size} rows on {os.cpu_count()} cores, load average {os.getloadavg()}", flush=True)

    t, n = serial_baseline(sp)
    res["serial_rows_per_s"] = n / t
    res["serial_est_wall_s"] = sp.size / (n / t)
    print(f"serial (in-process, 10% sample): {n} rows in {t:.1f} s = {n / t:.0f} rows/s; "
          f"100% would take ~{sp.size / (n / t):.0f} s", flush=True)

    with tempfile.TemporaryDirectory() as d:
        wall, n = timed_sweep(sp, None, Path(d) / "local.parquet")
        res["local_pool_wall_s"] = wall
        res["local_pool_rows_per_s"] = n / wall
        res["local_pool_table_bytes"] = (Path(d) / "local.parquet").stat().st_size
        print(f"local process pool ({os.cpu_count()} processes): {n} rows in {wall:.1f} s = {n / wall:.0f} rows/s "
              f"(x{res['serial_est_wall_s'] / wall:.2f} vs serial); load {os.getloadavg()}", flush=True)

        if not a.skip_dask:
            from distributed import Client, LocalCluster

            t0 = time.perf_counter()
            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                              silence_logs=40) as cluster, Client(cluster) as client:
                res["dask_startup_s"] = time.perf_counter() - t0
                wall, n = timed_sweep(sp, client.get_executor(), Path(d) / "dask.parquet")
            res["dask_wall_s"] = wall
            res["dask_rows_per_s"] = n / wall
            print(f"Dask LocalCluster (2 workers x 1 thread): {n} rows in {wall:.1f} s = {n / wall:.0f} rows/s "
                  f"(x{res['serial_est_wall_s'] / wall:.2f} vs serial; cluster start {res['dask_startup_s']:.1f} s); "
                  f"load {os.getloadavg()}", flush=True)
            import pandas as pd

            a_, b_ = S.read_table(Path(d) / "local.parquet"), S.read_table(Path(d) / "dask.parquet")
            res["dask_equals_local"] = bool(a_.equals(b_))
            print(f"Dask table identical to the local table: {res['dask_equals_local']}", flush=True)
    res["load_after"] = os.getloadavg()
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
