"""`rtsched gen waters2015`: automotive task sets from Kramer, Ziegenbein & Hamann (WATERS 2015).

The distributions themselves (Tables III-V) are checked on 100,000 draws by the Rust unit tests
(crates/analysis/src/gen/waters.rs); here: the command as a user runs it, and the API.
"""

import pytest

import rtsched
from conftest import run_cli

#: The period classes (ms) of Table III; the angle-synchronous task's minimum inter-arrival time
#: at the default rpm_max = 6000 and 4 cylinders is 120 / (6000 · 4) s = 5 ms.
CLASSES_MS = {1, 2, 5, 10, 20, 50, 100, 200, 1000}


def test_gen_writes_a_valid_set_on_target(tmp_path):
    out = tmp_path / "ecu.yaml"
    r = run_cli("gen", "waters2015", "m=4", "U=2", "--seed", "1", "-o", out, check=0)
    assert "wrote" in r.stderr and "on 4 CPUs" in r.stderr, r.stderr
    run_cli("validate", out, check=0)
    ts = rtsched.load_taskset(out)
    assert ts.cpus == 4
    # Σ WCET/T lands in [U·(1 − tolerance), U] = [1.98, 2].
    assert 1.98 <= ts.utilization <= 2.0, ts.utilization
    tasks = {t["name"]: t for t in ts.tasks()}
    # tasks=period (the default): one task per period class, named by it; every C fits its T.
    assert {"task_10ms", "task_20ms", "task_100ms", "task_angle"} <= set(tasks), sorted(tasks)
    for t in tasks.values():
        assert t["wcet_ns"] <= t["period_ns"] == t["deadline_ns"], t
        if t["name"].startswith("task_angle"):
            assert (t["period_ns"], t["max_interarrival_ns"]) == (5_000_000, 30_000_000), t
        else:
            assert t["period_ns"] % 1_000_000 == 0 and t["period_ns"] // 1_000_000 in CLASSES_MS, t
            assert t["max_interarrival_ns"] is None


def test_gen_is_seeded(tmp_path):
    a, b, c = tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "c.yaml"
    for f, seed in ((a, 7), (b, 7), (c, 8)):
        run_cli("gen", "waters2015", "tasks=runnable", "n=200", "--seed", seed, "-o", f, check=0)
    assert a.read_text() == b.read_text()
    assert a.read_text() != c.read_text()
    ts = rtsched.load_taskset(a)
    assert len(ts.task_names) == 200 and ts.cpus == 4
    assert all(n.startswith(f"r{i}_") for i, n in enumerate(ts.task_names)), ts.task_names[:5]


@pytest.mark.parametrize("params, message", [
    (["U=1", "n=10"], "give n (runnables) or U"),
    (["m=2", "U=3"], "U=3 exceeds the platform's m = 2"),
    (["angle=crank"], "angle=crank: known: sporadic, periodic, exclude"),
    (["tasks=core"], "tasks=core"),
    (["rpm_min=7000"], "rpm_min=7000 exceeds rpm_max=6000"),
    (["rpm_max=12000", "cylinders=8"], "shorter than the longest angle-synchronous WCET"),
    (["tolerance=2"], "tolerance=2 must be in (0, 1]"),
    (["rpm=3000"], "no parameter 'rpm'"),
])
def test_bad_parameters_exit_2_naming_the_parameter(params, message):
    r = run_cli("gen", "waters2015", *params, check=2)
    assert message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_listed_with_its_parameters():
    r = run_cli("gen", "--list", check=0)
    assert "waters2015" in r.stdout and "angle=sporadic|periodic|exclude" in r.stdout, r.stdout


def test_api_and_simulation():
    g = rtsched.generate("waters2015", seed=3, m=2, U=1.5, angle="periodic")
    ts = g.taskset
    assert 1.485 <= ts.utilization <= 1.5
    assert sum(g.utilisations) == pytest.approx(ts.utilization, abs=1e-9)
    assert g.threads is None and g.utilities is None
    assert all(t["max_interarrival_ns"] is None for t in ts.tasks())
    # angle=exclude: no angle-synchronous task.
    ex = rtsched.generate("waters2015", seed=3, m=2, U=1.5, angle="exclude").taskset
    assert not any(n.startswith("task_angle") for n in ex.task_names)
    # The default set (sporadic angle task) simulates.
    r = rtsched.simulate(rtsched.generate("waters2015", seed=1).taskset, "gedf", duration="100ms")
    assert r.summary["jobs"] > 0
