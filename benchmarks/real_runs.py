#!/usr/bin/env python3
"""Real-run report (issue 5): on this machine, at m = 2,
  1. testbed decision overhead, preemption latency and release jitter (median, p99, max),
     in both ChronOS global models;
  2. SCHED_DEADLINE (kernel:deadline) vs testbed:gedf on the same task sets;
  3. the sim-vs-real gap for response times (testbed:gedf vs the simulator, same jobs).
Needs root. Writes benchmarks/results/real_runs.json and prints Markdown tables.

    .venv/bin/python benchmarks/real_runs.py [--sets 5] [--duration 3s]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

import numpy as np

import rtsched
from _results import write_atomic


def stats(xs):
    xs = np.asarray(xs, dtype=float)
    return {"median": float(np.median(xs)), "p99": float(np.percentile(xs, 99, method="inverted_cdf")), "max": float(xs.max()), "n": int(len(xs))}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", type=int, default=5)
    ap.add_argument("--duration", default="3s")
    ap.add_argument("--util", type=float, default=1.2, help="total utilisation on 2 CPUs")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("real runs need root")
    rows, overhead = [], {"stw": {}, "concurrent": {}}
    gaps = []
    for k in range(args.sets):
        g = rtsched.generate("randfixedsum", n=6, m=2, U=args.util, u_max=0.6, tmin="10ms", tmax="100ms", seed=100 + k)
        ts = g.taskset.with_run(duration_ns=rtsched.parse_duration(args.duration))
        sim = rtsched.simulate(ts, "gedf")
        dl = rtsched.run(ts, "kernel:deadline")
        tb = {model: rtsched.run(ts, "testbed:gedf", model=model) for model in ("stw", "concurrent")}
        for model, r in tb.items():
            for key in ("decision_overhead", "preemption_latency", "release_jitter"):
                # Pool the raw per-run medians/p99/max conservatively: keep each run's numbers.
                m = r.measurements
                if f"{key}.count" in m:
                    overhead[model].setdefault(key, []).append({s: m[f"{key}.{s}_ns"] for s in ("median", "p99", "max")} | {"n": m[f"{key}.count"]})
        row = {"set": k, "U": round(ts.utilization, 3), "jobs": sim.summary["jobs"],
               "sim_missed": sim.summary["missed"], "deadline_missed": dl.summary["missed"], "testbed_missed": tb["stw"].summary["missed"],
               "sim_mean_resp_ms": sim.summary["mean_response_ns"] / 1e6,
               "deadline_mean_resp_ms": dl.summary["mean_response_ns"] / 1e6,
               "testbed_mean_resp_ms": tb["stw"].summary["mean_response_ns"] / 1e6,
               "deadline_migrations": dl.summary["migrations"], "testbed_migrations": tb["stw"].summary["migrations"],
               "sim_migrations": sim.summary["migrations"],
               "steal_ms": dl.measurements.get("host.steal_ms", 0) + sum(r.measurements.get("host.steal_ms", 0) for r in tb.values())}
        rows.append(row)
        j = sim.jobs.merge(tb["stw"].jobs, on=["task", "job"], suffixes=("_sim", "_real")).dropna(subset=["response_ns_sim", "response_ns_real"])
        gaps.extend((j.response_ns_real - j.response_ns_sim).astype(float).tolist())
        print(f"set {k}: done", file=sys.stderr)
    out = {"machine": platform.node(), "kernel": platform.release(), "cpus": os.cpu_count(), "duration": args.duration,
           "util": args.util, "rows": rows, "overhead": overhead, "response_gap_ns": stats(gaps)}
    write_atomic(Path(__file__).resolve().parent / "results" / "real_runs.json", out)

    print(f"\nkernel {platform.release()}, {os.cpu_count()} CPUs, {args.sets} task sets (randfixedsum n=6, U={args.util}), {args.duration} each\n")
    print("| model | measurement | median us | p99 us | max us | samples |")
    print("|---|---|---|---|---|---|")
    for model, d2 in overhead.items():
        for key, runs in d2.items():
            med = np.median([r["median"] for r in runs]) / 1e3
            p99 = max(r["p99"] for r in runs) / 1e3
            mx = max(r["max"] for r in runs) / 1e3
            n = int(sum(r["n"] for r in runs))
            print(f"| {model} | {key.replace('_', ' ')} | {med:.1f} | {p99:.1f} | {mx:.1f} | {n} |")
    print("\n(median: median of the per-run medians; p99 and max: the worst run's)\n")
    print("| set | U | jobs | missed sim / SCHED_DEADLINE / testbed | mean response ms sim / SCHED_DEADLINE / testbed | migrations sim / SCHED_DEADLINE / testbed | host steal ms |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['set']} | {r['U']} | {r['jobs']} | {r['sim_missed']} / {r['deadline_missed']} / {r['testbed_missed']} | "
              f"{r['sim_mean_resp_ms']:.3f} / {r['deadline_mean_resp_ms']:.3f} / {r['testbed_mean_resp_ms']:.3f} | "
              f"{r['sim_migrations']} / {r['deadline_migrations']} / {r['testbed_migrations']} | {r['steal_ms']:.0f} |")
    g = out["response_gap_ns"]
    print(f"\nresponse time, testbed minus simulator, same jobs (n={g['n']}): median {g['median'] / 1e3:.1f} us, "
          f"p99 {g['p99'] / 1e3:.1f} us, max {g['max'] / 1e3:.1f} us")


if __name__ == "__main__":
    main()
