"""Every registered reproduction runs with --quick and writes a report with the paper's numbers beside rtsched's."""

import time

import pytest

from rtsched.reproduce import _REGISTRY, experiments, register
from conftest import run_cli

NAMES = [e.name for e in experiments()]


def test_registry_has_the_papers_experiments():
    assert {"lwfg2012", "paws2013"} <= set(NAMES)
    r = run_cli("reproduce", "--list", check=0)
    for n in NAMES:
        assert n in r.stdout


def test_a_later_module_can_register_and_duplicates_are_refused():
    @register("zz-test-only", description="d", paper="p")
    def run(out_dir, quick, executor):
        return None

    try:
        assert "zz-test-only" in [e.name for e in experiments()]
        with pytest.raises(ValueError):
            register("paws2013", description="d", paper="p")(lambda out_dir, quick, executor: None)
    finally:
        _REGISTRY.pop("zz-test-only", None)


@pytest.mark.parametrize("name", NAMES)
def test_quick_reproduction(tmp_path, name):
    t = time.monotonic()
    r = run_cli("reproduce", name, "--quick", "--out", tmp_path, check=0)
    took = time.monotonic() - t
    assert took < 60, f"--quick took {took:.0f} s"
    d = tmp_path / name
    report = (d / "report.md").read_text()
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
