"""The standard figures of the field, from sweep tables and runs (matplotlib, Agg).

- :func:`metric_vs_utilisation` — a metric against the utilisation point (or, ``x="U"``, the
  sets' actual utilisation, binned), one line per scheduler, mean ± 95% confidence interval over
  the seeds (Student's t); :func:`dsr`, :func:`aur`, :func:`tardiness`, :func:`migrations` are
  its common cases.
- :func:`utilisation_drift` — the points whose sets' actual U (the table's ``U``) is not the U
  the point asked for (LWFG's caps, waters2015's windows), and :func:`drift_warnings` saying so.
- :func:`schedulability` — the schedulability ratio curve: the fraction of task sets a
  scheduler ran without a miss (a failed partition counts as a failure), with 95% Wilson
  intervals.
- :func:`gantt` — Gantt charts of traced runs (drawn by :mod:`rtsched.gantt`).
- :func:`latency_histogram` — a histogram of latencies given in ns.
- :func:`chain_metric` — a chain metric of the sweep table (the largest end-to-end latency,
  data age or reaction time of a set's chains, docs/chains.md "Sweeps") against utilisation.
- :func:`sweep_figures` — the default set ``rtsched sweep`` writes next to its table.

Every ``path`` is written as PNG *and* SVG (``fig.png`` and ``fig.svg`` whatever extension
is given), each atomically: a temporary file in the same directory, then a rename. A sweep
with several generators gets one panel per generator.
"""

from __future__ import annotations

import math
import os

from ._core import TEST_PREFIX
from .durations import words

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
    """A figure of one panel per generator: ``title`` above them all, each panel titled with
    its experiment (generator, m, n, seeds, duration: :func:`caption`)."""
    plt = _plt()
    gens = list(dict.fromkeys(df["generator"])) if "generator" in df.columns and len(df) else [""]
    cols = min(4, len(gens))
    rows = -(-len(gens) // cols)
    fig, grid = plt.subplots(rows, cols, figsize=(5.2 * cols if cols > 1 else 7.0, 3.8 * rows + 0.9), squeeze=False,
                             sharey=True)
    axes = [a for row in grid for a in row]
    for a in axes[len(gens):]:
        a.set_visible(False)
    axes = axes[:len(gens)]
    for a, g in zip(axes, gens):
        a.set_xlabel(xlabel)
        a.grid(alpha=0.3)
        text = caption(df[df["generator"] == g] if g else df)
        text = f"{g}: {text}" if g and text else (g or text)
        if text:
            a.set_title(text, fontsize=9)
    fig.suptitle(title, fontsize=11)
    for i, a in enumerate(axes):
        if i % cols == 0:
            a.set_ylabel(ylabel)
    return fig, axes, gens


def _values(df, column, fmt=str):
    """The values of ``column`` in ``df`` as text: one value, a range of numbers, or None."""
    if column not in df.columns:
        return None
    vals = sorted({v for v in df[column] if v is not None and v == v})
    if not vals:
        return None
    if len(vals) == 1:
        return fmt(vals[0])
    return f"{fmt(vals[0])}–{fmt(vals[-1])}"


def caption(df) -> str:
    """The experiment behind ``df``'s rows, as a figure says it: ``m = 4, n = 8, 10 seeds per
    point, 1s simulated`` (each part only when the table has its column; a range when the
    rows differ)."""
    parts = []
    for col in ("m", "n"):
        v = _values(df, col, lambda x: f"{int(x)}")
        if v is not None:
            parts.append(f"{col} = {v}")
    if "replication" in df.columns and len(df):
        keys = [c for c in ("generator", "point", "scheduler") if c in df.columns]
        per = df.groupby(keys)["replication"].nunique() if keys else df[["replication"]].nunique()
        lo, hi = int(per.min()), int(per.max())
        parts.append(f"{lo if lo == hi else f'{lo}–{hi}'} seed{'s' if hi > 1 else ''} per point")
    d = _values(df, "duration_ns", words)
    if d is not None:
        parts.append(f"{d} simulated")
    return ", ".join(parts)


def _per_cpu(df) -> bool:
    """Whether the points of a table whose parameter is U are per CPU (a spec's ``per_cpu:
    true``: the generator got point × m): the sets' actual U is nearer point × m than point."""
    need = {"U", "m", "point"}
    if not need <= set(df.columns):
        return False
    rows = df[df["U"].notna() & (df["m"] > 1)] if len(df) else df
    if not len(rows):
        return False
    per = (rows["U"] - rows["point"] * rows["m"]).abs().median()
    total = (rows["U"] - rows["point"]).abs().median()
    return bool(per < total)


#: How far a set's actual U may be from the U its point asked for before
#: :func:`utilisation_drift` reports it: 0.1% of it (at least 1e-6). A generator that gives its
#: total is far closer — integer-ns rounding moves Σ C/T by at most Σ 0.5 ns / T_i, 4e-7 for
#: 8 tasks of 10 ms (docs/generators.md) — so what is reported is a generator whose U is a cap
#: or a window (LWFG's MTT sets, waters2015), not rounding.
DRIFT = 1e-3


def _asked(generator: str, gen_params: str, m) -> float:
    """The total utilisation a row's point asked of its generator: its ``U`` parameter (per-CPU
    points are already × m there), ``lelli2011``'s R × m; NaN when neither says (paws2013's
    window, a generator's default U)."""
    import json

    try:
        p = json.loads(gen_params)
    except (TypeError, ValueError):
        return float("nan")
    try:
        if "U" in p:
            return float(p["U"])
        if generator == "lelli2011" and "R" in p:
            return float(p["R"]) * float(m)
    except (TypeError, ValueError):
        pass
    return float("nan")


def utilisation_drift(df, tolerance: float = DRIFT):
    """Per (generator, point) whose sets' actual U (the ``U`` column: Σ C/T as generated) differs
    from the U the point asked for by more than ``tolerance`` × that U (at least 1e-6): the U
    asked, how many rows, and the least, mean and largest difference (actual − asked). Empty
    when every set has the U it was asked for, or the table cannot say (no ``gen_params``)."""
    import pandas as pd

    cols = ["generator", "point", "asked", "rows", "drifting", "least", "mean", "largest"]
    need = {"generator", "gen_params", "point", "U", "m"}
    if not need <= set(df.columns) or not len(df):
        return pd.DataFrame(columns=cols)
    # The U asked, worked out once per (generator, parameters, m): a sweep has millions of rows
    # and few of these.
    on = ["generator", "gen_params", "m"]
    keys = df[on].drop_duplicates()
    keys = keys.assign(asked=[_asked(g, p, m) for g, p, m in keys.itertuples(index=False)])
    asked = df[on].merge(keys, on=on, how="left")["asked"].to_numpy(dtype="float64")
    work = pd.DataFrame({"generator": df["generator"].to_numpy(), "point": df["point"].to_numpy(), "asked": asked,
                         "diff": df["U"].to_numpy(dtype="float64") - asked})
    work["far"] = work["diff"].abs() > (tolerance * work["asked"].abs()).clip(lower=1e-6)
    rows = []
    for (g, pt), grp in work[work.groupby(["generator", "point"])["far"].transform("any")].groupby(["generator", "point"]):
        d = grp["diff"]
        rows.append([g, pt, float(grp["asked"].iloc[0]), len(grp), int(grp["far"].sum()), float(d.min()), float(d.mean()),
                     float(d.max())])
    return pd.DataFrame(rows, columns=cols)


def drift_warnings(df, option: str = 'x="U"', x: str = "point") -> list[str]:
    """One warning per generator of :func:`utilisation_drift`: at how many points its sets' actual
    U is not the U asked, and by how much, and where the figures (drawn against ``x``) place
    them; ``option`` is how the caller asks for the actual U on the x axis (``--plot-x U`` from
    the command line)."""
    d = utilisation_drift(df)
    where = ("the figures place each set at its actual U, binned" if x == "U"
             else f"the figures place each set at its point; {option} places it at its actual U")
    out = []
    for g, grp in d.groupby("generator", sort=False):
        points = df[df["generator"] == g]["point"].nunique()
        mean = (grp["mean"] * grp["rows"]).sum() / grp["rows"].sum()
        out.append(f"warning: {g}: at {len(grp)} of {points} points the sets' actual U differs from the U asked by "
                   f"more than {DRIFT:.1%} ({grp['least'].min():+.3f} to {grp['largest'].max():+.3f}, mean {mean:+.3f}; "
                   f"each set's is in the table's U column); {where}")
    return out


#: The values ``x`` takes in the figures against utilisation: the point, or the sets' actual U.
X_AXES = ("point", "U")


def by_locking(df):
    """``df`` with one series per scheduler and locking protocol: a table of a spec's
    ``locking`` axis (docs/sweeps.md "Locking protocols") has its protocol in the ``locking``
    column; where a row has one, its ``scheduler`` reads ``SCHEDULER @ PROTOCOL``."""
    if "locking" not in df.columns or not len(df):
        return df
    lock = df["locking"].fillna("").astype(str)
    if not (lock != "").any():
        return df
    sched = df["scheduler"].astype(str)
    return df.assign(scheduler=sched.where(lock == "", sched + " @ " + lock))


def _x_axis(df, x, per_cpu=None):
    """(``df``, the column to plot against, the axis's words or None) for ``x``: ``"point"`` (or
    any other column) as it is; ``"U"``: each set's actual U (÷ m for per-CPU points), binned to
    the nearest multiple of the points' smallest spacing counted from the first point (one point:
    a tenth of it), in a new column ``U_binned``. A ``locking`` axis's rows are drawn one line
    per scheduler and protocol (:func:`by_locking`)."""
    df = by_locking(df)
    if x != "U":
        return df, x, None
    import numpy as np

    if per_cpu is None:
        per_cpu = _per_cpu(df)
    pts = sorted({float(p) for p in df["point"]}) if "point" in df.columns and len(df) else [1.0]
    width = min((b - a for a, b in zip(pts, pts[1:])), default=abs(pts[0]) / 10 or 0.1)
    u = df["U"].astype("float64") / (df["m"].astype("float64") if per_cpu else 1.0)
    binned = np.round(pts[0] + np.round((u - pts[0]) / width) * width, 9)
    words = "utilisation per CPU U/m" if per_cpu else "total utilisation U"
    return df.assign(U_binned=binned), "U_binned", f"{words} (actual, bins of {width:g})"


def _xlabel(df, per_cpu=None):
    """The x axis's words for the table's points: what the generator's parameter is, and per
    CPU when the points are (``per_cpu``; None: from the table, :func:`_per_cpu`)."""
    if "param" in df.columns and len(df):
        p = df["param"].iloc[0]
        if p == "U":
            if per_cpu is None:
                per_cpu = _per_cpu(df)
            return "utilisation per CPU U/m (point)" if per_cpu else "total utilisation U (point)"
        return {"R": "utilisation per CPU R", "window": "utilisation window"}.get(p, p)
    return "utilisation per CPU U/m" if per_cpu else "utilisation"


def _schedulers(df):
    return list(dict.fromkeys(df["scheduler"]))


def _dodge(df, x, i, k):
    """A small x offset for the i-th of k lines, so error bars do not hide each other."""
    xs = sorted(set(df[x])) if len(df) else []
    step = min((b - a for a, b in zip(xs, xs[1:])), default=1.0)
    return (i - (k - 1) / 2) * 0.06 * step / max(1, k - 1) * (k > 1)


#: The range a metric of the sweep table can take: a confidence interval is clipped to it.
#: Every other column of the table counts or measures time, so is at least 0.
BOUNDS = {"dsr": (0.0, 1.0), "aur": (0.0, 1.0), "schedulable": (0.0, 1.0)}

#: A row's status when nothing ran, as a figure's legend says it (docs/sweeps.md).
NOT_RUN = {"partition-failed": "partition failed", "deadlock": "deadlocked", "too-long": "too long to run",
           "not-applicable": "test does not apply"}


def _is_test(scheduler: str) -> bool:
    """A ``test:NAME`` row: a schedulability test's verdict, not a simulation."""
    return str(scheduler).startswith(TEST_PREFIX)


def _simulated(df):
    """The rows that were simulated (a table with tests also has their rows, which have no
    simulation metrics)."""
    if "kind" in df.columns:
        return df[df["kind"] != "test"]
    return df[~df["scheduler"].map(_is_test)] if "scheduler" in df.columns else df


def _bounds(df, metric, bounds):
    if bounds is not None:
        return bounds
    if metric in BOUNDS:
        return BOUNDS[metric]
    values = df[metric].astype("float64") if metric in df.columns else []
    return (0.0, None) if len(values) and (values.dropna() >= 0).all() else (None, None)


def _clip(y, lo, hi, bounds):
    """(lo, hi) error bar lengths below and above ``y``, cut at ``bounds`` (None: unbounded)."""
    low, high = bounds
    if low is not None:
        lo = min(lo, max(0.0, y - low))
    if high is not None:
        hi = min(hi, max(0.0, high - y))
    return lo, hi


#: The height of one row of × (sets not run) at the foot of a panel, as a fraction of the panel.
FOOT_ROW = 0.05


def _colour(i: int, n: int):
    """The colour of the i-th of n series: matplotlib's cycle (C0…C9), or tab20's 20 colours
    when there are more than 10 (an acceptance figure of every test), so none repeats."""
    if n <= 10:
        return f"C{i}"
    import matplotlib

    return matplotlib.colormaps["tab20"](i % 20)


def _per_point_plot(df, x, title, ylabel, point, ylim=None, per_cpu=None, failed=None, top=None, xlabel=None):
    """One panel per generator, one line per scheduler: ``point(group)`` gives (y, yerr) for the
    rows at one x value (or None to leave it out). ``failed``: the rows that did not run, drawn
    as × at the foot of the panel, each with its count. ``top``: the most the metric can be (the
    axis stops just above it). ``xlabel``: the axis's words (default: the points', :func:`_xlabel`).
    Returns the figure."""
    import pandas as pd
    from matplotlib.lines import Line2D
    from matplotlib.transforms import blended_transform_factory

    if failed is not None and not len(failed):
        failed = None
    everything = df if failed is None else pd.concat([df, failed])
    fig, axes, gens = _panels(everything, title, ylabel, xlabel or _xlabel(everything, per_cpu))
    scheds = _schedulers(everything)
    mixed = any(map(_is_test, scheds)) and not all(map(_is_test, scheds))
    said, foot_rows = set(), 0
    for a, g in zip(axes, gens):
        sub = df[df["generator"] == g] if g else df
        fgen = None if failed is None else (failed[failed["generator"] == g] if g else failed)
        foot = blended_transform_factory(a.transData, a.transAxes)
        # One row of × per scheduler with failures, at the foot of the panel.
        failing = [] if fgen is None else [s for s in scheds if (fgen["scheduler"] == s).any()]
        for i, s in enumerate(scheds):
            colour = _colour(i, len(scheds))
            pts = sub[sub["scheduler"] == s]
            off = _dodge(everything, x, i, len(scheds))
            xs, ys, lo, hi = [], [], [], []
            for xv, grp in pts.groupby(x, sort=True):
                p = point(grp)
                if p is not None:
                    (y, (e_lo, e_hi)) = p
                    xs.append(xv + off), ys.append(y), lo.append(e_lo), hi.append(e_hi)
            if fgen is not None:
                fsub = fgen[fgen["scheduler"] == s]
                ran = set(pts[x])
                for xv, grp in fsub.groupby(x, sort=True):
                    total = len(grp) + int((pts[x] == xv).sum())
                    y = FOOT_ROW * (failing.index(s) + 0.7)
                    a.plot([xv + off], [y], marker="x", color=colour, markersize=6, transform=foot, clip_on=False)
                    a.text(xv + off, y, f"  {len(grp)}/{total}", color=colour, fontsize=7, ha="left", va="center",
                           transform=foot)
                    said |= set(grp["status"])
                    if xv not in ran:  # nothing ran here: break the line rather than join across
                        xs.append(xv + off), ys.append(float("nan")), lo.append(0.0), hi.append(0.0)
                order = sorted(range(len(xs)), key=xs.__getitem__)
                xs, ys, lo, hi = ([v[k] for k in order] for v in (xs, ys, lo, hi))
            some_failed = fgen is not None and (fgen["scheduler"] == s).any()
            label = f"{s} (simulation)" if mixed and not _is_test(s) else s
            label = f"{label} (mean of the sets that ran)" if some_failed and not _is_test(s) else label
            # Tests dashed with square markers, simulations solid with round ones.
            style = {"marker": "s", "linestyle": "--"} if _is_test(s) else {"marker": "o", "linestyle": "-"}
            if xs:
                a.errorbar(xs, ys, yerr=[lo, hi], markersize=3, capsize=3, label=label, color=colour, **style)
            elif some_failed:
                a.plot([], [], markersize=3, label=label, color=colour, **style)  # never ran: only its ×
        foot_rows = max(foot_rows, len(failing))
    # The panels share their y axis: its range is set once, for all of them.
    if ylim is not None:
        axes[0].set_ylim(*ylim)
        low, high = ylim
    else:
        low, high = axes[0].get_ylim()
        if top is not None and high > top:  # no room above what the metric can reach
            high = top + 0.03 * (top - low)
            axes[0].set_ylim(low, high)
    if foot_rows:
        # A strip at the foot for the ×, clear of the data, without ticks.
        ticks = [t for t in axes[0].get_yticks() if low <= t <= (high if top is None else min(high, top))]
        strip = FOOT_ROW * (foot_rows + 0.4)
        axes[0].set_ylim(low - strip / (1 - strip) * (high - low), high)
        axes[0].set_yticks(ticks)
    handles, labels = axes[-1].get_legend_handles_labels()
    if said:
        why = ", ".join(NOT_RUN.get(w, w) for w in sorted(said))
        handles.append(Line2D([], [], marker="x", color="grey", linestyle="none"))
        labels.append(f"sets not run ({why}): count/total" if said != {"not-applicable"} else "sets the test does not apply to: count/total")
    axes[-1].legend(handles, labels, fontsize=8)
    fig.tight_layout()
    return fig


def metric_vs_utilisation(df, metric, path=None, ylabel=None, title=None, scale=1.0, x="point", only_ok=True,
                          per_cpu=None, bounds=None):
    """``metric`` against ``x`` per scheduler: mean ± 95% CI over seeds, the interval clipped
    to the metric's range (``bounds`` = (low, high), None for either end: unbounded; by
    default :data:`BOUNDS`, else at 0 for a metric never negative). ``x``: ``"point"`` (the
    utilisation point asked), ``"U"`` (each set's actual U, binned: :func:`_x_axis`) or another
    column. Rows whose status is not ``ok`` (a failed partition ran nothing) are left out of the
    mean when ``only_ok``, and shown as failures: × at the foot of the panel with how many of
    the sets did not run."""
    if metric not in df.columns:
        raise KeyError(f"no column {metric!r} in the table")
    df = _simulated(df)  # a test's row has no simulation metrics
    df, x, xlabel = _x_axis(df, x, per_cpu)
    failed = None
    if only_ok and "status" in df.columns:
        failed = df[df["status"] != "ok"]
        df = df[df["status"] == "ok"]
    bounds = _bounds(df, metric, bounds)
    bounds = tuple(None if b is None else b * scale for b in bounds)

    def point(grp):
        m, h, n = mean_ci(grp[metric].astype("float64") * scale)
        return (m, _clip(m, h, h, bounds)) if n else None

    fig = _per_point_plot(df, x, title or metric, ylabel or metric, point, per_cpu=per_cpu, failed=failed, top=bounds[1],
                          xlabel=xlabel)
    if path is not None:
        save(fig, path)
    return fig


def dsr(df, path=None, per_cpu=None, x="point"):
    return metric_vs_utilisation(df, "dsr", path, ylabel="deadline satisfaction ratio (DSR)", title="DSR vs utilisation",
                                 per_cpu=per_cpu, x=x)


def aur(df, path=None, per_cpu=None, x="point"):
    """Accrued utility ratio (step TUFs; only generators that draw utilities, e.g. chronos2011)."""
    return metric_vs_utilisation(df, "aur", path, ylabel="accrued utility ratio (AUR)", title="AUR vs utilisation",
                                 per_cpu=per_cpu, x=x)


def tardiness(df, path=None, metric="max_tardiness_ns", per_cpu=None, x="point"):
    return metric_vs_utilisation(df, metric, path, ylabel=f"{metric.replace('_ns', '').replace('_', ' ')} (ms)",
                                 title="tardiness vs utilisation", scale=1e-6, per_cpu=per_cpu, x=x)


def migrations(df, path=None, per_cpu=None, x="point"):
    return metric_vs_utilisation(df, "migrations", path, ylabel="migrations per task set", title="migrations vs utilisation",
                                 per_cpu=per_cpu, x=x)


#: The chain metrics of a sweep row (the catalogue's columns measured ``chains``; docs/chains.md
#: "Sweeps"): column -> (figure name, axis words). Each is the largest over every instance of
#: the set's chains, so a point's mean is the mean over seeds of each set's worst instance.
CHAIN_FIGURES = {
    "chain_latency_max_ns": ("chain_latency", "largest event-chain latency per set (ms)"),
    "chain_data_age_max_ns": ("chain_data_age", "largest data age per set (ms)"),
    "chain_reaction_time_max_ns": ("chain_reaction_time", "largest reaction time per set (ms)"),
}


def chain_metric(df, metric="chain_latency_max_ns", path=None, per_cpu=None, x="point"):
    """A chain metric of the sweep table (:data:`CHAIN_FIGURES`) against utilisation, in ms: mean
    ± 95% CI over the seeds of each set's largest value, as :func:`metric_vs_utilisation`. Rows
    whose set has no chain of that kind (the column empty) are left out of the mean, and a
    generator none of whose sets has one gets no panel."""
    if metric not in CHAIN_FIGURES:
        from ._core import InputError

        raise InputError(f"chain metric {metric!r}: known: {', '.join(CHAIN_FIGURES)}")
    words = CHAIN_FIGURES[metric][1]
    if metric in df.columns and "generator" in df.columns and df[metric].notna().any():
        # A panel per generator whose sets have such chains (event chains give no data age).
        has = df.groupby("generator", sort=False)[metric].transform(lambda v: v.notna().any())
        df = df[has.astype(bool)]
    return metric_vs_utilisation(df, metric, path, ylabel=words, title=f"{words.rsplit(' (', 1)[0]} vs utilisation",
                                 scale=1e-6, per_cpu=per_cpu, x=x)


def metric_figure(df, metric, path=None, per_cpu=None, x="point"):
    """``metric`` (any numeric column of the sweep table) against utilisation: a chain metric
    with its words and in ms (:func:`chain_metric`), a ``*_ns`` column in ms, any other as it is
    (``rtsched sweep --plot-y``)."""
    if metric in CHAIN_FIGURES:
        return chain_metric(df, metric, path, per_cpu=per_cpu, x=x)
    if metric not in df.columns:
        from ._core import InputError

        raise InputError(f"--plot-y {metric}: no such column in the sweep table")
    if metric.endswith("_ns"):
        return metric_vs_utilisation(df, metric, path, ylabel=f"{metric[:-3].replace('_', ' ')} (ms)", scale=1e-6,
                                     per_cpu=per_cpu, x=x)
    return metric_vs_utilisation(df, metric, path, per_cpu=per_cpu, x=x)


def schedulability(df, path=None, x="point", title=None, per_cpu=None):
    """The acceptance ratio per scheduler, with 95% Wilson intervals: for a simulated
    scheduler the fraction of task sets with no missed deadline (a failed partition is a
    failure); for a ``test:NAME`` (dashed) the fraction the test proves schedulable (an
    inconclusive verdict is not a proof). Sets a test does not apply to are shown as × with
    their count, not counted. ``x`` as :func:`metric_vs_utilisation`'s."""

    def point(grp):
        k, n = int(grp["schedulable"].sum()), len(grp)
        lw, hg = wilson(k, n)
        return (k / n, (k / n - lw, hg - k / n))

    df, x, xlabel = _x_axis(df, x, per_cpu)
    failed = df[df["status"] == "not-applicable"] if "status" in df.columns else None
    if failed is not None:
        df = df[df["status"] != "not-applicable"]
    tests = "scheduler" in df.columns and df["scheduler"].map(_is_test).any()
    if title is None:
        title = "acceptance ratio: tests and simulation" if tests else "schedulability ratio"
    ylabel = "acceptance ratio (sets schedulable)" if tests else "fraction of task sets schedulable"
    fig = _per_point_plot(df, x, title, ylabel, point, ylim=(-0.05, 1.05), per_cpu=per_cpu, failed=failed, xlabel=xlabel)
    if path is not None:
        save(fig, path)
    return fig


def weighted(df, column="schedulable"):
    """Weighted schedulability per (generator, scheduler): W = Σ U·S / Σ U over the task sets,
    S = 1 for a set schedulable (``column``) and U its utilisation (Bastoni, Brandenburg &
    Anderson, OSPERT 2010: one number that weighs a high-utilisation set more, in place of a
    whole curve). The 95% interval is Wilson's at Kish's effective sample size
    (Σ U)² / Σ U² — W is a weighted mean of 0/1 outcomes. Sets a test does not apply to are left
    out. Returns a DataFrame: generator, scheduler, W, low, high, sets (a ``locking`` axis's
    rows per scheduler and protocol, :func:`by_locking`)."""
    import pandas as pd

    df = by_locking(df)
    if "status" in df.columns:
        df = df[df["status"] != "not-applicable"]
    rows = []
    gens = list(dict.fromkeys(df["generator"])) if "generator" in df.columns else [""]
    for g in gens:
        sub = df[df["generator"] == g] if g else df
        for s in _schedulers(sub):
            grp = sub[sub["scheduler"] == s]
            u = grp["U"].astype("float64").to_numpy()
            ok = grp[column].astype(bool).to_numpy()
            total, squares = float(u.sum()), float((u * u).sum())
            if not len(grp) or total <= 0:
                continue
            w = float((u * ok).sum()) / total
            n_eff = total * total / squares
            low, high = wilson(w * n_eff, n_eff)
            rows.append({"generator": g, "scheduler": s, "W": w, "low": min(low, w), "high": max(high, w), "sets": len(grp)})
    return pd.DataFrame(rows, columns=["generator", "scheduler", "W", "low", "high", "sets"])


def weighted_schedulability(df, path=None, per_cpu=None):
    """Weighted schedulability (:func:`weighted`) as bars: one group per generator, one bar per
    scheduler or test (tests hatched), each with its 95% interval and its value."""
    plt = _plt()
    w = weighted(df)
    gens = list(dict.fromkeys(w["generator"])) or [""]
    scheds = list(dict.fromkeys(w["scheduler"]))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 + 0.55 * len(gens) * len(scheds)), 4.4))
    width = 0.8 / max(1, len(scheds))
    for i, s in enumerate(scheds):
        part = w[w["scheduler"] == s].set_index("generator")
        xs = [gi + (i - (len(scheds) - 1) / 2) * width for gi, g in enumerate(gens) if g in part.index]
        ys = [part.loc[g, "W"] for g in gens if g in part.index]
        lo = [part.loc[g, "W"] - part.loc[g, "low"] for g in gens if g in part.index]
        hi = [part.loc[g, "high"] - part.loc[g, "W"] for g in gens if g in part.index]
        ax.bar(xs, ys, width * 0.92, yerr=[lo, hi], capsize=3, color=_colour(i, len(scheds)), label=s,
               hatch="//" if _is_test(s) else None, edgecolor="white" if _is_test(s) else None)
        for x, y, h in zip(xs, ys, hi):  # the value above its interval, clear of the cap
            ax.text(x, y + h + 0.015, f"{y:.2f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(gens)))
    ax.set_xticklabels([g or "all sets" for g in gens], fontsize=8)
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("weighted schedulability W = Σ U·S / Σ U")
    ax.grid(alpha=0.3, axis="y")
    text = caption(df)
    ax.set_title(("weighted schedulability" + (f"\n{text}" if text else "")), fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
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


def sweep_figures(df, prefix, per_cpu=None, x="point", extra=()) -> list[str]:
    """The default figures of a sweep table: ``PREFIX-{schedulability,weighted}`` (acceptance
    ratio of every scheduler and test, and weighted schedulability), ``PREFIX-{dsr,tardiness,
    migrations}`` of the simulated schedulers (none when every entry is a test), and ``-aur``
    when some job could accrue other than 1 — TUFs or generated utilities; with unit utilities
    the AUR is the DSR), each as PNG and SVG. ``per_cpu``: the spec's points are
    per CPU (None: judged from the table). ``x``: ``"point"`` or ``"U"`` (the sets' actual U,
    binned), as :func:`metric_vs_utilisation`. ``PREFIX-chain_{latency,data_age,reaction_time}``
    when some set has chains that give them (:data:`CHAIN_FIGURES`), and ``PREFIX-COLUMN`` for
    each other column of ``extra`` (``--plot-y``; :func:`metric_figure`). Returns the paths."""
    prefix = os.fspath(prefix)
    for metric in extra:  # before any figure is drawn: a wrong name writes nothing
        if metric not in CHAIN_FIGURES and metric not in df.columns:
            from ._core import InputError

            raise InputError(f"--plot-y {metric}: no such column in the sweep table")
    written = []
    if not len(df):
        return written
    figs = [("schedulability", schedulability), ("weighted", weighted_schedulability)]
    sim = _simulated(df)
    if len(sim):
        figs += [("dsr", dsr), ("tardiness", tardiness), ("migrations", migrations)]
    if "aur" in sim.columns and sim["aur"].notna().any():
        if "possible_utility" not in df.columns or (df["possible_utility"] != df["jobs"]).fillna(False).any():
            figs.append(("aur", aur))
    for name, fn in figs:
        fig = fn(df, per_cpu=per_cpu) if fn is weighted_schedulability else fn(df, per_cpu=per_cpu, x=x)
        written += save(fig, f"{prefix}-{name}")
    # The chain metrics some set of the sweep gives (generators with chains: docs/chains.md).
    for metric, (name, _) in CHAIN_FIGURES.items():
        if metric in extra or (metric in sim.columns and sim[metric].notna().any()):
            written += save(chain_metric(df, metric, per_cpu=per_cpu, x=x), f"{prefix}-{name}")
    for metric in extra:
        if metric not in CHAIN_FIGURES:
            written += save(metric_figure(df, metric, per_cpu=per_cpu, x=x), f"{prefix}-{metric}")
    return written
