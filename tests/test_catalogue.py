"""The column catalogue (crates/model/src/results/columns/) as Python reads it: the sweep table,
Result and the comparison table take their columns from it, and what a run did not measure
comes from the run itself, not from its substrate's name."""

from types import SimpleNamespace

import rtsched
from conftest import ROOT
from rtsched import _core, catalogue, report
from rtsched.result import NULLABLE_JOB_COLUMNS, RUN_COUNTERS
from rtsched.sweep import table

DHALL = ROOT / "examples" / "dhall.yaml"


def test_the_catalogue_is_data_every_place_reads():
    every = catalogue.columns()
    assert {"name", "kind", "unit", "nullable", "meaning", "at", "measured", "doc", "source", "table"} <= set(every[0])
    for c in every:
        assert c["meaning"] and set(c["at"]) <= set(catalogue.PLACES), c
    assert table.COLUMNS == catalogue.names("row")
    assert table.arrow_schema().names == catalogue.names("row")
    assert list(RUN_COUNTERS) == catalogue.names("run", source="run")
    assert list(NULLABLE_JOB_COLUMNS) == catalogue.names("job", nullable=True)
    assert catalogue.names("chain") == ["scheduler", "chain", "instance", "start_ns", "end_ns", "latency_ns",
                                        "data_age_ns", "reaction_time_ns"]
    assert [c.header for c in report.ALL_COLUMNS] == [c["table"]["header"] for c in catalogue.columns("table")]
    # An unknown place is refused, naming the known ones.
    try:
        _core.columns("jobs")
    except _core.InputError as e:
        assert "job, task, run, row, table or chain" in str(e)
    else:
        raise AssertionError("an unknown place was taken")


def test_a_run_gives_every_column_it_has_and_says_what_it_did_not_measure():
    r = rtsched.simulate(DHALL, "paws")
    want = {c["name"] for c in catalogue.columns() if c["source"] in ("summary", "run")}
    assert set(r.values) == want
    assert r.unmeasured == ()
    # The values are the document's and the summary's.
    assert r.values["steals"] == r.document["counters"]["steals"] == r.summary["steals"]
    assert r.values["misses_llc"] == r.document["total"]["misses"][2] == r.values["llc_misses"]
    assert r.values["unfinished"] == r.summary["jobs"] - r.summary["completed"]
    assert r.values["policy_ns_per_invocation"] is None  # not timed
    # The per-job columns are the CSV's but the scheduler, nullable ones as pandas Int64.
    assert list(r.jobs.columns) == catalogue.names("job")[1:]
    assert all(str(r.jobs[c].dtype) == "Int64" for c in NULLABLE_JOB_COLUMNS)


def _run(substrate, values):
    base = rtsched.simulate(DHALL, "gedf")
    v = dict(base.values, **values)
    return SimpleNamespace(ok=True, scheduler="x", substrate=substrate, values=v, summary=base.summary,
                           measurements={}, document=base.document)


def test_the_tables_read_what_the_run_did_not_measure_from_the_run():
    # A run that lists the ledger's counters as unmeasured has None for them: '-' in the table,
    # None for machines, whatever its substrate is called ...
    unmeasured = _run("sim", {"priority_inversions": None, "steals": None})
    cols = report.parse_columns("scheduler,prio inv,steals,jobs")
    row = report.comparison_table([unmeasured], columns=cols).splitlines()[-1].split()
    assert row == ["x", "-", "-", str(unmeasured.values["jobs"])], row
    assert report.summary_records([unmeasured], cols)[0]["steals"] is None
    # ... and a run called "kernel" that measured them shows them (the name decides nothing).
    measured = _run("kernel", {"priority_inversions": 4, "steals": 5})
    row = report.comparison_table([measured], columns=cols).splitlines()[-1].split()
    assert row[1:3] == ["4", "5"], row
    assert report.summary_records([measured], cols)[0]["steals"] == 5
