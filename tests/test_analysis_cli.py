"""Generators, schedulability tests and partitioning from Python and the CLI."""

import pytest

import rtsched
from conftest import run_cli


def test_generate_is_reproducible_and_exact():
    a = rtsched.generate("randfixedsum", n=10, m=4, U=2.5, seed=7)
    b = rtsched.generate("randfixedsum", n=10, m=4, U=2.5, seed=7)
    c = rtsched.generate("randfixedsum", n=10, m=4, U=2.5, seed=8)
    assert rtsched.analysis.to_yaml(a.taskset) == rtsched.analysis.to_yaml(b.taskset)
    assert rtsched.analysis.to_yaml(a.taskset) != rtsched.analysis.to_yaml(c.taskset)
    assert abs(sum(a.utilisations) - 2.5) < 1e-9
    assert a.taskset.cpus == 4 and len(a.taskset.task_names) == 10


@pytest.mark.parametrize("name", ["lelli2011", "paws2013", "chronos2011", "mlu", "mmu", "mwl", "mwh", "mwlp", "mwhp", "mwlu", "mwhu"])
def test_paper_generators(name):
    g = rtsched.generate(name, seed=3)
    assert len(g.taskset.task_names) > 0
    if name == "paws2013":
        assert g.threads and len(g.threads) == len(g.taskset.task_names)
    if name == "chronos2011":
        assert g.utilities and len(g.taskset.task_names) == 12


@pytest.mark.parametrize("args,needle", [
    (["randfixedsum", "n=2", "m=1", "U=5"], "U"),
    (["randfixedsum", "n=4", "U=1", "u_min=0.5", "u_max=0.2"], "u_min"),
    (["randfixedsum", "n=0", "U=1"], "n"),
    (["uunifast", "n=3", "U=1", "bogus=2"], "bogus"),
    (["nosuchgen"], "nosuchgen"),
])
def test_impossible_generator_parameters_exit_2(args, needle):
    r = run_cli("gen", *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr and needle in r.stderr, r.stderr


def test_uunifast_above_one_refuses_and_discard_gives_the_u_asked(tmp_path):
    """UUniFast for U > 1 could give a task u > 1; it used to be clipped to C = T, writing
    U = 3.050 for U = 3.5 without a word. Now it refuses, naming the generators that honour
    u_max, and UUniFast-Discard writes the U asked."""
    r = run_cli("gen", "uunifast", "n=8", "m=4", "U=3.5", "--seed", 2)
    assert r.returncode == 2 and "Traceback" not in r.stderr and not r.stdout, r.stderr
    assert "parameter U=3.5" in r.stderr and "uunifast-discard" in r.stderr and "randfixedsum" in r.stderr, r.stderr
    out = tmp_path / "ud.yaml"
    r = run_cli("gen", "uunifast-discard", "n=8", "m=4", "U=3.5", "--seed", 2, "-o", out, check=0)
    assert "U = 3.500" in r.stderr, r.stderr
    ts = rtsched.load_taskset(out)
    assert abs(ts.utilization - 3.5) <= 8 * 0.5 / 10e6  # n · 0.5 ns / the shortest period (10 ms)
    assert all(t["wcet_ns"] <= t["period_ns"] for t in ts.tasks())
    with pytest.raises(rtsched.InputError, match="uunifast-discard"):
        rtsched.generate("uunifast", n=8, m=4, U=3.5)
    with pytest.raises(rtsched.InputError, match="parameter u_max=1.5"):
        rtsched.generate("randfixedsum", n=8, m=4, U=3.5, u_max=1.5)
    r = run_cli("gen", "--list")
    assert "no bound" not in r.stdout and "U <= 1" in r.stdout


def test_gen_analyze_partition_simulate_pipeline(tmp_path):
    ts = tmp_path / "ts.yaml"
    run_cli("gen", "uunifast-discard", "n=8", "m=4", "U=2.2", "--seed", 4, "-o", ts, check=0)
    r = run_cli("analyze", ts, check=0)
    assert "gedf-gfb" in r.stdout and "verdict" in r.stdout
    part = tmp_path / "p.yaml"
    run_cli("partition", ts, "--heuristic", "wfd", "-o", part, check=0)
    p = rtsched.load_taskset(part)
    assert all(t["cpu"] is not None for t in p.tasks())
    r = run_cli("analyze", part, check=0)
    assert "p-" in r.stdout  # per-CPU tests once partitioned
    r = run_cli("simulate", ts, "-s", "pedf", "pfp", "--partition", "ffd", check=0)
    assert "pedf:ffd" in r.stdout and "partition=ffd" in r.stdout
    sim = rtsched.simulate(part, "pedf")
    assert sim.summary["missed"] == 0, "a partition admitted by the exact EDF test must not miss"


def test_partition_failure_names_the_task(tmp_path):
    p = tmp_path / "big.yaml"
    p.write_text("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 6}\n  - {name: b, period: 10, wcet: 6}\n  - {name: c, period: 10, wcet: 6}\n")
    r = run_cli("partition", p, "--heuristic", "ffd")
    assert r.returncode == 2 and "task 'c'" in r.stderr and "Traceback" not in r.stderr
    # A chain that falls back to global places no partition either: exit 2 as any input error.
    r = run_cli("partition", p, "--heuristic", "ffd+global")
    assert r.returncode == 2 and "globally" in r.stderr and r.stderr.startswith("rtsched: error: ") and not r.stdout
