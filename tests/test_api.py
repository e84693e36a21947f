"""The Python API: load_taskset, simulate, Result (summary dict, DataFrames, gantt)."""

import threading
import time

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rtsched
from conftest import EXAMPLES


def test_simulate_returns_summary_and_jobs():
    ts = rtsched.load_taskset(EXAMPLES / "dhall.yaml")
    r = rtsched.simulate(ts, scheduler="gedf", duration=110, seed=1)
    assert isinstance(r.summary, dict)
    assert r.summary["jobs"] == len(r.jobs) == 11 + 11 + 10
    assert r.summary["missed"] >= 1
    assert isinstance(r.jobs, pd.DataFrame)
    heavy = r.jobs[r.jobs.task == "heavy"].iloc[0]
    assert heavy.start_ns == 2_000_000 and heavy.finish_ns == 12_000_000 and heavy.missed
    assert list(r.tasks.index) == ["light1", "light2", "heavy"]


def test_summary_has_the_run_level_counters():
    ts = rtsched.parse_taskset("""
platform: {cpus: 2}
run: {duration: 50}
tasks:
  - {name: l, period: 100, wcet: 10, deadline: 80}
  - {name: p, period: 100, deadline: 30, regions: [1, [3, 3, 3]]}
""")
    # PAWS: p's threads wait in CPU 0's deque while CPU 1 runs l ([1, 7) ms); at 10 both
    # CPUs look for a thread to steal and find none (crates/sim/tests/metrics.rs).
    r = rtsched.simulate(ts, scheduler="paws")
    s = r.summary
    assert (s["priority_inversions"], s["priority_inversion_ns"]) == (1, 6_000_000)
    assert (s["steals"], s["steal_attempts"], s["failed_steals"]) == (0, 2, 2)
    assert r.counters["priority_inversions"] == 1 and r.counters["releases"] == 2
    g = rtsched.simulate(ts, scheduler="gedf").summary
    assert (g["priority_inversions"], g["priority_inversion_ns"], g["steal_attempts"]) == (0, 0, 0)


def test_paths_and_duration_strings():
    r = rtsched.simulate(EXAMPLES / "dhall.yaml", scheduler="pedf", duration="0.22s")
    assert r.document["duration_ns"] == 220_000_000 and r.summary["missed"] == 0


def test_durations_are_exact():
    assert rtsched.parse_duration("0.1") == 100_000
    assert rtsched.parse_duration("250us") == 250_000
    ts = rtsched.parse_taskset('{"platform": {"cpus": 1}, "tasks": [{"name": "a", "period": 0.3, "wcet": 0.1}]}', "json")
    assert ts.tasks()[0]["period_ns"] == 300_000 and ts.tasks()[0]["wcet_ns"] == 100_000


def test_bad_input_raises_input_error():
    with pytest.raises(rtsched.InputError, match="unknown scheduler"):
        rtsched.simulate(EXAMPLES / "dhall.yaml", scheduler="nope")
    with pytest.raises(rtsched.InputError, match="field 'wcet'"):
        rtsched.parse_taskset("platform: {cpus: 1}\ntasks: [{name: a, period: 1}]")
    with pytest.raises(rtsched.InputError):
        rtsched.simulate(EXAMPLES / "dhall.yaml", duration=-1)
    assert issubclass(rtsched.InputError, ValueError)


def test_parse_scheduler_is_the_cores():
    assert rtsched.parse_scheduler("gedf") == ("gedf", [])
    assert rtsched.parse_scheduler("pfp:rm,partition=wfd") == ("pfp", [("", "rm"), ("partition", "wfd")])
    assert rtsched.parse_scheduler("pedf:lwfg+ffd") == ("pedf", [("", "lwfg+ffd")])  # a bare option: key ""
    with pytest.raises(rtsched.InputError, match=r"unknown scheduler 'gedff' \(did you mean 'gedf'\?\)"):
        rtsched.parse_scheduler("gedff:heap")


def test_partition_admission_by_priorities_follows_the_schedulers_rule():
    # rm, dm and file admission take the priorities of that assignment (priority::assign);
    # file needs every task's priority.
    ts = rtsched.parse_taskset("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 6, priority: 1}\n"
                               "  - {name: b, period: 20, wcet: 8}\n  - {name: c, period: 40, wcet: 4}\n", "yaml", "p.yaml")
    for adm in ("rm", "dm"):
        placed, how = rtsched.partition(ts, "ffd", admission=adm)
        assert how == "ffd" and placed.cpus == 2, adm
    with pytest.raises(rtsched.InputError, match=r"^p\.yaml: task 'b': field 'priority': missing, and admission 'file' needs"):
        rtsched.partition(ts, "ffd", admission="file")
    with pytest.raises(rtsched.InputError, match="unknown admission test 'fp'"):
        rtsched.partition(ts, "ffd", admission="fp")


def test_with_partition_adds_the_heuristic_only_where_none_is_chosen():
    from rtsched.commands.common import with_partition

    assert with_partition("pedf", "ffd") == "pedf:partition=ffd"
    assert with_partition("pfp:rm", "wfd") == "pfp:rm,partition=wfd"
    assert with_partition("pedf:wfd", "ffd") == "pedf:wfd"  # pedf's bare option is its heuristic
    assert with_partition("pfp:partition=bfd", "ffd") == "pfp:partition=bfd"
    assert with_partition("gedf", "ffd") == "gedf"
    # Every partitioned policy, as the registry describes it (not a list of names here).
    assert with_partition("pdasa", "wfd") == "pdasa:partition=wfd"
    assert with_partition("lbesa:load", "wfd") == "lbesa:load"  # lbesa's bare option is its heuristic
    assert with_partition("dasa", "load") == "dasa:partition=load"
    assert with_partition("pfp:dm", "ffd") == "pfp:dm,partition=ffd"  # pfp's bare option is its priorities
    assert with_partition("gfp:dm", "ffd") == "gfp:dm" and with_partition("cfs", "ffd") == "cfs"
    assert with_partition("nope", None) == "nope"  # no heuristic: left for the simulator to report
    with pytest.raises(rtsched.InputError, match="unknown scheduler 'nope'"):
        with_partition("nope", "ffd")


def test_all_is_every_policy_that_runs_the_set_decided_without_a_simulation(monkeypatch):
    from rtsched.commands import common as cmd

    # Best-effort tasks: only cfs and linux take them (their descriptions); the others are refused by what
    # their descriptions say they take, before any is built, and nothing is simulated.
    ts = rtsched.parse_taskset("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 1, cpu: 0}\n"
                               "  - {name: f, class: fair}\n", "yaml", "f.yaml")

    def no_simulation(*a, **k):
        raise AssertionError("expand_schedulers simulated")

    monkeypatch.setattr(rtsched._core, "simulate", no_simulation)
    names, skipped = cmd.expand_schedulers(["all"], ts)
    fair = [p["name"] for p in rtsched.schedulers() if p["takes"]["fair"]]
    assert names == fair and fair == ["cfs", "linux"]
    assert [n for n, _ in skipped] == [p["name"] for p in rtsched.schedulers() if p["name"] not in fair]
    assert skipped[0] == ("gedf", "f.yaml: task 'f' is best-effort (class: fair) and scheduler 'gedf' has no fair "
                                  "class; use cfs or linux")
    # Two CPUs, no cpu fields: the partitioned ones need a partition (their build says so)
    # unless --partition gives one, which reaches each as its description spells it.
    ts = rtsched.parse_taskset("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 3}\n"
                               "  - {name: b, period: 20, wcet: 4}\n", "yaml", "u.yaml")
    partitioned = [p["name"] for p in rtsched.schedulers() if p["partition"]]
    assert {"pedf", "pfp", "dasa", "pdasa", "lbesa"} <= set(partitioned)
    names, skipped = cmd.expand_schedulers(["all"], ts)
    assert sorted(n for n, _ in skipped) == sorted(partitioned), skipped
    assert all("field 'cpu'" in why for _, why in skipped), skipped
    names, skipped = cmd.expand_schedulers(["all"], ts, partition="wfd")
    assert skipped == [] and "pdasa:partition=wfd" in names and "lbesa:partition=wfd" in names, names
    # A run says the same of the same set (the refusal is its own first step).
    monkeypatch.undo()
    why = dict(cmd.expand_schedulers(["all"], ts)[1])["pdasa"]
    with pytest.raises(rtsched.InputError) as e:
        rtsched.simulate(ts, "pdasa", _warn=False)
    assert str(e.value) == why and e.value.status == "not-applicable"


def test_gantt(tmp_path):
    r = rtsched.simulate(EXAMPLES / "quad-mixed.yaml", scheduler="gedf", trace=True)
    assert len(r.intervals) > 0
    r.gantt(tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"


def test_simulate_releases_the_gil():
    """A long simulation in one thread must let other Python threads run."""
    ts = rtsched.parse_taskset(
        "platform: {cpus: 8}\nrun: {duration: 20s}\ntasks:\n"
        + "".join(f"  - {{name: t{i}, period: {1 + i % 7}, wcet: {0.5 + (i % 3) * 0.1:.1f}}}\n" for i in range(24))
    )
    done = threading.Event()
    ticks = 0

    def work():
        # Five runs of 20 s simulated: one took 47 ms on a fast host, too short to tell.
        for _ in range(5):
            rtsched.simulate(ts, "gedf")
        done.set()

    t = threading.Thread(target=work)
    t0 = time.perf_counter()
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    elapsed = time.perf_counter() - t0
    assert elapsed > 0.05, "simulation too short to tell"
    # With the GIL held the loop would not advance at all during the simulation.
    assert ticks >= 0.3 * elapsed / 0.001 * 0.5


task = st.tuples(st.integers(1, 20), st.integers(1, 100), st.integers(0, 10))


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 4), tasks=st.lists(task, min_size=1, max_size=8), seed=st.integers(0, 2**32),
       sched=st.sampled_from(["gedf", "gnpedf", "gfp:rm", "gfifo"]))
def test_summary_is_consistent_with_jobs(m, tasks, seed, sched):
    lines = [f"  - {{name: t{i}, period: {p}, wcet: {max(1, p * c) / 100}, offset: {o}}}" for i, (p, c, o) in enumerate(tasks)]
    ts = rtsched.parse_taskset(f"platform: {{cpus: {m}}}\nrun: {{duration: 100, seed: {seed}, execution: {{model: uniform, min: 0.5}}}}\ntasks:\n" + "\n".join(lines))
    r = rtsched.simulate(ts, sched)
    s, j = r.summary, r.jobs
    assert s["jobs"] == len(j) == s["met"] + s["missed"]
    assert s["missed"] == int(j.missed.sum())
    done = j.dropna(subset=["finish_ns"])
    assert (done.finish_ns - done.release_ns >= done.demand_ns).all()
    assert ((done.finish_ns > done.deadline_ns) == done.missed).all()
    assert (j.release_ns < ts.duration_ns).all()
    assert abs(s["dsr"] - s["met"] / s["jobs"]) < 1e-12


def test_a_scheduler_that_cannot_run_the_set_raises_with_its_status():
    # The status comes from the kind of failure (the core's), in the words of a sweep's rows.
    four = rtsched.load_taskset({"platform": {"cpus": 4}, "run": {"duration": 20},
                                 "tasks": [{"name": f"t{i}", "period": 10, "wcet": w} for i, w in enumerate([9, 9, 9, 9, 3])]})
    cases = [("pedf:ffd", "partition-failed"), ("pedf:ffd+global", "partition-failed"), ("pedf", "not-applicable")]
    for spec, status in cases:
        with pytest.raises(rtsched.InputError) as e:
            rtsched.simulate(four, spec)
        assert e.value.status == status, (spec, e.value)
    dl = rtsched.load_taskset({"platform": {"cpus": 2}, "run": {"duration": 20}, "tasks": [
        {"name": "a", "period": 10, "wcet": 4, "sections": [{"resource": "x", "start": 0, "length": 3}, {"resource": "y", "start": 1, "length": 1}]},
        {"name": "b", "period": 10, "wcet": 4, "sections": [{"resource": "y", "start": 0, "length": 3}, {"resource": "x", "start": 1, "length": 1}]}]})
    with pytest.raises(rtsched.InputError) as e:
        rtsched.simulate(dl, "gedf")
    assert e.value.status == "deadlock" and "deadlock at 1ms" in str(e.value)
    assert rtsched.simulate(four, "gedf").ok and rtsched.simulate(four, "gedf").status == "ok"


def test_rtsched_sweep_is_the_package_and_calls_its_function(monkeypatch):
    """``import rtsched.sweep`` and ``rtsched.sweep.parse_spec`` reach the package; ``rtsched.sweep(spec)``
    runs a sweep: one name, not a function hiding the package."""
    import inspect
    import subprocess
    import sys

    import rtsched.sweep

    assert rtsched.sweep is sys.modules["rtsched.sweep"] and callable(rtsched.sweep.parse_spec)
    assert inspect.signature(rtsched.sweep) == inspect.signature(rtsched.sweep.sweep)
    monkeypatch.setattr(rtsched.sweep, "sweep", lambda *a, **k: ("ran", a, k))
    assert rtsched.sweep({"name": "s"}, workers=1) == ("ran", ({"name": "s"},), {"workers": 1})
    # the same in a fresh interpreter, the package imported before and after rtsched
    for code in ("import rtsched.sweep, rtsched; assert callable(rtsched.sweep) and rtsched.sweep.load_spec",
                 "import rtsched; import rtsched.sweep as s; assert s is rtsched.sweep and s.read_table"):
        subprocess.run([sys.executable, "-c", code], check=True)
