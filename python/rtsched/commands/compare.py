"""rtsched compare FILE --policy P — the same task set in the simulator and on real cores."""

from __future__ import annotations

import sys

from .. import _core
from .._core import InputError, RunFailed
from ..chains import chains_side_by_side
from ..checks import warn
from ..cli import printable, seed
from ..durations import in_unit
from ..report import comparison_table, not_run_lines, table
from ..result import NotRun, exit_status, simulate
from ..result import run as real_run
from ..tables import output_width
from .common import (
    add_output_arguments,
    check_duration,
    check_job_limit,
    check_work,
    output_paths,
    probe_schedulers,
    run_options,
    write_outputs,
)
from .run import measurement_table


def register(sub):
    p = sub.add_parser("compare", help="run a policy in the simulator and on the testbed and print them side by side",
                       description="Simulate FILE under POLICY and run it on real cores (testbed:POLICY): "
                                   "how far is the model from the machine? A set with chains also gets each chain's latency (data age for a "
                                   "data-flow chain), max/mean/p99, simulated and real (docs/chains.md). Needs root or CAP_SYS_NICE. If one of the "
                                   "two cannot run the set, each gets a row with its status; exit codes as 'rtsched run'.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("-p", "--policy", default="gedf", metavar="P", help="an rtsched policy (default gedf)")
    p.add_argument("--duration", metavar="D")
    p.add_argument("--seed", type=seed, metavar="N")
    p.add_argument("--model", choices=["stw", "concurrent"], default="stw")
    p.add_argument("--allow-overload", action="store_true")
    add_output_arguments(p)
    p.add_argument("--trace", metavar="OUT")
    p.set_defaults(func=run)


def _ms(x):
    return in_unit(x, "ms", 3)


def side_by_side(sim, real, width=None) -> str:
    """The two runs' summaries side by side, and the response-time gap per task, fitted to `width`."""
    rows = []
    s, r = sim.summary, real.summary
    na = lambda f: lambda v: "not measured" if v is None else f(v)  # noqa: E731 - kernel runs have no ledger
    ratio = lambda v: f"{v:.4f}"  # noqa: E731
    for key, label, fmt in [("jobs", "jobs", str), ("missed", "missed", str), ("aborted", "aborted", str), ("dsr", "DSR", ratio),
                            ("aur", "AUR", ratio), ("accrued_utility", "accrued utility", lambda v: f"{v:g}"),
                            ("possible_utility", "possible utility", lambda v: f"{v:g}"),
                            ("mean_response_ns", "mean response ms", _ms), ("p99_response_ns", "p99 response ms", _ms),
                            ("max_response_ns", "max response ms", _ms), ("max_tardiness_ns", "max tardiness ms", _ms),
                            ("preemptions", "preemptions", str), ("migrations", "migrations", str),
                            ("context_switches", "context switches", str)]:
        rows.append([label, fmt(s[key]), fmt(r[key])])
    if s.get("deadlocks") or r.get("deadlocks"):
        rows.append(["deadlocks resolved", str(s["deadlocks"]), na(str)(r["deadlocks"])])
    pn = [x.measurements.get("policy_ns_per_invocation") for x in (sim, real)]
    if any(v is not None for v in pn):
        rows.append(["policy ns/decision"] + ["-" if v is None else f"{v:.0f}" for v in pn])
    rows.append(["priority inversions", na(str)(s["priority_inversions"]), na(str)(r["priority_inversions"])])
    rows.append(["inversion ms", na(_ms)(s["priority_inversion_ns"]), na(_ms)(r["priority_inversion_ns"])])
    if s.get("steal_attempts") or r.get("steal_attempts"):
        for key, label in [("steals", "steals"), ("steal_attempts", "steal attempts"), ("failed_steals", "failed steals")]:
            rows.append([label, na(str)(s[key]), na(str)(r[key])])
    if s.get("total_blocked_ns") or r.get("total_blocked_ns"):
        rows.append(["max blocked ms", _ms(s.get("max_blocked_ns", 0)), _ms(r.get("max_blocked_ns", 0))])
        rows.append(["total blocked ms", _ms(s.get("total_blocked_ns", 0)), _ms(r.get("total_blocked_ns", 0))])
    # Per-task response-time gap: real minus simulated, on the jobs both completed.
    j = sim.jobs.merge(real.jobs, on=["task", "job"], suffixes=("_sim", "_real"))
    j = j.dropna(subset=["response_ns_sim", "response_ns_real"])
    out = table(["", "simulator", "testbed"], rows, ["<", ">", ">"], width)
    if len(j):
        gap = (j.response_ns_real - j.response_ns_sim).astype("float64")
        per = j.assign(gap=gap).groupby("task", sort=False).gap.agg(["mean", "max"])
        trows = [[t, in_unit(v['mean'], "us", 1), in_unit(v['max'], "us", 1)] for t, v in per.iterrows()]
        out += "\n\nresponse time, real minus simulated (same jobs):\n"
        out += table(["task", "mean us", "max us"], trows, ["<", ">", ">"], width)
        out += f"\nover {len(j)} jobs: mean {in_unit(gap.mean(), 'us', 1)} us, median {in_unit(gap.median(), 'us', 1)} us, max {in_unit(gap.max(), 'us', 1)} us"
    return out


def run(args):
    ts = _core.load_taskset(args.file)
    check_duration(args)
    output_paths(args, inputs=(args.file,))
    check_job_limit(ts, args, runs=2)
    probe_schedulers(ts, [args.policy])
    check_work(ts, args, [args.policy])
    run_ts = run_options(ts, args)
    warn(run_ts, [args.policy])
    # Timed like the testbed (which always measures its policy), so the two can be compared.
    # One that cannot run the set gets a row saying why; the other runs all the same.
    try:
        sim = simulate(ts, scheduler=args.policy, duration=args.duration, seed=args.seed, trace=bool(args.trace),
                       max_jobs=args.max_jobs, max_work=args.max_work, measure_policy=True, _warn=False)
    except InputError as e:
        sim = _not_run(args.policy, "sim", e)
    try:
        real = real_run(ts, "testbed:" + args.policy, duration=args.duration, seed=args.seed, max_jobs=args.max_jobs,
                        max_work=args.max_work, allow_overload=args.allow_overload, model=args.model, _warn=False)
    except (InputError, RunFailed) as e:
        real = _not_run("testbed:" + args.policy, "testbed", e)
    print(f"{ts.source}: {args.policy}, simulator vs testbed ({args.model}), {in_unit(run_ts.duration_ns)} ms")
    if sim.ok and real.ok:
        print(side_by_side(sim, real, output_width()))
        if ts.chain_names:
            print("\nchains, simulated vs real:")
            print(chains_side_by_side(sim, real))
    else:
        print(comparison_table([sim, real], output_width()))
        sys.stdout.flush()
        for line in not_run_lines([sim, real]):
            print(printable(line), file=sys.stderr)
    mt = measurement_table([real] if real.ok else [], output_width())
    if mt:
        print()
        print(mt)
    write_outputs([sim, real], args.json, args.jobs_csv, args.trace, None, parquet_path=args.jobs_parquet,
                  json_jobs=args.json_jobs)
    return exit_status([sim, real])


def _not_run(name, substrate, e):
    """The row of a run that raised `e`, or `e` raised again when it is the whole command's."""
    row = NotRun.of(name, substrate, e)
    if row is None:
        raise e
    return row
