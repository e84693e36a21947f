"""rtsched run FILE --backend B — run a task set for real on Linux (same results schema)."""

from __future__ import annotations

from .. import _core
from .._core import InputError, RunFailed
from ..chains import chains_table, write_chains_csv
from ..checks import warn
from ..cli import seed
from ..durations import in_unit
from ..report import table
from ..result import REAL_RUN_ROW_GROUP, NotRun, chains_csv_file, csv_file, exit_status, parquet_file
from ..result import run as real_run
from ..tables import output_width
from .common import (
    add_output_arguments,
    add_table_arguments,
    check_duration,
    check_job_limit,
    check_work,
    gantt_window,
    keeps_jobs,
    output_paths,
    print_summaries,
    probe_schedulers,
    run_options,
    write_outputs,
)


def register(sub):
    backends = "; ".join(f"{n}: {d}" for n, d in _core.backends())
    p = sub.add_parser(
        "run",
        help="run a task set for real on Linux: kernel baselines or rtsched policies on real cores",
        description="Run FILE for real on this machine and report the same results schema as 'rtsched simulate'. "
                    "Needs root or CAP_SYS_NICE. A backend that cannot run the set gets a row with its status and the "
                    "others run: exit 0 when all ran, 2 when some could not because of the input (a deadlock too, as in "
                    "'rtsched simulate'), 1 when a run failed on the machine (docs/outputs.md). Backends: " + backends,
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("-b", "--backend", dest="backends", action="extend", nargs="+", metavar="B", required=True,
                   help="kernel:deadline[:reclaim], kernel:fifo[:rm|:dm|:file], kernel:other, kernel:linux[:reclaim] (each task under its own policy from the file, docs/linux-classes.md), each with an optional :pi (mutexes with priority inheritance; kernel:fifo also :pcp, the immediate priority ceiling; the file's locking chooses itself: pip, pcp, and on a partitioned kernel:fifo msrp and mrsp spin locks, docs/locking.md), testbed:POLICY (e.g. testbed:gedf); "
                        "on a kernel with sched_ext, rtsched's own scheduler: kernel:scx-gedf[:linear], kernel:scx-pedf[:HEURISTIC], kernel:scx:POLICY (docs/kernel.md)")
    p.add_argument("--duration", metavar="D", help="counted window (a real run is limited to 600 s)")
    p.add_argument("--seed", type=seed, metavar="N")
    p.add_argument("--on-miss", choices=["continue", "abort"])
    p.add_argument("--model", choices=["stw", "concurrent"], default="stw",
                   help="testbed global model: stw = stop-the-world (one decider), concurrent = application-concurrent (each CPU decides under a lock)")
    p.add_argument("--allow-overload", action="store_true", help="run even if total utilisation exceeds the CPUs")
    add_table_arguments(p)
    add_output_arguments(p)
    p.add_argument("--chains-csv", metavar="OUT",
                   help="write one row per chain instance, from the run's real timestamps, as CSV: scheduler, chain, "
                        "instance, start_ns, end_ns, latency_ns, data_age_ns, reaction_time_ns (docs/chains.md)")
    p.add_argument("--trace", metavar="OUT")
    p.add_argument("--gantt", metavar="OUT.png", help="draw a Gantt chart of the run (PNG or SVG)")
    p.add_argument("--gantt-window", metavar="START:END",
                   help="with --gantt: the time the chart shows, in ms or with units (0:40, 1s:1.2s; either end may be "
                        "left out); default: four periods of the longest-period task, at most forty of the shortest-period one")
    p.set_defaults(func=run)


def measurement_table(results, width=None) -> str:
    """The real runs' own measurements (µs), fitted to `width`."""
    # (The policy's own time per decision, policy_ns_per_invocation, is a column of the
    # comparison table.)
    keys = ["decision_overhead", "preemption_latency", "release_jitter", "start_delay"]
    rows = []
    for r in results:
        m = r.measurements
        for k in keys:
            if f"{k}.median_ns" in m:
                rows.append([r.scheduler, k.replace("_", " "), in_unit(m[k + '.median_ns'], "us", 1), in_unit(m[k + '.p99_ns'], "us", 1),
                             in_unit(m[k + '.max_ns'], "us", 1), str(int(m[k + '.count']))])
    steal = [f"{r.scheduler} {r.measurements['host.steal_ms']:.0f} ms" for r in results if r.measurements.get("host.steal_ms")]
    note = ("\nCPU time the hypervisor took during the run (host steal): " + ", ".join(steal)) if steal else ""
    if not rows:
        return note.strip()
    return table(["run", "measurement", "median us", "p99 us", "max us", "n"], rows, ["<", "<", ">", ">", ">", ">"], width,
                 ranks=[0, 0, 1, 0, 0, 2]) + note


def run(args):
    ts = _core.load_taskset(args.file)
    check_duration(args)
    output_paths(args, inputs=(args.file,), chains_csv=args.chains_csv)
    gantt_window(args)  # checked before the run: a bad window costs no real run
    # Records are held only for an output that reads them after the run; otherwise they are
    # folded into the summaries (and written to --jobs-parquet) as each job ends, so a long
    # run's memory does not grow with its jobs.
    held = keeps_jobs(args, ts)
    check_job_limit(ts, args, runs=len(args.backends), held=held)
    probe_schedulers(ts, args.backends, what="backend")
    check_work(ts, args, [b[len("testbed:"):] for b in args.backends if b.startswith("testbed:")])
    run_ts = run_options(ts, args)
    warn(run_ts, args.backends)
    results = []
    # --chains-csv streams as the runs go unless they hold their records anyway (a trace).
    with parquet_file(args.jobs_parquet if not held else None, REAL_RUN_ROW_GROUP) as jobs_file, \
            csv_file(args.jobs_csv if not held else None) as jobs_csv, \
            chains_csv_file(args.chains_csv if not held else None) as chains_csv:
        for b in args.backends:
            try:
                results.append(real_run(ts, b, duration=args.duration, seed=args.seed, on_miss=args.on_miss,
                                        max_jobs=args.max_jobs, max_work=args.max_work, allow_overload=args.allow_overload,
                                        model=args.model, trace=bool(args.trace or args.gantt), keep_jobs=held,
                                        _into=jobs_file, _csv=jobs_csv, _chains_csv=chains_csv, _warn=False))
            except (InputError, RunFailed) as e:
                # A backend that could not run this set (or failed on the machine): its row
                # says why, and the other backends run.
                row = NotRun.of(b, b.split(":")[0], e)
                if row is None:
                    raise
                results.append(row)
    print(f"{ts.source}: {len(ts.task_names)} tasks on {ts.cpus} CPUs, U = {ts.utilization:.3f}; "
          f"real run of {in_unit(run_ts.duration_ns)} ms")
    print_summaries(results, args)
    ran = [r for r in results if r.ok]
    if ts.chain_names:
        print()
        print(chains_table(ran))
    if args.chains_csv:
        if held:
            write_chains_csv(ran, args.chains_csv)
        # (else the runs streamed their chain records into it as they went)
        print(f"wrote {args.chains_csv}")
    mt = measurement_table(ran, output_width())
    if mt:
        print()
        print(mt)
    write_outputs(results, args.json, args.jobs_csv, args.trace, args.gantt, parquet_path=args.jobs_parquet,
                  json_jobs=args.json_jobs, gantt_window=args.gantt_window)
    return exit_status(results)
