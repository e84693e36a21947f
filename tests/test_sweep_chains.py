"""Sweeps over chain sets (docs/chains.md "Generators" and "Sweeps"): the chain generators run
from a spec as any other, each row carries the largest latency / data age / reaction time over
its set's chain instances — the same as simulating that row's set alone and taking the maximum
of ``Result.chains`` — empty for a set without chains (and such a row is not stale), and the
figures draw them against utilisation."""

import importlib
import json
import math

import pandas as pd
import pytest

import rtsched
from conftest import run_cli

S = importlib.import_module("rtsched.sweep")

CHAIN_COLUMNS = ["chain_latency_max_ns", "chain_data_age_max_ns", "chain_reaction_time_max_ns"]


def spec(**over):
    d = {
        "name": "chains",
        "seed": 5,
        "generators": [
            {"name": "ros2-tree", "params": {"n": 6, "m": 2, "p_join": 0.3}, "label": "ros2"},
            {"name": "waters2015-chains", "params": {"m": 1, "chains": 3, "communication": "let"}, "label": "waters"},
            {"name": "randfixedsum", "params": {"n": 4, "m": 2}, "label": "plain"},
        ],
        "utilisation": {"points": [0.4, 0.8]},
        "schedulers": ["gfp:rm"],
        "seeds": 2,
        "duration": "2s",
    }
    d.update(over)
    return d


@pytest.fixture(scope="module")
def table():
    return rtsched.sweep(S.parse_spec(spec()), workers=1, progress=False)


def test_the_catalogue_gives_the_chain_columns_to_the_table():
    from rtsched.sweep.table import CHAIN_COLUMNS as declared
    from rtsched.sweep.table import COLUMNS

    assert declared == CHAIN_COLUMNS
    assert set(CHAIN_COLUMNS) <= set(COLUMNS)


def _simulated_alone(row):
    """The row's set, generated and simulated alone: its chains' instances."""
    params = json.loads(row["gen_params"])
    g = rtsched.generate(row["generator_name"], seed=int(row["taskset_seed"]), **params)
    r = rtsched.simulate(g.taskset, row["scheduler"], duration="2s", seed=int(row["taskset_seed"]))
    return r.chains


def test_rows_carry_each_sets_largest_chain_metrics(table):
    assert (table["status"] == "ok").all()
    names = {"ros2": "ros2-tree", "waters": "waters2015-chains", "plain": "randfixedsum"}
    for _, row in table.iterrows():
        row = dict(row, generator_name=names[row["generator"]])
        chains = _simulated_alone(row)
        for col, inst in zip(CHAIN_COLUMNS, ["latency_ns", "data_age_ns", "reaction_time_ns"]):
            want = chains[inst].max() if len(chains) and chains[inst].notna().any() else None
            got = row[col]
            if want is None:
                assert pd.isna(got), (row["generator"], col, got)
            else:
                assert got == want, (row["generator"], col, got, want)
    ros2, waters = table[table["generator"] == "ros2"], table[table["generator"] == "waters"]
    # Event chains give a latency and no data-flow metric; LET chains the reverse.
    assert ros2["chain_latency_max_ns"].notna().all() and ros2["chain_data_age_max_ns"].isna().all()
    assert waters["chain_data_age_max_ns"].notna().all() and waters["chain_latency_max_ns"].isna().all()
    assert table[table["generator"] == "plain"][CHAIN_COLUMNS].isna().all().all()


def test_a_row_without_chains_is_not_stale(table):
    from rtsched.sweep.table import stale

    assert not stale(table).any()
    # The control: a row missing an always-measured metric is.
    broken = table.copy()
    broken.loc[broken.index[0], "max_response_ns"] = None
    assert stale(broken).tolist()[0]


def test_the_figures_draw_the_chain_metrics(table, tmp_path, monkeypatch):
    import rtsched.plots as P

    def save(fig, path):  # the figures as drawn, not rendered to files (seconds each)
        P._plt().close(fig)
        return [f"{path}.png"]

    monkeypatch.setattr(P, "save", save)
    for other in ("schedulability", "weighted_schedulability", "dsr", "tardiness", "migrations"):
        monkeypatch.setattr(P, other, lambda df, **kw: P._plt().figure())  # not what is tested here
    paths = P.sweep_figures(table, tmp_path / "s", extra=("max_response_ns",))
    stems = {p.rsplit("/", 1)[-1].rsplit(".", 1)[0] for p in paths}
    assert {"s-chain_latency", "s-chain_data_age", "s-chain_reaction_time", "s-max_response_ns"} <= stems
    fig = P.chain_metric(table, "chain_latency_max_ns")
    # A panel only for the generator whose sets have event chains.
    assert [a.get_title().split(":")[0] for a in fig.axes if a.get_visible()] == ["ros2"]
    (panel,) = [a for a in fig.axes if a.get_title().startswith("ros2")]
    ys = [y for line in panel.lines for y in line.get_ydata() if not math.isnan(y)]
    ros2 = table[table["generator"] == "ros2"]
    means = ros2.groupby("point")["chain_latency_max_ns"].mean() / 1e6
    assert all(any(abs(y - m) < 1e-9 for y in ys) for m in means), (ys, means.tolist())
    with pytest.raises(rtsched.InputError, match="chain metric 'latency'"):
        P.chain_metric(table, "latency")
    # Without chains in the table, no chain figure.
    plain = P.sweep_figures(table[table["generator"] == "plain"], tmp_path / "p")
    assert not any("chain_" in p for p in plain)


def test_plot_y_names_a_column_of_the_table_or_exits_2(tmp_path):
    p = run_cli("sweep", "nothing.yaml", "--plot-y", "latency", cwd=tmp_path)
    assert p.returncode == 2
    assert "--plot-y latency: not a metric column of the sweep table" in p.stderr
    assert "chain_latency_max_ns" in p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("args", [["ros2-tree", "n=8", "m=2", "U=1.2", "p_join=0.4"],
                                  ["waters2015-chains", "m=1", "U=0.5", "chains=4", "communication=let"]])
def test_gen_writes_chain_sets_that_validate_and_simulate(tmp_path, args):
    """(Determinism by seed is crates/analysis/tests/chain_generators.rs's.)"""
    out = tmp_path / "set.yaml"
    p = run_cli("gen", *args, "--seed", "4", "-o", out)
    assert p.returncode == 0, p.stderr
    assert "chains:" in out.read_text()
    assert run_cli("validate", out).returncode == 0
    r = rtsched.simulate(str(out), "gedf", duration="200ms")
    assert len(r.chains) > 0


def test_gen_lists_the_chain_generators_with_their_parameters():
    p = run_cli("gen", "--list", env={"COLUMNS": "400"})
    assert p.returncode == 0
    for name, words in [("waters2015-chains", "communication=implicit|let"), ("ros2-tree", "p_join=0")]:
        assert name in p.stdout and words in p.stdout, name
