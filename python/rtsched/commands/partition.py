"""rtsched partition FILE --heuristic NAME [--overheads PROFILE] — write the task set back with
`cpu` fields; admission charges overheads (a profile, or the task file's `run.overheads`)."""

from __future__ import annotations

import sys

from .. import _core
from .._io import write_text_atomic
from ..analysis import partition, to_yaml


def register(sub):
    p = sub.add_parser("partition", help="assign tasks to CPUs with a partitioning heuristic (ffd, wfd, bfd, nfd, bf, lwfg, chains)",
                       description="Partition FILE and write it back with cpu fields. Heuristics: ffd, wfd, bfd, nfd (decreasing "
                                   "utilisation), ffdd/wfdd/... (decreasing density), bf (Baruah-Fisher), lwfg (cache-aware, "
                                   "LWFG Algorithm 1), FIT:ORDER (e.g. best:wss), and fallback chains like lwfg+ffd+global. "
                                   "When the task file sets run.overheads, or --overheads names a profile, admission runs on "
                                   "the WCETs inflated by those overheads.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--heuristic", default="ffd", metavar="NAME")
    p.add_argument("--admission", default="edf", choices=["edf", "density", "rm", "dm", "file"],
                   help="per-CPU test: exact EDF (default), density, or FP response-time analysis with rm/dm/file priorities")
    p.add_argument("--overheads", metavar="PROFILE", help="an overhead profile (rtsched.overheads/1): admission charges its costs")
    p.add_argument("--statistic", choices=["median", "p99"], default=None,
                   help="which of the profile's statistics to charge (default p99)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here (default: standard output)")
    p.set_defaults(func=run)


def run(args):
    ts = _core.load_taskset(args.file)
    if args.statistic and not args.overheads:
        from ..cli import UsageError

        raise UsageError("--statistic chooses a column of the --overheads profile; give --overheads too")
    statistic = args.statistic or "p99"
    out, used = partition(ts, args.heuristic, args.admission, args.overheads, statistic)
    if out is None:
        print(f"{ts.source}: no heuristic of '{args.heuristic}' could partition it; the chain says: schedule globally", file=sys.stderr)
        return 1
    charged = _core.analysis_overheads(ts, args.overheads, statistic)
    with_oh = f"; overheads charged: {charged[0]}" if charged else ""
    text = f"# partitioned by rtsched: {used} (admission {args.admission}{with_oh})\n" + to_yaml(out)
    if args.output:
        write_text_atomic(args.output, text, inputs=(args.file, args.overheads))
        print(f"wrote {args.output} ({used})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
