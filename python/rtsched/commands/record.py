"""rtsched record — a running application (or a trace-cmd .dat file) into a task set."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import textwrap

from .._core import InputError
from .._io import resolve_output, write_text_atomic
from ..durations import in_unit
from ..report import table
from ..tables import output_width

#: The first bytes of a trace-cmd .dat file.
DAT_MAGIC = b"\x17\x08\x44tracing"


def register(sub):
    p = sub.add_parser(
        "record", help="record a running application's threads into a task set (scheduler tracepoints)",
        description="Run CMD under the kernel's scheduler tracepoints (tracefs, as root) or read a trace-cmd .dat file "
                    "(--from), and turn each thread that wakes repeatedly into a periodic or sporadic task. Prints how "
                    "well each thread fit; writes the task set (YAML) and the measured activations (CSV).",
        epilog="example: rtsched record -o app.yaml --duration 3s -- rt-app app.json")
    p.add_argument("-o", "--output", required=True, metavar="OUT.yaml", help="the task set to write")
    p.add_argument("--duration", metavar="D", help="stop recording after D (default: when CMD exits)")
    p.add_argument("--settle", metavar="auto|D", default="auto",
                   help="when the recording (and --duration) starts: 'auto' (default) when CMD's first thread other than "
                        "its own first wakes (rt-app's threads start after ~4 s of calibration; a command that starts "
                        "no thread within 30 s is recorded from its start), or D after CMD starts (0: at once)")
    p.add_argument("--from", dest="from_file", metavar="FILE.dat",
                   help="read a trace-cmd .dat file (through 'trace-cmd report') or the text of a trace instead of running CMD")
    p.add_argument("--percentile", type=float, default=99.0, metavar="P",
                   help="WCET = the P-th percentile (nearest rank) of per-activation CPU time (default 99; 100 = the maximum)")
    p.add_argument("--tolerance", type=float, default=10.0, metavar="PCT",
                   help="a thread is periodic when 90%% of its inter-activation times are within ±PCT%% of their median (default 10)")
    p.add_argument("--min-activations", type=int, default=3, metavar="N", help="threads with fewer activations are not tasks (default 3)")
    p.add_argument("--pid", type=int, action="append", metavar="PID",
                   help="with --from: the threads of this process tree only (repeatable; default: every thread)")
    p.add_argument("--comm", metavar="REGEX", help="only threads whose name matches REGEX")
    p.add_argument("--all-threads", action="store_true",
                   help="make tasks of SCHED_OTHER threads too when others are SCHED_FIFO/RR (then no priorities are written)")
    p.add_argument("--cpus", type=int, metavar="N", help="platform.cpus of the task set (default: this machine's, or the trace's)")
    p.add_argument("--times", metavar="FILE.csv",
                   help="where to write the measured activations (default: OUT with .activations.csv)")
    p.add_argument("--replay", action="store_true",
                   help="write each task's measured CPU time per activation (execution_times) into the task set, so a simulation or real run replays them in turn instead of the run's execution model")
    p.add_argument("--buffer-kb", type=int, default=8192, metavar="KB", help="trace buffer per CPU (default 8192)")
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD [ARGS...]", help="the command to run and record")
    p.set_defaults(func=run)


def _times_path(out: str) -> str:
    root, ext = os.path.splitext(out)
    return (root if ext in (".yaml", ".yml", ".json") else out) + ".activations.csv"


def run(args):
    from .. import record as rec
    from ..cli import UsageError

    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not 0 < args.percentile <= 100:
        raise UsageError(f"--percentile: must be in (0, 100], got {args.percentile:g}")
    if not 0 <= args.tolerance < 100:
        raise UsageError(f"--tolerance: must be in [0, 100), got {args.tolerance:g}")
    if args.min_activations < 2:
        raise UsageError(f"--min-activations: must be at least 2, got {args.min_activations}")
    if args.cpus is not None and not 1 <= args.cpus <= 65536:
        raise UsageError(f"--cpus: must be 1 to 65536, got {args.cpus}")
    if args.buffer_kb < 64:
        raise UsageError(f"--buffer-kb: must be at least 64, got {args.buffer_kb}")
    if args.from_file and cmd:
        raise UsageError("give either --from FILE or a command to run (after --), not both")
    if not args.from_file and not cmd:
        raise UsageError("nothing to record: give a command after '--' (rtsched record -o OUT.yaml -- CMD ...) or --from FILE.dat")
    if args.pid and not args.from_file:
        raise UsageError("--pid selects threads of a --from trace; a recorded command's own process tree is always used")
    if args.output == "-":
        raise UsageError("-o: record writes a file (its activations go beside it), not standard output")
    times = args.times or _times_path(args.output)
    inputs = (args.from_file,) if args.from_file else ()
    resolve_output(args.output, inputs)  # refuse a bad output before recording
    resolve_output(times, inputs)
    if os.path.abspath(times) == os.path.abspath(args.output):
        raise UsageError(f"--times: {times} is the task-set output too")
    if args.comm is not None:
        import re

        try:
            re.compile(args.comm)
        except re.error as e:
            raise UsageError(f"--comm: not a regular expression: {e}") from None

    p = args.percentile
    if args.from_file:
        path = args.from_file
        if args.settle != "auto":
            raise UsageError("--settle applies to a command recorded here, not to a --from trace")
        if os.path.isdir(path):
            raise InputError(f"{path}: is a directory, not a trace")
        with open(path, "rb") as f:
            magic = f.read(len(DAT_MAGIC))
        text = rec.report_dat(path) if magic == DAT_MAGIC else _read_text(path)
        tr = rec.parse_trace(text)
        if not tr.events:
            raise InputError(f"{path}: no sched_switch/sched_wakeup/sched_process_fork/exit events in it "
                             "(record with: trace-cmd record -e sched:sched_switch -e sched:sched_wakeup "
                             "-e sched:sched_wakeup_new -e sched:sched_process_fork -e sched:sched_process_exit)")
        roots, lost = args.pid, tr.lost
        span = tr.events[-1].ts - tr.events[0].ts
        cpus = args.cpus or tr.cpus or (max(e.cpu for e in tr.events) + 1)
        what = f"rtsched record --from {path}"
    else:
        from ..result import duration_ns

        d = duration_ns(args.duration) if args.duration is not None else None
        if d is not None and d <= 0:
            raise UsageError(f"--duration: must be more than 0, got {args.duration}")
        try:
            settle = None if args.settle == "auto" else duration_ns(args.settle)
        except (InputError, ValueError) as e:
            raise UsageError(f"--settle: expected 'auto' or a duration such as 2s, got {args.settle!r} ({e})") from None
        if settle is not None and settle < 0:
            raise UsageError(f"--settle: must be 0 or more, got {args.settle}")
        r = rec.record_live(cmd, d, args.buffer_kb, log=lambda m: print(m, file=sys.stderr), settle_ns=settle)
        tr, roots, lost, span = r.trace, [r.root], r.lost, r.elapsed
        cpus = args.cpus or os.cpu_count() or 1
        how = "stopped at --duration" if r.exit_status is None else f"exited with status {r.exit_status}"
        what = f"rtsched record -- {shlex.join(cmd)}  ({in_unit(span, 's', 2)} s; the command {how})"
        print(f"recorded {r.total} events, {len(tr.events)} of pid {r.root}'s process tree, in {in_unit(span, 's', 2)} s "
              f"from {in_unit(r.settled, 's', 2)} s after its start ({r.settle_how}); the command {how}")
    if tr.unparsed:
        print(f"rtsched record: warning: {tr.unparsed} trace records did not parse and were skipped", file=sys.stderr)
    if lost:
        print(f"rtsched record: warning: {lost} events were lost (trace buffer overrun): activations around them are wrong; "
              "a larger --buffer-kb helps", file=sys.stderr)
    fits = rec.extract(tr.events, roots, p, args.tolerance / 100, args.min_activations, args.comm, args.all_threads)
    missing = sum(f.inferred for f in fits if f.kind)
    if missing:
        print(f"note: {missing} run intervals had no recorded switch-in (the kernel dropped it); they are counted from the "
              "thread's wakeup or its previous switch-out", file=sys.stderr)
    for w in rec.warnings(fits):
        print(f"rtsched record: warning: {w}", file=sys.stderr)
    head, rows = rec.fit_table(fits, p)
    width = output_width()
    legend = ("times in us; jitter = p95 of |inter-activation - median|; in ±tol = share of inter-activation times within "
              f"±{args.tolerance:g}% of the median")
    print(textwrap.fill(legend, width, break_long_words=False, break_on_hyphens=False) if width else legend)
    # Folded or left out to fit the terminal: the task set written keeps every number.
    print(table(head, rows, ["<", ">", "<", ">", "<", ">", ">", ">", ">", ">", ">", ">", ">", ">", "<"], width,
                fold=("note",), ranks=[0, 2, 2, 3, 1, 1, 0, 3, 2, 3, 3, 1, 0, 2, 1],
                hint=f"{args.output} holds the fit of each task"))
    header = what + (f"\nwarning: {lost} events were lost during the recording" if lost else "")
    text = rec.taskset_yaml(fits, cpus, span, header, p, times_file=os.path.basename(times), replay=args.replay)
    import rtsched

    rtsched.parse_taskset(text, "yaml", args.output)  # what is written loads
    write_text_atomic(times, rec.times_csv(fits), inputs=inputs)
    write_text_atomic(args.output, text, inputs=inputs)
    n = sum(1 for f in fits if f.kind)
    print(f"wrote {args.output}: {n} task{'s' if n != 1 else ''} on {cpus} CPUs; activations in {times}", file=sys.stderr)
    return 0


def _read_text(path) -> str:
    from .._io import read_input_bytes

    return read_input_bytes(path, 1 << 31, "a trace").decode("utf-8", "replace")
