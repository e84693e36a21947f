"""Per-job outputs: --jobs-parquet, --json / --json-jobs and Result.jobs agree with the CSV."""

import csv
import json

import pandas as pd
import pyarrow.parquet as pq
import pytest

import rtsched
from conftest import EXAMPLES, run_cli
from rtsched import result as result_mod

# Runs with aborts (aborted_at_ns), utilities, unfinished jobs, blocking and parallel jobs.
CASES = [
    ("tuf-overload.yaml", ["-s", "gedf", "gnpedf", "--on-miss", "abort"]),
    ("fork-join.yaml", ["-s", "gedf", "paws"]),
    ("quad-mixed.yaml", ["-s", "gedf", "pedf", "--duration", "300ms"]),
]


def csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def spelled(v):
    """A Parquet value (as pyarrow gives it) in the CSV's spelling."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, list):
        return ";".join(map(str, v))
    return str(v)


@pytest.mark.parametrize("example,args", CASES, ids=[c[0] for c in CASES])
def test_parquet_and_json_jobs_equal_the_csv(tmp_path, example, args):
    run_cli("simulate", EXAMPLES / example, *args, "--jobs-csv", tmp_path / "j.csv", "--jobs-parquet", tmp_path / "j.parquet",
            "--json", tmp_path / "r.json", check=0)
    run_cli("simulate", EXAMPLES / example, *args, "--json", tmp_path / "rj.json", "--json-jobs", check=0)
    rows = csv_rows(tmp_path / "j.csv")
    assert len(rows) > 10

    table = pq.read_table(tmp_path / "j.parquet")
    assert table.column_names == list(rows[0])
    got = [{k: spelled(v) for k, v in r.items()} for r in table.to_pylist()]
    assert len(got) == len(rows)
    for i, (g, want) in enumerate(zip(got, rows)):
        assert g == want, f"row {i}"
    # Typed, not strings: what a reader of the file gets without rtsched.
    types = {f.name: str(f.type) for f in table.schema}
    assert types["task"] == "string" and types["release_ns"] == "int64" and types["missed"] == "bool"
    assert types["cpus"].startswith("list<") and types["utility"] == "double"

    assert all("jobs" not in run for run in json.loads((tmp_path / "r.json").read_text())["runs"])
    doc = json.loads((tmp_path / "rj.json").read_text())
    jobs = [(run["scheduler"], j) for run in doc["runs"] for j in run["jobs"]]
    assert len(jobs) == len(rows)
    for (sched, j), want in zip(jobs, rows):
        assert sched == want["scheduler"]
        for k in ("task", "job", "release_ns", "deadline_ns", "demand_ns", "start_ns", "finish_ns", "preemptions", "migrations",
                  "context_switches", "blocked_ns", "missed", "aborted", "aborted_at_ns", "utility", "max_utility", "exec_ns",
                  "overhead_ns", "stall_ns"):
            assert spelled(j[k]) == want[k], (k, j, want)
        assert spelled(j["cpus"]) == want["cpus"]
        assert [spelled(x) for x in j["misses"]] == [want["misses_l1"], want["misses_l2"], want["misses_llc"]]
        assert spelled(j["hw"]) == want["hw_instructions"] == ""
    # Apart from the per-job records, --json-jobs writes the same documents as --json.
    plain = json.loads((tmp_path / "r.json").read_text())
    for run in doc["runs"]:
        del run["jobs"]
    assert doc == plain


def test_result_jobs_are_the_same_from_lists_parquet_file_and_parquet_bytes(tmp_path, monkeypatch):
    ts = rtsched.load_taskset(EXAMPLES / "tuf-overload.yaml")
    r = rtsched.simulate(ts, "gedf", on_miss="abort")
    from_lists = r.jobs
    assert list(from_lists.columns) == list(pd.read_csv(_csv(tmp_path, r)).columns)[1:]

    r_file = rtsched.simulate(ts, "gedf", on_miss="abort")
    r_file.write_jobs_parquet(tmp_path / "one.parquet")
    pd.testing.assert_frame_equal(r_file.jobs, from_lists)

    monkeypatch.setattr(result_mod, "PARQUET_JOBS_ABOVE", 0)
    called = []
    real = rtsched._core.jobs_parquet_bytes
    monkeypatch.setattr(rtsched._core, "jobs_parquet_bytes", lambda raw: called.append(1) or real(raw))
    pd.testing.assert_frame_equal(rtsched.simulate(ts, "gedf", on_miss="abort").jobs, from_lists)
    assert called, "a big run reads its jobs through Parquet"


def _csv(tmp_path, r):
    p = tmp_path / "one.csv"
    rtsched._core.write_jobs_csv([r.raw], str(p))
    return p


def test_cli_results_read_their_jobs_from_the_parquet_file(tmp_path):
    from rtsched.commands.common import write_outputs

    ts = rtsched.load_taskset(EXAMPLES / "fork-join.yaml")
    runs = [rtsched.simulate(ts, s) for s in ("gedf", "paws")]
    want = [r.jobs for r in runs]
    runs = [rtsched.simulate(ts, s) for s in ("gedf", "paws")]
    path = tmp_path / "j.parquet"
    write_outputs(runs, parquet_path=str(path), out=open("/dev/null", "w"))
    assert [r._jobs_file for r in runs] == [(str(path), 0), (str(path), 1)]
    for r, w in zip(runs, want):
        pd.testing.assert_frame_equal(r.jobs, w)
    pd.testing.assert_frame_equal(rtsched.read_jobs(path, "paws"), want[1])
    both = rtsched.read_jobs(path)
    assert list(both.scheduler.unique()) == ["gedf", "paws"] and len(both) == len(want[0]) + len(want[1])
    with pytest.raises(rtsched.InputError, match="no run 2"):
        rtsched.read_jobs(path, 2)


@pytest.mark.parametrize("args,needle", [
    (["--json", "{D}/r.json", "--jobs-parquet", "/proc/nope/j.parquet"], "--jobs-parquet /proc/nope/j.parquet: cannot write"),
    (["--jobs-csv", "{D}/j.csv", "--json-jobs"], "--json-jobs needs --json"),
    (["--json", "{D}/same", "--jobs-parquet", "{D}/./same"], "given to both --json and --jobs-parquet"),
    (["--json", "{D}/r.json", "--jobs-parquet", "{D}"], "is a directory"),
])
def test_bad_output_paths_exit_2_before_writing_anything(tmp_path, args, needle):
    r = run_cli("simulate", EXAMPLES / "dhall.yaml", *[a.replace("{D}", str(tmp_path)) for a in args])
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert needle in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == [], "nothing written, not even the good files"


@pytest.mark.parametrize("example,args", CASES, ids=[c[0] for c in CASES])
def test_streamed_runs_write_what_held_runs_write(tmp_path, example, args):
    # --jobs-parquet and --jobs-csv: each record streams into both files as its job ends, the
    # summaries are built as they go, and nothing is held. With --trace beside them every
    # record is held and the files are written after the runs. Same files, byte for byte; same
    # documents. (Until 2026-11-26 --jobs-csv held every record: 2.4 GB under the job limit.)
    run_cli("simulate", EXAMPLES / example, *args, "--jobs-parquet", tmp_path / "s.parquet", "--jobs-csv", tmp_path / "s.csv",
            "--json", tmp_path / "s.json", check=0)
    run_cli("simulate", EXAMPLES / example, *args, "--jobs-csv", tmp_path / "h.csv", "--jobs-parquet", tmp_path / "h.parquet",
            "--json", tmp_path / "h.json", "--trace", tmp_path / "h.trace.json", check=0)
    assert (tmp_path / "s.parquet").read_bytes() == (tmp_path / "h.parquet").read_bytes()
    assert (tmp_path / "s.csv").read_bytes() == (tmp_path / "h.csv").read_bytes()
    s, h = json.loads((tmp_path / "s.json").read_text()), json.loads((tmp_path / "h.json").read_text())
    assert s == h
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.csv", "h.json", "h.parquet", "h.trace.json", "s.csv", "s.json", "s.parquet"]


def test_a_run_that_keeps_no_jobs_has_the_same_summaries_and_says_why_it_has_no_jobs(tmp_path):
    ts = rtsched.load_taskset(EXAMPLES / "tuf-overload.yaml")
    held = rtsched.simulate(ts, "gedf", on_miss="abort")
    lean = rtsched.simulate(ts, "gedf", on_miss="abort", keep_jobs=False)
    assert lean.document == held.document
    assert lean.raw.job_count == held.raw.job_count == len(held.jobs)
    with pytest.raises(ValueError, match="did not keep its per-job records"):
        _ = lean.jobs
    with pytest.raises(ValueError, match="did not keep"):
        lean.to_json(jobs=True)
    streamed = rtsched.simulate(ts, "gedf", on_miss="abort", jobs_parquet=tmp_path / "s.parquet")
    assert streamed.document == held.document
    pd.testing.assert_frame_equal(streamed.jobs, held.jobs)


def test_a_parquet_file_given_up_leaves_nothing_behind(tmp_path):
    (tmp_path / "old.parquet").write_bytes(b"old")
    f = rtsched._core.JobsParquetFile(str(tmp_path / "old.parquet"))
    f.discard()
    with pytest.raises(ValueError, match="already closed"):
        f.close()
    assert [p.name for p in tmp_path.iterdir()] == ["old.parquet"]
    assert (tmp_path / "old.parquet").read_bytes() == b"old"
