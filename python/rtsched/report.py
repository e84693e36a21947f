"""Plain-text tables for the terminal."""

from __future__ import annotations


def _ms(ns) -> str:
    return "-" if ns is None else f"{ns / 1e6:.3f}"


COLUMNS = [
    ("scheduler", lambda r, s: r.scheduler, "<"),
    ("jobs", lambda r, s: str(s["jobs"]), ">"),
    ("missed", lambda r, s: str(s["missed"]), ">"),
    ("DSR", lambda r, s: f"{s['dsr']:.4f}", ">"),
    ("max tard ms", lambda r, s: _ms(s["max_tardiness_ns"]), ">"),
    ("mean resp ms", lambda r, s: _ms(s["mean_response_ns"]), ">"),
    ("p99 resp ms", lambda r, s: _ms(s["p99_response_ns"]), ">"),
    ("preempt", lambda r, s: str(s["preemptions"]), ">"),
    ("migr", lambda r, s: str(s["migrations"]), ">"),
    ("ctx sw", lambda r, s: str(s["context_switches"]), ">"),
    ("sched calls", lambda r, s: str(s["scheduler_invocations"]), ">"),
    ("prio inv", lambda r, s: _measured(r, str(s["priority_inversions"])), ">"),
    ("inv ms", lambda r, s: _measured(r, _ms(s["priority_inversion_ns"])), ">"),
]


def _measured(r, text) -> str:
    """Kernel runs have no job ledger: their priority inversions and steals are not measured."""
    return "-" if r.substrate == "kernel" else text


def table(headers, rows, aligns) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def fmt(cells):
        return "  ".join(c.ljust(w) if a == "<" else c.rjust(w) for c, w, a in zip(cells, widths, aligns)).rstrip()

    lines = [fmt(headers), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in rows]
    return "\n".join(lines)


BLOCKED = ("max blocked ms", lambda r, s: _ms(s.get("max_blocked_ns", 0)), ">")
STEALS = [
    ("steals", lambda r, s: _measured(r, str(s.get("steals", 0))), ">"),
    ("steal tries", lambda r, s: _measured(r, str(s.get("steal_attempts", 0))), ">"),
    ("failed", lambda r, s: _measured(r, str(s.get("failed_steals", 0))), ">"),
]


def comparison_table(results) -> str:
    """One row per run: the comparison users read first. Runs with critical sections get a
    column for the longest time a job waited for a resource; runs of a work-stealing policy
    (PAWS) get its steals, steal attempts and failed steals."""
    cols = list(COLUMNS)
    if any(r.summary.get("steal_attempts", 0) for r in results):
        cols[-2:-2] = STEALS
    if any(r.summary.get("total_blocked_ns", 0) for r in results):
        cols.insert(7, BLOCKED)
    rows = [[f(r, r.summary) for _, f, _ in cols] for r in results]
    return table([c[0] for c in cols], rows, [c[2] for c in cols])


def per_task_table(result) -> str:
    df = result.tasks
    headers = ["task", "jobs", "missed", "DSR", "max tard ms", "max resp ms", "p99 resp ms", "preempt", "migr"]
    rows = [
        [name, str(r.jobs), str(r.missed), f"{r.dsr:.4f}", _ms(r.max_tardiness_ns), _ms(r.max_response_ns), _ms(r.p99_response_ns), str(r.preemptions), str(r.migrations)]
        for name, r in df.iterrows()
    ]
    return table(headers, rows, ["<"] + [">"] * (len(headers) - 1))
