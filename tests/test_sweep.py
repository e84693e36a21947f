"""Sweeps: determinism, resuming after a kill, a Dask worker dying mid-sweep, bad specs."""

import importlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

import rtsched
from conftest import RTSCHED, comparable, exit_now, run_cli, sweep_in_thread

S = importlib.import_module("rtsched.sweep")  # the package (rtsched.sweep, also callable)


def small_spec(**over):
    d = {
        "name": "t",
        "seed": 7,
        "generator": {"name": "randfixedsum", "params": {"n": 6, "m": 2, "tmin": "5ms", "tmax": "50ms"}},
        "utilisation": {"points": [1.2, 1.6, 2.0]},
        "schedulers": ["gedf", "pedf:ffd", "gfp:rm"],
        "seeds": 4,
        "duration": "2s",
    }
    d.update(over)
    return d


def assert_each_key_once(df, spec):
    keys = S.all_keys(S.parse_spec(spec) if isinstance(spec, dict) else spec)
    assert len(df) == len(keys) and sorted(df["key"]) == sorted(keys)
    assert df["key"].is_unique
    assert list(df["key"]) == sorted(df["key"]), "table is sorted by key"


def test_sweep_rows_columns_and_determinism(tmp_path):
    spec = small_spec()
    a = rtsched.sweep(spec, workers=2, progress=False)
    b = rtsched.sweep(spec, output=tmp_path / "r.csv", workers=1, progress=False)
    assert_each_key_once(a, spec)
    for c in ["generator", "point", "replication", "scheduler", "m", "n", "U", "jobs", "missed", "dsr",
              "max_tardiness_ns", "mean_response_ns", "p99_response_ns", "preemptions", "migrations",
              "context_switches", "scheduler_invocations", "steals", "steal_attempts", "failed_steals",
              "priority_inversions", "priority_inversion_ns", "status", "schedulable", "schema"]:
        assert c in a.columns, c
    # Same rows whatever the executor, the worker count or the file format.
    pd.testing.assert_frame_equal(comparable(a), comparable(b), check_dtype=False)
    # Every scheduler saw the same task set.
    per_set = a.groupby(["point", "replication"]).agg(seeds=("taskset_seed", "nunique"), U=("U", "nunique"))
    assert (per_set.seeds == 1).all() and (per_set.U == 1).all()
    ok = a[a.status == "ok"]
    assert (ok.jobs > 0).all() and ok.dsr.between(0, 1).all()
    assert set(a.status) <= {"ok", "partition-failed"}
    # The summary columns are the simulator's: rerun one row directly.
    r = ok.iloc[0]
    g = rtsched.generate("randfixedsum", seed=int(r.taskset_seed), n=6, m=2, tmin="5ms", tmax="50ms", U=repr(float(r.point)))
    res = rtsched.simulate(g.taskset, r.scheduler, duration="2s", seed=int(r.taskset_seed))
    assert res.summary["jobs"] == r.jobs and res.summary["migrations"] == r.migrations


def test_rows_of_an_older_results_schema_are_recomputed_not_reused(tmp_path):
    spec = small_spec(seeds=2, duration="1s")
    out = tmp_path / "r.csv"
    fresh = rtsched.sweep(spec, output=out, workers=1, progress=False)
    assert (fresh.schema == rtsched._core.RESULTS_SCHEMA).all()
    # The table as a build before the run-level counters wrote it: no such columns, no schema.
    old = pd.read_csv(out).drop(columns=["steals", "steal_attempts", "failed_steals", "priority_inversions",
                                         "priority_inversion_ns", "schema"])
    old.to_csv(out, index=False)
    assert S.read_table(out).priority_inversions.isna().all()
    r = run_cli("sweep", write_spec(tmp_path, spec), "-o", out, "-j", "1", "--no-plots", check=0)
    assert f"{len(fresh)} rows in {out} are from an older results schema" in r.stderr, r.stderr
    again = S.read_table(out)
    assert_each_key_once(again, spec)
    pd.testing.assert_frame_equal(comparable(again), comparable(fresh), check_dtype=False)
    # Half stale (another schema string), half current: only the stale half is recomputed.
    half = S.read_table(out)
    stale_keys = set(half.key[::2])
    half.loc[half.key.isin(stale_keys), "schema"] = "rtsched.results/1"
    half.loc[half.key.isin(stale_keys), "priority_inversions"] = pd.NA
    half.to_csv(out, index=False)
    r = run_cli("sweep", write_spec(tmp_path, spec), "-o", out, "-j", "1", "--no-plots", check=0)
    assert f"{len(stale_keys)} rows in {out} are from an older results schema" in r.stderr, r.stderr
    pd.testing.assert_frame_equal(comparable(S.read_table(out)), comparable(fresh), check_dtype=False)


def write_spec(tmp_path, spec):
    p = tmp_path / "spec.yaml"
    p.write_text(yaml.safe_dump(spec))
    return p


def test_resume_after_kill_gives_each_key_once_and_same_values(tmp_path):
    spec = small_spec(seeds=40, duration="20s")
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(yaml.safe_dump(spec))
    out = tmp_path / "res.parquet"
    env = dict(os.environ, MPLBACKEND="Agg")
    p = subprocess.Popen([RTSCHED, "sweep", spec_path, "-o", out, "-j", "1", "--batch", "6", "--batch-seconds", "0.2",
                          "--no-plots", "-q"], start_new_session=True, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    parts = S.parts_dir(out)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (parts.is_dir() and len(list(parts.glob("part-*"))) >= 2):
        time.sleep(0.01)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    assert not out.exists(), "killed before the end: no table yet, only part files"
    partial, _ = S._read_all(out)
    total = S.parse_spec(spec).size
    assert 0 < len(partial) < total, (len(partial), total)
    # Rerun: only the missing rows are computed, every key lands exactly once.
    run_cli("sweep", spec_path, "-o", out, "-j", "2", "--no-plots", "-q", check=0)
    resumed = S.read_table(out)
    assert_each_key_once(resumed, spec)
    assert not parts.exists()
    fresh = rtsched.sweep(spec, workers=2, progress=False)
    pd.testing.assert_frame_equal(comparable(resumed), comparable(fresh), check_dtype=False)
    # A third run has nothing to do and changes nothing.
    run_cli("sweep", spec_path, "-o", out, "--no-plots", "-q", check=0)
    pd.testing.assert_frame_equal(S.read_table(out), resumed)


def test_dask_worker_killed_mid_sweep(tmp_path):
    distributed = pytest.importorskip("distributed")
    spec = small_spec(seeds=30, duration="40s")
    out = tmp_path / "dask.parquet"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster, distributed.Client(cluster) as client:
        t, result, error = sweep_in_thread(spec, executor=client.get_executor(), output=out, progress=False,
                                           batch_rows=10, batch_seconds=0.5)
        victim, deadline = None, time.monotonic() + 60
        while victim is None and time.monotonic() < deadline:
            busy = [w for w, tasks in client.processing().items() if tasks]
            if busy and S.parts_dir(out).is_dir():
                victim = busy[0]
            else:
                time.sleep(0.02)
        assert victim is not None, "the sweep never got going"
        client.run(exit_now, workers=[victim], wait=False)
        t.join(120)
        assert not t.is_alive() and not error, error
        assert victim not in client.scheduler_info()["workers"], "the victim really died"
    df = result["df"]
    assert_each_key_once(df, spec)
    assert_each_key_once(S.read_table(out), spec)
    local = rtsched.sweep(spec, workers=2, progress=False)
    pd.testing.assert_frame_equal(comparable(df), comparable(local), check_dtype=False)


def test_local_cluster_carries_the_sweep_settings_to_every_process(tmp_path):
    """rtsched's local Dask cluster: the scheduler and each worker run with DASK_CONFIG, and a
    sweep through it gives the local pool's rows."""
    distributed = pytest.importorskip("distributed")
    import dask

    spec = small_spec(seeds=6)
    with S.local_cluster(2, silence_logs=50) as cluster, distributed.Client(cluster) as client:
        for key, value in S.DASK_CONFIG.items():
            seen = client.run(dask.config.get, key)
            assert len(seen) == 2 and set(seen.values()) == {value}, (key, seen)
            assert dask.config.get(key) != value, "the caller's own config is left alone"
        # The scheduler lives in this process: it read the settings when the cluster started.
        tick = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.periodic_callbacks["tick"].callback_time)
        assert tick == 1000, tick
        df = rtsched.sweep(spec, executor=client.get_executor(), output=tmp_path / "r.parquet", progress=False)
    local = rtsched.sweep(spec, workers=2, progress=False)
    pd.testing.assert_frame_equal(comparable(df), comparable(local), check_dtype=False)


def test_cli_cluster_local_runs_the_sweep_on_a_local_dask_cluster(tmp_path):
    pytest.importorskip("distributed")
    spec = small_spec(seeds=4)
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(yaml.safe_dump(spec))
    out = tmp_path / "r.parquet"
    r = run_cli("sweep", spec_path, "-o", out, "--cluster", "local", "-j", "2", "--no-plots", "-q", check=0)
    assert "on a local Dask cluster of 2 workers" in r.stderr, r.stderr
    local = rtsched.sweep(spec, workers=2, progress=False)
    pd.testing.assert_frame_equal(comparable(S.read_table(out)), comparable(local), check_dtype=False)


def test_dask_env_is_read_back_as_the_sweep_settings():
    """The environment variables for a cluster started by hand are what Dask reads as DASK_CONFIG."""
    import dask

    env = S.dask_env()
    assert all(k.startswith("DASK_DISTRIBUTED__") for k in env)
    collected = dask.config.collect_env(env)
    for key, value in S.DASK_CONFIG.items():
        assert dask.config.get(key, config=collected) == value, key


@pytest.mark.parametrize("change,needle", [
    ({"schedulers": ["gedf", "nosuch"]}, "'schedulers'"),
    ({"schedulers": ["pedf"]}, "pedf:ffd"),
    ({"schedulers": []}, "'schedulers'"),
    ({"utilisation": {"points": []}}, "'utilisation.points'"),
    ({"utilisation": {"points": [1, "x"]}}, "'utilisation.points[1]'"),
    ({"utilisation": {"points": {"from": 2, "to": 1, "step": 0.5}}}, "'utilisation.points'"),
    ({"utilisation": {"points": [1, 2], "per_cpu": True}, "generator": {"name": "uunifast", "params": {"n": 4}}}, "params.m"),
    ({"utilisation": {"points": [1.0, 9.0]}}, "'generator.params'"),
    ({"generator": {"name": "nosuchgen"}}, "'generator.name'"),
    ({"generator": {"name": "randfixedsum", "params": {"n": 4, "bogus": 1}}}, "bogus"),
    ({"generator": {"name": "randfixedsum", "params": {"n": 4, "U": 1}}}, "'generator.params.U'"),
    ({"seeds": 0}, "'seeds'"),
    ({"seeds": [1, 1]}, "'seeds'"),
    ({"duration": "forever"}, "'duration'"),
    ({"on_miss": "panic"}, "'on_miss'"),
    ({"output": "r.xlsx"}, "'output'"),
    ({"colour": "blue"}, "'colour'"),
])
def test_bad_spec_exits_2_naming_the_field(tmp_path, change, needle):
    spec = small_spec(**change)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(spec))
    r = run_cli("sweep", path, "--no-plots", "-q")
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and needle in r.stderr and str(path) in r.stderr, r.stderr
    assert not list(tmp_path.glob("*.parquet"))


def test_bad_yaml_and_missing_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: [unclosed\n")
    r = run_cli("sweep", path)
    assert r.returncode == 2 and "not valid YAML" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("sweep", tmp_path / "nope.yaml")
    assert r.returncode == 2 and "no such file" in r.stderr


def test_cli_example_spec_writes_table_and_figures(tmp_path):
    spec = yaml.safe_load((Path(__file__).parent.parent / "examples/sweeps/gedf-vs-partitioned.yaml").read_text())
    spec.update(seeds=2, duration="200ms", output="ex.csv")
    spec["utilisation"]["points"] = [2.0, 3.0, 4.0]
    path = tmp_path / "ex.yaml"
    path.write_text(yaml.safe_dump(spec))
    r = run_cli("sweep", path, check=0)
    assert "wrote" in r.stdout
    df = S.read_table(tmp_path / "ex.csv")
    assert len(df) == 3 * 2 * 4
    for name in ["dsr", "schedulability", "tardiness", "migrations"]:
        for ext in ["png", "svg"]:
            f = tmp_path / f"ex-{name}.{ext}"
            assert f.exists() and f.stat().st_size > 1000, f
    assert "rows" in r.stderr  # the progress bar, not a TTY: a few lines only
    assert len(r.stderr.splitlines()) < 10


def test_progress_bar_does_not_spam_non_tty(capsys):
    import io

    buf = io.StringIO()
    bar = S.Progress(1000, stream=buf, interval=5.0)
    for _ in range(1000):
        bar.update(1)
    bar.close()
    lines = buf.getvalue().splitlines()
    assert 1 <= len(lines) <= 3 and "1000/1000" in lines[-1] and "ETA" in lines[-1]


def test_spec_errors_name_the_field_in_plain_words():
    def message(**change):
        with pytest.raises(rtsched.InputError) as e:
            S.parse_spec(small_spec(**change), "bad.yaml")
        return str(e.value)

    assert message(utilisation={"points": [1, "x"]}) == "bad.yaml: field 'utilisation.points[1]': expected a number, got 'x'"
    assert message(utilisation={"points": {"from": 1, "to": 2}}) == (
        "bad.yaml: field 'utilisation.points.step': missing (a range is written {from: A, to: B, step: S})")
    assert "field 'seedz': unknown field (known: " in message(seedz=3) and "(did you mean 'seed'?)" in message(seedz=3)
    assert "field 'generator.parms'" in message(generator={"name": "randfixedsum", "parms": {"n": 4}})
    assert "(did you mean 'randfixedsum'?)" in message(generator={"name": "randfixedsun"})
    assert "field 'utilization': give either 'utilisation' or 'utilization'" in message(utilization={"points": [1.0]})
    assert message(seeds="3") == "bad.yaml: field 'seeds': expected an integer, got '3'"  # strict: no strings for numbers
    assert message(utilisation={"points": [1.0], "per_cpu": 1}).endswith("field 'utilisation.per_cpu': expected true or false, got 1")
    assert "did you mean 'gedf'" in message(schedulers=["gedff"])  # the core's own scheduler-name check
    two = [{"name": "uunifast", "params": {"n": 4, "m": 2}, "label": "u"}, {"name": "randfixedsum", "label": "u"}]
    assert "field 'generators[1].label': label 'u' used twice" in message(generator=None, generators=two)
