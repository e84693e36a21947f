"""Sweeps with run options: the spec's `run:` (execution, cache, overheads) and `topology:`
reach every generated task set exactly as a task file's would, change the row keys (so a
changed option recomputes and an unchanged spec resumes), and bad values exit 2 naming the
spec's field."""

import hashlib
import importlib
import json

import pandas as pd
import pytest
import yaml

import rtsched
from conftest import run_cli

S = importlib.import_module("rtsched.sweep")  # the package (rtsched.sweep, also callable)

OVERRUN = {"model": "overrun", "ratio": 1.5, "probability": 1.0}


def spec_with(**over):
    d = {
        "name": "opts",
        "seed": 3,
        "generator": {"name": "randfixedsum", "params": {"n": 6, "m": 2, "tmin": "5ms", "tmax": "50ms"}},
        "utilisation": {"points": [1.0, 1.4]},
        "schedulers": ["gedf", "pedf:ffd"],
        "seeds": 2,
        "duration": "500ms",
    }
    d.update(over)
    return d


def write_spec(tmp_path, spec, name="spec.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(spec))
    return p


def test_run_options_reach_the_simulation_as_a_task_file_would(tmp_path):
    spec = spec_with(run={"execution": OVERRUN, "overheads": {"context_switch": "20us", "decision": "5us"}})
    df = rtsched.sweep(spec, workers=1, progress=False)
    plain = rtsched.sweep(spec_with(), workers=1, progress=False)
    assert (df.run == json.dumps(spec["run"], sort_keys=True, separators=(",", ":"))).all() and (plain.run == "").all()
    # Same task sets (seeds are the coordinates'), different rows.
    assert list(df.taskset_seed) == list(plain.taskset_seed)
    assert not set(df.key) & set(plain.key)
    assert (df.overhead_ns > 0).all() and (plain.overhead_ns == 0).all()
    assert df.mean_response_ns.sum() > 1.4 * plain.mean_response_ns.sum()
    # Each row is the simulation of the generated set written as a task file with that run:.
    for r in df.itertuples():
        g = rtsched.generate("randfixedsum", seed=int(r.taskset_seed), n=6, m=2, tmin="5ms", tmax="50ms", U=repr(r.point))
        doc = yaml.safe_load(rtsched._core.to_yaml(g.taskset))
        doc["run"] = {"duration": "500ms", "seed": int(r.taskset_seed), "on_miss": "continue", **spec["run"]}
        path = tmp_path / f"set-{r.Index}.yaml"
        path.write_text(yaml.safe_dump(doc))
        res = rtsched.simulate(path, r.scheduler)
        s = res.summary
        assert (s["jobs"], s["missed"], s["max_tardiness_ns"]) == (r.jobs, r.missed, r.max_tardiness_ns), r.key
        assert s["exec_inflation"] == pytest.approx(r.exec_inflation) and s["ipc_proxy"] == pytest.approx(r.ipc_proxy)


def test_topology_and_cache_are_applied_and_rows_carry_the_model_columns():
    spec = {"name": "topo", "generator": {"name": "mwl", "params": {"m": 48}}, "utilisation": {"points": [30.0]},
            "schedulers": ["pedf:lwfg+ffd"], "seeds": 1, "duration": "200ms",
            "run": {"cache": True}, "topology": "opteron6164x4"}
    sp = S.parse_spec(spec)
    assert sp.topology == '"opteron6164x4"' and json.loads(sp.run) == {"cache": True}
    g = rtsched.generate("mwl", seed=1, m=48, U="30.0").taskset
    ts = S.spec.with_options(g, sp.run, sp.topology)
    assert ts.topology.startswith("opteron6164x4") and g.topology is None
    text = rtsched._core.to_yaml(ts)
    assert "topology: opteron6164x4" in text and "cache: {enabled: true" in text
    df = rtsched.sweep(sp, workers=1, progress=False)
    assert list(df.status) == ["ok"] and df.topology.iloc[0] == '"opteron6164x4"'
    for c in S.MODEL_COLUMNS + ["ipc_proxy", "exec_inflation", "max_tardiness_ns"]:
        assert c in df.columns and df[c].notna().all(), c
    assert 0 < df.ipc_proxy.iloc[0] <= 1 and df.exec_inflation.iloc[0] >= 1


def test_changing_an_option_recomputes_and_the_same_spec_resumes(tmp_path):
    out = tmp_path / "r.parquet"
    a = spec_with(run={"execution": OVERRUN})
    first = rtsched.sweep(a, output=out, workers=1, progress=False)
    r = run_cli("sweep", write_spec(tmp_path, a), "-o", out, "-j", "1", "--no-plots", check=0)
    assert "nothing to run" in r.stderr, r.stderr
    b = spec_with(run={"execution": dict(OVERRUN, ratio=2.0)})
    second = rtsched.sweep(b, output=out, workers=1, progress=False)
    assert not set(first.key) & set(second.key)
    table = S.read_table(out)
    assert len(table) == len(first) + len(second)  # both kept, told apart by `run`
    assert set(table.run) == {json.dumps(x["run"], sort_keys=True, separators=(",", ":")) for x in (a, b)}
    assert second.mean_response_ns.sum() > first.mean_response_ns.sum()
    # A topology is part of the identity too; no options at all keeps the keys of earlier versions.
    c = S.parse_spec(spec_with(generator={"name": "randfixedsum", "params": {"n": 6, "m": 48}}, topology="opteron6164x4"))
    d = S.parse_spec(spec_with(generator={"name": "randfixedsum", "params": {"n": 6, "m": 48}}))
    assert set(S.all_keys(c)).isdisjoint(S.all_keys(d))
    plain = S.parse_spec(spec_with())
    g = plain.generators[0]
    old = {"gen": g.name, "params": g.params, "param": g.param, "per_cpu": False, "duration_ns": plain.duration_ns,
           "on_miss": "continue", "seed": 3}
    old_hash = hashlib.sha256(json.dumps(old, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:10]
    assert all(k.endswith("/" + old_hash) for k in S.all_keys(plain))


PROFILE = """schema: rtsched.overheads/1
machine: "test"
backend: "testbed"
migration_wss: 65536
tick_period: "1ms"
costs:
  decision: {median: "3us", p99: "9us", samples: 10}
  context_switch: {median: "4us", p99: "8us", samples: 10}
  migration: {median: "10us", p99: "30us", samples: 10}
  release: {median: "2us", p99: "5us", samples: 10}
  tick: {median: "1us", p99: "2us", samples: 10}
"""


def test_an_overhead_profile_is_read_beside_the_spec_and_identified_by_content(tmp_path):
    (tmp_path / "prof").mkdir()
    prof = tmp_path / "prof" / "p.yaml"
    prof.write_text(PROFILE)
    spec = spec_with(run={"overheads": "prof/p.yaml"})
    sp = S.load_spec(write_spec(tmp_path, spec))
    assert json.loads(sp.run)["overheads"] == str(prof)
    keys = S.all_keys(sp)
    df = rtsched.sweep(sp, workers=1, progress=False)
    assert (df.overhead_ns > 0).all()
    p99 = S.load_spec(write_spec(tmp_path, spec_with(run={"overheads": {"profile": "prof/p.yaml", "statistic": "p99"}}), "b.yaml"))
    assert set(S.all_keys(p99)).isdisjoint(keys)
    # A recalibrated profile (new content, same path) is another variant.
    prof.write_text(PROFILE.replace('"3us"', '"6us"'))
    assert set(S.all_keys(S.load_spec(tmp_path / "spec.yaml"))).isdisjoint(keys)


@pytest.mark.parametrize("change,field,words", [
    ({"run": {"execution": {"model": "overrun", "ratio": -1}}}, "run.execution.ratio", "must be > 0"),
    ({"run": {"execution": {"model": "overrun", "ratio": 1.5, "probability": 2}}}, "run.execution.probability", "[0, 1]"),
    ({"run": {"execution": "fast"}}, "run.execution.model", "unknown execution model"),
    ({"run": {"cache": {"l9": "1ns"}}}, "run.cache.l9", "did you mean 'l2'"),
    ({"run": {"cache": {"passes": 0}}}, "run.cache.passes", "1 to 1000"),
    ({"run": {"cache": "yes"}}, "run.cache", "expected a mapping"),
    ({"run": {"overheads": {"tick": "soon"}}}, "run.overheads.tick", "unit"),
    ({"run": {"overheads": "missing.yaml"}}, "run.overheads", "cannot read overhead profile"),
    ({"run": {"duration": "1s"}}, "run.duration", "top-level 'duration'"),
    ({"run": {"exec": {}}}, "run.exec", "did you mean 'execution'"),
    ({"run": 5}, "run", "expected a mapping"),
    ({"topology": "epyc"}, "topology", "unknown topology preset 'epyc'"),
    ({"topology": {"caches": [{"level": 2, "size": 10}]}}, "topology.caches[0].size", "smaller than one line"),
    ({"topology": {"caches": [{"level": 3, "size": "8MiB", "cpus": [[0, 7]]}]}}, "topology.caches[0].cpus[0]", "CPU 7 does not exist"),
    ({"topology": {"cache": []}}, "topology.cache", "did you mean 'caches'"),
    ({"topology": 48}, "topology", "preset name"),
])
def test_bad_options_exit_2_naming_the_field(tmp_path, change, field, words):
    path = write_spec(tmp_path, spec_with(**change), "bad.yaml")
    r = run_cli("sweep", path, "--no-plots", "-q")
    assert r.returncode == 2, r.stderr
    assert f"{path}: field '{field}': " in r.stderr and words in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert not list(tmp_path.glob("*.parquet"))


def test_a_topology_too_small_for_a_generator_names_it():
    spec = spec_with(generator=None, topology="opteron6164x4", generators=[
        {"name": "randfixedsum", "params": {"n": 6, "m": 2}, "label": "small"},
        {"name": "randfixedsum", "params": {"n": 6, "m": 64}, "label": "big"}])
    with pytest.raises(rtsched.InputError) as e:
        S.parse_spec(spec, "two.yaml")
    assert str(e.value).startswith("two.yaml: field 'topology': preset 'opteron6164x4' has 48 CPUs; the platform has 64")
    assert "generators[1]" in str(e.value)


def test_rows_without_pulls_are_stale():
    """A completed simulated row of this schema written before the table had ``pulls`` is
    recomputed on resume (as for ``kernel_migrations``); a test's row has none by nature."""
    from rtsched.sweep.table import current_schema, stale

    row = {"status": "ok", "kind": "sim", "schema": current_schema(), "ipc_proxy": 1.0, "kernel_migrations": 0,
           "pulls": 3}
    df = pd.DataFrame([row, {**row, "pulls": None}, {**row, "kind": "test", "pulls": None}])
    assert stale(df).tolist() == [False, True, False]


def test_old_tables_without_the_model_columns_are_recomputed(tmp_path):
    out = tmp_path / "r.csv"
    fresh = rtsched.sweep(spec_with(), output=out, workers=1, progress=False)
    old = pd.read_csv(out).drop(columns=S.MODEL_COLUMNS + ["ipc_proxy", "exec_inflation", "run", "topology"])
    old.to_csv(out, index=False)
    again = rtsched.sweep(spec_with(), output=out, workers=1, progress=False)
    assert again.ipc_proxy.notna().all()
    pd.testing.assert_frame_equal(again.sort_values("key").reset_index(drop=True),
                                  fresh.sort_values("key").reset_index(drop=True), check_dtype=False)
