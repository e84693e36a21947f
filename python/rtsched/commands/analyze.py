"""rtsched analyze FILE [--overheads PROFILE] [--simulate] — every applicable schedulability
test's verdict, plain and, with overheads (a profile, or the task file's `run.overheads`),
overhead-aware side by side with the inflated WCETs (docs/overheads.md, "Overhead-aware
analysis"); the per-task bounds of the tests that give them (response-time analyses), and with
--simulate each task's simulated maximum response beside them."""

from __future__ import annotations

import textwrap

from .. import _core
from ..analysis import analyze, chain_bounds, overhead_analysis, partition_attempts, simulated_max_response
from ..durations import in_unit
from ..tables import Column, output_width, render, to_json


def register(sub):
    p = sub.add_parser("analyze", help="run every applicable schedulability test on a task set",
                       description="Uniprocessor EDF (QPA), density, FP response-time analysis, Liu-Layland and hyperbolic bounds; "
                                   "global EDF tests (GFB as quoted by PAWS, BCL, Bertogna & Cirinei's RTA, Baruah's test) and global "
                                   "FP response-time analyses (Bertogna & Cirinei; Guan et al.'s limited carry-in); per-CPU tests when "
                                   "every task has a cpu, and on several CPUs partitioning tried (FFD, WFD, BFD, LWFG with groups) "
                                   "under each uniprocessor admission test. Each test's per-task rows are shown by task: the response-time "
                                   "bounds, with --simulate beside each task's simulated maximum response, and the other tests' own "
                                   "quantities (BCL's and Baruah's window loads, GFB's and density's least passing deadline). "
                                   "For triggered and self-suspending tasks: holistic response-time analysis and the suspension tests; "
                                   "for a set with chains, a table of each chain's end-to-end bounds (docs/chains.md, Analysis). "
                                   "With overheads (--overheads, or the task file's run.overheads) each test also runs on the WCETs "
                                   "inflated by them, shown beside the plain verdict.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--overheads", metavar="PROFILE",
                   help="an overhead profile (rtsched.overheads/1, as `rtsched calibrate` writes): charge its costs")
    p.add_argument("--statistic", choices=["median", "p99"], default=None,
                   help="which of the profile's statistics to charge (default p99, the safer bound)")
    p.add_argument("--simulate", action="store_true",
                   help="beside each test's per-task bounds, each task's maximum response simulated under the scheduler the "
                        "test speaks for (gfp:rm for gfp-rta-rm, gedf for gedf-rta, …) from a synchronous periodic release, "
                        "every job at its WCET, without overheads")
    p.add_argument("--json", action="store_true",
                   help="print the results as JSON instead of tables: the task set (file, tasks, cpus, utilization), "
                        "'tests' (test, schedulable: true/false/null for inconclusive or, for the necessary condition, "
                        "not refuted; verdict: the same in words; detail; tasks: the per-task rows (task, index, quantity: 'response time' or a "
                        "test's own deadline check, 'BCL window load', 'Baruah window load', 'least passing deadline'; bound_ns, "
                        "deadline_ns, slack_ns, blocking_ns: the blocking term charged for critical sections, null if none; spin_ns: under msrp the spin term added to the WCET, null otherwise; "
                        "cpu: the CPU of a per-CPU test's row, null otherwise; with --simulate also simulated_max_response_ns, and the test's simulated_by); "
                        "'partitions' (on several CPUs: heuristic, admission, cpu_loads and the per-CPU test's verdict as in 'tests'); "
                        "with overheads also with_overheads, "
                        "verdict_with_overheads and overhead_detail) and, with overheads, 'overheads' (description, costs in ns) "
                        "and 'inflated' (each task's inflated WCET and deadline in ns, per CPU, under global EDF and under global FP per priority assignment); for a set with chains, 'chains' by name "
                        "(communication, latency_ns, data_age_ns, reaction_time_ns: the bounds, null where one does not apply, "
                        "latency_ns under fixed priority; deadline_ns, meets_deadline, method, exact, note; for an event "
                        "chain its bound under EDF: edf_latency_ns, edf_meets_deadline, edf_method, edf_note)")
    p.set_defaults(func=run)


def _us(ns) -> str:
    return in_unit(ns, "us", 3)


def _table(columns, rows) -> str:
    """A table fitted to the terminal: the detail columns fold, and columns of rank > 0 are left
    out if folding is not enough."""
    width = output_width()
    out = render(columns, rows, width)
    note = out.note(width, "--json prints them all")
    return out.text + ("\n" + note if note else "")


def _simulated(ts, verdicts) -> None:
    """Set each task's simulated maximum response beside each test's bounds (``--simulate``): one
    run per scheduler the tests speak for."""
    runs = {}
    for v in verdicts:
        sched = _core.simulated_by(v["test"]) if v["tasks"] else None
        if sched is None:
            continue
        if sched not in runs:
            runs[sched] = simulated_max_response(ts, v["test"])
        v["simulated_by"] = sched
        for b in v["tasks"]:
            b["simulated_max_response_ns"] = runs[sched]["max_response_ns"][b["index"]]


#: How a per-task quantity that is not a response time is shown: (label after the test's name,
#: column rank: left out first when the terminal is narrow, the cell when no value is given).
#: BCL's and Baruah's window loads and the least passing deadline of GFB and the density test
#: are deadline checks ("Per-task rows" in docs/generators.md), not bounds on a response.
_QUANTITY_COLUMNS = {
    "BCL window load": (" load", 2, "?"),
    "Baruah window load": (" load", 2, "?"),
    "least passing deadline": (" least D", 2, "none"),
}


def _bounds_table(ts, verdicts, simulate: bool) -> str | None:
    """Per task: its deadline, each test's bound ("> D" where not bounded within it) and, with
    ``simulate``, the simulated maximum response under each scheduler the tests speak for."""
    with_bounds = [v for v in verdicts if v["tasks"]]
    if not with_bounds:
        return None
    names = ts.task_names
    head = [Column("task"), Column("D us", ">")]
    cells = {n: [n, "-"] for n in names}
    for v in with_bounds:
        blocking = any(b.get("blocking_ns") is not None for b in v["tasks"])
        got = {b["task"]: b for b in v["tasks"]}
        quantity = v["tasks"][0]["quantity"]
        if quantity != "blocking":
            label, rank, unbounded = _QUANTITY_COLUMNS.get(quantity, ("", 1, "> D"))
            head.append(Column(f"{v['test']}{label} us", ">", rank))
            for n in names:
                b = got.get(n)
                if b is not None:
                    cells[n][1] = _us(b["deadline_ns"])
                cells[n].append("-" if b is None else unbounded if b["bound_ns"] is None else _us(b["bound_ns"]))
        if blocking:
            # The blocking term the bound charges (docs/locking.md, "Analysis").
            head.append(Column(f"{v['test']} B us", ">", 1))
            for n in names:
                b = got.get(n)
                if b is not None:
                    cells[n][1] = _us(b["deadline_ns"])
                cells[n].append("-" if b is None or b["blocking_ns"] is None else _us(b["blocking_ns"]))
        if any(b.get("spin_ns") is not None for b in v["tasks"]):
            # The spin term (msrp), added to the task's WCET in the bound.
            head.append(Column(f"{v['test']} spin us", ">", 1))
            for n in names:
                b = got.get(n)
                cells[n].append("-" if b is None or b["spin_ns"] is None else _us(b["spin_ns"]))
    if simulate:
        sims = {}
        for v in with_bounds:
            if "simulated_by" in v:
                sims.setdefault(v["simulated_by"], {b["task"]: b["simulated_max_response_ns"] for b in v["tasks"]})
        for sched, by_task in sims.items():
            head.append(Column(f"sim {sched} us", ">", 2))
            for n in names:
                r = by_task.get(n)
                cells[n].append("-" if r is None else _us(r))
    return _table(head, [cells[n] for n in names])
def _chains_table(bounds) -> str:
    """The chains' bounds: an event chain's latency under fixed priority and under EDF, a
    data-flow chain's data age and reaction time (LET's exact), in ms."""

    def ms(ns):
        return "-" if ns is None else in_unit(ns, "ms", 3)

    def met(ok):
        return "met" if ok else "NOT met"

    rows = []
    for b in bounds:
        edf = b["edf_method"] is not None or b["edf_note"] is not None
        verdicts = []
        if b["meets_deadline"] is not None:
            verdicts.append(("FP " if edf else "") + met(b["meets_deadline"]))
        if edf and b["edf_meets_deadline"] is not None:
            verdicts.append("EDF " + met(b["edf_meets_deadline"]))
        deadline = ms(b["deadline_ns"]) + (f" ({', '.join(verdicts)})" if verdicts else "")
        kind = b["communication"] or "event"
        method = b["method"] + (" (exact)" if b["exact"] else "") if b["method"] else b["note"]
        method = method if not b["note"] or not b["method"] else f"{method}: {b['note']}"
        if edf:
            method = f"FP: {method}; EDF: {b['edf_method'] or b['edf_note']}"
        rows.append([b["chain"], kind, ms(b["latency_ns"]), ms(b["edf_latency_ns"]) if edf else "-",
                     ms(b["data_age_ns"]), ms(b["reaction_time_ns"]), deadline, method])
    columns = [Column("chain"), Column("kind"), Column("FP latency ≤ ms", ">"), Column("EDF latency ≤ ms", ">"),
               Column("data age ≤ ms", ">"), Column("reaction ≤ ms", ">"), Column("deadline ms", ">", 1),
               Column("analysis", fold=True)]
    return "chain bounds (docs/chains.md, \"Analysis\"):\n" + _table(columns, rows)


def run(args):
    ts = _core.load_taskset(args.file)
    if args.statistic and not args.overheads:
        from ..cli import UsageError

        raise UsageError("--statistic chooses a column of the --overheads profile; give --overheads too")
    statistic = args.statistic or "p99"
    oa = overhead_analysis(ts, args.overheads, statistic)  # a bad profile fails before any output
    if args.json:
        tests = analyze(ts, args.overheads, statistic)
        if args.simulate:
            _simulated(ts, tests)
        doc = {"file": ts.source, "tasks": len(ts.task_names), "cpus": ts.cpus, "utilization": ts.utilization,
               "tests": tests, "partitions": partition_attempts(ts)}
        if ts.chain_names:
            doc["chains"] = {b["chain"]: {k: v for k, v in b.items() if k != "chain"} for b in chain_bounds(ts)}
        if oa is not None:
            doc["overheads"] = {"description": oa["overheads"], "statistic": statistic if args.overheads else None,
                                "costs_ns": oa["costs"]}
            doc["inflated"] = oa["tasks"]
        print(to_json(doc))
        return 0
    print(f"{ts.source}: {len(ts.task_names)} tasks on {ts.cpus} CPUs, U = {ts.utilization:.3f}")
    if oa is None:
        verdicts = analyze(ts)
        rows = [[v["test"], v["verdict"], v["detail"]] for v in verdicts]
        print(_table([Column("test"), Column("verdict"), Column("detail", fold=True)], rows))
        _print_bounds(ts, verdicts, args.simulate)
        _print_partitions(ts)
        if ts.chain_names:
            print(_chains_table(chain_bounds(ts)))
        return 0
    source = "" if args.overheads else " (the task file's run.overheads)"
    line, width = f"overheads{source}: {oa['overheads']}", output_width()
    print(textwrap.fill(line, width, subsequent_indent="  ", break_on_hyphens=False) if width else line)
    if oa["tasks"]:
        glob = ts.cpus > 1
        # Global FP's inflation per priority assignment the gfp tests use (file: when given).
        fps = [by for by in ("rm", "dm", "file") if glob and oa["tasks"][0][f"wcet_gfp_{by}_ns"] is not None]
        head = ["task", "C us", "D us", "T us", "C'' us", "D' us", "dispatches"] + (["C'' gedf us", "dispatches gedf"] if glob else [])
        head += [f"C'' gfp:{by} us" for by in fps]
        rows = []
        for t in oa["tasks"]:
            row = [t["name"], _us(t["wcet_ns"]), _us(t["deadline_ns"]), _us(t["period_ns"]), _us(t["wcet_partitioned_ns"]),
                   _us(t["deadline_inflated_ns"]), str(t["dispatches_partitioned"])]
            if glob:
                row += [_us(t["wcet_global_ns"]), str(t["dispatches_global"])]
            row += [_us(t[f"wcet_gfp_{by}_ns"]) for by in fps]
            rows.append(row)
        label = "one CPU" if not glob else "per CPU; gedf: global EDF; gfp: global FP, by priorities"
        print(f"inflated WCETs ({label}):")
        # Left out last to first when the terminal is narrow: the global FP columns, global EDF's, the counts.
        ranks = [0, 1, 1, 1, 0, 0, 2] + ([3, 4] if glob else []) + [5] * len(fps)
        print(_table([Column(h, "<" if i == 0 else ">", rank) for i, (h, rank) in enumerate(zip(head, ranks))], rows))
    verdicts = analyze(ts, args.overheads, statistic)
    rows = [[v["test"], "-" if v["detail"] == "-" else v["verdict"], v["verdict_with_overheads"], v["detail"], v["overhead_detail"]]
            for v in verdicts]
    print(_table([Column("test"), Column("plain"), Column("with overheads"), Column("detail (plain)", fold=True),
                  Column("detail (with overheads)", fold=True)], rows))
    _print_bounds(ts, verdicts, args.simulate)
    _print_partitions(ts)
    if ts.chain_names:
        print(_chains_table(chain_bounds(ts)))
    return 0


def _print_partitions(ts) -> None:
    attempts = partition_attempts(ts)
    if not attempts:
        return
    print("partitioning tried (heuristic, admission test; per-CPU utilisation of the placement found):")
    rows = [[a["heuristic"], a["admission"], a["verdict"], " ".join(f"{u:.3f}" for u in a["cpu_loads"]) or "-", a["detail"]]
            for a in attempts]
    print(_table([Column("heuristic"), Column("admission"), Column("verdict"), Column("CPU loads", rank=1),
                  Column("detail", rank=2, fold=True)], rows))


def _print_bounds(ts, verdicts, simulate: bool) -> None:
    if simulate:
        _simulated(ts, verdicts)
    table = _bounds_table(ts, verdicts, simulate)
    if table is not None:
        what = " beside the simulated maximum (synchronous release, WCET)" if simulate else ""
        print(f"per-task bounds (plain){what}:")
        print(table)
        if any(v["tasks"] and v["tasks"][0]["quantity"] in _QUANTITY_COLUMNS for v in verdicts):
            print("('load', 'least D': the tests' own deadline checks, not response times)")
