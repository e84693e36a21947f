"""Locking protocols as a user meets them (docs/locking.md): the classic example from a file
through the CLI, its blocking columns, and a file a protocol cannot take refused with exit 2."""

import csv
import textwrap

from conftest import run_cli

MS = 1_000_000

CLASSIC = """\
    platform: {cpus: 1}
    run: {duration: 20, locking: LOCKING}
    resources: [R]
    tasks:
      - {name: l, period: 100, deadline: 20, wcet: 4, priority: 1, sections: [{resource: R, start: 0, length: 4}]}
      - {name: h, period: 100, deadline: 5, offset: 1, wcet: 2, priority: 3, sections: [{resource: R, start: 0, length: 1}]}
      - {name: m, period: 100, deadline: 8, offset: 2, wcet: 5, priority: 2}
    """


def write(tmp_path, text, name="ts.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def jobs(tmp_path, locking, spec):
    p = write(tmp_path, CLASSIC.replace("LOCKING", locking), f"{locking}.yaml")
    out = tmp_path / f"{locking}-{spec}.csv"
    run_cli("simulate", p, "-s", spec, "--jobs-csv", out, check=0)
    return {r["task"]: r for r in csv.DictReader(out.open())}


def test_the_classic_example_from_a_file(tmp_path):
    # h's response and blocking kinds (direct, inheritance, ceiling) under each protocol.
    want = {("none", "gfp"): (10, 8, 0, 0), ("pip", "gfp"): (5, 3, 0, 0),
            ("pcp", "gfp"): (5, 0, 0, 3), ("srp", "gedf"): (5, 0, 0, 3)}
    for (locking, spec), (resp, direct, inherit, ceiling) in want.items():
        h = jobs(tmp_path, locking, spec)["h"]
        got = tuple(int(h[k]) // MS for k in ("response_ns", "blocked_ns", "blocked_inheritance_ns", "blocked_ceiling_ns"))
        assert got == (resp, direct, inherit, ceiling), (locking, spec, h)
    assert int(jobs(tmp_path, "pip", "gfp")["m"]["blocked_inheritance_ns"]) == 2 * MS


def test_a_ceiling_protocol_without_priorities_exits_2(tmp_path):
    p = write(tmp_path, """\
        platform: {cpus: 1}
        resources: [{name: bus, protocol: pcp}]
        tasks:
          - {name: sensor, period: 10, wcet: 2, priority: 2, sections: [{resource: bus, start: 0, length: 1}]}
          - {name: diag, period: 20, wcet: 3, sections: [{resource: bus, start: 1, length: 1}]}
        """)
    r = run_cli("simulate", p, "-s", "gfp", check=2)
    assert "ts.yaml" in r.stderr and "task 'diag'" in r.stderr and "resource 'bus'" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_a_scheduler_without_urgencies_refuses_a_protocol(tmp_path):
    p = write(tmp_path, CLASSIC.replace("LOCKING", "pip"))
    r = run_cli("simulate", p, "-s", "dasa", check=2)
    assert "resource 'R' uses pip" in r.stderr and "Traceback" not in r.stderr, r.stderr


PAIR = """\
    platform: {cpus: 2}
    run: {duration: 40, locking: LOCKING}
    resources: [R]
    tasks:
      - {name: a, period: 100, wcet: 8, priority: 2, cpu: 0, sections: [{resource: R, start: 0, length: 6}]}
      - {name: b, period: 100, offset: 2, wcet: 6, priority: 2, cpu: 1, sections: [{resource: R, start: 0, length: 4}]}
      - {name: c, period: 100, offset: 4, wcet: 1, priority: 3, cpu: 1}
    """


def test_the_2_cpu_spinning_example_from_a_file(tmp_path):
    # docs/locking.md "The 2-CPU example": b's spin and response, c's response, in ms.
    for locking, want in {"msrp": (4, 11, 7), "mrsp": (3, 10, 1)}.items():
        p = write(tmp_path, PAIR.replace("LOCKING", locking), f"{locking}.yaml")
        out = tmp_path / f"{locking}.csv"
        run_cli("simulate", p, "-s", "pfp", "--jobs-csv", out, check=0)
        rows = {r["task"]: r for r in csv.DictReader(out.open())}
        got = (int(rows["b"]["spin_ns"]) // MS, int(rows["b"]["response_ns"]) // MS,
               int(rows["c"]["response_ns"]) // MS)
        assert got == want, (locking, rows)


def test_the_2_cpu_example_analysed(tmp_path):
    """docs/locking.md "Spinning: msrp and mrsp under partitioned fixed priority", by hand, ms:
    under msrp a spins <= b's 4, b <= a's 6; R_a = 8 + 4 = 12, R_b = 6 + 6 + c 1 = 13, c blocked
    by b's non-preemptive spin and section, 6 + 4 = 10: R_c = 1 + 10 = 11 (simulated 8, 11, 7).
    Under mrsp (with helping, so c above R's local ceiling on CPU 1 does not matter) the same
    spins; b's local ceiling is its own priority, below c's, so c is not blocked: R_c = 1
    (simulated 8, 10, 1)."""
    import rtsched

    got = {}
    for locking in ("msrp", "mrsp"):
        p = write(tmp_path, PAIR.replace("LOCKING", locking), f"{locking}.yaml")
        got[locking] = {x["test"]: x for x in rtsched.analyze(str(p))}["p-fp-rta-file"]
    rows = {b["task"]: (b["bound_ns"] // MS, b["blocking_ns"] // MS, b["spin_ns"] // MS) for b in got["msrp"]["tasks"]}
    assert rows == {"a": (12, 0, 4), "b": (13, 0, 6), "c": (11, 10, 0)}, rows
    assert got["msrp"]["schedulable"] is True
    rows = {b["task"]: (b["bound_ns"] // MS, b["blocking_ns"] // MS, b["spin_ns"] // MS) for b in got["mrsp"]["tasks"]}
    assert rows == {"a": (12, 0, 4), "b": (13, 0, 6), "c": (1, 0, 0)}, rows
    assert got["mrsp"]["schedulable"] is True
    text = run_cli("analyze", tmp_path / "msrp.yaml", check=0).stdout
    assert "p-fp-rta-file spin us" in text, text


def test_a_spinning_protocol_under_a_global_scheduler_exits_2(tmp_path):
    p = write(tmp_path, PAIR.replace("LOCKING", "msrp"))
    r = run_cli("simulate", p, "-s", "gfp", check=2)
    assert "task 'a'" in r.stderr and "resource 'R' uses msrp" in r.stderr, r.stderr
    assert "partitioned" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_the_2_cpu_example_under_fmlp(tmp_path):
    """docs/locking.md "Suspending: fmlp+", the spinning example's set under fmlp+, ms: b
    suspends 2-6 (c runs 4-5 meanwhile), holds R 6-10 boosted and responds in 10, c in 1,
    nothing spins. The bound by hand: a request of a waits <= CPU 1's sections (b's 4), of b
    <= a's 6; c is boosted over once by the lower b (4): R_a = 8 + 4 = 12, R_b = 6 + 6 + c 1
    = 13, R_c = 1 + 4 = 5. Under gfp: refused, exit 2."""
    import rtsched

    p = write(tmp_path, PAIR.replace("LOCKING", "fmlp+"), "fmlp.yaml")
    out = tmp_path / "fmlp.csv"
    run_cli("simulate", p, "-s", "pfp", "--jobs-csv", out, check=0)
    rows = {r["task"]: r for r in csv.DictReader(out.open())}
    got = {t: tuple(int(rows[t][k]) // MS for k in ("response_ns", "blocked_ns", "spin_ns")) for t in "abc"}
    assert got == {"a": (8, 0, 0), "b": (10, 4, 0), "c": (1, 0, 0)}, rows
    v = {x["test"]: x for x in rtsched.analyze(str(p))}["p-fp-rta-file"]
    bounds = {b["task"]: (b["bound_ns"] // MS, b["blocking_ns"] // MS) for b in v["tasks"]}
    assert bounds == {"a": (12, 4), "b": (13, 6), "c": (5, 4)} and v["schedulable"] is True, v
    r = run_cli("simulate", p, "-s", "gfp", check=2)
    assert "task 'a'" in r.stderr and "resource 'R' uses fmlp+" in r.stderr, r.stderr


EDF_PAIR = """\
    platform: {cpus: 2}
    run: {duration: 40, locking: fmlp+}
    resources: [R]
    tasks:
      - {name: a, period: 100, deadline: 20, wcet: 6, cpu: 0, sections: [{resource: R, start: 0, length: 4}]}
      - {name: l, period: 100, deadline: 20, wcet: 5, cpu: 1}
      - {name: b, period: 100, offset: 1, deadline: 15, wcet: 4, cpu: 1, sections: [{resource: R, start: 0, length: 2}]}
      - {name: h, period: 100, offset: 5, deadline: 4, wcet: 2, cpu: 1}
    """


def test_fmlp_under_partitioned_edf_analysed(tmp_path):
    """docs/locking.md "Suspending: fmlp+ under partitioned EDF", by hand, ms: remote_a = 2,
    remote_b = 4; boost B_l = B_h = 2 (b's section), B_a = B_b = 0; Spuri's bounds R_a = 8,
    R_l = 17, R_b = 10, R_h = 4, each row's blocking remote + boost (simulated under pedf:
    6, 11, 9, 3: crates/analysis/tests/fmlp_edf_vs_sim.rs)."""
    import rtsched

    p = write(tmp_path, EDF_PAIR, "fmlp-edf.yaml")
    v = {x["test"]: x for x in rtsched.analyze(str(p))}["p-edf-exact"]
    rows = {b["task"]: (b["bound_ns"] // MS, b["blocking_ns"] // MS) for b in v["tasks"]}
    assert rows == {"a": (8, 2), "l": (17, 2), "b": (10, 4), "h": (4, 2)} and v["schedulable"] is True, v
    text = run_cli("analyze", p, check=0).stdout
    assert "p-edf-exact B us" in text and "17000.000" in text, text


def test_the_kernel_backends_refuse_a_protocol_they_cannot_give(tmp_path):
    # Never run as a plain mutex: refused before a thread starts, naming file, resource,
    # protocol and what to use instead; an option contradicting the file likewise.
    for locking, backend, says in [
            ("srp", "kernel:fifo", "testbed:gedf"),
            ("pcp:original", "kernel:fifo", "use pcp (the immediate ceiling"),
            ("pcp", "kernel:deadline", "use kernel:fifo"),
            ("pcp", "kernel:fifo:pi", "the backend option ':pi' asks for priority inheritance")]:
        p = write(tmp_path, CLASSIC.replace("LOCKING", locking))
        r = run_cli("run", p, "-b", backend, check=2)
        assert f"ts.yaml: resource 'R' uses {locking} (run: field 'locking'): " in r.stderr, (backend, r.stderr)
        assert says in r.stderr and "Traceback" not in r.stderr, (backend, r.stderr)
