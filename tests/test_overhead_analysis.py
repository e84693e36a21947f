"""Overhead-aware analysis from the CLI and the API (docs/overheads.md, "Overhead-aware
analysis"): `rtsched analyze --overheads PROFILE` shows the plain and the overhead-aware verdict
of every test side by side with the inflated WCETs; `rtsched partition` admits on inflated
WCETs; bad profiles exit 2 naming the field.

Hand-worked on examples/dhall.yaml (heavy: C = 10ms, D = T = 11ms, alone on CPU 1) with
tests/data/overheads-profile.yaml:
- p99: decision 10us + context switch 20us, tick 100us every 1ms, release 50us:
  C'' = ⌈(10ms + 2·30us + 100us)·1ms/900us⌉ = 11288889ns > D' = 10.95ms — not proven;
- median: decision 2us + cs 5us, tick 20us, release 10us:
  C'' = ⌈(10ms + 14us + 20us)·1ms/980us⌉ = 10238776ns ≤ D' = 10.99ms — schedulable.
"""

import re

import rtsched
from conftest import EXAMPLES, ROOT, run_cli

PROFILE = ROOT / "tests" / "data" / "overheads-profile.yaml"
DHALL = EXAMPLES / "dhall.yaml"


def _row(stdout, test):
    """The cells of the verdict table's row for `test` (columns split on 2+ spaces)."""
    for line in stdout.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells[0] == test:
            return cells
    raise AssertionError(f"no row for {test} in\n{stdout}")


def test_analyze_shows_plain_and_overhead_aware_verdicts():
    r = run_cli("analyze", DHALL, "--overheads", PROFILE, check=0)
    assert "plain" in r.stdout and "with overheads" in r.stdout, r.stdout
    assert "p99 of" in r.stdout and "overheads-profile.yaml" in r.stdout
    row = _row(r.stdout, "p-edf-exact")
    assert row[1:3] == ["schedulable", "inconclusive"], row
    assert "inflated" in row[-1]
    heavy = _row(r.stdout, "heavy")
    assert heavy[1:6] == ["10000.000", "11000.000", "11000.000", "11288.889", "10950.000"], heavy
    r = run_cli("analyze", DHALL, "--overheads", PROFILE, "--statistic", "median", check=0)
    assert _row(r.stdout, "p-edf-exact")[1:3] == ["schedulable", "schedulable"]
    assert _row(r.stdout, "heavy")[4] == "10238.776"
    # Without overheads nothing changes: one verdict column.
    r = run_cli("analyze", DHALL, check=0)
    assert "with overheads" not in r.stdout and "verdict" in r.stdout


def test_api_gives_the_inflation(tmp_path):
    oa = rtsched.analysis.overhead_analysis(str(DHALL), str(PROFILE))
    heavy = next(t for t in oa["tasks"] if t["name"] == "heavy")
    assert (heavy["wcet_partitioned_ns"], heavy["deadline_inflated_ns"], heavy["dispatches_partitioned"]) == (11_288_889, 10_950_000, 2)
    # Global EDF: light1 and light2 (D = 10ms) can each preempt heavy once (⌈1ms/10ms⌉):
    # 3 dispatches, 2 migrations: ⌈(10ms + 3·(30us + 100us) + 2·80us)/0.9⌉ = 11722223ns.
    assert (heavy["wcet_global_ns"], heavy["dispatches_global"], heavy["migrations_global"]) == (11_722_223, 3, 2)
    # Global FP (RM = DM here): heavy has the lowest priority, and each light task's jobs can
    # preempt it ⌈D'/T⌉ = ⌈10.95ms/10ms⌉ = 2 times: 5 dispatches, 4 migrations:
    # ⌈(10ms + 5·130us + 4·80us)/0.9⌉ = 12188889ns. No file priorities: none.
    for by in ("rm", "dm"):
        assert (heavy[f"wcet_gfp_{by}_ns"], heavy[f"dispatches_gfp_{by}"], heavy[f"migrations_gfp_{by}"]) == (12_188_889, 5, 4)
    assert heavy["wcet_gfp_file_ns"] is None
    assert oa["costs"]["tick"] == 100_000 and oa["costs"]["tick_period"] == 1_000_000
    merged = rtsched.analyze(str(DHALL), overheads=str(PROFILE))
    pe = next(v for v in merged if v["test"] == "p-edf-exact")
    assert (pe["schedulable"], pe["with_overheads"]) == (True, None)
    assert all("with_overheads" not in v for v in rtsched.analyze(str(DHALL)))
    assert rtsched.analysis.overhead_analysis(str(DHALL)) is None
    # A task file that loads the profile itself is analysed with it, no --overheads needed.
    f = tmp_path / "dhall-oh.yaml"
    f.write_text(DHALL.read_text().replace("on_miss: continue}", f"on_miss: continue, overheads: {{profile: {PROFILE}, statistic: p99}}}}"))
    r = run_cli("analyze", f, check=0)
    assert "run.overheads" in r.stdout and _row(r.stdout, "p-edf-exact")[1:3] == ["schedulable", "inconclusive"], r.stdout


def test_bad_profiles_exit_2_naming_the_field(tmp_path):
    for name, needles in [("overheads-missing-cost.yaml", ["costs.migration", "p99", "missing"]),
                          ("overheads-negative-cost.yaml", ["costs.tick", "median"])]:
        for cmd in (["analyze", DHALL], ["partition", DHALL]):
            r = run_cli(*cmd, "--overheads", ROOT / "tests" / "data" / name)
            assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
            assert all(n in r.stderr for n in needles) and name in r.stderr, r.stderr
    r = run_cli("analyze", DHALL, "--overheads", tmp_path / "nope.yaml")
    assert r.returncode == 2 and "nope.yaml" in r.stderr
    r = run_cli("analyze", DHALL, "--statistic", "p99")
    assert r.returncode == 2 and "--overheads" in r.stderr


def test_partition_admits_on_inflated_wcets(tmp_path):
    # u = .5, .5, .8 on 2 CPUs: FFD pairs the two halves (1.0 exactly) plainly; with the p99
    # overheads c inflates to 8.16ms/0.9 = 9.07ms and each half to ⌈(5ms + 60us + 100us)/0.9⌉ =
    # 5.733ms: c goes to CPU 0, a to CPU 1, and b fits beside neither.
    f = tmp_path / "ts.yaml"
    f.write_text("platform: {cpus: 2}\nrun: {duration: 100}\ntasks:\n  - {name: a, period: 10, wcet: 5}\n"
                 "  - {name: b, period: 10, wcet: 5}\n  - {name: c, period: 10, wcet: 8}\n")
    run_cli("partition", f, "--heuristic", "ffd", check=0)
    r = run_cli("partition", f, "--heuristic", "ffd", "--overheads", PROFILE)
    assert r.returncode == 2 and "with overheads, inflated u=0.5733" in r.stderr and "task 'b'" in r.stderr, r.stderr
    # Light enough sets partition, say what they charged, and the overhead-charged simulator
    # (the same profile loaded by the task file) meets every deadline of that partition.
    f.write_text(f"platform: {{cpus: 2}}\nrun: {{duration: 200, overheads: {{profile: {PROFILE}, statistic: p99}}}}\ntasks:\n"
                 "  - {name: a, period: 10, wcet: 4}\n  - {name: b, period: 5, wcet: 2}\n  - {name: c, period: 20, wcet: 9}\n"
                 "  - {name: d, period: 4, wcet: 1}\n")
    out = tmp_path / "p.yaml"
    run_cli("partition", f, "--heuristic", "wfd", "-o", out, check=0)
    assert "overheads charged" in out.read_text().splitlines()[0]
    assert rtsched.simulate(out, "pedf").summary["missed"] == 0
    assert rtsched.simulate(f, "pedf:wfd").summary["missed"] == 0
