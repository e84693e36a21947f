"""Plain-text tables for the terminal."""

from __future__ import annotations


def _ms(ns) -> str:
    return "-" if ns is None else f"{ns / 1e6:.3f}"


COLUMNS = [
    ("scheduler", lambda r, s: r.scheduler, "<"),
    ("jobs", lambda r, s: str(s["jobs"]), ">"),
    ("missed", lambda r, s: str(s["missed"]), ">"),
    ("DSR", lambda r, s: f"{s['dsr']:.4f}", ">"),
    ("AUR", lambda r, s: _ratio(s.get("aur")), ">"),
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


def _ratio(x) -> str:
    """A ratio, or '-' where a document has none (NaN, or from before results schema 3)."""
    return "-" if x is None or x != x else f"{x:.4f}"


def _measured(r, text) -> str:
    """Kernel runs have no job ledger: their priority inversions and steals are not measured."""
    return "-" if r.substrate == "kernel" else text


def _cell(c) -> str:
    """A cell as the terminal should show it: control characters (in a task name, say) escaped."""
    c = str(c)
    return c if c.isprintable() else "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in c)


def table(headers, rows, aligns) -> str:
    headers = [_cell(h) for h in headers]
    rows = [[_cell(c) for c in r] for r in rows]
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
#: Runs with aborts (``on_miss: abort``, or a utility-accrual scheduler's) show how many;
#: runs that resolved deadlocks, how many; runs whose policy was timed, its ns per decision.
ABORTED = ("aborted", lambda r, s: str(s.get("aborted", 0)), ">")
DEADLOCKS = ("deadlocks", lambda r, s: _measured(r, str(s.get("deadlocks", 0))), ">")
POLICY_NS = ("policy ns/decision", lambda r, s: _policy_ns(r), ">")


#: Runs that were charged overheads (``run.overheads``) show the CPU time they took; runs with
#: stalls (the cache model, or real memory work) show the execution-time inflation and the IPC
#: proxy; runs with cache misses, the LLC misses.
OVERHEAD = ("overhead ms", lambda r, s: _ms(_overhead_ns(r)), ">")
INFLATION = ("exec infl", lambda r, s: _ratio(s.get("exec_inflation")), ">")
IPC = ("IPC proxy", lambda r, s: _ratio(s.get("ipc_proxy")), ">")
LLC = ("LLC misses", lambda r, s: str((s.get("misses") or [0, 0, 0])[2]), ">")


def _overhead_ns(r):
    o = r.document["counters"].get("overheads") or {}
    return sum(v for k, v in o.items() if k != "release_ns")


def _policy_ns(r) -> str:
    v = r.measurements.get("policy_ns_per_invocation")
    return "-" if v is None else f"{v:.0f}"


def comparison_table(results) -> str:
    """One row per run: the comparison users read first. Runs with critical sections get a
    column for the longest time a job waited for a resource; runs of a work-stealing policy
    (PAWS) get its steals, steal attempts and failed steals; runs with aborts, resolved
    deadlocks or a timed policy (``--measure-policy``, real runs) get those columns, and so do
    runs charged overheads, with stalls, or with cache misses."""
    cols = list(COLUMNS)
    sums = [r.summary for r in results]
    if any(s.get("steal_attempts", 0) for s in sums):
        cols[-2:-2] = STEALS
    if any(s.get("total_blocked_ns", 0) for s in sums):
        cols.insert(8, BLOCKED)
    if any(s.get("aborted", 0) for s in sums):
        cols.insert(3, ABORTED)
    if any(s.get("deadlocks", 0) for s in sums):
        cols.append(DEADLOCKS)
    if any("policy_ns_per_invocation" in r.measurements for r in results):
        cols.append(POLICY_NS)
    if any(_overhead_ns(r) for r in results):
        cols.append(OVERHEAD)
    if any(abs(s.get("exec_inflation", 1.0) - 1.0) > 1e-9 for s in sums):
        cols.append(INFLATION)
    if any(s.get("ipc_proxy", 1.0) < 1.0 for s in sums):
        cols.append(IPC)
    if any((s.get("misses") or [0, 0, 0])[2] for s in sums):
        cols.append(LLC)
    rows = [[f(r, s) for _, f, _ in cols] for r, s in zip(results, sums)]
    return table([c[0] for c in cols], rows, [c[2] for c in cols])


def per_task_table(result) -> str:
    # From the document, not the DataFrame: a row of a frame with float columns turns the
    # counts into floats ("4.0 jobs").
    headers = ["task", "jobs", "missed", "DSR", "AUR", "utility", "max tard ms", "max resp ms", "p99 resp ms", "preempt", "migr"]
    rows = [
        [t["name"], str(t["jobs"]), str(t["missed"]), f"{t['dsr']:.4f}", _ratio(t.get("aur")),
         f"{t.get('accrued_utility', 0):.4g}/{t.get('possible_utility', 0):.4g}", _ms(t["max_tardiness_ns"]),
         _ms(t["max_response_ns"]), _ms(t["p99_response_ns"]), str(t["preemptions"]), str(t["migrations"])]
        for t in result.document["tasks"]
    ]
    return table(headers, rows, ["<"] + [">"] * (len(headers) - 1))
