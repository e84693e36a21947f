"""The soak's rules on hand-made records (the soak itself is slow and needs root): which
kernel:deadline misses an overrun explains."""

import pandas as pd

import rtsched
from test_soak import overrun_chains

TS = "platform: {cpus: 1}\nrun: {duration: 1s}\ntasks:\n  - {name: e, period: 50ms, wcet: 5ms}\n  - {name: a, period: 10ms, wcet: 2ms}\n"


def jobs(rows):
    return pd.DataFrame(rows, columns=["task", "job", "exec_ns", "missed"])


def test_an_overrun_explains_its_own_miss_and_the_chain_after_it_and_nothing_else():
    ts = rtsched.parse_taskset(TS, "yaml", "rules.yaml")
    # e's runtime is 5.5 ms (5 ms + 10%), a's 2.25 ms (2 ms + 250 us).
    assert rtsched._core.sched_deadline_runtimes(ts) == [[5_500_000], [2_250_000]]
    j = jobs([
        ("e", 0, 5_000_000, False),
        ("e", 1, 8_830_000, True),   # overran: explained
        ("e", 2, 5_000_100, True),   # the chain after it
        ("e", 3, 5_000_100, True),
        ("e", 4, 5_000_100, False),  # caught up
        ("e", 5, 5_000_100, True),   # a new miss with no overrun: not explained
        ("a", 0, 2_250_001, False),  # overran but met its deadline: nothing to explain
        ("a", 1, 2_000_000, True),   # the job before it did not miss: no chain
        ("a", 2, 5_500_000, True),   # e's runtime, not a's: overran
    ])
    got = overrun_chains(ts, j.sample(frac=1, random_state=3))  # any order of records
    assert got.sort_index().tolist() == [False, True, True, True, False, False, False, False, True]
