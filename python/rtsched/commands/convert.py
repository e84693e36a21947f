"""rtsched convert IN -o OUT — task sets from rt-app JSON and SimSo XML, and to rt-app JSON."""

from __future__ import annotations

import sys

from .._io import write_text_atomic


def register(sub):
    p = sub.add_parser(
        "convert", help="convert rt-app JSON / SimSo XML to a task set, or a task set to rt-app JSON",
        description="Read IN (rtsched YAML/JSON, rt-app JSON or SimSo XML, told from the content) and write OUT: "
                    "rtsched YAML, or JSON if OUT ends in .json; with --to rt-app, an rt-app JSON file for the real "
                    "rt-app. What has no meaning in the other format is refused (exit 2) naming the task and the "
                    "event or field; approximations are printed as warnings. Mapping: docs/workloads.md.")
    p.add_argument("input", metavar="IN")
    p.add_argument("-o", "--output", metavar="OUT", required=True, help="the file to write ('-': standard output, YAML)")
    p.add_argument("--to", choices=["rtsched", "rt-app"], default="rtsched", help="output format (default: rtsched)")
    p.add_argument("--cpus", type=int, metavar="M", help="platform CPUs of a task set read from rt-app (default: this machine's, or more when the file's cpus name more)")
    p.add_argument("--backend", default=None, metavar="B",
                   help="with --to rt-app: the real policy, as 'rtsched run -b' names it: kernel:fifo (the file's "
                        "priorities if every task has one, else rate-monotonic), kernel:fifo:rm, kernel:fifo:dm, "
                        "kernel:fifo:file, kernel:deadline (SCHED_DEADLINE, runtime = WCET + max(250 us, 10%%)), or "
                        "kernel:linux (each task under its own 'policy': SCHED_DEADLINE with its runtime, "
                        "SCHED_FIFO/RR with its priority, SCHED_OTHER with its nice). Default: kernel:linux for a "
                        "set with policies (docs/linux-classes.md), else kernel:fifo")
    p.add_argument("--pi", action="store_true", help="with --to rt-app: mutexes with priority inheritance (pi_enabled)")
    p.add_argument("--work", choices=["run", "runtime"], default="run",
                   help="with --to rt-app: the rt-app event a job's work is written as: run (default; a loop count "
                        "rt-app calibrates once at its start: the same work when preempted, but its length moves "
                        "with the calibration, by tens of percent on a VM) or runtime (wall time: the length asked "
                        "for, but time spent preempted counts as done; exact for threads never preempted)")
    p.set_defaults(func=run)


def run(args):
    from ..cli import UsageError
    from ..convert import read, rtapp_text, rtsched_text

    if args.cpus is not None and args.cpus < 1:
        raise UsageError(f"--cpus: must be ≥ 1, got {args.cpus}")
    if args.to == "rtsched" and (args.backend is not None or args.pi or args.work != "run"):
        raise UsageError("--backend, --pi and --work apply to --to rt-app")

    def warn(msg):
        print(f"rtsched: warning: {msg}", file=sys.stderr)

    ts, kind, desc = read(args.input, cpus=args.cpus, warn=warn)
    if args.to == "rt-app":
        backend = args.backend or ("kernel:linux" if ts.has_policies else "kernel:fifo")
        text = rtapp_text(ts, backend, warn, pi=args.pi, work=args.work)
    else:
        fmt = "json" if args.output.endswith(".json") else "yaml"
        text = rtsched_text(ts, fmt, description=f"{desc}: {args.input}" if desc else None)
    write_text_atomic(args.output, text, inputs=(args.input,))
    if args.output != "-":
        print(f"wrote {args.output}: {len(ts.task_names)} tasks on {ts.cpus} CPUs, U = {ts.utilization:.3f} "
              f"(read as {'rt-app' if kind == 'rtapp' else 'SimSo' if kind == 'simso' else 'rtsched'})", file=sys.stderr)
    return 0
