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
                 "method": "holistic (Tindell & Clark; offsets)", "exact": False, "note": "",
                 "edf_latency_ns": 5 * MS, "edf_meets_deadline": True, "edf_method": "holistic EDF (Spuri 1996; offsets)",
                 "edf_note": ""}


def test_analyze_shows_fp_and_edf_chain_bounds(tmp_path):
    """The chains table has an event chain's bound under fixed priority and under EDF, each
    against the chain's deadline; --json has both; a data-flow chain has no EDF bound."""
    p = tmp_path / "issue.yaml"
    p.write_text(ISSUE)
    out = run_cli("analyze", str(p)).stdout
    table = out[out.index("chain bounds"):]
    assert "FP latency" in table and "EDF latency" in table
    row = next(line for line in table.splitlines() if line.startswith("ab"))
    assert row.count("5.000") == 2 and "FP met, EDF met" in row
    doc = json.loads(run_cli("analyze", str(p), "--json").stdout)["chains"]["ab"]
    assert (doc["latency_ns"], doc["edf_latency_ns"], doc["edf_meets_deadline"]) == (5 * MS, 5 * MS, True)
    fs = {b["chain"]: b for b in rtsched.chain_bounds(rtsched.parse_taskset(MIXED))}["fs"]
    assert (fs["edf_latency_ns"], fs["edf_method"]) == (None, None)


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


def test_durr_below_davare_and_sporadic_let_as_data():
    """Implicit chain fa: f (T 5, R 0.5) to a (T 10, R 2.5), a lower priority on the same CPU.
    Dürr et al.: data age R_a + T_f = 7.5 ms, reaction T_f + R_a + max(R_f, T_a) = 17.5 ms;
    Davare et al.: 5.5 + 2.5 = 8 and 5.5 + 12.5 = 18. LET chain fs with f sporadic (5–8 ms):
    the LET sum, data age 8 + 5 + 10 = 23 ms, reaction 33 ms, not exact."""
    ts = rtsched.parse_taskset(MIXED)
    durr = {b["chain"]: b for b in rtsched.chain_bounds(ts)}["fa"]
    davare = {b["chain"]: b for b in rtsched.chain_bounds(ts, implicit="davare")}["fa"]
    assert (durr["method"], durr["data_age_ns"], durr["reaction_time_ns"]) == ("Dürr et al. 2019", 7.5 * MS, 17.5 * MS)
    assert (davare["method"], davare["data_age_ns"], davare["reaction_time_ns"]) == (
        "Davare et al. 2007", 8 * MS, 18 * MS)
    sporadic = rtsched.parse_taskset(MIXED.replace("{name: f, period: 5,", "{name: f, min_interarrival: 5, "
                                                   "max_interarrival: 8,"))
    fs = {b["chain"]: b for b in rtsched.chain_bounds(sporadic)}["fs"]
    assert (fs["exact"], fs["data_age_ns"], fs["reaction_time_ns"]) == (False, 23 * MS, 33 * MS)
    assert fs["note"].startswith("not exact")
    sim = rtsched.simulate(sporadic, "gfp:file").summary["chains"]["fs"]
    assert sim["data_age_ns"]["max"] <= fs["data_age_ns"]


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
                                                 "implicit-davare-file", "implicit-durr-file", "let-sporadic"}


def test_a_sweep_takes_the_new_tests_by_name():
    names = {t["name"] for t in rtsched.analysis.tests()}
    assert {"fp-holistic-file", "fp-susp-jitter-rm", "fp-susp-obliv-file", "implicit-davare-rm",
            "implicit-durr-rm", "let-exact", "let-sporadic"} <= names


def test_a_global_set_takes_the_global_chain_analysis():
    """On 2 CPUs without `cpu` fields the chain's bounds are global FP's and global EDF's
    (docs/chains.md, "Event chains under global scheduling"), above the simulation."""
    ts = rtsched.parse_taskset(ISSUE.replace("{cpus: 1}", "{cpus: 2}"))
    (b,) = rtsched.chain_bounds(ts)
    assert (b["latency_ns"], b["edf_latency_ns"]) == (5 * MS, 5 * MS)
    assert b["method"].startswith("global FP RTA") and b["edf_method"].startswith("global EDF RTA")
    for sched in ("gfp:file", "gedf"):
        assert rtsched.simulate(ts, sched).summary["chains"]["ab"]["latency_ns"]["max"] <= 5 * MS
