"""rtsched stress — background load like the opzone paper's evaluation (§4.1): CPU hogs,
periodic sleepers, bursty workers, disk I/O and loopback network traffic."""

from __future__ import annotations

import os

from ..cli import seed


def register(sub):
    n = os.cpu_count() or 1
    p = sub.add_parser(
        "stress", help="background load (CPU, sleepers, bursts, disk I/O, network) for latency and balancer experiments",
        description="Start worker processes that load the machine as the opzone paper's evaluation does (§4.1: 'very high "
                    "CPU load, network stress, and disk I/O'), run them for --duration (or until Ctrl-C / SIGTERM), then "
                    "stop every one. Pure Python workers: no stress-ng needed. Under 'rtsched balance -- rtsched stress ...' "
                    "the zone balancer manages them. See docs/real-balancer.md.")
    p.add_argument("--cpu", type=int, default=None, metavar="N", help=f"busy-loop workers (default 2 x CPUs = {2 * n})")
    p.add_argument("--sleepers", type=int, default=0, metavar="N", help="periodic workers: busy --run, asleep --sleep (their "
                                                                        "wake-ups are the 'idle CPU's task wakes up' check point)")
    p.add_argument("--run", default="2ms", metavar="D", help="sleepers' busy time per period (default 2ms)")
    p.add_argument("--sleep", default="8ms", metavar="D", help="sleepers' sleep per period (default 8ms)")
    p.add_argument("--bursty", type=int, default=0, metavar="N", help="workers busy and asleep for random times (mean --burst): "
                                                                      "utilisation that fluctuates, as in the warm zone")
    p.add_argument("--burst", default="20ms", metavar="D", help="bursty workers' mean burst and mean sleep (default 20ms)")
    p.add_argument("--io", type=int, default=0, metavar="N", help="workers writing 1 MiB + fsync in a loop (a temporary file)")
    p.add_argument("--net", type=int, default=0, metavar="N", help="workers sending UDP datagrams to themselves over loopback")
    p.add_argument("--nice", type=int, default=0, metavar="N", help="nice value of every worker (default 0)")
    p.add_argument("--seed", type=seed, default=1, metavar="N", help="seed of the bursty workers (default 1)")
    p.add_argument("--duration", metavar="D", help="how long (default: until Ctrl-C or SIGTERM)")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=run)


def run(args):
    from ..result import duration_ns
    from ..stress import Stress, run_stress
    from .balance import _duration

    def dur(flag, text):
        return _duration(flag, text, duration_ns)

    s = Stress(cpu=args.cpu, sleepers=args.sleepers, run_ns=dur("--run", args.run), sleep_ns=dur("--sleep", args.sleep),
               bursty=args.bursty, burst_ns=dur("--burst", args.burst), io=args.io, net=args.net, nice=args.nice, seed=args.seed)
    return run_stress(s, dur("--duration", args.duration) if args.duration else None, quiet=args.quiet)
