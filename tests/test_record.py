"""`rtsched record`: trace parsing and task extraction on hand-worked event lists (issue #39;
docs/workloads.md). Real recordings: tests/test_record_real.py."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rtsched
from conftest import RTSCHED, run_cli
from rtsched import record as rec

# Verbatim lines of this machine's outputs (trace-cmd 3.1.6 report of a .dat extracted from a
# tracefs instance "rt39probe"; tracefs trace_pipe of kernel 6.18).
TRACECMD_RAW = """\
cpus=2
rt39probe:             bash-19325 [000] 14593.058857055: sched_process_fork:    parent_comm=bash parent_pid=19325 child_comm=bash child_pid=19328
rt39probe:             bash-19325 [000] 14593.058877585: sched_wakeup_new:      comm=bash pid=19328 prio=120 target_cpu=001
rt39probe:             bash-19325 [000] 14593.058928019: sched_switch:          prev_comm=bash prev_pid=19325 prev_prio=120 prev_state=1 next_comm=swapper/0 next_pid=0 next_prio=120
rt39probe:              cat-19328 [001] 14593.059387390: sched_process_exit:    comm=cat pid=19328 prio=120 group_dead=1
rt39probe:              cat-19328 [001] 14593.059443154: sched_switch:          prev_comm=cat prev_pid=19328 prev_prio=120 prev_state=32 next_comm=swapper/1 next_pid=0 next_prio=120
rt39probe:           <idle>-0     [000] 14593.059449206: sched_wakeup:          comm=bash pid=19325 prio=120 target_cpu=000
rt39probe:           <idle>-0     [000] 14593.059450589: sched_switch:          prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=0 next_comm=bash next_pid=19325 next_prio=120
"""
TRACECMD_PLUGIN = """\
rt39probe:             bash-19325 [000] 14593.058857: sched_process_fork:   comm=bash pid=19325 child_comm=bash child_pid=19328
rt39probe:             bash-19325 [000] 14593.058878: sched_wakeup_new:     bash:19328 [120] CPU:001
rt39probe:             bash-19325 [000] 14593.058928: sched_switch:         bash:19325 [120] S ==> swapper/0:0 [120]
rt39probe:              cat-19328 [001] 14593.059387: sched_process_exit:   comm=cat pid=19328 prio=120 group_dead=true
rt39probe:              cat-19328 [001] 14593.059443: sched_switch:         cat:19328 [120] X ==> swapper/1:0 [120]
"""


def tracefs_lines(events):
    """tracefs trace_pipe lines (the kernel's print formats) of (µs, kind, fields…) tuples:
    ("w", tid, comm, prio), ("s", prev, prev_comm, prev_prio, state, next, next_comm, next_prio),
    ("f", parent, child), ("x", tid, comm)."""
    out = []
    for ev in events:
        t, k = ev[0], ev[1]
        ts = f"{100 + t // 1_000_000}.{t % 1_000_000:06d}"
        if k == "w":
            _, _, tid, comm, prio = ev
            out.append(f"          <idle>-0       [000] d.h2. {ts}: sched_wakeup: comm={comm} pid={tid} prio={prio} target_cpu=000")
        elif k == "s":
            _, _, p, pc, pp, st, n, nc, np_ = ev
            out.append(f"{pc:>16}-{p:<7} [001] d..2. {ts}: sched_switch: prev_comm={pc} prev_pid={p} prev_prio={pp} "
                       f"prev_state={st} ==> next_comm={nc} next_pid={n} next_prio={np_}")
        elif k == "f":
            _, _, parent, child = ev
            out.append(f"            app-{parent:<7} [000] ..... {ts}: sched_process_fork: comm=app pid={parent} child_comm=app child_pid={child}")
        elif k == "x":
            _, _, tid, comm = ev
            out.append(f"{comm:>16}-{tid:<7} [000] ..... {ts}: sched_process_exit: comm={comm} pid={tid} prio=79 group_dead=false")
    return "\n".join(out) + "\n"


def on(t, tid, comm="job", prio=79, prev=0):
    return (t, "s", prev, "swapper/1" if prev == 0 else "other", 120, "R", tid, comm, prio)


def off(t, tid, state, comm="job", prio=79):
    return (t, "s", tid, comm, prio, state, 0, "swapper/1", 120)


# Thread 5 ("job", kernel prio 79 = SCHED_FIFO 20), times in µs:
#   wakeup 0, in 10, preempted (R+) 300, in 500, sleeps 1200   → CPU 290 + 700 = 990
#   wakeup 10000, in 10020, sleeps 11020                       → 1000
#   wakeup 20000, (switch-in missing), sleeps 21100            → 1100 (from the wakeup; inferred)
#   wakeup 30000, in 30005, sleeps 31005                       → 1000
#   wakeup 40000, in 40010, exits (X) 40500                    → left out (ended by exit)
JOB = [
    (0, "w", 5, "job", 79), on(10, 5), off(300, 5, "R+"), on(500, 5), off(1200, 5, "S"),
    (10000, "w", 5, "job", 79), on(10020, 5), off(11020, 5, "S"),
    (20000, "w", 5, "job", 79), off(21100, 5, "S"),
    (30000, "w", 5, "job", 79), on(30005, 5), off(31005, 5, "D"),
    (40000, "w", 5, "job", 79), on(40010, 5), (40400, "x", 5, "job"), off(40500, 5, "X"),
]
# Thread 6 ("irq", 79): running when the trace starts (partial, left out), then wakes at
# 1000, 4000, 4500, 12000 µs and runs 100 µs each: inter-activation 3000, 500, 7500.
IRQ = [
    off(50, 6, "S", "irq"),
    *[x for w in (1000, 4000, 4500, 12000) for x in ((w, "w", 6, "irq", 79), on(w + 1, 6, "irq"), off(w + 101, 6, "S", "irq"))],
]


def test_parse_tracecmd_raw_lines():
    """trace-cmd report -R -t of a real .dat: ns timestamps, numeric prev_state (1 = S,
    32 = dead, 0 = running), the instance's name before each line, cpus=2."""
    tr = rec.parse_trace(TRACECMD_RAW)
    assert tr.cpus == 2 and tr.unparsed == 0 and len(tr.events) == 7
    fork, new, sw = tr.events[0], tr.events[1], tr.events[2]
    assert (fork.kind, fork.pid, fork.child, fork.comm) == ("fork", 19325, 19328, "bash")
    assert (new.kind, new.pid, new.prio, new.new, new.ts) == ("wakeup", 19328, 120, True, 14593_058877585)
    assert (sw.kind, sw.pid, sw.next_pid, sw.sleeping, sw.exiting, sw.ts) == ("switch", 19325, 0, True, False, 14593_058928019)
    dead = tr.events[4]
    assert (dead.pid, dead.sleeping, dead.exiting) == (19328, True, True)
    assert tr.events[3].kind == "exit"
    assert not tr.events[6].sleeping and tr.events[6].next_pid == 19325


def test_parse_tracecmd_plugin_lines():
    """trace-cmd report without -R (its sched plugin): the same events, µs timestamps."""
    tr = rec.parse_trace(TRACECMD_PLUGIN)
    assert [e.kind for e in tr.events] == ["fork", "wakeup", "switch", "exit", "switch"]
    assert tr.events[1].ts == 14593_058878000 and tr.events[1].pid == 19328
    assert tr.events[2].sleeping and tr.events[4].sleeping and tr.events[4].exiting


def test_parse_tracefs_names_with_spaces_lost_and_junk():
    text = ("# tracer: nop\n"
            " Web Content-a-77   [001] d..2. 5.000001: sched_switch: prev_comm=Web Content-a prev_pid=77 prev_prio=120 "
            "prev_state=R+ ==> next_comm=my thread next_pid=78 next_prio=98\n"
            "CPU:1 [LOST 42 EVENTS]\n"
            "  x-1 [000] ..... 5.000002: sched_switch: garbage\n"
            "  x-1 [000] ..... 5.000003: sched_stat_runtime: comm=x pid=1 runtime=5\n")
    tr = rec.parse_trace(text)
    assert tr.lost == 42 and tr.unparsed == 1 and len(tr.events) == 1
    e = tr.events[0]
    assert (e.comm, e.pid, e.next_comm, e.next_pid, e.next_prio, e.sleeping) == ("Web Content-a", 77, "my thread", 78, 98, False)


@pytest.mark.parametrize("state,sleeping,exiting", [
    ("R", False, False), ("R+", False, False), ("S", True, False), ("D", True, False), ("D|K", True, False),
    ("I", True, False), ("X", True, True), ("Z", True, True), ("0", False, False), ("256", False, False),
    ("1", True, False), ("2", True, False), ("16", True, True), ("32", True, True), ("128", True, False)])
def test_state_sleeps(state, sleeping, exiting):
    assert rec.state_sleeps(state) == (sleeping, exiting)


def test_activations_hand_worked():
    tr = rec.parse_trace(tracefs_lines(JOB + IRQ))
    per = rec.activations(tr.events)
    comm, prio, acts = per[5]
    assert (comm, prio) == ("job", 79)
    base = 100_000_000_000
    assert [(a.wakeup - base, a.cpu_ns, a.end - base, a.inferred) for a in acts] == [
        (0, 990_000, 1_200_000, 0), (10_000_000, 1_000_000, 11_020_000, 0),
        (20_000_000, 1_100_000, 21_100_000, 1), (30_000_000, 1_000_000, 31_005_000, 0)]
    assert [a.cpu_ns for a in per[6][2]] == [100_000] * 4


def test_fit_periodic_and_sporadic():
    tr = rec.parse_trace(tracefs_lines(JOB + IRQ))
    fits = {f.tid: f for f in rec.extract(tr.events, percentile_p=99)}
    job = fits[5]
    # inter-activation 10000, 10000, 10000 µs → period 10 ms; CPU 990, 1000, 1100, 1000 µs:
    # p99 nearest rank = the ceil(0.99·4) = 4th smallest = 1100 µs
    assert (job.kind, job.period, job.wcet, job.exec_min, job.exec_median, job.exec_max) == (
        "periodic", 10_000_000, 1_100_000, 990_000, 1_000_000, 1_100_000)
    assert (job.jitter, job.in_tolerance, job.rt_priority, job.policy, job.name, job.inferred) == (0, 1.0, 20, "fifo/rr", "job", 1)
    irq = fits[6]
    # 3000, 500, 7500 µs: median 3000, one of three within ±10 % → sporadic, min 500 µs;
    # |Δ − 3000| = 0, 2500, 4500: p95 nearest rank (3rd) = 4500
    assert (irq.kind, irq.min_interarrival, irq.max_interarrival, irq.wcet, irq.jitter) == (
        "sporadic", 500_000, 7_500_000, 100_000, 4_500_000)
    assert abs(irq.in_tolerance - 1 / 3) < 1e-9
    p50 = {f.tid: f for f in rec.extract(tr.events, percentile_p=50)}
    assert p50[5].wcet == 1_000_000  # the 2nd smallest of 990, 1000, 1000, 1100


def test_too_few_activations_and_other_threads():
    ev = JOB + [(500, "w", 9, "main", 120), on(501, 9, "main", 120), off(900, 9, "S", "main", 120)]
    ev += [x for w in (2000, 22000, 42000) for x in ((w, "w", 8, "bg", 120), on(w + 1, 8, "bg", 120), off(w + 51, 8, "S", "bg", 120))]
    tr = rec.parse_trace(tracefs_lines(ev))
    fits = {f.tid: f for f in rec.extract(tr.events)}
    assert fits[9].kind is None and "1 complete activation" in fits[9].why
    assert fits[8].kind is None and "other thread beside real-time ones" in fits[8].why  # SCHED_OTHER beside SCHED_FIFO
    both = {f.tid: f for f in rec.extract(tr.events, all_threads=True)}
    assert both[8].kind == "periodic" and both[8].period == 20_000_000
    text = rec.taskset_yaml(list(both.values()), 2, 3_000_000_000)
    assert "priority" not in text.split("tasks:")[1].split("#")[0] and "no priorities written" in text


def test_process_tree():
    ev = rec.parse_trace(tracefs_lines([(0, "f", 100, 101), (1, "f", 101, 102), (2, "f", 200, 201), (3, "f", 102, 103)])).events
    assert rec.process_tree(ev, [100]) == {100, 101, 102, 103}
    assert rec.process_tree(ev, [200]) == {200, 201}


def test_percentile_nearest_rank():
    assert rec.percentile([5, 1, 3, 2, 4], 100) == 5
    assert rec.percentile([5, 1, 3, 2, 4], 50) == 3
    assert rec.percentile([5, 1, 3, 2, 4], 99) == 5
    assert rec.percentile([5, 1, 3, 2, 4], 20) == 1
    assert rec.percentile(list(range(1, 201)), 99) == 198


def test_taskset_yaml_loads_with_fit_comments():
    tr = rec.parse_trace(tracefs_lines(JOB + IRQ))
    fits = rec.extract(tr.events)
    text = rec.taskset_yaml(fits, 2, 40_500_000, "rtsched record test", 99, "x.activations.csv")
    ts = rtsched.parse_taskset(text, "yaml", "x.yaml")
    assert ts.task_names == ["job", "irq"] and ts.cpus == 2
    assert '{name: "job", period: "10ms", wcet: "1100us", priority: 20}   # tid 5, ' in text
    assert '{name: "irq", min_interarrival: "500us", wcet: "100us", priority: 20}   # tid 6, ' in text
    assert text.startswith("# rtsched record test\n# per task: ")
    # What the writer of every task set writes (rtsched.analysis.to_yaml), with the fit as comments.
    body = text[text.index("platform:"):]
    plain = "".join(ln.split("   # ")[0] + "\n" for ln in body.splitlines())
    assert plain.replace("min_interarrival:", "period:") == rtsched.analysis.to_yaml(ts)
    assert "jitter (p95) 0.0 us" in text and "1 switch-ins missing" in text
    csv = rec.times_csv(fits).splitlines()
    assert csv[1] == "job,5,0,0,,990000,1200000"
    assert csv[2] == "job,5,1,10000000,10000000,1000000,1020000"
    assert csv[5] == "irq,6,0,1000000,,100000,101000"


def test_cli_from_text_trace(tmp_path):
    f = tmp_path / "t.txt"
    f.write_text(tracefs_lines(JOB + IRQ))
    out = tmp_path / "o.yaml"
    p = run_cli("record", "--from", f, "-o", out, "--percentile", "50", check=0)
    assert "periodic" in p.stdout and "sporadic" in p.stdout
    ts = rtsched.load_taskset(out)
    assert ts.task_names == ["job", "irq"]
    assert 'wcet: "1ms"' in out.read_text()
    assert (tmp_path / "o.activations.csv").read_text().startswith("task,tid,index")
    p = run_cli("record", "--from", f, "-o", tmp_path / "c.yaml", "--comm", "^irq$", check=0)
    assert rtsched.load_taskset(tmp_path / "c.yaml").task_names == ["irq"]


def test_replay_writes_the_measured_times_and_the_simulation_replays_them(tmp_path):
    """`--replay`: job's four activations took 990, 1000, 1100 and 1000 us of CPU (the
    hand-worked trace above); the task set lists them, and a simulation of it runs job k for
    the k-th of them in turn (the first four jobs finish 0.99, 1.0, 1.1 and 1.0 ms after their
    releases, the fifth 0.99 again), not its WCET."""
    f = tmp_path / "t.txt"
    f.write_text(tracefs_lines(JOB + IRQ))
    out = tmp_path / "r.yaml"
    run_cli("record", "--from", f, "-o", out, "--replay", "--comm", "^job$", check=0)
    text = out.read_text()
    assert 'execution_times: ["990us", "1ms", "1100us", "1ms"]' in text
    ts = rtsched.load_taskset(out).with_run(duration_ns=50_000_000)
    jobs = rtsched.simulate(ts, "gedf", keep_jobs=True).jobs
    took = [int(f - r) for f, r in zip(jobs.finish_ns, jobs.release_ns)]
    assert took == [990_000, 1_000_000, 1_100_000, 1_000_000, 990_000]


@pytest.mark.parametrize("args,msg", [
    (["-o", "o.yaml"], "nothing to record"),
    (["-o", "o.yaml", "--from", "t.txt", "--", "true"], "not both"),
    (["-o", "o.yaml", "--from", "t.txt", "--percentile", "0"], "--percentile"),
    (["-o", "o.yaml", "--from", "t.txt", "--comm", "("], "--comm"),
    (["-o", "o.yaml", "--pid", "3", "--", "true"], "--pid"),
    (["-o", "t.txt", "--from", "t.txt"], "an input of this run"),
    (["-o", "o.yaml", "--from", "missing.dat"], "missing.dat"),
    (["-o", "o.yaml", "--from", "empty.txt"], "no sched_switch"),
    (["-o", "o.yaml", "--from", "few.txt"], "enough activations"),
])
def test_cli_errors_exit_2(tmp_path, args, msg):
    (tmp_path / "t.txt").write_text(tracefs_lines(JOB))
    (tmp_path / "empty.txt").write_text("# nothing\n")
    (tmp_path / "few.txt").write_text(tracefs_lines(JOB[:5]))
    p = run_cli("record", *args, cwd=tmp_path, check=2)
    assert msg in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "o.yaml").exists()


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv to run as another user")
def test_cli_without_root_exit_2():
    """As an ordinary user: exit 2 saying it needs root and tracefs, nothing started."""
    import tempfile

    d = tempfile.mkdtemp(prefix="rtsched-record-test-")  # in /tmp: pytest's tmp_path is root's only
    try:
        os.chmod(d, 0o777)
        p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", RTSCHED, "record", "-o",
                            os.path.join(d, "o.yaml"), "--", "true"], capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, p.stderr
        assert "needs root" in p.stderr and "tracefs" in p.stderr
        assert not os.listdir(d)
    finally:
        shutil.rmtree(d)


@settings(max_examples=60, deadline=None)
@given(period=st.integers(1_000, 10**9), frac=st.floats(0.01, 0.9), lag=st.integers(0, 500), n=st.integers(3, 40),
       prio=st.integers(0, 98))
def test_periodic_thread_round_trip(period, frac, lag, n, prio):
    """A thread woken every `period` ns that runs `run` ns after a `lag` comes back as a
    periodic task of exactly that period and WCET, and its YAML loads with them."""
    run = max(1, int(period * frac) - lag)
    ev = []
    for i in range(n):
        w = 1_000_000 + i * period
        ev += [rec.Event(w, 0, "wakeup", 7, "th", prio),
               rec.Event(w + lag, 0, "switch", 0, "swapper/0", 120, 7, "th", prio),
               rec.Event(w + lag + run, 0, "switch", 7, "th", prio, 0, "swapper/0", 120, sleeping=True)]
    (f,) = rec.extract(ev)
    assert (f.kind, f.period, f.wcet, f.jitter, f.rt_priority) == ("periodic", period, run, 0, 99 - prio)
    ts = rtsched.parse_taskset(rec.taskset_yaml([f], 1, n * period), "yaml")
    assert ts.task_names == ["th"]
    assert (ts.tasks()[0]["period_ns"], ts.tasks()[0]["wcet_ns"], ts.tasks()[0]["priority"]) == (period, run, 99 - prio)


def test_cli_fit_table_fits_the_terminal(tmp_path):
    from rtsched.tables import cells_wide

    f = tmp_path / "t.txt"
    f.write_text(tracefs_lines(JOB + IRQ))
    full = run_cli("record", "--from", f, "-o", tmp_path / "a.yaml", check=0).stdout
    r = run_cli("record", "--from", f, "-o", tmp_path / "b.yaml", env={"COLUMNS": "80"}, check=0).stdout
    assert max(map(cells_wide, r.splitlines())) <= 80 < max(map(cells_wide, full.splitlines())), r
    note = " ".join(r[r.index("(left out to fit 80 columns: "):].split())
    assert "periodic" in r and "b.yaml holds the fit of each task" in note, r
    # The task set written is the same (but for the name of its activations file).
    a, b = ((tmp_path / n).read_text() for n in ("a.yaml", "b.yaml"))
    assert a.replace("a.activations.csv", "b.activations.csv") == b
