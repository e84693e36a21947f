"""rtsched balance — the operation-zone load balancer (opzone paper §3) on real Linux, in user
space: the simulator's own ZoneBalancer decides, sched_setaffinity moves."""

from __future__ import annotations

import argparse
import re

#: (flag, ZoneConfig key, help) — the keys of the Rust ZoneConfig, passed through unchanged so
#: the one validator in Rust checks them.
ZONE_OPTIONS = [
    ("--zone", "zone", "operation zone policy (§3.1): cold (balance only once a CPU is above the cold zone), "
                       "warm-low / warm-mid / warm-high (balance above the low / mid / high spot, moved by the "
                       "weight-based score), hot (balance only in the hot zone)"),
    ("--cold-threshold", "cold_threshold", "top of the cold zone, included (percent)"),
    ("--hot-threshold", "hot_threshold", "bottom of the hot zone, included (percent)"),
    ("--warm-spot-low", "warm_spot_low", "warm zone's low spot: the lowest the score goes (percent)"),
    ("--warm-spot-mid", "warm_spot_mid", "warm zone's mid spot (percent)"),
    ("--warm-spot-high", "warm_spot_high", "warm zone's high spot: the highest the score goes (percent)"),
    ("--prize-time", "prize_time", "balance_weight_prize_time: usage above the spot this long raises the score "
                                   "(fewer migrations for a task that uses its CPU continually)"),
    ("--punish-time", "punish_time", "balance_weight_punish_time: usage above the spot ending sooner lowers the score"),
    ("--score-step", "score_step", "how far one prize or punish moves the score (percent; 0 turns the weighting off)"),
    ("--util", "util", "per-cpu: judge each CPU's utilisation (the paper's default); average: judge the average of all "
                       "CPUs (balance_cpus_avg_enable=1)"),
    ("--task-floor", "task_floor", "which tasks a warm policy may move (§3.1.3: \"Tasks that are lower than the CPU usage of the "
                                   "warm zone area is not migrated\"): warm-zone (none whose own usage is under the low spot), "
                                   "spot (only one above the configured spot), off (any); cold and hot move any"),
    ("--task-usage", "task_usage", "a task's own usage for --task-floor, per sampling window: demand (the share it was runnable: "
                                   "on a CPU or waiting on a run queue, /proc/PID/task/TID/schedstat) or running (on a CPU only)"),
]


def register(sub):
    from .._core import ZoneBalancer

    defaults = dict(ZoneBalancer.defaults())
    p = sub.add_parser(
        "balance", help="run the operation-zone load balancer on real Linux (user space, through CPU affinity)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="The operation zone based load-balancer (Lim, Min, Eom 2012, §3) beside the kernel's own.\n"
                    "Every PERIOD it reads each CPU's utilisation from /proc/stat and, at the paper's check points\n"
                    "(a task is newly created, an idle CPU's task wakes up, a task runs on the busiest CPU), asks\n"
                    "the same ZoneBalancer as the simulator whether to balance. On a balance it pins ONE managed\n"
                    "runnable task of the busiest CPU to the least used CPU, the one the simulator's rule picks: none\n"
                    "unless that CPU has two runnable more than the target, under a warm policy none whose own usage\n"
                    "(by default its demand: its share of the window on a CPU or waiting for one) is below the warm\n"
                    "zone (--task-floor, --task-usage); of the rest the heaviest (nice), then the latest vruntime.\n\n"
                    "Managed tasks: the command after '--', the --pid processes, their descendants and threads;\n"
                    "with --all every user thread (never kernel threads, SCHED_FIFO/RR/DEADLINE threads, or itself).\n"
                    "Every affinity it changes is restored when it ends: normally, on Ctrl-C, SIGTERM, SIGHUP or an\n"
                    "error. Needs permission to change the tasks' affinity (their owner, or root).\n\n"
                    "Example: rtsched balance --zone warm-high --hold -- rtsched stress --cpu 4 --duration 30s\n"
                    "See docs/real-balancer.md.")
    g = p.add_argument_group("operation zone (the Rust ZoneConfig; defaults are the paper's)")
    for flag, key, text in ZONE_OPTIONS:
        g.add_argument(flag, dest=f"zone_{key}", metavar="V", help=f"{text} (default {defaults[key]})".replace("%", "%%"))
    p.add_argument("--period", default="100ms", metavar="D", help="sampling period of /proc/stat (default 100ms; "
                                                                  "/proc/stat counts in 10 ms steps)")
    p.add_argument("--duration", metavar="D", help="stop after D (and stop the command); default: until the command ends")
    p.add_argument("--pid", type=int, action="append", default=[], metavar="PID",
                   help="also manage this running process and its descendants (repeatable)")
    p.add_argument("--all", action="store_true", help="manage every user thread, not only the ones it started")
    p.add_argument("--hold", action="store_true",
                   help="pin each managed task to the CPU it is first seen on, so the kernel's balancer cannot move it and "
                        "the zone balancer is the only one (as in the paper, where it replaces the kernel's)")
    p.add_argument("--dry-run", action="store_true",
                   help="decide and log, move nothing: what the zone balancer would do (a baseline with the same process "
                        "and /proc reading as a real run)")
    p.add_argument("--json", metavar="OUT", help="write counters and the migration log as JSON (atomically)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every migration as it happens")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary at the end")
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD ARGS", help="command to start and balance")
    p.set_defaults(func=run)


def zone_options(args) -> list[tuple[str, str]]:
    """The zone options the user gave, as (ZoneConfig key, value)."""
    return [(key, str(getattr(args, f"zone_{key}"))) for _, key, _ in ZONE_OPTIONS if getattr(args, f"zone_{key}") is not None]


def flag_errors(fn):
    """Add the flag to a ZoneConfig error ("option 'warm_spot_low'" -> "... (--warm-spot-low)")."""
    from .._core import InputError

    try:
        return fn()
    except InputError as e:
        msg = re.sub(r"option '(\w+)'", lambda m: f"option '{m[1]}' (--{m[1].replace('_', '-')})", str(e), count=1)
        raise InputError(msg) from None


def run(args):
    from ..balance import run_balancer
    from ..result import duration_ns

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    period = flag_errors(lambda: _duration("--period", args.period, duration_ns))
    dur = _duration("--duration", args.duration, duration_ns) if args.duration else None
    return flag_errors(lambda: run_balancer(zone_options(args), command=command, pids=args.pid, all_tasks=args.all, hold=args.hold,
                                            period_ns=period, duration_ns=dur, json_out=args.json, quiet=args.quiet,
                                            verbose=args.verbose, dry_run=args.dry_run))


def _duration(flag, text, parse):
    from .._core import InputError

    try:
        ns = parse(text)
    except InputError as e:
        raise InputError(f"{flag}: {e}") from None
    if ns <= 0:
        raise InputError(f"{flag}: must be positive, got {text}")
    return ns
