"""`rtsched reproduce chronos2011 --quick` end to end: every claim of ChronOS §6 is in the report
with a verdict, the numbers are consistent, and schedulers this build lacks are named, not fatal."""

import re
import time

import pandas as pd
import pytest

import rtsched
from rtsched.reproduce import chronos2011 as C
from rtsched.reproduce import reproduce

#: One phrase of each claim of §6 the report must carry (Figs 5-7 and §6.1), plus our run-length check.
CLAIMS = ["miss nearly all deadlines", "meet 'a large percentage of deadlines'", "identical performance in underloads",
          "meet all deadlines until m/2", "may miss deadlines earlier", "free from the domino effect",
          "overhead is higher than G-EDF's at low load", "G-EDF's overhead exceeds the abortive UA",
          "migrate 'significantly' more than G-NP-EDF", "by far the most migrations", "runs are long enough"]
VERDICT = re.compile(r"^(holds|partly|does not hold|not tested)")


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("chronos")
    t = time.monotonic()
    path = reproduce("chronos2011", out=out, quick=True)
    return path.read_text(), path.parent, time.monotonic() - t


def _claim_rows(report):
    rows = []
    lines = report.splitlines()
    start = lines.index("## The paper's claims beside rtsched's numbers")
    for line in lines[start + 4:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows.append(cells)
    return rows


def test_quick_mode_is_quick(quick):
    assert quick[2] < 45, f"--quick took {quick[2]:.0f} s"


def test_every_claim_has_a_verdict(quick):
    rows = _claim_rows(quick[0])
    for phrase in CLAIMS:
        hit = [r for r in rows if phrase in r[0]]
        assert len(hit) == 1, f"claim {phrase!r}: {len(hit)} rows"
        assert VERDICT.match(hit[0][3]), hit[0]
    known = {s["name"] for s in rtsched.schedulers()}
    for name in C.SCHEDULERS:
        if name not in known:
            assert f"scheduler {name} ({C.SCHEDULERS[name][0]}) not available in this build" in quick[0]


def test_numbers_are_consistent(quick):
    df = pd.read_parquet(quick[1] / "sweep-quick.parquet")
    ok = df[df["status"] == "ok"]
    assert len(ok) and ok["aur"].between(0, 1).all() and ok["dsr"].between(0, 1).all()
    assert sorted(ok["point"].round(1).unique()) == C.LOADS
    assert (ok["m"] == C.M).all() and (ok["n"] == 12).all()
    # Σu = load × m on every set (the generator's target, up to WCET rounding).
    assert ((ok["U"] - ok["point"] * C.M).abs() < 1e-3).all()
    gedf = [s for s in ok["scheduler"].unique() if s.split(":")[0] == "gedf"]
    assert gedf, "gedf always exists"
    low = ok[(ok["scheduler"].isin(gedf)) & (ok["point"].round(1) == 0.2)]
    assert len(low) and (low["dsr"] == 1.0).all() and (low["aur"] == 1.0).all()
    # Non-preemptive EDF never migrates a started job; partitioned EDF never migrates.
    assert (ok[ok["scheduler"].str.split(":").str[0].isin(["gnpedf", "pedf"])]["migrations"] == 0).all()
    # The report's Fig. 5 table shows the same means: G-EDF at 0.2 is 1.000.
    assert re.search(r"\| G-EDF \| gedf[^|]* \| 0\.2 \| 3 \| 1\.000 ± 0\.000 \| 1\.000 ± 0\.000 \|", quick[0])
    for m in re.finditer(r"\| (\d\.\d{3}) ± \d\.\d{3} \| (\d\.\d{3}) ± \d\.\d{3} \| [\d.]+ ± [\d.]+ \|$", quick[0], re.M):
        assert 0 <= float(m.group(1)) <= 1 and 0 <= float(m.group(2)) <= 1


def test_figures_are_in_the_report(quick):
    report, d, _ = quick
    for f in ("dsr", "aur", "migrations", "overhead"):
        assert (d / f"{f}.png").exists() and f"]({f}.png)" in report


def test_generated_sets_carry_step_tufs_and_cpus():
    g = rtsched.generate("chronos2011", seed=3, m=4, U=6.0)
    from rtsched.analysis import to_yaml

    text = to_yaml(g.taskset)
    assert text.count("shape: step") == 12 or text.count("tuf:") == 12, text[:400]
    assert text.count("cpu:") == 12
    assert abs(sum(g.utilisations) - 6.0) < 1e-9
