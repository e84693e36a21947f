"""`rtsched reproduce chronos2011 --quick` end to end: every claim of ChronOS §5-6 is in claims.json
with the paper's words, a computed verdict and a control, the report's table comes from it, the
numbers are consistent, and the claims can fail (a synthetic frame turns a verdict round). Also
experiment 2's task sets (resources, non-step TUFs, demand below WCET) and the control options."""

import json
import re
import time
from pathlib import Path

import pandas as pd
import pytest

import rtsched
from claims_done import check_done
from rtsched import _core
from rtsched.reproduce import chronos2011 as C
from rtsched.reproduce import claims as K
from rtsched.reproduce import reproduce

#: Every claim of §5-6 the report checks (Figs 5-7, §6.1, §6.3), our run-length check, and
#: experiment 2's two.
IDS = ["C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9", "C10", "C11", "C12", "C13", "D1", "D2"]
#: One phrase of each claim's quote.
PHRASES = {"C1": "miss nearly all deadlines", "C2": "a large percentage of deadlines", "C3": "identical performance in underloads",
           "C4": "meet all deadlines until m/2", "C5": "may miss deadlines earlier", "C6": "free from the \"domino effect\"",
           "C7": "high at low load", "C8": "non-abortive algorithms such as G-EDF display a higher overhead",
           "C9": "significantly higher number of migrations", "C10": "by far the most migrations", "C11": "long enough",
           "C12": "context switches are much more frequent", "C13": "optimal total utility in underload",
           "D1": "dependencies", "D2": "best-effort performance in overloads"}


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("chronos")
    t = time.monotonic()
    path = reproduce("chronos2011", out=out, quick=True)
    return path.read_text(), path.parent, time.monotonic() - t


def test_quick_mode_is_quick(quick):
    assert quick[2] < 45, f"--quick took {quick[2]:.0f} s"


def test_every_claim_is_in_claims_json_with_a_quote_a_verdict_and_a_control(quick):
    report, d, _ = quick
    doc = json.loads((d / "claims.json").read_text())
    by_id = {c["id"]: c for c in doc}
    assert list(by_id) == IDS
    for cid, c in by_id.items():
        assert PHRASES[cid] in c["quote"], (cid, c["quote"])
        assert c["verdict"] in K.VERDICTS and c["why"] and c["metric"] and c["rule"], c
        assert c["control"] and c["control"]["variant"] and c["control"]["verdict"] in K.VERDICTS, c
        assert f"| {cid} |" in report
    header = next(line for line in report.splitlines() if line.startswith("| claim"))
    assert "| the paper |" in header and "| control |" in header
    check_done(doc, "chronos2011")  # the engine's rules on every claim, and the main claims present
    known = {s["name"] for s in rtsched.schedulers()}
    for name in C.SCHEDULERS:
        if name not in known:
            assert f"scheduler {name} ({C.SCHEDULERS[name][0]}) not available in this build" in report


def test_no_verdict_is_written_by_hand():
    src = Path(C.__file__).read_text()
    for word in ('"holds"', '"partly"', '"does not hold"', '"yes"', '"no"', "_verdict", "hence the gap"):
        assert word not in src, word


def test_claims_can_fail():
    """The same claims on made-up numbers: G-EDF keeping half its deadlines in overload turns C1
    round; G-EDF migrating no more than G-NP-EDF turns C9 round."""
    rows = []
    for load in C.LOADS:
        for k in range(4):
            for name in ("gedf", "gnpedf", "nggua", "ggua", "pedf", "nggua-noshed", "gfp"):
                dsr = 0.5 if name in ("gedf", "gnpedf") else 1.0
                rows.append({"scheduler": name, "load": load, "taskset_seed": k, "dsr": dsr, "aur": dsr, "jobs": 100,
                             "met": 100 * dsr, "mig": 0.0 if name in ("gedf", "gnpedf", "pedf") else 0.1 + 0.01 * k,
                             "cs": {"ggua": 3.0, "nggua": 3.0, "gnpedf": 0.8}.get(name, 1.0) + 0.1 * k})
    df = pd.DataFrame(rows)
    spec_of = {n: n for n in df["scheduler"].unique()}
    found = {c.id: c for c in C.claims(df, spec_of)}
    assert found["C1"].verdict == K.NOT
    assert found["C9"].ours.parts[0][2] == K.NOT  # G-EDF − G-NP-EDF = 0
    # Without the kernel's pulls, P-EDF − G-NP-EDF is 0 − 0 by construction: no control.
    assert found["C9"].control is None
    assert found["C2"].ours is not None and all(p[2] != K.NA for p in found["C2"].ours.parts)
    # GUA switches three times as often as SCHED_FIFO; G-NP-EDF (the control) as often.
    assert found["C12"].verdict == K.HOLDS and found["C12"].control.verdict == K.NOT
    # With the kernel's pulls, C9 is judged on them and P-EDF's 0 is a control.
    pulls = df.assign(pulls_per_job=df["scheduler"].map({"gnpedf": 0.05, "pedf": 0.0}).fillna(0.2) + 0.01 * df["taskset_seed"]
                      * (df["scheduler"] != "pedf"))
    c9 = {c.id: c for c in C.claims(pulls, spec_of)}["C9"]
    assert "pulls" in c9.metric and c9.ours.verdict == K.HOLDS and c9.control.verdict == K.NOT and c9.verdict == K.HOLDS
    # a scheduler that did not run is not measured, and says so
    del spec_of["ggua"]
    found = {c.id: c for c in C.claims(df, spec_of)}
    assert found["C5"].verdict == K.CANNOT_TELL and found["C10"].verdict == K.CANNOT_TELL and found["C5"].why() == "not measured"


def test_numbers_are_consistent(quick):
    report, d, _ = quick
    df = pd.read_parquet(d / "sweep-quick.parquet")
    ok = df[df["status"] == "ok"]
    assert len(ok) and ok["aur"].between(0, 1).all() and ok["dsr"].between(0, 1).all()
    assert sorted(ok["point"].round(1).unique()) == C.LOADS
    assert (ok["m"] == C.M).all() and (ok["n"] == 12).all()
    # Σu = load × m on every set (the generator's target, up to WCET rounding).
    assert ((ok["U"] - ok["point"] * C.M).abs() < 1e-3).all()
    low = ok[(ok["scheduler"] == C._spec("gedf")) & (ok["point"].round(1) == 0.2)]
    assert len(low) and (low["dsr"] == 1.0).all() and (low["aur"] == 1.0).all()
    # Non-preemptive EDF never migrates a started job; partitioned EDF never migrates.
    assert (ok[ok["scheduler"].str.split(":").str[0].isin(["gnpedf", "pedf"])]["migrations"] == 0).all()
    # The report's Fig. 5 table shows the same means: G-EDF at 0.2 is 1.000 with a bootstrap interval.
    assert re.search(r"\| G-EDF \| gedf[^|]* \| 0\.2 \| 3 \| 1\.000 \[1\.000, 1\.000\] \| 1\.000 \[1\.000, 1\.000\] \|", report)
    # claims.json's numbers are the frame's: C1's G-EDF part is the mean DSR over the overload points
    c1 = next(c for c in json.loads((d / "claims.json").read_text()) if c["id"] == "C1")
    g = ok[(ok["scheduler"] == C._spec("gedf")) & (ok["point"].round(1) > 1.0)]["dsr"].mean()
    assert c1["ours"]["parts"][0]["label"] == "G-EDF" and abs(c1["ours"]["parts"][0]["estimate"]["value"] - g) < 1e-12
    for e in (p["estimate"] for c in json.loads((d / "claims.json").read_text()) for p in (c["ours"] or {}).get("parts", [])):
        if e["value"] is not None and e["lo"] is not None:
            assert e["lo"] <= e["value"] + 1e-12 and e["value"] <= e["hi"] + 1e-12, e
    deps = pd.read_csv(d / "deps-quick.csv")
    assert deps["aur"].between(0, 1).all() and deps["dsr"].between(0, 1).all() and (deps["blocked_ms_per_job"] >= 0).all()
    assert sorted(deps["load"].unique()) == C.DEP_LOADS


def test_figures_are_in_the_report(quick):
    report, d, _ = quick
    for f in ("dsr", "aur", "migrations", "overhead", "deps"):
        assert (d / f"{f}.png").exists() and (d / f"{f}.svg").exists() and f"]({f}.png)" in report


def test_generated_sets_carry_step_tufs_and_cpus():
    g = rtsched.generate("chronos2011", seed=3, m=4, U=6.0)
    from rtsched.analysis import to_yaml

    text = to_yaml(g.taskset)
    assert text.count("shape: step") == 12 or text.count("tuf:") == 12, text[:400]
    assert text.count("cpu:") == 12
    assert abs(sum(g.utilisations) - 6.0) < 1e-9


def test_experiment_2_sets_have_resources_non_step_tufs_and_demand_below_wcet():
    from rtsched.analysis import to_yaml

    a, b = (to_yaml(C.dep_taskset(7011, 1.4, 2_000_000_000)) for _ in range(2))
    assert a == b, "the same seed gives the same set"
    assert a != to_yaml(C.dep_taskset(7012, 1.4, 2_000_000_000))
    texts = [to_yaml(C.dep_taskset(7000 + k, 1.4, 2_000_000_000)) for k in range(6)]
    joined = "\n".join(texts)
    assert "shape: linear" in joined and "shape: quadratic" in joined
    assert "resource:" in joined and "uniform" in joined
    # a nested section somewhere: a task with two sections, the second on a later resource
    assert any(line.count("resource:") == 2 for t in texts for line in t.splitlines()), joined[:800]
    ts = C.dep_taskset(7011, 1.4, 2_000_000_000)
    r = _core.simulate(ts, C._spec("ggua"), False).jobs_columns()
    assert sum(r["blocked_ns"]) > 0, "some job waits for a resource"
    import yaml

    tasks = yaml.safe_load(to_yaml(ts))["tasks"]
    wcet = {k: rtsched.parse_duration(str(t["wcet"])) for i, t in enumerate(tasks) for k in (i, t["name"])}
    ratio = [d / wcet[t] for t, d in zip(r["task"], r["demand_ns"])]
    assert min(ratio) >= 0.5 - 1e-9 and max(ratio) <= 1 + 1e-9 and sum(x < 0.99 for x in ratio) > len(ratio) / 2


def test_control_options_weaken_what_they_name():
    ts = rtsched.generate("chronos2011", seed=5, m=4, U=7.0).taskset.with_run(duration_ns=5_000_000_000, seed=1, on_miss="continue")
    cols = lambda spec: _core.simulate(ts, spec, False).jobs_columns()  # noqa: E731
    gedf, bare = cols(C._spec("gedf")), cols("nggua:shed=off,abort=off")
    # NG-GUA without shedding and without aborts is G-EDF, job by job
    assert gedf["finish_ns"] == bare["finish_ns"] and gedf["start_ns"] == bare["start_ns"]
    # G-GUA without aborts aborts nothing; with them it does (in overload)
    assert not any(cols("ggua:abort=off")["aborted"]) and any(cols("ggua")["aborted"])
    with pytest.raises(rtsched.InputError, match="no option 'shed'"):
        _core.simulate(ts, "ggua:shed=off", False)


def test_gnpedf_runs_application_concurrent_in_every_part():
    """§5.2.1 names G-NP-EDF as using the application-concurrent model: every spec the module
    builds for it says ``model=ac`` — experiment 1 and the overhead runs (both take
    ``_variants``' specs), the real runs' plan and runs (``_real_backends``, with the testbed's
    ``concurrent`` driver: ``_real_groups``); experiment 2 and the runs without the mapper do
    not run it."""
    specs = [sp for sp, name, _ in C._variants([]) if name == "gnpedf"]
    real = [b for q in (True, False) for part in C.EXPERIMENT.real_plan(q) for b in part.backends]
    real += C._real_backends(C.REAL_BACKENDS)
    specs += [b for b in real if "gnpedf" in b]
    assert len(specs) >= 3 and any(s.startswith("testbed:") for s in specs)
    for s in specs:
        assert re.fullmatch(r"(testbed:)?gnpedf:(.+,)?model=ac(,.+)?", s), s
    assert "gnpedf" not in C.NO_MAPPER
    # On real cores the testbed's driver is application-concurrent for it too (each worker
    # decides for its own CPU), stop-the-world (a decider thread) for the others.
    groups = C._real_groups(C.REAL_BACKENDS)
    assert [b for b in groups["concurrent"]] == ["testbed:gnpedf:model=ac"]
    assert not any("gnpedf" in b for b in groups["stw"])
    assert "--model concurrent" in C.EXPERIMENT.real_plan(False)[0].what
    # The spec runs as the model it names.
    ts = rtsched.generate("chronos2011", seed=1, m=4, U=2.0, n=6).taskset.with_run(duration_ns=200_000_000, seed=1, on_miss="continue")
    assert "model=ac" in _core.simulate(ts, C._spec("gnpedf"), False).scheduler
