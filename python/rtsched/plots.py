"""The standard figures of the field, from sweep tables and runs (matplotlib, Agg).

- :func:`metric_vs_utilisation` — a metric against the utilisation point, one line per
  scheduler, mean ± 95% confidence interval over the seeds (Student's t); :func:`dsr`,
  :func:`aur`, :func:`tardiness`, :func:`migrations` are its common cases.
- :func:`schedulability` — the schedulability ratio curve: the fraction of task sets a
  scheduler ran without a miss (a failed partition counts as a failure), with 95% Wilson
  intervals.
- :func:`gantt` — Gantt charts of traced runs (drawn by :mod:`rtsched.gantt`).
- :func:`latency_histogram` — a histogram of latencies given in ns.
- :func:`sweep_figures` — the default set ``rtsched sweep`` writes next to its table.

Every ``path`` is written as PNG *and* SVG (``fig.png`` and ``fig.svg`` whatever extension
is given), each atomically: a temporary file in the same directory, then a rename. A sweep
with several generators gets one panel per generator.
"""

from __future__ import annotations

import math
import os

# Two-sided 95% Student t quantiles, by degrees of freedom (no SciPy needed).
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
        20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048,
        29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


def t95(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (table, conservative between rows)."""
    if df < 1:
        return float("nan")
    if df in _T95:
        return _T95[df]
    below = [k for k in _T95 if k < df]
    return _T95[max(below)] if df <= 120 else 1.960


def mean_ci(values):
    """(mean, half-width of the 95% CI, count) of the finite values."""
    xs = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    n = len(xs)
    if n == 0:
        return float("nan"), float("nan"), 0
    mean = sum(xs) / n
    if n == 1:
        return mean, 0.0, 1
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    return mean, t95(n - 1) * sd / math.sqrt(n), n


def wilson(k: int, n: int, z: float = 1.96):
    """95% Wilson score interval of a proportion k/n: (low, high)."""
    if n == 0:
        return float("nan"), float("nan")
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def _plt():
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        try:
            matplotlib.use("Agg")
        except Exception:  # noqa: BLE001 - an interactive backend already in use: keep it
            pass
    import matplotlib.pyplot as plt

    return plt


def save(fig, path, formats=("png", "svg"), close=True) -> list[str]:
    """Write ``fig`` as ``path`` with each extension in ``formats``, atomically. Returns the paths."""
    from ._io import write_atomic

    base, _ = os.path.splitext(os.fspath(path))
    written = []
    for ext in formats:
        out = f"{base}.{ext}"
        meta = {"Date": None} if ext == "svg" else None
        write_atomic(out, lambda tmp, ext=ext, meta=meta: fig.savefig(tmp, dpi=120, format=ext, metadata=meta), suffix=f".{ext}")
        written.append(out)
    if close:
        _plt().close(fig)
    return written


def _panels(df, title, ylabel, xlabel):
    plt = _plt()
    gens = list(dict.fromkeys(df["generator"])) if "generator" in df.columns and len(df) else [""]
    cols = min(4, len(gens))
    rows = -(-len(gens) // cols)
    fig, grid = plt.subplots(rows, cols, figsize=(5.2 * cols if cols > 1 else 7.0, 3.8 * rows + 0.6), squeeze=False,
                             sharey=True)
    axes = [a for row in grid for a in row]
    for a in axes[len(gens):]:
        a.set_visible(False)
    axes = axes[:len(gens)]
    for a, g in zip(axes, gens):
        a.set_xlabel(xlabel)
        a.grid(alpha=0.3)
        a.set_title(f"{title} — {g}" if g and len(gens) > 1 else title, fontsize=10)
    for i, a in enumerate(axes):
        if i % cols == 0:
            a.set_ylabel(ylabel)
    return fig, axes, gens


def _xlabel(df):
    if "param" in df.columns and len(df):
        p = df["param"].iloc[0]
        return {"U": "total utilisation U (point)", "R": "utilisation per CPU R", "window": "utilisation window"}.get(p, p)
    return "utilisation"


def _schedulers(df):
    return list(dict.fromkeys(df["scheduler"]))


def _dodge(df, x, i, k):
    """A small x offset for the i-th of k lines, so error bars do not hide each other."""
    xs = sorted(set(df[x])) if len(df) else []
    step = min((b - a for a, b in zip(xs, xs[1:])), default=1.0)
    return (i - (k - 1) / 2) * 0.06 * step / max(1, k - 1) * (k > 1)


def _per_point_plot(df, x, title, ylabel, point, ylim=None):
    """One panel per generator, one line per scheduler: ``point(group)`` gives (y, yerr) for the
    rows at one x value (or None to leave it out). Returns the figure."""
    fig, axes, gens = _panels(df, title, ylabel, _xlabel(df))
    for a, g in zip(axes, gens):
        sub = df[df["generator"] == g] if g else df
        scheds = _schedulers(df)
        for i, s in enumerate(scheds):
            pts = sub[sub["scheduler"] == s]
            off = _dodge(df, x, i, len(scheds))
            xs, ys, lo, hi = [], [], [], []
            for xv, grp in pts.groupby(x, sort=True):
                p = point(grp)
                if p is not None:
                    (y, (e_lo, e_hi)) = p
                    xs.append(xv + off), ys.append(y), lo.append(e_lo), hi.append(e_hi)
            if xs:
                a.errorbar(xs, ys, yerr=[lo, hi], marker="o", markersize=3, capsize=3, label=s)
        if ylim is not None:
            a.set_ylim(*ylim)
    axes[-1].legend(fontsize=8)
    fig.tight_layout()
    return fig


def metric_vs_utilisation(df, metric, path=None, ylabel=None, title=None, scale=1.0, x="point", only_ok=True):
    """``metric`` against ``x`` per scheduler: mean ± 95% CI over seeds. Rows whose status is
    not ``ok`` (a failed partition ran nothing) are left out when ``only_ok``."""
    if metric not in df.columns:
        raise KeyError(f"no column {metric!r} in the table")
    if only_ok and "status" in df.columns:
        df = df[df["status"] == "ok"]

    def point(grp):
        m, h, n = mean_ci(grp[metric].astype("float64") * scale)
        return (m, (h, h)) if n else None

    fig = _per_point_plot(df, x, title or metric, ylabel or metric, point)
    if path is not None:
        save(fig, path)
    return fig


def dsr(df, path=None):
    return metric_vs_utilisation(df, "dsr", path, ylabel="deadline satisfaction ratio (DSR)", title="DSR vs utilisation")


def aur(df, path=None):
    """Accrued utility ratio (step TUFs; only generators that draw utilities, e.g. chronos2011)."""
    return metric_vs_utilisation(df, "aur", path, ylabel="accrued utility ratio (AUR)", title="AUR vs utilisation")


def tardiness(df, path=None, metric="max_tardiness_ns"):
    return metric_vs_utilisation(df, metric, path, ylabel=f"{metric.replace('_ns', '').replace('_', ' ')} (ms)",
                                 title="tardiness vs utilisation", scale=1e-6)


def migrations(df, path=None):
    return metric_vs_utilisation(df, "migrations", path, ylabel="migrations per task set", title="migrations vs utilisation")


def schedulability(df, path=None, x="point", title="schedulability ratio"):
    """Fraction of task sets with no missed deadline (a failed partition is a failure), per
    scheduler, with 95% Wilson intervals."""

    def point(grp):
        k, n = int(grp["schedulable"].sum()), len(grp)
        lw, hg = wilson(k, n)
        return (k / n, (k / n - lw, hg - k / n))

    fig = _per_point_plot(df, x, title, "fraction of task sets schedulable", point, ylim=(-0.05, 1.05))
    if path is not None:
        save(fig, path)
    return fig


def gantt(results, path=None, start=None, end=None, window=None):
    """Gantt chart of one or more traced runs (``simulate(..., trace=True)``), one panel per run:
    CPU rows, releases and deadlines, critical sections (:mod:`rtsched.gantt`). ``window``:
    ``"START:END"`` (ms or with units) or ``start``/``end`` in ns. A run with no recorded
    intervals raises :class:`InputError`."""
    from .gantt import gantt as draw

    if not isinstance(results, (list, tuple)):
        results = [results]
    _plt()
    fig = draw(list(results), path=None, start=start, end=end, window=window)
    if path is not None:
        save(fig, path)
    return fig


def latency_histogram(latencies_ns, path=None, bins=50, label=None, title="latency", log=True, unit="us"):
    """Histogram of latencies (a list/array in ns, or a dict label -> latencies to overlay)."""
    import numpy as np

    plt = _plt()
    series = latencies_ns if isinstance(latencies_ns, dict) else {label or "latency": latencies_ns}
    div = {"ns": 1.0, "us": 1e3, "ms": 1e6}[unit]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    arrays = {k: np.asarray(v, dtype="float64") / div for k, v in series.items()}
    allv = np.concatenate([a for a in arrays.values() if a.size]) if any(a.size for a in arrays.values()) else np.array([0.0])
    edges = np.histogram_bin_edges(allv, bins=bins)
    for k, a in arrays.items():
        if a.size:
            ax.hist(a, bins=edges, alpha=0.6 if len(arrays) > 1 else 0.9,
                    label=f"{k} (n={a.size}, mean {a.mean():.3g}, p99 {np.percentile(a, 99):.3g} {unit})")
    if log:
        ax.set_yscale("log")
    ax.set_xlabel(f"latency ({unit})")
    ax.set_ylabel("count")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    if path is not None:
        save(fig, path)
    return fig


def sweep_figures(df, prefix) -> list[str]:
    """The default figures of a sweep table: ``PREFIX-{dsr,schedulability,tardiness,migrations}``
    (and ``-aur`` when some job could accrue other than 1 — TUFs or generated utilities; with
    unit utilities the AUR is the DSR), each as PNG and SVG. Returns the paths."""
    prefix = os.fspath(prefix)
    written = []
    if not len(df):
        return written
    figs = [("schedulability", schedulability), ("dsr", dsr), ("tardiness", tardiness), ("migrations", migrations)]
    if "aur" in df.columns and df["aur"].notna().any():
        if "possible_utility" not in df.columns or (df["possible_utility"] != df["jobs"]).fillna(False).any():
            figs.append(("aur", aur))
    for name, fn in figs:
        fig = fn(df)
        written += save(fig, f"{prefix}-{name}")
    return written
