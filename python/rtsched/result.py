"""Run results in the one results schema, as Python objects and pandas DataFrames."""

from __future__ import annotations

import contextlib
import json
import numbers
from functools import cached_property
from pathlib import Path

from . import _core
from ._core import InputError, TaskSet
from .catalogue import names
from .durations import in_unit
from .taskset import load_taskset


def duration_ns(value) -> int:
    """A duration as users write it — a number of ms, or a string with a unit — in ns."""
    if isinstance(value, bool):
        raise InputError(f"duration: expected a number (ms) or a string like '2s', got {value!r}")
    if isinstance(value, numbers.Integral):
        return _core.parse_duration(str(int(value)))
    if isinstance(value, numbers.Real):
        return _core.parse_duration(repr(float(value)))
    if isinstance(value, str):
        return _core.parse_duration(value)
    raise InputError(f"duration: expected a number (ms) or a string like '2s', got {value!r}")


def _as_taskset(taskset) -> TaskSet:
    if isinstance(taskset, TaskSet):
        return taskset
    if isinstance(taskset, (str, Path, dict, list, tuple)):
        # A path, or the document (dict) or its tasks (list) as rtsched.load_taskset takes them.
        return load_taskset(taskset)
    raise InputError(f"expected a TaskSet, a path to a task-set file, a dict or a list of tasks, got {type(taskset).__name__}")


#: Run-level counters (``counters`` in the results document) that :attr:`Result.summary` adds
#: to the total summary: the catalogue's run-summary columns read from the run (decisions asked
#: of the policy, work stealing, priority inversions, migrations as a kernel counts them,
#: deadlocks the policy resolved by an abort: docs/semantics.md "Run-level counters").
RUN_COUNTERS = tuple(names("run", source="run"))


#: Runs with more counted jobs than this build :attr:`Result.jobs` from Parquet (pyarrow)
#: instead of Python lists, which take several times the time and memory for millions of jobs.
PARQUET_JOBS_ABOVE = 100_000

#: Per-job columns that may be null (empty cells in the CSV; the catalogue's nullable per-job
#: columns); as pandas ``Int64``.
NULLABLE_JOB_COLUMNS = tuple(names("job", nullable=True))


def _jobs_from_table(table):
    """A DataFrame of per-job records from an Arrow table of a jobs Parquet file, with the
    dtypes of the in-memory path (integers int64, nullable ones Int64, ``cpus`` lists)."""
    import pandas as pd
    import pyarrow as pa

    df = table.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
    for c in df.columns:
        if isinstance(df[c].dtype, pd.Int64Dtype) and c not in NULLABLE_JOB_COLUMNS:
            df[c] = df[c].astype("int64")
    df["cpus"] = table.column("cpus").to_pylist()
    return df


def _parquet_runs(f, path) -> list[dict]:
    """The runs a jobs Parquet file holds (header and row groups), from its metadata."""
    meta = f.schema_arrow.metadata or {}
    if b"rtsched.runs" not in meta:
        raise InputError(f"{path}: not a jobs file written by rtsched (no rtsched.runs metadata)")
    return json.loads(meta[b"rtsched.runs"])


def read_jobs(path, run=None):
    """Per-job records from a Parquet file written by ``--jobs-parquet`` (or
    :meth:`Result.write_jobs_parquet`), as a DataFrame. ``run`` selects one run of the file,
    by index or by scheduler name; without it every run's rows are read, with a ``scheduler``
    column as in the CSV."""
    import pyarrow.parquet as pq

    path = str(path)
    try:
        f = pq.ParquetFile(path)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: cannot read jobs: {e}") from None
    if run is None:
        return _jobs_from_table(f.read())
    runs = _parquet_runs(f, path)
    if isinstance(run, str):
        idx = [i for i, r in enumerate(runs) if r["scheduler"] == run]
        if len(idx) != 1:
            raise InputError(f"{path}: {len(idx)} runs of scheduler {run!r}; known: {', '.join(r['scheduler'] for r in runs)}")
        run = idx[0]
    if not 0 <= run < len(runs):
        raise InputError(f"{path}: no run {run} (the file has {len(runs)})")
    first, end = runs[run]["row_groups"]
    table = f.read_row_groups(list(range(first, end))) if end > first else f.schema_arrow.empty_table()
    return _jobs_from_table(table.drop_columns(["scheduler"]))


class Result:
    """One run. ``summary`` is the total summary (a dict), ``tasks`` the per-task summaries and
    ``jobs`` the per-job records (pandas DataFrames); ``gantt()`` draws the schedule."""

    #: The run ran (a comparison's scheduler that could not is a :class:`NotRun`).
    ok = True
    status = "ok"

    def __init__(self, raw: _core.RunResult, taskset: TaskSet):
        self.raw = raw
        self.taskset = taskset
        # (path, run index) of a Parquet file holding this run's jobs, once one is written.
        self._jobs_file = None

    @property
    def scheduler(self) -> str:
        return self.raw.scheduler

    @property
    def substrate(self) -> str:
        return self.raw.substrate

    @cached_property
    def document(self) -> dict:
        """The results document (header, counters, total and per-task summaries), as the
        core builds it."""
        return self.raw.document()

    @property
    def measurements(self) -> dict:
        """Real runs: decision overhead, release jitter, preemption latency, kernel counters.
        Real testbed runs and simulations with ``measure_policy=True``: the time the policy
        took per decision (``policy_ns_per_invocation``, ``policy_ns_max``, ``policy_ns_total``)."""
        return dict(self.raw.measurements)

    @property
    def counters(self) -> dict:
        """Run-level counters: scheduler invocations, events (simulator), releases, steals,
        steal attempts, failed steals, priority inversions and the time they held (ns)."""
        return dict(self.document["counters"])

    @cached_property
    def values(self) -> dict:
        """Every column of the catalogue (:mod:`rtsched.catalogue`) this run gives as one value
        — its total summary's, its counters', its measurements' — by name; None where the run
        could not measure it (:attr:`unmeasured`) or has none."""
        return self.raw.values()

    @property
    def unmeasured(self) -> tuple:
        """The columns this run could not measure, as its driver says (a run without a job
        ledger deciding every dispatch, e.g. the kernel backends, lists the ledger's counters):
        null in its document, None in :attr:`values`, ``-`` in the tables."""
        return tuple(self.raw.unmeasured)

    @property
    def summary(self) -> dict:
        """Total summary: jobs, met, missed, aborted, dsr, utility (``accrued_utility``,
        ``possible_utility``, ``aur`` = accrued / possible), tardiness, response times,
        preemptions, migrations, pulls (None where not measured: kernel runs), context
        switches, and the run-level counters of ``RUN_COUNTERS``."""
        d = dict(self.document["total"])
        c = self.document["counters"]
        for k in RUN_COUNTERS:
            d[k] = c.get(k, 0)
        if "chains" in self.document:
            # Per chain: instances, {max, mean, p99} of latency_ns, data_age_ns and
            # reaction_time_ns (None where none applies), deadline_ns, deadline_misses.
            d["chains"] = self.document["chains"]
        return d

    @cached_property
    def chains(self):
        """One row per chain instance (docs/chains.md): ``chain``, ``instance``, ``start_ns``,
        ``end_ns``, ``latency_ns`` (event chains), ``data_age_ns`` and ``reaction_time_ns``
        (data-flow chains); NaN where a metric does not apply. Empty for a set without chains.
        A run that did not keep its per-job records (``keep_jobs=False``) did not keep these
        either: each went into ``summary["chains"]`` as it was made (ValueError here)."""
        import pandas as pd

        if not self.raw.chains_held:
            raise ValueError("chains: this run did not keep its chain records (with keep_jobs=False each goes into "
                             "summary['chains'] as it is made); run with keep_jobs=True")

        df = pd.DataFrame(self.raw.chains_columns())
        for c in ("latency_ns", "data_age_ns", "reaction_time_ns"):
            df[c] = df[c].astype("float64")
        return df

    @cached_property
    def tasks(self):
        import pandas as pd

        return pd.DataFrame(self.document["tasks"]).set_index("name")

    @cached_property
    def jobs(self):
        """Per-job records (times in ns; ``cpus`` is the list of CPUs the job ran on), in the
        CSV's columns but ``scheduler``. Built on first access: from the Parquet file this
        run's jobs were written to (``--jobs-parquet``, :meth:`write_jobs_parquet`) if any, else
        for runs of more than ``PARQUET_JOBS_ABOVE`` jobs from Parquet encoded in memory, else
        from Python lists; the three give the same DataFrame."""
        import pandas as pd

        if self._jobs_file is not None:
            path, index = self._jobs_file
            try:
                df = read_jobs(path, index)
            except InputError:
                if not self.raw.jobs_held:
                    raise
                df = None  # replaced or removed since: the records are still in memory
            if df is not None and len(df) == self.raw.job_count:
                return df
        self._need_jobs("jobs")
        if self.document["total"]["jobs"] > PARQUET_JOBS_ABOVE:
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pq.read_table(pa.BufferReader(_core.jobs_parquet_bytes(self.raw)))
            return _jobs_from_table(table.drop_columns(["scheduler"]))
        df = pd.DataFrame(self.raw.jobs_columns())
        for c in NULLABLE_JOB_COLUMNS:
            df[c] = df[c].astype("Int64")
        return df

    def _need_jobs(self, what):
        if not self.raw.jobs_held:
            raise ValueError(f"{what}: this run did not keep its per-job records (simulate(..., keep_jobs=False) and "
                             f"run(..., keep_jobs=False) summarise each job as it ends); run with keep_jobs=True "
                             f"or jobs_parquet=PATH")

    def write_jobs_parquet(self, path):
        """Write the per-job records to ``path`` as zstd-compressed Parquet (atomically), and
        read :attr:`jobs` from there from now on."""
        self._need_jobs("write_jobs_parquet")
        _core.write_jobs_parquet([self.raw], str(path))
        self._jobs_file = (str(path), 0)

    @cached_property
    def intervals(self):
        """Execution intervals (only if the run recorded them: ``simulate(..., trace=True)``):
        ``cpu``, ``task``, ``job``, ``region`` and ``thread`` (of a fork-join job; 0 and 0 for a
        sequential one), ``demand_ns`` (that thread's actual demand), ``start_ns``, ``end_ns``,
        ``overhead_ns`` (paid at the interval's start)."""
        import pandas as pd

        return pd.DataFrame(self.raw.intervals_columns())

    def to_json(self, path=None, jobs: bool = True):
        """The results document as a dict, or written atomically to ``path`` (per-job records
        streamed, with ``jobs``)."""
        if jobs:
            self._need_jobs("to_json(jobs=True)")
        if path is None:
            return self.raw.document(jobs)
        _core.write_results_json([self.raw], str(path), bool(jobs))

    def gantt(self, path=None, start=None, end=None, ax=None, window=None):
        """Draw a Gantt chart: one row per CPU, releases and deadlines per task, critical
        sections hatched (:mod:`rtsched.gantt`). ``window``: the time shown, ``"START:END"``
        in ms or with units (``"0:40"``, ``"1s:1.2s"``) or a pair of such durations; or
        ``start``/``end`` in ns; by default four periods of the longest-period task, at most forty of
        the shortest-period one (:func:`rtsched.gantt.default_window_ns`). Needs a
        run with ``trace=True`` (else :class:`InputError`)."""
        from .gantt import gantt

        return gantt([self], path=path, start=start, end=end, ax=ax, window=window)

    def __repr__(self) -> str:
        s = self.summary
        return (f"<Result {self.scheduler} ({self.substrate}): {s['jobs']} jobs, {s['missed']} missed, DSR {s['dsr']:.4f}, "
                f"AUR {s.get('aur', float('nan')):.4f}>")


class NotRun:
    """A scheduler of a comparison that could not run on the task set (``rtsched simulate -s A
    B``, ``run``, ``compare``): its ``status`` — the words of a sweep's rows: ``partition-failed``
    (its partitioner placed no partition), ``deadlock`` (a deadlock it does not resolve stopped
    the run), ``not-applicable`` (it refuses the set, e.g. a partitioned scheduler without
    ``cpu`` fields, or a real-run backend the set does not suit), ``too-long``, or
    ``run-failed`` (a real run failed on the machine) — and ``error``, why. It stands in the
    comparison's list of results where the run would have been; ``ok`` is False (a
    :class:`Result`'s is True)."""

    ok = False

    def __init__(self, scheduler: str, substrate: str, status: str, error: str):
        self.scheduler, self.substrate, self.status, self.error = scheduler, substrate, status, error

    @classmethod
    def of(cls, scheduler: str, substrate: str, e: Exception) -> NotRun | None:
        """The row of ``scheduler`` whose run raised ``e``, if ``e`` says why it could not run
        (its ``status``, set by the core from the kind of failure, never from its text); else
        None: the error is the whole command's."""
        status = getattr(e, "status", None)
        return None if status is None else cls(scheduler, substrate, status, str(e))

    def __repr__(self) -> str:
        return f"<NotRun {self.scheduler} ({self.substrate}): {self.status}: {self.error}>"


def exit_status(results) -> int:
    """The exit code of a comparison: 0 when every scheduler ran, 1 when a run failed on the
    machine (status ``run-failed``), which wins, else 2 when some could not run because of the
    input (a partition that failed, a deadlock, a run too long, a set the
    scheduler refuses). Each status's code is the core's (``_core.STATUS_EXIT_CODES``,
    ``rtsched_sweep::Status::exit_code``), the same for a simulated and a real run, and the
    same as the exception the run raises (``InputError``: 2, ``RunFailed``: 1)."""
    codes = {_core.STATUS_EXIT_CODES[r.status] for r in results if not r.ok}
    return 1 if 1 in codes else (2 if codes else 0)


#: Jobs a run may count before it is refused up front (``max_jobs=``, the CLI's --max-jobs): a
#: guard against a typo (a 1 ns period over a second is a billion jobs: minutes of simulation,
#: and 240 GB if the run holds its records). About 5 s of simulation; 2.4 GB of records when
#: they are held.
DEFAULT_MAX_JOBS = 10_000_000

#: Counted jobs one run can number at all (job records are numbered in 32 bits).
MAX_COUNTED_JOBS = 2**32 - 2


def _check_seed(seed):
    """A seed is an integer from 0 to 2^64 - 1 (the RNG's seed is 64 bits)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**64):
        raise InputError(f"seed: expected an integer from 0 to 2^64 - 1, got {seed!r}")


def check_job_limit(ts, limit=DEFAULT_MAX_JOBS, runs=1, held=True, raise_with="max_jobs=N raises it"):
    """Raise :class:`InputError` for a run of ``ts`` that would count more than ``limit`` jobs
    (None: no limit but what one run can count at all), with the numbers: known before it runs,
    from the periods and the window. ``held``: the run holds every record in memory (the
    message then says how much). ``raise_with`` says how to raise the limit."""
    if limit is not None and (not isinstance(limit, numbers.Integral) or limit < 1):
        raise InputError(f"{'--max-jobs' if raise_with.startswith('--') else 'max_jobs'} must be at least 1, got {limit}")
    jobs = ts.estimated_jobs
    if jobs > MAX_COUNTED_JOBS:
        raise InputError(f"{ts.source}: the run would count {jobs:,} jobs per scheduler; one run counts at most "
                         f"{MAX_COUNTED_JOBS:,} (a shorter duration lowers the count)")
    if limit is None or jobs <= limit:
        return
    rt = [t for t in ts.tasks() if t["period_ns"] > 0 and t["wcet_ns"] > 0] or ts.tasks()
    heaviest = min(rt, key=lambda t: t["period_ns"])
    if held:
        size = jobs * ts.job_record_bytes * runs
        size = f"{size / 1e9:,.1f} GB" if size >= 1e9 else f"{size / 1e6:,.1f} MB"
        cost = f"about {size} of per-job records for {runs} run(s)"
    else:
        cost = "each job folded into the summaries as it ends, so memory stays bounded, but it takes long"
    raise InputError(
        f"{ts.source}: the run would count {jobs:,} jobs per scheduler (task '{heaviest['name']}' releases one every "
        f"{heaviest['period_ns']:,} ns over {in_unit(ts.duration_ns, 's')} s), {cost}; the limit is {limit:,} ({raise_with})")


#: Steps of scheduling work a run may take before it is refused up front (``max_work=``, the
#: CLI's --max-work): the job limit bounds a run's memory, this its time. Counted from the
#: jobs' events, the ticks and the policy's cost on m CPUs (``rtsched_sim::estimate``):
#: at about 1-2 ns a step, well under a minute; a 1 ns tick or PAWS on 65,536 CPUs is hours.
DEFAULT_MAX_WORK = _core.DEFAULT_MAX_WORK


def _duration_words(seconds):
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} minutes"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} hours"
    if seconds < 2 * 365 * 86400:
        return f"{seconds / 86400:.0f} days"
    return f"{seconds / (365 * 86400):.2g} years"


def check_work_limit(ts, scheduler, limit=DEFAULT_MAX_WORK, raise_with="max_work=N raises it"):
    """Raise :class:`InputError` for a run of ``ts`` under ``scheduler`` whose estimated work
    (:meth:`TaskSet.estimated_work`) is over ``limit`` steps (None: no limit), with the
    numbers. A bad scheduler name raises the error a run would."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, numbers.Integral) or limit < 1):
        raise InputError(f"{'--max-work' if raise_with.startswith('--') else 'max_work'} must be at least 1, got {limit}")
    decisions, ticks, per, steps, threads = ts.estimated_work(scheduler)
    if limit is None or steps <= limit:
        return
    ticked = f", and {ticks:,} tick events on its CPUs" if ticks else ""
    total = "more than 10^19" if steps >= 2**64 - 1 else f"about {steps:.2g}"
    raise InputError(
        f"{ts.source}: a run under {scheduler} would take {total} steps of scheduling work ({decisions:,} decisions "
        f"of about {per:,} steps each on {ts.cpus:,} CPUs with {threads:,} threads{ticked}): at about 1 ns a step, "
        f"{_duration_words(steps * 1e-9)}; the limit is {limit:,} ({raise_with})")


def simulate(taskset, scheduler: str = "gedf", duration=None, seed=None, on_miss=None, trace: bool = False,
             measure_policy: bool = False, keep_jobs: bool = True, jobs_parquet=None, _into=None, _csv=None,
             max_jobs=DEFAULT_MAX_JOBS, max_work=DEFAULT_MAX_WORK, _warn=True, _chains_csv=None) -> Result:
    """Simulate ``taskset`` (a :class:`TaskSet` or a file path) under ``scheduler``.

    ``duration`` (number in ms, or "2s"), ``seed`` and ``on_miss`` override the file's run
    options. ``trace=True`` records execution intervals (for ``gantt()`` and Perfetto traces).
    ``measure_policy=True`` times every decision of the policy (wall-clock, so not
    deterministic): ``measurements["policy_ns_per_invocation"]``, ``policy_ns_max``,
    ``policy_ns_total``. The GIL is released while the simulation runs. A deadlock the
    scheduler does not resolve raises :class:`InputError` naming the jobs and resources.

    ``keep_jobs=False`` keeps no per-job records: each job is folded into the summaries as it
    ends, so memory stays bounded however long the run (``jobs`` is then unavailable).
    ``jobs_parquet=PATH`` streams every record into that Parquet file as its job ends (written
    atomically when the run ends) and reads ``jobs`` back from it.

    A run that would count more than ``max_jobs`` jobs (default 10,000,000, as the CLI's) is
    refused before it starts, with the numbers; ``max_jobs=None`` lifts the limit. So is one
    whose scheduling work is estimated at more than ``max_work`` steps (default 2·10^10, about
    a minute at most: a 1 ns tick, or PAWS on tens of thousands of CPUs, is hours);
    ``max_work=None`` lifts that limit.

    The task set's warnings (``TaskSet.warnings``: more work than the CPUs, C > D or C > T, a
    likely unit mix, a counted window too short for its periods) are given as Python warnings
    of category :class:`rtsched.LoadWarning` before the run. A scheduler that cannot run the
    set raises :class:`InputError` whose ``status`` says why (``partition-failed``,
    ``deadlock``, ``not-applicable``: the words of a sweep's rows).
    """
    ts = _as_taskset(taskset)
    if duration is not None or seed is not None or on_miss is not None:
        _check_seed(seed)
        ts = ts.with_run(
            duration_ns=None if duration is None else duration_ns(duration),
            seed=None if seed is None else int(seed),
            on_miss=on_miss,
        )
    if _warn:
        from .checks import emit

        emit(ts)
    streams = _into is not None or _csv is not None or _chains_csv is not None
    check_job_limit(ts, max_jobs, held=bool(keep_jobs) and jobs_parquet is None and not streams)
    check_work_limit(ts, scheduler, max_work)
    if streams:
        # An open _core.JobsParquetFile, JobsCsvFile and/or ChainsCsvFile that several runs
        # stream into (`rtsched simulate`).
        return Result(_core.simulate(ts, scheduler, trace, measure_policy=bool(measure_policy), parquet=_into, csv=_csv,
                                     chains_csv=_chains_csv), ts)
    if jobs_parquet is None:
        return Result(_core.simulate(ts, scheduler, trace, measure_policy=bool(measure_policy), keep_jobs=bool(keep_jobs)), ts)
    return _written_to(jobs_parquet, None, ts, lambda f: _core.simulate(ts, scheduler, trace, measure_policy=bool(measure_policy), parquet=f))


def _written_to(path, row_group, ts, go):
    """Run `go(file)` with its records streamed into a new Parquet file at `path`: the file
    appears (atomically) only if the run succeeds. The Result reads `jobs` back from it."""
    with parquet_file(path, row_group) as f:
        raw = go(f)
    r = Result(raw, ts)
    r._jobs_file = (str(path), 0)
    return r


@contextlib.contextmanager
def _sink_file(make, path):
    """An open file `make(path)` that runs stream their records into (None: yields None),
    closed (moved into place) when the block ends, discarded if it raises."""
    if path is None:
        yield None
        return
    f = make(str(path))
    try:
        yield f
        f.close()
    except BaseException:
        f.discard()
        raise


def parquet_file(path, row_group=None):
    """An open _core.JobsParquetFile at `path` (None: yields None) that runs stream their
    records into; closed (moved into place) when the block ends, discarded if it raises."""
    return _sink_file(lambda p: _core.JobsParquetFile(p, row_group=row_group), path)


def csv_file(path):
    """An open _core.JobsCsvFile at `path` (None: yields None), as :func:`parquet_file`: runs
    stream their records into it as CSV lines."""
    return _sink_file(_core.JobsCsvFile, path)


def chains_csv_file(path):
    """An open _core.ChainsCsvFile at `path` (None: yields None), as :func:`csv_file`: simulations
    and real runs stream their chain records into it as CSV lines as they are made
    (``--chains-csv``)."""
    return _sink_file(_core.ChainsCsvFile, path)


# Row groups of a real run's Parquet file: a real run makes a few hundred records a second, and
# a row group's columns wait in memory until it is full (about 100 bytes a record).
REAL_RUN_ROW_GROUP = 8192


def run(taskset, backend: str = "testbed:gedf", duration=None, seed=None, on_miss=None, allow_overload: bool = False,
        model: str = "stw", trace: bool = True, keep_jobs: bool = True, jobs_parquet=None, _into=None, _csv=None,
        max_jobs=DEFAULT_MAX_JOBS, max_work=DEFAULT_MAX_WORK, _warn=True, _chains_csv=None) -> Result:
    """Run ``taskset`` for real on Linux.

    ``backend``: ``kernel:deadline[:reclaim]``, ``kernel:fifo[:rm|:dm|:file]``, ``kernel:other``
    (each with an optional ``:pi``: critical sections lock mutexes with priority inheritance;
    ``kernel:fifo`` also ``:pcp``: the immediate priority ceiling, ``PTHREAD_PRIO_PROTECT`` at
    each resource's ceiling; the file's ``locking`` chooses them itself, and under a partitioned
    ``kernel:fifo`` ``msrp`` and ``mrsp`` run FIFO spin locks, docs/locking.md "Real runs") or
    ``testbed:POLICY`` (any rtsched policy enforced on real cores). ``model``: the testbed's
    global model, ``stw`` (stop-the-world) or ``concurrent`` (application-concurrent).
    Needs real-time privilege (root or CAP_SYS_NICE); raises ``PrivilegeError`` otherwise,
    having run nothing. Returns a :class:`Result` in the same schema as :func:`simulate`, with
    ``measurements`` (decision overhead, release jitter, preemption latency).

    ``keep_jobs=False`` keeps no per-job records: each job is folded into the summaries as it
    ends, and each chain record into ``summary["chains"]`` as it is made, so a long run's memory
    does not grow with its jobs (``jobs`` and ``chains`` are then unavailable).
    ``jobs_parquet=PATH`` writes every record into that Parquet file as its job ends (atomically,
    when the run ends) and reads ``jobs`` back from it. ``max_jobs``, ``max_work``: as for
    :func:`simulate` (the work of a ``testbed:`` backend's policy; the kernel's own are not
    estimated). The task set's warnings are given as :func:`simulate` gives them; a backend that
    cannot run the set raises with a ``status`` as there, with the same exception for the same
    failure (a deadlock: :class:`InputError`, status ``deadlock``); a run that failed on the
    machine raises :class:`RunFailed`, status ``run-failed``.
    """
    ts = _as_taskset(taskset)
    if duration is not None or seed is not None or on_miss is not None:
        _check_seed(seed)
        ts = ts.with_run(duration_ns=None if duration is None else duration_ns(duration),
                         seed=None if seed is None else int(seed), on_miss=on_miss)
    if _warn:
        from .checks import emit

        emit(ts)
    streams = _into is not None or _csv is not None or _chains_csv is not None
    check_job_limit(ts, max_jobs, held=bool(keep_jobs) and jobs_parquet is None and not streams)
    if isinstance(backend, str) and backend.startswith("testbed:"):
        check_work_limit(ts, backend[len("testbed:"):], max_work)
    if streams:
        # An open _core.JobsParquetFile, JobsCsvFile and/or ChainsCsvFile that several runs
        # write into (`rtsched run`).
        return Result(_core.run_real(ts, backend, allow_overload, model, trace, parquet=_into, csv=_csv,
                                     chains_csv=_chains_csv), ts)
    if jobs_parquet is None:
        return Result(_core.run_real(ts, backend, allow_overload, model, trace, keep_jobs=bool(keep_jobs)), ts)
    return _written_to(jobs_parquet, REAL_RUN_ROW_GROUP, ts,
                       lambda f: _core.run_real(ts, backend, allow_overload, model, trace, parquet=f))
