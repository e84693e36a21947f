#!/usr/bin/env python3
"""Prediction, measured (issue 52): the simulator's `linux` scheduler against `kernel:linux` on
this machine, on mixed sets of 2 CPUs (SCHED_DEADLINE + SCHED_FIFO/RR + SCHED_OTHER tasks with
jobs + best-effort hogs and sleepers; some deadline tasks overrun their runtime).

With an overhead profile of the kernel's own costs (`rtsched calibrate -b kernel`, measured
first unless --profile names one), each set is simulated (`simulate -s linux`, the profile in
`run.overheads`) and run for real (`run -b kernel:linux`, same seed, same jobs). Per class
(deadline, fifo/rr, other with jobs): DSR, mean and p99 response; per deadline task the
throttles the simulator counts (the kernel does not expose them: null); per best-effort task
its CPU share. Each pair is shown with the tightest tolerance of a fixed ladder it meets.
Host steal (/proc/stat, the run's `host.steal_ms`) and the load average are recorded with each
real run: on a shared machine the numbers are indicative only.

Needs root (or CAP_SYS_NICE). One command (also `make prediction-linux`):

    .venv/bin/python benchmarks/linux_prediction.py [--duration 2s] [--profile P.yaml]

Writes docs/linux-prediction.md and benchmarks/results/linux_prediction.json.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import rtsched
from _results import write_atomic

ROOT = Path(__file__).resolve().parent.parent

# The sets: (name, what it shows, tasks as YAML flow mappings). The class of each task is its
# `policy` (best-effort tasks: `class: fair`).
SETS = [
    ("isolation", "an overrunning deadline task (9 ms of work on a 2 ms runtime) beside FIFO tasks and fair load", [
        "{name: dl_over, period: 10, wcet: 9, policy: deadline, runtime: 2}",
        "{name: dl_ok, period: 20, wcet: 3, policy: deadline, runtime: 4}",
        "{name: fifo_a, period: 10, wcet: 4, policy: fifo, priority: 30}",
        "{name: fifo_b, period: 5, wcet: 1, policy: fifo, priority: 60}",
        "{name: other_j, period: 20, wcet: 2, policy: other}",
        "{name: hog, class: fair, behaviour: hog}",
    ]),
    ("rr-and-nice", "SCHED_RR peers, a FIFO task above them, fair tasks at different nice", [
        "{name: dl, period: 10, wcet: 2, policy: deadline, runtime: 2.5}",
        "{name: rr1, period: 20, wcet: 5, policy: rr, priority: 20}",
        "{name: rr2, period: 20, wcet: 5, policy: rr, priority: 20}",
        "{name: fifo, period: 10, wcet: 2, policy: fifo, priority: 40}",
        "{name: other_j, period: 50, wcet: 5, policy: other, nice: -5}",
        "{name: hog, class: fair, behaviour: hog}",
        "{name: sleeper, class: fair, behaviour: sleeper, run: 2ms, sleep: 8ms}",
    ]),
    ("deadline-heavy", "three reservations, one overrunning (5 ms of work on 3 ms), a FIFO task below", [
        "{name: dl1, period: 10, wcet: 4, policy: deadline, runtime: 4.4}",
        "{name: dl2, period: 20, wcet: 8, policy: deadline, runtime: 9}",
        "{name: dl_over, period: 10, wcet: 5, policy: deadline, runtime: 3}",
        "{name: fifo, period: 10, wcet: 3, policy: fifo, priority: 50}",
        "{name: hog, class: fair, behaviour: hog}",
    ]),
    ("fifo-near-hog", "a FIFO task using 95 % of a CPU, another FIFO task, a reservation, fair tasks", [
        "{name: fifo_big, period: 10, wcet: 9.5, policy: fifo, priority: 50}",
        "{name: fifo_small, period: 10, wcet: 5, policy: fifo, priority: 10}",
        "{name: dl, period: 20, wcet: 2, policy: deadline, runtime: 2}",
        "{name: other_j, period: 10, wcet: 1, policy: other}",
        "{name: hog, class: fair, behaviour: hog}",
    ]),
]

CLASSES = ("deadline", "fifo/rr", "other")

# Tolerance ladders: absolute for DSR and shares, relative for response times.
ABS = [0.01, 0.02, 0.05, 0.1, 0.2]
REL = [0.05, 0.1, 0.25, 0.5, 1.0]


def task_class(spec: str) -> str:
    if "class: fair" in spec:
        return "fair"
    for p, c in (("policy: deadline", "deadline"), ("policy: fifo", "fifo/rr"), ("policy: rr", "fifo/rr"), ("policy: other", "other")):
        if p in spec:
            return c
    return "deadline"


def set_yaml(tasks: list[str], duration: str, profile: Path | None) -> str:
    over = f", overheads: {profile}" if profile else ""
    return f"platform: {{cpus: 2}}\nrun: {{duration: {duration}, seed: 1{over}}}\ntasks:\n" + "".join(f"  - {t}\n" for t in tasks)


def horizon_ns(r) -> int:
    """Where a real run stops its threads: the duration plus twice the longest period or
    deadline of a task with jobs (crates/linux kernel's `drain`)."""
    rt = [t for t in r.taskset.tasks() if not t["fair"]]
    return r.taskset.duration_ns + 2 * max(max(t["period_ns"], t["deadline_ns"]) for t in rt)


def per_class(r, classes: dict[str, str], horizon: int) -> dict:
    """DSR, mean and p99 response (ms) of each class's jobs; throttles (sim), fair shares.
    Responses are of the jobs finished by `horizon` in both: the simulator runs on until every
    counted job ends, a real run stops there (an overrunning task's backlog would otherwise
    count in one and not the other)."""
    jobs = r.jobs
    jobs = jobs.assign(cls=[classes[t] for t in jobs["task"]])
    jobs.loc[jobs["finish_ns"] > horizon, "response_ns"] = None
    out = {}
    for c in CLASSES:
        j = jobs[jobs["cls"] == c]
        if j.empty:
            continue
        resp = j["response_ns"].dropna().to_numpy(dtype=float) / 1e6
        out[c] = {
            "jobs": int(len(j)),
            "dsr": float(1.0 - j["missed"].mean()),
            "mean_ms": float(resp.mean()) if len(resp) else None,
            "p99_ms": float(np.percentile(resp, 99, method="inverted_cdf")) if len(resp) else None,
        }
    m = r.measurements
    throttles = {n: m.get(f"dl.{n}.throttles") for n, c in classes.items() if c == "deadline"}
    shares = {n: m.get(f"fair.{n}.share") for n, c in classes.items() if c == "fair"}
    return {"classes": out, "throttles": throttles, "shares": shares}


def tolerance(sim, real, ladder, relative: bool) -> str:
    if sim is None or real is None:
        return "-"
    d = abs(sim - real)
    if relative:
        d = d / max(abs(sim), 1e-9)
    for t in ladder:
        if d <= t:
            return f"{t * 100:g} %" if relative else f"{t:g}"
    return f"> {ladder[-1] * 100:g} %" if relative else f"> {ladder[-1]:g}"


def fmt(x, digits=3):
    return "-" if x is None else f"{x:.{digits}f}"


def calibrate(path: Path, samples: int) -> None:
    cmd = [str(ROOT / ".venv/bin/rtsched"), "calibrate", "-b", "kernel", "-o", str(path), "--samples", str(samples), "--no-progress"]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def machine() -> dict:
    return {
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "loadavg": open("/proc/loadavg").read().split()[:3],
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def run_set(name: str, tasks: list[str], duration: str, profile: Path | None, tmp: Path) -> dict:
    classes = {t.split("name: ")[1].split(",")[0]: task_class(t) for t in tasks}
    f = tmp / f"{name}.yaml"
    f.write_text(set_yaml(tasks, duration, profile))
    sim = rtsched.simulate(rtsched.load_taskset(str(f)), "linux")
    # The simulator reads the profile; the real run measures the kernel's own costs.
    f_real = tmp / f"{name}-real.yaml"
    f_real.write_text(set_yaml(tasks, duration, None))
    load = open("/proc/loadavg").read().split()[0]
    real = rtsched.run(rtsched.load_taskset(str(f_real)), "kernel:linux", allow_overload=True)
    horizon = horizon_ns(real)
    return {
        "set": name,
        "sim": per_class(sim, classes, horizon),
        "real": per_class(real, classes, horizon),
        "host_steal_ms": real.measurements.get("host.steal_ms"),
        "loadavg_before": float(load),
    }


def markdown(results: list[dict], meta: dict, cmd: str) -> str:
    lines = [
        "# Prediction, measured: `simulate -s linux` against `run -b kernel:linux`",
        "",
        f"Produced by `{cmd}` on {meta['date']}: Linux {meta['kernel']}, {meta['cpus']} CPUs, load average "
        f"{' '.join(meta['loadavg'])} at the start; overhead profile `{meta['profile']}` "
        f"(`rtsched calibrate -b kernel`), run length {meta['duration']} per set.",
        "",
    ]
    if meta["shared"]:
        lines += [
            "**Indicative only:** this machine was shared with other builds while it ran (the load average "
            "and host steal of each real run are given). Rerun the command above on a quiet machine for "
            "numbers to hold the simulator to.",
            "",
        ]
    lines += [
        "Tolerances: the tightest of "
        + ", ".join(f"{t:g}" for t in ABS)
        + " (absolute) that |sim - real| meets for DSR and CPU share; of "
        + ", ".join(f"{t * 100:g} %" for t in REL)
        + " (relative to the simulator's) for response times, of the jobs finished by the real run's "
        "end (its duration plus twice the longest period: the simulator runs on until every job ends). Throttles are counted by the simulator; "
        "the kernel does not expose them per task (`null` in a kernel run's results).",
        "",
    ]
    for r in results:
        desc = next(d for n, d, _ in SETS if n == r["set"])
        lines += [f"## {r['set']}: {desc}", "",
                  f"Host steal during the real run: {fmt(r['host_steal_ms'], 0)} ms; load average before it: {r['loadavg_before']:.2f}.", "",
                  "| class | jobs | DSR sim | DSR real | tol. | mean resp sim ms | real | tol. | p99 resp sim ms | real | tol. |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for c in CLASSES:
            s, k = r["sim"]["classes"].get(c), r["real"]["classes"].get(c)
            if not s or not k:
                continue
            lines.append(
                f"| {c} | {s['jobs']} | {fmt(s['dsr'])} | {fmt(k['dsr'])} | {tolerance(s['dsr'], k['dsr'], ABS, False)} "
                f"| {fmt(s['mean_ms'], 2)} | {fmt(k['mean_ms'], 2)} | {tolerance(s['mean_ms'], k['mean_ms'], REL, True)} "
                f"| {fmt(s['p99_ms'], 2)} | {fmt(k['p99_ms'], 2)} | {tolerance(s['p99_ms'], k['p99_ms'], REL, True)} |")
        lines += ["", "| task | throttles (sim) | throttles (real) | CPU share sim | real | tol. |", "|---|---|---|---|---|---|"]
        for n, t in r["sim"]["throttles"].items():
            lines.append(f"| {n} (deadline) | {fmt(t, 0)} | not observable | | | |")
        for n, s in r["sim"]["shares"].items():
            k = r["real"]["shares"].get(n)
            lines.append(f"| {n} (best effort) | | | {fmt(s)} | {fmt(k)} | {tolerance(s, k, ABS, False)} |")
        lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", default="2s", help="each real run's length (default 2s)")
    ap.add_argument("--profile", type=Path, help="an existing `rtsched calibrate -b kernel` profile (default: measure one)")
    ap.add_argument("--samples", type=int, default=500, help="calibrate's samples per cost (default 500)")
    ap.add_argument("--sets", default=",".join(n for n, _, _ in SETS), help="which sets, by name")
    ap.add_argument("--out", type=Path, default=ROOT / "docs/linux-prediction.md")
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks/results/linux_prediction.json")
    ap.add_argument("--shared", action="store_true", help="say in the report that the machine was shared")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("real runs need root (or CAP_SYS_NICE)")
    meta = machine() | {"duration": args.duration, "shared": args.shared}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        profile = args.profile.resolve() if args.profile else tmp / "kernel-profile.yaml"
        if not args.profile:
            calibrate(profile, args.samples)
        meta["profile"] = str(args.profile) if args.profile else f"measured first, {args.samples} samples per cost"
        wanted = args.sets.split(",")
        results = []
        for name, _, tasks in SETS:
            if name in wanted:
                print(f"set {name} ...", flush=True)
                results.append(run_set(name, tasks, args.duration, profile, tmp))
    cmd = "make prediction-linux" if not sys.argv[1:] else "benchmarks/linux_prediction.py " + " ".join(sys.argv[1:])
    text = markdown(results, meta, cmd)
    args.out.write_text(text + "\n")
    write_atomic(args.json, {"machine": meta, "sets": results})
    print(text)


if __name__ == "__main__":
    main()
