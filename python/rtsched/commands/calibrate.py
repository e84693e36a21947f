"""rtsched calibrate — measure this machine's scheduling overheads into an overhead profile
(docs/overheads.md) that the simulator charges with ``run: {overheads: profile.yaml}``."""

from __future__ import annotations

import json
import os
import textwrap

import yaml

from .. import _core
from .._io import write_text_atomic
from ..cli import seed
from ..durations import in_unit
from ..report import table
from ..tables import output_width


def register(sub):
    p = sub.add_parser(
        "calibrate",
        help="measure this machine's scheduling overheads and write an overhead profile for the simulator",
        description="Measure decision overhead, context switch, migration with a cold working set, release latency and "
                    "the tick on this machine (median and p99 of --samples each) as the chosen backend pays them, and "
                    "write an overhead profile (rtsched.overheads/1) that a task file loads with "
                    "'run: {overheads: profile.yaml}'. Needs root or CAP_SYS_NICE; occupies every CPU for a few seconds "
                    "(run it on a quiet machine). See docs/overheads.md and docs/real-runs.md.",
    )
    p.add_argument("-b", "--backend", default="testbed", metavar="B",
                   help="whose costs: 'testbed' (the testbed's decisions, dispatch and release jitter; testbed:POLICY to "
                        "time another policy than gedf) or 'kernel' (the kernel's own scheduler: yield, switch, wake-up)")
    p.add_argument("--samples", type=int, default=2000, metavar="N", help="measurements per cost (default 2000)")
    p.add_argument("--wss", default="256KiB", metavar="SIZE", help="cold working set of the migration cost (default 256KiB)")
    p.add_argument("-o", "--output", default="profile.yaml", metavar="FILE", help="where to write the profile (default profile.yaml)")
    p.add_argument("--check", action="store_true",
                   help="then check the profile: the Dhall example and --sets random sets (2 CPUs, U from 0.7 m to 1.0 m) "
                        "on the testbed (gedf) and in the simulator without and with the profile; DSR gaps per set")
    p.add_argument("--profile", metavar="FILE", help="with --check: check this existing profile instead of measuring one")
    p.add_argument("--sets", type=int, default=20, metavar="N", help="--check: random sets (default 20)")
    p.add_argument("--duration", default="5s", metavar="D", help="--check: each random set's run (default 5s)")
    p.add_argument("--seed", type=seed, default=1, metavar="N", help="--check: seed of the first random set (default 1)")
    p.add_argument("--repeat", type=int, default=1, metavar="N", help="--check: testbed runs per set (their mean DSR is compared; the spread shows the testbed's own noise)")
    p.add_argument("--dhall", default="examples/dhall.yaml", metavar="FILE", help="--check: the Dhall example (default examples/dhall.yaml)")
    p.add_argument("--report", metavar="OUT.json", help="--check: write the rows and the summary here")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def measure(backend: str, samples: int, wss: str, output: str, progress: bool = True) -> None:
    from tqdm import tqdm

    bar = tqdm(total=1, desc="calibrating", unit="step", disable=not progress or None, leave=False)

    def report(stage, done, total):
        bar.total = total
        bar.set_description(stage, refresh=False)
        bar.update(done - bar.n)

    try:
        text, notes = _core.calibrate(backend, samples, wss, report)
    finally:
        bar.close()
    write_text_atomic(output, f"# rtsched calibrate --backend {backend} --samples {samples} --wss {wss}\n{text}")
    print(f"wrote {output}: the {backend} backend's overheads on this machine\n")
    print(describe(yaml.safe_load(text), output_width()))
    print()
    for name, note in notes:
        print(f"{name}: {note}")


def describe(profile: dict, width=None) -> str:
    """A profile (as loaded from YAML) as a table in microseconds, fitted to `width` (its
    header lines folded too)."""
    us = lambda d: in_unit(_core.parse_duration(str(d)), "us", 1)  # noqa: E731
    rows = [[k, us(c["median"]), us(c["p99"]), str(c.get("samples", ""))] for k, c in profile["costs"].items()]
    head = (f"{profile.get('machine', '')}\nbackend {profile.get('backend', '')}, migration with a cold working set of "
            f"{profile.get('migration_wss', '?')} B, tick every {us(profile.get('tick_period', 0))} us\n")
    if profile.get("rt_runtime"):
        ms = lambda d: f"{in_unit(_core.parse_duration(str(d)))} ms"  # noqa: E731
        head += (f"real-time bandwidth cap: {ms(profile['rt_runtime'])} of every {ms(profile['rt_period'])} per CPU "
                 "(RT throttling; the simulator stops a CPU that used it)\n")
    if width:
        head = "".join(textwrap.fill(line, width, break_long_words=False, break_on_hyphens=False) + "\n" if line else "\n"
                       for line in head.split("\n")[:-1])
    head += "\n"
    return head + table(["cost", "median us", "p99 us", "samples"], rows, ["<", ">", ">", ">"], width, ranks=[0, 0, 0, 1])


def run(args):
    from ..cli import UsageError

    if args.profile and not args.check:
        raise UsageError("--profile names a profile to check: use it with --check")
    if args.samples < 10:
        raise UsageError(f"--samples must be at least 10, got {args.samples}")
    if args.check and (args.sets < 0 or args.repeat < 1):
        raise UsageError(f"--sets must be >= 0 and --repeat >= 1, got {args.sets} and {args.repeat}")
    progress = not args.no_progress
    # The outputs, checked before minutes of measuring: writable, and not an input (the
    # profile checked, the Dhall example) or a device, directory or the other output.
    from .common import output_paths
    inputs = [p for p in (args.profile, args.dhall if args.check else None) if p]
    output_paths(args, inputs=inputs, output=None if args.profile else args.output, report=args.report if args.check else None)
    if args.profile:
        path = args.profile
        if not os.path.exists(path):
            raise FileNotFoundError(2, "no such file", path)
    else:
        measure(args.backend, args.samples, args.wss, args.output, progress)
        path = args.output
    if not args.check:
        return 0
    from ..calibrate_experiment import markdown, run_check
    from ..result import duration_ns

    duration_ns(args.duration)
    # Fails early (exit 2, the field named) if the profile does not load.
    _core.parse_taskset(f"platform: {{cpus: 1}}\nrun: {{overheads: {json.dumps(os.path.abspath(path))}}}\ntasks: [{{name: t, period: 10, wcet: 1}}]\n",
                        "yaml", path)
    dhall = args.dhall
    if not os.path.exists(dhall):
        # The repository's copy, when rtsched runs from a checkout.
        repo = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", dhall))
        dhall = repo if os.path.exists(repo) else None
        if dhall is None:
            print(f"{args.dhall}: not found; checking the random sets only")
    res = run_check(path, sets=args.sets, duration=args.duration, seed=args.seed, dhall=dhall, repeat=args.repeat, progress=progress)
    print()
    print(markdown(res))
    s = res["summary"]
    if s:
        ok = s["with"]["within_goal"] == s["sets"]
        print(f"\ngoal (every set's DSR with the profile within 0.02 of the testbed's): {'met' if ok else 'not met'}; "
              f"host steal during the testbed runs {s['steal_ms_total']:.0f} ms; load average before {res['loadavg_before'][0]:.2f}")
    if args.report:
        write_text_atomic(args.report, json.dumps(res, indent=2) + "\n", inputs=inputs)
        print(f"wrote {args.report}")
    return 0
