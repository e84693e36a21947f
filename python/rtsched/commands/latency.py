"""rtsched latency — wake-up latency per CPU (cyclictest-like), optionally beside cyclictest."""

from __future__ import annotations

from ..latency import cyclictest, probe, summarize
from ..report import table
from ..tables import output_width


def register(sub):
    p = sub.add_parser("latency", help="measure wake-up latency per CPU (a cyclictest-like probe)",
                       description="One pinned SCHED_FIFO thread per CPU sleeps until absolute deadlines INTERVAL apart and "
                                   "records how late it wakes. Needs root or CAP_SYS_NICE.")
    p.add_argument("--duration", default="5s", metavar="D", help="how long to measure (default 5s, at most 900s)")
    p.add_argument("--interval", default="1ms", metavar="I", help="time between wake-ups (default 1ms, 10us to 1s)")
    p.add_argument("--priority", type=int, default=80, help="SCHED_FIFO priority of the probe threads (1-99, default 80)")
    p.add_argument("--no-pm-qos", action="store_true",
                   help="do not ask for zero wake-up latency (/dev/cpu_dma_latency) while measuring: leave the CPUs "
                        "to idle as they would (to watch a run rather than the best case)")
    p.add_argument("--cyclictest", action="store_true", help="also run the real cyclictest (rt-tests) with the same settings")
    p.add_argument("--plot", metavar="OUT.png", help="latency histogram")
    p.set_defaults(func=run)


def latency_table(rows, width=None) -> str:
    """The probe's (and cyclictest's) wake-up latency per CPU, fitted to `width`."""
    return table(["probe", "cpu", "cycles", "min us", "avg us", "median us", "p99 us", "max us"], rows, ["<"] + [">"] * 7, width,
                 ranks=[0, 0, 2, 1, 1, 1, 0, 0], hint="max and p99 kept")


def run(args):
    res = probe(args.duration, args.interval, args.priority, pm_qos=not args.no_pm_qos)
    rows = []
    for cpu, xs in res.items():
        s = summarize(xs)
        rows.append(["rtsched", str(cpu), str(s["count"]), f"{s['min_us']:.1f}", f"{s['avg_us']:.1f}", f"{s['median_us']:.1f}", f"{s['p99_us']:.1f}", f"{s['max_us']:.1f}"])
    if args.cyclictest:
        for cpu, s in sorted(cyclictest(args.duration, args.interval, args.priority).items()):
            rows.append(["cyclictest", str(cpu), str(s["count"]), f"{s['min_us']:.1f}", f"{s['avg_us']:.1f}", "", "", f"{s['max_us']:.1f}"])
    print(latency_table(rows, output_width()))
    if args.plot:
        from ..plots_latency import latency_histogram

        latency_histogram(res, args.plot)
        print(f"wrote {args.plot}")
    return 0
