"""Gantt charts of schedules, one panel per run (scheduler) on one time axis.

A panel has one row per CPU, where each execution interval is a bar in its task's colour
(hatched while its thread holds a resource: the critical sections of a sequential job and of
each thread of a fork-join job, placed by the region, thread and demand each interval
carries), and below them one lane per
task with its jobs' releases (▲) and deadlines (▼; red, with a dashed line across the CPUs,
when the job missed it). The legend sits to the right of the first panel. The window is
``start``..``end`` (ns) or ``window="START:END"`` (:func:`parse_window`); by default from 0 for
four periods of the longest-period task, at most forty of the shortest-period one
(:func:`default_window_ns`), and each panel's title and the x axis say which part of the run
it shows.

A run that recorded no execution intervals (``simulate(..., trace=False)``) has nothing to
draw: :class:`InputError`, saying how to record them, rather than an empty chart.
"""

from __future__ import annotations

import os

from ._core import InputError, parse_duration
from .durations import in_unit

#: More tasks than this share one lane of releases and deadlines (a lane each would be taller
#: than the CPUs' rows).
MAX_TASK_LANES = 24

#: Hatches of the resources a bar holds, by the resource's index in the task set.
HATCHES = ("////", "\\\\\\\\", "xxxx", "....", "++++", "oo")

HOW_TO_TRACE = "simulate(..., trace=True) records them; on the command line --gantt OUT.png does"


def parse_window(text, flag="window"):
    """``"START:END"`` as (start_ns, end_ns): each a duration (a number of ms, or with a unit:
    ``"2s:2.5s"``, ``"0:40"``); either may be left out (``":40"``: from the start of the run;
    ``"100:"``: to the default end). A pair ``(start, end)`` of such durations is taken too.
    Raises :class:`InputError` naming ``flag``."""
    if isinstance(text, (tuple, list)):
        if len(text) != 2:
            raise InputError(f"{flag}: expected (start, end), got {text!r}")
        parts = ["" if v is None else (v if isinstance(v, str) else repr(v)) for v in text]
    elif isinstance(text, str):
        parts = text.split(":")
        if len(parts) != 2:
            raise InputError(f"{flag} {text}: expected START:END (in ms or with units, e.g. 0:40 or 1s:1.2s)")
    else:
        raise InputError(f"{flag}: expected 'START:END' or (start, end), got {text!r}")
    out = []
    for p in parts:
        p = p.strip()
        try:
            out.append(parse_duration(p) if p else None)
        except InputError as e:
            raise InputError(f"{flag} {text if isinstance(text, str) else tuple(text)}: {e}") from None
    start, end = out
    if start is not None and end is not None and end <= start:
        raise InputError(f"{flag} {text if isinstance(text, str) else tuple(text)}: the end must be after the start")
    return start, end


#: The default window: four periods of the longest-period task, but no more than
#: ``SHORTEST_PERIODS`` periods of the shortest-period one.
LONGEST_PERIODS = 4
#: A chart 12 inches wide shows about 1,200 pixels of time: forty periods of the shortest task
#: leave each of its periods 30 pixels, wide enough to see its job, its release and its
#: deadline; a WATERS set's 1 ms tasks beside its 1 s ones are then shown over 40 ms, not 4 s.
SHORTEST_PERIODS = 40


def _span(start, end) -> str:
    """The window shown, in ms: ``0–40 ms``."""
    return f"{in_unit(start)}–{in_unit(end)} ms"


def default_window_ns(tasksets) -> int:
    """The default window's length: ``LONGEST_PERIODS`` periods of the longest-period task,
    capped at ``SHORTEST_PERIODS`` periods of the shortest (sets of close periods show every
    task's jobs; a set whose periods span decades shows its fastest tasks readably)."""
    periods = [t["period_ns"] for ts in tasksets for t in ts.tasks() if t["period_ns"] > 0]
    if not periods:
        return 1
    return min(LONGEST_PERIODS * max(periods), SHORTEST_PERIODS * min(periods))


def _pick_window(results, start, end):
    ends = [r.raw.end_ns for r in results]
    if start is None:
        start = 0
    if end is None:
        end = max(start + 1, min(max(ends), start + default_window_ns([r.taskset for r in results])))
    return start, end


def _sections(taskset):
    """Per name of a task with critical sections, its index (what :meth:`TaskSet.held_work`
    is asked by)."""
    return {t["name"]: i for i, t in enumerate(taskset.tasks()) if t["sections"]}


def _held_spans(iv, taskset):
    """(cpu, start, end, resource) of every stretch of ``iv`` (intervals) in which a thread (a
    sequential job's only one, a fork-join job's, a DAG job's node) held a resource. Where in
    its work a thread holds one is the Rust rule (``TaskSet.held_work``: each section scaled
    by the thread's demand, the interval's ``demand_ns``, as the ledger scales it;
    docs/semantics.md); here that work is laid on the intervals: the first ``overhead_ns`` of
    an interval is overhead, not work."""
    sections = _sections(taskset)
    spans = []
    iv = iv[iv.task.isin(list(sections))].sort_values("start_ns", kind="stable")
    for (task, _job, region, thread), g in iv.groupby(["task", "job", "region", "thread"], sort=False):
        held = taskset.held_work(sections[task], int(region), int(thread), int(g.demand_ns.iloc[0]))
        if not held:
            continue
        work = (g.end_ns - g.start_ns - g.overhead_ns).clip(lower=0)
        done = 0
        for cpu, s, o, w in zip(g.cpu, g.start_ns, g.overhead_ns, work):
            begin = s + o  # the work of this interval runs from here
            for res, a, b in held:
                lo, hi = max(a, done), min(b, done + w)
                if hi > lo:
                    spans.append((cpu, begin + lo - done, begin + hi - done, res))
            done += w
    return spans


def _marks(ax, xs, y, marker, size, face):
    """Markers at ``xs`` on the lane at ``y`` (drawn past the axes' edge at the window's ends)."""
    if xs:  # (an empty line drawn unclipped would stretch the layout to the origin)
        ax.plot(xs, [y] * len(xs), linestyle="none", marker=marker, markersize=size, color=face, markeredgecolor="black",
                markeredgewidth=0.3, clip_on=False)


#: The most DAG node names written on one panel's bars (more would not be read).
MAX_NODE_LABELS = 200


def _node_labels(a, iv, start, end, x):
    """A DAG task's bars carry their node's name (docs/dag.md), where the bar is wide enough
    (at least 3 % of the window) and at most MAX_NODE_LABELS per panel."""
    if "node" not in iv.columns:
        return
    shown = iv[iv.node.notna() & (iv.end_ns > start) & (iv.start_ns < end)]
    shown = shown[(shown.end_ns.clip(upper=end) - shown.start_ns.clip(lower=start)) >= 0.03 * (end - start)]
    for row in shown.head(MAX_NODE_LABELS).itertuples():
        mid = (x(max(row.start_ns, start)) + x(min(row.end_ns, end))) / 2
        a.text(mid, row.cpu, row.node, ha="center", va="center", fontsize=6, clip_on=True)


def gantt(results, path=None, start=None, end=None, ax=None, window=None):
    """Draw ``results`` (traced runs), one panel per run; ``window`` ("START:END" or a pair,
    :func:`parse_window`) or ``start``/``end`` in ns choose the time shown. Written to
    ``path`` (format from its extension) if given. Returns the figure."""
    import matplotlib

    if path is not None and ax is None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    if window is not None:
        w0, w1 = parse_window(window)
        start = w0 if w0 is not None else start
        end = w1 if w1 is not None else end
    if all(len(r.intervals) == 0 for r in results):
        runs = ", ".join(r.scheduler for r in results)
        raise InputError(f"Gantt chart: the run(s) of {runs} recorded no execution intervals ({HOW_TO_TRACE})")
    start, end = _pick_window(results, start, end)
    if start >= max(r.raw.end_ns for r in results):
        last = max(r.raw.end_ns for r in results)
        raise InputError(f"the Gantt chart's window starts at {in_unit(start)} ms, but the run(s) end at "
                         f"{in_unit(last)} ms: choose a window that starts before it")
    names = results[0].raw.task_names
    cmap = plt.get_cmap("tab20" if len(names) > 10 else "tab10")
    colour = {n: cmap(i % cmap.N) for i, n in enumerate(names)}
    scale, unit = (1e6, "ms") if end - start >= 2_000_000 else (1e3, "µs")
    lanes = len(names) if len(names) <= MAX_TASK_LANES else 1
    lane_h = 0.6

    def x(t):
        return t / scale

    if ax is None:
        rows = sum(r.raw.cpus + lane_h * lanes + 0.3 for r in results)
        fig, axes = plt.subplots(len(results), 1, figsize=(12, 1.1 + 0.42 * rows + 0.55 * len(results)), sharex=True,
                                 squeeze=False)
        axes = [a[0] for a in axes]
    else:
        fig, axes = ax.figure, [ax]
    has_sections = bool(_sections(results[0].taskset))
    resources = list(results[0].taskset.resources)
    held_any, missed_any = set(), False
    for a, r in zip(axes, results):
        m = r.raw.cpus
        lane0 = m - 0.5 + 0.3 + lane_h / 2  # the first task lane's centre, below the CPU rows
        a.set_xlim(x(start), x(end))
        iv = r.intervals
        try:
            jobs = r.jobs
        except ValueError:  # a run that kept no per-job records: no releases or deadlines to mark
            jobs = None
        if len(iv) == 0:
            a.text(0.5, 0.5, f"no intervals recorded ({HOW_TO_TRACE})", ha="center", transform=a.transAxes)
        else:
            for (cpu, task), g in iv[(iv.end_ns > start) & (iv.start_ns < end)].groupby(["cpu", "task"]):
                bars = [(x(max(s, start)), x(min(e, end)) - x(max(s, start))) for s, e in zip(g.start_ns, g.end_ns)]
                a.broken_barh(bars, (cpu - 0.4, 0.8), facecolors=colour[task], edgecolor="black", linewidth=0.3)
            _node_labels(a, iv, start, end, x)
            if has_sections:
                for cpu, s, e, res in _held_spans(iv, r.taskset):
                    if e > start and s < end:
                        a.broken_barh([(x(max(s, start)), x(min(e, end)) - x(max(s, start)))], (cpu - 0.4, 0.8),
                                      facecolors="none", edgecolor="black", linewidth=0.0,
                                      hatch=HATCHES[res % len(HATCHES)])
                        held_any.add(res)
        if jobs is not None and len(jobs):
            lane = {n: lane0 + lane_h * (i if lanes > 1 else 0) for i, n in enumerate(names)}
            shown = jobs[(jobs.release_ns >= start) & (jobs.release_ns <= end)]
            for task, g in shown.groupby("task"):
                _marks(a, [x(t) for t in g.release_ns], lane[task], "^", 7, colour[task])
            due = jobs[(jobs.deadline_ns >= start) & (jobs.deadline_ns <= end)]
            for task, g in due.groupby("task"):
                _marks(a, [x(t) for t in g[~g.missed].deadline_ns], lane[task], "v", 7, colour[task])
                missed = [x(t) for t in g[g.missed].deadline_ns]
                _marks(a, missed, lane[task], "v", 8, "red")
                for d in missed:
                    a.plot([d, d], [-0.5, m - 0.5], color="red", linewidth=0.8, linestyle="--")
                missed_any |= len(missed) > 0
        a.axhline(m - 0.5 + 0.15, color="grey", linewidth=0.5)
        ticks = list(range(m)) + ([lane0 + lane_h * i for i in range(lanes)])
        labels = [f"CPU {c}" for c in range(m)] + (list(names) if lanes > 1 else ["releases ▲ / deadlines ▼"])
        a.set_yticks(ticks)
        a.set_yticklabels(labels, fontsize=8 if lanes > 1 else 9)
        for t, n in zip(a.get_yticklabels()[m:], names if lanes > 1 else []):
            t.set_color(colour[n])
        a.set_ylim(lane0 + lane_h * (lanes - 0.5) + 0.1, -0.5)
        s = r.summary
        a.set_title(f"{r.scheduler}: {s['missed']} of {s['jobs']} jobs missed (DSR {s['dsr']:.3f}); "
                    f"shown {_span(start, end)} of {in_unit(r.raw.end_ns)} ms", fontsize=10, loc="left")
        a.grid(axis="x", alpha=0.3)
    total = max(r.raw.end_ns for r in results)
    axes[-1].set_xlabel(f"time ({unit}): the window {_span(start, end)} of a {in_unit(total)} ms run")
    handles = [Patch(facecolor=colour[n], edgecolor="black", label=n) for n in names]
    handles.append(plt.Line2D([], [], linestyle="none", marker="^", color="grey", markeredgecolor="black",
                              markeredgewidth=0.3, label="release"))
    handles.append(plt.Line2D([], [], linestyle="none", marker="v", color="grey", markeredgecolor="black",
                              markeredgewidth=0.3, label="deadline"))
    if missed_any:
        handles.append(plt.Line2D([], [], color="red", linestyle="--", marker="v", label="missed deadline"))
    for res in sorted(held_any):
        handles.append(Patch(facecolor="white", edgecolor="black", hatch=HATCHES[res % len(HATCHES)],
                             label=f"holds {resources[res]}"))
    if ax is None:
        # Beside the first panel, its top at the panel's top, in a margin kept for it (a figure
        # legend: tight_layout would otherwise open a gap under the first panel for its height).
        chars = max(len(h.get_label()) for h in handles)
        right = max(0.6, 1 - (0.55 + 0.075 * chars) / fig.get_figwidth())
        fig.tight_layout(rect=(0, 0, right, 1))
        top = axes[0].get_position().y1
        fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(right, top), borderaxespad=0.0, fontsize=8,
                   frameon=False)
    else:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0.0, fontsize=8,
                  frameon=False)
    if path is not None:
        from ._io import write_atomic

        ext = os.path.splitext(os.fspath(path))[1]
        if ext.lstrip(".").lower() not in fig.canvas.get_supported_filetypes():
            ext = ".png"  # a device or '-' (the CLI checks a file's extension before the run)
        write_atomic(path, lambda tmp: fig.savefig(tmp, dpi=120, format=ext.lstrip(".")), suffix=ext)
        plt.close(fig)
    return fig
