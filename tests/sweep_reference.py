"""A sweep's rows worked out apart from the sweep, for tests to compare a sweep with.

The sweep makes each row in one place (crates/sweep/src/row.rs: the seed and keys, the
set, the run, its summaries, its status and notes). This makes them another way, one row at a
time: the seed and key from their definitions (SHA-256 of the canonical JSON of the
coordinates, a format string), the set generated and simulated through the public API, the
metrics read from the run's results document, the status from what the run raised, and the
notes from the policy's traits. Slow: small specs only.
"""

import hashlib
import json

import rtsched
from rtsched import _core
from rtsched.analysis import generate_from
from rtsched.policies import info
from rtsched.result import RUN_COUNTERS
from rtsched.sweep import keys as K
from rtsched.sweep import parse_spec
from rtsched.sweep.spec import _gen_params, with_options
from rtsched.sweep.table import MODEL_COLUMNS, SUMMARY_COLUMNS, _frame


def _canon(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def seed_of(sp, g, point, replication) -> int:
    """A task set's seed by its definition (docs/sweeps.md)."""
    what = [sp.seed, g.name, g.params, g.param, sp.per_cpu, repr(float(point)), replication]
    return int.from_bytes(hashlib.sha256(_canon(what).encode()).digest()[:8], "big") >> 1


def key_of(label, point, replication, scheduler, variant) -> str:
    return f"{label}/{point:016.6f}/{replication:010d}/{scheduler}/{variant}"


def reference_rows(spec):
    """Every row of ``spec``: (DataFrame sorted by key, the set of notes)."""
    sp = parse_spec(spec) if isinstance(spec, dict) else spec
    rows, notes = [], set()
    for g in sp.generators:
        variant = K._variant_hash(sp, g)
        for p in sp.points:
            params = _gen_params(sp, g, p)
            for r in sp.replications:
                seed = seed_of(sp, g, p, r)
                ts = generate_from(g.name, seed, dict(params)).taskset
                ts = with_options(ts.with_run(duration_ns=sp.duration_ns, seed=seed, on_miss=sp.on_miss), sp.run, sp.topology)
                base = {"sweep": sp.name, "generator": g.label, "gen_params": _canon(params), "param": g.param,
                        "point": float(p), "replication": r, "taskset_seed": seed, "m": ts.cpus, "n": len(ts.task_names),
                        "U": float(ts.utilization), "duration_ns": sp.duration_ns, "on_miss": sp.on_miss,
                        "run": sp.run or "", "topology": sp.topology or ""}
                for sched in sp.schedulers:
                    notes |= _notes(ts, sched)
                    rows.append(dict(base, key=key_of(g.label, p, r, sched, variant), scheduler=sched,
                                     schema=_core.RESULTS_SCHEMA, **_outcome(ts, sched)))
    return _frame(rows).sort_values("key", kind="stable").reset_index(drop=True), notes


def _outcome(ts, sched) -> dict:
    if sched.startswith(_core.TEST_PREFIX):
        return _tested(ts, sched[len(_core.TEST_PREFIX):])
    try:
        raw = _core.simulate(ts, sched, False)
    except _core.InputError as e:
        # Read from the message here, on purpose: the sweep's status is typed, this is not it.
        return {"status": "deadlock" if "deadlock at" in str(e) else "partition-failed", "error": str(e),
                "schedulable": False}
    doc = json.loads(raw.to_json(False))
    total, counters = doc["total"], doc["counters"]
    out = {c: total[c] for c in SUMMARY_COLUMNS if c in total}
    out.update({c: counters[c] for c in RUN_COUNTERS})
    l1, l2, llc = total.get("misses") or (0, 0, 0)
    cache, ovh = counters.get("cache") or {}, counters.get("overheads") or {}
    out.update(misses_l1=l1, misses_l2=l2, misses_llc=llc, invalidations=cache.get("invalidations", 0),
               evictions=cache.get("evictions", 0),
               # CPU time the overheads took (release latency delays a job but takes no CPU).
               overhead_ns=sum(v for k, v in ovh.items() if k != "release_ns" and isinstance(v, int)))
    assert set(MODEL_COLUMNS) <= set(out)
    return dict(out, status="ok", error="", schedulable=total["missed"] == 0, kind="sim")


def _tested(ts, name) -> dict:
    """A test's row through the public analysis API: ``rtsched.analyze`` (its overhead-aware
    verdict when the set's run options give overheads) or ``rtsched.partition`` (an error is
    no partition)."""
    family, _, heuristic = name.partition(":")  # NAME, or FAMILY:PARAMETER
    if family == "partition" and heuristic:
        try:
            rtsched.partition(ts, heuristic)
            verdict = True
        except _core.InputError:
            verdict = False
    else:
        (v,) = [v for v in rtsched.analyze(ts) if v["test"] == name]
        verdict = v["with_overheads"] if "with_overheads" in v else v["schedulable"]
        kind = {t["name"]: t["kind"] for t in rtsched.analysis.tests()}[name]
        if kind == "necessary" and verdict is None:
            verdict = True  # a necessary condition met: not refuted
    return {"status": "ok", "error": "", "kind": "test", "verdict": verdict, "schedulable": verdict is True}


def _notes(ts, sched) -> set:
    cycle = ts.lock_order_cycle
    if not ts.has_tufs and not cycle:
        return set()
    if _core.refusal(ts, sched) is not None:
        return set()  # does not run this set: its row says why
    policy = info(_core.parse_scheduler(sched)[0])
    tufs, resolves = policy["tufs"] != "ignored", policy["resolves_deadlocks"]
    return ({("tufs", sched)} if ts.has_tufs and not tufs else set()) | (
        {("deadlock", sched, cycle)} if cycle and not resolves else set())
