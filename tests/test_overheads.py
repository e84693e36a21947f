"""The overhead model through the CLI (docs/overheads.md): costs in a task file or from a
calibrated profile beside it, charged and reported by kind, drawn in the trace; bad profiles
and bad cache parameters exit 2 naming the field."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli

TASKS = "tasks:\n  - {name: a, period: 4, wcet: 3}\n  - {name: b, period: 6, wcet: 4}\n  - {name: c, period: 12, wcet: 5}\n"

PROFILE = """schema: rtsched.overheads/1
machine: "a test box"
backend: testbed
migration_wss: 256KiB
tick_period: 1ms
costs:
  decision: {median: 20us, p99: 40us, samples: 100}
  context_switch: {median: 10us, p99: 30us, samples: 100}
  migration: {median: 50us, p99: 90us, samples: 100}
  release: {median: 15us, p99: 60us, samples: 100}
  tick: {median: 2us, p99: 5us, samples: 100}
"""


def write(tmp_path, run, profile=PROFILE):
    (tmp_path / "profile.yaml").write_text(profile)
    p = tmp_path / "ts.yaml"
    p.write_text(f"platform: {{cpus: 2}}\nrun: {run}\n{TASKS}")
    return p


def counters(tmp_path, run, scheduler="gedf"):
    out = tmp_path / "r.json"
    run_cli("simulate", write(tmp_path, run), "-s", scheduler, "--json", out, "--json-jobs", check=0)
    return json.loads(out.read_text())["runs"][0]


def test_a_profile_beside_the_task_file_is_charged_by_kind(tmp_path):
    plain = counters(tmp_path, "{duration: 100}")
    assert all(v == 0 for v in plain["counters"]["overheads"].values())
    med = counters(tmp_path, "{duration: 100, overheads: profile.yaml}")
    o = med["counters"]["overheads"]
    assert o["decision_ns"] > 0 and o["context_switch_ns"] > 0 and o["tick_ns"] > 0
    assert o["release_ns"] == 15_000 * med["counters"]["releases"]
    assert o["decision_ns"] % 20_000 == 0, "every decision charged the median"
    p99 = counters(tmp_path, "{duration: 100, overheads: {profile: profile.yaml, statistic: p99, tick: 0}}")
    assert p99["counters"]["overheads"]["release_ns"] == 60_000 * p99["counters"]["releases"]
    assert p99["counters"]["overheads"]["tick_ns"] == 0, "a field overrides the profile"
    assert p99["total"]["exec_inflation"] > med["total"]["exec_inflation"] > 1.0
    jobs = [j for j in p99["jobs"] if j["finish_ns"] is not None]
    assert all(j["exec_ns"] == j["demand_ns"] + j["overhead_ns"] for j in jobs)


def test_validate_and_the_table_show_the_overheads(tmp_path):
    r = run_cli("validate", write(tmp_path, "{overheads: profile.yaml}"), check=0)
    assert "overheads: decision 20us, context switch 10us, migration 50us, release 15us, tick 2us every 1ms" in r.stdout
    assert "(profile profile.yaml, median)" in r.stdout
    r = run_cli("simulate", write(tmp_path, "{duration: 50, overheads: profile.yaml}"), check=0)
    assert "overhead ms" in r.stdout and "exec infl" in r.stdout


def test_the_trace_draws_overhead_slices(tmp_path):
    trace = tmp_path / "t.json"
    run_cli("simulate", write(tmp_path, "{duration: 20, overheads: {decision: 20us, context_switch: 10us}}"), "--trace", trace, check=0)
    ev = json.loads(trace.read_text())["traceEvents"]
    over = [e for e in ev if e.get("name") == "overhead"]
    assert over and all(e["dur"] in (20.0, 30.0) for e in over), over[:5]


@pytest.mark.parametrize("profile, field, words", [
    (PROFILE.replace("  tick: {median: 2us, p99: 5us, samples: 100}\n", ""), "costs: field 'tick'", "missing"),
    (PROFILE.replace("migration: {median: 50us", "migration: {median: -50us"), "costs.migration: field 'median'", ""),
    (PROFILE.replace("release: {median: 15us, p99: 60us", "release: {median: 15us"), "costs.release: field 'p99'", "missing"),
    (PROFILE.replace("decision: {median: 20us, p99: 40us", "decision: {median: 20us, p99: 4us"), "costs.decision: field 'p99'", "below the median"),
    (PROFILE.replace("rtsched.overheads/1", "rtsched.overheads/9"), "field 'schema'", "unknown profile schema"),
])
def test_bad_profiles_exit_2_naming_the_field(tmp_path, profile, field, words):
    r = run_cli("validate", write(tmp_path, "{overheads: profile.yaml}", profile), check=2)
    assert "profile.yaml" in r.stderr and field in r.stderr and words in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("run, field", [
    ("{overheads: missing.yaml}", "run: field 'overheads': cannot read overhead profile"),
    ("{overheads: {profile: /dev/zero}}", "run.overheads: field 'profile': cannot read overhead profile /dev/zero: is a character device, not an overhead profile"),
    ("{overheads: {profile: /}}", "field 'profile': cannot read overhead profile /: is a directory"),
    ("{overheads: {decision: -1us}}", "field 'decision'"),
    ("{overheads: {tick_period: 0}}", "field 'tick_period'"),
    ("{overheads: {statistic: mean}}", "field 'statistic'"),
    ("{overheads: {decisions: 1us}}", "did you mean 'decision'"),
    ("{overheads: {rt_runtime: 2s, rt_period: 1s}}", "field 'rt_runtime'"),
    ("{overheads: {rt_runtime: 1s, rt_period: 0}}", "field 'rt_period'"),
    ("{cache: {l3: -2}}", "field 'l3'"),
    ("{cache: {passes: 0}}", "field 'passes'"),
    ("{cache: {memroy: 60}}", "did you mean 'memory'"),
])
def test_bad_run_options_exit_2_naming_the_field(tmp_path, run, field):
    r = run_cli("validate", write(tmp_path, run), check=2)
    assert field in r.stderr and "Traceback" not in r.stderr, r.stderr
