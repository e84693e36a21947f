"""`rtsched convert`: rt-app JSON in and out, SimSo XML in (issue #39; docs/workloads.md).

Hand-worked: tests/data/convert/workload.json describes, on 2 CPUs,
- `sensor` ×2 (instance 2), SCHED_FIFO (global default_policy) priority 50 on CPU 1: run 1000 us
  every 10 000 us → sensor-0, sensor-1: T = 10 ms, C = 1 ms, priority 50, cpu 1;
- `control`, SCHED_FIFO 40, delay 500 us: run 300, lock bus, run 500, lock log, runtime 200,
  unlock log, run 100, unlock bus, run 400, timer 20 000 → T = 20 ms, C = 300+500+200+100+400 =
  1500 us, offset 500 us, bus held from 300 us for 500+200+100 = 800 us, log nested inside it
  from 800 us for 200 us;
- `planner`, SCHED_DEADLINE dl-runtime 6000, dl-period 50 000, dl-deadline 40 000; one phase
  (loop 3) of run 2000, lock bus, run 1000, unlock, run 2000, timer 50 000 → T = 50 ms,
  C = 5 ms, D = 40 ms, no priority, bus from 2 ms for 1 ms;
- global duration 2 (s), pi_enabled (noted in the description).
"""

from __future__ import annotations

import json
import math
import os
import textwrap
from pathlib import Path

import pytest

import rtsched
from conftest import run_cli
from rtsched.convert import from_document, read, rtapp_text
from rtsched.convert.rtapp import loads
from rtsched.convert.rtapp_export import fifo_levels, to_rtapp

DATA = Path(__file__).resolve().parent / "data" / "convert"
MS = 1_000_000
US = 1_000


def sec(resource, start_ns, length_ns):
    return {"resource": resource, "region": 0, "thread": 0, "start_ns": start_ns, "length_ns": length_ns}


def fields(t):
    """The fields a conversion must keep, of one task of TaskSet.tasks()."""
    return {k: t[k] for k in ("name", "period_ns", "wcet_ns", "deadline_ns", "offset_ns", "priority", "cpu", "sections", "regions",
                              "max_interarrival_ns")}


def test_rtapp_workload_converts_to_the_task_set_it_describes():
    ts, kind, desc = read(DATA / "workload.json", cpus=2)
    assert kind == "rtapp"
    assert ts.cpus == 2 and ts.duration_ns == 2000 * MS
    assert "pi_enabled" in desc
    assert ts.resources == ["bus", "log"]
    got = [fields(t) for t in ts.tasks()]
    base = {"offset_ns": 0, "cpu": None, "sections": [], "regions": [], "max_interarrival_ns": None}
    want = [
        dict(base, name="sensor-0", period_ns=10 * MS, wcet_ns=1 * MS, deadline_ns=10 * MS, priority=50, cpu=1),
        dict(base, name="sensor-1", period_ns=10 * MS, wcet_ns=1 * MS, deadline_ns=10 * MS, priority=50, cpu=1),
        dict(base, name="control", period_ns=20 * MS, wcet_ns=1500 * US, deadline_ns=20 * MS, offset_ns=500 * US, priority=40,
             sections=[sec("bus", 300 * US, 800 * US), sec("log", 800 * US, 200 * US)]),
        dict(base, name="planner", period_ns=50 * MS, wcet_ns=5 * MS, deadline_ns=40 * MS, priority=None,
             sections=[sec("bus", 2 * MS, 1 * MS)]),
    ]
    assert got == want


def test_cli_writes_yaml_and_json_by_extension(tmp_path):
    y, j = tmp_path / "w.yaml", tmp_path / "w.json"
    p = run_cli("convert", DATA / "workload.json", "-o", y, "--cpus", "2", check=0)
    assert "4 tasks on 2 CPUs" in p.stderr and "read as rt-app" in p.stderr
    run_cli("convert", DATA / "workload.json", "-o", j, "--cpus", "2", check=0)
    json.loads(j.read_text())  # real JSON
    a, b = rtsched.load_taskset(y), rtsched.load_taskset(j)
    assert [fields(t) for t in a.tasks()] == [fields(t) for t in b.tasks()]
    assert a.duration_ns == b.duration_ns == 2000 * MS
    # rtsched → rtsched (YAML to JSON) keeps the set too.
    j2 = tmp_path / "again.json"
    run_cli("convert", y, "-o", j2, check=0)
    assert [fields(t) for t in rtsched.load_taskset(j2).tasks()] == [fields(t) for t in a.tasks()]


HAND = """\
platform: {cpus: 2}
run: {duration: 3s}
resources: [bus, log]
tasks:
  - {name: a, period: 10ms, wcet: 1ms, priority: 60, cpu: 0}
  - {name: b, period: 20ms, wcet: 3ms, deadline: 15ms, offset: 2ms, priority: 50,
     sections: [{resource: bus, start: 500us, length: 2ms}, {resource: log, start: 1ms, length: 500us},
                {resource: log, start: 2500us, length: 250us}]}
  - {name: c, period: 40ms, wcet: 4ms, priority: 40, sections: [{resource: bus, start: 0, length: 4ms}]}
"""


def test_export_by_hand(tmp_path):
    """Task b: run 500, lock bus, run 500, lock log, run 500, unlock log (1.5 ms), run 1000 (bus
    ends at 2.5 ms), unlock bus, lock log, run 250, unlock log, run 250, timer 20 000; FIFO 50 (the
    file's, within 1…99); D = 15 ms kept as dl-deadline; offset 2 ms → delay 2000."""
    f = tmp_path / "hand.yaml"
    f.write_text(HAND)
    doc = to_rtapp(rtsched.load_taskset(f), "kernel:fifo", print)
    assert doc["global"]["duration"] == 3
    b = doc["tasks"]["b"]
    assert list(b.items()) == [
        ("policy", "SCHED_FIFO"), ("priority", 50), ("dl-deadline", 15000), ("delay", 2000),
        ("run0", 500), ("lock0", "bus"), ("run1", 500), ("lock1", "log"), ("run2", 500), ("unlock0", "log"),
        ("run3", 1000), ("unlock1", "bus"), ("lock2", "log"), ("run4", 250), ("unlock2", "log"), ("run5", 250),
        ("timer0", {"ref": "unique", "period": 20000})]
    c = doc["tasks"]["c"]
    assert [k for k in c if k.startswith(("run", "lock", "unlock"))] == ["lock0", "run0", "unlock0"]
    assert doc["tasks"]["a"]["cpus"] == [0]
    # SCHED_DEADLINE: runtime = WCET + max(250 us, 10 %) as rtsched's kernel:deadline reserves,
    # times 1.3 for rt-app's calibrated loop (RTAPP_RUN_ERROR), capped at D: a 1 + 0.25 ms →
    # 1.625 ms; b 3 + 0.3 → 4.29 ms; c 4 + 0.4 → 5.72 ms.
    dl = to_rtapp(rtsched.load_taskset(f), "kernel:deadline", print)["tasks"]
    assert (dl["a"]["dl-runtime"], dl["a"]["dl-period"], dl["a"]["dl-deadline"]) == (1625, 10000, 10000)
    assert (dl["b"]["dl-runtime"], dl["b"]["dl-period"], dl["b"]["dl-deadline"]) == (4290, 20000, 15000)
    assert (dl["c"]["dl-runtime"], dl["c"]["policy"]) == (5720, "SCHED_DEADLINE")
    assert "priority" not in dl["a"]


def test_fifo_priorities_rm_dm_and_out_of_range():
    assert fifo_levels([3, 2, 1]) == [89, 49, 10]
    assert fifo_levels([7]) == [10]
    doc = {"platform": {"cpus": 1}, "tasks": [{"name": "x", "period": 30, "wcet": 1, "deadline": 5},
                                               {"name": "y", "period": 10, "wcet": 1}]}
    ts = from_document(doc, "t")
    rm = to_rtapp(ts, "kernel:fifo", print)["tasks"]  # no priorities: rate-monotonic
    assert (rm["x"]["priority"], rm["y"]["priority"]) == (10, 89)
    dm = to_rtapp(ts, "kernel:fifo:dm", print)["tasks"]
    assert (dm["x"]["priority"], dm["y"]["priority"]) == (89, 10)
    doc["tasks"][0]["priority"], doc["tasks"][1]["priority"] = 500, 7
    warned = []
    f = to_rtapp(from_document(doc, "t"), "kernel:fifo", warned.append)["tasks"]
    assert (f["x"]["priority"], f["y"]["priority"]) == (89, 10) and "outside SCHED_FIFO" in warned[0]


def roundtrip(ts, backend):
    text = rtapp_text(ts, backend)
    back = from_document(_from_rtapp_text(text, ts.cpus), "back")
    return back


def _from_rtapp_text(text, cpus):
    from rtsched.convert.rtapp import from_rtapp

    return from_rtapp(loads(text), "back.json", cpus, lambda m: None)


def test_round_trip_fifo_keeps_everything(tmp_path):
    f = tmp_path / "hand.yaml"
    f.write_text(HAND)
    ts = rtsched.load_taskset(f)
    back = roundtrip(ts, "kernel:fifo:file")
    assert [fields(t) for t in back.tasks()] == [fields(t) for t in ts.tasks()]
    assert back.duration_ns == ts.duration_ns


def test_round_trip_deadline_keeps_all_but_priorities(tmp_path):
    f = tmp_path / "hand.yaml"
    f.write_text(HAND)
    ts = rtsched.load_taskset(f)
    back = roundtrip(ts, "kernel:deadline")
    assert [dict(fields(t), priority=None) for t in back.tasks()] == [dict(fields(t), priority=None) for t in ts.tasks()]
    assert all(t["priority"] is None for t in back.tasks())


def test_work_as_runtime_events(tmp_path):
    """`--work runtime`: every run event is written as rt-app's wall-time `runtime` (numbered,
    so not read as the thread's dl-runtime), in the same order with the same values; under
    kernel:deadline the reservation is rtsched's own (no ×1.3 for run's calibration); the file
    reads back as the same task set. A bad value is refused naming the option."""
    from rtsched.convert.rtapp_export import to_rtapp

    f = tmp_path / "hand.yaml"
    f.write_text(HAND)
    ts = rtsched.load_taskset(f)
    for backend in ("kernel:fifo:file", "kernel:deadline"):
        run = to_rtapp(ts, backend, print)["tasks"]
        rt = to_rtapp(ts, backend, print, work="runtime")["tasks"]
        for name, th in run.items():
            want = [(("runtime" + k[3:]) if k[:3] == "run" and k[3:].isdigit() else k, v) for k, v in th.items() if k != "dl-runtime"]
            assert [(k, v) for k, v in rt[name].items() if k != "dl-runtime"] == want
            assert any(k.startswith("runtime") for k in rt[name]) and not any(k[:3] == "run" and k[3:].isdigit() for k in rt[name])
        back = from_document(_from_rtapp_text(rtapp_text(ts, backend, work="runtime"), ts.cpus), "back")
        assert [dict(fields(t), priority=None) for t in back.tasks()] == [dict(fields(t), priority=None) for t in ts.tasks()]
    runtimes = rtsched._core.sched_deadline_runtimes(ts)
    dl_run = to_rtapp(ts, "kernel:deadline", print)["tasks"]
    dl_rt = to_rtapp(ts, "kernel:deadline", print, work="runtime")["tasks"]
    for t, rt in zip(ts.tasks(), runtimes):
        d_us = t["deadline_ns"] // 1000
        assert dl_rt[t["name"]]["dl-runtime"] == min(-(-rt[0] // 1000), d_us)
        assert dl_run[t["name"]]["dl-runtime"] == min(math.ceil(rt[0] * 1.3 / 1000), d_us)
    with pytest.raises(rtsched.InputError, match="--work: 'loops'"):
        to_rtapp(ts, "kernel:fifo", print, work="loops")
    run_cli("convert", f, "-o", tmp_path / "o.json", "--to", "rt-app", "--work", "runtime", check=0)
    assert "runtime0" in (tmp_path / "o.json").read_text()
    assert "apply to --to rt-app" in run_cli("convert", f, "-o", tmp_path / "o.yaml", "--work", "runtime", check=2).stderr


def test_round_trip_through_the_cli(tmp_path):
    f = tmp_path / "hand.yaml"
    f.write_text(HAND)
    r, back = tmp_path / "hand-rtapp.json", tmp_path / "back.yaml"
    run_cli("convert", f, "-o", r, "--to", "rt-app", check=0)
    run_cli("convert", r, "-o", back, "--cpus", "2", check=0)
    assert [fields(t) for t in rtsched.load_taskset(back).tasks()] == [fields(t) for t in rtsched.load_taskset(f).tasks()]


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def tasksets(draw):
    n = draw(st.integers(1, 5))
    tasks = []
    for i in range(n):
        period = draw(st.integers(1, 500)) * 100  # us
        wcet = draw(st.integers(1, period))
        t = {"name": f"t{i}", "period": f"{period}us", "wcet": f"{wcet}us", "priority": draw(st.integers(1, 99))}
        if draw(st.booleans()):
            t["deadline"] = f"{draw(st.integers(1, 2 * period))}us"
        if draw(st.booleans()):
            t["offset"] = f"{draw(st.integers(0, period))}us"
        if draw(st.booleans()):
            t["cpu"] = draw(st.integers(0, 1))
        # Up to two sections, the second nested in the first or after it.
        if wcet >= 3 and draw(st.booleans()):
            s0 = draw(st.integers(0, wcet - 2))
            l0 = draw(st.integers(1, wcet - s0))
            secs = [{"resource": "r0", "start": f"{s0}us", "length": f"{l0}us"}]
            if l0 >= 2 and draw(st.booleans()):
                s1 = draw(st.integers(s0, s0 + l0 - 1))
                secs.append({"resource": "r1", "start": f"{s1}us", "length": f"{draw(st.integers(1, s0 + l0 - s1))}us"})
            elif s0 + l0 < wcet and draw(st.booleans()):
                s1 = draw(st.integers(s0 + l0, wcet - 1))
                secs.append({"resource": "r1", "start": f"{s1}us", "length": f"{draw(st.integers(1, wcet - s1))}us"})
            t["sections"] = secs
        tasks.append(t)
    return {"platform": {"cpus": 2}, "run": {"duration": f"{draw(st.integers(1, 5))}s"}, "tasks": tasks}


@settings(max_examples=150, deadline=None)
@given(tasksets())
def test_round_trip_property(doc):
    """rtsched → rt-app → rtsched keeps periods, WCETs, deadlines, offsets, priorities, CPUs and
    (nested) critical sections of any whole-microsecond task set (kernel:fifo:file)."""
    ts = from_document(doc, "gen")
    back = roundtrip(ts, "kernel:fifo:file")
    key = lambda t: dict(fields(t), sections=sorted(map(lambda s: tuple(s.values()), t["sections"])))  # noqa: E731
    assert [key(t) for t in back.tasks()] == [key(t) for t in ts.tasks()]
    assert back.duration_ns == ts.duration_ns


def rtapp_file(tmp_path, tasks, glob=None):
    f = tmp_path / "in.json"
    f.write_text(json.dumps({"global": glob or {}, "tasks": tasks}))
    return f


@pytest.mark.parametrize("event,value,refusal", [
    ("barrier", "sync0", "waits both for its timer and for other threads"), ("fork", "other", "forks 'other', no such task"),
    ("wait", {"ref": "c", "mutex": "m"}, "waits both for its timer"), ("sync", {"ref": "c", "mutex": "m"}, "waits both for its timer"),
    ("suspend", "t", "waits both for its timer"),
])
def test_events_a_timer_thread_cannot_have_are_refused(tmp_path, event, value, refusal):
    """A thread released by its timer and by another thread at once has no rtsched form (a task
    has one release); the reason says what rtsched would need. (docs/workloads.md's event table;
    the events' mappings are tests/test_convert_rtapp_dialect.py's.)"""
    f = rtapp_file(tmp_path, {"worker": {"run0": 100, f"{event}0": value, "timer0": {"ref": "unique", "period": 1000}}})
    p = run_cli("convert", f, "-o", tmp_path / "out.yaml", "--cpus", "1", check=2)
    assert "task 'worker'" in p.stderr and f"event '{event}0'" in p.stderr and "Traceback" not in p.stderr
    assert refusal in p.stderr, p.stderr
    assert not (tmp_path / "out.yaml").exists()


def test_refused_event_in_a_phase_names_the_phase(tmp_path):
    f = rtapp_file(tmp_path, {"w": {"phases": {"p0": {"run": 100, "timer": {"ref": "u", "period": 1000}},
                                                  "p1": {"run": 100, "barrier": "b"}}}})
    p = run_cli("convert", f, "-o", tmp_path / "out.yaml", "--cpus", "1", check=2)
    assert "in.json:1: task 'w', phase 'p1', event 'barrier'" in p.stderr, p.stderr


@pytest.mark.parametrize("task,words", [
    ({"cpus": [0, 1], "run": 10, "timer": {"ref": "u", "period": 100}}, ["task 'w'", "field 'cpus'", "subset"]),
    ({"run": 10, "timer0": {"ref": "u", "period": 100}, "run1": 10, "timer1": {"ref": "v", "period": 200}}, ["task 'w'", "timers of different periods"]),
    ({"lock": "m", "run": 10, "timer": {"ref": "u", "period": 100}}, ["task 'w'", "'m' is locked 1 times and unlocked 0"]),
    ({"lock0": "a", "lock1": "b", "run": 10, "unlock0": "a", "unlock1": "b", "timer": {"ref": "u", "period": 100}}, ["event 'unlock0'", "nested"]),
    ({"run": 10, "policy": "SCHED_FIFO"}, ["task 'w'", "never sleeps or waits"]),
    ({"run": 10, "timer": {"ref": "u", "period": 100}, "policy": "SCHED_DEADLINE"}, ["task 'w'", "SCHED_DEADLINE without"]),
    ({"run": 10.5, "timer": {"ref": "u", "period": 100}}, ["event 'run'", "whole number of microseconds"]),
    ({"run": 10, "timer": {"ref": "u", "period": 100}, "prio": 3}, ["task 'w'", "field 'prio'"]),
    ({"run": 10, "timer": {"ref": "u", "period": 100}, "policy": "SCHED_FIFO", "priority": 120}, ["field 'priority'", "1 to 99"]),
])
def test_other_refusals_name_task_and_field(tmp_path, task, words):
    f = rtapp_file(tmp_path, {"w": task})
    p = run_cli("convert", f, "-o", tmp_path / "out.yaml", "--cpus", "4", check=2)
    for w in words:
        assert w in p.stderr, p.stderr


def test_phases_sleep_and_duplicate_keys(tmp_path):
    """- `ph`: phases light (loop 2: run 1000, timer 10 000) and heavy (loop 1: run 4000, timer
      10 000): jobs of 1 ms and 4 ms → C = the largest, 4 ms, with a warning.
    - `sl`: run 2000, sleep 8000, no timer → T = 10 ms (warned), C = 2 ms.
    - `dup`: workgen-style repeated keys run 300, timer, run 300 — in order: the cyclic jobs are
      [run 300 + run 300 (after the timer, wrapping)] → C = 600 us, T = 5 ms."""
    f = tmp_path / "in.json"
    f.write_text(textwrap.dedent("""\
        {"global": {"default_policy": "SCHED_FIFO"},
         "tasks": {
          "ph": {"phases": {"light": {"loop": 2, "run": 1000, "timer": {"ref": "unique", "period": 10000}},
                            "heavy": {"run": 4000, "timer": {"ref": "unique", "period": 10000}}}},
          "sl": {"run": 2000, "sleep": 8000},
          "dup": {"run": 300, "timer": {"ref": "unique", "period": 5000}, "run": 300}}}
        """))
    warned = []
    ts, _, _ = read(f, cpus=1, warn=warned.append)
    got = {t["name"]: (t["period_ns"], t["wcet_ns"], t["priority"]) for t in ts.tasks()}
    assert got == {"ph": (10 * MS, 4 * MS, 10), "sl": (10 * MS, 2 * MS, 10), "dup": (5 * MS, 600 * US, 10)}
    assert any("task 'ph'" in w and "largest job" in w for w in warned)
    assert any("task 'sl'" in w and "runs and sleeps" in w for w in warned)


def test_simso_fixture_converts(tmp_path):
    """tests/data/convert/simso.xml (SimSo's own Configuration loader reads it, below): 2
    processors, duration 500 000 000 cycles at 1 000 000 cycles/ms = 500 ms; T1 10/2/10; T2
    25/7.25/20 activated at 1.5 ms; S3 sporadic at 0, 40, 70, 150 ms → minimum
    inter-arrival 30 ms, C = 5, D = 30."""
    warned = []
    ts, kind, desc = read(DATA / "simso.xml", warn=warned.append)
    assert kind == "simso" and "simso.schedulers.EDF" in desc
    assert ts.cpus == 2 and ts.duration_ns == 500 * MS and ts.on_miss == "continue"
    got = [(t["name"], t["period_ns"], t["wcet_ns"], t["deadline_ns"], t["offset_ns"]) for t in ts.tasks()]
    assert got == [("T1", 10 * MS, 2 * MS, 10 * MS, 0), ("T2", 25 * MS, 7250 * US, 20 * MS, 1500 * US), ("S3", 30 * MS, 5 * MS, 30 * MS, 0)]
    assert any("S3" in w and "30 ms" in w for w in warned)
    run_cli("convert", DATA / "simso.xml", "-o", tmp_path / "s.yaml", check=0)


def test_simso_fixture_is_simso_format():
    cfg = pytest.importorskip("simso.configuration")
    c = cfg.Configuration(str(DATA / "simso.xml"))
    c.check_all()
    assert [(t.name, t.period, t.wcet, t.deadline) for t in c.task_info_list][:2] == [("T1", 10.0, 2.0, 10.0), ("T2", 25.0, 7.25, 20.0)]


@pytest.mark.parametrize("body,words", [
    ('<simulation><processors/><tasks/></simulation>', ["no <processors>"]),
    ('<!DOCTYPE x [<!ENTITY a "b">]><simulation/>', ["DOCTYPE"]),
    ('<simulation><processors><processor id="1"/></processors><tasks><task name="A" task_type="APeriodic" WCET="1" deadline="2"/></tasks></simulation>',
     ["task 'A'", "aperiodic"]),
    ('<simulation><processors><processor id="1"/></processors><tasks><task name="A" period="1" WCET="1" deadline="2" followed_by="2"/></tasks></simulation>',
     ["task 'A'", "followed_by"]),
    ('<simulation><processors><processor id="1"/></processors><tasks><task name="A" period="1" deadline="2"/></tasks></simulation>',
     ["task 'A'", "field 'WCET'"]),
])
def test_simso_refusals(tmp_path, body, words):
    f = tmp_path / "s.xml"
    f.write_text(body)
    p = run_cli("convert", f, "-o", tmp_path / "o.yaml", check=2)
    for w in words:
        assert w in p.stderr, p.stderr


FORK_JOIN = """\
platform: {cpus: 2}
tasks:
  - {name: fft, period: 40ms, priority: 30, regions: [2ms, [3ms, 1500us], 1ms],
     sections: [{resource: m, region: 1, thread: 1, start: 500us, length: 500us}]}
"""


def test_fork_join_exports_as_lanes_joined_by_barriers(tmp_path):
    """fft: regions [2 ms], [3 ms, 1.5 ms], [1 ms] → lane 0 (fft.0) runs 2000, 3000, 1000; lane
    1 (fft.1) runs only region 1's second thread: 500, lock m, 500, unlock m, 500; both reach
    the barriers fft-join0, -join1, -join2 after each region. Under kernel:deadline each lane
    has its own reservation: 6000 + 600 = 6600 us and 1500 + 250 = 1750 us."""
    f = tmp_path / "fj.yaml"
    f.write_text(FORK_JOIN)
    warned = []
    doc = to_rtapp(rtsched.load_taskset(f), "kernel:fifo", warned.append)["tasks"]
    assert list(doc) == ["fft.0", "fft.1"] and "fork-join" in warned[0]
    assert [(k, v) for k, v in doc["fft.0"].items() if k.startswith(("run", "barrier", "lock", "unlock"))] == [
        ("run0", 2000), ("barrier0", "fft-join0"), ("run1", 3000), ("barrier1", "fft-join1"), ("run2", 1000), ("barrier2", "fft-join2")]
    assert [(k, v) for k, v in doc["fft.1"].items() if k.startswith(("run", "barrier", "lock", "unlock"))] == [
        ("barrier0", "fft-join0"), ("run0", 500), ("lock0", "m"), ("run1", 500), ("unlock0", "m"), ("run2", 500),
        ("barrier1", "fft-join1"), ("barrier2", "fft-join2")]
    assert doc["fft.1"]["priority"] == 30 and doc["fft.1"]["timer0"]["period"] == 40000
    dl = to_rtapp(rtsched.load_taskset(f), "kernel:deadline", print)["tasks"]
    assert (dl["fft.0"]["dl-runtime"], dl["fft.1"]["dl-runtime"]) == (8580, 2275)  # (6 + 0.6) × 1.3, (1.5 + 0.25) × 1.3
    # Read back: the barrier is refused, naming the thread and the event.
    out = tmp_path / "fj.json"
    out.write_text(json.dumps({"global": {}, "tasks": doc}))
    p = run_cli("convert", out, "-o", tmp_path / "back.yaml", "--cpus", "2", check=2)
    assert "task 'fft.0'" in p.stderr and "event 'barrier0'" in p.stderr


def test_export_refusals(tmp_path):
    f = tmp_path / "fj.yaml"
    f.write_text("platform: {cpus: 2}\ntasks:\n  - {name: a.0, period: 10, wcet: 1}\n  - {name: a, period: 40ms, regions: [2ms, [3ms, 1ms]]}\n")
    p = run_cli("convert", f, "-o", tmp_path / "o.json", "--to", "rt-app", check=2)
    assert "task 'a'" in p.stderr and "'a.0'" in p.stderr
    f.write_text("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 1}\n  - {name: hog, class: fair}\n")
    p = run_cli("convert", f, "-o", tmp_path / "o.json", "--to", "rt-app", check=2)
    assert "class: fair" in p.stderr
    f.write_text("platform: {cpus: 2}\ntasks:\n  - {name: s, min_interarrival: 10, max_interarrival: 20, wcet: 1}\n")
    p = run_cli("convert", f, "-o", tmp_path / "o.json", "--to", "rt-app", check=2)
    assert "task 's'" in p.stderr and "max_interarrival" in p.stderr
    p = run_cli("convert", DATA / "workload.json", "-o", tmp_path / "o.json", "--to", "rt-app", "--backend", "kernel:edf", check=2)
    assert "--backend" in p.stderr


def test_output_never_replaces_the_input(tmp_path):
    f = tmp_path / "w.json"
    f.write_bytes((DATA / "workload.json").read_bytes())
    p = run_cli("convert", f, "-o", f, "--cpus", "2", check=2)
    assert "an input of this run" in p.stderr
    assert f.read_bytes() == (DATA / "workload.json").read_bytes()
    link = tmp_path / "link.yaml"
    os.symlink(f, link)
    run_cli("convert", f, "-o", link, "--cpus", "2", check=2)


def test_non_whole_microseconds_are_rounded_with_a_warning(tmp_path):
    f = tmp_path / "ns.yaml"
    f.write_text("platform: {cpus: 1}\nrun: {duration: 1500ms}\ntasks:\n  - {name: a, period: 10ms, wcet: 1000500ns, priority: 5}\n")
    p = run_cli("convert", f, "-o", tmp_path / "o.json", "--to", "rt-app", check=0)
    assert "1000500 ns is not a whole number of microseconds" in p.stderr and "whole seconds" in p.stderr
    doc = json.loads((tmp_path / "o.json").read_text())
    assert doc["tasks"]["a"]["run0"] == 1000 and doc["global"]["duration"] == 2


_values = st.recursive(st.none() | st.booleans() | st.integers(-5, 10**7) | st.floats(allow_nan=True) | st.sampled_from(["bus", "", "SCHED_FIFO", "SCHED_DEADLINE", "unique"]),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["ref", "period", "mode", "run", "loop"]), inner, max_size=3),
                       max_leaves=6)
_keys = st.sampled_from(["run", "run1", "runtime", "sleep", "timer", "timer1", "lock", "unlock", "lock1", "unlock1", "loop", "instance",
                         "priority", "policy", "dl-runtime", "dl-period", "dl-deadline", "cpus", "delay", "phases", "barrier", "mem", "x"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b"]), st.dictionaries(_keys, _values, max_size=8), min_size=1, max_size=2),
       st.dictionaries(st.sampled_from(["duration", "default_policy", "pi_enabled", "calibration", "zz"]), _values, max_size=3))
def test_any_rtapp_document_converts_or_is_refused_naming_the_file(tasks, glob):
    from rtsched.convert.rtapp import from_rtapp

    text = json.dumps({"global": glob, "tasks": tasks})
    try:
        from_document(from_rtapp(loads(text), "f.json", 2, lambda m: None), "f.json")
    except rtsched.InputError as e:
        assert "f.json" in str(e)
