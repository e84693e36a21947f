"""Sweeps under concurrency, corruption and hostile specs: local workers end with their coordinator
however it dies, one sweep at a time per table, a table that is not one (or is corrupt) is
refused and kept, specs read as strictly as task files."""

import os
import signal
import subprocess
import time

import pytest
import yaml

from conftest import RTSCHED


def children(pid):
    """Every process below `pid` now (/proc/PID/task/*/children)."""
    from rtsched._procfs import tree_threads

    return {int(p) for p, _ in tree_threads(pid)} - {pid}


def running(pid) -> bool:
    """The process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_pool_workers_exit_when_the_coordinator_is_killed(tmp_path):
    spec = {"name": "long", "seed": 1, "generator": {"name": "uunifast-discard", "params": {"n": 8, "m": 4}},
            "utilisation": {"points": [2.0, 3.0]}, "schedulers": ["gedf", "pedf:ffd"], "seeds": 5000, "duration": "10s"}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    p = subprocess.Popen([RTSCHED, "sweep", path, "-o", tmp_path / "t.parquet", "-j", "2", "--no-plots", "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    workers = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(workers) < 2:
        time.sleep(0.05)
        workers = children(p.pid)
    assert len(workers) >= 2, "the pool did not start"
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    deadline = time.monotonic() + 15
    alive = set(workers)
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = {w for w in alive if running(w)}
    try:
        assert not alive, f"workers {sorted(alive)} still alive 15 s after their coordinator was killed"
    finally:
        for w in alive:
            try:
                os.kill(w, signal.SIGKILL)
            except ProcessLookupError:
                pass


def long_spec(tmp_path):
    spec = {"name": "long", "seed": 1, "generator": {"name": "uunifast-discard", "params": {"n": 8, "m": 4}},
            "utilisation": {"points": [2.0, 3.0]}, "schedulers": ["gedf", "pedf:ffd"], "seeds": 5000, "duration": "10s"}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_a_second_sweep_into_the_same_table_is_refused_and_the_first_loses_nothing(tmp_path):
    from conftest import run_cli

    spec, table = long_spec(tmp_path), tmp_path / "t.parquet"
    p = subprocess.Popen([RTSCHED, "sweep", spec, "-o", table, "-j", "1", "--batch", "50", "--batch-seconds", "0.2",
                          "--no-plots", "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        parts = tmp_path / "t.parquet.parts"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(parts.glob("part-*")):
            time.sleep(0.05)
        before = {f.name for f in parts.glob("part-*")}
        assert before, "the first sweep wrote no part"
        r = run_cli("sweep", spec, "-o", table, "-j", "1", "--no-plots", "-q")
        assert r.returncode == 2, r.stderr
        assert f"{table}: another sweep (pid {p.pid}) is writing this table now" in r.stderr, r.stderr
        assert before <= {f.name for f in parts.glob("part-*")}, "the second run removed the first one's parts"
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def test_a_table_that_is_not_a_sweep_table_or_is_corrupt_is_refused_and_kept(tmp_path):
    from conftest import run_cli

    spec = {"name": "s", "seed": 1, "generator": {"name": "uunifast-discard", "params": {"n": 4, "m": 2}},
            "utilisation": {"points": [1.0]}, "schedulers": ["gedf"], "seeds": 2, "duration": "100ms"}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    ts = tmp_path / "ts.yaml"
    ts.write_text("platform: {cpus: 1}\nrun: {duration: 100}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n")
    jobs = tmp_path / "jobs.parquet"
    run_cli("simulate", ts, "--jobs-parquet", jobs, check=0)
    good = tmp_path / "good.parquet"
    run_cli("sweep", path, "-o", good, "--no-plots", "-q", check=0)
    truncated = tmp_path / "cut.parquet"
    truncated.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    for table, words in [(jobs, "is not a sweep table"), (truncated, "cannot be read as a sweep table")]:
        before = table.read_bytes()
        r = run_cli("sweep", path, "-o", table, "--no-plots", "-q")
        assert r.returncode == 2 and str(table) in r.stderr and words in r.stderr, r.stderr
        assert "Traceback" not in r.stderr and "internal error" not in r.stderr
        assert table.read_bytes() == before


def test_a_spec_reads_as_strictly_as_a_task_file(tmp_path):
    """An alias bomb is refused at once (it took 2 GB, then hung); a tag or a self-containing
    alias is refused by name; YAML 1.2 numbers: 1e-1 is 0.1 (PyYAML alone reads a string)."""
    from conftest import run_cli
    from rtsched import InputError
    from rtsched.sweep.spec import strict_yaml

    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)))
    t = time.monotonic()
    r = run_cli("sweep", bomb, "--no-plots", "-q")
    assert r.returncode == 2 and "its YAML aliases expand it past 100,000 values" in r.stderr, r.stderr
    assert time.monotonic() - t < 20
    assert strict_yaml("a: 1e-1\nb: 1E3\nc: '1e-1'\nd: 10\n", "s") == {"a": 0.1, "b": 1000.0, "c": "1e-1", "d": 10}
    assert strict_yaml("e: &x {p: 1}\nf: *x\n", "s") == {"e": {"p": 1}, "f": {"p": 1}}
    for text, words in [("a: !foo 1\n", "the YAML tag '!foo' is not accepted"), ("a: &a [*a]\n", "recursive structure")]:
        with pytest.raises(InputError, match=words):
            strict_yaml(text, "s.yaml")
    bom = tmp_path / "bom.yaml"
    bom.write_bytes(b"\xef\xbb\xbf" + yaml.safe_dump({"name": "s", "seed": 1, "generator": {"name": "uunifast-discard", "params": {"n": 4, "m": 2}},
                                                       "utilisation": {"points": [1.0]}, "schedulers": ["gedf"], "seeds": 1,
                                                       "duration": "10ms"}).encode())
    from rtsched.sweep import load_spec

    assert load_spec(bom).name == "s"


def test_a_generator_parameter_called_name_or_seed_is_refused_naming_it(tmp_path):
    """Found by the hypothesis test: params {name: …} collided with generate()'s own argument
    (a TypeError, exit 1)."""
    from conftest import run_cli

    for key in ("name", "seed"):
        spec = {"name": "s", "seed": 1, "generator": {"name": "uunifast", "params": {"n": 4, "m": 2, key: 3}},
                "utilisation": {"points": [1.0]}, "schedulers": ["gedf"], "seeds": 1, "duration": "10ms"}
        path = tmp_path / f"{key}.yaml"
        path.write_text(yaml.safe_dump(spec))
        r = run_cli("sweep", path, "-o", tmp_path / f"{key}.parquet", "--no-plots", "-q")
        assert r.returncode == 2 and "Traceback" not in r.stderr and key in r.stderr, r.stderr


def test_the_table_lock_file_goes_when_the_sweep_ends_also_on_ctrl_c(tmp_path):
    from rtsched._core import InputError

    from rtsched.sweep.runner import table_lock

    out = tmp_path / "t.parquet"
    lock = tmp_path / "t.parquet.lock"
    with table_lock(out):
        assert lock.exists()
        with pytest.raises(InputError, match="another sweep"):  # one sweep at a time, still
            with table_lock(out):
                pass
    assert not lock.exists()
    with pytest.raises(KeyboardInterrupt):
        with table_lock(out):
            raise KeyboardInterrupt
    assert not lock.exists()
    # A sweep that opened the file before it was removed, and locks it after, locks a fresh one.
    import fcntl

    with table_lock(out):
        stale = os.open(lock, os.O_RDWR)
    fcntl.flock(stale, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the unlinked inode: nobody else sees it
    with table_lock(out):
        assert lock.exists() and not os.path.samestat(os.fstat(stale), os.stat(lock))
    os.close(stale)
