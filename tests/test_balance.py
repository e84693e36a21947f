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

from conftest import RTSCHED, real, run_cli
from rtsched import InputError
from rtsched._core import ZoneBalancer
from rtsched.balance import Balancer, TaskStat, read_task

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
                                                       "warm_spot_high", "prize_time", "punish_time", "score_step", "util"]
    assert dict(ZoneBalancer.defaults())["zone"] == "warm-high"


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
def test_a_balance_moves_the_busiest_task_of_from_and_restore_undoes_it(busy):
    """One sample by hand: CPU0 100%, CPU1 idle, the child last ran on CPU0 and used CPU time,
    so the cold policy moves it to CPU1 (pinned); restore gives its mask back."""
    (child,) = busy(1)
    full = os.sched_getaffinity(child.pid)
    b = Balancer([("zone", "cold")], pids=[child.pid])
    t = read_task(child.pid, child.pid)
    key = (t.tid, t.start)
    b.seen.add(key)
    b.prev_cpu_time[key] = t.cpu_time - 5
    cpus = b.cpu_ids
    prev = {c: (0, 0, 0) for c in cpus}
    cur = {c: ((100 if c == cpus[0] else 0), 100, 0) for c in cpus}
    task = TaskStat(**{**t.__dict__, "processor": cpus[0]})
    b.step(prev, cur, None, b.t0 + 100_000_000, [task])
    assert b.counters.checks["busiest-group"] == 1 and b.counters.migrations == 1
    assert os.sched_getaffinity(child.pid) == {cpus[-1]}
    assert b.migrations[0]["from"] == cpus[0] and b.migrations[0]["to"] == cpus[-1]
    b.restore()
    assert os.sched_getaffinity(child.pid) == full and b.counters.restored == 1


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
