"""Parallel regions and critical sections in the kernel backends, run for real (needs root or
CAP_SYS_NICE; CI runs as root): real fork-join on helper threads, the simulator's per-thread
demands, blocking on real mutexes against hand-worked schedules, priority inheritance with
the `pi` option, and cleanup after Ctrl-C while threads hold and wait for mutexes.

This machine is a 2-vCPU VM with bursts of host steal and other builds running beside the
tests; a real run waits until no other process runs one (their SCHED_FIFO workers would preempt
ours), and timing assertions rerun (run_until_clean) and excuse only what test_real.py excuses."""

import os
import signal
import subprocess
import time

import pytest

import rtsched
from conftest import REAL, RTSCHED, run_cli
from test_real import rtsched_threads, run_until_clean

pytestmark = REAL

MS = 1_000_000


def threads_of(pid):
    """rtsched threads of one process (other engineers' runs on this machine have their own)."""
    return [t for t in rtsched_threads() if t[0] == str(pid)]


def others_running():
    """Real runs of other processes (another checkout's tests on this shared machine): their
    SCHED_FIFO workers preempt ours and would be measured as our scheduler."""
    me = str(os.getpid())
    return sorted({pid for pid, _ in rtsched_threads() if pid != me})


def wait_quiet(wait=120):
    """Until no other process has run a real run for a second (at most `wait` s)."""
    deadline, quiet_since = time.time() + wait, time.time()
    while time.time() < deadline and time.time() - quiet_since < 1.0:
        if others_running():
            quiet_since = time.time()
        time.sleep(0.1)


def run(ts, backend):
    """A real run, started when no other process runs one. Their SCHED_DEADLINE reservations
    can also take the bandwidth ours need: a refused admission is tried again (these task sets
    need at most half of it)."""
    for attempt in range(3):
        wait_quiet()
        try:
            return rtsched.run(ts, backend)
        except rtsched.InputError as e:
            if "refused SCHED_DEADLINE admission" not in str(e) or attempt == 2:
                raise


def load(text, name="t.yaml"):
    return rtsched.parse_taskset(text, "yaml", name)


def stolen(r):
    return r.measurements.get("host.steal_ms", 0) > 0


# (a) One task, one region of two 20 ms threads, on 2 CPUs: run in parallel a job takes 20 ms,
# one after the other 40 ms.
FORK = """platform: {cpus: 2}
run: {duration: 1s, seed: 3}
tasks:
  - name: p
    period: 100
    regions: [[20ms, 20ms]]
"""


def spans(r):
    """Per job: the time span of each thread's execution intervals."""
    iv = r.intervals
    return {job: {th: (x.start_ns.min(), x.end_ns.max()) for th, x in g.groupby("thread")} for job, g in iv.groupby("job")}


def overlap_ratios(r):
    """Per job: how much of the shorter thread span overlaps the other (0 if run one after the other)."""
    out = []
    for _job, sp in spans(r).items():
        (s0, e0), (s1, e1) = sp[0], sp[1]
        out.append(max(0, min(e0, e1) - max(s0, s1)) / min(e0 - s0, e1 - s1))
    return out


@pytest.mark.parametrize("backend", ["kernel:fifo", "kernel:deadline"])
def test_a_region_of_two_threads_runs_in_parallel(backend):
    ts = load(FORK)

    def parallel(r):
        took = r.jobs.finish_ns - r.jobs.start_ns
        return (took < 30 * MS).all() and all(c == [0, 1] for c in r.jobs.cpus)

    r = run_until_clean(run(ts, backend), lambda: run(ts, backend), parallel)
    j = r.jobs
    took = j.finish_ns - j.start_ns
    assert len(j) == 10 and j.finish_ns.notna().all()
    assert (j.demand_ns == 40 * MS).all()
    # Measured here: 20.1 ms per job, both CPUs, every job. Run one after the other it would be
    # >= 40 ms; a burst of host steal may stretch a job or two.
    if stolen(r):
        # Host steal (up to a third of a run in CI: 310 ms of 1 s once, with a median job of
        # 36 ms) stretches jobs unevenly. What it cannot fake: the two threads' execution spans
        # overlapping in most jobs (0 one after the other), and jobs shorter than the 40 ms a
        # one-after-the-other run needs at least.
        ov = sorted(overlap_ratios(r))
        assert ov[len(ov) // 2] > 0.5 and took.min() < 35 * MS, (took.tolist(), ov, r.measurements.get("host.steal_ms"))
        assert (took < 40 * MS).sum() >= 0.3 * len(j), (took.tolist(), r.measurements.get("host.steal_ms"))
        assert sum(c == [0, 1] for c in j.cpus) >= 0.5 * len(j), j.cpus.tolist()
    else:
        assert (took < 30 * MS).all(), took.tolist()
        assert sum(c == [0, 1] for c in j.cpus) >= 0.8 * len(j), j.cpus.tolist()
    # Each job: thread 0 (the task's thread) and thread 1 (its helper) both ran, at the same time.
    for job, sp in spans(r).items():
        assert set(sp) == {0, 1}, (job, sp)
    assert r.jobs.context_switches.min() >= 2


def test_a_region_of_two_threads_overlaps_under_sched_other():
    """CFS decides where the two threads go; with other builds running on this machine it
    sometimes keeps both on one CPU for a whole job (measured here: 50-70 ms per job under load,
    20 ms when quiet). What must hold regardless: the two threads of a region are runnable at the
    same time (their execution spans overlap: fork before join), and CFS does spread them over
    both CPUs in some jobs."""
    ts = load(FORK)

    def ok(r):
        return any(c == [0, 1] for c in r.jobs.cpus)

    r = run_until_clean(run(ts, "kernel:other"), lambda: run(ts, "kernel:other"), ok)
    assert ok(r), r.jobs.cpus.tolist()
    overlaps = overlap_ratios(r)
    # Run one after the other, the spans would not overlap at all.
    assert sorted(overlaps)[len(overlaps) // 2] > 0.5, overlaps


# (b) Demands. Thread demands are drawn per thread, region then thread order, from the task's
# own stream: the real run must see exactly the simulator's draws. Every thread of `par` has
# WCET 8 ms, so its draws are those of a sequential task with WCET 8 ms at the same index
# (the same stream), three per job: the simulator gives them for a surrogate task released
# three times as often.
DEMANDS = """platform: {cpus: 2}
run: {duration: 600, seed: 11, execution: {model: uniform, min: 0.3, max: 1.0}}
tasks:
  - {name: seq, period: 30, wcet: 6}
  - name: par
    period: 60
    regions: [{threads: 2, wcet: 8ms}, 8ms]
    sections: [{resource: r, region: 0, thread: 1, start: 1ms, length: 2ms}]
  - {name: other, period: 40, wcet: 4, sections: [{resource: r, start: 0, length: 3}]}
"""


@pytest.mark.parametrize("backend", ["kernel:fifo", "kernel:other"])
def test_thread_demands_are_the_simulators_draws(backend):
    ts = load(DEMANDS)
    result = run(ts, backend)
    real = result.jobs
    sim = rtsched.simulate(ts, "gedf").jobs
    surrogate = rtsched.simulate(load(DEMANDS.replace(
        """  - name: par
    period: 60
    regions: [{threads: 2, wcet: 8ms}, 8ms]
    sections: [{resource: r, region: 0, thread: 1, start: 1ms, length: 2ms}]""", "  - {name: par, period: 20, wcet: 8}")), "gedf").jobs
    for task in ("seq", "other"):
        assert real[real.task == task].demand_ns.tolist() == sim[sim.task == task].demand_ns.tolist(), task
    draws = surrogate[surrogate.task == "par"].demand_ns.tolist()
    assert len(draws) == 30
    expected = [sum(draws[3 * j:3 * j + 3]) for j in range(10)]
    got = real[real.task == "par"].demand_ns.tolist()
    assert got == expected
    # And directly: the simulator's own parallel jobs have the same demands.
    assert got == sim[sim.task == "par"].demand_ns.tolist()
    assert len(set(draws)) > 20, "the uniform model must actually vary the demands"
    if backend == "kernel:fifo":
        # The threads really execute their own draws: thread 1 of job j (a helper; the only
        # thread of its lane) is busy for draw 3j + 1. Nothing else competes at these
        # priorities, so its execution intervals add up to about that draw: measured 0.94-0.99
        # of it (the host's time at each tick and its steal bursts run on the thread's CPU
        # clock but leave gaps in its intervals), one job at 0.82 in a burst. Executing other
        # draws (another stream) puts most jobs far outside 0.9-1.1.
        iv = result.intervals
        iv = iv[(iv.task == "par") & (iv.thread == 1)]
        busy = (iv.end_ns - iv.start_ns).groupby(iv.job).sum()
        ratio = [busy.get(j, 0) / draws[3 * j + 1] for j in range(10)]
        assert sum(0.9 <= x <= 1.1 for x in ratio) >= 8 and 0.93 <= sorted(ratio)[5] <= 1.05, ratio
    done = real.dropna(subset=["finish_ns"])
    # Each job ran at least its longest path: max(thread 0, thread 1) + thread 2 >= demand / 3.
    assert (done.finish_ns - done.start_ns >= done.demand_ns / 3 * 0.98).all()


# (c) Blocking on a real mutex, worked by hand (ms). Global SCHED_FIFO (or SCHED_DEADLINE) on
# 2 CPUs, each task on its own CPU:
#   a: released 0,  runs 0-5, holds r 5-25, runs 25-30: finishes at 30, never blocked
#   b: released 10, runs 10-15, requests r at 15: blocked 15-25 (10 ms), holds r 25-45, runs
#      45-50: finishes at 50 (response 40; without the mutex it would be 30)
SHARED = """platform: {cpus: 2}
run: {duration: 1s, seed: 2}
resources: [r]
tasks:
  - {name: a, period: 100, wcet: 30, sections: [{resource: r, start: 5, length: 20}]}
  - {name: b, period: 100, wcet: 30, offset: 10, sections: [{resource: r, start: 5, length: 20}]}
"""


@pytest.mark.parametrize("backend", ["kernel:fifo", "kernel:fifo:pi", "kernel:deadline"])
def test_blocked_time_matches_the_hand_worked_schedule(backend):
    ts = load(SHARED)

    def as_worked(r):
        j = r.jobs
        a, b = j[j.task == "a"], j[j.task == "b"]
        return (a.blocked_ns == 0).all() and b.blocked_ns.between(7 * MS, 14 * MS).all()

    r = run_until_clean(run(ts, backend), lambda: run(ts, backend), as_worked, attempts=5)
    j = r.jobs
    a, b = j[j.task == "a"].reset_index(), j[j.task == "b"].reset_index()
    assert len(a) == len(b) == 10
    assert (a.blocked_ns == 0).all(), a.blocked_ns.tolist()
    # Measured here: b blocked 9.9-10.5 ms in quiet runs; a burst of host steal at a wake-up
    # moves a job or two (6.7, 13.5, 23 ms seen; more often with :pi, whose spinning waiter
    # keeps both vCPUs busy). Without the mutex b is never blocked.
    ok = b.blocked_ns.between(7 * MS, 14 * MS)
    assert ok.all() or (stolen(r) and ok.mean() >= 0.8), (b.blocked_ns.tolist(), r.measurements.get("host.steal_ms"))
    # The mutex excludes: b's section starts only when a's ends, so b finishes 20 ms after a
    # (10 ms without the mutex) and its response is 40 ms (30 ms without).
    gap = b.finish_ns - a.finish_ns
    assert (gap >= 18 * MS).mean() >= 0.8 and (b.response_ns >= 37 * MS).mean() >= 0.8, (gap.tolist(), b.response_ns.tolist())
    m = r.measurements
    assert m["resource.r.max_holders"] == 1
    assert m["resource.r.acquisitions"] == 20
    assert m["resource.r.contended"] >= 8
    # Blocking is not preemption: b waits off its CPU.
    assert b.preemptions.sum() <= 2, b.preemptions.tolist()
    assert r.summary["missed"] == 0 or stolen(r)


def test_deadline_with_pi_blocks_as_worked_in_the_first_job():
    """With PTHREAD_PRIO_INHERIT the mutex is a kernel rt_mutex, whose waiter spins while the
    owner runs on another CPU (adaptive spinning): b's 10 ms wait is CPU time charged to its
    reservation (33 ms for 30 ms of work), so b's first job is throttled to its next period and
    the later jobs drift (docs/real-runs.md, "Findings"). The first jobs are as worked by hand."""
    ts = load(SHARED)

    def first_as_worked(r):
        j = r.jobs
        return j.blocked_ns[j.task == "a"].iloc[0] == 0 and 8 * MS <= j.blocked_ns[j.task == "b"].iloc[0] <= 13 * MS

    r = run_until_clean(run(ts, "kernel:deadline:pi"), lambda: run(ts, "kernel:deadline:pi"), first_as_worked)
    assert r.scheduler == "kernel:deadline:pi"
    assert first_as_worked(r) or stolen(r), r.jobs.head(2)
    assert r.measurements["resource.r.max_holders"] == 1 and r.measurements["resource.r.acquisitions"] == 20


# (d) Priority inheritance, worked by hand (ms). One CPU, SCHED_FIFO, the file's priorities
# (L 10 < M 20 < H 30):
#   L: released 0, runs 0-5 (takes r at work 2).
#   H: released 5, preempts L, runs 5-6 and requests r: blocked.
#   M: released 7.
#   Without inheritance: L runs 6-7, M preempts it and runs 7-27, L runs 27-33 and releases r:
#     H blocked 6-33 = 27 ms, finishes at 36.
#   With `pi`: L runs at H's priority from 6, M waits; L releases r at 13: H blocked 7 ms,
#     finishes at 16.
INVERSION = """platform: {cpus: 1}
run: {duration: 1s, seed: 1}
tasks:
  - {name: L, period: 100, wcet: 20, priority: 10, cpu: 0, sections: [{resource: r, start: 2, length: 10}]}
  - {name: H, period: 100, wcet: 4, priority: 30, cpu: 0, offset: 5, sections: [{resource: r, start: 1, length: 2}]}
  - {name: M, period: 100, wcet: 20, priority: 20, cpu: 0, offset: 7}
"""


@pytest.mark.parametrize("backend, blocked_ms, response_ms", [("kernel:fifo", 27, 31), ("kernel:fifo:pi", 7, 11)])
def test_priority_inheritance_bounds_the_inversion(backend, blocked_ms, response_ms):
    ts = load(INVERSION)

    def h(r):
        return r.jobs[r.jobs.task == "H"]

    def as_worked(r):
        return h(r).blocked_ns.between((blocked_ms - 1.5) * MS, (blocked_ms + 2.5) * MS).all()

    r = run_until_clean(run(ts, backend), lambda: run(ts, backend), as_worked)
    # Measured here: H blocked 27.2 ms (response 31.2) without, 7.1 ms (11.2) with inheritance.
    hb = h(r).blocked_ns
    ok = hb.between((blocked_ms - 1.5) * MS, (blocked_ms + 2.5) * MS)
    assert ok.all() or (stolen(r) and ok.mean() >= 0.8), (hb.tolist(), r.measurements.get("host.steal_ms"))
    assert (h(r).response_ns.median() - response_ms * MS) < 2.5 * MS
    assert r.scheduler == ("kernel:fifo:file:pi" if backend.endswith(":pi") else "kernel:fifo:file") + " (partitioned)"


# Issue 56's golden example on 1 CPU (docs/locking.md): l (priority 1, 4 ms, holding R for
# all 4 ms from its release at 0), h (3, released at 1 ms, 2 ms, R for its first 1 ms), m (2,
# released at 2 ms, 5 ms, no resource). Without a protocol h blocks on R at 1, m preempts l:
# l 0-2, m 2-7, l 7-9, h 9-11, h responds in 10 ms (blocked 8). Under pcp l runs at R's
# ceiling (h's priority) from its lock: l 0-4, h 4-6, h responds in 5 ms, never waiting in
# the mutex (it runs only once l has released R).
GOLDEN = """platform: {cpus: 1}
run: {duration: 200ms, seed: 1}
tasks:
  - {name: l, period: 50, wcet: 4, priority: 1, cpu: 0, sections: [{resource: R, start: 0, length: 4}]}
  - {name: h, period: 50, wcet: 2, priority: 3, cpu: 0, offset: 1, sections: [{resource: R, start: 0, length: 1}]}
  - {name: m, period: 50, wcet: 5, priority: 2, cpu: 0, offset: 2}
"""


@pytest.mark.parametrize("locking, backend, response_ms", [
    ("none", "kernel:fifo", 10), ("none", "kernel:fifo:pcp", 5), ("pcp", "kernel:fifo:file", 5)])
def test_the_priority_ceiling_bounds_the_golden_inversion(locking, backend, response_ms):
    """PTHREAD_PRIO_PROTECT at R's ceiling (kernel:fifo:pcp, or the file's `locking: pcp`
    under plain kernel:fifo:file) against a plain mutex (the control): h's response, its time
    blocked in the mutex, as worked above. 4 jobs each."""
    ts = load(GOLDEN.replace("seed: 1}", f"seed: 1, locking: {locking}}}"))

    def h(r):
        return r.jobs[r.jobs.task == "h"]

    def as_worked(r):
        return h(r).response_ns.between((response_ms - 0.2) * MS, (response_ms + 1.5) * MS).all()

    r = run_until_clean(run(ts, backend), lambda: run(ts, backend), as_worked)
    # Measured here (docs/locking.md "Real runs"): h 10.16-10.33 ms, blocked 8.12-8.27, without;
    # 5.12-5.18 ms, blocked 0, with pcp.
    rt, hb = h(r).response_ns, h(r).blocked_ns
    ok = rt.between((response_ms - 0.2) * MS, (response_ms + 1.5) * MS)
    assert len(rt) >= 3 and (ok.all() or (stolen(r) and ok.mean() >= 0.75)), (rt.tolist(), r.measurements.get("host.steal_ms"))
    if response_ms == 5:
        assert (hb < 0.5 * MS).all(), hb.tolist()
        assert r.scheduler == "kernel:fifo:file:pcp (partitioned)"
    else:
        assert (hb.median() - 8 * MS) < 1.5 * MS and hb.median() > 7 * MS, hb.tolist()


@pytest.mark.parametrize("backend, message", [
    ("kernel:fifo:pie", "kernel:fifo: unknown option or priority assignment 'pie' (known: rm, dm, file, pi, pcp)"),
    ("kernel:fifo:pi:pcp", "kernel:fifo: choose one locking protocol, got 'pi' and 'pcp'"),
    ("kernel:deadline:pcp", "kernel:deadline: unknown option 'pcp' (known: reclaim, pi)"),
    ("kernel:deadline:inherit", "kernel:deadline: unknown option 'inherit' (known: reclaim, pi)"),
    ("kernel:other:rm", "kernel:other: unknown option 'rm' (known: pi)"),
    ("kernel:fifo:rm:dm", "kernel:fifo: choose one priority assignment, got 'rm' and 'dm' (known: rm, dm, file)"),
])
def test_bad_backend_options_are_refused(tmp_path, backend, message):
    p = tmp_path / "s.yaml"
    p.write_text(SHARED)
    r = run_cli("run", p, "-b", backend)
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr


def test_pi_is_listed_in_the_help():
    r = run_cli("run", "--help", check=0)
    assert ":pi" in r.stdout


def test_helper_reservations_are_admitted_or_refused_with_the_bandwidth_they_need():
    # U = 1.8 fits 2 CPUs, but four reservations of 4.5 ms + 10% per 10 ms (1.98) exceed the
    # kernel's 95% real-time bandwidth (1.9): refused with an explanation, no thread left.
    ts = load("""platform: {cpus: 2}
run: {duration: 200}
tasks:
  - {name: p, period: 10, regions: [[4.5ms, 4.5ms]]}
  - {name: q, period: 10, regions: [[4.5ms, 4.5ms]]}
""")
    with pytest.raises(rtsched.InputError) as e:
        rtsched.run(ts, "kernel:deadline")
    assert "admission" in str(e.value) and "one reservation per thread of a parallel task" in str(e.value)
    assert threads_of(os.getpid()) == []


# (e) Ctrl-C while threads hold and wait for mutexes: a and b hold r for most of their work and
# overlap (one always waits for the other); p's helper takes r too.
CONTENDED = """platform: {cpus: 2}
run: {duration: 30s, seed: 4}
resources: [r]
tasks:
  - {name: a, period: 50, wcet: 30, sections: [{resource: r, start: 0, length: 30}]}
  - {name: b, period: 50, wcet: 30, offset: 5, sections: [{resource: r, start: 0, length: 30}]}
  - name: p
    period: 50
    regions: [[5ms, 5ms]]
    sections: [{resource: r, region: 0, thread: 1, start: 1ms, length: 3ms}]
"""


@pytest.mark.parametrize("backend", ["kernel:fifo", "kernel:fifo:pi", "kernel:deadline", "kernel:other"])
def test_ctrl_c_with_mutexes_held_stops_every_thread(tmp_path, backend):
    p = tmp_path / "contended.yaml"
    p.write_text(CONTENDED)
    policy_before = os.sched_getscheduler(0)
    for attempt in range(3):
        wait_quiet()
        proc = subprocess.Popen([RTSCHED, "run", str(p), "-b", backend, "--json", str(tmp_path / "r.json")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 10
        while len(threads_of(proc.pid)) < 4 and proc.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        if proc.poll() is None or attempt == 2:
            break
        # Another process's SCHED_DEADLINE reservations can take the bandwidth: try again.
        err = proc.communicate()[1]
        assert "refused SCHED_DEADLINE admission" in err, err
    names = threads_of(proc.pid)
    assert len(names) == 4, f"the run never started its 4 threads (a, b, p and p's helper): {names}, exit {proc.poll()}"
    time.sleep(1.0)
    t0 = time.time()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert time.time() - t0 < 5
    assert proc.returncode == 130, err
    # It exited by itself (run() returns only after joining every thread), so no thread survived.
    assert "interrupted" in err and "Traceback" not in err
    assert threads_of(proc.pid) == []
    assert not (tmp_path / "r.json").exists()
    assert os.sched_getscheduler(0) == policy_before
