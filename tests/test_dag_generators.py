"""The DAG generators (docs/generators.md, "DAG generators") through the extension: seeded,
U as asked, listed by `rtsched gen --list`; and `rtsched gen` never writes a DAG task as a
sequential one."""

from __future__ import annotations

import pytest

import rtsched
from conftest import run_cli
from rtsched import _core


@pytest.mark.parametrize("name,shape", [("dag-nfj", "p=0.9,k=3,d=2"), ("dag-layered", "nodes=5..12,layers=2..3,p=0.4")])
def test_dag_sets_are_seeded_and_have_the_asked_utilisation(name, shape):
    params = f"{shape},n=6,U=3.5,m=4,u_max=1.5"
    a = _core.generate(name, params, 7)
    b = _core.generate(name, params, 7)
    assert [t for t in a[0].tasks()] == [t for t in b[0].tasks()] and a[1] == b[1]
    assert [t for t in a[0].tasks()] != [t for t in _core.generate(name, params, 8)[0].tasks()]
    assert sum(a[1]) == pytest.approx(3.5, abs=1e-9)
    assert a[0].utilization == pytest.approx(3.5, abs=1e-4)
    assert a[0].cpus == 4 and len(a[0].tasks()) == 6
    g = rtsched.generate(name, seed=7, n=6, U=3.5, m=4, u_max=1.5, **dict(kv.split("=") for kv in shape.split(",")))
    assert g.utilisations == a[1]


def test_dag_generators_are_listed_and_bad_parameters_named():
    r = run_cli("gen", "--list")
    assert "dag-nfj" in r.stdout and "dag-layered" in r.stdout
    r = run_cli("gen", "dag-layered", "n=2", "U=1", "nodes=3", "layers=2", check=2)
    assert "nodes=3: at least layers + 2 = 4" in r.stderr and "Traceback" not in r.stderr


def test_gen_writes_dag_tasks_as_dags_or_refuses():
    r = run_cli("gen", "dag-nfj", "n=2", "U=1", "m=2", check=None)
    if r.returncode == 0:
        assert "dag:" in r.stdout
    else:
        assert r.returncode == 2 and "cannot write DAG tasks" in r.stderr, r.stderr
