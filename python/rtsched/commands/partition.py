"""rtsched partition FILE --heuristic NAME [--overheads PROFILE] — write the task set back with
`cpu` fields; admission charges overheads (a profile, or the task file's `run.overheads`).
Each CPU's load is printed on stderr. A set with critical sections under a protocol the
admission test bounds (pip, pcp, pcp:original, srp for rm/dm/file; srp for edf) is admitted
with each CPU's blocking terms, its resources kept local (docs/locking.md, "Partitioning"). Under
msrp, mrsp or fmlp+ (rm/dm/file; msrp or fmlp+ for edf) resources may be global: a placement is admitted
only if every CPU placed so far passes with the protocol's spin and blocking terms on the
partial placement, and each CPU's line says which protocol's terms were counted. Any other set
with sections is warned about (admission then ignores the blocking they cause). A chain that
falls back to `global` is exit 2, as a heuristic that places no partition."""

from __future__ import annotations

import sys

from .. import _core
from .._core import InputError
from .._io import write_text_atomic
from ..analysis import partition, to_yaml


def register(sub):
    p = sub.add_parser("partition", help="assign tasks to CPUs with a partitioning heuristic (ffd, wfd, bfd, nfd, bf, lwfg, chains)",
                       description="Partition FILE and write it back with cpu fields. Heuristics: ffd, wfd, bfd, nfd (decreasing "
                                   "utilisation), ffdd/wfdd/... (decreasing density), bf (Baruah-Fisher), lwfg (cache-aware, "
                                   "LWFG Algorithm 1), FIT:ORDER (e.g. best:wss), and fallback chains like lwfg+ffd+global. "
                                   "When the task file sets run.overheads, or --overheads names a profile, admission runs on "
                                   "the WCETs inflated by those overheads. Critical sections are counted under pip, pcp, srp "
                                   "(resources kept local) and msrp, mrsp, fmlp+ (resources local or global as placed; every "
                                   "CPU re-checked at each placement with the protocol's spin and blocking terms; "
                                   "docs/locking.md, Partitioning).")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--heuristic", default="ffd", metavar="NAME")
    p.add_argument("--admission", default="edf", choices=["edf", "density", "rm", "dm", "file"],
                   help="per-CPU test: exact EDF (default), density, or FP response-time analysis with rm/dm/file priorities")
    p.add_argument("--overheads", metavar="PROFILE", help="an overhead profile (rtsched.overheads/1): admission charges its costs")
    p.add_argument("--statistic", choices=["median", "p99"], default=None,
                   help="which of the profile's statistics to charge (default p99)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here (default: standard output)")
    p.set_defaults(func=run)


def cpu_loads(ts, terms=None) -> str:
    """Each CPU's load in the partition ``ts`` (every task with its ``cpu``): its utilisation
    (Σ C/T of its tasks) and its tasks, one line per CPU, followed by ``terms[cpu]`` (the
    protocol's terms admission counted there) when given."""
    by_cpu = {c: [] for c in range(ts.cpus)}
    for t in ts.tasks():
        by_cpu[t["cpu"]].append(t)
    width = len(str(ts.cpus - 1))
    lines = []
    for c, tasks in by_cpu.items():
        u = sum(t["utilization"] for t in tasks)
        names = ", ".join(t["name"] for t in tasks) or "(idle)"
        counted = f"; {terms[c]}" if terms else ""
        lines.append(f"CPU {c:>{width}}: U = {u:.3f}  {names}{counted}")
    return "\n".join(lines)


def run(args):
    ts = _core.load_taskset(args.file)
    if args.statistic and not args.overheads:
        from ..cli import UsageError

        raise UsageError("--statistic chooses a column of the --overheads profile; give --overheads too")
    statistic = args.statistic or "p99"
    out, used = partition(ts, args.heuristic, args.admission, args.overheads, statistic)
    if out is None:
        # As a heuristic that places no partition: the set's failure, exit 2, nothing written.
        raise InputError(f"{ts.source}: no heuristic of '{args.heuristic}' could partition it onto {ts.cpus} CPUs; "
                         "the chain says: schedule globally (no file written)")
    terms = _core.admission_terms(out, args.admission)
    print(cpu_loads(out, terms[1] if terms else None), file=sys.stderr)
    if any(t["sections"] for t in ts.tasks()) and not _core.admission_counts_sections(ts, args.admission):
        print(f"warning: {ts.source}: admission ({args.admission}) ignores critical sections: the time a job waits "
              "for a resource is not charged (the admission test bounds blocking only under pip, pcp, pcp:original, srp, "
              "msrp, mrsp or fmlp+ with rm/dm/file, pip, pcp, srp, msrp or fmlp+ with edf, without nested sections), so a "
              "partitioned scheduler on this partition can miss deadlines that every CPU's test admitted; simulate it "
              "to see", file=sys.stderr)
    charged = _core.analysis_overheads(ts, args.overheads, statistic)
    with_oh = f"; overheads charged: {charged[0]}" if charged else ""
    counted = f"; {terms[0]} terms counted on every CPU" if terms else ""
    text = f"# partitioned by rtsched: {used} (admission {args.admission}{with_oh}{counted})\n" + to_yaml(out)
    if args.output:
        write_text_atomic(args.output, text, inputs=(args.file, args.overheads))
        print(f"wrote {args.output} ({used})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
