"""The `rtsched` command as a user runs it: outputs, determinism, and clear errors (exit 2)."""

import json
import textwrap

import pytest

from conftest import EXAMPLES, run_cli

GOOD = "platform: {cpus: 2}\nrun: {duration: 50, seed: 4}\ntasks:\n  - {name: a, period: 10, wcet: 3, cpu: 0}\n  - {name: b, period: 7, wcet: 2, cpu: 1}\n  - {name: c, period: 20, wcet: 9, cpu: 1}\n"


def write(tmp_path, text, name="ts.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_simulate_prints_comparison_table(tmp_path):
    p = write(tmp_path, GOOD)
    r = run_cli("simulate", p, "-s", "gedf", "pedf", "gfp:rm", check=0)
    lines = r.stdout.splitlines()
    assert any(line.startswith("scheduler") and "DSR" in line for line in lines)
    for s in ("gedf", "pedf", "gfp:rm"):
        assert any(line.startswith(s + " ") for line in lines), r.stdout


def test_simulate_table_shows_inversions_and_steals(tmp_path):
    # Partitioned EDF: for [0, 8) ms c (deadline 25) waits on CPU 1 behind b (15) while CPU 0
    # runs a (30): one inversion of 8 ms. Global EDF runs a and b, then c: none.
    p = write(tmp_path, """\
        platform: {cpus: 2}
        run: {duration: 50}
        tasks:
          - {name: a, period: 100, wcet: 10, deadline: 30, cpu: 0}
          - {name: b, period: 100, wcet: 8, deadline: 15, cpu: 1}
          - {name: c, period: 100, wcet: 4, deadline: 25, cpu: 1}
        """)
    r = run_cli("simulate", p, "-s", "gedf", "pedf", check=0)
    lines = r.stdout.splitlines()
    header = next(line for line in lines if line.startswith("scheduler"))
    assert header.split()[-4:] == ["prio", "inv", "inv", "ms"] and "steals" not in header, r.stdout
    assert next(line for line in lines if line.startswith("pedf ")).split()[-2:] == ["1", "8.000"], r.stdout
    assert next(line for line in lines if line.startswith("gedf ")).split()[-2:] == ["0", "0.000"], r.stdout
    # A work-stealing policy adds its steal columns.
    p = write(tmp_path, """\
        platform: {cpus: 2}
        run: {duration: 50}
        tasks:
          - {name: l, period: 100, wcet: 10, deadline: 80}
          - {name: p, period: 100, deadline: 30, regions: [1, [3, 3, 3]]}
        """, "paws.yaml")
    r = run_cli("simulate", p, "-s", "gedf", "paws", check=0)
    header = next(line for line in r.stdout.splitlines() if line.startswith("scheduler"))
    assert "steals" in header and "steal tries" in header and "failed" in header, r.stdout


def test_all_schedulers_and_outputs(tmp_path):
    p = write(tmp_path, GOOD)
    out = tmp_path / "o"
    r = run_cli("simulate", p, "-s", "all", "--json", out / "r.json", "--jobs-csv", out / "j.csv",
                "--trace", out / "t.json", "--gantt", out / "g.png", check=0)
    doc = json.loads((out / "r.json").read_text())
    names = [run["scheduler"] for run in doc["runs"]]
    assert names == ["gedf", "gnpedf", "pedf", "gfp:rm", "pfp:rm", "gedf-dist:heap", "gfp-dist:rm,push=cpupri", "gfifo", "paws",
                     "federated", "gedf-seq", "ggua:model=stw,mapper=3pass", "nggua:model=stw,mapper=3pass",
                     "ghvdf:model=stw,mapper=3pass", "dasa", "pdasa", "lbesa", "cfs:balancer=linux", "linux"], r.stdout
    run = doc["runs"][0]
    assert run["schema"] == "rtsched.results/4" and run["substrate"] == "sim"
    assert {"total", "tasks", "counters"} <= set(run) and "jobs" not in run, "per-job records only with --json-jobs"
    for k in ("jobs", "missed", "dsr", "max_tardiness_ns", "mean_tardiness_ns", "max_response_ns", "mean_response_ns",
              "p99_response_ns", "preemptions", "migrations", "context_switches"):
        assert k in run["total"]
    assert run["counters"]["scheduler_invocations"] > 0
    for k in ("steals", "steal_attempts", "failed_steals", "priority_inversions", "priority_inversion_ns"):
        assert all(isinstance(r["counters"][k], int) for r in doc["runs"]), k
    by = {r["scheduler"]: r["counters"] for r in doc["runs"]}
    assert by["gedf"]["priority_inversions"] == 0, "global EDF never runs a later deadline than a ready one"
    assert by["pedf"]["steal_attempts"] == 0
    c = by["paws"]
    assert c["steal_attempts"] == c["steals"] + c["failed_steals"]
    header = (out / "j.csv").read_text().splitlines()[0].split(",")
    for col in ("task", "job", "release_ns", "deadline_ns", "start_ns", "finish_ns", "missed", "aborted"):
        assert col in header
    assert (out / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    trace = json.loads((out / "t.json").read_text())
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert slices and all(e["tid"] in (0, 1) for e in slices)
    assert {e["pid"] for e in slices} == set(range(len(names)))
    named = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"}
    assert named[(0, 0)] == "CPU 0" and named[(0, 1)] == "CPU 1"


def test_same_input_and_seed_give_byte_identical_outputs(tmp_path):
    p = EXAMPLES / "quad-mixed.yaml"
    outs = []
    for i in range(2):
        d = tmp_path / str(i)
        run_cli("simulate", p, "-s", "gedf", "gnpedf", "--seed", 11, "--json", d / "r.json", "--json-jobs", "--jobs-csv", d / "j.csv",
                "--jobs-parquet", d / "j.parquet", "--trace", d / "t.json", check=0)
        outs.append([(d / f).read_bytes() for f in ("r.json", "j.csv", "j.parquet", "t.json")])
    assert outs[0] == outs[1]
    d = tmp_path / "other-seed"
    run_cli("simulate", p, "-s", "gedf", "gnpedf", "--seed", 12, "--json", d / "r.json", "--json-jobs", check=0)
    assert (d / "r.json").read_bytes() != outs[0][0], "the seed must matter for a random execution-time model"


def test_duration_and_seed_override(tmp_path):
    p = write(tmp_path, GOOD)
    d = tmp_path / "r.json"
    run_cli("simulate", p, "--duration", "0.5s", "--seed", 9, "--json", d, check=0)
    run = json.loads(d.read_text())["runs"][0]
    assert run["duration_ns"] == 500_000_000 and run["seed"] == 9


BAD = [
    # (file text, substrings the message must contain)
    ("platform: {cpus: 2}\ntasks:\n  - {name: t0, perod: 10, wcet: 2}\n", ["task 't0'", "field 'perod'", "did you mean 'period'"]),
    ("platform: {cpus: 2}\ntasks:\n  - {name: t0, wcet: 2}\n", ["task 't0'", "field 'period'", "missing"]),
    ("platform: {cpus: 2}\ntasks:\n  - {name: t0, period: 0, wcet: 2}\n", ["task 't0'", "field 'period'", "> 0"]),
    ("platform: {cpus: 2}\ntasks:\n  - {name: t0, period: -5, wcet: 2}\n", ["task 't0'", "field 'period'", "negative"]),
    ("platform: {cpus: 2}\ntasks:\n  - {name: t0, period: 10, wcet: 0}\n", ["task 't0'", "field 'wcet'", "> 0"]),
    ("platform: {cpus: 2}\ntasks:\n  - {name: t0, period: 10, wcet: -1}\n", ["task 't0'", "field 'wcet'"]),
    ("platform: {cpus: 2}\ntasks:\n  - {name: t0, period: 10, wcet: 1, deadline: 0}\n", ["task 't0'", "field 'deadline'", "> 0"]),
    ("platform: {cpus: 2}\ntasks:\n  - {name: t0, period: 10, wcet: 1, cpu: 5}\n", ["task 't0'", "field 'cpu'", "out of range"]),
    ("platform: {cpus: 2}\ntasks:\n  - {name: t0, period: 10, wcet: 1}\n  - {name: t0, period: 5, wcet: 1}\n", ["task 't0' (tasks[1])", "duplicate"]),
    ("platform: {cpus: 2}\ntasks:\n  - {name: t0, period: 10, wcet: 1\n", ["line", "column", "malformed YAML"]),
    ("platform: {cpus: 2}\nrun: {seed: -1}\ntasks:\n  - {name: t0, period: 10, wcet: 1}\n", ["run", "field 'seed'"]),
    ("platform: {cpus: 2}\ntasks:\n  - {name: t0, period: \"3 fortnights\", wcet: 1}\n", ["task 't0'", "field 'period'", "unknown unit"]),
]


@pytest.mark.parametrize("text,needles", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_task_files_exit_2_with_clear_message(tmp_path, text, needles):
    p = write(tmp_path, text)
    r = run_cli("simulate", p)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert str(p) in r.stderr
    for n in needles:
        assert n in r.stderr, r.stderr


def test_malformed_json_has_line_and_column(tmp_path):
    p = write(tmp_path, '{"platform": {"cpus": 2},\n "tasks": [\n  {"name": "a", "period": 10, "wcet": 1},\n ]\n}\n', "ts.json")
    r = run_cli("simulate", p)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "line 4 column" in r.stderr and "malformed JSON" in r.stderr


def test_unknown_scheduler_lists_known(tmp_path):
    p = write(tmp_path, GOOD)
    r = run_cli("simulate", p, "-s", "gedff")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "unknown scheduler 'gedff'" in r.stderr and "did you mean 'gedf'" in r.stderr
    for s in ("gedf", "gnpedf", "pedf", "gfp", "pfp", "gfifo", "paws", "federated", "gedf-seq"):
        assert s in r.stderr


def test_partitioned_without_cpu_names_the_task(tmp_path):
    p = write(tmp_path, "platform: {cpus: 2}\ntasks:\n  - {name: solo, period: 10, wcet: 1}\n")
    r = run_cli("simulate", p, "-s", "pedf")
    assert r.returncode == 2 and "task 'solo'" in r.stderr and "field 'cpu'" in r.stderr


def test_federated_refuses_what_it_cannot_place(tmp_path):
    # deep: C = 21 > D = 10 and L = 11 >= D: no number of dedicated CPUs is enough.
    p = write(tmp_path, "platform: {cpus: 8}\ntasks:\n  - {name: deep, period: 10, regions: [5, [4, 4, 4, 4], 2]}\n")
    r = run_cli("simulate", p, "-s", "federated")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "task 'deep'" in r.stderr and "L = 11ms" in r.stderr and "D = 10ms" in r.stderr, r.stderr
    # h needs 3 CPUs; with 3 CPUs none is left for the light task l.
    p = write(tmp_path, "platform: {cpus: 3}\ntasks:\n  - {name: h, period: 10, regions: [1, [4, 4, 4, 4], 1]}\n"
                        "  - {name: l, period: 10, wcet: 1}\n")
    r = run_cli("simulate", p, "-s", "federated")
    assert r.returncode == 2 and "all 3 CPUs" in r.stderr and "'l'" in r.stderr, r.stderr
    # 'all' skips it, saying why.
    r = run_cli("simulate", p, "-s", "all", check=0)
    assert "federated" in r.stdout + r.stderr and "all 3 CPUs" in r.stdout + r.stderr, r.stdout + r.stderr
    # With a CPU more, l has CPU 3.
    p = write(tmp_path, (tmp_path / "ts.yaml").read_text().replace("cpus: 3", "cpus: 4"))
    r = run_cli("simulate", p, "-s", "federated", "gedf-seq", check=0)
    assert any(line.startswith("federated ") for line in r.stdout.splitlines()), r.stdout
    assert any(line.startswith("gedf-seq ") for line in r.stdout.splitlines()), r.stdout


@pytest.mark.parametrize("args,needle", [
    (["simulate", "does-not-exist.yaml"], "does-not-exist.yaml"),
    (["simulate", "{GOOD}", "--duration", "-3"], "negative"),
    (["simulate", "{GOOD}", "--duration", "5 parsecs"], "unknown unit"),
    (["simulate", "{GOOD}", "--seed", "x"], "argument --seed: expected an integer"),
    (["simulate", "{GOOD}", "-s", "gedf:turbo"], "no option"),
    (["simulate", "{GOOD}", "--json", "/proc/nope/r.json"], "cannot write"),
    (["nonsense"], "invalid choice"),
])
def test_bad_arguments_exit_2(tmp_path, args, needle):
    good = write(tmp_path, GOOD)
    args = [str(good) if a == "{GOOD}" else a for a in args]
    r = run_cli(*args)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    assert needle in r.stderr, r.stderr


def test_failed_write_leaves_no_partial_file(tmp_path):
    p = write(tmp_path, GOOD)
    target = tmp_path / "keep.json"
    target.write_text("precious")
    # A directory in the way of the rename: the write fails, the old content survives.
    r = run_cli("simulate", p, "--json", tmp_path)
    assert r.returncode == 2
    assert target.read_text() == "precious"
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".") and "tmp" in f.name]


def test_partition_reaches_every_partitioned_scheduler(tmp_path):
    # --partition was applied to pedf and pfp only (a list of names): pdasa and lbesa, which
    # take a partition too, ran on the file's cpu fields instead. The registry says which.
    p = write(tmp_path, "platform: {cpus: 2}\nrun: {duration: 40}\ntasks:\n" + "".join(
        f"  - {{name: t{i}, period: 10, wcet: {w}, cpu: 0}}\n" for i, w in enumerate([3, 3, 2, 2])))
    r = run_cli("simulate", p, "-s", "pedf", "pfp:rm", "pdasa", "lbesa", "dasa", "gedf", "--partition", "wfd",
                "--json", tmp_path / "r.json", check=0)
    names = [run["scheduler"] for run in json.loads((tmp_path / "r.json").read_text())["runs"]]
    assert names == ["pedf:wfd", "pfp:rm,partition=wfd", "pdasa:wfd", "lbesa:wfd", "dasa:wfd", "gedf"], names
    # Without it, the cpu fields (all on CPU 0: U = 1.0 there).
    r = run_cli("simulate", p, "-s", "pdasa", "--json", tmp_path / "r.json", check=0)
    assert json.loads((tmp_path / "r.json").read_text())["runs"][0]["scheduler"] == "pdasa", r.stdout


def test_schedulers_lists_every_policy_with_paper():
    r = run_cli("schedulers", check=0)
    for s in ("gedf", "gnpedf", "pedf", "gfp", "pfp", "gfifo", "paws", "federated", "gedf-seq"):
        assert f"\n{s} " in "\n" + r.stdout
    assert "ChronOS" in r.stdout and "prio=" in r.stdout


def test_validate(tmp_path):
    r = run_cli("validate", *sorted(EXAMPLES.glob("*.yaml")), *sorted(EXAMPLES.glob("*.json")), check=0)
    assert r.stdout.count(": ok") == len(list(EXAMPLES.glob("*.yaml"))) + len(list(EXAMPLES.glob("*.json")))


def test_demo_writes_gantt_and_trace(tmp_path):
    out = tmp_path / "out"
    r = run_cli("demo", "--out", out, check=0)
    for stem in ("dhall", "quad-mixed", "overload", "fork-join"):
        assert (out / f"{stem}-gantt.png").stat().st_size > 10_000
        json.loads((out / f"{stem}.trace.json").read_text())
    examples = len(list(EXAMPLES.glob("*.yaml"))) + len(list(EXAMPLES.glob("*.json")))
    assert sum(line.startswith("scheduler ") for line in r.stdout.splitlines()) == examples
    # Dhall's effect shows in the demo: global EDF misses, partitioned EDF does not.
    block = next(b for b in r.stdout.split("== ")[1:] if b.split(":")[0].endswith("dhall.yaml"))
    rows = {line.split()[0]: line.split() for line in block.splitlines() if line and line.split()[0] in ("gedf", "pedf")}
    assert int(rows["gedf"][2]) > 0 and int(rows["pedf"][2]) == 0


# -- A comparison survives one scheduler's failure (issue 49) -----------------------------------

# FFD places the four 0.9 tasks one to a CPU and then finds no room for the 0.3 one; global
# schedulers run the set (U = 3.9 ≤ 4).
FFD_CANNOT = "platform: {cpus: 4}\nrun: {duration: 40}\ntasks:\n" + "".join(
    f"  - {{name: t{i}, period: 10, wcet: {w}}}\n" for i, w in enumerate([9, 9, 9, 9, 3], 1))


def rows_of(stdout, names):
    return {line.split()[0]: line.split() for line in stdout.splitlines() if line.split()[:1] and line.split()[0] in names}


def test_a_partition_failure_is_one_row_and_the_others_run(tmp_path):
    p = write(tmp_path, FFD_CANNOT)
    r = run_cli("simulate", p, "-s", "gedf", "pedf:ffd", "gfp:rm", "--json", tmp_path / "r.json")
    assert r.returncode == 2, r.stderr  # some scheduler could not run because of the input
    rows = rows_of(r.stdout, ("gedf", "pedf:ffd", "gfp:rm"))
    assert set(rows) == {"gedf", "pedf:ffd", "gfp:rm"}, r.stdout
    assert rows["gedf"][-1] == rows["gfp:rm"][-1] == "ok" and rows["gedf"][1] == "20"  # 5 tasks × 4 jobs
    assert rows["pedf:ffd"][-1] == "partition-failed" and set(rows["pedf:ffd"][1:-1]) == {"-"}
    assert only_line(r.stderr, "pedf:ffd did not run (partition-failed)") and "task 't5'" in r.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert [d["scheduler"] for d in doc["runs"]] == ["gedf", "gfp:rm"]
    assert [(d["scheduler"], d["status"]) for d in doc["not_run"]] == [("pedf:ffd", "partition-failed")]
    # The rows for machines carry the status too, with no numbers for the one that did not run.
    j = json.loads(run_cli("simulate", p, "-s", "gedf", "pedf:ffd", "--format", "json", check=2).stdout)
    assert [(d["scheduler"], d["status"]) for d in j] == [("gedf", "ok"), ("pedf:ffd", "partition-failed")]
    assert j[1]["dsr"] is None and "does not fit" in j[1]["error"] and j[0]["error"] is None
    # Negative control: when every scheduler runs, exit 0 and no status column.
    ok = run_cli("simulate", p, "-s", "gedf", "gfp:rm", check=0)
    assert "status" not in ok.stdout.splitlines()[1]


def only_line(text, part):
    return sum(part in line for line in text.splitlines()) == 1


def test_a_deadlock_under_one_scheduler_leaves_the_others(tmp_path):
    p = write(tmp_path, """\
        platform: {cpus: 2}
        run: {duration: 20}
        tasks:
          - {name: a, period: 10, wcet: 4, tuf: 5, sections: [{resource: x, start: 0, length: 3}, {resource: y, start: 1, length: 1}]}
          - {name: b, period: 10, wcet: 4, tuf: 2, sections: [{resource: y, start: 0, length: 3}, {resource: x, start: 1, length: 1}]}
        """)
    r = run_cli("simulate", p, "-s", "gedf", "ggua", check=2)
    rows = rows_of(r.stdout, ("gedf", "ggua:model=stw,mapper=3pass"))
    assert rows["gedf"][-1] == "deadlock" and rows["ggua:model=stw,mapper=3pass"][-1] == "ok", r.stdout
    assert only_line(r.stderr, "gedf did not run (deadlock): ") and "deadlock at 1ms" in r.stderr


def test_a_spec_wrong_whatever_the_set_is_still_the_commands_error(tmp_path):
    # An unknown scheduler or option is no row: it is said before anything runs, with a hint.
    p = write(tmp_path, FFD_CANNOT)
    for bad, hint in (("GEDF", "did you mean 'gedf'?"), ("pedf:fdd", "did you mean 'ffd'?")):
        r = run_cli("simulate", p, "-s", "gedf", bad, check=2)
        assert hint in r.stderr and not r.stdout, r.stderr


def test_kernel_fifo_refuses_priorities_on_some_tasks_as_gfp_does(tmp_path):
    # One priority assignment for the simulated and the real fixed-priority schedulers
    # (rtsched_analysis::priority::assign): kernel:fifo used RM here, while gfp refused. Refused
    # before any thread starts (the backend is parsed before privilege is asked for).
    p = write(tmp_path, "platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: a, period: 10, wcet: 2, priority: 3}\n"
                        "  - {name: b, period: 20, wcet: 3}\n")
    why = "task 'b': field 'priority': missing, while other tasks have one; give every task a priority, or choose {0}:rm / {0}:dm"
    real = run_cli("run", p, "-b", "kernel:fifo", "testbed:gfp", check=2)
    sim = run_cli("simulate", p, "-s", "gfp", check=2)
    for r, name, spec in ((real, "kernel:fifo", "kernel:fifo"), (real, "testbed:gfp", "gfp"), (sim, "gfp", "gfp")):
        assert f"{name} did not run (not-applicable): {p}: {why.format(spec)}" in r.stderr, r.stderr


def test_run_and_compare_give_a_backend_that_cannot_place_the_set_its_row(tmp_path):
    # Refused before any thread starts (the policy is built first): no real-time thread runs.
    p = write(tmp_path, FFD_CANNOT)
    r = run_cli("run", p, "-b", "testbed:pedf:ffd", check=2)
    assert rows_of(r.stdout, ("testbed:pedf:ffd",))["testbed:pedf:ffd"][-1] == "partition-failed", r.stdout
    assert "testbed:pedf:ffd did not run (partition-failed)" in r.stderr
    c = run_cli("compare", p, "-p", "pedf:ffd", check=2)
    rows = rows_of(c.stdout, ("pedf:ffd", "testbed:pedf:ffd"))
    assert [rows[k][-1] for k in ("pedf:ffd", "testbed:pedf:ffd")] == ["partition-failed"] * 2, c.stdout
    # A backend wrong whatever the set is the command's error, as for simulate.
    bad = run_cli("run", p, "-b", "testbed:pedf:fdd", check=2)
    assert "did you mean 'ffd'?" in bad.stderr and not bad.stdout


def test_the_exit_code_says_whether_any_failed():
    from rtsched.result import NotRun, exit_status

    class Ran:
        ok = True

    assert exit_status([Ran(), Ran()]) == 0
    assert exit_status([Ran(), NotRun("pedf:ffd", "sim", "partition-failed", "")]) == 2
    assert exit_status([NotRun("a", "sim", "deadlock", ""), NotRun("b", "testbed", "run-failed", "")]) == 1
    # One code per failure kind, whatever ran it: a real run's deadlock is the input's, as a
    # simulated one (it was exit 1, RunFailed, in a real run).
    assert exit_status([NotRun("b", "testbed", "deadlock", "")]) == exit_status([NotRun("a", "sim", "deadlock", "")]) == 2
    assert exit_status([NotRun("b", "testbed", "too-long", "")]) == 2
    assert exit_status([Ran(), NotRun("b", "kernel", "run-failed", "")]) == 1
