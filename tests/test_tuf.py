"""Time-utility functions as a user meets them: AUR in the tables, the JSON and the sweep rows;
bad TUFs refused (exit 2, naming file, task and field); the warnings (TUFs under a scheduler that
ignores them, nested sections that can deadlock); a deadlock as a clear error; --measure-policy."""

import json
import re
import textwrap

import pytest
import yaml

from conftest import EXAMPLES, run_cli


def write(tmp_path, text, name="ts.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def row(stdout, first):
    """The cells of the first table row whose first cell is `first`, keyed by its table's
    header (split on two or more spaces: the tables pad columns by two)."""
    lines = stdout.splitlines()
    for i in range(len(lines) - 1):
        if lines[i + 1].startswith("---"):
            header = re.split(r"\s{2,}", lines[i].strip())
            for line in lines[i + 2:]:
                if not line.strip() or line.startswith(("wrote", "warning")):
                    break
                if line.split()[0] == first:
                    return dict(zip(header, line.split()))
    raise AssertionError(f"no row {first!r}:\n{stdout}")


# One CPU, both released at 0. EDF runs b (deadline 5) in [0, 3), then a in [3, 5).
# b: piecewise, 6 until 4 ms, completes at 3 ms -> 6.  a: linear 10 -> 0 at 10 ms, completes
# at 5 ms -> 10 * (1 - 5/10) = 5. Accrued 11 of a possible 16: AUR 0.6875, while DSR = 1.
HAND = """\
    platform: {cpus: 1}
    run: {duration: 10}
    tasks:
      - {name: a, period: 10, wcet: 2, tuf: {shape: linear, utility: 10, termination: 10ms}}
      - {name: b, period: 10, wcet: 3, deadline: 5, tuf: {shape: piecewise, points: [[0, 6], [4ms, 6], [8ms, 0]]}}
    """


def test_hand_worked_aur_in_table_and_json(tmp_path):
    p = write(tmp_path, HAND)
    r = run_cli("simulate", p, "-s", "gedf", "--per-task", "--json", tmp_path / "r.json", "--json-jobs", check=0)
    total = row(r.stdout, "gedf")
    assert (total["DSR"], total["AUR"]) == ("1.0000", "0.6875"), r.stdout
    assert row(r.stdout, "a")["AUR"] == "0.5000" and row(r.stdout, "a")["utility"] == "5/10", r.stdout
    assert row(r.stdout, "b")["AUR"] == "1.0000" and row(r.stdout, "b")["utility"] == "6/6", r.stdout
    run = json.loads((tmp_path / "r.json").read_text())["runs"][0]
    jobs = {j["task"]: j for j in run["jobs"]}
    assert (jobs["a"]["finish_ns"], jobs["a"]["utility"], jobs["a"]["max_utility"]) == (5_000_000, 5.0, 10.0)
    assert (jobs["b"]["finish_ns"], jobs["b"]["utility"], jobs["b"]["max_utility"]) == (3_000_000, 6.0, 6.0)
    assert (run["total"]["accrued_utility"], run["total"]["possible_utility"], run["total"]["aur"]) == (11.0, 16.0, 0.6875)


def test_aur_is_accrued_over_possible_from_the_jobs(tmp_path):
    out = tmp_path / "r.json"
    r = run_cli("simulate", EXAMPLES / "tuf-overload.yaml", "-s", "gedf", "gnpedf", "gfifo", "--json", out, "--json-jobs", check=0)
    runs = json.loads(out.read_text())["runs"]
    assert all(run["schema"] == "rtsched.results/4" for run in runs)
    for run in runs:
        got = sum(j["utility"] for j in run["jobs"])
        could = sum(j["max_utility"] for j in run["jobs"])
        t = run["total"]
        assert t["accrued_utility"] == pytest.approx(got) and t["possible_utility"] == pytest.approx(could)
        assert t["aur"] == pytest.approx(got / could)
        assert row(r.stdout, run["scheduler"])["AUR"] == f"{got / could:.4f}", r.stdout
        for j in run["jobs"]:
            assert 0 <= j["utility"] <= j["max_utility"]
            if j["aborted"]:
                assert j["utility"] == 0 and j["aborted_at_ns"] is not None, j
        # Overloaded, aborting at the deadline: some jobs go, and the TUFs that fall before the
        # deadline make the AUR lower than the DSR under these deadline-driven schedulers.
        assert t["aborted"] > 0 and t["aur"] < t["dsr"], t


@pytest.mark.parametrize("example", ["dhall.yaml", "overload.json", "quad-mixed.yaml"])
def test_without_tufs_aur_is_the_dsr(tmp_path, example):
    out = tmp_path / "r.json"
    r = run_cli("simulate", EXAMPLES / example, "-s", "gedf", "pedf", "--per-task", "--json", out)
    if r.returncode:  # a file without cpu fields: gedf alone
        r = run_cli("simulate", EXAMPLES / example, "-s", "gedf", "--per-task", "--json", out, check=0)
    assert "warning" not in r.stderr, r.stderr
    for run in json.loads(out.read_text())["runs"]:
        t = run["total"]
        assert t["possible_utility"] == t["jobs"] and t["accrued_utility"] == t["met"]
        assert t["aur"] == pytest.approx(t["dsr"])
        assert row(r.stdout, run["scheduler"])["AUR"] == row(r.stdout, run["scheduler"])["DSR"]
        for task in run["tasks"]:
            assert task["aur"] == pytest.approx(task["dsr"]), task


BAD = "platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n  - {name: b, period: 10, wcet: 2, tuf: %s}\n"


@pytest.mark.parametrize("tuf, field, words", [
    ("-3", "'tuf'", ">= 0"),
    ("{shape: linear, utility: -1}", "'tuf.utility'", ">= 0"),
    ("{shape: linear, utility: 8, termination: 0}", "'tuf.termination'", "after"),
    ("{shape: step, termination: -2ms}", "'tuf.termination'", ""),
    ("{shape: piecewise, points: [[4ms, 3], [2ms, 1]]}", "'tuf.points[1]'", "out of order"),
    ("{shape: piecewise, points: [[0, 3], [0, 1]]}", "'tuf.points[1]'", "out of order"),
    ("{shape: cubic}", "'tuf.shape'", "unknown shape 'cubic'"),
    ("{shape: step, points: [[0, 1]]}", "'tuf.points'", ""),
])
def test_bad_tuf_exits_2_naming_file_task_and_field(tmp_path, tuf, field, words):
    p = write(tmp_path, BAD % tuf, "bad.yaml")
    for cmd in (["validate", p], ["simulate", p]):
        r = run_cli(*cmd)
        assert r.returncode == 2, (cmd, r.stdout, r.stderr)
        err = r.stderr
        assert "Traceback" not in err and "bad.yaml" in err and "task 'b'" in err and field in err and words in err, err


def _registered():
    r = run_cli("schedulers", check=0)
    return {line.split()[0] for line in r.stdout.splitlines() if line.strip() and not line.startswith(("-", " "))}


def test_non_monotone_tuf_under_a_utility_accrual_scheduler(tmp_path):
    if "dasa" not in _registered():
        pytest.skip("no utility-accrual scheduler (dasa) registered in this build")
    # c's utility rises from 1 to 3: DASA's potential utility density assumes non-increasing TUFs.
    p = write(tmp_path, """\
        platform: {cpus: 1}
        run: {duration: 40}
        tasks:
          - {name: a, period: 10, wcet: 2, tuf: 4}
          - {name: c, period: 20, wcet: 3, tuf: {shape: piecewise, points: [[0, 1], [5ms, 3], [15ms, 0]]}}
        """)
    r = run_cli("simulate", p, "-s", "dasa")
    assert "Traceback" not in r.stderr
    if r.returncode == 2:  # refused: the message names the task and its TUF
        assert "task 'c'" in r.stderr and "tuf" in r.stderr.lower(), r.stderr
    else:  # accepted with a warning naming the task
        assert r.returncode == 0 and "warning" in r.stderr and "'c'" in r.stderr, r.stderr


def test_tufs_under_a_scheduler_that_ignores_them_warn_once(tmp_path):
    p = write(tmp_path, HAND)
    r = run_cli("simulate", p, "-s", "gedf", "gfifo", check=0)
    # (Besides the set's own warning that its 10 ms window counts one job of each task.)
    warnings = [line for line in r.stderr.splitlines() if line.startswith("warning:") and "counted window" not in line]
    assert len(warnings) == 1, r.stderr
    w = warnings[0]
    assert f"task set {p}" in w and "time-utility functions" in w and "'gedf', 'gfifo' ignore them" in w, w
    assert "AUR is still measured" in w
    assert row(r.stdout, "gedf")["AUR"] == "0.6875", "a warning does not change the run"
    r = run_cli("simulate", p, "-s", "gedf", check=0)
    assert "scheduler 'gedf' ignores them" in r.stderr, r.stderr


DEADLOCK = """\
    platform: {cpus: 2}
    run: {duration: 10}
    tasks:
      - name: a
        period: 10
        wcet: 4
        sections:
          - {resource: x, start: 0, length: 3}
          - {resource: y, start: 1, length: 1}
      - name: b
        period: 10
        wcet: 4
        sections:
          - {resource: y, start: 0, length: 3}
          - {resource: x, start: 1, length: 1}
    """


def test_deadlock_under_gedf_is_a_clear_error(tmp_path):
    # a takes x and b takes y at 0; at 1 ms a requests y and b requests x: a cycle.
    p = write(tmp_path, DEADLOCK, "dl.yaml")
    r = run_cli("simulate", p, "-s", "gedf", "--json", tmp_path / "r.json")
    assert r.returncode == 2, (r.stdout, r.stderr)
    err = r.stderr
    assert "Traceback" not in err and "internal error" not in err, err
    warning, error = (next(line for line in err.splitlines() if line.startswith(k)) for k in ("warning: task set", "rtsched: error:"))
    assert "can deadlock" in warning and "scheduler 'gedf' does not resolve deadlocks" in warning, warning
    assert "the run stops with an error" in warning
    assert "dl.yaml" in error and "deadlock" in error, error
    for name in ("a#0", "b#0", "'x'", "'y'"):
        assert name in error, (name, error)
    assert not (tmp_path / "r.json").exists(), "nothing written for a run that failed"


def test_measure_policy_prints_ns_per_decision(tmp_path):
    out = tmp_path / "r.json"
    r = run_cli("simulate", EXAMPLES / "dhall.yaml", "-s", "gedf", "--measure-policy", "--json", out, check=0)
    ns = row(r.stdout, "gedf")["policy ns/decision"]
    assert int(ns) > 0, r.stdout
    m = json.loads(out.read_text())["runs"][0]["measurements"]
    assert m["policy_ns_per_invocation"] > 0 and m["policy_ns_max"] >= m["policy_ns_per_invocation"]
    assert m["policy_ns_total"] >= m["policy_ns_max"]
    r = run_cli("simulate", EXAMPLES / "dhall.yaml", "-s", "gedf", check=0)
    assert "policy ns" not in r.stdout, "only when asked (timings are not deterministic)"
    assert "--measure-policy" in run_cli("simulate", "--help", check=0).stdout


def test_sweep_rows_have_utility_columns(tmp_path):
    # chronos2011 sets carry step TUFs with random utilities (ChronOS §6.2).
    spec = {"name": "u", "seed": 3, "generator": {"name": "chronos2011"}, "utilisation": {"points": [2.0, 3.5]},
            "schedulers": ["gedf", "gfifo"], "seeds": 2, "duration": "300ms", "output": "u.csv"}
    path = tmp_path / "u.yaml"
    path.write_text(yaml.safe_dump(spec))
    r = run_cli("sweep", path, "-q", "--no-plots", "-j", "1", check=0)
    # gedf and gfifo ignore the TUFs: said once for the whole sweep, naming both.
    assert r.stderr.count("time-utility functions") == 1 and "'gedf'" in r.stderr and "'gfifo'" in r.stderr, r.stderr
    import importlib

    df = importlib.import_module("rtsched.sweep").read_table(tmp_path / "u.csv")
    assert len(df) == 2 * 2 * 2 and (df.status == "ok").all()
    for c in ("aur", "accrued_utility", "possible_utility", "aborted", "deadlocks"):
        assert c in df.columns and df[c].notna().all(), c
    assert (df.aur == df.accrued_utility / df.possible_utility).all()
    assert (df.deadlocks == 0).all() and (df.aur <= 1).all()
    # Each job is worth its task's utility: the possible utility is not the job count.
    assert (df.possible_utility != df.jobs).any()
