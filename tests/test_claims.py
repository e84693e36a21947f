"""The claims engine (python/rtsched/reproduce/claims.py): intervals, rules, controls, and the
claims.json a reproduction writes. Verdicts must be able to fail: each rule is tried on
numbers that hold, fail and straddle its threshold."""

import json

import numpy as np
import pytest

from rtsched.reproduce import claims as C


def test_intervals_cover_what_they_should_and_are_reproducible():
    rng = np.random.default_rng(7)
    a = rng.normal(10, 1, 50)
    b = a / 2 + rng.normal(0, 0.05, 50)  # a is twice b, set by set
    r = C.ratio_of_means(a, b)
    assert r.lo < 2.0 < r.hi and r.hi - r.lo < 0.1 and r.n == 50
    assert C.ratio_of_means(a, b) == r  # seeded: the same numbers, the same interval
    d = C.mean_difference(a, b)
    assert d.lo < (a - b).mean() < d.hi and d.hi - d.lo < 0.5 and abs(d.value - 5) < 0.3
    s = C.loglog_slope([2, 4, 8, 16, 32] * 3, [2, 4, 8, 16, 32] * 3)
    assert s.value == pytest.approx(1.0) and s.lo == pytest.approx(1.0)
    # Wilson's interval (scipy): 3 of 17 is 0.176 in [0.062, 0.41].
    p = C.proportion(3, 17)
    assert (round(p.lo, 3), round(p.hi, 3)) == (0.062, 0.41)
    assert C.proportion(0, 0).n == 0


def test_the_vectorised_bootstrap_is_the_resample_by_resample_one():
    """mean, mean_difference and ratio_of_means gather every resample at once (C.bootstrap);
    their intervals are, to the bit, those of one statistic call per resample."""
    rng = np.random.default_rng(11)
    a, b = rng.random(37), rng.random(37) + 0.2

    def slow(stat):
        return C._bootstrap(stat, len(a), 1)

    assert (C.mean(a).value, C.mean(a).lo, C.mean(a).hi) == slow(lambda i: a[i].mean())
    d = C.mean_difference(a, b)
    assert (d.value, d.lo, d.hi) == slow(lambda i: (a - b)[i].mean())
    r = C.ratio_of_means(a, b)
    assert (r.value, r.lo, r.hi) == slow(lambda i: a[i].mean() / b[i].mean())
    share = C.bootstrap(lambda i: (a[i].mean(1) - b[i].mean(1)) / a[i].mean(1), len(a), "share", seed=3)
    assert (share.value, share.lo, share.hi) == C._bootstrap(lambda i: (a[i].mean() - b[i].mean()) / a[i].mean(), len(a), 3)


@pytest.mark.parametrize("rule,lo,hi,verdict", [
    (C.Above(2.0), 2.1, 2.5, C.HOLDS), (C.Above(2.0), 1.5, 2.0, C.NOT), (C.Above(2.0), 1.9, 2.3, C.PARTLY),
    (C.Below(1.0), 0.5, 0.9, C.HOLDS), (C.Below(1.0), 1.0, 1.2, C.NOT), (C.Below(1.0), 0.9, 1.1, C.PARTLY),
    (C.Within(0.8, 1.2), 0.9, 1.1, C.HOLDS), (C.Within(0.8, 1.2), 1.3, 1.5, C.NOT), (C.Within(0.8, 1.2), 1.1, 1.4, C.PARTLY),
    (C.Above(0.0), float("nan"), float("nan"), C.NA),
])
def test_a_rule_maps_the_interval_not_the_point(rule, lo, hi, verdict):
    e = C.Estimate((lo + hi) / 2, lo, hi, 10, "test")
    assert rule.judge(e)[0] == verdict


def test_a_claim_that_holds_under_its_control_cannot_tell():
    c = C.Claim("X1", "§1", "A is more than double B", "A / B", C.Above(2.0, "more than double"), control_variant="A without its mechanism")
    c.ours = c.measure(C.Estimate(3.0, 2.5, 3.5, 20, "test"))
    c.control = c.measure(C.Estimate(1.0, 0.9, 1.1, 20, "test"))
    assert c.verdict == C.HOLDS and "under the control (A without its mechanism) it does not hold" in c.why()
    c.control = c.measure(C.Estimate(2.9, 2.4, 3.4, 20, "test"))
    assert c.verdict == C.CANNOT_TELL and "cannot tell" in c.why()
    # A control that could not be measured shows nothing either.
    c.control = c.measure(C.nothing())
    assert c.verdict == C.CANNOT_TELL and "was not measured" in c.why()
    c.control = None
    assert c.verdict == C.CANNOT_TELL
    # A claim that does not hold keeps its verdict whatever its control.
    c.ours = c.measure(C.Estimate(1.0, 0.9, 1.1, 20, "test"))
    assert c.verdict == C.NOT


def test_parts_combine_into_one_verdict():
    assert C.combine([C.HOLDS, C.HOLDS]) == C.HOLDS
    assert C.combine([C.HOLDS, C.NOT]) == C.PARTLY
    assert C.combine([C.NOT, C.NOT, C.NA]) == C.NOT
    assert C.combine([C.NA]) == C.NA


def test_claims_json_has_every_field_and_no_nan(tmp_path):
    c = C.Claim("X1", "§1, Fig 2", "A beats B", "A / B", C.Below(1.0), control_variant="B in A's place")
    c.ours = c.measure_parts([("R = 0.6", C.Estimate(0.5, 0.4, 0.6, 5, "t")), ("R = 0.8", C.nothing())])
    c.control = c.measure(C.Estimate(1.0, 1.0, 1.0, 5, "t"))
    path = C.write([c], tmp_path)
    (doc,) = json.loads(open(path).read())
    assert {"id", "source", "quote", "metric", "ours", "verdict", "control"} <= set(doc)
    assert doc["verdict"] == C.HOLDS and doc["control"]["variant"] == "B in A's place" and doc["control"]["verdict"] == C.NOT
    assert doc["ours"]["parts"][1]["estimate"]["value"] is None  # NaN written as null
    headers, rows = C.table([c])
    assert rows[0][0] == "X1" and "**holds**" in rows[0][5] and rows[0][4].startswith("R = 0.6: 0.5 [0.4, 0.6]")
    assert "NaN" not in open(path).read()


def test_lelli2011_quick_writes_its_claims_computed_with_controls(tmp_path):
    """The first reproduction on the claims engine: every claim with its quote, a verdict from
    the numbers and a control; the module types no verdict of its own."""
    import inspect

    from conftest import run_cli
    from rtsched.reproduce import lelli2011

    run_cli("reproduce", "lelli2011", "--quick", "--out", tmp_path, check=0)
    doc = json.loads((tmp_path / "lelli2011" / "claims.json").read_text())
    assert [c["id"] for c in doc][:7] == ["L1", "L2", "L3", "L4", "L5", "L6", "L7"] and len(doc) == 14
    for c in doc:
        assert c["quote"] and c["source"].startswith("§6.3") and c["verdict"] in C.VERDICTS, c
        assert c["control"]["variant"] and c["control"]["verdict"] in C.VERDICTS, c
    by = {c["id"]: c for c in doc}
    # Counted work is deterministic: the original scan reads m CPUs a push (slope 1), the heap's
    # root does not grow with m, so L1 holds and its control does not.
    assert by["L1"]["verdict"] == C.HOLDS and by["L1"]["control"]["verdict"] == C.NOT
    report = (tmp_path / "lelli2011" / "report.md").read_text()
    assert "| L1 | §6.3, Figs 8-9 |" in report
    source = inspect.getsource(lelli2011)
    for word in ('"holds"', '"partly"', '"does not hold"', '"yes"', '"no"'):
        assert word not in source, word


#: The reproductions, each on the claims engine.
REPRODUCTIONS = ("lelli2011", "paws2013", "lwfg2012", "opzone2012", "chronos2011")


@pytest.mark.parametrize("name", REPRODUCTIONS)
def test_no_reproduction_types_a_verdict_of_its_own(name):
    """Verdict words live in claims.py only: a reproduction's module (and its real part) holds
    none of them as a literal, and no `_verdict` helper of its own."""
    import importlib
    import inspect

    modules = [importlib.import_module(f"rtsched.reproduce.{name}")]
    if name == "opzone2012":
        modules.append(importlib.import_module("rtsched.reproduce.opzone_real"))
    for mod in modules:
        source = inspect.getsource(mod)
        for word in ('"holds', '"partly', '"does not hold', "'holds", "'partly", "'does not hold", '"yes"', '"no"'):
            assert word not in source, f"{mod.__name__} types {word}"
        assert "def _verdict" not in source, mod.__name__
    assert ".claims(" in inspect.getsource(modules[0]), f"{name} does not go through Report.claims"
