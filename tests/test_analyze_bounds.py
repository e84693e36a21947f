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
    # GFB bounds no response: its rows are each task's least passing deadline (docs/generators.md).
    # ctrl: the others' density Λ' = 23/12, 4·1 ms/(4 − 23/12) = 1.92 ms.
    gfb = v["gedf-gfb"]["tasks"]
    assert [b["task"] for b in gfb] == names and gfb[0]["quantity"] == "least passing deadline"
    assert gfb[0]["bound_ns"] == 1_920_000 and v["gedf-gfb"]["schedulable"] is True


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
            # Every attempt gives each task's row on the CPU it was placed on, within D.
            assert [b["task"] for b in p["tasks"]] == [t["task"] for t in tests["gedf-rta"]["tasks"]]
            assert all(b["cpu"] in range(4) and b["slack_ns"] >= 0 for b in p["tasks"]), p
            want = "least passing deadline" if p["admission"] == "edf-density" else "response time"
            assert {b["quantity"] for b in p["tasks"]} == {want}
    # The global EDF tests that bound no response give their own quantities, every row by name.
    for name, quantity in [("gedf-bcl", "BCL window load"), ("gedf-baruah", "Baruah window load")]:
        rows = tests[name]["tasks"]
        assert {b["quantity"] for b in rows} == {quantity} and len(rows) == 6 and rows[0]["cpu"] is None
        assert (tests[name]["schedulable"] is True) == all(b["slack_ns"] is not None and b["slack_ns"] >= 0 for b in rows)


def test_table_shows_bounds_beside_simulation(tmp_path):
    f = tmp_path / "ts.yaml"
    f.write_text(SET)
    out = run_cli("analyze", str(f), "--simulate", check=0).stdout
    assert "per-task bounds" in out and "sim gfp:rm us" in out
    assert "partitioning tried" in out


CLASSIC = """platform: {{cpus: 1}}
run: {{locking: {locking}}}
resources: [R]
tasks:
  - {{name: l, period: 100ms, deadline: 20ms, wcet: 4ms, priority: 1, sections: [{{resource: R, start: 0, length: 4ms}}]}}
  - {{name: h, period: 100ms, deadline: 20ms, offset: 1ms, wcet: 2ms, priority: 3, sections: [{{resource: R, start: 0, length: 1ms}}]}}
  - {{name: m, period: 100ms, deadline: 20ms, offset: 2ms, wcet: 5ms, priority: 2}}
"""


def test_blocking_terms_by_task_and_none_is_not_applicable(tmp_path):
    """docs/locking.md "Analysis": h's bound C 2 + B 4 = 6 ms under pcp (B: l's whole section on
    R, whose ceiling is h's priority); under none the test says why it does not apply."""
    f = tmp_path / "pcp.yaml"
    f.write_text(CLASSIC.format(locking="pcp"))
    v = {x["test"]: x for x in rtsched.analyze(str(f))}["fp-rta-file"]
    got = {b["task"]: (b["bound_ns"], b["blocking_ns"]) for b in v["tasks"]}
    assert got == {"l": (11_000_000, 0), "h": (6_000_000, 4_000_000), "m": (11_000_000, 4_000_000)}
    doc = json.loads(run_cli("analyze", f, "--json", check=0).stdout)
    rta = next(t for t in doc["tests"] if t["test"] == "fp-rta-file")
    assert [b["blocking_ns"] for b in rta["tasks"]] == [0, 4_000_000, 4_000_000]
    text = run_cli("analyze", f, check=0).stdout
    assert "fp-rta-file B us" in text, text
    g = tmp_path / "none.yaml"
    g.write_text(CLASSIC.format(locking="none"))
    v = {x["test"]: x for x in rtsched.analyze(str(g))}["fp-rta-file"]
    assert v["schedulable"] is None and "plain FIFO mutex" in v["detail"] and "'R'" in v["detail"], v


def test_partition_counts_sections_under_a_protocol(tmp_path):
    """Under pip, pcp and srp (a file that gives no task a cpu), with rm and edf admission,
    partition admits with blocking, keeps R's users together and does not warn, and analyze's
    partition attempts place them; under none it warns as before (the control)."""
    body = ("platform: {{cpus: 2}}\nrun: {{locking: {locking}}}\nresources: [R]\ntasks:\n"
            "  - {{name: x, period: 10, wcet: 5, priority: 4, sections: [{{resource: R, start: 0, length: 4}}]}}\n"
            "  - {{name: y, period: 10, wcet: 2, priority: 3, sections: [{{resource: R, start: 0, length: 1}}]}}\n"
            "  - {{name: z, period: 10, wcet: 3, priority: 2}}\n  - {{name: w, period: 10, wcet: 6, priority: 1}}\n")
    p = tmp_path / "pcp.yaml"
    p.write_text(body.format(locking="pcp"))
    r = run_cli("partition", p, "--heuristic", "wfd", "--admission", "rm", check=0)
    assert "warning" not in r.stderr, r.stderr
    cpus = {t["name"]: t["cpu"] for t in rtsched.parse_taskset(r.stdout.split("\n", 1)[1]).tasks()}
    assert cpus["x"] == cpus["y"], r.stdout
    for locking in ("pip", "pcp", "srp"):
        ts = rtsched.parse_taskset(body.format(locking=locking))
        for admission in ("rm", "edf"):
            placed, _ = rtsched.partition(ts, "wfd", admission)
            cpus = {t["name"]: t["cpu"] for t in placed.tasks()}
            assert cpus["x"] == cpus["y"], (locking, admission, cpus)
    from rtsched.analysis import partition_attempts

    assert any(a["schedulable"] for a in partition_attempts(rtsched.parse_taskset(p.read_text()))), "analyze places it"
    q = tmp_path / "none.yaml"
    q.write_text(body.format(locking="none"))
    r = run_cli("partition", q, "--heuristic", "wfd", "--admission", "rm", check=0)
    assert "ignores critical sections" in r.stderr


SPIN = ("platform: {{cpus: 2}}\nrun: {{locking: msrp}}\nresources: [R]\ntasks:\n"
        "  - {{name: a, period: 10, wcet: {a}, priority: 1, sections: [{{resource: R, start: 0, length: 2}}]}}\n"
        "  - {{name: c, period: 10, wcet: {c}, priority: 2}}\n"
        "  - {{name: b, period: 10, wcet: {b}, priority: 3, sections: [{{resource: R, start: 0, length: {rb}}}]}}\n")


def test_partition_counts_msrp_terms_on_every_cpu(tmp_path):
    """docs/locking.md "Partitioning", the examples of partition/remote.rs: under msrp with the
    file's priorities FFD keeps a and b (R's users) together and says per CPU whose terms it
    counted; a set that fits only with its sections ignored is refused (exit 2) with the
    reason; analyze's partition attempts place the first."""
    f = tmp_path / "spin.yaml"
    f.write_text(SPIN.format(a=5, c=4, b=3, rb=2))
    r = run_cli("partition", f, "--admission", "file", check=0)
    assert "warning" not in r.stderr, r.stderr
    assert "CPU 0: U = 0.800  a, b; msrp terms counted: spin ≤ 0.000 ms, blocking ≤ 2.000 ms" in r.stderr, r.stderr
    assert "CPU 1: U = 0.400  c; msrp terms counted" in r.stderr, r.stderr
    assert "msrp terms counted on every CPU" in r.stdout.splitlines()[0]
    g = tmp_path / "tight.yaml"
    g.write_text(SPIN.format(a=7, c=5, b=4, rb=3))
    r = run_cli("partition", g, "--admission", "file", check=2)
    assert "task 'b'" in r.stderr and "counting msrp's terms on every CPU" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    from rtsched.analysis import partition_attempts

    assert any(a["schedulable"] for a in partition_attempts(rtsched.parse_taskset(f.read_text())))


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
