"""rtsched analyze FILE [--overheads PROFILE] — every applicable schedulability test's verdict,
plain and, with overheads (a profile, or the task file's `run.overheads`), overhead-aware side
by side with the inflated WCETs (docs/overheads.md, "Overhead-aware analysis")."""

from __future__ import annotations

from .. import _core
from ..analysis import analyze, overhead_analysis
from ..report import table

WORD = {True: "schedulable", False: "NOT schedulable", None: "inconclusive"}


def register(sub):
    p = sub.add_parser("analyze", help="run every applicable schedulability test on a task set",
                       description="Uniprocessor EDF (QPA), density, FP response-time analysis, Liu-Layland and hyperbolic bounds, "
                                   "and global EDF tests (GFB as quoted by PAWS, BCL); per-CPU tests when every task has a cpu. "
                                   "With overheads (--overheads, or the task file's run.overheads) each test also runs on the WCETs "
                                   "inflated by them, shown beside the plain verdict.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--overheads", metavar="PROFILE",
                   help="an overhead profile (rtsched.overheads/1, as `rtsched calibrate` writes): charge its costs")
    p.add_argument("--statistic", choices=["median", "p99"], default=None,
                   help="which of the profile's statistics to charge (default p99, the safer bound)")
    p.set_defaults(func=run)


def _us(ns) -> str:
    return "-" if ns is None else f"{ns / 1e3:.3f}"


def run(args):
    ts = _core.load_taskset(args.file)
    if args.statistic and not args.overheads:
        from ..cli import UsageError

        raise UsageError("--statistic chooses a column of the --overheads profile; give --overheads too")
    statistic = args.statistic or "p99"
    oa = overhead_analysis(ts, args.overheads, statistic)  # a bad profile fails before any output
    print(f"{ts.source}: {len(ts.task_names)} tasks on {ts.cpus} CPUs, U = {ts.utilization:.3f}")
    if oa is None:
        verdicts = analyze(ts)
        rows = [[v["test"], WORD[v["schedulable"]], v["detail"]] for v in verdicts]
        print(table(["test", "verdict", "detail"], rows, ["<", "<", "<"]))
        return 0
    source = "" if args.overheads else " (the task file's run.overheads)"
    print(f"overheads{source}: {oa['overheads']}")
    if oa["tasks"]:
        glob = ts.cpus > 1
        head = ["task", "C us", "D us", "T us", "C'' us", "D' us", "dispatches"] + (["C'' global us", "dispatches global"] if glob else [])
        rows = []
        for t in oa["tasks"]:
            row = [t["name"], _us(t["wcet_ns"]), _us(t["deadline_ns"]), _us(t["period_ns"]), _us(t["wcet_partitioned_ns"]),
                   _us(t["deadline_inflated_ns"]), str(t["dispatches_partitioned"])]
            if glob:
                row += [_us(t["wcet_global_ns"]), str(t["dispatches_global"])]
            rows.append(row)
        label = "one CPU" if not glob else "per CPU (partitioned); global: under global EDF"
        print(f"inflated WCETs ({label}):")
        print(table(head, rows, ["<"] + [">"] * (len(head) - 1)))
    verdicts = analyze(ts, args.overheads, statistic)
    rows = [[v["test"], "-" if v["detail"] == "-" else WORD[v["schedulable"]], WORD[v["with_overheads"]], v["detail"], v["overhead_detail"]]
            for v in verdicts]
    print(table(["test", "plain", "with overheads", "detail (plain)", "detail (with overheads)"], rows, ["<"] * 5))
    return 0
