"""The tables rtsched prints: the comparison table of runs (one row per run, the columns
:func:`default_columns` or ``--columns`` chooses, fitted to the terminal: :mod:`rtsched.tables`),
the per-task table, and the same summaries for machines (:func:`summary_records`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ._core import InputError
from .tables import Column, plain, render


def _ms(ns) -> str:
    return "-" if ns is None else f"{ns / 1e6:.3f}"


def _ratio(x) -> str:
    """A ratio, or '-' where a document has none (NaN, or from before results schema 3)."""
    return "-" if x is None or x != x else f"{x:.4f}"


def _measured(r, text) -> str:
    """Kernel runs have no job ledger: their priority inversions and steals are not measured."""
    return "-" if r.substrate == "kernel" else text


def table(headers, rows, aligns, width: int | None = None, fold=(), ranks=None, hint: str = "") -> str:
    """A table of `headers`, `rows` of cells, `aligns` of "<" or ">", fitted to `width` (e.g.
    :func:`rtsched.tables.output_width`; None: every column at full width): the columns whose
    headers are in `fold` (text) fold over several lines; then, with `ranks` (one per column,
    0: never), the highest rank is left out first, and a line under the table says which
    (with `hint`: where the rest are)."""
    if width is None:
        return plain(headers, rows, aligns)
    ranks = ranks or [0] * len(headers)
    spec = [Column(h, a, k, h in fold) for h, a, k in zip(headers, aligns, ranks)]
    out = render(spec, rows, width)
    note = out.note(width, hint)
    return out.text + ("\n" + note if note else "")


@dataclass(frozen=True)
class SummaryColumn:
    """A column of the comparison table: its header, the summary key it shows (the key in
    ``--format csv|json`` and in the results JSON's ``total``), how a run's cell reads, and its
    rank: when the table is wider than the terminal, the highest rank is left out first (0:
    never)."""

    header: str
    key: str
    text: Callable
    rank: int
    align: str = ">"
    ledger: bool = False  # measured by the job ledger: not measured in kernel runs

    def cell(self, r, s) -> str:
        t = self.text(r, s)
        return _measured(r, t) if self.ledger else t

    def value(self, r, s):
        """The raw value, for machines (None where not measured)."""
        if self.ledger and r.substrate == "kernel":
            return None
        return RAW.get(self.key, lambda r, s, k=self.key: s.get(k))(r, s)


def _col(header, key, text, rank, **kw) -> SummaryColumn:
    return SummaryColumn(header, key, text, rank, **kw)


SCHEDULER = _col("scheduler", "scheduler", lambda r, s: r.scheduler, 0, align="<")
COLUMNS = [
    SCHEDULER,
    _col("jobs", "jobs", lambda r, s: str(s["jobs"]), 2),
    _col("missed", "missed", lambda r, s: str(s["missed"]), 1),
    _col("DSR", "dsr", lambda r, s: f"{s['dsr']:.4f}", 1),
    _col("AUR", "aur", lambda r, s: _ratio(s.get("aur")), 5),
    _col("max tard ms", "max_tardiness_ns", lambda r, s: _ms(s["max_tardiness_ns"]), 2),
    # Response times exist for completed jobs only: the headers say so, and UNFINISHED (beside
    # them when a run has any) counts the jobs they leave out.
    _col("mean resp ms (done)", "mean_response_ns", lambda r, s: _ms(s["mean_response_ns"]), 4),
    _col("p99 resp ms (done)", "p99_response_ns", lambda r, s: _ms(s["p99_response_ns"]), 3),
    _col("preempt", "preemptions", lambda r, s: str(s["preemptions"]), 4),
    _col("migr", "migrations", lambda r, s: str(s["migrations"]), 4),
    _col("ctx sw", "context_switches", lambda r, s: str(s["context_switches"]), 7),
    _col("sched calls", "scheduler_invocations", lambda r, s: str(s["scheduler_invocations"]), 7),
    _col("prio inv", "priority_inversions", lambda r, s: str(s["priority_inversions"]), 6, ledger=True),
    _col("inv ms", "priority_inversion_ns", lambda r, s: _ms(s["priority_inversion_ns"]), 6, ledger=True),
]
BLOCKED = _col("max blocked ms", "max_blocked_ns", lambda r, s: _ms(s.get("max_blocked_ns", 0)), 3)
STEALS = [
    _col("steals", "steals", lambda r, s: str(s.get("steals", 0)), 5, ledger=True),
    _col("steal tries", "steal_attempts", lambda r, s: str(s.get("steal_attempts", 0)), 6, ledger=True),
    _col("failed", "failed_steals", lambda r, s: str(s.get("failed_steals", 0)), 6, ledger=True),
]
#: Pulls (docs/semantics.md "Pull"): on request (``--columns pulls``), and in ``--format
#: csv|json``; not measured where a real kernel placed the threads.
PULLS = _col("pulls", "pulls", lambda r, s: str(s.get("pulls")), 4, ledger=True)
#: Runs with jobs that did not complete (aborted, or still unfinished when the run ended) show
#: how many, beside the response times, which average the completed jobs only.
UNFINISHED = _col("unfinished", "unfinished", lambda r, s: str(_unfinished(s)), 3)


def _unfinished(s) -> int:
    return s["jobs"] - s.get("completed", s["jobs"])


#: Runs with aborts (``on_miss: abort``, or a utility-accrual scheduler's) show how many;
#: runs that resolved deadlocks, how many; runs whose policy was timed, its ns per decision.
ABORTED = _col("aborted", "aborted", lambda r, s: str(s.get("aborted", 0)), 2)
DEADLOCKS = _col("deadlocks", "deadlocks", lambda r, s: str(s.get("deadlocks", 0)), 2, ledger=True)
POLICY_NS = _col("policy ns/decision", "policy_ns_per_invocation", lambda r, s: _policy_ns(r), 3)


#: Runs that were charged overheads (``run.overheads``) show the CPU time they took; runs with
#: stalls (the cache model, or real memory work) show the execution-time inflation and the IPC
#: proxy; runs with cache misses, the LLC misses.
OVERHEAD = _col("overhead ms", "overhead_ns", lambda r, s: _ms(_overhead_ns(r)), 4)
INFLATION = _col("exec infl", "exec_inflation", lambda r, s: _ratio(s.get("exec_inflation")), 4)
IPC = _col("IPC proxy", "ipc_proxy", lambda r, s: _ratio(s.get("ipc_proxy")), 5)
LLC = _col("LLC misses", "llc_misses", lambda r, s: str((s.get("misses") or [0, 0, 0])[2]), 5)

#: Every column the comparison table can show, in its order (``--columns`` chooses among them).
ALL_COLUMNS = COLUMNS[:3] + [ABORTED] + COLUMNS[3:6] + [UNFINISHED] + COLUMNS[6:8] + [BLOCKED] + COLUMNS[8:10] + [PULLS] + \
    COLUMNS[10:12] + STEALS + COLUMNS[12:] + [DEADLOCKS, POLICY_NS, OVERHEAD, INFLATION, IPC, LLC]

#: Headers --columns still takes, for columns whose header changed.
OLD_HEADERS = {"mean resp ms": "mean_response_ns", "p99 resp ms": "p99_response_ns"}

#: Raw values of the columns that are not a summary key as such.
RAW = {
    "scheduler": lambda r, s: r.scheduler,
    "policy_ns_per_invocation": lambda r, s: r.measurements.get("policy_ns_per_invocation"),
    "overhead_ns": lambda r, s: _overhead_ns(r),
    "llc_misses": lambda r, s: (s.get("misses") or [0, 0, 0])[2],
    "unfinished": lambda r, s: _unfinished(s),
}


def _overhead_ns(r):
    o = r.document["counters"].get("overheads") or {}
    return sum(v for k, v in o.items() if k != "release_ns")


def _policy_ns(r) -> str:
    v = r.measurements.get("policy_ns_per_invocation")
    return "-" if v is None else f"{v:.0f}"


def known_columns() -> str:
    """The names --columns takes, for messages and help."""
    return ", ".join(c.header for c in ALL_COLUMNS)


def parse_columns(text: str) -> list:
    """``--columns a,b,c``: the comparison table's columns by header ("max tard ms") or summary
    key ("max_tardiness_ns"), any case, in the order given. An unknown or empty name raises
    InputError naming it and listing the known ones."""
    by_name = {}
    for c in ALL_COLUMNS:
        by_name.setdefault(c.header.lower(), c)
        by_name.setdefault(c.key.lower(), c)
    for header, key in OLD_HEADERS.items():
        by_name.setdefault(header, by_name[key])
    out = []
    for name in text.split(","):
        c = by_name.get(" ".join(name.split()).lower())
        if c is None:
            what = f"unknown column {name.strip()!r}" if name.strip() else f"an empty column name in {text!r}"
            raise InputError(f"{what}; known: {known_columns()} "
                             f"(or their summary keys: {', '.join(c.key for c in ALL_COLUMNS)})")
        if c not in out:
            out.append(c)
    return out


def default_columns(results) -> list:
    """The columns shown by default: the base ones, and those the runs have something in.
    Runs with critical sections get a column for the longest time a job waited for a resource;
    runs of a work-stealing policy (PAWS) get its steals, steal attempts and failed steals; runs
    with aborts, resolved deadlocks or a timed policy (``--measure-policy``, real runs) get
    those columns, and so do runs charged overheads, with stalls, or with cache misses. Runs
    with jobs that did not complete get their count beside the response times (which average
    the completed jobs only), and a utility-accrual scheduler's run keeps AUR as long as DSR
    when the table is narrow (which schedulers accrue utility: the registry's traits,
    :func:`rtsched.checks.utility_accrual_schedulers`)."""
    results = [r for r in results if r.ok]
    cols = list(COLUMNS)
    if any(_uses_tufs(r) for r in results):
        # The point of a utility-accrual scheduler: its AUR is kept as long as DSR is.
        cols[4] = replace(cols[4], rank=1)
    sums = [r.summary for r in results]
    if any(s.get("steal_attempts", 0) for s in sums):
        cols[-2:-2] = STEALS
    if any(s.get("total_blocked_ns", 0) for s in sums):
        cols.insert(8, BLOCKED)
    if any(_unfinished(s) for s in sums):
        cols.insert(6, UNFINISHED)
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
    return cols


def _uses_tufs(r) -> bool:
    """Whether the run's scheduler is a utility-accrual one (it reads the TUFs), by the
    registry's traits of its policy (a real run's ``testbed:``/``kernel:scx:`` prefix dropped)."""
    from . import _core
    from .checks import utility_accrual_schedulers

    label = r.scheduler.split(" ")[0]
    for prefix in ("testbed:", "kernel:scx:"):
        label = label.removeprefix(prefix)
    try:
        return _core.parse_scheduler(label)[0] in utility_accrual_schedulers()
    except InputError:
        return False


#: The column of the comparison table that says whether each scheduler ran (shown only when
#: one did not); why one did not is said on standard error (:func:`not_run_lines`).
STATUS = Column("status", "<", 0)


def comparison_table(results, width: int | None = None, columns=None) -> str:
    """One row per run: the comparison users read first (the columns: :func:`default_columns`).

    `width` (e.g. :func:`rtsched.tables.output_width`): fit it, leaving out the columns of
    highest rank first, with a line saying which. `columns` (a list from :func:`parse_columns`):
    exactly those, in that order, never left out. A scheduler that could not run
    (:class:`rtsched.result.NotRun`) has '-' in every column but its name and its status (a
    last column, shown when some scheduler did not run); :func:`not_run_lines` say why."""
    cols = list(columns) if columns else default_columns(results)
    rows = [[c.cell(r, r.summary) if r.ok else (r.scheduler if c is SCHEDULER else "-") for c in cols]
            for r in results]
    spec = [Column(c.header, c.align, 0 if columns else c.rank) for c in cols]
    failed = [r for r in results if not r.ok]
    if failed:
        spec.append(STATUS)
        for row, r in zip(rows, results):
            row.append(r.status)
    out = render(spec, rows, width)
    note = out.note(width, "--columns chooses, --format csv|json shows all")
    return out.text + ("\n" + note if note else "")


def not_run_lines(results) -> list[str]:
    """Why each scheduler that could not run did not, one message each (for standard error:
    the comparison table's ``status`` column says which did not)."""
    return [f"rtsched: error: {r.scheduler} did not run ({r.status}): {r.error}" for r in results if not r.ok]


def summary_records(results, columns=None) -> list[dict]:
    """The runs' summaries for machines (``--format csv|json``): with `columns`, those columns'
    raw values by summary key; else every summary key and the columns' derived values (times in
    ns, ratios as numbers, None where not measured). Every record ends with ``status`` (``ok``,
    or why the scheduler did not run: :class:`rtsched.result.NotRun`) and ``error`` (None, or
    the reason) — with `columns`, only when some scheduler did not run; a scheduler that did
    not run has None for every number."""
    out = []
    # Status and error end every record, but with --columns only when some scheduler did not
    # run (the columns asked for, and what is needed to read them).
    tail = not columns or not all(r.ok for r in results)
    for r in results:
        if not r.ok:  # a scheduler that could not run: its status and why, no numbers
            rec = {c.key: None for c in columns} if columns else {"scheduler": None, "substrate": r.substrate}
            if "scheduler" in rec:
                rec["scheduler"] = r.scheduler
            out.append(dict(rec, status=r.status, error=r.error))
            continue
        s = r.summary
        if columns:
            out.append(dict({c.key: c.value(r, s) for c in columns}, **({"status": "ok", "error": None} if tail else {})))
            continue
        rec = {"scheduler": r.scheduler, "substrate": r.substrate}
        rec.update(s)
        rec.update(status="ok", error=None)
        for c in ALL_COLUMNS:
            if c.key not in rec:
                rec[c.key] = c.value(r, s)
        for c in ALL_COLUMNS:
            if c.ledger and r.substrate == "kernel":
                rec[c.key] = None
        out.append(rec)
    if not columns:  # a scheduler that did not run: every key of the others, None, in their order
        keys = list(dict.fromkeys(k for rec in out for k in rec if k not in ("status", "error")))
        out = [{**{k: rec.get(k) for k in keys}, "status": rec["status"], "error": rec["error"]} for rec in out]
    return out


def per_task_table(result, width: int | None = None) -> str:
    """One row per task of a run, fitted to `width` as :func:`comparison_table` is."""
    # From the document, not the DataFrame: a row of a frame with float columns turns the
    # counts into floats ("4.0 jobs").
    spec = [Column("task", "<", 0), Column("jobs", ">", 2), Column("missed", ">", 1), Column("DSR", ">", 1),
            Column("AUR", ">", 4), Column("utility", ">", 4), Column("max tard ms", ">", 2), Column("max resp ms", ">", 3),
            Column("p99 resp ms", ">", 3), Column("preempt", ">", 5), Column("migr", ">", 5)]
    rows = [
        [t["name"], str(t["jobs"]), str(t["missed"]), f"{t['dsr']:.4f}", _ratio(t.get("aur")),
         f"{t.get('accrued_utility', 0):.4g}/{t.get('possible_utility', 0):.4g}", _ms(t["max_tardiness_ns"]),
         _ms(t["max_response_ns"]), _ms(t["p99_response_ns"]), str(t["preemptions"]), str(t["migrations"])]
        for t in result.document["tasks"]
    ]
    out = render(spec, rows, width)
    note = out.note(width, "--json OUT holds every one")
    return out.text + ("\n" + note if note else "")
