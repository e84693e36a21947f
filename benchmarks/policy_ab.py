#!/usr/bin/env python3
"""Jobs per second of the simulator per policy, for an A/B of two builds (docs/performance.md
"Policy A/B").

Runs fixed sets — gedf on uunifast-discard m = 2 and 8 (U = 0.7 m, 20 s), paws on paws2013
m = 8 windows 1 and 4 (20 s), and each utility-accrual policy on one uunifast-discard set of 12
tasks on 4 CPUs at loads 0.6 and 1.4 (5 s) — streamed (no per-job records), best of 5 each,
and prints one JSON object {case: jobs/s}. (Before issue 49 these were `uunifast` sets; the
same draws except load 1.4, whose set had a share of 2.04 clipped to 1: U = 4.56, not 5.6.) For an A/B, build the old commit's extension into a second
virtual environment (`git worktree add /tmp/old OLD && cd /tmp/old && maturin build --profile
ci`, then `pip install` the wheel there) and run this script with each environment's Python,
alternating, on a quiet machine; compare the ratios, not the absolute numbers.
"""

from __future__ import annotations

import json
import time

import rtsched
from rtsched import _core

UA = ("pdasa:partition=load", "lbesa:partition=load", "ggua:model=stw,mapper=3pass",
      "nggua:model=stw,mapper=3pass", "ghvdf:model=stw,mapper=3pass")


def cases():
    for m in (2, 8):
        ts = rtsched.generate("uunifast-discard", n=3 * m, U=0.7 * m, m=m, seed=7).taskset.with_run(duration_ns=20 * 10**9)
        yield f"gedf m={m}", ts, "gedf"
    for w in (1, 4):
        ts = rtsched.generate("paws2013", seed=11, m=8, window=w).taskset.with_run(duration_ns=20 * 10**9)
        yield f"paws m=8 w={w}", ts, "paws"
    for load in (0.6, 1.4):
        ts = rtsched.generate("uunifast-discard", n=12, U=load * 4, m=4, seed=5).taskset.with_run(duration_ns=5 * 10**9)
        for s in UA:
            yield f"{s.split(':')[0]} m=4 load={load}", ts, s


def main() -> None:
    out = {}
    for name, ts, spec in cases():
        best = 0.0
        for _ in range(5):
            t = time.perf_counter()
            r = _core.simulate(ts, spec, False)
            best = max(best, r.job_count / (time.perf_counter() - t))
        out[name] = round(best)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
