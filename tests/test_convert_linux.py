"""rt-app's policies through `rtsched convert` and the `linux` scheduler (issue 52;
docs/workloads.md, docs/linux-classes.md).

Hand-worked: tests/data/convert/mixed.json, on 1 CPU, is three SCHED_FIFO threads and a
SCHED_DEADLINE one, every job released at its period from 0:
- camera FIFO 80, 1 ms every 10 ms; control FIFO 60, 2 ms / 20 ms; logger FIFO 20, 5 ms / 50 ms;
- planner SCHED_DEADLINE runtime 3 ms, deadline 20 ms, period 30 ms, its work 2.5 ms a job.
Under `linux` the deadline class is above the RT class, so the planner runs the moment it is
released: every planner job responds in exactly 2.5 ms; it uses 2.5 of its 3 ms, so it is never
throttled. At 0 (and at 30, 60, ... where it releases beside the camera) the camera waits for
it: the camera's worst response is 2.5 + 1 = 3.5 ms. U = 0.1 + 0.1 + 0.1 + 0.083: nothing misses.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rtsched
from conftest import run_cli
from rtsched.convert import from_document, read
from rtsched.convert.rtapp import from_rtapp, loads
from rtsched.convert.rtapp_export import to_rtapp

DATA = Path(__file__).resolve().parent / "data" / "convert"
MS = 1_000_000
US = 1_000


def policies(ts):
    return {t["name"]: (t["policy"], t["sched_policy"], t["priority"], t["runtime_ns"], t["nice"]) for t in ts.tasks()}


def test_mixed_rtapp_file_reads_each_thread_under_its_policy():
    ts, kind, _ = read(DATA / "mixed.json", cpus=1)
    assert kind == "rtapp" and ts.has_policies and ts.default_policy == "other"
    assert policies(ts) == {
        "camera": ("fifo", "fifo", 80, None, None),
        "control": ("fifo", "fifo", 60, None, None),
        "logger": ("fifo", "fifo", 20, None, None),
        "planner": ("deadline", "deadline", None, 3 * MS, None),
    }
    planner = ts.tasks()[3]
    assert (planner["period_ns"], planner["deadline_ns"], planner["wcet_ns"]) == (30 * MS, 20 * MS, 2500 * US)


def test_mixed_rtapp_file_simulates_under_linux_as_worked_by_hand(tmp_path):
    out = tmp_path / "mixed.yaml"
    run_cli("convert", DATA / "mixed.json", "-o", out, "--cpus", "1", check=0)
    ts = rtsched.load_taskset(out)  # the written set validates
    assert policies(ts)["planner"] == ("deadline", "deadline", None, 3 * MS, None)
    r = rtsched.simulate(ts, scheduler="linux")
    jobs = r.jobs
    assert r.summary["missed"] == 0 and r.summary["jobs"] == 100 + 50 + 20 + 34
    planner = jobs[jobs.task == "planner"]
    assert set(planner.response_ns) == {2500 * US}
    assert jobs[jobs.task == "camera"].response_ns.max() == 3500 * US
    assert r.counters["throttles"] == 0 and r.values["throttles"] == 0
    # Not under another scheduler: a run without a CBS has no throttle count.
    assert rtsched.simulate(ts, scheduler="gedf").counters["throttles"] is None


def test_gfp_names_the_policy_of_a_task_without_priority(tmp_path):
    """Issue 52's first complaint: gfp refuses the deadline task, and now says why."""
    out = tmp_path / "mixed.yaml"
    run_cli("convert", DATA / "mixed.json", "-o", out, "--cpus", "1", check=0)
    p = run_cli("simulate", out, "-s", "gfp", check=2)
    assert "task 'planner'" in p.stderr and "field 'priority'" in p.stderr and "policy deadline" in p.stderr
    assert "'linux'" in p.stderr and "Traceback" not in p.stderr


def test_export_writes_each_task_under_its_policy(tmp_path):
    yaml_, back = tmp_path / "mixed.yaml", tmp_path / "back.json"
    run_cli("convert", DATA / "mixed.json", "-o", yaml_, "--cpus", "1", check=0)
    run_cli("convert", yaml_, "-o", back, "--to", "rt-app", check=0)  # kernel:linux: the set has policies
    doc = json.loads(back.read_text())
    th = doc["tasks"]
    assert {k: th["camera"][k] for k in ("policy", "priority")} == {"policy": "SCHED_FIFO", "priority": 80}
    assert (th["logger"]["policy"], th["logger"]["priority"]) == ("SCHED_FIFO", 20)
    assert {k: th["planner"][k] for k in ("policy", "dl-runtime", "dl-period", "dl-deadline")} == {
        "policy": "SCHED_DEADLINE", "dl-runtime": 3000, "dl-period": 30000, "dl-deadline": 20000}
    assert "priority" not in th["planner"]
    # And back again: the same policies.
    again = from_document(from_rtapp(loads(back.read_text()), "back.json", 1, lambda m: None), "back")
    assert policies(again) == policies(rtsched.load_taskset(yaml_))


def test_other_threads_keep_nice_and_batch_idle_are_other_with_a_warning(tmp_path):
    f = tmp_path / "o.json"
    f.write_text(json.dumps({"global": {"default_policy": "SCHED_FIFO"}, "tasks": {
        "a": {"priority": 30, "run": 100, "timer": {"ref": "a", "period": 1000}},
        "b": {"policy": "SCHED_OTHER", "nice": -5, "run": 100, "timer": {"ref": "b", "period": 2000}},
        "c": {"policy": "SCHED_BATCH", "run": 100, "timer": {"ref": "c", "period": 4000}},
        "d": {"policy": "SCHED_RR", "priority": 7, "run": 100, "timer": {"ref": "d", "period": 4000}},
    }}))
    warned = []
    ts, _, _ = read(f, cpus=1, warn=warned.append)
    assert policies(ts) == {
        "a": (None, "fifo", 30, None, None),  # the set's default_policy
        "b": ("other", "other", None, None, -5),
        "c": ("other", "other", None, None, 0),
        "d": ("rr", "rr", 7, None, None),
    }
    assert any("task 'c'" in w and "SCHED_BATCH" in w for w in warned), warned
    assert rtsched.simulate(ts, scheduler="linux").summary["jobs"] > 0
    th = to_rtapp(ts, "kernel:linux", print)["tasks"]
    assert (th["a"]["policy"], th["a"]["priority"]) == ("SCHED_FIFO", 30)
    assert (th["b"]["policy"], th["b"]["nice"]) == ("SCHED_OTHER", -5)
    assert (th["d"]["policy"], th["d"]["priority"]) == ("SCHED_RR", 7)


@pytest.mark.parametrize("task,words", [
    ({"policy": "SCHED_OTHER", "nice": 40, "run": 10, "timer": {"ref": "u", "period": 1000}}, ["task 'w'", "field 'nice'", "-20 to 19"]),
    ({"policy": "SCHED_DEADLINE", "dl-runtime": 5000, "dl-period": 1000, "run": 10, "timer": {"ref": "u", "period": 1000}},
     ["task 'w'", "field 'runtime'"]),
])
def test_policy_refusals_name_task_and_field(tmp_path, task, words):
    f = tmp_path / "in.json"
    f.write_text(json.dumps({"tasks": {"w": task}}))
    p = run_cli("convert", f, "-o", tmp_path / "out.yaml", "--cpus", "1", check=2)
    for w in words:
        assert w in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


def test_schedulers_lists_linux_with_help():
    """`linux` in the table with what it does and its sources; `linux:reclaim` among its options."""
    out = run_cli("schedulers", check=0).stdout
    row = next((x for x in out.splitlines() if x.split()[:1] == ["linux"]), None)
    assert row is not None and "SCHED_DEADLINE" in row and "kernel/sched" in row, out
    opts = next((x for x in out.splitlines() if x.strip().startswith("linux:")), None)
    assert opts is not None and "reclaim (GRUB" in opts and "fair_server=on|off" in opts, out


def test_admission_refuses_bandwidth_one_on_one_cpu(tmp_path):
    f = tmp_path / "full.yaml"
    f.write_text("platform: {cpus: 1}\nrun: {duration: 100ms}\ntasks:\n"
                 "  - {name: a, policy: deadline, period: 10ms, wcet: 5ms}\n"
                 "  - {name: b, policy: deadline, period: 10ms, wcet: 5ms}\n")
    p = run_cli("simulate", f, "-s", "linux", check=2)
    assert "admission" in p.stderr and "EBUSY" in p.stderr and "Traceback" not in p.stderr
    assert "bandwidth 0.500000" in p.stderr and "limit 0.950000" in p.stderr


def test_validate_warns_of_what_admission_would_refuse(tmp_path):
    """`validate` of a file whose deadline reservations exceed admission's limit warns (exit 0,
    the file itself is valid) with the refusal `simulate -s linux` gives; control: 0.9 of
    bandwidth fits beside the fair server's 0.05, and nothing is warned."""
    def validate(a_ms: int):
        f = tmp_path / f"dl{a_ms}.yaml"
        f.write_text("platform: {cpus: 1}\ntasks:\n"
                     f"  - {{name: a, policy: deadline, period: 10ms, wcet: {a_ms}ms}}\n"
                     "  - {name: b, policy: deadline, period: 10ms, wcet: 5ms}\n")
        return run_cli("validate", f, check=0)
    p = validate(5)
    assert p.returncode == 0 and ": ok" in p.stdout, p.stderr
    assert "warning: the linux scheduler" in p.stderr and "task 'b'" in p.stderr, p.stderr
    assert "admission refused (EBUSY)" in p.stderr and "limit 0.950000" in p.stderr, p.stderr
    p = validate(4)
    assert p.returncode == 0 and "warning" not in p.stderr, p.stderr
