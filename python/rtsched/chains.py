"""Chains in a run's output (docs/chains.md): the per-chain table ``simulate`` and ``run`` print
for a set with chains, ``compare``'s simulated vs real latency per chain, and the
``--chains-csv`` file. The numbers are the core's (``Result.chains``,
``summary["chains"]``); this module only lays them out."""

from __future__ import annotations

from . import _core
from .durations import in_unit


def _ms(x):
    return in_unit(x, "ms", 3)


def _three(v):
    """max/mean/p99 in ms, or '-'."""
    return "-" if v is None else "/".join(_ms(v[x]) for x in ("max", "mean", "p99"))


def chains_table(results) -> str:
    """Per run and chain: instances, latency / data age / reaction time (max, mean, p99 in ms)
    and the chain deadline's misses."""
    head = ("scheduler", "chain", "n", "latency max/mean/p99 ms", "data age max/mean/p99 ms",
            "reaction max/mean/p99 ms", "deadline misses")
    rows = [head]
    for r in results:
        for name, s in r.summary.get("chains", {}).items():
            misses = "-" if s["deadline_ns"] is None else str(s["deadline_misses"])
            rows.append((r.scheduler, name, str(s["instances"]), _three(s["latency_ns"]), _three(s["data_age_ns"]),
                         _three(s["reaction_time_ns"]), misses))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows)


def write_chains_csv(results, path):
    """Every run's chain instances into one CSV at ``path`` (atomically): the catalogue's chain
    columns, ``scheduler`` first."""
    _core.write_chains_csv([r.raw for r in results], str(path))


def chains_side_by_side(sim, real) -> str:
    """Per chain: its end-to-end metric (latency for an event chain, data age for a data-flow
    one) simulated and measured, max / mean / p99 in ms, and the instances of each."""
    head = ("chain", "metric", "sim n", "sim max/mean/p99 ms", "real n", "real max/mean/p99 ms")
    rows = [head]
    for name, s in sim.summary.get("chains", {}).items():
        r = real.summary.get("chains", {}).get(name)
        key = "latency_ns" if s["latency_ns"] is not None or (r and r["latency_ns"] is not None) else "data_age_ns"
        rows.append((name, key[:-3].replace("_", " "), str(s["instances"]), _three(s[key]),
                     "-" if r is None else str(r["instances"]), "-" if r is None else _three(r[key])))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows)
