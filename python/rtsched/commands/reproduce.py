"""rtsched reproduce NAME — rerun a paper's experiment, write figures and a report beside the paper's numbers."""

from __future__ import annotations

import time


def register(sub):
    p = sub.add_parser("reproduce", help="reproduce a paper's experiment: figures and a report with the paper's numbers beside rtsched's",
                       description="Run a registered experiment into OUT/NAME/ (report.md, figures as PNG and SVG, the sweep table). "
                                   "'rtsched reproduce --list' shows the experiments. It simulates only: the parts on this "
                                   "machine's real cores (real-time threads on every CPU) run only with --real, as root too.")
    p.add_argument("name", nargs="?", metavar="NAME", help="experiment, e.g. lwfg2012, paws2013")
    p.add_argument("--quick", action="store_true", help="a small version (under a minute on 2 cores, simulated)")
    p.add_argument("--real", action="store_true",
                   help="also run the experiment's real-core part (needs root): SCHED_FIFO / SCHED_DEADLINE threads on this "
                        "machine's CPUs; what runs, where, at which priority and for how long is printed first")
    p.add_argument("--out", default="out", metavar="DIR", help="output directory (default out/); the experiment writes DIR/NAME/")
    p.add_argument("--cluster", metavar="tcp://HOST:PORT", help="run the experiment's sweeps on this Dask scheduler")
    p.add_argument("--list", action="store_true", help="list the experiments")
    p.set_defaults(func=run)


def run(args):
    from ..cli import UsageError
    from ..report import table
    from ..reproduce import experiments, get, reproduce

    if args.list or not args.name:
        from ..tables import output_width

        print(table(["experiment", "what", "paper"], [[e.name, e.description, e.paper] for e in experiments()], ["<", "<", "<"],
                    output_width(), fold=("what", "paper")))
        return 0 if args.list else 2
    get(args.name)  # unknown names: exit 2 before any work
    client, executor = None, None
    if args.cluster:
        from distributed import Client

        try:
            client = Client(args.cluster, timeout="10s")
        except (OSError, TimeoutError) as e:
            raise UsageError(f"--cluster {args.cluster}: cannot connect ({e})") from None
        executor = client.get_executor()
    t = time.perf_counter()
    try:
        path = reproduce(args.name, out=args.out, quick=args.quick, executor=executor, real=args.real)
    finally:
        if client is not None:
            client.close()
    print(f"wrote {path} ({time.perf_counter() - t:.1f} s)")
    return 0
