"""`rtsched convert --to rt-app` of triggers, self-suspensions and chains (issue 54;
docs/workloads.md "Triggers, suspensions and chains in rt-app"), on hand-worked sets: each
thread's events in the order rt-app runs them. The real rt-app runs of such an export:
tests/test_convert_rtapp_chains_real.py."""

from __future__ import annotations

import json

import pytest

import rtsched
from conftest import run_cli
from rtsched.convert.rtapp_export import to_rtapp

#: head (10 ms) → mid (suspends 500 us between its two runs) → tail, one event chain.
PIPELINE = """\
platform: {cpus: 2}
run: {duration: 2s}
tasks:
  - {name: head, period: 10ms, wcet: 1ms, priority: 30}
  - {name: mid, trigger: head, deadline: 8ms, segments: [1ms, {suspend: 500us}, 500us], priority: 20}
  - {name: tail, trigger: mid, deadline: 10ms, wcet: 2ms, priority: 10}
chains:
  - {name: head, tasks: [head, mid, tail]}
"""


def export(tmp_path, text, backend="kernel:fifo:file"):
    f = tmp_path / "set.yaml"
    f.write_text(text)
    warnings = []
    doc = to_rtapp(rtsched.load_taskset(f), backend, warnings.append)
    return doc, warnings


def test_pipeline_is_suspend_resume_and_a_sleep(tmp_path):
    """head runs, resumes mid, waits for its timer; mid suspends on its own name, runs 1 ms,
    sleeps 500 us (its suspension), runs 500 us, resumes tail; tail suspends, runs 2 ms. The
    triggered threads have no timer; mid's deadline (8 ms) differs from its period (head's
    10 ms), kept as dl-deadline as for any task."""
    doc, warnings = export(tmp_path, PIPELINE)
    t = doc["tasks"]
    assert list(t) == ["head", "mid", "tail"]
    assert list(t["head"].items()) == [("policy", "SCHED_FIFO"), ("priority", 30), ("run0", 1000), ("resume0", "mid"),
                                       ("timer0", {"ref": "unique", "period": 10000})]
    assert list(t["mid"].items()) == [("policy", "SCHED_FIFO"), ("priority", 20), ("dl-deadline", 8000),
                                      ("suspend0", "mid"), ("run0", 1000), ("sleep0", 500), ("run1", 500),
                                      ("resume0", "tail")]
    assert list(t["tail"].items()) == [("policy", "SCHED_FIFO"), ("priority", 10), ("suspend0", "tail"), ("run0", 2000)]
    assert any("resume wakes a thread only while it is suspended" in w for w in warnings), warnings


def test_join_suspends_once_per_trigger(tmp_path):
    """j (trigger all [a, b]) suspends on j-a, then j-b; a resumes j-a, b resumes j-b."""
    doc, _ = export(tmp_path, """\
platform: {cpus: 1}
tasks:
  - {name: a, period: 10ms, wcet: 1ms, priority: 3}
  - {name: b, period: 20ms, wcet: 2ms, priority: 2}
  - {name: j, trigger: {all: [a, b]}, deadline: 20ms, wcet: 1ms, priority: 1}
""")
    t = doc["tasks"]
    assert [k for k in t["a"] if k[:3] in ("res", "sus")] == ["resume0"] and t["a"]["resume0"] == "j-a"
    assert t["b"]["resume0"] == "j-b"
    assert [(k, v) for k, v in t["j"].items() if k[:3] in ("sus", "run", "tim")] == [
        ("suspend0", "j-a"), ("suspend1", "j-b"), ("run0", 1000)]


def test_range_suspension_is_its_mean_and_deadline_export_keeps_the_margin(tmp_path):
    """A suspension of 1..3 ms is written as a 2 ms sleep, with a warning; under
    kernel:deadline a triggered task reserves its runtime (WCET + max(250 us, 10 %), times 1.3
    for rt-app's loop: 1.5 ms → 1.75 → 2275 us) per its period (the trigger's, 10 ms), deadline
    its own."""
    doc, warnings = export(tmp_path, """\
platform: {cpus: 1}
tasks:
  - {name: a, period: 10ms, wcet: 1ms}
  - {name: s, trigger: a, deadline: 9ms, segments: [1ms, {suspend: [1ms, 3ms]}, 500us]}
""", "kernel:deadline")
    s = doc["tasks"]["s"]
    assert list(s.items()) == [("policy", "SCHED_DEADLINE"), ("dl-runtime", 2275), ("dl-period", 10000),
                               ("dl-deadline", 9000), ("suspend0", "s"), ("run0", 1000), ("sleep0", 2000), ("run1", 500)]
    assert any("1ms..3ms" in w and "sleep of 2ms" in w for w in warnings), warnings


def test_triggered_fork_join_task_releases_every_lane(tmp_path):
    """A fork-join task triggered by a: lane 0 suspends, then every lane meets at f-release
    before the first region; lane 0 resumes nothing (f triggers no task)."""
    doc, _ = export(tmp_path, """\
platform: {cpus: 2}
tasks:
  - {name: a, period: 10ms, wcet: 1ms, priority: 2}
  - {name: f, trigger: a, deadline: 10ms, regions: [[1ms, 1ms]], priority: 1}
""")
    t = doc["tasks"]
    assert [(k, v) for k, v in t["f.0"].items() if k[:3] in ("sus", "bar", "run")] == [
        ("suspend0", "f"), ("barrier0", "f-release"), ("run0", 1000), ("barrier1", "f-join0")]
    assert [(k, v) for k, v in t["f.1"].items() if k[:3] in ("sus", "bar", "run")] == [
        ("barrier0", "f-release"), ("run0", 1000), ("barrier1", "f-join0")]
    assert "timer0" not in t["f.0"] and "timer0" not in t["f.1"]


def test_data_flow_chain_and_chain_deadline_are_warned(tmp_path):
    _, warnings = export(tmp_path, """\
platform: {cpus: 1}
tasks:
  - {name: f, period: 5ms, wcet: 1ms, priority: 2}
  - {name: g, period: 10ms, wcet: 1ms, priority: 1}
  - {name: h, trigger: g, deadline: 10ms, wcet: 1ms, priority: 1}
chains:
  - {name: fg, tasks: [f, g], communication: let}
  - {name: gh, tasks: [g, h], deadline: 5ms}
""")
    assert any("chain 'fg'" in w and "data-flow chain (let)" in w for w in warnings), warnings
    assert any("chain 'gh'" in w and "end-to-end deadline" in w for w in warnings), warnings


def test_set_without_triggers_exports_as_before(tmp_path):
    """No suspend/resume/sleep and a timer on every thread when the set has no triggers."""
    doc, warnings = export(tmp_path, "platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10ms, wcet: 1ms, priority: 1}\n")
    assert list(doc["tasks"]["a"]) == ["policy", "priority", "run0", "timer0"] and not warnings


@pytest.mark.parametrize("backend", ["kernel:fifo:file", "kernel:deadline", "kernel:linux"])
def test_every_backend_writes_the_pipeline(tmp_path, backend):
    doc, _ = export(tmp_path, PIPELINE, backend)
    t = doc["tasks"]
    assert (t["head"]["resume0"], t["mid"]["suspend0"], t["mid"]["resume0"], t["tail"]["suspend0"]) == ("mid", "mid", "tail", "tail")
    assert "timer0" in t["head"] and "timer0" not in t["mid"] and "timer0" not in t["tail"]


def test_cli_writes_the_pipeline_and_warns(tmp_path):
    (tmp_path / "p.yaml").write_text(PIPELINE)
    p = run_cli("convert", "p.yaml", "--to", "rt-app", "-o", "p.json", cwd=tmp_path, check=0)
    doc = json.loads((tmp_path / "p.json").read_text())
    assert doc["tasks"]["head"]["resume0"] == "mid" and doc["tasks"]["tail"]["suspend0"] == "tail"
    assert "suspend/resume" in p.stderr
