"""Latency histogram (log-scaled counts), one series per CPU."""

from __future__ import annotations

import os


def latency_histogram(samples_by_cpu: dict, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from ._io import write_atomic

    fig, ax = plt.subplots(figsize=(8, 4))
    hi = max(float(np.percentile(v, 99.9)) for v in samples_by_cpu.values() if len(v)) / 1e3
    bins = np.linspace(0, max(hi, 1.0), 80)
    for cpu, xs in samples_by_cpu.items():
        ax.hist(np.asarray(xs) / 1e3, bins=bins, histtype="step", label=f"CPU {cpu}", log=True)
    ax.set_xlabel("wake-up latency (us)")
    ax.set_ylabel("cycles")
    ax.legend()
    fig.tight_layout()
    ext = os.path.splitext(os.fspath(path))[1] or ".png"
    write_atomic(path, lambda tmp: fig.savefig(tmp, dpi=120, format=ext.lstrip(".")), suffix=ext)
    plt.close(fig)
