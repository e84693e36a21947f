"""What the commands that run a task set share (simulate, run, compare, demo, calibrate): their
table and output options, the checks made before a run (duration, job and work limits, output
paths, the Gantt window, whether each scheduler builds for the set), expanding ``all`` and
``--partition`` into scheduler names, running them, and writing the outputs."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from .. import _core
from .._core import InputError
from .._io import resolve_output
from ..cli import printable
from ..policies import descriptions, info
from ..report import ALL_COLUMNS, comparison_table, not_run_lines, parse_columns, summary_records
from ..result import (
    DEFAULT_MAX_JOBS,
    DEFAULT_MAX_WORK,
    NotRun,
    check_work_limit,
    duration_ns,
    simulate,
)
from ..result import check_job_limit as check_jobs
from ..tables import FORMATS, as_format, output_width


def add_table_arguments(p):
    """The summary table's options (simulate, run): which columns, and in which format."""
    p.add_argument("--columns", type=_columns, metavar="A,B,...",
                   help="the summary table's columns, in this order, by header or summary key, e.g. "
                        "'scheduler,missed,dsr,max_tardiness_ns' (quote headers with spaces: 'scheduler,max tard ms'); "
                        "headers: " + ", ".join(c.header for c in ALL_COLUMNS) + ". Without it the usual columns are shown, "
                        "and on a terminal (width: COLUMNS, else the terminal's) those that do not fit are left out, "
                        "least important first, saying which; output to a pipe or a file without COLUMNS keeps every column")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="how the summaries are printed: 'table' (default), or 'csv' or 'json' on standard output for "
                        "machines (one row or object per run: every summary key, or the --columns' keys; raw numbers, "
                        "times in ns, no width limit); the command's other lines then go to standard error")


def _columns(text):
    """argparse type of --columns: the chosen columns (report.parse_columns); an unknown name is
    a usage error (exit 2) naming it and listing the known ones."""
    try:
        return parse_columns(text)
    except InputError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def print_summaries(results, args):
    """The runs' summaries on standard output: the comparison table, fitted to the terminal's
    width, or with --format csv|json the rows for machines (on the command's standard output
    even though its other lines go to stderr: cli.main); then, on standard error, why each
    scheduler that could not run did not (its row's status says which)."""
    fmt = getattr(args, "format", "table")
    if fmt == "table":
        print(comparison_table(results, output_width(), args.columns))
    else:
        print(as_format(fmt, summary_records(results, args.columns)), file=getattr(args, "rows_out", None) or sys.stdout)
    sys.stdout.flush()  # the table before the reasons below it, on a terminal showing both
    for line in not_run_lines(results):
        print(printable(line), file=sys.stderr)


def add_output_arguments(p):
    """The result files every command that runs task sets writes (simulate, run, compare)."""
    p.add_argument("--json", metavar="OUT", help="write the results as JSON: header, summaries, counters, measurements "
                                                 "(per-job records only with --json-jobs)")
    p.add_argument("--json-jobs", action="store_true",
                   help="with --json: also write every per-job record into it (streamed; about 400 bytes a job, "
                        "so prefer --jobs-parquet for long runs)")
    p.add_argument("--jobs-csv", metavar="OUT", help="write per-job records as CSV")
    p.add_argument("--jobs-parquet", metavar="OUT",
                   help="write per-job records as zstd-compressed Parquet (the CSV's columns, typed; "
                        "rtsched.read_jobs(OUT) reads it back)")
    p.add_argument("--max-jobs", type=int, metavar="N", default=DEFAULT_MAX_JOBS,
                   help=f"refuse, before it starts, a run that would count more than N jobs per scheduler "
                        f"(default {DEFAULT_MAX_JOBS:,}). Raised, a run still goes in bounded memory: "
                        f"each job is folded into the summaries, or streamed to --jobs-parquet, as it ends; "
                        f"only --json-jobs, --jobs-csv, --trace, --gantt, --chains-csv and compare hold every record "
                        f"(272 bytes a job)")
    p.add_argument("--max-work", type=int, metavar="N", default=DEFAULT_MAX_WORK,
                   help=f"refuse, before it starts, a run whose scheduling work is estimated at more than N steps "
                        f"(default {DEFAULT_MAX_WORK:.0e}, under a minute here): the jobs' events and the ticks, "
                        f"each decision weighed by the policy's cost on m CPUs (a 1 ns tick, or paws on "
                        f"thousands of CPUs, is hours)")


def check_duration(args):
    """Validate --duration before anything runs, the option named in the message."""
    if args.duration is not None:
        try:
            duration_ns(args.duration)
        except InputError as e:
            raise InputError(f"--duration {args.duration}: {e}") from None


#: Gantt charts and utilisation plots: the format comes from the file's extension.
FIGURE_FORMATS = ("png", "svg", "pdf", "jpg", "jpeg", "eps", "ps", "tif", "tiff", "webp")


def check_figure_path(flag, path):
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    if ext not in FIGURE_FORMATS:
        raise InputError(f"{flag} {path}: the figure's format comes from its extension, one of "
                         f"{', '.join('.' + f for f in FIGURE_FORMATS[:3])} (or {', '.join('.' + f for f in FIGURE_FORMATS[3:])})")


def gantt_window(args):
    """--gantt-window as (start_ns, end_ns), checked before the run (InputError naming the option)."""
    text = getattr(args, "gantt_window", None)
    if text is None:
        return None
    if not args.gantt:
        raise InputError(f"--gantt-window {text}: needs --gantt OUT.png (the chart it sets the window of)")
    from ..gantt import parse_window

    return parse_window(text, "--gantt-window")


def check_job_limit(ts, args, runs=1, held=True):
    """Refuse (InputError, exit 2) a run whose counted jobs exceed --max-jobs, or what one run
    can count at all, with the numbers (:func:`rtsched.result.check_job_limit`)."""
    if args.duration is not None:
        ts = ts.with_run(duration_ns=duration_ns(args.duration))
    check_jobs(ts, getattr(args, "max_jobs", DEFAULT_MAX_JOBS), runs=runs, held=held,
               raise_with="--max-jobs N raises it; a shorter --duration lowers the count")


def check_work(ts, args, schedulers):
    """Refuse (InputError, exit 2) a run under any of ``schedulers`` whose estimated work is over
    --max-work, before any of them runs (:func:`rtsched.result.check_work_limit`). A scheduler
    that does not build for the set is left to its run, which gives it its row's status."""
    if args.duration is not None:
        ts = ts.with_run(duration_ns=duration_ns(args.duration))
    for name in schedulers:
        try:
            check_work_limit(ts, name, getattr(args, "max_work", DEFAULT_MAX_WORK),
                             raise_with="--max-work N raises it; a shorter --duration lowers it")
        except InputError as e:
            if getattr(e, "status", None) is None:
                raise


def _probe_set(cpus: int):
    """The lightest task set every sound scheduler spec builds for: one task on CPU 0, with a
    priority, on ``cpus`` CPUs (as a sweep's probe)."""
    doc = {"platform": {"cpus": cpus}, "run": {"duration": 1},
           "tasks": [{"name": "probe", "period": 100, "wcet": 1, "cpu": 0, "priority": 1}]}
    return _core.parse_taskset(json.dumps(doc), "json", "<probe>")


def probe_schedulers(ts, names, what="scheduler"):
    """Refuse (InputError, exit 2, before anything runs) a scheduler spec that is wrong whatever
    the set — an unknown name or option, with a did-you-mean — by building it for the lightest
    set on the same CPUs. A spec that builds there but not for ``ts`` is the set's failure: its
    run gives it a row with a status (:class:`rtsched.result.NotRun`), and the others run."""
    probe = _probe_set(ts.cpus)
    for name in dict.fromkeys(names):
        try:
            if what == "backend":
                _core.check_backend(probe, name)
            else:
                probe.estimated_work(name)
        except InputError as e:
            raise InputError(str(e).replace("<probe>: task 'probe': ", "").replace("<probe>: ", "")) from None


def output_paths(args, inputs=(), **more) -> dict:
    """The output files asked for, by option, checked before anything runs: a run of minutes
    must not end in an unwritable path, and an output must not replace what it must not (an
    input of the run in ``inputs``, a directory, a device: ``_io.resolve_output``). Raises
    InputError naming the option and the file."""
    paths = {k: getattr(args, k, None) for k in ("json", "jobs_csv", "jobs_parquet", "trace", "gantt")}
    paths.update(more)
    if getattr(args, "json_jobs", False) and not paths["json"]:
        raise InputError("--json-jobs needs --json OUT (the file the per-job records go into)")
    seen = {}
    for opt, path in paths.items():
        if not path:
            continue
        flag = "--" + opt.replace("_", "-")
        real = os.path.realpath(path)
        if real in seen:
            raise InputError(f"{path}: given to both {seen[real]} and {flag}")
        seen[real] = flag
        try:
            how, target = resolve_output(path, inputs)
        except InputError as e:
            raise InputError(f"{flag} {e}") from None
        if how == "through":  # a device or '-': a figure goes as PNG
            continue
        if opt in ("gantt", "util_plot"):
            check_figure_path(flag, path)
        try:
            _probe_directory(os.path.dirname(os.path.abspath(target)))
        except OSError as e:
            raise InputError(f"{flag} {path}: cannot write: {e.strerror or e}") from None
    return paths


def _probe_directory(d):
    """Raise OSError unless a file can be created in directory `d` (created when the file is
    written if missing): create and remove a probe there, or the first missing directory."""
    parent = d
    while not os.path.exists(parent):
        d, parent = parent, os.path.dirname(parent)
    if d != parent:
        os.mkdir(d)
        os.rmdir(d)
    elif not os.path.isdir(d):
        raise NotADirectoryError(20, "not a directory", d)
    else:
        fd, probe = tempfile.mkstemp(dir=d, prefix=".rtsched-probe-")
        os.close(fd)
        os.unlink(probe)


def with_partition(name: str, heuristic) -> str:
    """Add `partition=HEURISTIC` to a partitioned scheduler (its description's ``partition``:
    ``rtsched.policies``) that does not choose one itself (a bare option that names the
    heuristic, e.g. `pedf:ffd`, chooses it). The core splits the spec."""
    if not heuristic:
        return name
    base, options = _core.parse_scheduler(name)
    how = info(base)["partition"]
    if how is None or any(k == "partition" or (how["bare"] and k == "") for k, _ in options):
        return name
    opts = [f"{k}={v}" if k else v for k, v in options] + [f"partition={heuristic}"]
    return f"{base}:{','.join(opts)}"


def expand_schedulers(names, ts, partition=None):
    """Resolve 'all' to every policy that runs this task set, saying which do not and why
    (``_core.refusal``: a part of the set its description says it does not take, then what its
    build refuses: priorities or a partition it needs, a partition its heuristic cannot place).
    Nothing is simulated; what the others do with the set is their runs' to say."""
    if not names:
        return ["gedf"], []
    out, skipped = [], []
    for n in names:
        if n == "all":
            for p in descriptions():
                name = with_partition(p["name"], partition)
                why = _core.refusal(ts, name)
                if why is None:
                    out.append(name)
                else:
                    skipped.append((name, why))
        else:
            out.append(with_partition(n, partition))
    return out, skipped


def run_all(ts, names, seed=None, duration=None, on_miss=None, trace=False, measure_policy=False, keep_jobs=True,
            jobs_file=None, max_jobs=DEFAULT_MAX_JOBS, max_work=DEFAULT_MAX_WORK, csv=None, chains_csv=None):
    """Simulate under each scheduler: a :class:`~rtsched.result.Result` each, or a
    :class:`~rtsched.result.NotRun` for one that could not run on the set (its partitioner found
    no partition, a deadlock stopped it, it refuses the set); the others run all the same. With
    `jobs_file` (an open _core.JobsParquetFile), each run's records stream into it as its jobs
    end, as with `csv` (a JobsCsvFile) and `chains_csv` (a ChainsCsvFile: the chain records);
    the caller closes them."""
    results = []
    for name in names:
        try:
            results.append(simulate(ts, scheduler=name, duration=duration, seed=seed, on_miss=on_miss, trace=trace,
                                    measure_policy=measure_policy, keep_jobs=keep_jobs, _into=jobs_file,
                                    max_jobs=max_jobs, max_work=max_work, _csv=csv, _chains_csv=chains_csv,
                                    _warn=False))
        except InputError as e:
            row = NotRun.of(name, "sim", e)
            if row is None:
                raise
            results.append(row)
    return results


def keeps_jobs(args, ts) -> bool:
    """Whether a simulation must hold its per-job records: an output or a table that reads them
    after the run (else they are folded into the summaries, or streamed to --jobs-parquet, as
    each job ends, and memory stays bounded; --jobs-parquet, --jobs-csv and --chains-csv are
    written as they go, docs/chains.md "Long runs")."""
    return bool(args.json_jobs or args.trace or args.gantt or getattr(args, "util_plot", None)
                or ts.has_fair_tasks)


def write_outputs(results, json_path=None, csv_path=None, trace_path=None, gantt_path=None, out=None,
                  parquet_path=None, json_jobs=False, gantt_window=None):
    """Write the result files asked for, each atomically (an error leaves the old file or none).
    Schedulers that could not run (:class:`~rtsched.result.NotRun`) are listed in the JSON's
    ``not_run``; the other files hold the runs. When none ran, nothing is written."""
    out = out or sys.stdout  # looked up now: with an output to '-' the CLI points it at stderr
    not_run = [(r.scheduler, r.substrate, r.status, r.error) for r in results if not r.ok]
    results = [r for r in results if r.ok]
    if not results:
        return
    raws = [r.raw for r in results]
    if json_path:
        _core.write_results_json(raws, json_path, json_jobs, not_run)
        print(f"wrote {json_path}", file=out)
    if csv_path:
        if all(r.raw.jobs_held for r in results):
            _core.write_jobs_csv(raws, csv_path)
        # (else the runs streamed their records into it as they went)
        print(f"wrote {csv_path}", file=out)
    if parquet_path:
        if all(r.raw.jobs_held for r in results):
            _core.write_jobs_parquet(raws, parquet_path)
        # (else the runs streamed their records into it as they went)
        for i, r in enumerate(results):
            r._jobs_file = (parquet_path, i)
        print(f"wrote {parquet_path}", file=out)
    if trace_path:
        _core.write_trace(raws, trace_path)
        print(f"wrote {trace_path} (open in https://ui.perfetto.dev)", file=out)
    if gantt_path and results:
        from ..gantt import gantt

        try:
            gantt(results, path=gantt_path, window=gantt_window)
        except InputError as e:
            raise InputError(f"--gantt {gantt_path}: {e}") from None
        print(f"wrote {gantt_path}", file=out)


def run_options(ts, args):
    """``ts`` with the command's --duration, --seed and --on-miss applied (what each run gets)."""
    return ts.with_run(duration_ns=None if args.duration is None else duration_ns(args.duration),
                       seed=getattr(args, "seed", None), on_miss=getattr(args, "on_miss", None))
