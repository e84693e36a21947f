"""Wake-up latency: rtsched's cyclictest-like probe, and the real cyclictest for comparison."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

from . import _core
from ._core import InputError
from .result import duration_ns


def summarize(samples_ns) -> dict:
    x = np.asarray(samples_ns, dtype=float)
    if len(x) == 0:
        return {"count": 0}
    return {"count": int(len(x)), "min_us": x.min() / 1e3, "avg_us": x.mean() / 1e3, "median_us": float(np.median(x)) / 1e3,
            "p99_us": float(np.percentile(x, 99, method="inverted_cdf")) / 1e3, "max_us": x.max() / 1e3}


def probe(duration="5s", interval="1ms", priority: int = 80, cpus=None, pm_qos: bool = True) -> dict:
    """Run the probe: ``{cpu: array of latencies in ns}`` (one pinned SCHED_FIFO thread per CPU).
    ``pm_qos``: hold /dev/cpu_dma_latency at 0 while measuring, as cyclictest does."""
    _, samples = _core.latency_probe(duration_ns(duration), duration_ns(interval), priority, cpus, pm_qos)
    cpus = cpus if cpus is not None else list(range(len(samples)))
    return {c: np.asarray(s, dtype=np.int64) for c, s in zip(cpus, samples)}


def cyclictest(duration="5s", interval="1ms", priority: int = 80) -> dict:
    """Run the real `cyclictest -S -m` (package rt-tests) with the same settings:
    ``{cpu: {"count", "min_us", "avg_us", "max_us"}}``."""
    exe = shutil.which("cyclictest")
    if exe is None:
        raise InputError("cyclictest is not installed (Debian package rt-tests)")
    iv_us = duration_ns(interval) // 1000
    secs = max(1, duration_ns(duration) // 1_000_000_000)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "ct.json")
        # -d 0: every thread uses the same interval (cyclictest otherwise adds 500 us per thread).
        subprocess.run([exe, "-m", "-S", "-d", "0", "-p", str(priority), "-i", str(iv_us), "-D", f"{secs}s", "-q", f"--json={out}"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=secs + 30)
        with open(out) as f:
            doc = json.load(f)
    return {int(t["cpu"]): {"count": t["cycles"], "min_us": t["min"], "avg_us": t["avg"], "max_us": t["max"]} for t in doc["thread"].values()}
