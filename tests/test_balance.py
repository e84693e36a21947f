"""The operation-zone balancer on real Linux (`rtsched balance`), its background load
(`rtsched stress`) and the binding of the Rust ZoneBalancer they share with the simulator.

Affinity tests change only the affinity of processes these tests start (no root needed); the
latency comparison needs root, as the other real tests do."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rtsched._core import ZoneBalancer

from conftest import RTSCHED, real, run_cli
from rtsched import InputError
from rtsched.balance import Balancer, TaskStat, read_schedstat, read_task

BUSY = [sys.executable, "-c", "while True: pass"]
TWO_CPUS = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")


# -- the binding: the simulator's decision code -----------------------------------------------


def test_binding_agrees_with_the_rust_doc_example_figure_4():
    zb = ZoneBalancer([("zone", "warm-mid"), ("util", "average")], 4)
    assert zb.check("task-created", [500, 850, 250, 550], 1_000_000) == (1, 2)
    assert zb.scores() == [500] and zb.zone([500, 850, 250, 550]) == "warm"
    # Fig 4 on the high spot: the average 53.75% is under 80%, but CPU1's 85% is over it.
    assert ZoneBalancer([("zone", "warm-high"), ("util", "average")], 4).check("idle-wakeup", [500, 850, 250, 550], 0) is None
    assert ZoneBalancer([("zone", "warm-high")], 4).check("busiest-group", [500, 850, 250, 550], 0) == (1, 2)
    assert ZoneBalancer([("zone", "hot")], 4).check("tick", [1000, 0, 0, 0], 0) is None, "a tick is no check point"
    assert [k for k, _ in ZoneBalancer.defaults()] == ["zone", "cold_threshold", "hot_threshold", "warm_spot_low", "warm_spot_mid",
                                                       "warm_spot_high", "prize_time", "punish_time", "score_step", "util",
                                                       "task_floor", "task_usage"]
    assert dict(ZoneBalancer.defaults())["zone"] == "warm-high"
    assert dict(ZoneBalancer.defaults())["task_usage"] == "demand"


def test_binding_choose_is_the_simulators_task_rule():
    """The same cases as the Rust unit tests of ZoneBalancer::choose: (util, nice, vruntime, id).
    A at 25% and nice -5 (weight 3121) is heavier than B at 60%, nice 0 (1024), but under the
    warm zone (30%); the guard needs two runnable more on `from` than on `to`."""
    tasks = [(250, -5, 0, 7), (600, 0, 0, 8)]
    assert ZoneBalancer([("zone", "warm-high")], 2).choose(3, 0, tasks) == 1
    assert ZoneBalancer([("zone", "warm-high"), ("task_floor", "off")], 2).choose(3, 0, tasks) == 0
    assert ZoneBalancer([("zone", "warm-high"), ("task_floor", "spot")], 2).choose(3, 0, tasks) is None
    assert ZoneBalancer([("zone", "hot")], 2).choose(3, 0, tasks) == 0, "no warm zone: any task"
    hot = ZoneBalancer([("zone", "hot")], 2)
    assert hot.choose(2, 1, tasks) is None and hot.choose(2, 1, tasks, guard=False) == 0 and hot.choose(1, 0, tasks, guard=False) is None
    assert hot.choose(3, 0, [(900, 0, 3, 5), (900, 0, 9, 6), (900, 0, 9, 4)]) == 2, "latest vruntime, then lowest id"
    with pytest.raises(InputError, match="nice 20"):
        hot.choose(3, 0, [(900, 20, 0, 1)])


def test_binding_rejects_bad_input_with_input_error():
    zb = ZoneBalancer([], 2)
    for call, field in [(lambda: zb.check("task-created", [1, 2, 3], 0), "utils_permille"),
                        (lambda: zb.check("sometimes", [1, 2], 0), "trigger"),
                        (lambda: ZoneBalancer([("zone", "lukewarm")], 2), "option 'zone'"),
                        (lambda: ZoneBalancer([("spot", "50%")], 2), "unknown option 'spot'"),
                        (lambda: ZoneBalancer([], 0), "cpus")]:
        with pytest.raises(InputError, match=field):
            call()
    zb.observe([0, 0], 10)
    with pytest.raises(InputError, match="now_ns"):
        zb.observe([0, 0], 5)


@pytest.mark.parametrize("args, field", [
    (["--zone", "warm"], "--zone"),
    (["--warm-spot-low", "60%"], "--warm-spot-low"),
    (["--warm-spot-mid", "90%"], "--warm-spot-mid"),
    (["--hot-threshold", "120%"], "--hot-threshold"),
    (["--util", "avg"], "--util"),
    (["--prize-time", "5parsecs"], "--prize-time"),
    (["--task-floor", "low"], "--task-floor"),
    (["--task-usage", "waiting"], "--task-usage"),
    (["--period", "0"], "--period"),
    (["--pid", "999999999"], "--pid"),
])
def test_bad_balance_options_exit_2_naming_the_field(args, field):
    r = run_cli("balance", *args, "--", "true")
    assert r.returncode == 2 and field in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("args, field", [(["--cpu", "-1"], "--cpu"), (["--nice", "40"], "--nice"), (["--run", "0"], "--run"),
                                         (["--cpu", "0"], "no workers")])
def test_bad_stress_options_exit_2_naming_the_field(args, field):
    r = run_cli("stress", "--duration", "1s", *args)
    assert r.returncode == 2 and field in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_nothing_to_manage_is_a_usage_error():
    r = run_cli("balance", "--zone", "hot")
    assert r.returncode == 2 and "nothing to manage" in r.stderr


# -- moving and restoring ----------------------------------------------------------------------


@pytest.fixture
def busy():
    """Start busy processes (free on every CPU); all killed at the end."""
    procs = []

    def start(n=1):
        new = [subprocess.Popen(BUSY) for _ in range(n)]
        procs.extend(new)
        return new

    yield start
    for p in procs:
        p.kill()
        p.wait()


@TWO_CPUS
def test_a_balance_moves_a_task_of_from_and_restore_undoes_it(busy):
    """One sample by hand: CPU0 100%, CPU1 idle, three children last ran on CPU0 (runnable,
    nice 0) and used CPU time, so the cold policy moves one (the latest vruntime: the
    simulator's rule) to CPU1, pinned; restore gives its mask back. (One child alone would not
    move: a CPU's only runnable task is the running one.)"""
    kids = busy(3)
    full = os.sched_getaffinity(kids[0].pid)
    b = Balancer([("zone", "cold")], pids=[k.pid for k in kids])
    cpus = b.cpu_ids
    tasks = []
    for k in kids:
        t = read_task(k.pid, k.pid)
        b.seen.add((t.tid, t.start))
        b.prev_cpu_time[(t.tid, t.start)] = t.cpu_time - 5
        tasks.append(TaskStat(**{**t.__dict__, "processor": cpus[0], "state": "R"}))
    prev = {c: (0, 0, 0) for c in cpus}
    cur = {c: ((100 if c == cpus[0] else 0), 100, 0) for c in cpus}
    b.step(prev, cur, None, b.t0 + 100_000_000, tasks)
    assert b.counters.checks["busiest-group"] == 1 and b.counters.migrations == 1
    (moved,) = [k for k in kids if os.sched_getaffinity(k.pid) != full]
    assert os.sched_getaffinity(moved.pid) == {cpus[-1]}
    assert b.migrations[0]["from"] == cpus[0] and b.migrations[0]["to"] == cpus[-1] and b.migrations[0]["tid"] == moved.pid
    b.restore()
    assert all(os.sched_getaffinity(k.pid) == full for k in kids) and b.counters.restored == 1


@pytest.fixture
def sleepers():
    """Start sleeping processes (real tids whose affinity the dry run can read); all killed at
    the end."""
    procs = []

    def start(n):
        new = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]) for _ in range(n)]
        procs.extend(new)
        return [p.pid for p in new]

    yield start
    for p in procs:
        p.kill()
        p.wait()


def _sampler(bal, frm):
    """One sample by hand: CPU ``frm`` 100 %, every other idle; ``used`` gives each tid's
    (ns on a CPU, ns waiting on a run queue) in the window (schedstat's fields 1 and 2)."""
    cpus = bal.cpu_ids

    def sample(tasks, used, now_ns):
        for t in tasks:
            run, wait = used.get(t.tid, (0, 0))
            bal.seen.add((t.tid, t.start))
            bal.prev_sched[(t.tid, t.start)] = (t.run_ns - run, t.wait_ns - wait)
            bal.prev_cpu_time[(t.tid, t.start)] = t.cpu_time - (run > 0)  # ran: the busiest-group check point
        prev = {x: (0, 0, 0) for x in cpus}
        cur = {x: ((100 if x == frm else 0), 100, 0) for x in cpus}
        bal.step(prev, cur, None, now_ns, tasks)

    return sample


def _task(tid, nice, cpu):
    return TaskStat(tid=tid, pid=tid, start=1, cpu_time=1000, processor=cpu, policy=0, flags=0, ppid=0, comm=f"t{tid}",
                    nice=nice, state="R", run_ns=10**12, wait_ns=10**12)


MS = 1_000_000


@TWO_CPUS
def test_the_real_balancer_moves_the_task_the_simulator_would(sleepers):
    """One sample by hand, warm-high (dry run): CPU0 100%, the last CPU idle, so the zone check
    answers (CPU0, last). CPU0's three runnable tasks, in the 100 ms window, ran and waited
    A 60 + 30 ms (demand 90%, nice 0: weight 1024), B 30 + 10 ms (40%, nice -5: 3121), C 10 +
    10 ms (20%, nice -10: 9548). The old rule (most CPU in the window) moved A. The
    simulator's (ZoneBalancer.choose): C is the heaviest but 20% is under the warm zone (30%),
    so B. Then a second sample with only A and B on CPU0 and one runnable task on the target:
    2 is not two more than 1, so nothing moves (the old rule moved A again)."""
    a, b_, c = sleepers(3)
    bal = Balancer([("zone", "warm-high")], dry_run=True)
    frm, to = bal.cpu_ids[0], bal.cpu_ids[-1]
    sample = _sampler(bal, frm)
    sample([_task(a, 0, frm), _task(b_, -5, frm), _task(c, -10, frm)],
           {a: (60 * MS, 30 * MS), b_: (30 * MS, 10 * MS), c: (10 * MS, 10 * MS)}, bal.t0 + 100 * MS)
    assert bal.counters.balances == 1 and [m["tid"] for m in bal.migrations] == [b_]
    assert bal.migrations[0]["from"] == frm and bal.migrations[0]["to"] == to
    (d,) = sleepers(1)
    sample([_task(a, 0, frm), _task(b_, -5, frm), _task(d, 0, to)], {a: (90 * MS, 0), b_: (40 * MS, 0)}, bal.t0 + 200 * MS)
    assert bal.counters.balances == 2 and bal.counters.migrations == 1 and bal.counters.no_task == 1


@TWO_CPUS
def test_a_hog_sharing_a_cpu_moves_on_its_demand(sleepers):
    """The real balancer reads a task's usage as the simulator does (task_usage=demand): the
    share of the window it was runnable, schedstat's run + wait. One 100 ms window, warm-high,
    CPU0 100 %: four hogs share it, each ran 25 ms and waited 75 ms — a demand of 100 %,
    though each ran 25 % — H (nice -5, weight 3121) and three of nice 0; L, a light task of
    nice -10 (9548, the heaviest), ran 10 ms and waited 10 ms: 20 %. Demand: L is under the
    warm zone's 30 %, so the heaviest hog, H, moves. Counted as running time
    (task_usage=running, the reading before) every task is under 30 %: nothing moves."""
    h, h1, h2, h3, light = sleepers(5)
    moved = {}
    for usage in ("demand", "running"):
        bal = Balancer([("zone", "warm-high"), ("task_usage", usage)], dry_run=True)
        frm = bal.cpu_ids[0]
        tasks = [_task(h, -5, frm), _task(h1, 0, frm), _task(h2, 0, frm), _task(h3, 0, frm), _task(light, -10, frm)]
        used = {t.tid: (25 * MS, 75 * MS) for t in tasks[:4]} | {light: (10 * MS, 10 * MS)}
        _sampler(bal, frm)(tasks, used, bal.t0 + 100 * MS)
        assert bal.counters.balances == 1, usage
        moved[usage] = [m["tid"] for m in bal.migrations]
    assert moved == {"demand": [h], "running": []}


def test_read_schedstat_counts_running_and_waiting():
    """Two busy children sharing one CPU for 0.5 s: each runs about half of it and waits the
    rest, so each one's demand (run + wait) is near the whole window, its running time near
    half. An unreadable thread reads (0, 0)."""
    assert read_schedstat(999_999_999, 999_999_999) == (0, 0)
    cpu = min(os.sched_getaffinity(0))
    kids = [subprocess.Popen([sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"])
            for _ in range(2)]
    try:
        time.sleep(0.3)
        before = [read_schedstat(k.pid, k.pid) for k in kids]
        t0 = time.monotonic_ns()
        time.sleep(0.5)
        after = [read_schedstat(k.pid, k.pid) for k in kids]
        window = time.monotonic_ns() - t0
    finally:
        for k in kids:
            k.kill()
            k.wait()
    for (r0, w0), (r1, w1) in zip(before, after):
        run, demand = (r1 - r0) / window, (r1 - r0 + w1 - w0) / window
        assert 0.2 < run < 0.8 and demand > 0.8, (run, demand)


def test_rt_threads_and_kernel_threads_are_never_managed():
    b = Balancer([], all_tasks=True)
    tasks = b.scan()
    assert tasks and all(not t.flags & 0x00200000 for t in tasks), "kernel threads"
    assert all(t.pid != os.getpid() for t in tasks), "itself"
    fifo = TaskStat(tid=1, pid=1, start=0, cpu_time=0, processor=0, policy=1, flags=0, ppid=0, comm="rt")
    assert not b._movable(fifo)


def _wait_for(pred, timeout=10.0, what="condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@TWO_CPUS
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_affinities_restored_on_signal(busy, tmp_path, sig, code):
    """--hold pins both children (and the hot policy with a 1% hot zone may move them); on the
    signal every changed mask is restored while the children keep running."""
    kids = busy(2)
    before = {p.pid: os.sched_getaffinity(p.pid) for p in kids}
    out = tmp_path / "b.json"
    bal = subprocess.Popen([RTSCHED, "balance", "--hold", "--zone", "hot", "--cold-threshold", "0", "--hot-threshold", "1%",
                            "--period", "50ms", "--json", str(out), *sum((["--pid", str(p.pid)] for p in kids), [])],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: all(len(os.sched_getaffinity(p.pid)) == 1 for p in kids), what="the balancer to hold both children")
        time.sleep(0.3)  # a few samples: a chance to migrate too
        bal.send_signal(sig)
        stdout, stderr = bal.communicate(timeout=20)
    finally:
        if bal.poll() is None:
            bal.kill()
    assert bal.returncode == code, stderr
    assert all(p.poll() is None for p in kids), "the children outlive the balancer"
    assert {p.pid: os.sched_getaffinity(p.pid) for p in kids} == before
    rep = json.loads(out.read_text())
    assert rep["counters"]["held"] == 2 and rep["counters"]["restored"] >= 2 and rep["counters"]["restore_gone"] == 0
    assert "affinities restored" in stdout


@TWO_CPUS
def test_affinities_restored_on_an_error(busy):
    (kid,) = busy(1)
    before = os.sched_getaffinity(kid.pid)
    env = dict(os.environ, RTSCHED_BALANCE_FAULT="after-change")
    r = subprocess.run([RTSCHED, "balance", "--hold", "--period", "50ms", "--pid", str(kid.pid)], capture_output=True, text=True,
                       env=env, timeout=30)
    assert r.returncode == 1 and "injected failure" in r.stderr, r.stderr
    assert "affinities restored 1" in r.stdout
    assert os.sched_getaffinity(kid.pid) == before


@TWO_CPUS
def test_processes_it_did_not_start_are_never_touched(busy, tmp_path):
    (other,) = busy(1)
    before = os.sched_getaffinity(other.pid)
    out = tmp_path / "b.json"
    bal = subprocess.Popen([RTSCHED, "balance", "--hold", "--zone", "cold", "--period", "50ms", "--duration", "1500ms",
                            "--json", str(out), "--", *BUSY], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = set()
    while bal.poll() is None:
        seen.add(frozenset(os.sched_getaffinity(other.pid)))
        time.sleep(0.02)
    assert bal.returncode == 0, bal.stderr.read()
    assert seen == {frozenset(before)}
    rep = json.loads(out.read_text())
    assert rep["counters"]["held"] == 1, "the command it started was managed"
    assert all(m["pid"] != other.pid for m in rep["migrations"])


def test_stress_runs_and_stops_every_worker():
    r = run_cli("stress", "--cpu", "1", "--sleepers", "1", "--bursty", "1", "--io", "1", "--net", "1", "--duration", "800ms")
    assert r.returncode == 0, r.stderr
    assert "1 cpu, 1 sleepers (2 ms run / 8 ms sleep), 1 bursty, 1 io, 1 net" in r.stdout and "stopped after" in r.stdout


def test_stress_stops_its_workers_on_sigterm():
    p = subprocess.Popen([RTSCHED, "stress", "--cpu", "2", "--io", "1"], stdout=subprocess.PIPE, text=True)
    _wait_for(lambda: len(_children(p.pid)) == 3, what="three workers")
    kids = _children(p.pid)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=20) == 143
    assert not [k for k in kids if os.path.exists(f"/proc/{k}")]


def _children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(x) for x in f.read().split()]


# -- the comparison on this machine (root: SCHED_FIFO 99) ---------------------------------------


@TWO_CPUS
@real
def test_real_comparison_returns_every_condition(tmp_path):
    from rtsched.reproduce.opzone_real import real_comparison

    d = real_comparison(duration_s=0.5, out_dir=tmp_path, repeats=1, cyclictest=False, stress={"cpu": 2, "sleepers": 1, "io": 0, "net": 0})
    assert set(d["conditions"]) == {"kernel", "zone:warm-high"}
    for name, c in d["conditions"].items():
        assert c["probe"]["count"] > 100 and c["probe"]["min_us"] <= c["probe"]["mean_us"] <= c["probe"]["max_us"]
        assert 0 <= c["steal_pct"] <= 100 and c["task_migrations_per_s"] >= 0
        assert (c["migrations"] is None) == (name == "kernel")
    assert os.path.exists(d["figure"]) and json.loads(Path(d["json"]).read_text())["settings"]["repeats"] == 1


@TWO_CPUS
def test_a_child_that_inherits_a_pin_is_restored_too(tmp_path):
    """fork copies the affinity mask: the child a held process starts after the hold is pinned
    by inheritance, and the restore must undo that as well."""
    spawner = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time\ntime.sleep(0.6)\n"
                                "p = subprocess.Popen([sys.executable, '-c', 'while True: pass'])\nprint(p.pid, flush=True)\np.wait()"],
                               stdout=subprocess.PIPE, text=True)
    full = os.sched_getaffinity(spawner.pid)
    try:
        r = subprocess.run([RTSCHED, "balance", "--hold", "--zone", "hot", "--period", "50ms", "--duration", "1500ms",
                            "--pid", str(spawner.pid), "--json", str(tmp_path / "b.json")], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        child = int(spawner.stdout.readline())
        rep = json.loads((tmp_path / "b.json").read_text())
        assert rep["counters"]["restored"] >= 2, rep["counters"]
        assert os.sched_getaffinity(spawner.pid) == full and os.sched_getaffinity(child) == full
    finally:
        for p in _children(spawner.pid):
            os.kill(p, signal.SIGKILL)
        spawner.kill()
        spawner.wait()


@TWO_CPUS
def test_dry_run_decides_and_moves_nothing(busy, tmp_path):
    (kid,) = busy(1)
    before = os.sched_getaffinity(kid.pid)
    r = run_cli("balance", "--dry-run", "--zone", "cold", "--period", "50ms", "--duration", "600ms", "--pid", kid.pid,
                "--json", tmp_path / "b.json")
    assert r.returncode == 0, r.stderr
    rep = json.loads((tmp_path / "b.json").read_text())
    assert rep["dry_run"] and rep["counters"]["restored"] == 0 and all(m["dry_run"] for m in rep["migrations"])
    assert os.sched_getaffinity(kid.pid) == before
    assert run_cli("balance", "--dry-run", "--hold", "--pid", kid.pid).returncode == 2
