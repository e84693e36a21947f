"""Seeds, row keys and units: what identifies a row and what a worker is sent.

A task set's seed and a row's key are hashes of the row's coordinates only (never of the
completion order), so the same spec gives the same rows on any executor.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from .spec import Generator, Spec, _gen_params


def _canon(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def _variant_hash(spec: Spec, g: Generator) -> str:
    """What else defines a row besides generator label, point, replication and scheduler.
    The run options and topology count only when given, so the keys of a spec without them
    are those of earlier versions (their tables resume)."""
    what = {"gen": g.name, "params": g.params, "param": g.param, "per_cpu": spec.per_cpu,
            "duration_ns": spec.duration_ns, "on_miss": spec.on_miss, "seed": spec.seed}
    if spec.run is not None:
        what["run"] = run_identity(spec.run)
    if spec.topology is not None:
        what["topology"] = spec.topology
    return hashlib.sha256(_canon(what).encode()).hexdigest()[:10]


def run_identity(run: str):
    """The run options as they define a row: an overhead profile by its content (a hash of the
    file), not its path, so a recalibrated profile recomputes and a moved one does not."""
    d = json.loads(run)
    o = d.get("overheads")
    path = o if isinstance(o, str) else o.get("profile") if isinstance(o, dict) else None
    if isinstance(path, str):
        try:
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()[:16]
        except OSError:
            digest = path
        d["overheads"] = {"profile_sha256": digest} if isinstance(o, str) else dict(o, profile=None, profile_sha256=digest)
    return d


def taskset_seed(spec_seed: int, g: Generator, per_cpu: bool, point: float, replication: int) -> int:
    """The task set's seed (generator and execution model): a hash of its coordinates only."""
    what = [spec_seed, g.name, g.params, g.param, per_cpu, repr(float(point)), replication]
    return int.from_bytes(hashlib.sha256(_canon(what).encode()).digest()[:8], "big") >> 1


def row_key(g_label: str, point: float, replication: int, scheduler: str, variant: str) -> str:
    """Readable, sortable and unique: GENERATOR/POINT/REPLICATION/SCHEDULER/VARIANT."""
    return f"{g_label}/{point:016.6f}/{replication:010d}/{scheduler}/{variant}"


@dataclass
class Unit:
    """One task set and the schedulers still to run on it (what a worker needs, picklable)."""

    sweep: str
    generator: str
    label: str
    params: dict
    param: str
    point: float
    replication: int
    seed: int
    duration_ns: int
    on_miss: str
    schedulers: list = field(default_factory=list)  # [(scheduler, key)]
    run: str | None = None  # the spec's run options (JSON), applied to the set
    topology: str | None = None  # the spec's topology (JSON)


def units(spec: Spec, done=frozenset()) -> list[Unit]:
    """Every task set of the sweep with the (scheduler, key) pairs not in ``done``, in key order."""
    out = []
    for g in spec.generators:
        variant = _variant_hash(spec, g)
        for p in spec.points:
            for r in spec.replications:
                todo = [(s, k) for s in spec.schedulers if (k := row_key(g.label, p, r, s, variant)) not in done]
                if todo:
                    out.append(Unit(spec.name, g.name, g.label, _gen_params(spec, g, p), g.param, p, r,
                                    taskset_seed(spec.seed, g, spec.per_cpu, p, r), spec.duration_ns, spec.on_miss, todo,
                                    spec.run, spec.topology))
    return out


def all_keys(spec: Spec) -> list[str]:
    return [k for u in units(spec) for _, k in u.schedulers]
