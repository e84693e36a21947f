"""Sweep durability: kill the sweep again and again at random points, resume each time, and
the final table holds every row exactly once with the values of a sweep never interrupted.

Two ways to die, each several times in one test at seeded random moments:
- the whole sweep (coordinator, fork server and pool workers: its process group) by SIGKILL,
  then `rtsched sweep` run again on the same table;
- a Dask worker of a LocalCluster (its nanny starts a new one), while one `rtsched.sweep`
  carries on.

The kill times come from `random.Random(seed)`; the seed is printed in every failure and can
be set with RTSCHED_DURABILITY_SEED to replay a run's delays (the machine's speed still moves
what each delay hits). tests/test_sweep.py and tests/test_sweep_batch.py kill once, at a point
chosen by what is on disk; these kill at random points, including before the first part file
and while the table is being consolidated."""

import importlib
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

import rtsched
from conftest import RTSCHED, comparable, exit_now, sweep_in_thread
from sweep_reference import reference_rows

S = importlib.import_module("rtsched.sweep")  # the package (rtsched.sweep, also callable)

SEED = int(os.environ.get("RTSCHED_DURABILITY_SEED", "20261124"))


def spec_of(**over):
    d = {
        "name": "d",
        "seed": 11,
        "generator": {"name": "randfixedsum", "params": {"n": 6, "m": 2, "tmin": "5ms", "tmax": "50ms"}},
        "utilisation": {"points": [1.2, 2.0]},
        "schedulers": ["gedf", "pedf:ffd", "gfp:rm"],
        "seeds": 20,
        "duration": "10s",
    }
    d.update(over)
    return d


def check_rows(df, ref, what):
    """Each of `df`'s keys once, every one a key of the sweep, each row equal to the reference's."""
    assert df["key"].is_unique, f"{what}: a key twice"
    assert set(df.key) <= set(ref.key), f"{what}: keys the sweep does not have"
    pd.testing.assert_frame_equal(comparable(df), comparable(ref[ref.key.isin(df.key)]), obj=what)


def start(spec_path, out):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.Popen([RTSCHED, "sweep", spec_path, "-o", out, "--no-plots", "-q", "-j", "2", "--batch", "6",
                             "--batch-seconds", "0.2"], start_new_session=True, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()


def rows_on_disk(out):
    """Rows in the table and its parts now, while a sweep may be folding the parts into the
    table (a part read a moment after it was listed may be gone: look again)."""
    for _ in range(50):
        try:
            return len(S._read_all(out)[0])
        except FileNotFoundError:
            time.sleep(0.01)
    return None


def run_to_end(spec_path, out, history=()):
    """Run the sweep to its end; kill its process group if it hangs. Returns, in seconds from
    the start, when its first and its last part file appeared and when it ended."""
    t = time.monotonic()
    p = start(spec_path, out)
    parts, seen, first, last = S.parts_dir(out), set(), None, None
    try:
        while p.poll() is None and time.monotonic() - t < 60:
            now = set(parts.glob("part-*")) if parts.is_dir() else set()
            if now - seen:
                last = time.monotonic() - t
                first = first or last
                seen |= now
            time.sleep(0.01)
    finally:
        if p.poll() is None:  # hung: leave no sweep (or its pool) running after the test
            kill_group(p)
    assert p.returncode == 0, (SEED, history, p.stderr.read())
    return first, last, time.monotonic() - t


def part_files(parts) -> set:
    """The part files in ``parts`` now: none when the directory is gone, also when the run
    consolidates and removes it while it is listed."""
    try:
        return set(parts.glob("part-*"))
    except FileNotFoundError:
        return set()


def test_sweep_killed_at_random_points_resumes_to_every_row_once(tmp_path):
    spec = spec_of(seeds=30, duration="40s")
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(yaml.safe_dump(spec))
    # The uninterrupted sweep: the reference values, and its phases here: getting going
    # (imports, the fork server, the first batch) until its first part file, writing parts
    # until the last, then consolidating the table and stopping the pool.
    first, last, total = run_to_end(spec_path, tmp_path / "ref.parquet")
    assert first is not None
    ref = S.read_table(tmp_path / "ref.parquet")
    assert len(ref) == S.parse_spec(spec).size == 180
    out = tmp_path / "r.parquet"
    parts = S.parts_dir(out)
    rng = random.Random(SEED)
    history = []  # (phase, s from the start to the kill, rows on disk after it, whether the sweep was still running)
    # Kill until five kills have hit a running sweep (at most twelve tries), each at a moment
    # drawn uniformly from a phase of the run, its length taken from the reference (start-up
    # varies most with the machine's load, so the later phases are timed from the run's own
    # first part file):
    # - "start": nothing on disk, one try in three: within the reference's start-up;
    # - "rows": otherwise, while rows are left: once the run has written its first part,
    #   within the time the rows left took the reference (between and in the middle of batches);
    # - "end": every row on disk in parts: within start-up plus consolidating the table.
    # After each kill what is on disk must be rows of the reference, each once. A run that
    # ends before its kill completes the table: it is checked, and the next try starts afresh.
    while sum(h[3] for h in history) < 5 and len(history) < 12:
        on_disk = len(S._read_all(out)[0])
        if on_disk == len(ref) and out.exists() and not parts.exists():
            check_rows(S.read_table(out), ref, f"table completed (seed {SEED}, history {history})")
            out.unlink()
            on_disk = 0
        before = part_files(parts)
        t = time.monotonic()
        p = start(spec_path, out)
        if on_disk == 0 and rng.random() < 1 / 3:
            phase, delay = "start", rng.uniform(0, first)
        elif on_disk < len(ref):
            phase = "rows"
            while p.poll() is None and not part_files(parts) - before and time.monotonic() - t < 60:
                time.sleep(0.01)
            delay = rng.uniform(0, (last - first) * (len(ref) - on_disk) / len(ref))
        else:
            phase, delay = "end", rng.uniform(0, total - (last - first))
        try:
            p.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            pass
        running = p.poll() is None
        kill_group(p)
        if not running:
            assert p.returncode == 0, (SEED, history, p.stderr.read())
        partial, _ = S._read_all(out)
        history.append((phase, round(time.monotonic() - t, 2), len(partial), running))
        check_rows(partial, ref, f"after kill {len(history)} (seed {SEED}, history {history})")
    assert sum(h[3] for h in history) >= 5, (SEED, history)
    assert any(h[3] and 0 < h[2] < len(ref) for h in history), ("no kill between the first and the last row", SEED, history)
    run_to_end(spec_path, out, history)  # resume to the end
    df = S.read_table(out)
    assert len(df) == len(ref) and not parts.exists(), (SEED, history)
    check_rows(df, ref, f"final table (seed {SEED}, history {history})")
    litter = sorted(p.name for p in tmp_path.glob(".rtsched-*.tmp"))  # a kill while the table was written
    print(f"seed {SEED}: reference sweep {total:.1f} s (parts from {first:.1f} to {last:.1f} s); kills (phase, s after "
          f"start, rows on disk after, sweep still running): {history}; temporary files left beside the table: {litter}")


def test_consolidate_removes_what_a_killed_part_write_left(tmp_path):
    # A SIGKILL while a part is written leaves its temporary file in the parts directory.
    spec = spec_of(seeds=1, duration="300ms")
    ref, _ = reference_rows(spec)
    out = tmp_path / "r.parquet"
    T = importlib.import_module("rtsched.sweep.table")
    S.parts_dir(out).mkdir()
    T._write_atomic(ref, S.parts_dir(out) / "part-1-1-abc-000001.parquet")
    (S.parts_dir(out) / ".rtsched-k1ll3d.tmp").write_bytes(b"PAR1 half a part")
    df = S.consolidate(out)
    assert not S.parts_dir(out).exists()
    check_rows(df, ref, "consolidated")
    assert len(df) == len(ref)


def test_rows_still_buffered_at_the_end_go_into_the_table_without_a_part(tmp_path, monkeypatch):
    # A run that ends with rows buffered (fewer than a part's) writes them straight into the
    # table: no part is written and read back. The table equals the reference.
    T = importlib.import_module("rtsched.sweep.table")
    spec = spec_of(seeds=3, duration="300ms")
    ref, _ = reference_rows(spec)
    written = []
    flush = T._Sink.flush
    monkeypatch.setattr(T._Sink, "flush", lambda self: (written.append(self.buffered), flush(self))[1])
    out = tmp_path / "r.parquet"
    df = rtsched.sweep(spec, output=out, workers=2, progress=False, batch_rows=10_000)
    assert [w for w in written if w] == [], f"parts written: {written}"
    assert not S.parts_dir(out).exists()
    check_rows(df, ref, "returned")
    check_rows(S.read_table(out), ref, "on disk")
    assert len(df) == len(ref)


def test_rows_still_buffered_are_kept_in_a_part_when_the_table_cannot_be_written(tmp_path, monkeypatch):
    # The final rename fails (a full disk, say; the table streamed during the run and the
    # table written at the end both end in it): the buffered rows are not lost but left in a
    # part, and the next run consolidates them without computing any row again.
    T = importlib.import_module("rtsched.sweep.table")
    spec = spec_of(seeds=3, duration="300ms")
    ref, _ = reference_rows(spec)
    out = tmp_path / "r.parquet"
    real = os.replace

    def full_disk(src, dst):
        if os.fspath(dst) == os.fspath(out):
            raise OSError(28, "No space left on device")
        return real(src, dst)

    for executor in (None, importlib.import_module("rtsched.sweep.runner").InProcess()):
        monkeypatch.setattr(T.os, "replace", full_disk)
        with pytest.raises(OSError, match="No space left"):
            rtsched.sweep(spec, output=out, executor=executor, workers=2, progress=False, batch_rows=10_000)
        assert not out.exists() and len(T._parts(out)) == 1
        assert not list(tmp_path.glob(".rtsched-*")), "the streamed table's temporary file left behind"
        monkeypatch.setattr(T.os, "replace", real)
        ran = []
        run = importlib.import_module("rtsched.sweep.runner")._run
        monkeypatch.setattr(importlib.import_module("rtsched.sweep.runner"), "_run", lambda *a, **k: ran.append(a))  # noqa: B023
        df = rtsched.sweep(spec, output=out, workers=2, progress=False)
        assert ran == [], "a row was computed again"
        check_rows(df, ref, "after the failed write")
        assert len(df) == len(ref) and not S.parts_dir(out).exists()
        monkeypatch.setattr(importlib.import_module("rtsched.sweep.runner"), "_run", run)
        out.unlink()


@pytest.mark.parametrize("pool", [False, True])
def test_a_part_that_cannot_be_written_stops_the_sweep_and_loses_no_row(tmp_path, monkeypatch, pool):
    # The third part's rename fails once (a full disk): the sweep stops with that error (not
    # another one raised on the way out: the workers' files already renamed into parts in the
    # same flush were once tried again, and the error was a missing temporary file), no part is
    # left half-written, the failed part's rows are written before the sweep returns (not
    # lost), and the next run ends with every row once and equal to the reference. On the pool
    # the parts are the workers' own files; in one process, rows the coordinator copies.
    T = importlib.import_module("rtsched.sweep.table")
    io_ = importlib.import_module("rtsched._io")
    spec = spec_of(seeds=6, duration="300ms")
    ref, _ = reference_rows(spec)
    out = tmp_path / "r.parquet"
    real, failed = io_.os.replace, []

    def full_once(src, dst):
        if Path(dst).name.endswith("-000003.arrow") and not failed:
            failed.append(set(T._read_ipc(src)["key"].to_pylist()))
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(io_.os, "replace", full_once)
    executor = None if pool else importlib.import_module("rtsched.sweep.runner").InProcess()
    with pytest.raises(OSError, match="No space left"):
        rtsched.sweep(spec, output=out, executor=executor, workers=2, progress=False, batch_rows=4, resume=False)
    assert failed, "no part reached its rename"
    kept = S.read_table(out) if out.exists() else pd.concat([T._coerce(T._arrow_frame(T._read_ipc(p))) for p in T._parts(out)])
    assert kept["key"].is_unique and failed[0] and failed[0] <= set(kept["key"]), (len(kept), failed)
    # Left as a temporary file: the stream's table, or a copied part half-written, never. On
    # the pool, the workers' files of batches still in flight when the sweep stopped; the next
    # consolidation removes them.
    left = list(S.parts_dir(out).glob(".rtsched-*.tmp"))
    assert (pool or not left) and all(p.read_bytes()[:6] == b"ARROW1" for p in left), ("a temporary file left behind", [(p.stat().st_size, p.read_bytes()[:8]) for p in left])
    monkeypatch.setattr(io_.os, "replace", real)
    df = rtsched.sweep(spec, output=out, workers=2, progress=False)
    check_rows(df, ref, "after the failed part")
    assert len(df) == len(ref) and not S.parts_dir(out).exists()


def test_a_flush_that_fails_half_way_leaves_only_the_rest_to_the_next(tmp_path, monkeypatch):
    # Two workers' files in one flush; the second's rename fails (a full disk). The first is a
    # part by then and is not buffered any more: the next flush renames only the second (it
    # once tried the first again and failed on its missing file), and the parts hold every
    # row once.
    T = importlib.import_module("rtsched.sweep.table")
    io_ = importlib.import_module("rtsched._io")
    sp = S.parse_spec(spec_of(seeds=2, duration="300ms"), "<test>")
    table, _, _ = S.run_batch(S.Batcher(S.units(sp), sp.schedulers).take(sp.size))
    out = tmp_path / "r.parquet"
    S.parts_dir(out).mkdir()
    half = len(table) // 2
    files = [T.write_transfer(table.slice(0, half), S.parts_dir(out)), T.write_transfer(table.slice(half), S.parts_dir(out))]
    sink = T._Sink(out, batch_rows=10**9)
    for f in files:
        sink.add(f)
    real = io_.os.replace
    monkeypatch.setattr(io_.os, "replace", lambda a, b: (_ for _ in ()).throw(OSError(28, "No space left on device")) if a == files[1] else real(a, b))
    with pytest.raises(OSError, match="No space left"):
        sink.flush()
    assert sink.buffered == len(table) - half and len(T._parts(out)) == 1
    monkeypatch.setattr(io_.os, "replace", real)
    sink.flush()
    keys = [k for p in T._parts(out) for k in T._read_ipc(p)["key"].to_pylist()]
    assert sorted(keys) == sorted(table["key"].to_pylist()) and len(keys) == sp.size and sink.buffered == 0


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_local_workers_hand_their_batches_over_as_files(tmp_path, monkeypatch, fmt):
    # On the local pool each batch comes back as the file its worker wrote (not pickled
    # through the pool's pipe). A Parquet table's parts are those files, renamed, not rows
    # written again; a CSV table's parts are CSV and the workers' files are removed.
    T = importlib.import_module("rtsched.sweep.table")
    io_ = importlib.import_module("rtsched._io")
    spec = spec_of(seeds=4, duration="300ms")
    ref, _ = reference_rows(spec)
    out = tmp_path / f"r.{fmt}"
    received, copied, adopted = [], [], []
    add, real, replace = T._Sink.add, io_.write_atomic, T.os.replace
    monkeypatch.setattr(T._Sink, "add", lambda self, t, *a: (received.append(type(t).__name__), add(self, t, *a))[1])
    monkeypatch.setattr(io_, "write_atomic", lambda path, *a, **k: (copied.append(Path(path).name), real(path, *a, **k))[1])
    monkeypatch.setattr(T.os, "replace", lambda a, b: (adopted.append(Path(b).name), replace(a, b))[1])
    df = rtsched.sweep(spec, output=out, workers=2, progress=False, batch_rows=1, resume=False)
    assert received and set(received) == {"str"}, received
    written = [n for n in copied if n.startswith("part-")]  # rows written again
    renamed = [n for n in adopted if n.startswith("part-") and n not in written]  # (os.replace is write_atomic's too)
    if fmt == "parquet":
        # batch_rows=1: every batch is a part as it arrives (none is left for the table's write)
        assert not written and len(renamed) == len(received), (written, renamed, received)
    else:
        assert not renamed and len(written) == len(received) and all(n.endswith(".csv") for n in written), written
    assert not S.parts_dir(out).exists(), "a worker's file or a part left behind"
    check_rows(df, ref, "returned")
    check_rows(S.read_table(out), ref, "on disk")
    assert len(df) == len(ref)
    # No table: the rows stay in memory, and nothing is written anywhere.
    received.clear()
    assert len(rtsched.sweep(spec, workers=2, progress=False)) == len(ref) and set(received) == {"Table"}


@pytest.mark.parametrize("points", [[1.2, 2.0], [2.0, 1.2]])
def test_a_fresh_table_is_encoded_while_the_sweep_runs(tmp_path, monkeypatch, points):
    # A sweep into a new Parquet table encodes it as its batches come back, in the order the
    # batches were cut, in row groups of at least ROW_GROUP rows; the file is the table, in key
    # order, equal to the reference. Points listed out of key order cut batches
    # out of key order: the stream gives up and the table is written at the end, as before.
    T = importlib.import_module("rtsched.sweep.table")
    pq = importlib.import_module("pyarrow.parquet")
    monkeypatch.setattr(T._Stream, "ROW_GROUP", 20)
    spec = spec_of(seeds=12, duration="300ms", utilisation={"points": points})
    ref, _ = reference_rows(spec)
    finished = []
    finish = T._Stream.finish
    monkeypatch.setattr(T._Stream, "finish", lambda self, rows: (finished.append(finish(self, rows)), finished[-1])[1])
    for executor in (None, importlib.import_module("rtsched.sweep.runner").InProcess()):
        out = tmp_path / f"r-{len(finished)}.parquet"
        df = rtsched.sweep(spec, output=out, executor=executor, workers=2, progress=False, batch_rows=30)
        assert finished[-1] is (points == sorted(points)), finished
        on_disk = pq.read_table(out)
        assert on_disk["key"].to_pylist() == sorted(ref["key"]), "the table is not in key order"
        if finished[-1]:
            meta = pq.ParquetFile(out).metadata
            groups = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
            assert len(groups) > 1 and all(g >= 20 for g in groups[:-1]), groups
        check_rows(S.read_table(out), ref, "on disk")
        check_rows(df, ref, "returned")
        assert len(df) == len(ref) and not S.parts_dir(out).exists()
        assert not list(tmp_path.glob(".rtsched-*")), "a temporary file left behind"
    # Batches that come faster than they are encoded wait: never more than QUEUED in line.
    monkeypatch.setattr(T._Stream, "QUEUED", 3)
    encode, most = T._Stream._encode, []

    def slow(self, t, last):
        time.sleep(0.01)
        most.append(sum(not f.done() for f in self.queued))
        return encode(self, t, last)

    monkeypatch.setattr(T._Stream, "_encode", slow)
    spans = S.keys.Spans(S.parse_spec(spec))
    stream = T._Stream(tmp_path / "slow.parquet")
    batches = [S.run_batch(spans.take(3))[0] for _ in range(12)]
    for i, b in enumerate(batches):
        stream.add(i, b)
    rows = sum(len(b) for b in batches)
    assert stream.finish(rows) and max(most) <= 4, most
    assert pq.read_table(tmp_path / "slow.parquet").num_rows == rows
    # A sweep killed while its table streams leaves the temporary file with the parts, and
    # the next consolidation removes it.
    out = tmp_path / "killed.parquet"
    stream = T._Stream(out)
    stream.add(0, S.run_batch(S.keys.Spans(S.parse_spec(spec)).take(5))[0])
    assert [p.parent for p in tmp_path.rglob(".rtsched-*")] == [S.parts_dir(out)]
    S.consolidate(out)
    assert not list(tmp_path.rglob(".rtsched-*")) and not S.parts_dir(out).exists()
    stream.abandon()


def test_dask_workers_killed_at_random_points_lose_and_duplicate_nothing(tmp_path):
    distributed = pytest.importorskip("distributed")
    spec = spec_of(seeds=30, duration="40s")
    out = tmp_path / "dask.parquet"
    rng = random.Random(SEED + 1)
    kills = []  # (s from the start, rows on disk then, whether the victim had a batch)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster, distributed.Client(cluster) as client:
        # The uninterrupted sweep on the same cluster: the reference values and its duration.
        t = time.monotonic()
        ref = rtsched.sweep(spec, executor=client.get_executor(), progress=False)
        total = time.monotonic() - t
        assert len(ref) == S.parse_spec(spec).size == 180
        # Three kills (not more: Dask gives up on a batch whose worker died more than three
        # times, distributed.scheduler.allowed-failures) at moments drawn uniformly from the
        # reference's duration; the victim a worker busy with a batch when there is one. Each
        # nanny starts a new worker for its dead one (in seconds, or tens of seconds on a
        # loaded machine).
        moments = sorted(rng.uniform(0, total) for _ in range(3))
        t = time.monotonic()
        th, result, error = sweep_in_thread(spec, executor=client.get_executor(), output=out, progress=False,
                                            batch_rows=10, batch_seconds=0.5)
        for m in moments:
            th.join(max(0.0, t + m - time.monotonic()))
            if not th.is_alive():
                break
            busy = sorted(w for w, tasks in client.processing().items() if tasks)
            victim = rng.choice(busy or sorted(client.scheduler_info()["workers"]))
            on_disk = rows_on_disk(out)
            client.run(exit_now, workers=[victim], wait=False)
            kills.append((round(time.monotonic() - t, 2), on_disk, bool(busy)))
            deadline = time.monotonic() + 30
            while victim in client.scheduler_info()["workers"] and time.monotonic() < deadline:
                time.sleep(0.02)
            assert victim not in client.scheduler_info()["workers"], ("the victim did not die", SEED + 1, kills)
            # The sweep goes on with the survivor; the next kill needs a worker to kill.
            client.wait_for_workers(1, timeout=60)
        th.join(120)
        assert not th.is_alive(), ("the sweep hung after the kills", SEED + 1, kills)
        assert not error, (error, SEED + 1, kills)
    assert len(kills) >= 2, ("the sweep ended before two kills", SEED + 1, kills, total)
    df = result["df"]
    assert len(df) == len(ref)
    check_rows(df, ref, f"returned table (seed {SEED + 1}, kills {kills})")
    check_rows(S.read_table(out), ref, f"table on disk (seed {SEED + 1}, kills {kills})")
    print(f"seed {SEED + 1}: reference sweep {total:.1f} s; kills (s after start, rows on disk, victim busy): {kills}")
