"""Schedulability tests as sweep entries (``test:NAME``, ``test:partition:HEURISTIC``): their rows
carry the test's verdict; one figure shows tests and simulation together; the verdicts agree
with the simulation they bound (a sufficient test never accepts a set the simulation sees
miss; a set the simulation schedules meets the necessary condition)."""

import copy

import numpy as np
import pytest
import yaml

import rtsched
from conftest import run_cli
from rtsched import plots

FOUR = ["gedf", "test:gedf-gfb", "test:gedf-bcl", "test:partition:ffd"]


def spec_of(**over):
    d = {"name": "t", "seed": 11, "generator": {"name": "randfixedsum", "params": {"n": 6, "m": 2, "tmin": "5ms", "tmax": "50ms"}},
         "utilisation": {"points": [0.8, 1.2, 1.6, 1.9]}, "schedulers": FOUR, "seeds": 12, "duration": "500ms"}
    d.update(over)
    return d


@pytest.fixture(scope="module")
def table():
    """Tests and the simulations they bound, on the same sets."""
    return rtsched.sweep(spec_of(schedulers=FOUR + ["pedf:ffd", "test:necessary"]), workers=1, progress=False)


def by_set(df):
    """One row per task set, a column per scheduler: its ``schedulable``."""
    return df.pivot_table(index=["generator", "point", "replication"], columns="scheduler", values="schedulable",
                          aggfunc="first")


def test_test_rows_carry_the_verdict_and_no_metrics(table):
    tests = table[table["kind"] == "test"]
    sims = table[table["kind"] == "sim"]
    assert set(tests["scheduler"]) == {"test:gedf-gfb", "test:gedf-bcl", "test:partition:ffd", "test:necessary"}
    assert set(sims["scheduler"]) == {"gedf", "pedf:ffd"}
    assert tests["dsr"].isna().all() and tests["jobs"].isna().all()
    assert sims["verdict"].isna().all() and sims["dsr"].notna().any()
    # `schedulable` of a test's row is a proof: verdict true, never an inconclusive one.
    assert (tests["schedulable"] == (tests["verdict"] == True)).all()  # noqa: E712 - a nullable bool
    assert tests["verdict"].isna().any(), "GFB/BCL are inconclusive on some sets"
    assert (tests.groupby("scheduler")["schedulable"].mean().between(0.0, 1.0)).all()


def test_sufficient_tests_never_accept_a_set_the_simulation_sees_miss(table):
    s = by_set(table)
    for test, sim in [("test:gedf-gfb", "gedf"), ("test:gedf-bcl", "gedf"), ("test:partition:ffd", "pedf:ffd")]:
        accepted = s[s[test]]
        assert len(accepted) >= 5, f"{test} accepted too few sets to say anything"
        assert accepted[sim].all(), f"{test} accepted sets {sim} missed on: {list(accepted[~accepted[sim]].index)}"
    # The necessary condition bounds every scheduler from above.
    assert s.loc[s["gedf"] | s["pedf:ffd"], "test:necessary"].all()


def test_the_soundness_check_fails_when_the_test_is_weakened(table):
    # Negative control: read an inconclusive GFB as a pass (the test weakened to "not refuted")
    # and the check above finds sets gedf missed on.
    t = table.copy()
    gfb = t["scheduler"] == "test:gedf-gfb"
    t.loc[gfb, "schedulable"] = t.loc[gfb, "verdict"].fillna(True).astype(bool)
    s = by_set(t)
    assert not s.loc[s["test:gedf-gfb"], "gedf"].all()


def test_four_curves_on_one_figure(table, tmp_path):
    df = table[table["scheduler"].isin(FOUR)]
    fig = plots.schedulability(df, tmp_path / "acc")
    ax = fig.axes[0]
    labels = ax.get_legend().get_texts()
    # In key order: the simulation, then the tests.
    assert [t.get_text() for t in labels] == ["gedf (simulation)", "test:gedf-bcl", "test:gedf-gfb", "test:partition:ffd"]
    styles = {c.get_label(): c.lines[0].get_linestyle() for c in ax.containers}
    assert styles == {"gedf (simulation)": "-", "test:gedf-bcl": "--", "test:gedf-gfb": "--", "test:partition:ffd": "--"}
    assert fig._suptitle.get_text() == "acceptance ratio: tests and simulation"
    assert (tmp_path / "acc.png").stat().st_size > 0
    # The plotted ratios are the table's.
    ratios = df.groupby(["scheduler", "point"])["schedulable"].mean()
    assert ratios.loc["test:partition:ffd"].iloc[0] == 1.0
    w = plots.weighted(df).set_index("scheduler")
    assert set(w.index) == set(FOUR)
    for s in FOUR:
        rows = df[df["scheduler"] == s]
        u = rows["U"].to_numpy(float)
        assert w.loc[s, "W"] == pytest.approx((u * rows["schedulable"].to_numpy(bool)).sum() / u.sum())
        assert w.loc[s, "low"] <= w.loc[s, "W"] <= w.loc[s, "high"]


def test_the_cli_writes_the_acceptance_and_weighted_figures(tmp_path):
    spec = spec_of(seeds=3, output=str(tmp_path / "t.parquet"))
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(spec))
    r = run_cli("sweep", path, "-j", "1", "-q")
    assert "t-{dsr,migrations,schedulability,tardiness,weighted}" in r.stdout, r.stdout
    # Resumed: nothing to compute (a test's row is not taken for one missing its metrics).
    r = run_cli("sweep", path, "-j", "1")
    assert "nothing to run" in r.stderr, r.stderr
    # A sweep of tests alone: no simulation figures.
    spec = spec_of(seeds=2, schedulers=["test:gedf-gfb"], output=str(tmp_path / "only.csv"))
    path.write_text(yaml.safe_dump(spec))
    r = run_cli("sweep", path, "-j", "1", "-q")
    assert "only-{schedulability,weighted}" in r.stdout, r.stdout
    from rtsched.sweep import read_table

    df = read_table(tmp_path / "only.csv")
    assert str(df["verdict"].dtype) == "boolean" and set(df["kind"]) == {"test"}


def test_overheads_in_the_run_options_reach_the_tests():
    plain = spec_of(seeds=4, schedulers=["test:gedf-gfb", "test:partition:wfd"])
    charged = copy.deepcopy(plain)
    charged["run"] = {"overheads": {"context_switch": "500us", "decision": "100us", "release": "100us"}}
    a = rtsched.sweep(plain, workers=1, progress=False).groupby("scheduler")["schedulable"].sum()
    b = rtsched.sweep(charged, workers=1, progress=False).groupby("scheduler")["schedulable"].sum()
    assert (b <= a).all() and (b < a).any(), (a, b)


def test_a_test_that_does_not_apply_says_so(tmp_path):
    df = rtsched.sweep(spec_of(seeds=2, schedulers=["test:edf-exact", "test:p-edf-exact"]), workers=1, progress=False)
    assert set(df["status"]) == {"not-applicable"}
    assert df["error"].str.contains("uniprocessor test, and the set has 2 CPUs").any()
    assert df["error"].str.contains("needs every task to give its CPU").any()
    assert not df["schedulable"].any()
    fig = plots.schedulability(df)
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "sets the test does not apply to: count/total" in texts


@pytest.mark.parametrize("name, words", [
    ("test:gedf-bc", ["'test:gedf-bc'", "did you mean 'test:gedf-bcl'"]),
    ("test:partition:ffd+global", ["'global' always succeeds"]),
    ("test:partition:fdd", ["unknown partitioner 'fdd'"]),
])
def test_a_bad_test_name_is_refused_naming_the_field(tmp_path, name, words):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(spec_of(schedulers=["gedf", name])))
    r = run_cli("sweep", path, "-q", check=2)
    assert "schedulers" in r.stderr and "Traceback" not in r.stderr, r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


def test_verdict_reads_back_from_csv_with_its_empty_cells(tmp_path):
    out = tmp_path / "t.csv"
    df = rtsched.sweep(spec_of(seeds=2), output=out, workers=1, progress=False)
    from rtsched.sweep import read_table

    back = read_table(out)
    assert str(back["verdict"].dtype) == "boolean"
    assert np.array_equal(back.sort_values("key")["verdict"].isna().to_numpy(), df.sort_values("key")["verdict"].isna().to_numpy())


def test_dag_tests_never_accept_a_set_their_scheduler_misses_on():
    # DAG sets (layered random graphs, some heavier than a CPU): the federated admission
    # bounds the federated scheduler, the capacity-augmentation bound global EDF.
    spec = spec_of(generator={"name": "dag-layered", "params": {"n": 4, "m": 4, "nodes": "8..20", "layers": "3..4",
                                                                "u_max": 2, "tmin": "5ms", "tmax": "50ms"}},
                   utilisation={"points": [0.5, 1.0, 1.5, 2.0, 3.0]}, seeds=10,
                   schedulers=["gedf", "federated", "test:federated", "test:gedf-dag-li", "test:necessary"])
    df = rtsched.sweep(spec, workers=1, progress=False)
    s = by_set(df)
    for test, sim in [("test:federated", "federated"), ("test:gedf-dag-li", "gedf")]:
        accepted = s[s[test]]
        assert len(accepted) >= 5, f"{test} accepted too few sets to say anything"
        assert accepted[sim].all(), f"{test} accepted sets {sim} missed on: {list(accepted[~accepted[sim]].index)}"
    assert s.loc[s["gedf"] | s["federated"], "test:necessary"].all()
    assert set(df.loc[df["kind"] == "test", "status"]) == {"ok"}


def _prefix_literals(root):
    """(file, line) of every Python string literal that is the prefix itself (``"test:"``)."""
    import io
    import tokenize
    from pathlib import Path

    hits = []
    for path in sorted(Path(root).rglob("*.py")):
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
            if tok.type == tokenize.STRING and tok.string.strip("\"'") == "test:":
                hits.append((path.name, tok.start[0]))
    return hits


def test_the_test_prefix_is_written_once_in_rust(tmp_path):
    """``test:`` is ``rtsched_sweep::TEST_PREFIX`` (crates/sweep/src/row.rs), read through ``_core``;
    no Python source spells it again (a made-up file that does is caught)."""
    from pathlib import Path

    from rtsched import _core
    from rtsched.sweep import schema

    assert _core.TEST_PREFIX == "test:" and schema.TEST_PREFIX is _core.TEST_PREFIX
    assert _prefix_literals(Path(rtsched.__file__).parent) == []
    (tmp_path / "copy.py").write_text('PREFIX = "test:"  # a second definition\n')
    assert _prefix_literals(tmp_path) == [("copy.py", 1)]
