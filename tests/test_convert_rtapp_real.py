"""A task set exported by `rtsched convert --to rt-app` runs in the real rt-app (Debian's 1.0,
/usr/bin/rt-app), and rt-app's own log of that run agrees with rtsched's real run of the same
set under the same kernel policy (SCHED_FIFO, kernel:fifo:file; SCHED_DEADLINE,
kernel:deadline).

The set (hand-worked): `fast` T = 10 ms, C = 1 ms, priority 60; `slow` T = 20 ms, C = 3 ms,
priority 50; 2 s on every CPU (global; two CPUs here, so neither thread preempts the other).
Expected per run: 2 s / 10 ms = 200 activations of fast, 2 s / 20 ms = 100 of slow (each side
within ±1 per second, so ±2); every activation's period 10 ms / 20 ms (the mean within 2 %).

The comparison exports the work as rt-app's `runtime` event (`--work runtime`: wall time), so
rt-app's logged run time is the time asked for (median within −1 %…+10 %: rt-app loops in 32 µs
steps until that much CLOCK_MONOTONIC time has passed) and rtsched's CPU time within 30 %. The
default `run` event is a loop count from rt-app's calibration at its start, the faster of two
150 µs samples (rt-app/src/rt-app.c `calibrate_cpu_cycles`); on this VM its median run time was
1048–1475 µs for 1 ms in three runs, so its wall time is not compared: the fork-join test checks
instead that each job ran the loop count rt-app derives from the exported durations and its own
printed calibration, and prints the wall-time error.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess

import pytest

import rtsched
from conftest import real
from rtsched.convert import rtapp_text
from rtsched.convert.rtapp import read_log
from test_soak import overrun_chains

RTAPP = shutil.which("rt-app")
pytestmark = pytest.mark.skipif(RTAPP is None, reason="needs rt-app (Debian's rt-app package; make system-deps installs it as root)")

SET = """\
platform: {cpus: %d}
run: {duration: 2s}
tasks:
  - {name: fast, period: 10ms, wcet: 1ms, priority: 60}
  - {name: slow, period: 20ms, wcet: 3ms, priority: 50}
"""
WANT = {"fast": (10_000, 1_000, 200), "slow": (20_000, 3_000, 100)}  # period us, run us, activations in 2 s


def run_rtapp(tmp_path, ts, backend, work="run"):
    doc = json.loads(rtapp_text(ts, backend, work=work))
    logdir = tmp_path / "log"
    logdir.mkdir()
    doc["global"]["logdir"] = str(logdir)
    f = tmp_path / "set-rtapp.json"
    f.write_text(json.dumps(doc, indent=2))
    p = subprocess.run([RTAPP, str(f)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "crit" not in p.stdout + p.stderr, p.stdout + p.stderr
    logs = {}
    for i, name in enumerate(doc["tasks"]):
        logs[name] = read_log(logdir / f"rt-app-{name}-{i}.log")
    m = re.search(r"pLoad = (\d+)ns", p.stdout + p.stderr)
    assert m, "rt-app printed no calibration (pLoad): " + p.stdout + p.stderr
    return doc, logs, int(m.group(1))


def deadline_threads() -> list[str]:
    """The threads on this machine under SCHED_DEADLINE (policy 6 in /proc's sched files)."""
    import glob

    out = []
    for f in glob.glob("/proc/[0-9]*/task/[0-9]*/sched"):
        try:
            text = open(f).read()
        except OSError:
            continue  # gone meanwhile
        if any(line.split() == ["policy", ":", "6"] for line in text.splitlines()):
            out.append(f)
    return out


def wait_reservations_released(timeout_s: float = 2.0) -> None:
    """Until no SCHED_DEADLINE thread is left: an exited thread's bandwidth leaves the root
    domain only when the kernel reaps it (task_dead_dl, after its last switch, which may follow
    the parent's wait), and a reservation still counted makes the next sched_setattr fail with
    EBUSY (seen here between two attempts)."""
    import time

    end = time.monotonic() + timeout_s
    while (left := deadline_threads()) and time.monotonic() < end:
        time.sleep(0.02)
    assert not left, f"SCHED_DEADLINE threads still alive after {timeout_s} s: {left}"
    time.sleep(0.05)


def _compare(tmp_path, ts, backend, policy):
    """One rt-app run and one rtsched real run of `ts`; what disagrees with WANT (empty: all
    agree), and the measurements. Every reservation is released before each run starts."""
    wait_reservations_released()
    doc, logs, _ = run_rtapp(tmp_path, ts, backend, work="runtime")
    wait_reservations_released()
    ours = rtsched.run(ts, backend=backend, trace=False).jobs
    explained = overrun_chains(ts, ours) if backend == "kernel:deadline" else ours.missed & False
    reserved = {t["name"]: sum(rt) for t, rt in zip(ts.tasks(), rtsched._core.sched_deadline_runtimes(ts))}
    bad, seen_all = [], {}
    for name, (period, run, n) in WANT.items():
        log = logs[name]
        rows = log["rows"]
        jobs = ours[ours.task == name]
        seen = {"rt-app activations": len(rows), "rt-app mean period us": statistics.mean(r["period"] for r in rows[1:]),
                "rt-app median run us": statistics.median(r["run"] for r in rows), "rtsched jobs": len(jobs),
                "rtsched mean start gap us": jobs.start_ns.diff().dropna().mean() / 1000,
                "rtsched median exec us": jobs.exec_ns.median() / 1000, "rtsched missed": int(jobs.missed.sum()),
                "rtsched missed after an overrun": int(explained[jobs.index].sum()),
                "rtsched overruns": int((jobs.exec_ns > reserved[name]).sum()) if backend == "kernel:deadline" else 0}
        seen_all[name] = seen
        checks = {
            # rt-app: the policy and configured values as exported, activations, periods, run times.
            "policy": policy in log["policy"],
            "configured": all(r["c_period"] == period and r["c_duration"] == run for r in rows),
            "rt-app activations": abs(seen["rt-app activations"] - n) <= 2,
            "rt-app period": abs(seen["rt-app mean period us"] - period) <= 0.02 * period,
            "rt-app run": 0.99 * run <= seen["rt-app median run us"] <= 1.1 * run,
            # rtsched's own real run of the same file under the same policy.
            "rtsched jobs": abs(seen["rtsched jobs"] - n) <= 2,
            "same activations": abs(seen["rtsched jobs"] - seen["rt-app activations"]) <= 2,
            "rtsched period": abs(seen["rtsched mean start gap us"] - period) <= 0.02 * period,
            "rtsched exec": abs(seen["rtsched median exec us"] - run) <= 0.3 * run,
            # Under SCHED_DEADLINE a miss is allowed only where an overrun explains it: this
            # kernel has no IRQ_TIME_ACCOUNTING, so an interrupt's time is charged to the thread
            # it hit, and one job in 4–6 runs of 300 here was charged 1.3–4.3 ms for 1 or 3 ms
            # of work, beyond its reservation (WCET + 250 us / 10 %); the CBS throttled it and
            # the jobs after it missed until the reservation caught up (test_soak's
            # overrun_chains). At most 1 % of a run's jobs may overrun.
            "rtsched no miss": seen["rtsched missed"] == seen["rtsched missed after an overrun"],
            "rtsched overruns": seen["rtsched overruns"] <= 0.01 * n,
        }
        bad += [f"{name}: {k}" for k, ok in checks.items() if not ok]
    return bad, seen_all


@real
@pytest.mark.parametrize("backend,policy", [("kernel:fifo:file", "SCHED_FIFO"), ("kernel:deadline", "SCHED_DEADLINE")])
def test_exported_set_runs_in_rtapp_like_rtsched(tmp_path, backend, policy):
    """Up to three attempts (host steal on this VM can stretch one run), each printed; the
    last is asserted, with every check as strict as the first."""
    import os

    f = tmp_path / "set.yaml"
    f.write_text(SET % (os.cpu_count() or 1))
    ts = rtsched.load_taskset(f)
    for attempt in range(3):
        d = tmp_path / f"attempt{attempt}"
        d.mkdir()
        bad, seen = _compare(d, ts, backend, policy)
        print(f"{backend} attempt {attempt + 1}: {seen}; failed: {bad or 'none'}")
        if not bad:
            break
    assert not bad, (bad, seen)


@real
def test_fork_join_export_runs_in_rtapp(tmp_path):
    """fft (40 ms; regions [2 ms], [3 ms, 1.5 ms], [1 ms]) as two rt-app threads joined by
    barriers: rt-app 1.0 accepts the barriers and both lanes loop once per period: 2 s / 40 ms
    = 50 activations each (±2); lane 0's run per loop 2 + 3 + 1 = 6 ms, lane 1's 1.5 ms. The
    export's default `run` events: every loop executes the same loop count (rt-app's `perf`),
    the one rt-app derives from the exported durations and its own printed calibration (loops ×
    pLoad = the run's duration, within 1 % for the integer divisions, rt-app/src/rt-app.c
    `loadwait`); the wall-time error of that calibration is printed, not judged."""
    from test_convert import FORK_JOIN

    f = tmp_path / "fj.yaml"
    f.write_text(FORK_JOIN + "run: {duration: 2s}\n")
    doc, logs, p_load = run_rtapp(tmp_path, rtsched.load_taskset(f), "kernel:fifo")
    for name, runs in (("fft.0", (2000, 3000, 1000)), ("fft.1", (1500,))):
        rows = logs[name]["rows"]
        assert abs(len(rows) - 50) <= 2, (name, len(rows))
        assert all(r["c_duration"] == sum(runs) and r["c_period"] == 40000 for r in rows)
        perf = {r["perf"] for r in rows}
        assert len(perf) == 1 and abs(perf.pop() * p_load - sum(runs) * 1000) <= 0.01 * sum(runs) * 1000, \
            (name, p_load, {r["perf"] for r in rows})
        assert abs(statistics.mean(r["period"] for r in rows[1:]) - 40000) <= 0.02 * 40000
        print(f"{name}: pLoad {p_load} ns, median wall run {statistics.median(r['run'] for r in rows)} us for {sum(runs)} us")

