"""rtsched validate FILE... — check task-set files and summarise them."""

from __future__ import annotations

from .. import _core


def register(sub):
    p = sub.add_parser("validate", help="check task-set files (exit 2 on the first bad one)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(func=run)


def run(args):
    for f in args.files:
        ts = _core.load_taskset(f)
        print(f"{f}: ok — {len(ts.task_names)} tasks on {ts.cpus} CPUs, U = {ts.utilization:.3f}, "
              f"duration {ts.duration_ns / 1e6:g} ms, seed {ts.seed}, on_miss {ts.on_miss}")
    return 0
