"""Analysis results as data (issue 55): per-task bounds by task name in ``rtsched.analyze`` and
``rtsched analyze --json``, the simulated maximum response beside them (``--simulate``), and
partitioning tried on several CPUs."""

import json

import rtsched
from conftest import run_cli

SET = """platform: {cpus: 4}
tasks:
  - {name: ctrl, period: 4ms, wcet: 1ms}
  - {name: video, period: 5ms, wcet: 2ms}
  - {name: audio, period: 6ms, wcet: 2ms, deadline: 5ms}
  - {name: log, period: 10ms, wcet: 4ms}
  - {name: net, period: 12ms, wcet: 5ms}
  - {name: disk, period: 20ms, wcet: 6ms}
"""

GLOBAL = ["gedf-gfb", "gedf-bcl", "gedf-rta", "gedf-baruah", "gfp-rta-rm", "gfp-rta-lc-rm"]


def test_python_api_gives_bounds_by_task(tmp_path):
    f = tmp_path / "ts.yaml"
    f.write_text(SET)
    v = {x["test"]: x for x in rtsched.analyze(str(f))}
    assert set(GLOBAL) <= set(v)
    rta = v["gfp-rta-rm"]
    assert rta["schedulable"] is True
    names = [b["task"] for b in rta["tasks"]]
    assert names == ["ctrl", "video", "audio", "log", "net", "disk"]
    for b in rta["tasks"]:
        assert b["quantity"] == "response time"
        assert b["slack_ns"] == b["deadline_ns"] - b["bound_ns"] >= 0
    # The highest-priority task on 4 CPUs meets no interference: its bound is its WCET.
    assert rta["tasks"][0]["bound_ns"] == 1_000_000
    assert v["gedf-gfb"]["tasks"] == []


def test_json_has_bounds_simulation_and_partitions(tmp_path):
    f = tmp_path / "ts.yaml"
    f.write_text(SET)
    doc = json.loads(run_cli("analyze", str(f), "--json", "--simulate", check=0).stdout)
    tests = {t["test"]: t for t in doc["tests"]}
    for name in ("gedf-rta", "gfp-rta-rm", "gfp-rta-lc-rm"):
        t = tests[name]
        assert t["simulated_by"] in ("gedf", "gfp:rm")
        for b in t["tasks"]:
            assert b["bound_ns"] is None or b["simulated_max_response_ns"] <= b["bound_ns"], (name, b)
    parts = doc["partitions"]
    assert {(p["heuristic"], p["admission"]) for p in parts} == {
        (h, a) for h in ("ffd", "wfd", "bfd") for a in ("edf-exact", "edf-density", "fp-rta-rm", "fp-rta-dm")}
    for p in parts:
        if p["schedulable"]:
            assert len(p["cpu_loads"]) == 4 and abs(sum(p["cpu_loads"]) - doc["utilization"]) < 1e-9
            assert p["test"] == "p-" + p["admission"]


def test_table_shows_bounds_beside_simulation(tmp_path):
    f = tmp_path / "ts.yaml"
    f.write_text(SET)
    out = run_cli("analyze", str(f), "--simulate", check=0).stdout
    assert "per-task bounds" in out and "sim gfp:rm us" in out
    assert "partitioning tried" in out


def test_file_priorities_and_dag_tasks_under_global_fp(tmp_path):
    """gfp-rta-file / gfp-rta-lc-file read the file's priorities (ties among them) beside
    gfp:file's simulated maxima, with an overhead-aware verdict; a DAG set gets Melani et al.'s
    bounds beside gfp:rm's."""
    f = tmp_path / "ts.yaml"
    f.write_text(SET.replace("wcet: 1ms}", "wcet: 1ms, priority: 5}").replace("wcet: 2ms}", "wcet: 2ms, priority: 5}")
                 .replace("deadline: 5ms}", "deadline: 5ms, priority: 4}").replace("wcet: 4ms}", "wcet: 4ms, priority: 3}")
                 .replace("wcet: 5ms}", "wcet: 5ms, priority: 2}").replace("wcet: 6ms}", "wcet: 6ms, priority: 1}")
                 + "run: {overheads: {decision: 5us, context_switch: 5us}}\n")
    doc = json.loads(run_cli("analyze", str(f), "--json", "--simulate", check=0).stdout)
    tests = {t["test"]: t for t in doc["tests"]}
    for name in ("gfp-rta-file", "gfp-rta-lc-file"):
        t = tests[name]
        assert t["simulated_by"] == "gfp:file" and t["schedulable"] is True, t
        assert [b["task"] for b in t["tasks"]] == ["ctrl", "video", "audio", "log", "net", "disk"]
        for b in t["tasks"]:
            assert b["simulated_max_response_ns"] <= b["bound_ns"], (name, b)
        assert t["with_overheads"] in (True, None), t
    d = tmp_path / "dag.yaml"
    d.write_text("platform: {cpus: 4}\ntasks:\n  - {name: h, period: 10ms, regions: [1ms, [2ms, 2ms, 2ms, 2ms], 1ms]}\n"
                 "  - {name: a, period: 10ms, wcet: 3ms}\n  - {name: b, period: 8ms, regions: [1ms, [1ms, 1ms]]}\n")
    t = {t["test"]: t for t in rtsched.analyze(str(d))}["gfp-dag-melani-rm"]
    assert t["schedulable"] is True, t
    sim = rtsched.analysis.simulated_max_response(str(d), "gfp-dag-melani-rm")
    assert sim["scheduler"] == "gfp:rm"
    for b, s in zip(t["tasks"], sim["max_response_ns"], strict=True):
        assert s <= b["bound_ns"], (b, s)
