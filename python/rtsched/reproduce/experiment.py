"""The experiment skeleton: config → runs → frame → claims → figures → report.

Every reproduction is one module of this package that fills an :class:`Experiment` — the whole
contract, a table of named operations in the manner of the kernel's ``struct sched_class`` — and
registers it (``register(EXPERIMENT)``, :mod:`rtsched.reproduce`). :func:`run` is the one driver:

1. **config**: ``quick`` or ``full`` (a frozen dataclass of the module's own sizes: sets, points,
   durations), or a test's own;
2. **runs**: ``runs(r)`` makes every run through ``r`` (:class:`Runs`: a sweep, a map over a
   process pool, timing runs one after another in this process), each named table written
   atomically into ``OUT/NAME/`` and kept in ``r.tables``; then, only when asked (``--real``)
   and permitted, ``real.runs(r)`` (:class:`Real`);
3. **frame**: ``frame(t)`` turns the tables (:class:`Tables`) into what the claims, figures and
   report read, and makes no run;
4. **claims**: ``claims(f)``, a list of :class:`~rtsched.reproduce.claims.Claim`, written to
   ``claims.json`` and rendered as the report's table (``Report.claims``);
5. **figures**: ``figures(f)``, a list of ``(figure, stem, caption)``, saved as PNG and SVG;
6. **report**: ``report.md`` assembled in one order —

   ========================================  ===========================================
   ``# title``, the paper, how it was made    :class:`~rtsched.reproduce.report.Report`
   the module docstring's body                ``doc``
   ``preface(rep, f)``                        optional: what the claims' table needs first
   ``## The paper's claims, checked``         ``claims(f)`` and ``note(f)``
   ``sections(rep, f)``                       the data tables
   ``## Figures``                             ``figures(f)``
   ``afterword(rep, f)``                      optional: the real-core part, caveats
   ``## Not reproduced yet``                  ``not_reproduced``
   ========================================  ===========================================

Each operation is called once, in that order, by :func:`run` alone; none writes a file of its
own except through :class:`Runs` (and the figures, which the driver saves). Adding an
experiment is one module filling this table (docs/sweeps.md, "Reproductions").
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Real:
    """An experiment's part on this machine's real cores (real-time threads: made only when
    asked, ``--real``, and permitted, root or CAP_SYS_NICE).

    ``plan(cfg)``: the :class:`~rtsched.reproduce._real.RealPart` list it will run, printed
    before anything starts. ``runs(r)``: called after ``runs(r)``, only when asked and
    permitted; it adds its rows to ``r``'s tables like any run (or says with
    ``r.real_not_run(why)`` why it could not)."""

    plan: Callable
    runs: Callable


@dataclass(frozen=True)
class Experiment:
    """One reproduction: the contract its module fills (see the module's docstring).

    ``paper`` is the citation ``rtsched reproduce --list`` shows, ``cite`` the report's
    "Paper:" line (default ``paper``); ``doc`` the module's docstring, whose body (after its
    first paragraph) opens the report; ``note(f)`` says how the claims were measured (below
    their table); ``wall_time``: the report ends with the reproduction's wall time."""

    name: str
    paper: str
    description: str
    title: str
    doc: str
    quick: object
    full: object
    runs: Callable
    frame: Callable
    claims: Callable
    figures: Callable
    sections: Callable
    note: Callable | str = ""
    not_reproduced: Sequence[str] = ()
    preface: Callable | None = None
    afterword: Callable | None = None
    real: Real | None = None
    cite: str = ""
    wall_time: bool = False

    @property
    def module(self) -> str:
        """The module that defines it (two registrations of one name from two modules clash)."""
        return self.runs.__module__

    def config(self, quick: bool):
        return self.quick if quick else self.full

    def real_plan(self, quick: bool) -> list:
        """The real runs ``--real`` makes (empty: the experiment has none)."""
        return list(self.real.plan(self.config(quick))) if self.real is not None else []


class Tables(dict):
    """What ``frame`` reads: the tables the runs made (name → DataFrame, or an object a real
    run returned), the config they were made with (``cfg``, ``quick``), and the real part's
    state — ``real_asked`` (``--real`` given), ``real_ran`` (its runs were made) and
    ``real_why`` (why not: a sentence a report prints after "Not run: ")."""

    def __init__(self, cfg=None, quick: bool = False):
        super().__init__()
        self.cfg, self.quick = cfg, quick
        self.real_asked, self.real_ran, self.real_why = False, False, ""


class Runs:
    """What ``runs(r)`` is handed: the config (``r.cfg``, ``r.quick``), where its tables go
    (``r.out_dir``), and the ways to run, each writing its table atomically and showing
    progress on stderr (a bar on a terminal, a line at most every 10 s elsewhere; none in quick
    mode off a terminal):

    - :meth:`sweep`: a sweep spec (docs/sweeps.md), resumable, on ``executor`` (default a local
      process pool);
    - :meth:`map`: a function over items on a process pool (or ``executor``); a rerun with the
      same items reuses the table;
    - :meth:`serial`: a function over items one after another in this process (timing runs,
      which parallel runs would disturb);
    - :meth:`save`: a table made otherwise; :meth:`keep`: an object that is no table (kept,
      not written)."""

    def __init__(self, name: str, cfg, quick: bool, out_dir, executor=None, progress: bool | None = None):
        self.name, self.cfg, self.quick = name, cfg, quick
        self.out_dir = Path(out_dir)
        self.executor = executor
        self.tables = Tables(cfg=cfg, quick=quick)
        self.progress = (not quick or sys.stderr.isatty()) if progress is None else progress
        self._t0 = time.monotonic()

    # --- where tables go ---------------------------------------------------------------------

    def path(self, table: str, ext: str = "parquet") -> Path:
        """``OUT/NAME/TABLE[-quick].EXT``: a quick run's tables beside a full run's."""
        return self.out_dir / (f"{table}-quick.{ext}" if self.quick else f"{table}.{ext}")

    def save(self, table: str, df, file: str | None = None, meta: dict | None = None):
        """Write ``df`` atomically to ``file`` (default :meth:`path`; CSV or Parquet by its
        extension; ``meta``: key-value pairs kept in a Parquet file's schema) and keep it as
        ``table``. Returns ``df``."""
        from .._io import write_atomic

        path = self.out_dir / file if file else self.path(table)
        if path.suffix == ".csv":
            write_atomic(path, lambda tmp: df.to_csv(tmp, index=False), suffix=".csv")
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            t = pa.Table.from_pandas(df, preserve_index=False)
            if meta:
                t = t.replace_schema_metadata({**(t.schema.metadata or {}), **{k.encode(): v.encode() for k, v in meta.items()}})
            write_atomic(path, lambda tmp: pq.write_table(t, tmp), suffix=".parquet")
        self.tables[table] = df
        return df

    def keep(self, table: str, obj):
        """Keep ``obj`` (a real run's document, not a table) as ``table``; returns it."""
        self.tables[table] = obj
        return obj

    # --- ways to run -------------------------------------------------------------------------

    def sweep(self, spec: dict, table: str = "sweep", progress=None):
        """Run sweep ``spec`` into :meth:`path` ``(table)`` (resumable: a rerun runs only the rows
        missing) and keep its rows as ``table``. ``progress``: as for :func:`rtsched.sweep`
        (None: a bar on stderr when it is a terminal)."""
        import importlib

        S = importlib.import_module("rtsched.sweep")
        df = S.sweep(S.parse_spec(spec, f"<reproduce {spec['name']}>"), executor=self.executor, output=self.path(table),
                     progress=progress, batch_rows=5000)
        self.tables[table] = df
        return df

    def map(self, fn: Callable, items: Sequence, table: str, chunk: int = 1, file: str | None = None):
        """``fn(item)`` → a list of rows (dicts), for every item, on ``executor`` or a pool of
        this machine's cores, ``chunk`` items per call (the round trip amortised, the load
        evened out); the rows, in the items' order, as ``table`` (:meth:`save`). The items are
        the table's identity: a table on disk made from the same items (their digest, kept in
        its schema) is read back instead of run again, so a rerun only rewrites the report."""
        import pandas as pd

        path = self.out_dir / file if file else self.path(table)
        digest = _digest(items)
        old = _read_if(path, digest)
        if old is not None:
            self.tables[table] = old
            return old
        chunks = [list(items[i:i + chunk]) for i in range(0, len(items), chunk)]
        rows = []
        bar = self._bar(len(items), table)
        pool = self.executor
        own = pool is None and len(chunks) > 1
        if own:
            import concurrent.futures as cf

            pool = cf.ProcessPoolExecutor(max_workers=os.cpu_count() or 1)
        try:
            done = pool.map(_Chunk(fn), chunks) if pool is not None else map(_Chunk(fn), chunks)
            for part, c in zip(done, chunks):
                rows += part
                bar.update(len(c))
        finally:
            bar.close()
            if own:
                pool.shutdown(wait=True, cancel_futures=True)
        return self.save(table, pd.DataFrame(rows), file=file, meta={"rtsched.items": digest})

    def serial(self, fn: Callable, items: Sequence, table: str, file: str | None = None):
        """``fn(item)`` → a list of rows for every item, one after another in this process
        (timing runs: parallel runs would measure each other), as ``table`` (:meth:`save`);
        always run, never read back (a timing is this run's)."""
        import pandas as pd

        rows = []
        bar = self._bar(len(items), table)
        try:
            for it in items:
                rows += fn(it)
                bar.update(1)
        finally:
            bar.close()
        return self.save(table, pd.DataFrame(rows), file=file)

    def step(self, text: str):
        """One line of progress for a part run in this process: ``NAME: TEXT (N s)``."""
        if self.progress:
            print(f"{self.name}: {text} ({time.monotonic() - self._t0:.0f} s)", file=sys.stderr, flush=True)

    def real_not_run(self, why: str):
        """The real part could not run: ``why`` (printed after "Not run: ")."""
        self.tables.real_ran, self.tables.real_why = False, why

    def _bar(self, total: int, label: str):
        from ..sweep.progress import Progress

        return Progress(total, label=f"{self.name} {label}", enabled=self.progress and total > 1)


class _Chunk:
    """``fn`` over a chunk of items, the rows concatenated (picklable for a process pool)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, items):
        return [row for it in items for row in self.fn(it)]


def _digest(items) -> str:
    """The identity of a table's items (and of the rtsched that ran them)."""
    import rtsched

    text = json.dumps([rtsched.__version__, list(items)], default=repr, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _read_if(path: Path, digest: str):
    """The table at ``path`` if its schema says it was made from the items of ``digest``."""
    if not path.exists() or path.suffix != ".parquet":
        return None
    try:
        import pyarrow.parquet as pq

        t = pq.read_table(path)
        if (t.schema.metadata or {}).get(b"rtsched.items") != digest.encode():
            return None
        return t.to_pandas()
    except Exception:  # noqa: BLE001 - an unreadable or older table is run again
        return None


def intro(doc: str) -> str:
    """The report's opening text: a module docstring after its first paragraph (the title)."""
    return doc.split("\n\n", 1)[1]


def run(exp: Experiment, out_dir, quick: bool, executor=None, real: bool = False, cfg=None, progress: bool | None = None):
    """Run experiment ``exp`` into ``out_dir`` (created) in the skeleton's order and return the
    report's path. ``cfg``: a config of the experiment's own shape in place of its quick or
    full one (a test's tiny run); ``real``: make its real part (the caller has checked the
    privilege and printed the plan, :func:`rtsched.reproduce.reproduce`)."""
    from ._real import can_run_real, not_run
    from .report import Report

    t0 = time.monotonic()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    r = Runs(exp.name, exp.config(quick) if cfg is None else cfg, quick, out_dir, executor, progress)
    exp.runs(r)
    t = r.tables
    t.real_asked = bool(real and exp.real is not None)
    if not t.real_asked:
        t.real_why = not_run(exp.name, quick)
    else:
        ok, why = can_run_real()
        t.real_ran, t.real_why = ok, why
        if ok:
            exp.real.runs(r)
    f = exp.frame(t)
    found = exp.claims(f)
    rep = Report(exp.name, exp.title, exp.cite or exp.paper, quick, t.real_asked)
    rep.para(intro(exp.doc))
    if exp.preface is not None:
        exp.preface(rep, f)
    rep.claims(found, out_dir, note=exp.note(f) if callable(exp.note) else exp.note)
    exp.sections(rep, f)
    rep.figures(exp.figures(f), out_dir)
    if exp.afterword is not None:
        exp.afterword(rep, f)
    rep.not_reproduced(list(exp.not_reproduced))
    if exp.wall_time:
        rep.para(f"Wall time of this reproduction: {time.monotonic() - t0:.0f} s.")
    return rep.write(out_dir / "report.md")
