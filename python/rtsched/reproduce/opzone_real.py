"""The opzone paper's Fig 7 on this machine: an urgent task's wake-up latency under heavy
background load, with the kernel's balancer alone and with the operation-zone balancer.

§4.1-4.2: a test thread pinned to one core at SCHED_FIFO 99 sleeps and wakes repeatedly
(cyclictest) while "very high CPU load, network stress, and disk I/O" run; the paper's
warm-high balancer brought the average latency from 72 us to 31 us on a quad-core Q9400 with
Linux 2.6.32. Here the load is ``rtsched stress`` and the balancer is ``rtsched balance``
(user space: it acts through CPU affinity beside the kernel's balancer, not instead of it).
With ``hold`` it pins every stress task where it first runs, so only the zone balancer moves
them — the closest user space gets to the paper's replacement of the kernel's balancer.

Conditions run interleaved (kernel, zone, kernel, zone, ...) so a change in the host's load
hits them alike; each run records the host's steal, which on a VM can dwarf the effect.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

#: The default background: twice as many CPU hogs as CPUs, a periodic sleeper per CPU (wake-ups
#: on idle CPUs), one disk writer and one loopback sender (§4.1's three kinds of stress).
DEFAULT_STRESS = {"cpu": None, "sleepers": None, "io": 1, "net": 1}


def _stress_args(stress: dict) -> list[str]:
    n = os.cpu_count() or 1
    s = dict(DEFAULT_STRESS, **(stress or {}))
    cpu = 2 * n if s.get("cpu") is None else s["cpu"]
    sleepers = n if s.get("sleepers") is None else s["sleepers"]
    args = ["--cpu", str(cpu), "--sleepers", str(sleepers), "--io", str(s.get("io", 0)), "--net", str(s.get("net", 0))]
    for k in ("bursty", "nice"):
        if s.get(k):
            args += [f"--{k}", str(s[k])]
    return args


def _steal():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return v[7], sum(v) - v[3] - v[4], sum(v)


def _stats(samples_ns) -> dict:
    x = np.asarray(samples_ns, dtype=float) / 1e3
    if not len(x):
        return {"count": 0}
    return {"count": len(x), "min_us": float(x.min()), "mean_us": float(x.mean()),
            "p99_us": float(np.percentile(x, 99, method="inverted_cdf")), "max_us": float(x.max())}


def _tree_migrations(root: int) -> int:
    """Migrations so far of every thread of ``root`` and its descendants (se.nr_migrations of
    /proc/TID/sched: the kernel's moves and affinity moves alike); 0 where it is not exposed."""
    from .._procfs import tree_threads

    total = 0
    for pid, tid in tree_threads(root):
        try:
            with open(f"/proc/{pid}/task/{tid}/sched") as f:
                for line in f:
                    if line.startswith("se.nr_migrations"):
                        total += int(line.split(":")[1])
        except (OSError, ValueError):
            pass
    return total


def _stop(proc: subprocess.Popen):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def real_comparison(duration_s: float = 5.0, out_dir="out/opzone2012", repeats: int = 3, zones=("warm-high",),
                    interval: str = "1ms", cpu: int | None = None, stress: dict | None = None, cyclictest: bool = True,
                    hold: bool = True, progress=None) -> dict:
    """Measure the urgent task's wake-up latency on this machine under ``rtsched stress`` with
    the kernel's balancer only ("kernel") and with the zone balancer managing the stress tasks
    (one condition per zone in ``zones``, e.g. "zone:warm-high"); ``repeats`` interleaved runs
    of ``duration_s`` each, the order reversed every other repeat. Both run the stress under
    ``rtsched balance``: "kernel" with ``--dry-run`` (it decides, as ``zones[0]``, and moves
    nothing), so the processes and the /proc reading are the same and only the moves differ.
    Needs root (SCHED_FIFO 99): raises PrivilegeError otherwise.

    Per run: 1 s of load first (the balancer keeps its tasks), then the probe
    (``rtsched.latency.probe``, FIFO 99, pinned to ``cpu``, default the last CPU) for
    ``duration_s``, then, if ``cyclictest`` and it is installed, the real ``cyclictest -S -m``
    (FIFO 99, one thread per CPU) for ``duration_s``; steal is read around both.
    ``stress``: overrides of ``{"cpu": 2 x CPUs, "sleepers": CPUs, "io": 1, "net": 1}`` (and
    "bursty", "nice"). ``hold``: ``rtsched balance --hold`` (only the zone balancer moves the
    stress tasks). ``progress(text)`` is called before each run.

    Writes ``OUT_DIR/opzone_real.json`` (this dict) and ``OUT_DIR/opzone_real_latency.png``
    (probe latency histograms, one per condition). Returns::

        {"machine": {"cpus", "kernel"},
         "settings": {"duration_s", "repeats", "interval", "probe_cpu", "priority": 99,
                      "stress": [rtsched stress arguments], "hold", "zones"},
         "conditions": {NAME: {            # NAME: "kernel", "zone:warm-high", ...
             "probe": {"count", "min_us", "mean_us", "p99_us", "max_us"},   # all runs pooled
             "cyclictest": {"cpu", "count", "min_us", "mean_us", "max_us"} or None,  # probe_cpu's thread
             "cyclictest_all_cpus_max_us": float or None,
             "migrations": int or None,    # by the zone balancer, all runs (None: kernel only)
             "migrations_per_s": float or None,
             "balancer_checks": int or None,
             "task_migrations_per_s": float,  # every move of the stress tasks (kernel's and
                                               # balancer's; se.nr_migrations), mean of the runs
             "steal_pct": float,           # mean of the runs' host steal, % of all CPU time
             "busy_pct": float,            # mean of the runs' CPU busy share
             "runs": [{"repeat", "probe": {...}, "cyclictest": {...} or None,
                       "migrations", "would_migrate" (kernel: what the dry run would have moved),
                       "checks", "task_migrations", "task_migrations_per_s",
                       "elapsed_s", "steal_pct", "busy_pct"}]}},
         "ratio_mean_zone_over_kernel": {NAME: float},   # probe mean latency, < 1: zone better
         "figure": path, "json": path}
    """
    from .. import latency
    from .._core import InputError, PrivilegeError
    from .._io import write_text_atomic
    from ._real import can_run_real

    ok, why = can_run_real()
    if not ok:
        raise PrivilegeError(f"opzone real comparison: {why}")
    ncpu = os.cpu_count() or 1
    probe_cpu = ncpu - 1 if cpu is None else cpu
    if not 0 <= probe_cpu < ncpu:
        raise InputError(f"cpu: {probe_cpu} is not a CPU of this machine (0..{ncpu - 1})")
    if duration_s <= 0 or repeats < 1:
        raise InputError("duration_s and repeats must be positive")
    from .._core import ZoneBalancer

    for z in zones:  # an unknown zone fails here, before any load starts
        ZoneBalancer([("zone", z)], ncpu, "opzone real comparison")
    use_ct = cyclictest and __import__("shutil").which("cyclictest") is not None
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stress_args = _stress_args(stress)
    # The load outlives the measurement; SIGTERM ends it early.
    span = f"{int(duration_s * (2 if use_ct else 1) + 30)}s"
    cli = [sys.executable, "-m", "rtsched.cli"]
    names = ["kernel"] + [f"zone:{z}" for z in zones]
    runs = {n: [] for n in names}
    samples = {n: [] for n in names}
    dur = f"{int(duration_s * 1000)}ms"
    with tempfile.TemporaryDirectory(prefix="rtsched-opzone-") as tmp:
        for rep in range(repeats):
            # Alternate the order, so a condition is not always the one that runs first.
            for name in (names if rep % 2 == 0 else names[::-1]):
                if progress:
                    progress(f"{name} run {rep + 1}/{repeats}")
                stress_cmd = cli + ["stress", "-q", "--duration", span] + stress_args
                report = os.path.join(tmp, f"{name.replace(':', '_')}-{rep}.json")
                if name == "kernel":
                    # The same wrapper deciding but moving nothing: both conditions have the same
                    # processes and the same /proc reading, only the moves differ.
                    cmd = cli + ["balance", "-q", "--dry-run", "--zone", zones[0], "--json", report, "--"] + stress_cmd
                else:
                    cmd = cli + ["balance", "-q", "--zone", name.split(":", 1)[1], "--json", report] + (["--hold"] if hold else []) + ["--"] + stress_cmd
                bg = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                started = time.monotonic()
                try:
                    time.sleep(1.0)
                    if bg.poll() is not None:
                        raise RuntimeError(f"background load ended early ({' '.join(cmd[2:])}): {bg.stderr.read().strip()[:500]}")
                    s0 = _steal()
                    xs = latency.probe(dur, interval, 99, [probe_cpu])[probe_cpu]
                    ct = None
                    if use_ct:
                        per_cpu = latency.cyclictest(dur, interval, 99)
                        ct = dict(per_cpu.get(probe_cpu, {}), cpu=probe_cpu, all_max_us=max(v["max_us"] for v in per_cpu.values()))
                    s1 = _steal()
                    moved = _tree_migrations(bg.pid)
                    alive_s = time.monotonic() - started
                finally:
                    _stop(bg)
                rep_doc = None
                if os.path.exists(report):
                    with open(report) as f:
                        rep_doc = json.load(f)
                total = max(1, s1[2] - s0[2])
                samples[name].append(xs)
                runs[name].append({
                    "repeat": rep, "probe": _stats(xs), "cyclictest": ct,
                    "migrations": rep_doc["counters"]["migrations"] if rep_doc and name != "kernel" else None,
                    "would_migrate": rep_doc["counters"]["migrations"] if rep_doc and name == "kernel" else None,
                    "checks": rep_doc["counters"]["checks_total"] if rep_doc else None,
                    "task_migrations": moved, "task_migrations_per_s": moved / alive_s,
                    "elapsed_s": rep_doc["elapsed_s"] if rep_doc else None,
                    "steal_pct": 100 * (s1[0] - s0[0]) / total, "busy_pct": 100 * (s1[1] - s0[1]) / total,
                })
    conditions = {}
    for name in names:
        rs = runs[name]
        cts = [r["cyclictest"] for r in rs if r["cyclictest"] and r["cyclictest"].get("count")]
        ct = None
        if cts:
            n = sum(c["count"] for c in cts)
            ct = {"cpu": probe_cpu, "count": n, "min_us": min(c["min_us"] for c in cts),
                  "mean_us": sum(c["avg_us"] * c["count"] for c in cts) / n, "max_us": max(c["max_us"] for c in cts)}
        mig = None if name == "kernel" else sum(r["migrations"] or 0 for r in rs)
        secs = sum(r["elapsed_s"] or 0 for r in rs)
        conditions[name] = {
            "probe": _stats(np.concatenate(samples[name])),
            "cyclictest": ct,
            "cyclictest_all_cpus_max_us": max((c["all_max_us"] for c in cts), default=None),
            "migrations": mig,
            "migrations_per_s": (mig / secs if mig is not None and secs else None),
            "balancer_checks": None if name == "kernel" else sum(r["checks"] or 0 for r in rs),
            "task_migrations_per_s": float(np.mean([r["task_migrations_per_s"] for r in rs])),
            "steal_pct": float(np.mean([r["steal_pct"] for r in rs])),
            "busy_pct": float(np.mean([r["busy_pct"] for r in rs])),
            "runs": rs,
        }
    k = conditions["kernel"]["probe"]["mean_us"]
    doc = {
        "machine": {"cpus": ncpu, "kernel": os.uname().release},
        "settings": {"duration_s": duration_s, "repeats": repeats, "interval": interval, "probe_cpu": probe_cpu, "priority": 99,
                     "stress": stress_args, "hold": hold, "zones": list(zones)},
        "conditions": conditions,
        "ratio_mean_zone_over_kernel": {n: conditions[n]["probe"]["mean_us"] / k for n in names[1:]},
        "figure": str(out_dir / "opzone_real_latency.png"),
        "json": str(out_dir / "opzone_real.json"),
    }
    _plot(samples, doc["figure"])
    write_text_atomic(doc["json"], json.dumps(doc, indent=2) + "\n")
    return doc


def _plot(samples: dict, path):
    """The probe's latency histograms, one per condition (PNG and SVG, atomically)."""
    from ..plots import _plt, save

    plt = _plt()
    pooled = {n: np.concatenate(v) / 1e3 for n, v in samples.items()}
    hi = max(float(np.percentile(v, 99.9)) for v in pooled.values() if len(v))
    bins = np.linspace(0, max(hi, 1.0), 80)
    fig, ax = plt.subplots(figsize=(8, 4))
    for name, xs in pooled.items():
        label = "kernel's balancer only" if name == "kernel" else f"zone balancer ({name.split(':', 1)[1]})"
        ax.hist(xs, bins=bins, histtype="step", log=True, label=f"{label}: mean {xs.mean():.1f} us, max {xs.max():.0f} us")
    ax.set_xlabel("wake-up latency of the SCHED_FIFO 99 probe (us), 99.9th percentile and below")
    ax.set_ylabel("cycles")
    ax.set_title("opzone 2012 Fig 7 on this machine (under rtsched stress)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, path)
