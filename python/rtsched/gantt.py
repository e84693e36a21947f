"""Gantt charts of schedules: one row per CPU, one colour per task, releases and deadline
misses marked. Several runs are stacked, one panel per scheduler, on one time axis."""

from __future__ import annotations

import os


def _pick_window(results, start, end):
    ends = [r.raw.end_ns for r in results]
    if start is None:
        start = 0
    if end is None:
        periods = [t["period_ns"] for r in results for t in r.taskset.tasks()]
        # Long enough to see several jobs of the slowest task, short enough to read.
        end = min(max(ends), start + 4 * max(periods))
    return start, end


def gantt(results, path=None, start=None, end=None, ax=None):
    import matplotlib

    if path is not None and ax is None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    start, end = _pick_window(results, start, end)
    names = results[0].raw.task_names
    cmap = plt.get_cmap("tab20" if len(names) > 10 else "tab10")
    colour = {n: cmap(i % cmap.N) for i, n in enumerate(names)}
    scale, unit = (1e6, "ms") if end - start >= 2_000_000 else (1e3, "µs")

    if ax is None:
        rows = sum(r.raw.cpus for r in results)
        fig, axes = plt.subplots(len(results), 1, figsize=(12, 0.9 + 0.45 * rows + 0.5 * len(results)), sharex=True, squeeze=False)
        axes = [a[0] for a in axes]
    else:
        fig, axes = ax.figure, [ax]
    for a, r in zip(axes, results):
        iv = r.intervals
        if len(iv) == 0:
            a.text(0.5, 0.5, "no intervals recorded (simulate with trace=True)", ha="center", transform=a.transAxes)
            continue
        iv = iv[(iv.end_ns > start) & (iv.start_ns < end)]
        for (cpu, task), g in iv.groupby(["cpu", "task"]):
            bars = [((max(s, start) - start) / scale, (min(e, end) - max(s, start)) / scale) for s, e in zip(g.start_ns, g.end_ns)]
            a.broken_barh(bars, (cpu - 0.4, 0.8), facecolors=colour[task], edgecolor="black", linewidth=0.3)
        jobs = r.jobs
        missed = jobs[jobs.missed & (jobs.deadline_ns >= start) & (jobs.deadline_ns <= end)]
        for d in missed.deadline_ns:
            a.axvline((d - start) / scale, color="red", linewidth=0.8, linestyle="--")
        a.set_yticks(range(r.raw.cpus))
        a.set_yticklabels([f"CPU {c}" for c in range(r.raw.cpus)])
        a.set_ylim(r.raw.cpus - 0.5, -0.5)
        s = r.summary
        a.set_title(f"{r.scheduler}: {s['missed']} of {s['jobs']} jobs missed (DSR {s['dsr']:.3f})", fontsize=10, loc="left")
        a.grid(axis="x", alpha=0.3)
    axes[-1].set_xlabel(f"time ({unit}) from {start / 1e6:g} ms")
    handles = [Patch(facecolor=colour[n], edgecolor="black", label=n) for n in names]
    handles.append(plt.Line2D([], [], color="red", linestyle="--", label="missed deadline"))
    fig.legend(handles=handles, loc="upper right", fontsize=8, ncol=min(len(handles), 8))
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    if path is not None:
        from ._io import write_atomic

        ext = os.path.splitext(os.fspath(path))[1]
        if ext.lstrip(".").lower() not in fig.canvas.get_supported_filetypes():
            ext = ".png"  # a device or '-' (the CLI checks a file's extension before the run)
        write_atomic(path, lambda tmp: fig.savefig(tmp, dpi=120, format=ext.lstrip(".")), suffix=ext)
        plt.close(fig)
    return fig
