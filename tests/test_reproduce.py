"""Every registered reproduction runs with --quick and writes a report with the paper's numbers
beside rtsched's; it simulates only, as root too, unless --real is given, and with --real it
first says what it will run."""

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from claims_done import MAIN, check_done
from conftest import ROOT, RTSCHED, real, run_cli, run_cli_watching_rt
from rtsched.reproduce import _REGISTRY, _real, experiments, register

NAMES = [e.name for e in experiments()]
WITH_REAL = [e.name for e in experiments() if e.real is not None]


def test_registry_has_the_papers_experiments():
    assert {"lwfg2012", "paws2013"} <= set(NAMES)
    r = run_cli("reproduce", "--list", check=0)
    for n in NAMES:
        assert n in r.stdout


def test_a_later_module_can_register_and_duplicates_are_refused():
    from dataclasses import replace

    from test_experiment import toy

    exp = toy("zz-test-only")
    try:
        assert register(exp) is exp and "zz-test-only" in [e.name for e in experiments()]
        with pytest.raises(ValueError):  # the same name from another module
            register(replace(_REGISTRY["paws2013"], runs=exp.runs))
    finally:
        _REGISTRY.pop("zz-test-only", None)


# Marked `real` without a skip: as root (make test-real) it checks that no real-time thread
# starts; without privilege none could, and the report is checked all the same.
@pytest.mark.real
@pytest.mark.parametrize("name", NAMES)
def test_quick_reproduction(tmp_path, name):
    t = time.monotonic()
    r, rt = run_cli_watching_rt("reproduce", name, "--quick", "--out", tmp_path)
    took = time.monotonic() - t
    assert r.returncode == 0, r.stderr
    assert not rt, f"reproduce {name} --quick started real-time threads without --real: {sorted(rt)}"
    assert took < 60, f"--quick took {took:.0f} s"
    d = tmp_path / name
    report = (d / "report.md").read_text()
    if name in WITH_REAL:  # the real-core part says it was not run, and how to run it
        assert "real runs start real-time threads on this machine's CPUs, so they are made only when asked" in report
        assert f"`sudo rtsched reproduce {name} --quick --real`" in report
        assert not list(d.glob("real*.csv")) and not (d / "opzone_real.json").exists()
    if (d / "claims.json").exists():  # on the claims engine: the table is rendered from claims.json
        header = next(line for line in report.splitlines() if line.startswith("| claim"))
        assert "| the paper |" in header and "| ours |" in header and "| control |" in header
        doc = json.loads((d / "claims.json").read_text())
        assert doc and all(f"| {c['id']} |" in report for c in doc)
        for c in doc:  # the Done-when of the claims issue: a quote, a computed verdict, a control
            assert c["quote"] and c["verdict"] and c["control"] and c["control"]["variant"], c
        if name in MAIN:  # and of the verdicts issue: five words, controls that can tell, the main claims
            check_done(doc, name)
    else:
        header = next(line for line in report.splitlines() if line.startswith("| quantity"))
        assert "| paper |" in header and "| rtsched |" in header
    assert "Not reproduced yet" in report
    pngs, svgs = list(d.glob("*.png")), list(d.glob("*.svg"))
    assert pngs and len(svgs) == len(pngs)
    for f in pngs:
        assert f"]({f.name})" in report, f"{f.name} is not in the report"
    assert "wrote" in r.stdout


def test_unknown_experiment_exits_2():
    r = run_cli("reproduce", "lwfg2013")
    assert r.returncode == 2 and "did you mean 'lwfg2012'" in r.stderr and "Traceback" not in r.stderr


@real
def test_real_says_what_it_will_run_then_runs_it(tmp_path):
    """The negative control of the test above: with --real the same watch sees the testbed's
    SCHED_FIFO threads and SCHED_DEADLINE's, after the plan was printed."""
    r, rt = run_cli_watching_rt("reproduce", "paws2013", "--quick", "--real", "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    plan = r.stderr[:r.stderr.index("real runs:")]  # the progress of the real runs comes after the plan
    assert "rtsched reproduce paws2013 --quick --real: after the simulations, real runs" in plan
    for b in ("testbed:paws", "kernel:deadline"):
        assert f"{b}: {_real.policy_of(b)}" in plan
    assert "4 run(s) of 500 ms" in plan and "on CPUs 0-1" in plan
    policies = {(pol, prio) for _, pol, prio in rt}
    assert {("SCHED_FIFO", _real.TESTBED_WORKER_PRIO), ("SCHED_FIFO", _real.TESTBED_DECIDER_PRIO)} <= policies, rt
    assert any(pol == "SCHED_DEADLINE" for pol, _ in policies), rt
    report = (tmp_path / "paws2013" / "report.md").read_text()
    assert "`rtsched reproduce paws2013 --quick --real`" in report
    section = report.split("## m = 2 on this machine's real cores", 1)[1]
    assert "| window | backend | sets run |" in section and not section.lstrip().startswith("Not run")
    assert len(__import__("pandas").read_csv(tmp_path / "paws2013" / "real-quick.csv")) == 8


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to drop CAP_SYS_NICE (setpriv)")
def test_real_without_real_time_privilege_is_refused_before_anything_runs(tmp_path):
    r = subprocess.run(["setpriv", "--inh-caps=-sys_nice", "--bounding-set=-sys_nice", RTSCHED, "reproduce", "lwfg2012", "--quick",
                        "--real", "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "--real: real-time scheduling is not permitted here" in r.stderr and "CAP_SYS_NICE" in r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "lwfg2012").exists()


def test_a_plan_names_every_backend_with_its_policy():
    for name in WITH_REAL:
        for quick in (True, False):
            parts = _REGISTRY[name].real_plan(quick)
            text = _real.plan_text(name, parts, quick)
            assert parts and all(p.runs > 0 and p.seconds > 0 for p in parts), name
            for p in parts:
                assert p.backends or p.policy, (name, p)
                for b in p.backends:
                    assert "docs/real-runs.md" not in _real.policy_of(b), b
                    assert f"{b}: {_real.policy_of(b)}" in text
            assert re.search(r"about [\d.]+ (s|ms|min) of real runs in all", text), text


def test_the_testbeds_priorities_are_the_rust_constants():
    src = Path(ROOT) / "crates" / "linux" / "src"
    assert f"const WORKER_PRIO: u32 = {_real.TESTBED_WORKER_PRIO};" in (src / "testbed.rs").read_text()
    assert f"const DECIDER_PRIO: u32 = {_real.TESTBED_DECIDER_PRIO};" in (src / "userspace.rs").read_text()


def test_an_experiment_without_real_runs_says_real_changes_nothing(tmp_path):
    from test_experiment import toy

    said = []
    register(toy("zz-no-real"))
    try:
        from rtsched.reproduce import reproduce

        reproduce("zz-no-real", out=tmp_path, quick=True, real=True, say=said.append)
        assert said == ["rtsched reproduce zz-no-real: this experiment has no real runs; --real changes nothing"]
        assert "`sudo rtsched reproduce zz-no-real --quick --real`" not in (tmp_path / "zz-no-real" / "report.md").read_text()
    finally:
        _REGISTRY.pop("zz-no-real", None)
