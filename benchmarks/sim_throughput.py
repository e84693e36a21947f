#!/usr/bin/env python3
"""Simulator throughput: simulated jobs per wall-clock second under global EDF, rtsched
against SimSo 0.8.5 on the same task sets, measured in the same run.

Sizes m = 2, 8, 32, 128, 1024 with n = 3m; U = 0.7 m (UUniFast-discard), periods log-uniform
in [10, 100] ms rounded to integer us, implicit deadlines, zero overheads.

rtsched simulates 60 s (m <= 32; 8 s at m = 128, 1 s at m = 1024, so each size has a few
hundred thousand jobs) and only its `rtsched.simulate` call and the reading of the run's summary
are timed (time.perf_counter, best of 3, single-threaded), twice: holding every per-job record (the API's default,
`keep_jobs=True`) and streaming them into the summaries as jobs end (`keep_jobs=False`, what
`rtsched simulate` does without a per-job output), alternated. SimSo is ~1000x slower, so it
simulates a shorter window (SIMSO_WINDOW_S) once, on m <= 32, and its jobs/s is computed from
that window; the table says so. Results go to benchmarks/results/sim_throughput.json (written
atomically).

A second table times `paws` against `gedf` on the same parallel task sets (generator
paws2013, m = 8, the paper's four windows, PAWS_SETS seeds each; fork-join jobs of up to 3m
threads): jobs/s of each and the ratio, best of REPEATS, the two schedulers alternated so host
noise falls on both. Target: `paws` within 2x of `gedf`.

A third table prices the cache model (docs/cache-model.md): the first table's sets given
working sets (log-uniform 16 KiB - 4 MiB, memory groups of three consecutive tasks) on the
Opteron topology, simulated under gedf with `run.cache` off and on, alternated in the same run
(best of CACHE_REPEATS each): jobs/s of each and the slowdown (off jobs/s over on jobs/s; each
side's own job count, since stalls change the schedule a little). Target: within 2x.

Usage: .venv/bin/python benchmarks/sim_throughput.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import platform
import random
import sys
import time
from pathlib import Path

import rtsched
from _results import write_atomic

SIZES = [(2, 6), (8, 24), (32, 96), (128, 384), (1024, 3072)]
#: Simulated seconds at each size beyond 32 CPUs (60 s there would be millions of jobs).
WINDOW_S = {128: 8, 1024: 1}
SIMSO_MAX_M = 32
TARGET_STREAMED_JOBS_PER_S = 4_000_000  # at m=8/n=24, streamed (issue 16)
RT_WINDOW_S = 60
SIMSO_WINDOW_S = 3
REPEATS = 3
TARGET_JOBS_PER_S = 1_000_000  # at m=8/n=24
TARGET_RATIO = 300
PAWS_M, PAWS_SETS, PAWS_WINDOW_S = 8, 3, 20
TARGET_PAWS_SLOWDOWN = 2.0  # gedf jobs/s over paws jobs/s, same sets
CACHE_REPEATS = 5
TARGET_CACHE_SLOWDOWN = 2.0  # jobs/s with the cache model off over on, same sets
RESULTS = Path(__file__).resolve().parent / "results" / "sim_throughput.json"


def uunifast_discard(rng: random.Random, n: int, total: float) -> list[float]:
    while True:
        us, left = [], total
        for i in range(1, n):
            nxt = left * rng.random() ** (1.0 / (n - i))
            us.append(left - nxt)
            left = nxt
        us.append(left)
        if max(us) <= 1.0:
            return us


def taskset(m: int, n: int, seed: int) -> list[tuple[int, int]]:
    """(period_us, wcet_us) of n tasks, U = 0.7 m. Beyond 96 tasks the utilisations are drawn
    in chunks of 24 tasks of U = 5.6 each (UUniFast-discard over 3,072 tasks at a mean of 0.23
    would almost never draw them all <= 1: about e^-43 a try)."""
    rng = random.Random(seed)
    out = []
    us = uunifast_discard(rng, n, 0.7 * m) if n <= 96 else [u for _ in range(n // 24) for u in uunifast_discard(rng, 24, 5.6)]
    for u in us:
        p = int(round(math.exp(rng.uniform(math.log(10_000), math.log(100_000)))))
        out.append((p, min(p, max(1, round(u * p)))))
    return out


def rtsched_taskset(m, tasks, window_s, cache=None, seed=0):
    """The set as a task file; with `cache` (True/False) also working sets, memory groups and
    the Opteron topology, the cache model on or off."""
    doc = {
        "platform": {"cpus": m},
        "run": {"duration": f"{window_s}s"},
        "tasks": [{"name": f"t{i}", "period": f"{p}us", "wcet": f"{c}us"} for i, (p, c) in enumerate(tasks)],
    }
    if cache is not None:
        rng = random.Random(seed)
        doc["platform"]["topology"] = "opteron6164x4"
        doc["run"]["cache"] = cache
        for i, t in enumerate(doc["tasks"]):
            t["wss"] = int(round(math.exp(rng.uniform(math.log(16), math.log(4096))))) * 1024
            t["group"] = i // 3
    return rtsched.parse_taskset(json.dumps(doc), "json", f"bench-m{m}")


def bench_cache(m, tasks, window_s, repeats):
    """gedf on the same set with the cache model off and on, alternated: best wall time each."""
    sets = {on: rtsched_taskset(m, tasks, window_s, cache=on, seed=m) for on in (False, True)}
    best, jobs = {False: math.inf, True: math.inf}, {}
    for _ in range(repeats):
        for on in (False, True):
            t0 = time.perf_counter()
            r = rtsched.simulate(sets[on], scheduler="gedf")
            best[on] = min(best[on], time.perf_counter() - t0)
            jobs[on] = r.summary["jobs"]
    off_rate, on_rate = jobs[False] / best[False], jobs[True] / best[True]
    return {"m": m, "n": len(tasks), "window_s": window_s, "repeats": repeats,
            "off": {"jobs": jobs[False], "best_wall_s": best[False], "jobs_per_s": off_rate},
            "on": {"jobs": jobs[True], "best_wall_s": best[True], "jobs_per_s": on_rate},
            "slowdown": off_rate / on_rate}


def bench_rtsched(m, tasks, window_s, repeats):
    """Best wall time of `rtsched.simulate` holding the records and streaming them, alternated."""
    ts = rtsched_taskset(m, tasks, window_s)
    best, jobs = {True: math.inf, False: math.inf}, {}
    for _ in range(repeats):
        for keep in (True, False):
            t0 = time.perf_counter()
            r = rtsched.simulate(ts, scheduler="gedf", keep_jobs=keep)
            jobs[keep] = r.summary["jobs"]  # timed too: a held run derives it from the records
            best[keep] = min(best[keep], time.perf_counter() - t0)
            del r
    assert jobs[True] == jobs[False]
    return jobs[True], best[True], best[False]


def bench_paws(window_s, repeats, sets):
    """Total wall time of `paws` and of `gedf` over the same paws2013 sets at m = PAWS_M."""
    tss = [rtsched.generate("paws2013", seed=s, m=PAWS_M, window=w).taskset.with_run(duration_ns=window_s * 1_000_000_000)
           for w in (1, 2, 3, 4) for s in range(sets)]
    best = {"paws": math.inf, "gedf": math.inf}
    jobs = {}
    for _ in range(repeats):
        for sched in ("gedf", "paws"):
            t0 = time.perf_counter()
            jobs[sched] = sum(rtsched.simulate(ts, scheduler=sched).summary["jobs"] for ts in tss)
            best[sched] = min(best[sched], time.perf_counter() - t0)
    assert jobs["paws"] == jobs["gedf"], "both schedulers see the same releases"
    return {"m": PAWS_M, "sets": len(tss), "window_s": window_s, "repeats": repeats, "jobs": jobs["paws"],
            "paws_best_wall_s": best["paws"], "gedf_best_wall_s": best["gedf"],
            "paws_jobs_per_s": jobs["paws"] / best["paws"], "gedf_jobs_per_s": jobs["gedf"] / best["gedf"],
            "slowdown": best["paws"] / best["gedf"]}


def bench_simso(m, tasks, window_s):
    """One SimSo run (global EDF, cycles_per_ms=1 so its 'ms' fields are integer us)."""
    from simso.configuration import Configuration
    from simso.core import Model

    cfg = Configuration()
    cfg.cycles_per_ms = 1
    cfg.duration = window_s * 1_000_000
    cfg.etm = "wcet"
    for i, (p, c) in enumerate(tasks):
        cfg.add_task(name=f"t{i}", identifier=i + 1, period=p, activation_date=0, wcet=c, deadline=p, abort_on_miss=False)
    for k in range(m):
        cfg.add_processor(name=f"cpu{k}", identifier=k + 1)
    cfg.scheduler_info.clas = "simso.schedulers.EDF"
    cfg.check_all()
    model = Model(cfg)
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # SimSo's EDF prints every decision
        model.run_model()
    dt = time.perf_counter() - t0
    # Jobs released in the window, as rtsched counts them.
    jobs = sum(1 for t in model.task_list for j in t.jobs if j.activation_date < cfg.duration)
    return jobs, dt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="6 s rtsched / 1 s SimSo windows, 1 repeat (smoke run)")
    ap.add_argument("--no-simso", action="store_true", help="skip SimSo (no ratio)")
    args = ap.parse_args(argv)
    rt_window, ss_window, repeats = (6, 1, 1) if args.quick else (RT_WINDOW_S, SIMSO_WINDOW_S, REPEATS)

    rows = []
    for m, n in SIZES:
        tasks = taskset(m, n, seed=1000 * m + n)
        window = WINDOW_S.get(m, rt_window) if not args.quick else min(rt_window, WINDOW_S.get(m, rt_window))
        jobs, secs, streamed = bench_rtsched(m, tasks, window, repeats)
        row = {"m": m, "n": n, "utilization": round(sum(c / p for p, c in tasks), 4),
               "rtsched": {"window_s": window, "jobs": jobs, "best_wall_s": secs, "repeats": repeats,
                           "jobs_per_s": jobs / secs, "streamed_best_wall_s": streamed,
                           "streamed_jobs_per_s": jobs / streamed}}
        if not args.no_simso and m <= SIMSO_MAX_M:
            sj, ss = bench_simso(m, tasks, ss_window)
            row["simso"] = {"window_s": ss_window, "jobs": sj, "wall_s": ss, "repeats": 1, "jobs_per_s": sj / ss}
            row["ratio"] = row["rtsched"]["jobs_per_s"] / row["simso"]["jobs_per_s"]
        rows.append(row)
        print(f"  m={m:<3} n={n:<3} done", file=sys.stderr, flush=True)

    print(f"\nGlobal EDF, U = 0.7 m, periods 10-100 ms. rtsched: window as given, best of {repeats}, records held "
          f"(keep_jobs=True) and streamed (keep_jobs=False); SimSo 0.8.5: {ss_window} s simulated (it is slow), 1 run, "
          f"m <= {SIMSO_MAX_M}.")
    print(f"{'m':>4} {'n':>5} {'window':>6} {'rtsched jobs':>13} {'held jobs/s':>12} {'streamed jobs/s':>15} {'SimSo jobs':>11} "
          f"{'SimSo jobs/s':>13} {'ratio':>8}")
    for r in rows:
        s, rt = r.get("simso"), r["rtsched"]
        print(f"{r['m']:>4} {r['n']:>5} {rt['window_s']:>5}s {rt['jobs']:>13,} {rt['jobs_per_s']:>12,.0f} {rt['streamed_jobs_per_s']:>15,.0f} "
              + (f"{s['jobs']:>11,} {s['jobs_per_s']:>13,.0f} {r['ratio']:>7,.0f}x" if s else f"{'-':>11} {'-':>13} {'-':>8}"))
    paws = bench_paws(max(2, rt_window // 3), repeats, 1 if args.quick else PAWS_SETS)
    print(f"\nPAWS vs global EDF on the same parallel sets (paws2013, m = {paws['m']}, {paws['sets']} sets, "
          f"{paws['window_s']} s simulated each, best of {paws['repeats']}):")
    print(f"{'scheduler':>9} {'jobs':>9} {'jobs/s':>12}")
    for sched in ("gedf", "paws"):
        print(f"{sched:>9} {paws['jobs']:>9,} {paws[sched + '_jobs_per_s']:>12,.0f}")
    ok_paws = paws["slowdown"] <= TARGET_PAWS_SLOWDOWN
    print(f"paws / gedf wall time: {paws['slowdown']:.2f}x (target <= {TARGET_PAWS_SLOWDOWN:g}x: {'met' if ok_paws else 'NOT met'})")
    cache = [bench_cache(m, taskset(m, n, seed=1000 * m + n), rt_window, 1 if args.quick else CACHE_REPEATS) for m, n in SIZES
             if m <= 32]
    print(f"\nCache model off vs on (gedf, the sets above with working sets 16 KiB-4 MiB in groups of 3, "
          f"Opteron topology, {rt_window} s simulated, alternated, best of {cache[0]['repeats']}):")
    print(f"{'m':>3} {'n':>4} {'off jobs/s':>12} {'on jobs/s':>12} {'slowdown':>9}")
    for c in cache:
        print(f"{c['m']:>3} {c['n']:>4} {c['off']['jobs_per_s']:>12,.0f} {c['on']['jobs_per_s']:>12,.0f} {c['slowdown']:>8.2f}x")
    ok_cache = all(c["slowdown"] <= TARGET_CACHE_SLOWDOWN for c in cache)
    print(f"cache model on within {TARGET_CACHE_SLOWDOWN:g}x of off: {'met' if ok_cache else 'NOT met'}")
    mid = next(r for r in rows if (r["m"], r["n"]) == (8, 24))
    ok_speed = mid["rtsched"]["jobs_per_s"] >= TARGET_JOBS_PER_S
    ok_ratio = all(r.get("ratio", math.inf) >= TARGET_RATIO for r in rows)
    ok_streamed = mid["rtsched"]["streamed_jobs_per_s"] >= TARGET_STREAMED_JOBS_PER_S
    print(f"targets: >= {TARGET_JOBS_PER_S:,} jobs/s at m=8/n=24: {'met' if ok_speed else 'NOT met'}; "
          f">= {TARGET_RATIO}x SimSo: {'met' if ok_ratio else 'NOT met'}; "
          f">= {TARGET_STREAMED_JOBS_PER_S:,} jobs/s streamed at m=8/n=24: {'met' if ok_streamed else 'NOT met'} "
          f"({mid['rtsched']['streamed_jobs_per_s']:,.0f})")

    doc = {
        "benchmark": "sim_throughput",
        "scheduler": "gedf",
        "quick": args.quick,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "targets": {"jobs_per_s_m8_n24": TARGET_JOBS_PER_S, "ratio_vs_simso": TARGET_RATIO,
                    "met_jobs_per_s": ok_speed, "met_ratio": ok_ratio,
                    "streamed_jobs_per_s_m8_n24": TARGET_STREAMED_JOBS_PER_S, "met_streamed": ok_streamed,
                    "paws_slowdown_vs_gedf": TARGET_PAWS_SLOWDOWN, "met_paws": ok_paws,
                    "cache_slowdown": TARGET_CACHE_SLOWDOWN, "met_cache": ok_cache},
        "rows": rows,
        "paws": paws,
        "cache": cache,
    }
    write_atomic(RESULTS, doc)
    print(f"wrote {RESULTS.relative_to(Path.cwd()) if RESULTS.is_relative_to(Path.cwd()) else RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
