"""Warnings on loads no scheduler can meet (docs/taskset-format.md "Warnings"): U > m, a task
with C > D or C > T, a likely unit mix, and `gen` without m. Each is a line on stderr from
`validate`, `simulate` and `gen`; the exit code stays 0 and the outputs are unchanged."""

import pytest

import rtsched
from conftest import EXAMPLES, run_cli, write_dedented
from rtsched.checks import MAX_TASK_WARNINGS, UNIT_MIX_FACTOR, load_warnings

# The set: units on the period, none on the WCET, so the WCET is 200 ms every 1 ms.
UNIT_MIXED = """\
    platform: {cpus: 2}
    run: {duration: 20}
    tasks:
      - {name: ctrl, period: 1000us, wcet: 200}
      - {name: log, period: 10ms, wcet: 1ms}
    """


def warnings_of(tasks, cpus=1):
    return load_warnings(rtsched.load_taskset(tasks, cpus=cpus))


def only(lines):
    assert len(lines) == 1, lines
    return lines[0]


def test_validate_warns_on_the_unit_mixed_set_and_still_says_ok(tmp_path):
    p = write_dedented(tmp_path, UNIT_MIXED)
    r = run_cli("validate", p, check=0)
    assert r.stdout.startswith(f"{p}: ok"), r.stdout
    lines = r.stderr.splitlines()
    assert lines == [
        f"warning: {p}: U = 200.100 > m = 2 CPUs: more work than the platform can do; at their worst case every "
        "scheduler misses deadlines",
        f"warning: {p}: task 'ctrl': wcet 200ms is 200× its period 1ms: likely mixed units (a number without a unit "
        "is ms); did you mean wcet: 200us?",
    ], r.stderr


def test_simulate_warns_before_running_and_exits_0(tmp_path):
    p = write_dedented(tmp_path, UNIT_MIXED)
    r = run_cli("simulate", p, "-s", "gedf", check=0)
    assert "U = 200.100 > m = 2 CPUs" in r.stderr and "did you mean wcet: 200us?" in r.stderr, r.stderr
    assert "warning" not in r.stdout and any(line.startswith("gedf") for line in r.stdout.splitlines()), r.stdout


def test_demo_says_the_load_warnings_of_the_sets_it_runs(tmp_path):
    ex = tmp_path / "examples"
    ex.mkdir()
    for name in ("dhall.yaml", "tuf-overload.yaml"):
        (ex / name).write_text((EXAMPLES / name).read_text())
    r = run_cli("demo", "--examples", ex, "--out", tmp_path / "out", check=0)
    assert r.stderr.splitlines().count(f"warning: {ex / 'tuf-overload.yaml'}: U = 2.100 > m = 2 CPUs: more work than the "
                                       "platform can do; at their worst case every scheduler misses deadlines") == 1, r.stderr
    assert "dhall" not in r.stderr and "warning" not in r.stdout, (r.stdout, r.stderr)


def test_the_bundled_examples_warn_only_where_overloaded():
    files = sorted(EXAMPLES.glob("*.yaml")) + sorted(EXAMPLES.glob("*.json"))
    for f in files:
        r = run_cli("validate", f, check=0)
        if f.name == "tuf-overload.yaml":  # U = 2.1 on 2 CPUs, on purpose; every task has C <= D <= T
            assert r.stderr.splitlines() == [f"warning: {f}: U = 2.100 > m = 2 CPUs: more work than the platform can "
                                             "do; at their worst case every scheduler misses deadlines"], r.stderr
        else:
            assert r.stderr == "", (f, r.stderr)


def test_gen_without_m_says_which_platform_it_chose():
    r = run_cli("gen", "randfixedsum", "n=8", "U=2.5", check=0)
    lines = r.stderr.splitlines()
    assert lines[0] == ("warning: gen randfixedsum: no m given, so the set is for the generator's default of 1 CPU "
                        "(platform.cpus: 1); pass m=N for N CPUs"), r.stderr
    assert "U = 2.500 > m = 1 CPU:" in lines[1] and len(lines) == 2, r.stderr
    assert "platform: {cpus: 1}" in r.stdout
    r = run_cli("gen", "randfixedsum", "n=8", "m=4", "U=2.5", check=0)
    assert r.stderr == "", r.stderr
    # A generator whose default is a paper's platform says that one.
    r = run_cli("gen", "lelli2011", check=0)
    assert r.stderr.splitlines() == ["warning: gen lelli2011: no m given, so the set is for the generator's default of "
                                     "4 CPUs (platform.cpus: 4); pass m=N for N CPUs"], r.stderr


def test_c_above_d_and_c_above_t_without_a_unit_hint():
    w = only(warnings_of([{"name": "a", "period": 20, "wcet": 12, "deadline": 10}]))
    assert w.endswith("task 'a': wcet 12ms > deadline 10ms: a job that runs its worst case misses its deadline under "
                      "every scheduler"), w
    # C > T with D >= C: the backlog grows (jobs of a task run one after another); u = 1.5 is an
    # overload one may mean, not a unit mix.
    ws = warnings_of([{"name": "b", "period": 10, "wcet": 15, "deadline": 20}])
    assert len(ws) == 2 and "U = 1.500 > m = 1 CPU" in ws[0], ws
    assert "task 'b': wcet 15ms > period 10ms: its jobs run one after another" in ws[1] and "units" not in ws[1], ws
    # A sporadic task's bound is its minimum inter-arrival time.
    ws = warnings_of([{"name": "s", "min_interarrival": 10, "max_interarrival": 30, "wcet": 12, "deadline": 40}], cpus=2)
    assert "wcet 12ms > minimum inter-arrival time 10ms" in only(ws), ws


def test_the_unit_mix_factor_is_the_boundary():
    below = only(warnings_of([{"name": "a", "period": 10, "wcet": 10 * UNIT_MIX_FACTOR - 1}], cpus=100))
    assert "> deadline 10ms" in below and "units" not in below, below  # D = T: C > D is said first
    at = only(warnings_of([{"name": "a", "period": 10, "wcet": 10 * UNIT_MIX_FACTOR}], cpus=100))
    assert f"is {UNIT_MIX_FACTOR}× its period 10ms: likely mixed units" in at and "did you mean wcet: 100us?" in at, at


def test_unit_mix_against_the_deadline_and_in_nanoseconds():
    # A deadline in us beside a bare WCET: the bound is the deadline, the shorter of the two.
    w = only(warnings_of([{"name": "d", "period": 10, "deadline": "100us", "wcet": 2}], cpus=1))
    assert "wcet 2ms is 20× its deadline 100us: likely mixed units" in w and "did you mean wcet: 2us?" in w, w
    # A WCET meant in ns: read as ms it is a million times too large, and 50 us would not fit either.
    w = warnings_of([{"name": "n", "period": "100ns", "wcet": 50}], cpus=65536)
    assert "is 500,000× its period 100ns" in w[-1] and "did you mean wcet: 50ns?" in w[-1], w
    # Beyond both readings: no hint, still the warning.
    w = warnings_of([{"name": "x", "period": "1ns", "wcet": 2000}], cpus=65536)
    assert "likely mixed units (a number without a unit is ms)" in w[-1] and "did you mean" not in w[-1], w


def test_sets_that_must_not_warn():
    assert warnings_of([{"name": "a", "period": 10, "wcet": 10}]) == []  # C = D = T, U = m
    assert warnings_of([{"name": f"t{i}", "period": 3, "wcet": 1} for i in range(3)]) == []  # U = 1 in floats
    assert warnings_of([{"name": "a", "period": "1000us", "wcet": "200us"}, {"name": "b", "period": 1000, "wcet": 1}]) == []
    # Units on one field, none on the other, and consistent: no warning (the values decide).
    assert warnings_of([{"name": "a", "period": "1s", "wcet": 200}]) == []
    # A parallel task may have C > T: its longest path (3 ms) is what must fit.
    assert warnings_of([{"name": "p", "period": 5, "regions": [[3, 3, 3]]}], cpus=2) == []
    # Best-effort tasks have no deadline: a hog's burst is not a WCET.
    ts = rtsched.load_taskset({"platform": {"cpus": 1}, "tasks": [
        {"name": "rt", "period": 10, "wcet": 2}, {"name": "hog", "class": "fair"},
        {"name": "s", "class": "fair", "behaviour": "sleeper", "run": 50, "sleep": 1}]})
    assert load_warnings(ts) == []


def test_a_parallel_task_is_judged_by_its_longest_path():
    w = only(warnings_of([{"name": "p", "period": 10, "deadline": 5, "regions": [[6, 6]]}], cpus=2))
    assert "task 'p': longest path 6ms > deadline 5ms" in w, w
    w = only(warnings_of([{"name": "p", "period": 1, "regions": [[100, 100], 50]}], cpus=300))
    assert "longest path 150ms is 150× its period 1ms: likely mixed units (a number without a unit is ms)" in w, w
    assert "did you mean" not in w, w


def test_many_tasks_are_counted_not_listed():
    n = MAX_TASK_WARNINGS + 3
    ws = warnings_of([{"name": f"t{i}", "period": 10, "wcet": 11, "deadline": 20} for i in range(n)], cpus=n + 2)
    assert len(ws) == MAX_TASK_WARNINGS + 1 and ws[-1].endswith("… and 3 more tasks like these"), ws
    assert [w.split("'")[1] for w in ws[:-1]] == [f"t{i}" for i in range(MAX_TASK_WARNINGS)]


@pytest.mark.parametrize("source", ["<dict>", "<list>"])
def test_warnings_name_the_source(source):
    tasks = [{"name": "a", "period": 10, "wcet": 12}]
    ts = rtsched.load_taskset({"platform": {"cpus": 2}, "tasks": tasks} if source == "<dict>" else tasks, **(
        {} if source == "<dict>" else {"cpus": 2}))
    ws = load_warnings(ts)
    assert ws and all(w.startswith(f"warning: {source}: ") for w in ws), ws


# -- Through the Python API (issue 49) ----------------------------------------------------------

def test_the_api_gives_the_load_warnings_as_load_warnings():
    import warnings

    ts = rtsched.load_taskset({"platform": {"cpus": 2}, "run": {"duration": 10},
                               "tasks": [{"name": "ctrl", "period": "1000us", "wcet": 200}]})
    assert issubclass(rtsched.LoadWarning, UserWarning)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        rtsched.simulate(ts)
    texts = [str(w.message) for w in seen if w.category is rtsched.LoadWarning]
    assert any("likely mixed units" in t and "did you mean wcet: 200us?" in t for t in texts), texts
    assert texts == ts.warnings  # the set's own list, the texts the CLI prints
    assert all(w.filename == __file__ for w in seen)  # pointing at the caller
    # A set with nothing to say gives no warning.
    fine = rtsched.load_taskset([{"name": "a", "period": 10, "wcet": 1}])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        rtsched.simulate(fine, duration=100)
    assert fine.warnings == [] and seen == []


def test_the_cli_prints_each_warning_once(tmp_path):
    p = write_dedented(tmp_path, UNIT_MIXED)
    r = run_cli("simulate", p, check=0)
    ws = [line for line in r.stderr.splitlines() if line.startswith("warning: ")]
    assert ws == [f"warning: {w}" for w in rtsched.load_taskset(str(p)).warnings], r.stderr


# Periods up to 81 ms: a 5 ms window counts one job of most tasks (8 in all).
SHORT_WINDOW = [{"name": f"t{p}", "period": p, "wcet": 0.5} for p in (3, 9, 27, 81)]


def test_a_window_too_short_for_the_periods_is_warned_about(tmp_path):
    ts = rtsched.load_taskset(SHORT_WINDOW, cpus=1)
    w = only(ts.with_run(duration_ns=5_000_000).warnings)
    assert "the counted window 5ms holds 1 job of task 't81' (period 81ms) (and 2 more tasks), 5 jobs in all" in w, w
    assert "a window of 162ms or more" in w
    # Long enough for two jobs of every task: nothing to say.
    assert ts.with_run(duration_ns=162_000_000).warnings == []
    p = tmp_path / "s.yaml"
    p.write_text(yaml_of(SHORT_WINDOW))
    r = run_cli("simulate", p, "--duration", "5", check=0)
    assert sum("the counted window 5ms holds" in line for line in r.stderr.splitlines()) == 1, r.stderr
    assert "the counted window" not in run_cli("simulate", p, "--duration", "200", check=0).stderr


def yaml_of(tasks, cpus=1):
    import yaml

    return yaml.safe_dump({"platform": {"cpus": cpus}, "tasks": tasks})


def test_the_docs_say_lock_order_cycles_are_accepted(tmp_path):
    from conftest import ROOT

    text = " ".join((ROOT / "docs" / "semantics.md").read_text().split())
    assert "lock-order cycle are refused" not in text and "are accepted, with a warning" in text
    p = write_dedented(tmp_path, """\
        platform: {cpus: 2}
        tasks:
          - {name: a, period: 10, wcet: 4, sections: [{resource: x, start: 0, length: 3}, {resource: y, start: 1, length: 1}]}
          - {name: b, period: 10, wcet: 4, sections: [{resource: y, start: 0, length: 3}, {resource: x, start: 1, length: 1}]}
        """)
    r = run_cli("validate", p, check=0)
    assert rtsched.load_taskset(str(p)).lock_order_cycle, r.stderr
