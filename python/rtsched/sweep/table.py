"""The results table on disk: its columns and types, Parquet/CSV reading and atomic writing,
the part files a run appends in batches, and their consolidation into one sorted table.

A part or a table is always written to a temporary file, fsynced and renamed, so a crash
leaves whole files only; :class:`_Sink` buffers completed rows into parts.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

from .._core import InputError

#: Summary columns, in order, as :attr:`rtsched.Result.summary` names them (the total summary,
#: then the run-level counters of ``rtsched.result.RUN_COUNTERS``).
SUMMARY_COLUMNS = [
    "jobs", "completed", "met", "missed", "aborted", "dsr", "accrued_utility", "possible_utility", "aur",
    "max_tardiness_ns", "mean_tardiness_ns", "max_response_ns", "mean_response_ns", "p99_response_ns",
    "preemptions", "migrations", "context_switches", "scheduler_invocations",
    "steals", "steal_attempts", "failed_steals", "priority_inversions", "priority_inversion_ns", "deadlocks",
    "exec_inflation", "ipc_proxy",
]
#: The cache and overhead models' totals (0 with the models off): cache-line misses at L1, L2
#: and the LLC, lines invalidated by memory sharers and evicted for capacity, and the CPU time
#: overheads took (decision, context switch, migration, tick, abort handler, policy charges).
MODEL_COLUMNS = ["misses_l1", "misses_l2", "misses_llc", "invalidations", "evictions", "overhead_ns"]
#: Coordinates of a row (what it is), then its outcome.
COORD_COLUMNS = [
    "key", "sweep", "generator", "gen_params", "param", "point", "replication", "taskset_seed",
    "scheduler", "m", "n", "U", "duration_ns", "on_miss", "run", "topology",
]
#: ``schema``: the results schema the row was computed under (``rtsched._core.RESULTS_SCHEMA``).
#: A row of another (older) schema lacks columns added since (schema 3: the utility columns and
#: ``deadlocks``): a resumed sweep recomputes it; reading an old table gives those columns empty.
OUTCOME_COLUMNS = ["status", "error"] + SUMMARY_COLUMNS + MODEL_COLUMNS + ["schedulable", "schema"]
COLUMNS = COORD_COLUMNS + OUTCOME_COLUMNS
_INT_COLUMNS = {"replication", "taskset_seed", "m", "n", "duration_ns", "jobs", "completed", "met", "missed", "aborted",
                "max_tardiness_ns", "max_response_ns", "p99_response_ns", "preemptions", "migrations",
                "context_switches", "scheduler_invocations", "steals", "steal_attempts", "failed_steals",
                "priority_inversions", "priority_inversion_ns", "deadlocks"} | set(MODEL_COLUMNS)
_FLOAT_COLUMNS = {"point", "U", "dsr", "mean_tardiness_ns", "mean_response_ns", "accrued_utility", "possible_utility", "aur",
                  "exec_inflation", "ipc_proxy"}
_STR_COLUMNS = {"key", "sweep", "generator", "gen_params", "param", "scheduler", "on_miss", "run", "topology", "status",
                "error", "schema"}


def current_schema() -> str:
    """The results schema this build computes rows under."""
    from .. import _core

    return _core.RESULTS_SCHEMA


def stale(df):
    """Rows to recompute, as a boolean Series: rows computed under another results schema
    (older tables have no ``schema`` column: every row is stale), and completed rows of this
    schema written before the sweep recorded the cache model's columns (no ``ipc_proxy``)."""
    return (df["schema"] != current_schema()) | ((df["status"] == "ok") & df["ipc_proxy"].isna())


def _frame(rows):
    import pandas as pd

    df = pd.DataFrame.from_records(rows, columns=COLUMNS) if rows else pd.DataFrame({c: [] for c in COLUMNS})
    return _coerce(df)


def _coerce(df):
    """One dtype per column whatever the file type or the rows (failed rows have no metrics)."""
    import pandas as pd

    for c in COLUMNS:
        if c not in df.columns:
            df[c] = pd.NA
    df = df[COLUMNS + [c for c in df.columns if c not in COLUMNS]].copy()
    for c in _INT_COLUMNS:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("Int64")
    for c in _FLOAT_COLUMNS:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    for c in _STR_COLUMNS:
        df[c] = df[c].astype(object).where(df[c].notna(), "").astype(str)
    df["schedulable"] = df["schedulable"].map(lambda v: str(v).lower() in ("true", "1", "1.0")).astype(bool)
    return df


def _fmt(path) -> str:
    ext = Path(path).suffix.lower()
    if ext not in (".parquet", ".csv"):
        raise InputError(f"{path}: results table must end in .parquet or .csv")
    return ext[1:]


def _write_atomic(df, path):
    """Write ``df`` to ``path`` (Parquet or CSV by extension): temporary file, fsync, rename."""
    from .._io import write_atomic

    def write(tmp):
        if _fmt(path) == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp)
        else:
            df.to_csv(tmp, index=False)

    write_atomic(path, write)


def read_table(path):
    """Read a results table (Parquet or CSV) with the sweep's column types."""
    import pandas as pd

    path = os.fspath(path)
    if _fmt(path) == "parquet":
        df = pd.read_parquet(path)
    else:
        df = pd.read_csv(path, dtype={c: str for c in _STR_COLUMNS}, keep_default_na=False,
                         na_values={c: [""] for c in _INT_COLUMNS | _FLOAT_COLUMNS})
    return _coerce(df)


def parts_dir(path) -> Path:
    p = Path(path)
    return p.with_name(p.name + ".parts")


def _read_all(path):
    """The table and any part files left by earlier (maybe interrupted) runs, each key once:
    a row of the current results schema wins over a stale one (recomputed by a resumed run),
    else the table's row over a part's."""
    import pandas as pd

    frames = []
    if os.path.exists(path):
        frames.append(read_table(path))
    pd_dir = parts_dir(path)
    parts = sorted(pd_dir.glob(f"part-*.{_fmt(path)}")) if pd_dir.is_dir() else []
    frames += [read_table(p) for p in parts]
    if not frames:
        return _frame([]), parts
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    df = df.assign(_stale=stale(df)).sort_values(["key", "_stale"], kind="stable")
    df = df.drop_duplicates("key", keep="first").drop(columns="_stale").reset_index(drop=True)
    return df, parts


def consolidate(path):
    """Fold part files into the table (atomically), then remove them. Returns the table."""
    df, parts = _read_all(path)
    if parts or not os.path.exists(path):
        _write_atomic(df, path)
    for p in parts:
        p.unlink(missing_ok=True)
    try:
        parts_dir(path).rmdir()
    except OSError:
        pass
    return df


class _Sink:
    """Completed rows: buffered, then written as one part file per batch (atomic)."""

    def __init__(self, path, batch_rows=1000, batch_seconds=10.0):
        self.path, self.batch_rows, self.batch_seconds = path, batch_rows, batch_seconds
        self.buffer, self.rows, self.last = [], [], time.monotonic()
        self.notes = set()  # what the workers warn about (worker.WARNINGS), said once per sweep
        self.run_id = f"{int(time.time())}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.count = 0

    def add(self, rows):
        for r in rows:
            self.notes.update(r.pop("_warnings", ()))
        self.buffer.extend(rows)
        self.rows.extend(rows)
        if len(self.buffer) >= self.batch_rows or time.monotonic() - self.last >= self.batch_seconds:
            self.flush()

    def flush(self):
        self.last = time.monotonic()
        if not self.buffer or self.path is None:
            self.buffer = []
            return
        d = parts_dir(self.path)
        d.mkdir(parents=True, exist_ok=True)
        self.count += 1
        _write_atomic(_frame(self.buffer), d / f"part-{self.run_id}-{self.count:06d}.{_fmt(self.path)}")
        self.buffer = []
