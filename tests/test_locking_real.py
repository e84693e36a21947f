"""Locking protocols on the testbed (docs/locking.md). The spinning ones ("Spinning: msrp and
mrsp"): the 2-CPU example of the simulator's golden test (crates/sim/tests/spinning.rs), its
period shortened to 20 ms, run for 200 ms on real cores under `testbed:pfp`, with the spinning
the ledger counts reported per job; then `fmlp+` under `testbed:pfp`, `pcp:original` on the
classic example under `testbed:gfp:file`, and `pip`, `pcp` (there) and `srp` (`testbed:gedf`)
on the same example. The testbed drives the same ledger as the simulator,
so the rule is the same; real timing moves the numbers by the work calibration and the
decisions' latency (measured here, other builds running: b spun 4.01-4.07 ms under msrp,
2.95-2.98 under mrsp), so each is checked within a margin, by medians and shares: a worker's
start may be late by a few ms now and then (its first especially, left out; a late `a` finds R
taken by b and spins itself, seen once in about ten runs here)."""

import pytest
import yaml

import rtsched
from conftest import REAL

pytestmark = REAL

MS = 1_000_000

PAIR = """\
platform: {cpus: 2}
run: {duration: 200ms, locking: LOCKING}
resources: [R]
tasks:
  - {name: a, period: 20ms, wcet: 8ms, priority: 2, cpu: 0, sections: [{resource: R, start: 0, length: 6ms}]}
  - {name: b, period: 20ms, offset: 2ms, wcet: 6ms, priority: 2, cpu: 1, sections: [{resource: R, start: 0, length: 4ms}]}
  - {name: c, period: 20ms, offset: 4ms, wcet: 1ms, priority: 3, cpu: 1}
"""

# The simulator's numbers (ms): b's spin and response, c's response.
SIMULATED = {"msrp": (4, 11, 7), "mrsp": (3, 10, 1)}


def test_msrp_and_mrsp_spin_on_the_testbed():
    for locking, (spin, b_resp, c_resp) in SIMULATED.items():
        ts = rtsched.load_taskset(yaml.safe_load(PAIR.replace("LOCKING", locking)))
        r = rtsched.run(ts, "testbed:pfp")
        j = r.jobs[r.jobs.job > 0]
        a, b, c = (j[j.task == t] for t in ("a", "b", "c"))
        assert len(b) >= 5 and (a.spin_ns == 0).mean() >= 0.7 and (c.spin_ns == 0).all(), (locking, j)
        med = b.spin_ns.median()
        assert (spin - 0.5) * MS <= med <= (spin + 0.6) * MS, (locking, b.spin_ns.describe())
        # MSRP's bound: at most a's 6 ms section.
        assert b.spin_ns.quantile(0.8) <= 6 * MS, (locking, b.spin_ns.describe())
        assert abs(b.response_ns.median() - b_resp * MS) <= 1.5 * MS, (locking, b.response_ns.describe())
        assert abs(c.response_ns.median() - c_resp * MS) <= 1.5 * MS, (locking, c.response_ns.describe())
        # The spin is CPU time of the job, as simulated.
        assert b.exec_ns.median() >= 6 * MS + 0.9 * med, (locking, b.exec_ns.describe())
        assert r.summary["max_spin_ns"] >= b.spin_ns.max(), locking


# FMLP+ (docs/locking.md "Suspending: fmlp+"; crates/sim/tests/fmlp.rs's first example, its
# period shortened to 20 ms): b suspends 1-4 (l runs), is handed R at 4 and, boosted, keeps h
# (released at 5) out until 6. Simulated (ms): b blocked 3, responds 9; h responds 3; l 11.
BOOSTED = """\
platform: {cpus: 2}
run: {duration: 200ms, locking: fmlp+}
resources: [R]
tasks:
  - {name: a, period: 20ms, wcet: 6ms, priority: 2, cpu: 0, sections: [{resource: R, start: 0, length: 4ms}]}
  - {name: l, period: 20ms, wcet: 5ms, priority: 1, cpu: 1}
  - {name: b, period: 20ms, offset: 1ms, wcet: 4ms, priority: 2, cpu: 1, sections: [{resource: R, start: 0, length: 2ms}]}
  - {name: h, period: 20ms, offset: 5ms, wcet: 2ms, priority: 3, cpu: 1}
"""


def test_fmlp_suspends_and_boosts_on_the_testbed():
    ts = rtsched.load_taskset(yaml.safe_load(BOOSTED))
    r = rtsched.run(ts, "testbed:pfp")
    j = r.jobs[r.jobs.job > 0]
    b, h, lo = (j[j.task == t] for t in ("b", "h", "l"))
    assert len(b) >= 5 and (j.spin_ns == 0).all(), j
    # b's wait is a suspension (direct blocking), not a spin: about 3 ms, at most a's 4 ms.
    assert 2.5 * MS <= b.blocked_ns.median() <= 3.6 * MS, b.blocked_ns.describe()
    assert b.blocked_ns.quantile(0.8) <= 4 * MS, b.blocked_ns.describe()
    assert abs(b.response_ns.median() - 9 * MS) <= 1.5 * MS, b.response_ns.describe()
    # h waits for the boosted b (3 ms, where it would take 2 without the boost).
    assert 2.6 * MS <= h.response_ns.median() <= 4.5 * MS, h.response_ns.describe()
    assert abs(lo.response_ns.median() - 11 * MS) <= 1.5 * MS, lo.response_ns.describe()


# The original ceiling protocol (docs/locking.md, the classic example; periods 20 ms): h
# preempts l at 1, requests R (held: direct blocking), l inherits h's priority and runs 1-4, h
# 4-6, m 6-11. Simulated (ms): h responds 5, blocked 3 direct; m responds 9, 2 of it
# inheritance blocking; l responds 4.
CLASSIC = """\
platform: {cpus: 1}
run: {duration: 200ms, locking: pcp:original}
resources: [R]
tasks:
  - {name: l, period: 20ms, wcet: 4ms, priority: 1, sections: [{resource: R, start: 0, length: 4ms}]}
  - {name: h, period: 20ms, offset: 1ms, wcet: 2ms, priority: 3, sections: [{resource: R, start: 0, length: 1ms}]}
  - {name: m, period: 20ms, offset: 2ms, wcet: 5ms, priority: 2}
"""


def test_the_original_ceiling_protocol_on_the_testbed():
    ts = rtsched.load_taskset(yaml.safe_load(CLASSIC))
    sim = rtsched.simulate(ts, "gfp:file").jobs
    r = rtsched.run(ts, "testbed:gfp:file")
    j = r.jobs[r.jobs.job > 0]
    h, m = j[j.task == "h"], j[j.task == "m"]
    assert len(h) >= 5 and (sim[sim.task == "h"].response_ns == 5 * MS).all(), (j, sim)
    assert abs(h.response_ns.median() - 5 * MS) <= 1.5 * MS, h.response_ns.describe()
    # h waits in R's queue for l's section (direct blocking), never longer than l's 4 ms.
    assert 2.5 * MS <= h.blocked_ns.median() <= 3.6 * MS, h.blocked_ns.describe()
    assert h.blocked_ns.quantile(0.8) <= 4 * MS, h.blocked_ns.describe()
    # m waits while l runs at h's priority: inheritance, about 2 ms.
    assert abs(m.response_ns.median() - 9 * MS) <= 1.5 * MS, m.response_ns.describe()
    assert 1.5 * MS <= m.blocked_inheritance_ns.median() <= 3 * MS, m.blocked_inheritance_ns.describe()
    assert r.scheduler == "testbed:gfp:file"


# The uniprocessor protocols on the classic example (docs/locking.md, its table; periods 20 ms,
# deadlines l 20, h 5, m 8 so that Baker's levels order them as the priorities do). Simulated
# (ms) under each: l 0-4 (pip: raised at 1 by h's request; pcp: at its ceiling from 0; srp: h
# and m withheld), h 4-6, m 6-11 — h responds 5 and m 9; what kept them waiting is the
# protocol's kind: pip h 3 direct and m 2 inheritance, pcp and srp h 3 and m 2 ceiling.
UNIPROCESSOR = """\
platform: {cpus: 1}
run: {duration: 200ms, locking: LOCKING}
resources: [R]
tasks:
  - {name: l, period: 20ms, deadline: 20ms, wcet: 4ms, priority: 1, sections: [{resource: R, start: 0, length: 4ms}]}
  - {name: h, period: 20ms, deadline: 5ms, offset: 1ms, wcet: 2ms, priority: 3, sections: [{resource: R, start: 0, length: 1ms}]}
  - {name: m, period: 20ms, deadline: 8ms, offset: 2ms, wcet: 5ms, priority: 2}
"""


@pytest.mark.parametrize("locking, spec, h_kind, m_kind", [
    ("pip", "gfp:file", "blocked_ns", "blocked_inheritance_ns"),
    ("pcp", "gfp:file", "blocked_ceiling_ns", "blocked_ceiling_ns"),
    ("srp", "gedf", "blocked_ceiling_ns", "blocked_ceiling_ns")])
def test_the_uniprocessor_protocols_on_the_testbed(locking, spec, h_kind, m_kind):
    ts = rtsched.load_taskset(yaml.safe_load(UNIPROCESSOR.replace("LOCKING", locking)))
    sim = rtsched.simulate(ts, spec).jobs
    expect = {"h": (5 * MS, 3 * MS), "m": (9 * MS, 2 * MS)}
    for t, kind in (("h", h_kind), ("m", m_kind)):
        got = sim[sim.task == t]
        assert (got.response_ns == expect[t][0]).all() and (got[kind] == expect[t][1]).all(), (locking, sim)
    r = rtsched.run(ts, f"testbed:{spec}")
    assert r.scheduler == f"testbed:{spec}"
    j = r.jobs[r.jobs.job > 0]
    for t, kind in (("h", h_kind), ("m", m_kind)):
        x = j[j.task == t]
        assert len(x) >= 5, j
        # Bounded: the response near the simulator's (not m's 10 ms of a plain mutex for h),
        # and the wait of the protocol's kind about the simulated one.
        assert abs(x.response_ns.median() - expect[t][0]) <= 1.5 * MS, (locking, t, x.response_ns.describe())
        assert abs(x[kind].median() - expect[t][1]) <= 1 * MS, (locking, t, kind, x[kind].describe())


# MrsP's helping (docs/locking.md "Helping"; crates/sim/tests/helping.rs, its period shortened
# to 20 ms): l takes R at 0 on CPU 0, x (above R's local ceiling there) preempts it at 2, and
# l migrates to CPU 1, where a has spun since 1, to run its section's last 2 ms there; a is
# handed R at 4. Simulated (ms): a spins 1 (7 without helping), responds 5; l migrates twice
# per job (to CPU 1 and back), one helping migration per period; l responds 7, x 4.
HELPING = """\
platform: {cpus: 2}
run: {duration: 200ms, locking: mrsp}
resources: [R]
tasks:
  - {name: l, period: 20ms, wcet: 5ms, priority: 1, cpu: 0, sections: [{resource: R, start: 0, length: 4ms}]}
  - {name: x, period: 20ms, offset: 2ms, wcet: 4ms, priority: 3, cpu: 0}
  - {name: a, period: 20ms, offset: 1ms, wcet: 2ms, priority: 2, cpu: 1, sections: [{resource: R, start: 0, length: 1ms}]}
"""


def test_mrsp_helping_on_the_testbed():
    ts = rtsched.load_taskset(yaml.safe_load(HELPING))
    sim = rtsched.simulate(ts, "pfp")
    assert sim.summary["helping_migrations"] == 10, sim.summary
    r = rtsched.run(ts, "testbed:pfp")
    j = r.jobs[r.jobs.job > 0]
    lo, a = j[j.task == "l"], j[j.task == "a"]
    assert len(a) >= 5, j
    # The holder runs on both CPUs: it went to a's CPU and came back.
    assert (lo.migrations >= 2).mean() >= 0.7, lo[["migrations", "cpus"]]
    assert r.summary["helping_migrations"] >= 5, r.summary
    # a's spin is bounded by l's section (4 ms): about 1 ms, where it would be 7 without helping.
    assert a.spin_ns.median() <= 2 * MS and a.spin_ns.quantile(0.8) <= 4 * MS, a.spin_ns.describe()
    assert abs(a.response_ns.median() - 5 * MS) <= 1.5 * MS, a.response_ns.describe()
    assert abs(lo.response_ns.median() - 7 * MS) <= 1.5 * MS, lo.response_ns.describe()
