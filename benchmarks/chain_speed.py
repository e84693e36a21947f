#!/usr/bin/env python3
"""What chains cost the simulator (docs/chains.md "Cost"; issue 53: a chain set simulates within
1.5x of the same tasks without chains): jobs per second of a set with chains over the same set
without them, as ratios measured in the same run.

The sets: 16 tasks on 4 CPUs in four groups of four (periods 5, 10, 20, 40 ms in each group,
WCETs for U = 0.6 m), under gedf and gfp (rate monotonic), 200 s simulated (300,000 jobs; `--seconds`), the per-job
records streamed (as `rtsched simulate` does without a per-job output). Cases, each timed
against its own baseline (`base`: the plain set):

- `let`, `implicit`: each group a data-flow chain (5 -> 10 -> 20 -> 40 ms) of the same
  periodic tasks: the same jobs and schedule, plus the chains' reads, publications and records;
- `event`: each group an event chain (its first task periodic at 10 ms, each next one
  `trigger:` the one before); its baseline `event-base` is the same tasks with each triggered
  one periodic at 10 ms instead (the same number of jobs and about the same schedule);
- `suspend`: every task's WCET C split as `segments: [C/2, {suspend: C/4}, C/2]`, against
  `base`: the same tasks with the suspension removed (`wcet: C`, the sum of the run segments;
  same periods, deadlines and seed, so the same 300,000 jobs and the same demand drawn for
  each). What is compared is the time of the whole `_core.simulate` call of each (issue 53:
  within 1.5x). A suspending job is two dispatches, two completions of its entity and a
  resume event, at instants of their own: about three scheduling instants per job where the
  baseline has one and a share of the synchronous releases.

Each case and its baseline alternate, REPEATS times, the best time of each kept; the ratio is
time with / time without (1.5 = 50 % slower), each pass's ratio too, so the spread shows how
much a shared machine moved them; beside it the ratios of the events the engine handled and of
its scheduling instants (the policy's `schedule` calls), with / without, which say how much of
the time is the schedule's own extra work. Ratios, not timed assertions.

Usage: .venv/bin/python benchmarks/chain_speed.py [--repeats N] [--seconds S] [--cpu-time]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from rtsched import _core

PERIODS_MS = (5, 10, 20, 40)
GROUPS = 4
CPUS = 4


def _wcet(period_ms: float) -> float:
    """WCET in ms for a share of 0.6 * CPUS over the 16 tasks."""
    return round(period_ms * 0.6 * CPUS / (GROUPS * len(PERIODS_MS)), 3)


def taskset(kind: str, seconds: float):
    """The set of case `kind` (base, let, implicit, event, event-base, suspend)."""
    lines = [f"platform: {{cpus: {CPUS}}}", f"run: {{duration: {int(seconds * 1000)}, seed: 1}}", "tasks:"]
    chains = []
    for g in range(GROUPS):
        names = [f"g{g}t{i}" for i in range(len(PERIODS_MS))]
        for i, (name, p) in enumerate(zip(names, PERIODS_MS)):
            if kind in ("event", "event-base"):
                p = 10
            c = _wcet(p)
            if kind == "event" and i > 0:
                lines.append(f"  - {{name: {name}, trigger: {names[i - 1]}, deadline: {p}, wcet: {c}}}")
            elif kind == "suspend":
                lines.append(f"  - {{name: {name}, period: {p}, segments: [{c / 2}, {{suspend: {c / 4}}}, {c / 2}]}}")
            else:
                lines.append(f"  - {{name: {name}, period: {p}, wcet: {c}}}")
        if kind in ("let", "implicit"):
            chains.append(f"  - {{name: c{g}, tasks: [{', '.join(names)}], communication: {kind}}}")
        elif kind == "event":
            chains.append(f"  - {{name: c{g}, tasks: [{', '.join(names)}]}}")
    if chains:
        lines += ["chains:", *chains]
    return _core.parse_taskset("\n".join(lines) + "\n", "yaml", f"{kind}.yaml")


CASES = (("let", "base"), ("implicit", "base"), ("event", "event-base"), ("suspend", "base"))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="alternated passes per case (default 5)")
    ap.add_argument("--seconds", type=float, default=200.0, help="simulated seconds per run (default 200: 300,000 jobs)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time by this process's CPU time, not the wall clock (a shared machine)")
    args = ap.parse_args(argv)
    clock = time.process_time if args.cpu_time else time.perf_counter
    sets = {k: taskset(k, args.seconds) for k in {x for c in CASES for x in c}}

    def timed(kind: str, spec: str) -> tuple[float, int, tuple[int, int]]:
        t = clock()
        r = _core.simulate(sets[kind], spec, keep_jobs=False)
        took = clock() - t
        c = r.document()["counters"]
        return took, r.job_count, (c["events"], c["scheduler_invocations"])

    out = {}
    for spec in ("gedf", "gfp"):
        for case, base in CASES:
            with_t, without_t, ratios = [], [], []
            for _ in range(args.repeats):
                a, jobs, work = timed(case, spec)
                b, base_jobs, base_work = timed(base, spec)
                with_t.append(a)
                without_t.append(b)
                ratios.append(a / b)
            out[f"{case} {spec}"] = {
                "jobs": jobs, "base_jobs": base_jobs,
                "jobs_per_s": round(jobs / min(with_t)), "base_jobs_per_s": round(base_jobs / min(without_t)),
                # Time per run, best of each side; jobs differ a little for event/suspend.
                "ratio_best": round(min(with_t) / min(without_t), 3),
                "ratio_median": round(statistics.median(ratios), 3),
                "ratio_spread": [round(min(ratios), 3), round(max(ratios), 3)],
                # The simulator's work, with / without: events handled, scheduling instants
                # (calls of the policy's `schedule`).
                "events_ratio": round(work[0] / base_work[0], 3),
                "instants_ratio": round(work[1] / base_work[1], 3),
            }
            print(f"{case:>8} {spec:<4} {out[f'{case} {spec}']}", flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
