"""The results table on disk: its columns and types, Parquet/CSV reading and atomic writing,
the part files a run appends in batches, and their consolidation into one sorted table.

A part or a table is always written to a temporary file, fsynced and renamed, so a crash
leaves whole files only; :class:`_Sink` buffers completed rows into parts.
"""

from __future__ import annotations

import collections
import os
import time
import uuid
from pathlib import Path

from .._core import InputError
from ..catalogue import columns
from .schema import TEST_PREFIX

#: The table's columns, in order, as the column catalogue declares a sweep's row
#: (:mod:`rtsched.catalogue`, place ``row``): coordinates (what a row is), then its outcome.
_ROW = columns("row")
COLUMNS = [c["name"] for c in _ROW]
#: Coordinates of a row (what it is), then its outcome.
COORD_COLUMNS = COLUMNS[:COLUMNS.index("status")]
OUTCOME_COLUMNS = COLUMNS[COLUMNS.index("status"):]
#: The metrics of a row, as ``_core.sweep_batch`` returns them: the columns a run gives (its
#: total summary's and its counters'), empty in a row that did not run. ``kind``: ``sim`` for a
#: simulated row, ``test`` for a schedulability test's (a ``test:NAME`` scheduler), whose
#: ``verdict`` is the test's (true / false / empty: inconclusive) and whose metric columns are
#: empty. ``schedulable``: a simulated set missed no deadline (and ran); a tested set was proven
#: schedulable (``verdict`` true). ``schema``: the results schema the row was computed under
#: (``rtsched._core.RESULTS_SCHEMA``). A row of another (older) schema lacks columns added since
#: (schema 3: the utility columns and ``deadlocks``): a resumed sweep recomputes it; reading an
#: old table gives those columns empty.
_METRICS = [c for c in _ROW if c["source"] in ("summary", "run")]
#: The cache and overhead models' totals (0 with the models off): cache-line misses at L1, L2
#: and the LLC, lines invalidated by memory sharers and evicted for capacity, and the CPU time
#: overheads took (decision, context switch, migration, tick, abort handler, policy charges).
MODEL_COLUMNS = [c["name"] for c in _METRICS if c["measured"] in ("cache-model", "overheads")]
#: The other metrics, in order, as :attr:`rtsched.Result.summary` names them (the total
#: summary, then the run-level counters of ``rtsched.result.RUN_COUNTERS``).
SUMMARY_COLUMNS = [c["name"] for c in _METRICS if c["name"] not in MODEL_COLUMNS]
#: Metrics a completed simulated row always has (the simulator measures every one, those a real
#: kernel run may lack too: ``pulls``): one of them empty in such a row of this schema means the
#: row was written before the sweep recorded it (:func:`stale`). The chain metrics (measured
#: ``chains``: ``chain_latency_max_ns``, ``chain_data_age_max_ns``, ``chain_reaction_time_max_ns``,
#: docs/chains.md "Sweeps") are empty by nature in a row whose set has no such chain.
_ALWAYS = [c["name"] for c in _METRICS if c["measured"] != "chains"]
#: The chain metrics of a row: the largest over every instance of the set's chains.
CHAIN_COLUMNS = [c["name"] for c in _METRICS if c["measured"] == "chains"]
_INT_COLUMNS = {c["name"] for c in _ROW if c["kind"] == "int"}
_FLOAT_COLUMNS = {c["name"] for c in _ROW if c["kind"] == "float"}
_STR_COLUMNS = {c["name"] for c in _ROW if c["kind"] == "text"}
#: Columns of a bool type (``verdict`` may be empty).
_BOOL_COLUMNS = {c["name"] for c in _ROW if c["kind"] == "bool"}


def arrow_schema():
    """The table's columns as Arrow types (what a batch and a Parquet part hold)."""
    import pyarrow as pa

    def t(c):
        if c in _INT_COLUMNS:
            return pa.int64()
        if c in _FLOAT_COLUMNS:
            return pa.float64()
        return pa.bool_() if c in _BOOL_COLUMNS else pa.string()

    return pa.schema([(c, t(c)) for c in COLUMNS])


def batch_table(b, cols):
    """A batch's rows as a ``pyarrow.Table`` of COLUMNS: the coordinates from the
    :class:`~.keys.Batch`, the outcome from ``cols`` (what ``_core.sweep_batch`` returned).
    Whole columns at a time; rows that did not run get empty metrics, like the row path's."""
    import numpy as np
    import pyarrow as pa

    from .. import _core

    n = b.rows
    todo = np.frombuffer(b.todo, dtype=np.uint8).reshape(b.sets, len(b.schedulers))
    row_set, row_sched = np.nonzero(todo)  # row-major: set order, then scheduler order (the rows' order)
    row_gen = np.asarray(b.set_gen, dtype=np.int64)[row_set]
    status = np.frombuffer(cols["status"], dtype=np.uint8)
    failed = status != 0
    is_test = np.array([s.startswith(TEST_PREFIX) for s in b.schedulers], dtype=bool)[row_sched]
    # verdict codes (`_core.sweep_batch`): 0 false, 1 true, 2 inconclusive, 3 no verdict.
    code = np.frombuffer(cols["verdict"], dtype=np.uint8)
    verdict = pa.array(code == 1, mask=code > 1)
    schedulable = np.where(is_test, code == 1, ~failed & (np.frombuffer(cols["missed"], "<i8") == 0))

    # A `locking` axis's entry is SCHEDULER@PROTOCOL (`rtsched_sweep::LOCKING_SEP`): two columns.
    entries = [s.rsplit(_core.LOCKING_SEP, 1) if _core.LOCKING_SEP in s else (s, "") for s in b.schedulers]

    def pick(values, index):
        return pa.array(values, pa.string()).take(pa.array(index))

    def same(v, typ=None):
        return pa.repeat(pa.scalar(v, typ or pa.string()), n)

    def per_set(values, dtype):
        return pa.array(np.asarray(values, dtype=dtype)[row_set])

    error = same("")
    if cols["errors"]:
        e = np.full(n, "", dtype=object)
        for i, msg in cols["errors"]:
            e[i] = msg
        error = pa.array(e, pa.string())
    out = {
        "key": b.keys if isinstance(b.keys, pa.Array) else pa.array(b.keys, pa.string()), "sweep": same(b.sweep),
        "generator": pick([g[1] for g in b.generators], row_gen), "gen_params": pick(b.set_gen_params, row_set),
        "param": pick([g[2] for g in b.generators], row_gen), "point": per_set(b.set_point, np.float64),
        "replication": per_set(b.set_replication, np.int64), "taskset_seed": per_set(b.set_seed, np.int64),
        "scheduler": pick([e[0] for e in entries], row_sched), "locking": pick([e[1] for e in entries], row_sched),
        "kind": pick(["test" if s.startswith(TEST_PREFIX) else "sim" for s in b.schedulers], row_sched),
        "m": pa.array(np.frombuffer(cols["m"], "<i8")), "n": pa.array(np.frombuffer(cols["n"], "<i8")),
        "U": pa.array(np.frombuffer(cols["U"], "<f8")),
        "duration_ns": same(b.duration_ns, pa.int64()), "on_miss": same(b.on_miss), "run": same(b.run or ""),
        "topology": same(b.topology or ""), "status": pick(cols["statuses"], status), "error": error,
        "schedulable": pa.array(schedulable), "verdict": verdict,
        "schema": same(_core.RESULTS_SCHEMA),
    }
    for c in SUMMARY_COLUMNS + MODEL_COLUMNS:
        v = np.frombuffer(cols[c], "<i8" if c in _INT_COLUMNS else "<f8")
        # Empty in a row that did not run, a test's row, or where the run measured none.
        null = np.frombuffer(cols["null"][c], dtype=np.bool_)
        out[c] = pa.array(v, mask=null if null.any() else None)
    schema = arrow_schema()
    return pa.Table.from_arrays([out[c] for c in COLUMNS], schema=schema)


def current_schema() -> str:
    """The results schema this build computes rows under."""
    from .. import _core

    return _core.RESULTS_SCHEMA


def stale(df):
    """Rows to recompute, as a boolean Series: rows computed under another results schema
    (older tables have no ``schema`` column: every row is stale), and completed rows of this
    schema written before the sweep recorded a metric it records now (the cache model's
    columns, ``ipc_proxy``; the kernel's migrations and per-job inversions; pulls: a metric a
    completed simulated row always has, empty). A test's row has no such columns by nature."""
    simulated = (df["status"] == "ok") & (df["kind"] != "test")
    metrics = [c for c in _ALWAYS if c in df.columns]  # a table read through _coerce has them all
    return (df["schema"] != current_schema()) | (simulated & df[metrics].isna().any(axis=1))


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
    df = df[COLUMNS + [c for c in df.columns if c not in COLUMNS]]
    if not _copy_on_write():  # pandas 2: the selection may be flagged a view; with CoW it is its own
        df = df.copy()
    text = _text_dtype()
    # A column already of its type (a table this build wrote) is left alone: converting it
    # would cost a Python object per cell.
    for c in _INT_COLUMNS:
        if df[c].dtype != "Int64":
            df[c] = pd.to_numeric(df[c], errors="coerce").astype("Int64")
    for c in _FLOAT_COLUMNS:
        if df[c].dtype != "float64":
            df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    for c in _STR_COLUMNS:
        if df[c].dtype != text or text == object or df[c].isna().any():  # noqa: E721 - dtypes, not types; object: any value may hide there
            df[c] = df[c].astype(object).where(df[c].notna(), "").astype(str)
    if df["schedulable"].dtype != bool:  # CSV text, or missing
        df["schedulable"] = df["schedulable"].astype(str).str.lower().isin(["true", "1", "1.0"])
    if df["verdict"].dtype != "boolean":  # CSV text, or missing (a table from before tests)
        text = df["verdict"].astype(object).where(df["verdict"].notna(), "").astype(str).str.lower()
        df["verdict"] = pd.array([True if t in ("true", "1", "1.0") else False if t in ("false", "0", "0.0") else pd.NA
                                  for t in text], dtype="boolean")
    if (df["kind"] == "").any():  # a table from before tests: every row was simulated
        df["kind"] = df["kind"].where(df["kind"] != "", "sim")
    return df


def _copy_on_write() -> bool:
    """Whether pandas copies on write (pandas 3; pandas 2 with the option set)."""
    import pandas as pd

    return int(pd.__version__.split(".")[0]) >= 3 or getattr(pd.options.mode, "copy_on_write", False) is True


def _text_dtype():
    """The dtype ``astype(str)`` gives (pandas' string dtype, or object before pandas 3)."""
    import pandas as pd

    return pd.Series([""], dtype=object).astype(str).dtype


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
        df = _arrow_frame(_pq_read(path))
    else:
        df = pd.read_csv(path, dtype={c: str for c in _STR_COLUMNS}, keep_default_na=False,
                         na_values={c: [""] for c in _INT_COLUMNS | _FLOAT_COLUMNS})
    return _coerce(df)


def parts_dir(path) -> Path:
    p = Path(path)
    return p.with_name(p.name + ".parts")


def _parts(path) -> list[Path]:
    """The part files beside a table, oldest run first. A Parquet table's parts are Arrow IPC
    files (``.arrow``: written as fast as memory is copied; Parquet is written once, at the
    end), or Parquet files left by earlier versions; a CSV table's are CSV."""
    d = parts_dir(path)
    if not d.is_dir():
        return []
    exts = ("arrow", "parquet") if _fmt(path) == "parquet" else ("csv",)
    return sorted((p for e in exts for p in d.glob(f"part-*.{e}")), key=lambda p: p.name)


def _read_ipc(path):
    import pyarrow as pa

    # Mapped, not copied; the data stays readable after the part is removed.
    return pa.ipc.open_file(pa.memory_map(os.fspath(path))).read_all()


def write_transfer(t, where) -> str:
    """Write ``t`` as an Arrow IPC file to a new ``.rtsched-*.tmp`` file in ``where``; return
    its path (``worker.run_batch_to``). Not fsynced: :meth:`_Sink.flush` does that when the
    file becomes a part; until then it is one of the temporary files consolidation removes."""
    import tempfile

    import pyarrow as pa

    fd, tmp = tempfile.mkstemp(dir=where, prefix=".rtsched-", suffix=".tmp")
    os.close(fd)
    with pa.OSFile(tmp, "wb") as f, pa.ipc.new_file(f, t.schema) as w:
        w.write_table(t)
    return tmp


def _pq_read(path):
    import pyarrow.parquet as pq

    return pq.read_table(path)


def _arrow_frame(t):
    """A DataFrame of an Arrow table: integer columns as nullable Int64 straight away (not
    through float64, which would round large values of a column with empty cells)."""
    import pandas as pd
    import pyarrow as pa

    return t.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)


def _current(t):
    """``t`` with exactly the table's columns and types, or None (an older table: read it
    through pandas, which fills what it lacks)."""
    schema = arrow_schema()
    if t.schema.names != schema.names:
        return None
    t = t.replace_schema_metadata(None)
    try:
        return t if t.schema.equals(schema) else t.cast(schema)
    except Exception:  # noqa: BLE001 - a type no cast reaches: take the general path
        return None


def _key_span(k):
    """(first, last) of a non-empty key column whose keys ascend strictly, else None."""
    import pyarrow.compute as pc

    if k.null_count or (len(k) > 1 and not pc.all(pc.less(k.slice(0, len(k) - 1), k.slice(1))).as_py()):
        return None
    return k[0].as_py(), k[len(k) - 1].as_py()


def _in_key_order(t):
    """``t`` with its record batches reordered so that its keys ascend strictly, or None when
    no order of whole batches does that (a key twice, or batches that interleave). A sweep's
    batches each come back sorted (``keys.key_order``), in whatever order the workers finish
    them: putting them back in order is enough, without copying every row as a sort does
    (most of consolidating a big table, and more the first time its memory is touched)."""
    import pyarrow as pa

    batches = [b for b in t.to_batches() if b.num_rows]
    col = t.schema.get_field_index("key")
    firsts, lasts = [], []
    for b in batches:
        span = _key_span(b.column(col))
        if span is None:
            return None
        firsts.append(span[0])
        lasts.append(span[1])
    order = sorted(range(len(batches)), key=firsts.__getitem__)
    if any(lasts[a] >= firsts[b] for a, b in zip(order, order[1:])):
        return None
    return pa.Table.from_batches([batches[i] for i in order], schema=t.schema)


def _dedup_arrow(t):
    """Each key once, sorted: a row of this results schema wins over a stale one, then the
    earlier file's (as :func:`_read_all`). Sorts the keys alone and copies the rows once;
    nothing to sort when whole batches can be put in key order (:func:`_in_key_order`)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    fast = _in_key_order(t)
    if fast is not None:
        return fast

    added = pc.is_null(t[_ALWAYS[0]])
    for c in _ALWAYS[1:]:
        added = pc.or_(added, pc.is_null(t[c]))
    fresh = pc.and_(pc.equal(t["schema"], current_schema()),
                    pc.invert(pc.and_(pc.and_(pc.equal(t["status"], "ok"), pc.not_equal(t["kind"], "test")), added)))
    stale = pc.invert(pc.fill_null(fresh, False))
    by = pa.table({"key": t["key"], "stale": stale})
    order = pc.sort_indices(by, [("key", "ascending"), ("stale", "ascending")])  # stable
    keys = t["key"].take(order).combine_chunks()
    first = np.ones(len(t), dtype=bool)
    if len(t) > 1:
        first[1:] = pc.not_equal(keys.slice(1), keys.slice(0, len(t) - 1)).to_numpy(zero_copy_only=False)
    return t.take(order.filter(pa.array(first)))


def _consolidate_parquet(path, parts, pending=(), streamed=False):
    """:func:`consolidate` for a Parquet table whose files all have the current columns: in
    Arrow, without a Python object per row. None when some file is older (general path).
    ``streamed``: the table was written while the sweep ran (:class:`_Stream`) from these
    parts and pending rows: they are read for the returned rows only."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = ([path] if os.path.exists(path) and not streamed else []) + parts
    tables = [_current(_read_ipc(f) if Path(f).suffix == ".arrow" else _pq_read(f)) for f in files]
    if any(t is None for t in tables):
        return None
    tables += pending
    t = _dedup_arrow(pa.concat_tables(tables)) if tables else arrow_schema().empty_table()
    if not streamed and (parts or pending or not os.path.exists(path)):
        from .._io import write_atomic

        write_atomic(path, lambda tmp: pq.write_table(t, tmp, **_parquet_options(t.column_names)))
    return t


def _parquet_options(names) -> dict:
    """How a table is written: dictionaries for the columns that repeat, not the keys (all
    distinct) nor the measured floats (nearly all distinct; hashing them cost 10% of the
    write); statistics for the coordinates a reader filters row groups by, not every metric."""
    return {"use_dictionary": [c for c in names if c != "key" and (c not in _FLOAT_COLUMNS or c == "point")],
            "write_statistics": [c for c in ("key", "generator", "point", "replication", "scheduler", "status")
                                 if c in names]}


class _Stream:
    """The Parquet table of a sweep that starts from nothing, encoded while the sweep runs.

    Encoding the table at the end took 90-110 ms per 100,000 rows, with every worker already
    finished: the longest serial step left. Here a thread of the coordinator encodes each
    batch as soon as the batches before it (in the order they were cut) are in, so at the end
    only the last row group is left. The batches are still written as parts, which a killed
    sweep resumes from; the stream's file is a temporary file until :meth:`finish` renames it.

    It gives up (and consolidation takes the usual path) when a batch would break the key
    order: a spec whose generators or points are not listed in key order, say."""

    #: Rows gathered before a row group is encoded: row groups of 16,384 rows write 12% slower
    #: and read 9% slower than one of 100,000; of 4,096, 37% and 50%.
    ROW_GROUP = 16_384
    #: Batches waiting for the thread before :meth:`add` waits for it: the memory a stream
    #: holds stays bounded should batches come faster than they are encoded (about 1 µs a row).
    QUEUED = 32

    def __init__(self, path):
        import concurrent.futures as cf
        import tempfile

        import pyarrow.parquet as pq

        self.path = os.fspath(path)
        # In the parts directory: a sweep killed before the rename leaves a temporary file
        # where the next consolidation removes it.
        d = parts_dir(path)
        d.mkdir(parents=True, exist_ok=True)
        fd, self.tmp = tempfile.mkstemp(dir=d, prefix=".rtsched-", suffix=".tmp")
        os.close(fd)
        schema = arrow_schema()
        self.writer = pq.ParquetWriter(self.tmp, schema, **_parquet_options(schema.names))
        self.thread = cf.ThreadPoolExecutor(1, thread_name_prefix="rtsched-table")
        self.waiting, self.next, self.rows = {}, 0, 0  # batches in by cut order; the next to encode
        self.gathered, self.last_key, self.failed = [], None, None
        self.queued = collections.deque()  # the thread's tasks not known to be done

    def add(self, seq, table):
        """Batch number ``seq`` (cut order, from 0) has come back as ``table``."""
        if self.failed is not None:
            return
        self.waiting[seq] = table
        while self.next in self.waiting:
            t = self.waiting.pop(self.next)
            self.next += 1
            self.rows += len(t)
            self.queued.append(self.thread.submit(self._encode, t, False))
            while self.queued and (self.queued[0].done() or len(self.queued) > self.QUEUED):
                self.queued.popleft().result()

    def _encode(self, t, last):
        # On the stream's thread, one batch at a time, in cut order (t None: none, the end).
        import pyarrow as pa

        if self.failed is not None:
            return
        try:
            if t is not None and len(t):
                span = _key_span(t.column("key"))
                if span is None or (self.last_key is not None and span[0] <= self.last_key):
                    self.failed = "batches not in key order"
                    return
                self.last_key = span[1]
                self.gathered.append(t)
            if self.gathered and (last or sum(len(x) for x in self.gathered) >= self.ROW_GROUP):
                g = pa.concat_tables(self.gathered)
                self.gathered = []
                self.writer.write_table(g, row_group_size=len(g))
        except Exception as e:  # noqa: BLE001 - the usual consolidation takes over
            self.failed = f"{type(e).__name__}: {e}"

    def finish(self, rows) -> bool:
        """Encode what is left, close the file and, when it holds every one of the sweep's
        ``rows`` rows in key order, make it the table (fsync, rename). False otherwise: the
        file is removed and the usual consolidation writes the table."""
        if self.failed is None and not self.waiting and self.rows == rows:
            self.thread.submit(self._encode, None, True).result()
        self.thread.shutdown(wait=True)
        ok = self.failed is None and not self.waiting and self.rows == rows
        try:
            self.writer.close()
        except Exception as e:  # noqa: BLE001 - the usual consolidation takes over
            ok, self.failed = False, self.failed or f"{type(e).__name__}: {e}"
        try:
            if ok:
                from .._io import commit

                commit(self.tmp, self.path)
        finally:
            if os.path.exists(self.tmp):
                os.unlink(self.tmp)
        return ok

    def abandon(self):
        """The sweep stopped: the file is removed (the parts keep the rows)."""
        self.failed = self.failed or "abandoned"
        self.thread.shutdown(wait=True, cancel_futures=True)
        try:
            self.writer.close()
        finally:
            if os.path.exists(self.tmp):
                os.unlink(self.tmp)


def _read_checked(path, read, what):
    """``read()`` of an existing sweep table or part, or InputError (exit 2) naming it when it is
    not one (a per-job Parquet file, say) or cannot be read (truncated, corrupt): the file is
    left as it is, never overwritten."""
    try:
        df = read()
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001 - pyarrow's and pandas' errors for a bad file are many
        raise InputError(f"{path}: {what} cannot be read as a sweep table ({type(e).__name__}: {str(e)[:200]}); "
                         "it was left as it is: move it away, or give the sweep another output") from None
    if len(df) and ("key" not in df.columns or df["key"].isna().any() or (df["key"].astype(str) == "").any()):
        raise InputError(f"{path}: {what} is not a sweep table (rows without a sweep key: a per-job records file?); "
                         "it was left as it is: give the sweep another output")
    return df


def _read_all(path):
    """The table and any part files left by earlier (maybe interrupted) runs, each key once:
    a row of the current results schema wins over a stale one (recomputed by a resumed run),
    else the table's row over a part's."""
    import pandas as pd

    frames = []
    if os.path.exists(path):
        frames.append(_read_checked(path, lambda: read_table(path), "the table"))
    parts = _parts(path)
    frames += [_read_checked(p, (lambda p=p: _coerce(_arrow_frame(_read_ipc(p))) if p.suffix == ".arrow" else read_table(p)),
                             "a part file of the table") for p in parts]
    if not frames:
        return _frame([]), parts
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    df = df.assign(_stale=stale(df)).sort_values(["key", "_stale"], kind="stable")
    df = df.drop_duplicates("key", keep="first").drop(columns="_stale").reset_index(drop=True)
    return df, parts


def consolidate(path, frame=True, sink=None):
    """Fold part files into the table (atomically), then remove them. Returns the table (a
    DataFrame; with ``frame=False`` an Arrow table when the fast Parquet path was taken).

    ``sink``: the :class:`_Sink` of the run that just ended. Its rows not yet in a part go
    straight into a Parquet table, not through a part written, fsynced and read back (for
    100,000 rows in parts of 50,000, a third of the consolidation). Until the table is renamed
    they are in memory only, as they were since their last part: a coordinator killed in
    between loses them, and a resumed sweep computes them again."""
    pending = sink.take() if sink is not None and _fmt(path) == "parquet" else []
    stream, streamed = sink.stream if sink is not None else None, False
    if sink is not None:
        sink.stream = None
        sink.flush()  # a CSV table's, and a run that wrote none (nothing to take)
    parts = _parts(path)
    try:
        if stream is not None:
            streamed = stream.finish(sink.received)
        df = _consolidate_parquet(path, parts, pending, streamed) if _fmt(path) == "parquet" else None
    except BaseException:
        if pending:  # the table was not written (a full disk, an interrupt): keep them in a part
            sink.put_back(pending)
            sink.flush()
        raise
    if df is None and pending:
        # An older file takes the general path, which reads parts: the rows go into one first.
        sink.put_back(pending)
        sink.flush()
        parts, pending = _parts(path), []
    if df is None:
        df, parts = _read_all(path)
        if parts or not os.path.exists(path):
            _write_atomic(df, path)
    elif frame:
        df = _coerce(_arrow_frame(df))
    for p in parts:
        p.unlink(missing_ok=True)
    # A sweep killed while writing a part leaves that part's temporary file (write_atomic's
    # ".rtsched-*.tmp"; a finished part is renamed): never a row, but it kept the directory
    # (and the next kill's) forever. The rows are all in the table by now.
    d = parts_dir(path)
    for tmp in d.glob(".rtsched-*.tmp") if d.is_dir() else ():
        tmp.unlink(missing_ok=True)
    try:
        parts_dir(path).rmdir()
    except OSError:
        pass
    return df


class _Sink:
    """Completed batches (Arrow tables): buffered, then written as one part file per
    ``batch_rows`` rows or ``batch_seconds`` (atomic; see :func:`_parts`). Without a path
    they are kept in memory.

    A batch may come as the path of an Arrow IPC file a local worker wrote in the parts
    directory (``worker.run_batch_to``): it is mapped, not copied, and a Parquet table's
    flush makes that file a part as it is (fsync, rename) instead of writing its rows again."""

    def __init__(self, path, batch_rows=1000, batch_seconds=10.0, stream=False):
        self.path, self.batch_rows, self.batch_seconds = path, batch_rows, batch_seconds
        self.buffer, self.buffered, self.kept, self.last = [], 0, [], time.monotonic()
        self.files = []  # per buffered table: the worker's file it is mapped from, or None
        self.received = 0  # rows, every batch so far
        # stream: the sweep starts from nothing, so its table can be encoded as it runs
        self.stream = _Stream(path) if stream and path is not None and _fmt(path) == "parquet" else None
        self.notes = set()  # what the workers warn about (worker.run_batch's notes), said once per sweep
        self.run_id = f"{int(time.time())}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.count = 0

    def add(self, table, notes=(), seq=None):
        """Batch number ``seq`` (in the order the batches were cut) has come back as ``table``
        (or the path of its worker's file) with ``notes``."""
        self.notes.update(notes)
        file = None
        if isinstance(table, str):  # a local worker's file (worker.run_batch_to)
            file, table = table, _read_ipc(table)
        self.received += len(table)
        if self.stream is not None and seq is not None:
            self.stream.add(seq, table)
        if self.path is None:
            self.kept.append(table)
            if file is not None:
                os.unlink(file)  # mapped: the rows stay readable
            return
        self.buffer.append(table)
        self.files.append(file)
        self.buffered += len(table)
        if self.buffered >= self.batch_rows or time.monotonic() - self.last >= self.batch_seconds:
            self.flush()

    def abandon(self):
        """The run stopped: its table is not streamed (the parts keep its rows)."""
        if self.stream is not None:
            self.stream, stream = None, self.stream
            stream.abandon()

    def take(self):
        """The buffered tables (not yet in a part), handed over and no longer buffered."""
        # The workers' files they are mapped from stay behind as temporary files, removed
        # once consolidation has written the rows into the table.
        out, self.buffer, self.files, self.buffered = self.buffer, [], [], 0
        return out

    def put_back(self, tables):
        """Buffer ``tables`` (what :meth:`take` handed over) again, to be written as a part."""
        self.buffer = list(tables) + self.buffer
        self.files = [None] * len(tables) + self.files
        self.buffered = sum(len(t) for t in self.buffer)

    def frame(self):
        """The rows kept in memory (no path), as a DataFrame sorted by key."""
        import pyarrow as pa

        t = pa.concat_tables(self.kept) if self.kept else arrow_schema().empty_table()
        return _coerce(_arrow_frame(t)).sort_values("key", kind="stable").reset_index(drop=True)

    def flush(self):
        self.last = time.monotonic()
        if not self.buffer:
            return
        import pyarrow as pa

        d = parts_dir(self.path)
        d.mkdir(parents=True, exist_ok=True)
        if _fmt(self.path) == "parquet":
            from .._io import commit, write_atomic

            # A worker's file is already the part's bytes: made durable and named a part, then
            # no longer buffered, so a flush that fails further on (a full disk) leaves only
            # what is not yet in a part to the next one.
            i = 0
            while i < len(self.files):
                if self.files[i] is None:
                    i += 1
                    continue
                commit(self.files[i], self._next_part().with_suffix(".arrow"))
                self.buffered -= len(self.buffer[i])
                del self.buffer[i], self.files[i]
            copied = self.buffer
            if copied:
                t = pa.concat_tables(copied)

                def write(tmp):
                    with pa.OSFile(tmp, "wb") as f, pa.ipc.new_file(f, t.schema) as w:
                        w.write_table(t)

                write_atomic(self._next_part().with_suffix(".arrow"), write)
        else:
            t = pa.concat_tables(self.buffer)
            _write_atomic(_coerce(_arrow_frame(t)), self._next_part().with_suffix(".csv"))
            for f in self.files:
                if f is not None:
                    os.unlink(f)
        self.buffer, self.files, self.buffered = [], [], 0

    def _next_part(self) -> Path:
        self.count += 1
        return parts_dir(self.path) / f"part-{self.run_id}-{self.count:06d}"
