"""The paws2013 reproduction on the claims engine: every claim of §5 with a quote, a rule and a
control; claims that fail when the numbers say so; the kernel's migration count and the per-job
priority inversion in the sweep's rows; no verdict written by hand.

One small experiment per module (4 sets per window, 0.5 s each: about a second); the quick
reproduction itself runs in tests/test_reproduce.py."""

import re
from pathlib import Path

import pytest

from rtsched.reproduce import claims as C
from rtsched.reproduce import paws2013 as P
from rtsched.reproduce.experiment import Runs

IDS = ["T1-paws", "T1-sched-deadline", "T1-margin", "S6-inversion", "S4-steal", "S4-aware", "F2-kernel", "F2-entity", "F3",
       "F3-cause", "F2-growth", "F3-growth"]


@pytest.fixture(scope="module", autouse=True)
def small_cells():
    """4 sets per window here (the reproduction runs 20): judged from 3 samples on, so that the
    rules, not the sample size, decide these tests."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(C, "MIN_N", 3)
        yield


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    out = tmp_path_factory.mktemp("paws2013")
    m2 = P.m2_schedulers()
    r = Runs("paws2013", None, True, out, progress=False)
    df = r.sweep(P._spec("t", 2, 4, "500ms", m2), progress=False)
    seq = r.sweep(P._spec("t-seq", 2, 4, "500ms", ["paws", P.SD], parallel=0), table="seq", progress=False)
    margins = P._margins(df, df["duration_ns"].iloc[0], ["paws", P.SD, P.NO_STEAL] + [P.UNAWARE] * (P.UNAWARE in m2))
    return df, seq, margins


def by_id(found):
    return {c.id: c for c in found}


def test_every_claim_has_a_quote_a_rule_a_verdict_and_a_control(small):
    found = P.claims(*small)
    assert [c.id for c in found] == IDS
    for c in found:
        d = c.to_dict()
        assert d["quote"] and d["metric"] and d["rule"] and d["source"].startswith(("§1", "§4", "§5", "§6")), d
        assert d["verdict"] in C.VERDICTS and d["ours"]["verdict"] in C.VERDICTS
        assert d["control"]["variant"] and d["control"]["verdict"] in C.VERDICTS, d
        # Paired over the same sets: each part's estimate has a sample size.
        for p in d["ours"]["parts"]:
            # S4-aware compares with the priority-unaware variant, which a build may lack.
            assert p["estimate"]["n"] > 0 or (c.id == "S4-aware" and P.UNAWARE not in P.m2_schedulers()), (c.id, p)


def test_the_table_1_claims_fail_when_paws_misses(small):
    df, seq, margins = small
    df = df.copy()
    # PAWS misses in 3 of 4 sets at 78-80%: "0 in each window" no longer holds.
    hit = df.index[(df["scheduler"] == "paws") & (df["point"] == 3)][:3]
    df.loc[hit, "missed"] = 1
    c = by_id(P.claims(df, seq, margins))["T1-paws"]
    assert c.ours.verdict == C.NOT and c.verdict == C.NOT
    assert "78-80%: does not hold" in c.why() and "is disjoint from the paper's 0" in c.why()
    # PAWS's worst response per deadline well above SCHED_DEADLINE's: no gain in schedulability.
    worse = {k: v + (0.5 if k[2] == "paws" else 0.0) for k, v in margins.items()}
    c = by_id(P.claims(small[0], seq, worse))["T1-margin"]
    assert c.ours.verdict == C.NOT
    # The same margins: the claim's verdict follows the numbers, never a fixed string.
    better = {k: v - (0.5 if k[2] == "paws" else 0.0) for k, v in margins.items()}
    c = by_id(P.claims(small[0], seq, better))["T1-margin"]
    assert c.ours.verdict == C.HOLDS


def test_fewer_migrations_fails_when_paws_migrates_more(small):
    df, seq, margins = small
    df = df.copy()
    paws = df["scheduler"] == "paws"
    df.loc[paws, "kernel_migrations"] = df.loc[paws, "kernel_migrations"] * 100 + 1000
    c = by_id(P.claims(df, seq, margins))["F2-kernel"]
    assert c.ours.verdict == C.NOT


def test_a_claim_that_holds_under_its_control_cannot_tell(small):
    df, seq, margins = small
    df = df.copy()
    # The control migrates as little as PAWS (none): the locality credited is not what the
    # numbers show, so the claim that holds cannot be credited to it.
    df.loc[df["scheduler"].isin(["paws", P.NO_LOCALITY]), "kernel_migrations"] = 0
    c = by_id(P.claims(df, seq, margins))["F2-kernel"]
    assert (c.ours.verdict, c.control.verdict, c.verdict) == (C.HOLDS, C.HOLDS, C.CANNOT_TELL)
    assert "cannot tell" in c.why()


def test_the_sweep_rows_carry_the_kernels_migrations_and_per_job_inversion(small):
    df = small[0]
    ok = df[df["status"] == "ok"]
    # The kernel counts every resumption elsewhere, and more (steals, fresh threads placed away).
    assert (ok["kernel_migrations"] >= ok["migrations"]).all()
    paws = ok[ok["scheduler"] == "paws"]
    assert (paws["kernel_migrations"] > paws["migrations"]).any()
    # Global EDF on threads has no inversion; PAWS's victims, their maximum and p99 are consistent.
    g = ok[ok["scheduler"] == "gedf"]
    assert (g[["inverted_jobs", "inversion_job_ns", "inversion_job_max_ns", "inversion_job_p99_ns"]] == 0).all().all()
    assert (paws["inverted_jobs"] > 0).any() and (paws["inverted_jobs"] <= paws["jobs"]).all()
    assert (paws["inversion_job_max_ns"] >= paws["inversion_job_p99_ns"]).all()
    assert (paws["inversion_job_ns"] >= paws["inversion_job_max_ns"]).all()
    # The controls: no steal at all without stealing.
    ns = ok[ok["scheduler"] == P.NO_STEAL]
    assert (ns["steals"] == 0).all() and (ns["steal_attempts"] == 0).all()


def test_the_margins_rerun_the_sweeps_sets(small):
    """The worst responses are computed on the very runs of the sweep's rows (same set, same
    demands): the same jobs and the same longest response; above 1 exactly where a set misses."""
    import rtsched
    from rtsched import _core

    df, _, margins = small
    for (w, seed, s), r in margins.items():
        row = df[(df["point"] == w) & (df["taskset_seed"] == seed) & (df["scheduler"] == s)].iloc[0]
        assert (r > 1) == bool(row["missed"] > 0), (w, seed, s, r)
        ts = rtsched.generate("paws2013", seed=seed, m=2, window=w).taskset.with_run(duration_ns=int(row["duration_ns"]), seed=seed)
        c = _core.simulate(ts, s, False).jobs_columns()
        assert len(c["release_ns"]) == row["jobs"]
        assert max(x for x in c["response_ns"] if x is not None) == row["max_response_ns"]


def test_contains_judges_the_papers_count():
    """Our count reproduces the paper's only as precisely as the paper's own (Wilson's interval of
    its count of 20): 0 of 20 is disjoint from nothing the paper's 4 of 20 allows, so it cannot
    tell; 4 of 20 reproduces it."""
    four = C.Contains.count(4, 20)
    assert four.judge(C.proportion(4, 20))[0] == C.HOLDS
    assert four.judge(C.proportion(0, 20))[0] == C.CANNOT_TELL
    assert four.judge(C.proportion(16, 20))[0] == C.NOT
    assert C.Contains.count(0, 20).judge(C.proportion(0, 20))[0] == C.HOLDS
    assert C.Contains.count(0, 20).judge(C.nothing())[0] == C.CANNOT_TELL


def test_no_control_is_its_comparator(small):
    """F3-cause's control is the lowest load, not gedf against gedf (and not gedf-dist:wake=free,
    which gives gedf's very counts: reported in its notes); F2/F3 compare with gedf-dist only
    (PAWS without locality is gedf itself); T1-sched-deadline's control is PAWS, not gedf
    (gedf-dist's very schedule)."""
    found = by_id(P.claims(*small))
    # (Elsewhere a control may coincide with its comparator on 4 sets — a set's worst response
    # untouched by how PAWS steals — which the engine refuses; tests/claims_done.py checks the
    # quick run's 20 sets for a control identical by construction.)
    for cid in ("F3-cause", "F2-kernel", "F2-entity", "F3"):
        for cell in found[cid].control.cells():
            assert cell[1] is None or not cell[1].same, (cid, cell[0])
    cause = found["F3-cause"]
    assert "lowest load" in cause.control_variant and len(cause.ours.parts) == 3
    assert any("placement accounts for the whole excess" in n for n in cause.notes)
    assert len(found["F3"].ours.parts) == 4 and "PAWS / gedf" in found["F3"].notes[0]
    assert "PAWS in gedf-dist's place" in found["T1-sched-deadline"].control_variant


def test_no_verdict_or_explanation_is_written_by_hand():
    src = Path(P.__file__).read_text()
    for word in ('"holds"', '"partly"', '"does not hold"', '"yes"', '"no"'):
        assert word not in src, word
    assert "_verdict" not in src
    # The stale attribution is gone: the paper does not explain SCHED_DEADLINE's misses by GFB.
    assert not re.search(r"explains? SCHED_DEADLINE's misses by the GFB", src)
