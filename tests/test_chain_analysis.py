"""Chain bounds from Python and `rtsched analyze` (docs/chains.md, "Analysis"): the rule is the
analysis crate's (crates/analysis/tests/chains_vs_sim.rs tests it against the simulator); here,
that Python returns it as data, the CLI shows it (table and --json, per chain by name), and the
classic tests refuse a triggered task."""

import json

import rtsched
from conftest import run_cli

MS = 1_000_000
ISSUE = """platform: {cpus: 1}
run: {duration: 100}
tasks:
  - {name: a, period: 10, wcet: 2, priority: 5}
  - {name: b, trigger: a, deadline: 10, wcet: 3, priority: 4}
chains:
  - {name: ab, tasks: [a, b], deadline: 6}
"""
MIXED = """platform: {cpus: 1}
run: {duration: 200}
tasks:
  - {name: a, period: 10, wcet: 2, priority: 5}
  - {name: b, trigger: a, deadline: 10, wcet: 3, priority: 4}
  - {name: f, period: 5, wcet: 0.5, priority: 6}
  - {name: s, period: 10, segments: [0.5, {suspend: 1}, 0.5], priority: 1}
chains:
  - {name: ab, tasks: [a, b], deadline: 4}
  - {name: fs, tasks: [f, s], communication: let}
  - {name: fa, tasks: [f, a], communication: implicit}
"""


def test_the_issues_chain_bound_is_5ms_as_data():
    ts = rtsched.parse_taskset(ISSUE)
    (b,) = rtsched.chain_bounds(ts)
    assert b == {"chain": "ab", "communication": None, "latency_ns": 5 * MS, "data_age_ns": None,
                 "reaction_time_ns": None, "deadline_ns": 6 * MS, "meets_deadline": True,
                 "method": "holistic (Tindell & Clark; offsets)", "exact": False, "note": ""}


def test_bounds_are_above_the_simulation_and_let_is_exact():
    ts = rtsched.parse_taskset(MIXED)
    bounds = {b["chain"]: b for b in rtsched.chain_bounds(ts)}
    sim = rtsched.simulate(ts, "gfp:file").summary["chains"]
    assert sim["ab"]["latency_ns"]["max"] <= bounds["ab"]["latency_ns"]
    assert bounds["ab"]["meets_deadline"] is False  # the bound exceeds 4 ms
    assert sim["fa"]["data_age_ns"]["max"] <= bounds["fa"]["data_age_ns"]
    assert sim["fa"]["reaction_time_ns"]["max"] <= bounds["fa"]["reaction_time_ns"]
    assert bounds["fs"]["exact"] and bounds["fs"]["method"] == "let-exact"
    assert (bounds["fs"]["data_age_ns"], bounds["fs"]["reaction_time_ns"]) == (
        sim["fs"]["data_age_ns"]["max"], sim["fs"]["reaction_time_ns"]["max"])


def test_analyze_shows_the_chains_table_and_json(tmp_path):
    p = tmp_path / "mixed.yaml"
    p.write_text(MIXED)
    out = run_cli("analyze", str(p)).stdout
    assert "chain bounds" in out and "let-exact (exact)" in out
    # The classic test does not read a triggered or suspending task as periodic any more.
    assert "does not model triggered and self-suspending tasks" in out
    doc = json.loads(run_cli("analyze", str(p), "--json").stdout)
    assert set(doc["chains"]) == {"ab", "fs", "fa"}
    assert doc["chains"]["fs"]["data_age_ns"] == 15 * MS
    assert {t["test"] for t in doc["tests"]} >= {"fp-holistic-file", "fp-holistic-rm", "let-exact",
                                                 "implicit-davare-file"}


def test_a_sweep_takes_the_new_tests_by_name():
    names = {t["name"] for t in rtsched.analysis.tests()}
    assert {"fp-holistic-file", "fp-susp-jitter-rm", "fp-susp-obliv-file", "implicit-davare-rm",
            "let-exact"} <= names
