"""Batched sweeps: a batch computed in one call into Rust gives the rows worked out apart from
it (tests/sweep_reference.py, row for row), the keys and seeds of earlier versions (their
tables resume), and every row exactly once when a worker or the whole sweep is killed in the
middle of a batch."""

import importlib
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import psutil
import pyarrow as pa
import pytest
import yaml

import rtsched
from conftest import RTSCHED, comparable, run_cli
from sweep_reference import key_of, reference_rows, seed_of

S = importlib.import_module("rtsched.sweep")  # the package (rtsched.sweep, also callable)
R = importlib.import_module("rtsched.sweep.runner")


def spec_of(**over):
    d = {
        "name": "b",
        "seed": 7,
        "generator": {"name": "randfixedsum", "params": {"n": 6, "m": 2, "tmin": "5ms", "tmax": "50ms"}},
        "utilisation": {"points": [1.2, 2.0]},
        "schedulers": ["gedf", "pedf:ffd"],
        "seeds": 2,
        "duration": "2s",
    }
    d.update(over)
    return d


SPECS = {
    # Partition failures (status, error, empty metrics) beside completed rows.
    "plain": spec_of(utilisation={"points": [1.0, 1.6, 1.9, 2.0]}, schedulers=["gedf", "pedf:ffd", "gfp:rm", "pedf:wfd"],
                     seeds=5, duration="300ms"),
    # TUFs that gedf ignores (a warning), utilities, aborts.
    "tufs": {"name": "u", "seed": 3, "generator": {"name": "chronos2011"}, "utilisation": {"points": [2.0, 3.5]},
             "schedulers": ["gedf", "gfifo", "gnpedf"], "seeds": 2, "duration": "300ms"},
    # Run options and a topology (overheads, cache model columns), two generators, per-CPU points.
    "options": {"name": "o", "seed": 5,
                # The topology's preset has 48 CPUs.
                "generators": [{"name": "randfixedsum", "params": {"n": 60, "m": 48, "tmin": "2ms", "tmax": "20ms"}, "label": "a"},
                               {"name": "randfixedsum", "params": {"n": 60, "m": 48, "tmin": "2ms", "tmax": "20ms", "u_max": 0.9}, "label": "b"}],
                "utilisation": {"points": [0.3, 0.6], "per_cpu": True}, "schedulers": ["gedf", "pedf:ffd", "paws"],
                "seeds": 2, "duration": "200ms", "on_miss": "abort",
                "run": {"execution": {"model": "overrun", "ratio": 1.3, "probability": 0.5}, "cache": True,
                        "overheads": {"context_switch": "5us", "decision": "2us", "migration": "10us"}},
                "topology": "opteron6164x4"},
    # Schedulability tests as schedulers, beside the simulation they bound; and with overheads
    # (the overhead-aware forms of the tests; partitions admitted on inflated WCETs).
    "tests": spec_of(utilisation={"points": [1.0, 1.6, 1.9]}, seeds=5, duration="300ms",
                     schedulers=["gedf", "test:gedf-gfb", "test:gedf-bcl", "test:necessary", "test:partition:ffd"]),
    "tests-overheads": spec_of(utilisation={"points": [1.0, 1.6]}, seeds=4, duration="300ms",
                               schedulers=["gedf", "test:gedf-gfb", "test:partition:wfd"],
                               run={"overheads": {"context_switch": "500us", "decision": "100us", "release": "100us"}}),
}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_batched_sweep_equals_the_rows_worked_out_apart_row_for_row(name, tmp_path):
    spec = SPECS[name]
    ref, notes = reference_rows(spec)
    assert len(ref) == S.parse_spec(spec).size
    batched = rtsched.sweep(spec, workers=2, progress=False)
    pd.testing.assert_frame_equal(comparable(batched), comparable(ref))
    on_disk = rtsched.sweep(spec, output=tmp_path / "t.parquet", workers=1, progress=False)
    pd.testing.assert_frame_equal(comparable(on_disk), comparable(ref))
    csv = rtsched.sweep(spec, output=tmp_path / "t.csv", workers=1, progress=False)
    pd.testing.assert_frame_equal(comparable(csv), comparable(ref), check_dtype=False)
    # The workers' notes are the reference's, batch by batch.
    one = S.run_batch(S.Batcher(S.units(S.parse_spec(spec)), S.parse_spec(spec).schedulers).take(10**9))
    assert set(one[1]) == notes
    if name == "plain":
        assert {"ok", "partition-failed"} <= set(ref.status)
    if name == "tufs":
        assert notes and {n[0] for n in notes} == {"tufs"}


def test_keys_and_seeds_are_those_of_earlier_versions():
    # Values computed by the sweep before batches existed: a table written then still resumes.
    sp = S.parse_spec(spec_of())
    us = S.units(sp)
    assert [u.seed for u in us[:3]] == [1526807267778547578, 3695722441596523808, 4789760566946544965]
    assert us[0].schedulers == [("gedf", "randfixedsum/000000001.200000/0000000001/gedf/f260bd2351"),
                                ("pedf:ffd", "randfixedsum/000000001.200000/0000000001/pedf:ffd/f260bd2351")]
    opt = S.parse_spec(spec_of(utilisation={"points": [1.0]}, schedulers=["gedf"], seeds=1, duration="500ms", seed=3,
                               run={"execution": {"model": "overrun", "ratio": 1.5, "probability": 1.0}}))
    (u,) = S.units(opt)
    assert (u.seed, u.schedulers[0][1]) == (6819309774461511965, "randfixedsum/000000001.000000/0000000001/gedf/06ebbb99dd")
    # And the batch carries them to the table unchanged.
    df = rtsched.sweep(sp, workers=1, progress=False)
    assert set(df.key) == set(S.all_keys(sp)) and set(df.taskset_seed) == {u.seed for u in us}


def test_batches_cut_at_task_sets_and_keep_only_rows_to_do():
    sp = S.parse_spec(spec_of(schedulers=["gedf", "pedf:ffd", "gfp:rm"], seeds=3))
    us = S.units(sp)
    done = {us[0].schedulers[1][1], us[2].schedulers[0][1]}
    for u in us:
        u.schedulers = [(s, k) for s, k in u.schedulers if k not in done]
    b = S.Batcher(us, sp.schedulers)
    sizes = []
    while b:
        x = b.take(4)
        sizes.append((x.sets, x.rows))
        assert len(x.todo) == x.sets * 3 and sum(x.todo) == x.rows
    assert sum(r for _, r in sizes) == sp.size - 2 and b.left == 0
    assert all(r <= 4 or s == 1 for s, r in sizes)  # one set more than asked never, unless it is alone
    # Rows of a partly done set come back under their own keys.
    table, _, _ = S.run_batch(S.Batcher(us[:3], sp.schedulers).take(100))
    keys = [k for u in us[:3] for _, k in u.schedulers]
    assert table["key"].to_pylist() == keys
    assert table["scheduler"].to_pylist() == [k.split("/")[3] for k in keys]


def test_batch_sizes_follow_the_measured_cost_of_a_row():
    s = R._Sizer(workers=2)
    assert s.next(10**6) == R.FIRST_ROWS
    s.measured(64, 0.064)  # 1 ms a row: growth is bounded (4x per batch), then the target holds
    assert s.next(10**6) == 4 * R.FIRST_ROWS
    for _ in range(20):
        s.measured(s.next(10**6), s.next(10**6) * 1e-3)
    assert s.next(10**6) == int(R.TARGET_S / 1e-3)
    assert s.next(1000) == 250  # the tail: an even share per worker,
    assert s.next(100) == int(R.MIN_S / 1e-3)  # but not below MIN_S of work
    s.measured(10, 1e-9)
    assert s.next(10**9) <= R.MAX_ROWS


def write_spec(tmp_path, spec):
    p = tmp_path / "spec.yaml"
    p.write_text(yaml.safe_dump(spec))
    return p


def start(spec_path, out, *args):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.Popen([RTSCHED, "sweep", spec_path, "-o", out, "--no-plots", *map(str, args)], start_new_session=True,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(cond, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return False


def test_a_worker_killed_mid_batch_loses_nothing(tmp_path):
    spec = spec_of(seeds=30, duration="20s", schedulers=["gedf", "pedf:ffd", "gfp:rm"])
    out = tmp_path / "r.parquet"
    p = start(write_spec(tmp_path, spec), out, "-j", "2", "--batch", "6", "--batch-seconds", "0.2")
    parts = S.parts_dir(out)
    assert wait_for(lambda: parts.is_dir() and list(parts.glob("part-*"))), "the sweep never got going"
    # The pool's workers: forked by the sweep itself (its first pool), or by a fork server, its
    # child; the processes below the sweep that have no children and are not multiprocessing's
    # resource tracker.
    workers = [c for c in psutil.Process(p.pid).children(recursive=True)
               if not c.children() and not any("resource_tracker" in a for a in c.cmdline())]
    assert workers, "a local process pool"
    # The CLI's coordinator has one thread: its first pool is forked from it (no fork server,
    # whose start costs 0.3-0.4 s before the first batch; docs/sweeps.md).
    assert all(w.ppid() == p.pid for w in workers), [(w.pid, w.ppid(), w.cmdline()) for w in workers]
    workers[0].kill()  # mid-batch: the rows it was computing come back once, from a resubmission
    try:
        _, err = p.communicate(timeout=300)
    finally:
        if p.poll() is None:  # hung: leave no sweep (or its pool) running after the test
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == 0, err
    assert "a worker died" in err, err
    df = S.read_table(out)
    assert df["key"].is_unique and sorted(df.key) == sorted(S.all_keys(S.parse_spec(spec)))
    ref, _ = reference_rows(spec)
    pd.testing.assert_frame_equal(comparable(df), comparable(ref))


def test_the_first_pool_forks_a_coordinator_of_one_thread_and_others_use_the_fork_server():
    # In a fresh interpreter, whose threads this test controls (pytest's process may have more).
    code = """
import importlib, threading
R = importlib.import_module("rtsched.sweep.runner")
out = [R._context(first=True).get_start_method(), R._context(first=False).get_start_method()]
t = threading.Thread(target=threading.Event().wait, args=(5,), daemon=True)
t.start()
out.append(R._context(first=True).get_start_method())
print(" ".join(out))
"""
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    # The first pool of a coordinator of one thread: fork. A replacement pool, or a coordinator
    # with another thread alive (a lock it holds would stay held in the child): the fork server.
    assert got == ["fork", "forkserver", "forkserver"]


def test_resume_after_a_kill_mid_batch_gives_every_row_once(tmp_path):
    spec = spec_of(seeds=30, duration="20s", schedulers=["gedf", "pedf:ffd", "gfp:rm"])
    spec_path = write_spec(tmp_path, spec)
    out = tmp_path / "r.parquet"
    p = start(spec_path, out, "-j", "2", "--batch", "6", "--batch-seconds", "0.2", "-q")
    parts = S.parts_dir(out)
    assert wait_for(lambda: parts.is_dir() and len(list(parts.glob("part-*"))) >= 2), "the sweep never got going"
    os.killpg(p.pid, signal.SIGKILL)  # the coordinator and its workers, batches in flight
    p.wait()
    partial, _ = S._read_all(out)
    total = S.parse_spec(spec).size
    assert 0 < len(partial) < total and partial["key"].is_unique
    run_cli("sweep", spec_path, "-o", out, "-j", "2", "--no-plots", "-q", check=0)
    df = S.read_table(out)
    assert df["key"].is_unique and len(df) == total and not parts.exists()
    ref, _ = reference_rows(spec)
    pd.testing.assert_frame_equal(comparable(df), comparable(ref))
    # The rows written before the kill are in the table as they were.
    kept = comparable(partial)
    pd.testing.assert_frame_equal(comparable(df[df.key.isin(kept.key)]), kept)


def test_units_seeds_and_keys_are_those_of_their_definitions():
    # The seeds and keys made in Rust, a chunk of replications at a time, against their
    # definitions worked out in Python (sweep_reference), and the functions one at a time.
    sp = S.parse_spec(SPECS["options"])
    for u in S.units(sp):
        g = next(g for g in sp.generators if g.label == u.label)
        assert u.seed == seed_of(sp, g, u.point, u.replication) == S.taskset_seed(sp.seed, g, sp.per_cpu, u.point, u.replication)
        variant = S.keys._variant_hash(sp, g)
        # In key order (the order a batch's rows come back in), whatever the spec's order.
        assert u.schedulers == sorted(((s, key_of(g.label, u.point, u.replication, s, variant)) for s in sp.schedulers), key=lambda x: x[1])
        assert [k for _, k in u.schedulers] == [S.row_key(g.label, u.point, u.replication, s, variant) for s, _ in u.schedulers]
        keys = [k for _, k in u.schedulers]
        assert keys == sorted(keys) and [s for s, _ in u.schedulers] != list(sp.schedulers)
    sp = S.parse_spec(spec_of(seeds=[3, 11, 250], utilisation={"points": [0.25, 1.0 / 3, 1.95]}))
    assert len(S.units(sp)) == 9
    for u in S.units(sp):
        g = sp.generators[0]
        assert u.seed == seed_of(sp, g, u.point, u.replication)
        assert dict(u.schedulers)["pedf:ffd"] == key_of(g.label, u.point, u.replication, "pedf:ffd", S.keys._variant_hash(sp, g))
    # More replications than one call into Rust makes: the chunks join up.
    sp = S.parse_spec(spec_of(seeds=S.keys._CHUNK + 3, utilisation={"points": [1.0]}, schedulers=["gedf"]))
    us = S.units(sp)
    assert [u.replication for u in us] == list(range(1, S.keys._CHUNK + 4))
    for u in us[S.keys._CHUNK - 1:S.keys._CHUNK + 1]:
        assert u.seed == seed_of(sp, sp.generators[0], 1.0, u.replication)
        assert u.schedulers == [("gedf", key_of(u.label, 1.0, u.replication, "gedf", S.keys._variant_hash(sp, sp.generators[0])))]


def test_batches_come_back_sorted_and_the_table_is_put_in_order_without_sorting_rows():
    # Each batch's rows are in key order, so a table of batches finished in any order is put
    # in order by moving whole batches; what cannot be (a key twice, interleaved batches)
    # takes the sort, and both give the same table.
    import pyarrow as pa

    T = importlib.import_module("rtsched.sweep.table")
    sp = S.parse_spec(SPECS["options"])
    spans = S.keys.Spans(sp)
    tables = []
    while spans:
        t, _, _ = S.run_batch(spans.take(5))
        assert t["key"].to_pylist() == sorted(t["key"].to_pylist())
        tables.append(t)
    assert len(tables) >= 3
    shuffled = pa.concat_tables(tables[1::2] + tables[::2])
    full = T._dedup_arrow(pa.concat_tables([shuffled.slice(0, 1), shuffled]))  # a key twice: the sort
    assert T._in_key_order(pa.concat_tables([shuffled.slice(0, 1), shuffled])) is None
    fast = T._in_key_order(shuffled)
    assert fast is not None and fast.equals(full) and fast["key"].to_pylist() == sorted(S.all_keys(sp))
    # Two batches whose keys interleave: no order of whole batches sorts them.
    a, b = tables[0], tables[1]
    mixed = pa.concat_tables([pa.concat_tables([a.slice(0, 1), b.slice(0, 1)]).combine_chunks(),
                              pa.concat_tables([a.slice(1), b.slice(1)]).combine_chunks()])
    assert T._in_key_order(mixed) is None
    assert T._dedup_arrow(mixed).equals(pa.concat_tables([a, b]).combine_chunks())


def test_parquet_parts_of_earlier_versions_are_resumed(tmp_path):
    # Earlier versions wrote a Parquet table's parts as Parquet; now they are Arrow IPC files.
    spec = spec_of(duration="300ms")
    ref, _ = reference_rows(spec)
    out = tmp_path / "r.parquet"
    S.parts_dir(out).mkdir()
    T = importlib.import_module("rtsched.sweep.table")
    T._write_atomic(ref.iloc[::2], S.parts_dir(out) / "part-1-1-abc-000001.parquet")
    r = run_cli("sweep", write_spec(tmp_path, spec), "-o", out, "-j", "1", "--no-plots", check=0)
    assert f"/{len(ref) - len(ref.iloc[::2])} rows" in r.stderr, r.stderr  # only the rows the part lacks are run
    df = S.read_table(out)
    assert df["key"].is_unique and not S.parts_dir(out).exists()
    pd.testing.assert_frame_equal(comparable(df), comparable(ref))


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize("cut", [1, 7, 10**9])
def test_a_span_makes_the_batch_its_units_make(name, cut):
    # Span.batch builds a batch without a Unit per set: field for field what Batcher makes of
    # the same task sets' units, however the sweep is cut.
    sp = S.parse_spec(SPECS[name])
    spans, batcher = S.keys.Spans(sp), S.Batcher(S.units(sp), sp.schedulers)
    while spans:
        span = spans.take(cut)
        got, want = vars(span.batch()), vars(batcher.take(span.rows))
        assert isinstance(got["keys"], pa.Array)  # made in Rust, as a column
        assert dict(got, keys=got["keys"].to_pylist()) == want
    assert not batcher


@pytest.mark.parametrize("reps", [[1, 2, 3], [0, 7, 2**40, 2**63 - 1, 2**64 + 5], [-1, 5]])
def test_span_seeds_and_keys_made_in_rust_are_those_of_their_definitions(reps):
    # Made in Rust for any whole replication number, against their definitions in Python.
    from dataclasses import replace

    sp = replace(S.parse_spec(SPECS["options"]), replications=tuple(reps))
    g, variant = sp.generators[0], S.keys._variant_hash(sp, sp.generators[0])
    b = S.keys.Span(replace(sp, points=(), replications=()), [(0, variant, sp.points[0], list(reps))]).batch()
    assert isinstance(b.keys, pa.Array)
    assert b.set_seed == [seed_of(sp, g, sp.points[0], r) for r in reps]
    assert b.keys.to_pylist() == [key_of(g.label, sp.points[0], r, s, variant) for r in reps for s in b.schedulers]


def test_spans_give_the_units_of_the_whole_sweep():
    # A sweep into an empty table sends coordinates; the worker's units are units()'s.
    sp = S.parse_spec(SPECS["options"])
    spans = S.keys.Spans(sp)
    got = []
    while spans:
        span = spans.take(7)
        b = span.batch()
        assert b.rows == span.rows <= max(7, len(sp.schedulers))
        got += b.keys.to_pylist()
    assert spans.left == 0 and got == S.all_keys(sp)
    table, _, _ = S.run_batch(S.keys.Spans(sp).take(10**9))
    assert table["taskset_seed"].to_pylist() == [u.seed for u in S.units(sp) for _ in u.schedulers]
