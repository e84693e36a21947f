"""rtsched demo — the main job: simulate the bundled example task sets under every scheduler,
print the comparison tables, and write Gantt charts, Perfetto traces, JSON and CSV to out/."""

from __future__ import annotations

import glob
import os
import sys

from .. import _core
from ..checks import set_warnings
from ..durations import in_unit
from ..report import comparison_table, not_run_lines
from ..tables import output_width
from .common import expand_schedulers, run_all, write_outputs


def register(sub):
    p = sub.add_parser("demo", help="simulate the bundled examples under every scheduler; write charts and traces to out/",
                       description="Simulate every task-set file in the examples folder (*.yaml, *.json) under every "
                                   "scheduler that builds for it, print one comparison table per file, and write per file "
                                   "under --out: a Gantt chart (NAME-gantt.png), a Perfetto trace (NAME.trace.json), the "
                                   "results document (NAME.json) and per-job records (NAME-jobs.csv). Run it from the "
                                   "repository root, or pass --examples.")
    p.add_argument("--examples", default="examples", metavar="DIR", help="folder of task-set files (default: examples)")
    p.add_argument("--out", default="out", metavar="DIR", help="output folder (default: out)")
    p.set_defaults(func=run)


def run(args):
    files = sorted(glob.glob(os.path.join(args.examples, "*.yaml")) + glob.glob(os.path.join(args.examples, "*.json")))
    if not files:
        raise _core.InputError(f"{args.examples}: no task-set files (*.yaml, *.json) found; run from the repository root or pass --examples DIR")
    for f in files:
        ts = _core.load_taskset(f)
        for w in set_warnings(ts):  # as simulate says them: on stderr, before the set's table
            print(f"warning: {w}", file=sys.stderr)
        names, skipped = expand_schedulers(["all"], ts)
        results = run_all(ts, names, trace=True)
        stem = os.path.splitext(os.path.basename(f))[0]
        print(f"\n== {f}: {len(ts.task_names)} tasks on {ts.cpus} CPUs, U = {ts.utilization:.3f}, "
              f"{in_unit(ts.duration_ns)} ms simulated")
        print(comparison_table(results, output_width()))
        for line in not_run_lines(results):
            print(line, file=sys.stderr)
        for name, why in skipped:
            print(f"(skipped {name}: {why})")
        base = os.path.join(args.out, stem)
        write_outputs(results, json_path=base + ".json", csv_path=base + "-jobs.csv", trace_path=base + ".trace.json", gantt_path=base + "-gantt.png")
    return 0
