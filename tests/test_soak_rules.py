"""The soak's rules on hand-made records (the soak itself is slow and needs root): which
kernel:deadline misses an overrun explains, and which kernel:fifo misses an outage does."""

import numpy as np
import pandas as pd

import rtsched
from test_soak import hp_work_released, outage_explains, overrun_chains

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


# One CPU, rate-monotonic: a (period 10, wcet 4) above e (period 20, deadline 16, wcet 7).
FIFO = ("platform: {cpus: 2}\nrun: {duration: 1s}\ntasks:\n  - {name: a, period: 10ms, wcet: 4ms, cpu: 0}\n"
        "  - {name: e, period: 20ms, deadline: 16ms, wcet: 7ms, cpu: 0}\n  - {name: b, period: 5ms, wcet: 1ms, cpu: 1}\n")
MS = 1_000_000


def test_an_outage_explains_a_fixed_priority_miss_later_than_itself_by_the_higher_priority_work_it_let_in():
    # Worked by hand. Without an outage: a 0-4, e 4-10, a 10-14, e 14-15: e's job 0 ends at 15,
    # 1 ms before its deadline. With the CPU taken 4-10: a 10-14, e 14-20, a 20-24, e 24-25:
    # it ends at 25, 9 ms late after a 6 ms outage, as a's jobs released at 10 and 20 (8 ms of
    # work) ran first. b runs on the other CPU and counts for nothing.
    ts = rtsched.parse_taskset(FIFO, "yaml", "rules.yaml")
    j = pd.DataFrame([("a", 0, 0, 4 * MS), ("e", 0, 0, 7 * MS), ("a", 1, 10 * MS, 4 * MS), ("a", 2, 20 * MS, 4 * MS),
                      ("a", 3, 30 * MS, None)] + [("b", k, 5 * k * MS, MS) for k in range(6)],
                     columns=["task", "job", "release_ns", "exec_ns"])
    missed = j[(j.task == "e") & (j.job == 0)]
    fin = np.array([25 * MS])
    hp = hp_work_released(ts, j, missed, fin)
    assert hp.tolist() == [8 * MS]
    late = np.array([9 * MS])
    assert outage_explains(np.array([6 * MS]), late, hp).tolist() == [True]
    # The same miss after an outage of 0.9 ms: 0.9 + 8 < 9, something else delayed it.
    assert outage_explains(np.array([900_000]), late, hp).tolist() == [False]
    # Without the higher-priority work (global EDF) only an outage as long as the lateness does.
    assert outage_explains(np.array([6 * MS, 9 * MS]), np.array([9 * MS, 9 * MS]), 0).tolist() == [False, True]
    # No outage explains nothing, however much higher-priority work there was.
    assert outage_explains(np.array([0]), np.array([1]), np.array([50 * MS])).tolist() == [False]
