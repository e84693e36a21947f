"""msrp and mrsp on kernel:fifo, run for real (docs/locking.md "Real runs"): the 2-CPU
example of docs/locking.md ("The 2-CPU example"; crates/sim/tests/spinning.rs), period 20 ms,
200 ms under each protocol. R is global: a (CPU 0) holds it 0-6 ms; b (CPU 1, released at 2)
requests it and spins on a FIFO spin lock until 6; c (CPU 1, at 4, above b) uses nothing.
Under msrp b spins at SCHED_FIFO 90, above c (non-preemptive): b spins 4 ms, responds 11, c 7;
under mrsp at its local ceiling (its own level): c preempts the spin, b spins 3 ms (its thread
CPU clock stops while preempted), responds 10, c 1 — the simulator's numbers.

Checked: b spins (> 0) and within the analysis' spin bound (p-fp-rta-file's spin_ns under msrp:
a's 6 ms section; under mrsp the analysis gives the same term, counting on helping, which the
kernel form does not do — the term holds here all the same because a, the only holder on the
other CPU, is alone there and never preempted) plus 0.5 ms for this VM (wake-up, interrupts charged
to the thread's clock); medians of the responses within 1.5 ms of the simulator's; the spin is
CPU time of the job and not blocking. Jobs after the first (a late first start is the
harness'); a run is redone up to twice when it is not clean, and a dirty last run is excused
only with host steal, as the other real tests do. About 1 s per protocol here."""

import pytest
import yaml

import rtsched
from conftest import REAL
from test_kernel_structure import run, stolen
from test_real import run_until_clean

pytestmark = REAL

MS = 1_000_000
TOLERANCE = 0.5 * MS

PAIR = """\
platform: {cpus: 2}
run: {duration: 200ms, locking: LOCKING}
resources: [R]
tasks:
  - {name: a, period: 20ms, wcet: 8ms, priority: 2, cpu: 0, sections: [{resource: R, start: 0, length: 6ms}]}
  - {name: b, period: 20ms, offset: 2ms, wcet: 6ms, priority: 2, cpu: 1, sections: [{resource: R, start: 0, length: 4ms}]}
  - {name: c, period: 20ms, offset: 4ms, wcet: 1ms, priority: 3, cpu: 1}
"""


def spin_bounds(ts_msrp):
    """Per task, the analysis' spin bound (p-fp-rta-file under msrp)."""
    (v,) = [v for v in rtsched.analyze(ts_msrp) if v["test"] == "p-fp-rta-file"]
    return {t["task"]: t["spin_ns"] for t in v["tasks"]}


@pytest.mark.parametrize("locking", ["msrp", "mrsp"])
def test_msrp_and_mrsp_spin_on_kernel_fifo(locking):
    ts = rtsched.load_taskset(yaml.safe_load(PAIR.replace("LOCKING", locking)))
    bound = spin_bounds(rtsched.load_taskset(yaml.safe_load(PAIR.replace("LOCKING", "msrp"))))
    assert bound == {"a": 4 * MS, "b": 6 * MS, "c": 0}, bound
    sim = rtsched.simulate(ts, "pfp").jobs
    expect = {t: sim[sim.task == t].response_ns.median() for t in "abc"}
    spin_b = sim[sim.task == "b"].spin_ns.median()
    assert (expect["b"], expect["c"], spin_b) == {"msrp": (11 * MS, 7 * MS, 4 * MS), "mrsp": (10 * MS, 1 * MS, 3 * MS)}[locking]

    def jobs(r):
        return r.jobs[r.jobs.job > 0]

    def clean(r):
        j = jobs(r)
        within = all((j[j.task == t].spin_ns <= bound[t] + TOLERANCE).all() for t in "abc")
        near = all(abs(j[j.task == t].response_ns.median() - expect[t]) <= 1.5 * MS for t in "abc")
        return within and near

    r = run_until_clean(run(ts, "kernel:fifo"), lambda: run(ts, "kernel:fifo"), clean)
    steal = r.measurements.get("host.steal_ms")
    assert r.scheduler == f"kernel:fifo:file:{locking} (partitioned)", r.scheduler
    j = jobs(r)
    a, b, c = (j[j.task == t] for t in "abc")
    assert len(b) >= 5, j
    # b must spin (a holds R until 6, b asks at 2), by about the simulated time; c never does.
    assert (b.spin_ns > 0).all() and (c.spin_ns == 0).all(), (b.spin_ns.tolist(), c.spin_ns.tolist())
    assert abs(b.spin_ns.median() - spin_b) <= 0.6 * MS, (locking, b.spin_ns.tolist())
    # Spinning is not blocking, and it is CPU time of the job.
    assert (j.blocked_ns == 0).all(), j.blocked_ns.tolist()
    assert b.exec_ns.median() >= 6 * MS + 0.9 * b.spin_ns.median(), b.exec_ns.tolist()
    # ... of its own work, not overhead (measured about 0.06 ms of overhead per job here).
    assert b.overhead_ns.median() < 0.5 * MS, b.overhead_ns.tolist()
    assert r.summary["max_spin_ns"] >= b.spin_ns.max(), r.summary
    ok = clean(r)
    assert ok or stolen(r), (locking, j[["task", "job", "spin_ns", "response_ns"]].to_string(), steal)


def test_the_control_without_a_protocol_blocks_instead_of_spinning():
    """Control: the same set under `none` on a plain mutex — b sleeps in it (blocked about 4 ms,
    as simulated) and nothing spins, so the spin measured above is the spin lock's."""
    ts = rtsched.load_taskset(yaml.safe_load(PAIR.replace("LOCKING", "none")))
    sim = rtsched.simulate(ts, "pfp").jobs
    assert sim[sim.task == "b"].blocked_ns.median() == 4 * MS and (sim.spin_ns == 0).all()
    r = run(ts, "kernel:fifo")
    j = r.jobs[r.jobs.job > 0]
    b = j[j.task == "b"]
    assert len(b) >= 5 and (j.spin_ns == 0).all(), j.spin_ns.tolist()
    assert abs(b.blocked_ns.median() - 4 * MS) <= 0.6 * MS or stolen(r), (b.blocked_ns.tolist(), r.measurements.get("host.steal_ms"))
