"""rtsched validate FILE... — check task-set files, summarise them, and warn on loads no
scheduler can meet."""

from __future__ import annotations

import sys

from .. import _core
from ..checks import set_warnings
from ..durations import in_unit


def register(sub):
    p = sub.add_parser(
        "validate", help="check task-set files and warn on impossible loads (exit 2 on the first bad one)",
        description="Check task-set files (docs/taskset-format.md): every field, unit and limit. For each good file print "
                    "one line (tasks, CPUs, U, duration, seed) and what else it models. A bad file ends the run with "
                    "exit 2 and one message naming the file, the task and the field. Loads that are legal but that no "
                    "scheduler can meet are warned about on stderr (exit 0): U > m, a task with C > D or C > T, "
                    "likely mixed units such as 'period: 1000us, wcet: 200' (a number without a unit is ms), a "
                    "run.duration that counts fewer than two jobs of some task, and a set with Linux policies that "
                    "the linux scheduler refuses (deadline reservations above admission's limit, say).")
    p.add_argument("files", nargs="+", metavar="FILE", help="task-set files, YAML or JSON (.json is read as JSON)")
    p.set_defaults(func=run)


def run(args):
    for f in args.files:
        ts = _core.load_taskset(f)
        for w in set_warnings(ts):
            print(f"warning: {w}", file=sys.stderr)
        if ts.has_policies:
            # The policies are written for the class stack: say now what `simulate -s linux` would
            # refuse (admission's EBUSY, sched_setattr's EINVAL), as kernel:linux does on such CPUs.
            why = _core.refusal(ts, "linux")
            if why:
                print(f"warning: the linux scheduler, for which its policies are written, refuses it (so would kernel:linux on "
                      f"CPUs like its platform's): {why}", file=sys.stderr)
        print(f"{f}: ok — {len(ts.task_names)} tasks on {ts.cpus} CPUs, U = {ts.utilization:.3f}, "
              f"duration {in_unit(ts.duration_ns)} ms, seed {ts.seed}, on_miss {ts.on_miss}")
        if ts.topology:
            print(f"  topology: {ts.topology}")
        if ts.overheads:
            print(f"  overheads: {ts.overheads}")
        if ts.cache:
            print(f"  cache model: {ts.cache}")
        tasks = ts.tasks()
        parallel = [t for t in tasks if any(len(r) > 1 for r in t["regions"])]
        if parallel:
            widest = max(max(len(r) for r in t["regions"]) for t in parallel)
            print(f"  {len(parallel)} parallel task(s) (fork-join regions, up to {widest} threads per region)")
        dags = [t for t in tasks if t.get("dag")]
        if dags:
            most = max(len(t["dag"]["nodes"]) for t in dags)
            print(f"  {len(dags)} DAG task(s) (up to {most} nodes; docs/dag.md)")
        with_cs = [t for t in tasks if t["sections"]]
        if with_cs:
            print(f"  {len(with_cs)} task(s) with critical sections on {len(ts.resources)} resource(s): "
                  + ", ".join(ts.resources))
        if ts.lock_order_cycle:
            print(f"  {ts.lock_order_cycle}: a scheduler that does not resolve deadlocks stops the run with an error if one happens")
        if ts.has_tufs:
            print("  time-utility functions: the utility-accrual schedulers decide by them; every run measures the AUR")
    return 0
