"""The ``locking`` axis of a sweep (docs/sweeps.md, "Locking protocols") and the generator's
critical sections it needs (docs/generators.md, "Critical sections"): rows keyed by protocol,
the blocking that must differ between protocols, a protocol refused per row, a bad spec named."""

import pytest
from rtsched._core import InputError

import rtsched
from conftest import run_cli
from rtsched import plots

# One CPU, every task using R with one long section: blocking matters.
PARAMS = {"n": 4, "m": 1, "tmin": "10ms", "tmax": "40ms", "resources": 1, "p_acc": 1, "nreq": 1, "csl": "1ms..3ms"}


def spec_of(**over):
    d = {"name": "lk", "seed": 5, "generator": {"name": "uunifast", "params": dict(PARAMS)},
         "utilisation": {"points": [0.7]}, "schedulers": ["gfp:rm", "test:fp-rta-rm"], "locking": ["none", "pcp"],
         "seeds": 4, "duration": "400ms"}
    d.update(over)
    return d


@pytest.fixture(scope="module")
def table():
    return rtsched.sweep(spec_of(), workers=1, progress=False)


def test_rows_are_keyed_by_scheduler_and_protocol(table):
    assert len(table) == 4 * 2 * 2
    assert set(table["scheduler"]) == {"gfp:rm", "test:fp-rta-rm"}
    assert set(table["locking"]) == {"none", "pcp"}
    for _, r in table.iterrows():
        assert f"/{r['scheduler']}@{r['locking']}/" in r["key"]
    assert table["key"].is_unique
    # Every (scheduler, protocol) sees the same four sets.
    assert table.groupby(["scheduler", "locking"])["taskset_seed"].apply(frozenset).nunique() == 1


def test_blocking_differs_where_it_must(table):
    sim = table[table["kind"] == "sim"].set_index(["replication", "locking"])
    assert (sim["status"] == "ok").all()
    # Under the immediate ceiling no job is ever blocked on R (the holder runs at the ceiling,
    # and every task uses R): no direct blocking, ceiling blocking instead. A plain mutex blocks.
    pcp = sim.xs("pcp", level="locking")
    none = sim.xs("none", level="locking")
    assert (pcp["max_blocked_ns"] == 0).all() and (pcp["max_blocked_ceiling_ns"] > 0).any()
    assert (none["max_blocked_ns"] > 0).any() and (none["max_blocked_ceiling_ns"] == 0).all()


def test_a_protocol_the_test_does_not_bound_is_refused_per_row(table):
    tests = table[table["kind"] == "test"]
    refused = tests[tests["locking"] == "none"]
    assert (refused["status"] == "not-applicable").all()
    assert refused["error"].str.len().gt(0).all()
    bounded = tests[tests["locking"] == "pcp"]
    assert (bounded["status"] == "ok").all() and bounded["verdict"].notna().all()


def test_a_scheduler_that_refuses_the_protocol_gives_its_row_a_reason():
    """msrp needs a partitioned scheduler: under gfp its rows are not-applicable, naming it;
    the same sets' pcp rows run."""
    df = rtsched.sweep(spec_of(schedulers=["gfp:rm"], locking=["pcp", "msrp"], seeds=2), workers=1, progress=False)
    msrp = df[df["locking"] == "msrp"]
    assert (msrp["status"] == "not-applicable").all()
    assert msrp["error"].str.contains("msrp").all(), msrp["error"].tolist()
    assert (df[df["locking"] == "pcp"]["status"] == "ok").all()


def test_without_the_axis_the_rows_are_as_before():
    d = spec_of(seeds=2)
    del d["locking"]
    df = rtsched.sweep(d, workers=1, progress=False)
    assert (df["locking"] == "").all()
    assert not df["key"].str.contains("@").any()


def test_figures_draw_one_line_per_scheduler_and_protocol(table):
    series = set(plots.by_locking(table)["scheduler"])
    assert series == {"gfp:rm @ none", "gfp:rm @ pcp", "test:fp-rta-rm @ none", "test:fp-rta-rm @ pcp"}
    w = plots.weighted(table)
    assert set(w["scheduler"]) == {"gfp:rm @ none", "gfp:rm @ pcp", "test:fp-rta-rm @ pcp"}


@pytest.mark.parametrize("locking, says", [
    (["pcp2"], "field 'locking': unknown locking protocol 'pcp2' (did you mean 'pcp'?)"),
    (["pcp", "pcp"], "field 'locking': a protocol is listed twice"),
    ([], "field 'locking'"),
])
def test_bad_locking_is_named(locking, says):
    with pytest.raises(InputError, match=None) as e:
        rtsched.sweep(spec_of(locking=locking), workers=1, progress=False)
    assert says in str(e.value)


def test_a_scheduler_name_may_not_hold_the_separator():
    with pytest.raises(InputError) as e:
        rtsched.sweep(spec_of(schedulers=["gfp:rm@pcp"]), workers=1, progress=False)
    assert "may not contain" in str(e.value)


def test_gen_names_a_bad_section_parameter():
    r = run_cli("gen", "uunifast", "n=4", "U=0.5", "resources=2", "p_acc=2")
    assert r.returncode == 2
    assert "parameter p_acc=2" in r.stderr and "Traceback" not in r.stderr
    listing = run_cli("gen", "--list").stdout
    assert "resources=0" in listing and "csl=short" in listing
