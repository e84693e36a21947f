"""rtsched simulate FILE — simulate a task set under one or more schedulers and compare."""

from __future__ import annotations

from .. import _core
from ..balance_metrics import is_mixed, mixed_tables, utilisation_plot
from ..chains import chains_table, write_chains_csv
from ..checks import warn
from ..cli import seed
from ..durations import in_unit
from ..policies import partitioned
from ..report import per_task_table
from ..result import (
    chains_csv_file,
    csv_file,
    exit_status,
    parquet_file,
)
from ..tables import output_width
from .common import (
    add_output_arguments,
    add_table_arguments,
    check_duration,
    check_job_limit,
    check_work,
    expand_schedulers,
    gantt_window,
    keeps_jobs,
    output_paths,
    print_summaries,
    probe_schedulers,
    run_all,
    run_options,
    write_outputs,
)


def register(sub):
    p = sub.add_parser(
        "simulate",
        help="simulate a task set under one or more schedulers and print a comparison table",
        description="Simulate FILE under each scheduler (deterministic: same file and seed give byte-identical outputs). "
                    "A scheduler that cannot run the set (its partitioner places no partition, a deadlock it does not "
                    "resolve, a set it refuses) gets a row with its status, its reason on stderr, and the others run; "
                    "exit 0 when all ran, 2 when some could not (docs/outputs.md).",
    )
    p.add_argument("file", metavar="FILE", help="task-set file (YAML or JSON)")
    p.add_argument("-s", "--scheduler", dest="schedulers", action="extend", nargs="+", metavar="NAME",
                   help="scheduler(s), e.g. gedf pedf gfp:rm ('all' = every one that applies; default gedf; see 'rtsched schedulers')")
    p.add_argument("--duration", metavar="D", help="counted window: jobs released in [0, D) (overrides the file's run.duration)")
    p.add_argument("--seed", type=seed, metavar="N", help="seed of the execution-time and arrival models (overrides the file)")
    p.add_argument("--on-miss", choices=["continue", "abort"], help="what happens to a job at a missed deadline")
    add_table_arguments(p)
    add_output_arguments(p)
    p.add_argument("--trace", metavar="OUT", help="write a Chrome/Perfetto trace (open in ui.perfetto.dev)")
    p.add_argument("--gantt", metavar="OUT.png", help="draw a Gantt chart (PNG or SVG)")
    p.add_argument("--gantt-window", metavar="START:END",
                   help="with --gantt: the time the chart shows, in ms or with units (0:40, 1s:1.2s; either end may be "
                        "left out); default: four periods of the longest-period task, at most forty of the shortest-period one")
    p.add_argument("--partition", metavar="NAME",
                   help=f"partition with this heuristic (ffd, wfd, bfd, nfd, bf, lwfg, chains like lwfg+ffd) instead of the file's "
                        f"cpu fields, for every partitioned scheduler given that names none itself ({', '.join(partitioned())})")
    p.add_argument("--per-task", action="store_true", help="also print per-task summaries")
    p.add_argument("--chains-csv", metavar="OUT",
                   help="write one row per chain instance as CSV: scheduler, chain, instance, start_ns, end_ns, "
                        "latency_ns, data_age_ns, reaction_time_ns (docs/chains.md)")
    p.add_argument("--util-plot", metavar="OUT.png",
                   help="with best-effort tasks (scheduler cfs): plot per-CPU utilisation over time, one file per scheduler (OUT-SCHED.png)")
    p.add_argument("--measure-policy", action="store_true",
                   help="time every decision of the policy (wall clock) and print the mean in ns per decision "
                        "('policy ns/decision'); kept in the JSON's measurements (policy_ns_per_invocation, "
                        "policy_ns_max, policy_ns_total). Timings vary from run to run; the schedule does not")
    p.set_defaults(func=run)


def run(args):
    ts = _core.load_taskset(args.file)
    check_duration(args)  # early, with the user's spelling in the message
    output_paths(args, inputs=(args.file,), util_plot=args.util_plot, chains_csv=args.chains_csv)
    gantt_window(args)  # checked before the run
    held = keeps_jobs(args, ts)
    check_job_limit(ts, args, runs=max(1, len(args.schedulers or [])), held=held)
    names, skipped = expand_schedulers(args.schedulers, ts, args.partition)
    probe_schedulers(ts, names)
    check_work(ts, args, names)
    trace = bool(args.trace or args.gantt or args.util_plot)
    run_ts = run_options(ts, args)
    warn(run_ts, names)
    # --chains-csv streams as the runs go unless they hold their records anyway (a trace).
    with parquet_file(args.jobs_parquet if not held else None) as jobs_file, \
            csv_file(args.jobs_csv if not held else None) as jobs_csv, \
            chains_csv_file(args.chains_csv if not held else None) as chains_csv:
        results = run_all(ts, names, seed=args.seed, duration=args.duration, on_miss=args.on_miss, trace=trace, max_jobs=args.max_jobs,
                          measure_policy=args.measure_policy, keep_jobs=held, jobs_file=jobs_file, max_work=args.max_work,
                          csv=jobs_csv, chains_csv=chains_csv)
    print(f"{ts.source}: {len(ts.task_names)} tasks on {ts.cpus} CPUs, U = {ts.utilization:.3f}; "
          f"counted window {in_unit(run_ts.duration_ns)} ms, seed {run_ts.seed}")
    print_summaries(results, args)
    for name, why in skipped:
        print(f"(skipped {name}: {why})")
    ran = [r for r in results if r.ok]
    if any(is_mixed(r) for r in ran):
        # Best-effort tasks beside real-time ones (opzone paper §4): latency, balancing, shares.
        print()
        print(mixed_tables(results, output_width()))
        if args.util_plot:
            import os

            base, ext = os.path.splitext(args.util_plot)
            for r in ran:
                tag = r.scheduler.replace(":", "-").replace(",", "-").replace("=", "")
                out = utilisation_plot(r, f"{base}-{tag}{ext or '.png'}")
                print(f"wrote {out[0]}")
    if args.per_task:
        for r in ran:
            print(f"\n{r.scheduler}:")
            print(per_task_table(r, output_width()))
    if ts.chain_names:
        print()
        print(chains_table(ran))
    if args.chains_csv:
        if held:
            write_chains_csv(ran, args.chains_csv)
        # (else the runs streamed their chain records into it as they went)
        print(f"wrote {args.chains_csv}")
    write_outputs(results, args.json, args.jobs_csv, args.trace, args.gantt, parquet_path=args.jobs_parquet,
                  json_jobs=args.json_jobs, gantt_window=args.gantt_window)
    return exit_status(results)
