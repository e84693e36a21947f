"""rtsched partition FILE --heuristic NAME — write the task set back with `cpu` fields."""

from __future__ import annotations

import sys

from .. import _core
from ..analysis import partition, to_yaml
from .._io import write_text_atomic


def register(sub):
    p = sub.add_parser("partition", help="assign tasks to CPUs with a partitioning heuristic (ffd, wfd, bfd, nfd, bf, lwfg, chains)",
                       description="Partition FILE and write it back with cpu fields. Heuristics: ffd, wfd, bfd, nfd (decreasing "
                                   "utilisation), ffdd/wfdd/... (decreasing density), bf (Baruah-Fisher), lwfg (cache-aware, "
                                   "LWFG Algorithm 1), FIT:ORDER (e.g. best:wss), and fallback chains like lwfg+ffd+global.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--heuristic", default="ffd", metavar="NAME")
    p.add_argument("--admission", default="edf", choices=["edf", "density", "rm", "dm", "file"],
                   help="per-CPU test: exact EDF (default), density, or FP response-time analysis with rm/dm/file priorities")
    p.add_argument("-o", "--output", metavar="FILE", help="write here (default: standard output)")
    p.set_defaults(func=run)


def run(args):
    ts = _core.load_taskset(args.file)
    out, used = partition(ts, args.heuristic, args.admission)
    if out is None:
        print(f"{ts.source}: no heuristic of '{args.heuristic}' could partition it; the chain says: schedule globally", file=sys.stderr)
        return 1
    text = f"# partitioned by rtsched: {used} (admission {args.admission})\n" + to_yaml(out)
    if args.output:
        write_text_atomic(args.output, text)
        print(f"wrote {args.output} ({used})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
