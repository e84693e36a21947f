"""Outputs never replace what they must not: an input of the run, a device, a directory, what a
symbolic link leads to (the link is followed and stays a link). `-`, character devices and FIFOs
are written through; everything else that is not a regular file is refused with exit 2 naming
the option and the path (docs/hardening.md "Outputs")."""

import json
import os
import stat
import threading

import pytest

from conftest import run_cli

SET = "platform: {cpus: 2}\nrun: {duration: 100}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n  - {name: b, period: 20, wcet: 5}\n"
OPTIONS = ["--json", "--jobs-csv", "--jobs-parquet", "--trace", "--gantt"]


@pytest.fixture
def ts(tmp_path):
    p = tmp_path / "ts.yaml"
    p.write_text(SET)
    return p


def untouched(p):
    assert p.read_text() == SET and not os.path.islink(p)


@pytest.mark.parametrize("opt", OPTIONS)
def test_an_output_that_is_the_input_is_refused(ts, opt):
    r = run_cli("simulate", ts, opt, ts)
    assert r.returncode == 2, r.stderr
    assert f"{opt} {ts}: is {ts}, an input of this run: refusing to replace it" in r.stderr, r.stderr
    untouched(ts)


@pytest.mark.parametrize("opt", ["--json", "--jobs-parquet"])
def test_a_link_to_the_input_is_refused_too(ts, tmp_path, opt):
    link = tmp_path / "out.json"
    link.symlink_to(ts)
    r = run_cli("simulate", ts, opt, link)
    assert r.returncode == 2 and "an input of this run" in r.stderr, r.stderr
    untouched(ts)
    assert os.path.islink(link)


def test_partition_does_not_write_over_its_input(ts):
    r = run_cli("partition", ts, "--heuristic", "ffd", "-o", ts)
    assert r.returncode == 2 and "an input of this run" in r.stderr and "Traceback" not in r.stderr, r.stderr
    untouched(ts)


@pytest.mark.parametrize("opt", ["--json", "--jobs-csv", "--trace"])
def test_a_link_is_followed_and_stays_a_link(ts, tmp_path, opt):
    target = tmp_path / "real.out"
    target.write_text("old")
    link = tmp_path / "link.out"
    link.symlink_to(target)
    r = run_cli("simulate", ts, opt, link, check=0)
    assert os.path.islink(link) and os.readlink(link) == str(target)
    assert target.read_text() != "old" and len(target.read_text()) > 10, r.stdout


def test_a_link_to_nothing_is_refused_and_nothing_is_made(ts, tmp_path):
    link = tmp_path / "dangling.json"
    link.symlink_to(tmp_path / "nowhere" / "x.json")
    r = run_cli("simulate", ts, "--json", link)
    assert r.returncode == 2 and "leads to no file" in r.stderr, r.stderr
    assert os.path.islink(link) and not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("opt", ["--json", "--gantt"])
def test_a_directory_is_refused(ts, tmp_path, opt):
    d = tmp_path / "d"
    d.mkdir()
    r = run_cli("simulate", ts, opt, d)
    assert r.returncode == 2 and "is a directory" in r.stderr, r.stderr
    assert d.is_dir() and not list(d.iterdir())


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
@pytest.mark.parametrize("opt", ["--json", "--jobs-parquet", "--gantt"])
def test_a_character_device_is_written_through_never_replaced(ts, tmp_path, opt):
    """A private null device (1, 3), so a regression replaces a node of the test's own, not
    the machine's /dev/null."""
    node = tmp_path / "null"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    r = run_cli("simulate", ts, opt, node)
    assert r.returncode == 0, r.stderr
    st = os.lstat(node)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null", "ts.yaml"]  # no temporary file left


def test_a_fifo_is_written_through_to_its_reader(ts, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = {}
    reader = threading.Thread(target=lambda: got.setdefault("text", fifo.read_text()), daemon=True)
    reader.start()
    r = run_cli("simulate", ts, "--json", fifo)
    reader.join(30)
    assert r.returncode == 0, r.stderr
    assert json.loads(got["text"])["runs"][0]["scheduler"] == "gedf"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_dash_writes_the_output_to_standard_output_and_the_table_to_stderr(ts):
    r = run_cli("simulate", ts, "--json", "-")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["runs"][0]["scheduler"] == "gedf"
    assert "gedf" in r.stderr and "DSR" in r.stderr.upper()


def test_two_outputs_to_standard_output_are_refused(ts):
    r = run_cli("simulate", ts, "--json", "-", "--jobs-csv", "-")
    assert r.returncode == 2 and "given to both" in r.stderr, r.stderr


def test_the_api_writers_refuse_a_directory(tmp_path):
    import rtsched

    res = rtsched.simulate(rtsched.parse_taskset(SET, "yaml", "t.yaml"), "gedf")
    with pytest.raises(rtsched.InputError, match="is a directory"):
        res.to_json(tmp_path)
    assert not list(tmp_path.iterdir())


# --- inputs: read only when they are regular files (or FIFOs) under a size limit -------------


@pytest.mark.parametrize("cmd", [["validate"], ["simulate"], ["sweep"]])
def test_a_device_or_a_directory_as_input_is_refused_at_once(tmp_path, cmd):
    import time

    for path, words in [("/dev/zero", "is a character device"), (tmp_path, "is a directory")]:
        t = time.monotonic()
        r = run_cli(*cmd, path)
        assert r.returncode == 2 and str(path) in r.stderr and words in r.stderr, r.stderr
        assert "Traceback" not in r.stderr and time.monotonic() - t < 20


def test_a_task_file_over_the_limit_is_refused_by_its_size(tmp_path):
    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:
        f.truncate((32 << 20) + 1)  # sparse
    r = run_cli("validate", big)
    assert r.returncode == 2 and "more than a task-set file's limit of 33554432 bytes" in r.stderr, r.stderr


# --- messages: exit 2 naming the option, never an internal error --------------------------


@pytest.mark.parametrize("args, words", [
    (["simulate", "{ts}", "--seed", "99999999999999999999999"], "argument --seed: must be an integer from 0 to 2^64 - 1"),
    (["gen", "uunifast-discard", "n=4", "m=2", "U=1", "--seed", "-1"], "argument --seed: must be an integer from 0 to 2^64 - 1"),
    (["simulate", "{ts}", "--gantt", "{tmp}/out.txt"], "--gantt {tmp}/out.txt: the figure's format comes from its extension"),
    (["simulate", "{ts}", "--duration", "-5"], "--duration -5: must not be negative"),
])
def test_bad_options_exit_2_naming_the_option(ts, tmp_path, args, words):
    r = run_cli(*[a.format(ts=ts, tmp=tmp_path) for a in args])
    assert r.returncode == 2 and words.format(tmp=tmp_path) in r.stderr, r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out.txt").exists()


def test_the_api_refuses_an_oversize_seed_as_bad_input():
    import rtsched

    with pytest.raises(rtsched.InputError, match="seed: expected an integer from 0 to 2"):
        rtsched.simulate(rtsched.parse_taskset(SET, "yaml", "t.yaml"), "gedf", seed=2**70)


def test_control_characters_in_a_message_are_escaped_and_a_long_one_is_cut(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("platform: {cpus: 1}\ntasks:\n  - {name: \"a\\e[2Jb\", period: 10, wcet: " + "9" * 5000 + "x}\n")
    r = run_cli("validate", bad)
    assert r.returncode == 2, r.stderr
    assert "\x1b" not in r.stderr and len(r.stderr) < 2300, r.stderr[:300]
