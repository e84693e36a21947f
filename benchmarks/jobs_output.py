#!/usr/bin/env python3
"""Per-job outputs against the simulation they record (docs/outputs.md "Cost").

The issue's case: m = 8, n = 24, 2000 s under gedf, about 1.5 M counted jobs, from
`rtsched gen uunifast-discard n=24 m=8 U=5.6 tmin=10ms tmax=200ms --seed 3 --duration 2000s`.
Each variant is one `rtsched simulate FILE -s gedf` process run under `/usr/bin/time -v`
(peak RSS, wall time); inside it the simulation and the writing of the files are timed
(time.perf_counter around the CLI's own `run_all` and `write_outputs`). --jobs-parquet alone
streams each record into the file as its job ends, inside `run_all`, holding none (the
other per-job outputs hold every record and write after the run), so an output's cost is
its process's simulate + write time over that of the run without outputs in the same round,
minus one. Variants: no output, --jobs-parquet, --json, --json --json-jobs, --jobs-csv; bytes
per job of each file. Each variant runs REPEATS times, the variants interleaved so host noise
falls on all; the table gives medians of the times and of the per-round ratios, and the
largest peak RSS.

Targets (issue 16): --jobs-parquet adds at most 1x the simulation time, at most 40 bytes per
job, and the run's peak RSS stays under 300 MB. Results go to
benchmarks/results/jobs_output.json (written atomically).

Usage: .venv/bin/python benchmarks/jobs_output.py [--quick]   (--quick: 200 s, a smoke run)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _results import write_atomic

RESULTS = Path(__file__).resolve().parent / "results" / "jobs_output.json"
RTSCHED = str(Path(sys.executable).parent / "rtsched")
GEN = ["uunifast-discard", "n=24", "m=8", "U=5.6", "tmin=10ms", "tmax=200ms", "--seed", "3"]
VARIANTS = [
    ("simulation alone", []),
    ("--jobs-parquet", ["--jobs-parquet", "{D}/jobs.parquet"]),
    ("--json", ["--json", "{D}/r.json"]),
    ("--json --json-jobs", ["--json", "{D}/r.json", "--json-jobs"]),
    ("--jobs-csv", ["--jobs-csv", "{D}/jobs.csv"]),
]
REPEATS = 3
TARGET_PARQUET_RATIO = 1.0
TARGET_PARQUET_BYTES_PER_JOB = 40
TARGET_PEAK_MB = 300

# Run inside the measured process: the CLI, with its two phases timed.
CHILD = r"""
import json, sys, time
import rtsched.commands.simulate as s
from rtsched import cli
t = {}
def timed(name, f):
    def g(*a, **k):
        t0 = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            t[name] = time.perf_counter() - t0
    return g
s.run_all = timed("simulate_s", s.run_all)
s.write_outputs = timed("write_s", s.write_outputs)
rc = cli.main(sys.argv[1:])
print("TIMES " + json.dumps(t), file=sys.stderr)
sys.exit(rc)
"""


def measure(ts: Path, flags: list[str], d: Path) -> dict:
    argv = ["/usr/bin/time", "-v", sys.executable, "-c", CHILD, "simulate", str(ts), "-s", "gedf"]
    argv += [f.replace("{D}", str(d)) for f in flags]
    p = subprocess.run(argv, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}\n{p.stdout}\n{p.stderr}")
    times = json.loads(re.search(r"^TIMES (.*)$", p.stderr, re.M).group(1))
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (.*)", p.stderr).group(1).split(":")
    wall_s = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    jobs = int(re.search(r"^gedf\s+(\d+)", p.stdout, re.M).group(1))
    files = {f.replace("{D}/", ""): os.path.getsize(f.replace("{D}", str(d))) for f in flags if f.startswith("{D}")}
    return {"jobs": jobs, "simulate_s": times["simulate_s"], "write_s": times["write_s"], "process_wall_s": wall_s,
            "peak_rss_mb": rss_kb / 1024, "files": files}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a 200 s window instead of 2000 s (smoke run; results not saved)")
    args = ap.parse_args(argv)
    if not Path("/usr/bin/time").exists():
        raise SystemExit("needs /usr/bin/time (Debian: apt-get install time)")
    window = "200s" if args.quick else "2000s"
    d = Path(tempfile.mkdtemp(prefix="rtsched-jobs-bench-"))
    try:
        ts = d / "ts.yaml"
        subprocess.run([RTSCHED, "gen", *GEN, "--duration", window, "-o", str(ts)], check=True, capture_output=True)
        runs = {name: [] for name, _ in VARIANTS}
        for _ in range(1 if args.quick else REPEATS):
            base = None
            for name, flags in VARIANTS:
                r = measure(ts, flags, d)
                if base is None:
                    base = r["simulate_s"] + r["write_s"]
                r["write_over_simulate"] = (r["simulate_s"] + r["write_s"]) / base - 1
                runs[name].append(r)
                for f in r["files"]:
                    os.unlink(d / f)
    finally:
        shutil.rmtree(d, ignore_errors=True)

    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    rows = []
    for name, _ in VARIANTS:
        rs = runs[name]
        rows.append({"variant": name, "jobs": rs[0]["jobs"], "files": rs[0]["files"], "repeats": len(rs),
                     "simulate_s": med([r["simulate_s"] for r in rs]), "write_s": med([r["write_s"] for r in rs]),
                     "write_over_simulate": med([r["write_over_simulate"] for r in rs]),
                     "process_wall_s": med([r["process_wall_s"] for r in rs]), "peak_rss_mb": max(r["peak_rss_mb"] for r in rs),
                     "bytes_per_job": {f: n / rs[0]["jobs"] for f, n in rs[0]["files"].items()}, "runs": rs})
    print(f"rtsched simulate, m=8 n=24 {window} under gedf: {rows[0]['jobs']:,} jobs; medians of {rows[0]['repeats']} processes")
    print(f"{'variant':<20} {'simulate s':>10} {'write s':>8} {'cost/sim':>9} {'B/job':>7} {'file MB':>8} {'process s':>9} {'peak RSS MB':>11}")
    for r in rows:
        size = sum(r["files"].values())
        bpj = f"{size / r['jobs']:.1f}" if size else "-"
        print(f"{r['variant']:<20} {r['simulate_s']:>10.2f} {r['write_s']:>8.2f} {r['write_over_simulate']:>9.2f} {bpj:>7} "
              f"{size / 1e6:>8.1f} {r['process_wall_s']:>9.2f} {r['peak_rss_mb']:>11.0f}")
    print("cost/sim of --jobs-parquet, each round: " + ", ".join(f"{r['write_over_simulate']:.2f}" for r in rows[1]["runs"]))
    pq = rows[1]
    checks = {
        "parquet_write_over_simulate": (pq["write_over_simulate"], TARGET_PARQUET_RATIO),
        "parquet_bytes_per_job": (pq["bytes_per_job"]["jobs.parquet"], TARGET_PARQUET_BYTES_PER_JOB),
        "parquet_run_peak_rss_mb": (pq["peak_rss_mb"], TARGET_PEAK_MB),
    }
    for k, (v, target) in checks.items():
        print(f"{k}: {v:.2f} (target <= {target}): {'met' if v <= target else 'MISSED'}")
    if not args.quick:
        write_atomic(RESULTS, {
            "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()},
            "taskset": "rtsched gen " + " ".join(GEN) + f" --duration {window}",
            "rows": rows,
            "targets": {k: {"value": v, "target": t, "met": v <= t} for k, (v, t) in checks.items()},
        })
        print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
