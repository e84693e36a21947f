"""The tables rtsched prints: the comparison table of runs (one row per run, the columns
:func:`default_columns` or ``--columns`` chooses, fitted to the terminal: :mod:`rtsched.tables`),
the per-task table, and the same summaries for machines (:func:`summary_records`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ._core import InputError
from .catalogue import columns
from .durations import in_unit
from .tables import Column, plain, render


def _ms(ns) -> str:
    return in_unit(ns, "ms", 3)


def _ratio(x) -> str:
    """A ratio, or '-' where a document has none (NaN, or from before results schema 3)."""
    return "-" if x is None or x != x else f"{x:.4f}"


def _plain(x) -> str:
    return "-" if x is None else str(x)


def _whole(x) -> str:
    return "-" if x is None else f"{x:.0f}"


#: How a cell is written, by the catalogue's ``fmt``; '-' where the run has no value (a column
#: it could not measure: :attr:`rtsched.Result.unmeasured`).
FMT = {"plain": _plain, "ms": _ms, "ratio": _ratio, "whole": _whole}


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
    """A column of the comparison table, as the column catalogue declares it
    (:mod:`rtsched.catalogue`, its ``table``): its header, the key it shows (the key in
    ``--format csv|json`` and in :attr:`rtsched.Result.values`), how a value reads, its rank
    (when the table is wider than the terminal, the highest rank is left out first; 0: never),
    when the table shows it without ``--columns`` (``show``: ``(when, column)``), and headers it
    was known by before."""

    header: str
    key: str
    text: Callable
    rank: int
    align: str = ">"
    show: tuple = ("always", None)
    aliases: tuple = ()

    def cell(self, r, s=None) -> str:
        return self.text(self.value(r, s))

    def value(self, r, s=None):
        """The raw value, for machines (None where not measured)."""
        return r.scheduler if self.key == "scheduler" else r.values.get(self.key)


def _column(c) -> SummaryColumn:
    t = c["table"]
    return SummaryColumn(t["header"], c["name"], FMT[t["fmt"]], t["rank"], "<" if c["kind"] == "text" else ">",
                         tuple(t["show"]), tuple(t["aliases"]))


#: Every column the comparison table can show, in its order (``--columns`` chooses among them).
ALL_COLUMNS = [_column(c) for c in columns("table")]
SCHEDULER = next(c for c in ALL_COLUMNS if c.key == "scheduler")


def _shown(c, results) -> bool:
    """Whether the table shows column ``c`` for ``results`` without ``--columns``."""
    when, key = c.show
    if when == "always":
        return True
    vs = [r.values.get(key) for r in results]
    if when == "any":
        return any(vs)
    if when == "not-one":
        return any(abs((1.0 if v is None else v) - 1.0) > 1e-9 for v in vs)
    if when == "below-one":
        return any((1.0 if v is None else v) < 1.0 for v in vs)
    if when == "present":
        return any(v is not None for v in vs)
    return False  # "on-request"


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
    for c in ALL_COLUMNS:
        for header in c.aliases:
            by_name.setdefault(header.lower(), c)
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
    """The columns shown by default: the base ones, and those the runs have something in (the
    catalogue's ``show``). Runs with critical sections get a column for the longest time a job
    waited for a resource; runs of a work-stealing policy (PAWS) get its steals, steal attempts
    and failed steals; runs with aborts, resolved deadlocks or a timed policy
    (``--measure-policy``, real runs) get those columns, and so do runs charged overheads, with
    stalls, or with cache misses. Runs with jobs that did not complete get their count beside
    the response times (which average the completed jobs only), and a utility-accrual
    scheduler's run keeps AUR as long as DSR when the table is narrow (which schedulers accrue
    utility: the registry's traits, :func:`rtsched.checks.utility_accrual_schedulers`)."""
    results = [r for r in results if r.ok]
    cols = [c for c in ALL_COLUMNS if _shown(c, results)]
    if any(_uses_tufs(r) for r in results):
        # The point of a utility-accrual scheduler: its AUR is kept as long as DSR is.
        cols = [replace(c, rank=1) if c.key == "aur" else c for c in cols]
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
    rows = [[c.cell(r) if r.ok else (r.scheduler if c is SCHEDULER else "-") for c in cols] for r in results]
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
        if columns:
            out.append(dict({c.key: c.value(r) for c in columns}, **({"status": "ok", "error": None} if tail else {})))
            continue
        rec = {"scheduler": r.scheduler, "substrate": r.substrate}
        rec.update(r.summary)
        rec.update(status="ok", error=None)
        for c in ALL_COLUMNS:
            if c.key not in rec:
                rec[c.key] = c.value(r)
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
