"""The global OMLP as a user meets it (docs/locking.md "The global OMLP: omlp"): the 2-CPU
example from a file through the CLI (responses and blocking kinds), analysed by the global tests
with each task's s-oblivious blocking term, and refused (exit 2) under a partitioned scheduler."""

import csv
import textwrap

from conftest import run_cli

MS = 1_000_000

EXAMPLE = """\
    platform: {cpus: 2}
    run: {duration: 19, locking: omlp}
    resources: [R]
    tasks:
      - {name: a, period: 20, wcet: 4, priority: 1CPU, sections: [{resource: R, start: 0, length: 4}]}
      - {name: b, period: 20, offset: 1, wcet: 2, priority: 2CPU, sections: [{resource: R, start: 0, length: 2}]}
      - {name: c, period: 20, offset: 2, wcet: 1, priority: 4CPU, sections: [{resource: R, start: 0, length: 1}]}
      - {name: d, period: 20, offset: 3, wcet: 1, priority: 6CPU, sections: [{resource: R, start: 0, length: 1}]}
      - {name: e, period: 20, offset: 1, wcet: 6, priority: 5CPU}
      - {name: f, period: 20, offset: 2, wcet: 3, priority: 3CPU}
    """


def write(tmp_path, cpu="", name="omlp.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(EXAMPLE.replace("CPU", cpu)))
    return p


def test_the_2_cpu_example_from_a_file(tmp_path):
    # (response, direct blocking, inheritance blocking) in ms, as worked by hand.
    out = tmp_path / "jobs.csv"
    run_cli("simulate", write(tmp_path), "-s", "gfp:file", "--jobs-csv", out, check=0)
    rows = {r["task"]: r for r in csv.DictReader(out.open())}
    got = {t: tuple(int(r[k]) // MS for k in ("response_ns", "blocked_ns", "blocked_inheritance_ns"))
           for t, r in rows.items()}
    assert got == {"a": (4, 0, 0), "b": (5, 3, 0), "c": (6, 5, 0), "d": (4, 3, 0),
                   "e": (6, 0, 0), "f": (8, 0, 4)}, got


def test_the_example_analysed_by_the_global_tests(tmp_path):
    import rtsched

    got = {x["test"]: x for x in rtsched.analyze(str(write(tmp_path)))}
    v = got["gfp-rta-file"]
    rows = {b["task"]: (b["bound_ns"], b["blocking_ns"]) for b in v["tasks"]}
    # b_i = (2m - 1) * the longest other section of R: a 3*2, b, c, d 3*4; e and f none.
    assert {t: b // MS for t, (_, b) in rows.items()} == {"a": 6, "b": 12, "c": 12, "d": 12, "e": 0, "f": 0}
    assert rows["d"][0] == 13 * MS and rows["e"][0] == 6 * MS, rows
    assert "OMLP" in v["detail"]
    for name in ("gedf-gfb", "gedf-bcl", "gedf-rta", "gedf-baruah", "gfp-rta-lc-file"):
        assert "not applicable" not in got[name]["detail"], got[name]


def test_omlp_under_a_partitioned_scheduler_exits_2(tmp_path):
    r = run_cli("simulate", write(tmp_path, cpu=", cpu: 0"), "-s", "pfp", check=2)
    assert "task 'a'" in r.stderr and "resource 'R' uses omlp" in r.stderr, r.stderr
    assert "global scheduling" in r.stderr and "Traceback" not in r.stderr, r.stderr
