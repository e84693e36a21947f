"""rtsched sweep SPEC — run a sweep (generator × utilisation × schedulers × seeds) into one table."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def register(sub):
    p = sub.add_parser(
        "sweep",
        help="run a sweep (generator × utilisation × schedulers × seeds) on all cores or a Dask cluster",
        description="Run the sweep SPEC describes (docs/sweeps.md) and append one row per (task set, scheduler) "
                    "to a Parquet or CSV table. Rows already in the table are skipped (resumable); completed rows "
                    "are written in atomic batches, so an interrupted or crashed run loses nothing written.",
    )
    p.add_argument("spec", metavar="SPEC.yaml", help="sweep spec (YAML or JSON)")
    p.add_argument("-o", "--output", metavar="TABLE", help="results table, .parquet or .csv (default: the spec's 'output', else SPEC.parquet)")
    p.add_argument("--cluster", metavar="tcp://HOST:PORT", help="run on this Dask scheduler instead of local processes; "
                   "'local' starts a Dask cluster of --workers processes here, with rtsched's Dask settings")
    p.add_argument("-j", "--workers", type=int, metavar="N", help="local worker processes (default: every core)")
    p.add_argument("--no-plots", action="store_true", help="do not write the default figures next to the table")
    p.add_argument("--plot-x", choices=("point", "U"), default="point",
                   help="the figures' x axis: the utilisation point each set was asked for (default), or U: each set's "
                        "actual utilisation (the table's U column), binned at the points' spacing")
    p.add_argument("--plot-y", action="append", default=[], metavar="COLUMN",
                   help="also plot this metric column of the table against utilisation (repeatable), e.g. "
                        "chain_latency_max_ns, chain_data_age_max_ns, chain_reaction_time_max_ns (each set's largest over "
                        "its chains' instances, docs/chains.md; drawn by default when some set has chains), "
                        "max_response_ns")
    p.add_argument("--fresh", action="store_true", help="start over: delete the table's rows instead of resuming")
    p.add_argument("--batch", type=int, default=5000, metavar="ROWS", help="rows per atomically written part file (default 5000)")
    p.add_argument("--batch-seconds", type=float, default=10.0, metavar="S", help="write completed rows at least this often (default 10)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args):
    from ..cli import UsageError
    from ..sweep import load_spec, sweep
    from ..sweep.table import COLUMNS, COORD_COLUMNS

    numeric = [c for c in COLUMNS if c not in COORD_COLUMNS and c not in ("status", "error", "schema")]
    for c in args.plot_y:
        if c not in numeric:
            raise UsageError(f"--plot-y {c}: not a metric column of the sweep table; known: {', '.join(numeric)}")
    spec = load_spec(args.spec)
    output = args.output or spec.output or str(Path(args.spec).with_suffix(".parquet"))
    if Path(output).suffix.lower() not in (".parquet", ".csv"):
        raise UsageError(f"--output {output}: the table must end in .parquet or .csv")
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.batch < 1:
        raise UsageError("--batch must be at least 1")
    executor, client, cluster = None, None, None
    if args.cluster:
        try:
            from distributed import Client
        except ImportError:
            raise UsageError("--cluster needs Dask: pip install 'dask[distributed]'") from None
        if args.cluster == "local":
            from ..sweep import local_cluster

            cluster = local_cluster(args.workers)
        try:
            client = Client(cluster or args.cluster, timeout="10s")
        except (OSError, TimeoutError) as e:
            if cluster is not None:
                cluster.close()
            raise UsageError(f"--cluster {args.cluster}: cannot connect ({e})") from None
        executor = client.get_executor()
    if cluster is not None:
        where = f"a local Dask cluster of {len(cluster.workers)} workers"
    else:
        where = f"Dask cluster {args.cluster}" if client else f"{args.workers or os.cpu_count()} local processes"
    print(f"{spec.source}: {spec.size} rows ({len(spec.generators)} generator(s) × {len(spec.points)} points × "
          f"{len(spec.replications)} seeds × {len(spec.schedulers)} schedulers"
          f"{f' × {len(spec.locking)} protocols' if spec.locking else ''}) on {where} -> {output}", file=sys.stderr)
    try:
        df = sweep(spec, executor=executor, output=output, workers=args.workers, resume=not args.fresh,
                   progress=False if args.quiet else True, batch_rows=args.batch, batch_seconds=args.batch_seconds)
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    counts = df["status"].value_counts()
    # Each status by its count: ok, partition-failed, deadlock, too-long, not-applicable (docs/sweeps.md).
    words = {"ok": "ran", "partition-failed": "partition failures", "deadlock": "deadlocked", "too-long": "not run: too long",
             "not-applicable": "not applicable"}
    said = ", ".join(f"{int(counts[s])} {words.get(s, s)}" for s in words if s in counts)
    print(f"wrote {output}: {len(df)} rows of this sweep ({said or 'none'})")
    from ..plots import drift_warnings

    # A generator whose U is a cap or a window (LWFG, waters2015) gives sets below their point.
    for w in drift_warnings(df, "--plot-x U", x=args.plot_x):
        print(w, file=sys.stderr)
    if not args.no_plots and len(df):
        from ..plots import sweep_figures

        prefix = str(Path(output).with_suffix(""))
        paths = sweep_figures(df, prefix, per_cpu=spec.per_cpu, x=args.plot_x, extra=tuple(args.plot_y))
        print(f"wrote {len(paths)} figures: {prefix}-{{{','.join(sorted({Path(p).stem.rsplit('-', 1)[-1] for p in paths}))}}}.{{png,svg}}")
    return 0
