"""rtsched analyze FILE — every applicable schedulability test's verdict."""

from __future__ import annotations

from .. import _core
from ..analysis import analyze
from ..report import table


def register(sub):
    p = sub.add_parser("analyze", help="run every applicable schedulability test on a task set",
                       description="Uniprocessor EDF (QPA), density, FP response-time analysis, Liu-Layland and hyperbolic bounds, "
                                   "and global EDF tests (GFB as quoted by PAWS, BCL); per-CPU tests when every task has a cpu.")
    p.add_argument("file", metavar="FILE")
    p.set_defaults(func=run)


def run(args):
    ts = _core.load_taskset(args.file)
    verdicts = analyze(ts)
    word = {True: "schedulable", False: "NOT schedulable", None: "inconclusive"}
    rows = [[v["test"], word[v["schedulable"]], v["detail"]] for v in verdicts]
    print(f"{ts.source}: {len(ts.task_names)} tasks on {ts.cpus} CPUs, U = {ts.utilization:.3f}")
    print(table(["test", "verdict", "detail"], rows, ["<", "<", "<"]))
    return 0
