"""Metrics and figures of mixed workloads (real-time beside best-effort tasks, scheduler `cfs`):
each real-time task's scheduling latency (release to first run), the balancer's counters, the
fair tasks' CPU shares, and per-CPU utilisation over time (opzone paper §4, Fig 7)."""

from __future__ import annotations

import numpy as np

from .durations import in_unit


def latencies_ns(result, task: str) -> np.ndarray:
    """Scheduling latency of each started job of `task`: start − release, in ns (the release
    latency of the overhead model and any non-preemptible section it met are inside it)."""
    jobs = result.jobs
    j = jobs[(jobs["task"] == task) & jobs["start_ns"].notna()]
    return (j["start_ns"].astype("int64") - j["release_ns"].astype("int64")).to_numpy()


def latency_stats(lat_ns) -> dict:
    x = np.asarray(lat_ns, dtype=float) / 1e3
    if len(x) == 0:
        return {"count": 0}
    return {"count": int(len(x)), "min_us": float(x.min()), "mean_us": float(x.mean()),
            "p99_us": float(np.percentile(x, 99, method="inverted_cdf")), "max_us": float(x.max())}


def is_mixed(result) -> bool:
    """Whether the run had best-effort tasks (its measurements carry their shares)."""
    return any(k.startswith("fair.") for k in result.measurements)


def rt_tasks(result) -> list[str]:
    fair = {k.split(".")[1] for k in result.measurements if k.startswith("fair.")}
    return [t for t in result.raw.task_names if t not in fair]


def fair_shares(result) -> dict:
    m = result.measurements
    return {k[len("fair."):-len(".share")]: v for k, v in m.items() if k.startswith("fair.") and k.endswith(".share")}


def balance_counters(result) -> dict:
    m = result.measurements
    return {k[len("balance."):]: v for k, v in m.items() if k.startswith("balance.")}


def mixed_tables(results, width=None) -> str:
    """The tables `rtsched simulate` prints for a mixed set: latency per real-time task and
    scheduler, the balancer's work, and the fair tasks' shares; fitted to `width` (the
    shares of the rightmost fair tasks are left out first)."""
    from .report import table

    rows = []
    for r in results:
        for t in rt_tasks(r):
            s = latency_stats(latencies_ns(r, t))
            if s["count"]:
                rows.append([r.scheduler, t, str(s["count"]), f"{s['min_us']:.1f}", f"{s['mean_us']:.2f}", f"{s['p99_us']:.1f}", f"{s['max_us']:.1f}"])
    out = ["scheduling latency (release to first run):",
           table(["scheduler", "task", "jobs", "min us", "mean us", "p99 us", "max us"], rows, ["<", "<"] + [">"] * 5, width,
                 ranks=[0, 0, 2, 1, 1, 0, 0])]
    rows = []
    for r in results:
        b = balance_counters(r)
        rows.append([r.scheduler, f"{b.get('invocations', 0):.0f}", f"{b.get('checks', 0):.0f}", f"{b.get('migrations', 0):.0f}",
                     in_unit(b.get('ns', 0), "ms", 3), f"{b.get('held_waits', 0):.0f}"])
    out += ["", "load balancing:", table(["scheduler", "passes", "zone checks", "migrations", "balancing ms", "waits on a section"], rows,
                                      ["<"] + [">"] * 5, width, ranks=[0, 1, 2, 0, 1, 2])]
    names = sorted({n for r in results for n in fair_shares(r)})
    rows = [[r.scheduler] + [f"{100 * fair_shares(r).get(n, 0):.1f}" for n in names] for r in results]
    out += ["", "best-effort CPU share (% of the run):", table(["scheduler"] + names, rows, ["<"] + [">"] * len(names), width,
                                                                     ranks=[0] + [1] * len(names))]
    return "\n".join(out)


def cpu_utilisation(result, bin_ns: int = 50_000_000):
    """Per-CPU busy fraction in bins of `bin_ns` from a traced run: (bin starts in ns, array
    [cpu, bin])."""
    iv = result.intervals
    end = int(result.raw.end_ns)
    nb = max(1, -(-end // bin_ns))
    edges = np.arange(nb + 1, dtype=np.int64) * bin_ns
    busy = np.zeros((result.raw.cpus, nb))
    for c, s, e in zip(iv["cpu"].to_numpy(), iv["start_ns"].to_numpy(), iv["end_ns"].to_numpy()):
        b = s // bin_ns
        while s < e and b < nb:
            stop = min(e, edges[b + 1])
            busy[c, b] += stop - s
            s, b = stop, b + 1
    width = np.minimum(edges[1:], end) - edges[:-1]
    return edges[:-1], busy / np.maximum(width, 1)


def utilisation_plot(result, path, bin_ns: int = 50_000_000):
    """Per-CPU utilisation over time (PNG and SVG beside `path`)."""
    from .plots import save

    return save(utilisation_figure(result, bin_ns), path)


def utilisation_figure(result, bin_ns: int = 50_000_000):
    """The figure of :func:`utilisation_plot`, not saved."""
    from .plots import _plt

    plt = _plt()
    t, u = cpu_utilisation(result, bin_ns)
    fig, ax = plt.subplots(figsize=(7, 3))
    for c in range(u.shape[0]):
        ax.plot(t / 1e9, 100 * u[c], lw=1, label=f"CPU {c}")
    ax.set(xlabel="time (s)", ylabel="utilisation (%)", ylim=(0, 105), title=f"{result.scheduler}: per-CPU utilisation")
    ax.legend(fontsize=7, ncol=min(8, u.shape[0]))
    fig.tight_layout()
    return fig
