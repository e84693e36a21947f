"""Seeds, row keys and units: what identifies a row and what a worker is sent.

A task set's seed and a row's key are hashes of the row's coordinates only (never of the
completion order), so the same spec gives the same rows on any executor. They are made in
Rust (``_core.point_rows`` and ``_core.span_rows``, crates/sweep/src/row.rs) from the text
of what one generator and point share, made here (:func:`_seed_head`, :func:`_key_at`).
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
    from .. import _core

    return _core.point_rows(_seed_head(spec_seed, g, per_cpu, point), "", [replication], [])[0][0]


def row_key(g_label: str, point: float, replication: int, scheduler: str, variant: str) -> str:
    """Readable, sortable and unique: GENERATOR/POINT/REPLICATION/SCHEDULER/VARIANT."""
    from .. import _core

    return _core.point_rows("", _key_at(g_label, point), [replication], [f"/{scheduler}/{variant}"])[1][0]


def _seed_head(spec_seed: int, g: Generator, per_cpu: bool, point) -> str:
    """What the seeds of one generator and point share: the canonical JSON list of a task
    set's coordinates without its last item, the replication ("[…,")."""
    return _canon([spec_seed, g.name, g.params, g.param, per_cpu, repr(float(point))])[:-1] + ","


def _key_at(g_label: str, point) -> str:
    """What the keys of one generator and point share: "GENERATOR/POINT/"."""
    return f"{g_label}/{point:016.6f}/"


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


def key_order(schedulers) -> tuple:
    """The schedulers in the order of the keys of one task set's rows ("…/SCHEDULER/VARIANT"):
    rows come back from a batch in it, so a batch of replications in order is sorted by key
    and the table needs no reordering of its rows (``table._in_key_order``)."""
    return tuple(sorted(schedulers, key=lambda s: f"/{s}/"))


def units(spec: Spec, done=frozenset()) -> list[Unit]:
    """Every task set of the sweep with the (scheduler, key) pairs not in ``done``, in key order."""
    return list(iter_units(spec, done))


def iter_units(spec: Spec, done=frozenset()):
    """:func:`units`, one at a time."""
    for g in spec.generators:
        variant = _variant_hash(spec, g)
        for p in spec.points:
            yield from _point_units(spec, g, variant, p, spec.replications, done)


#: Replications whose seeds and keys one call into Rust makes (a point may have a million).
_CHUNK = 4096


def _point_units(spec: Spec, g: Generator, variant: str, p, reps, done=frozenset()):
    """The units of one generator and point, for the replications ``reps``: the seeds and
    keys of :func:`taskset_seed` and :func:`row_key`, made a chunk of replications at a time
    from what they share per point, since a big sweep has millions of them. Units of one
    point share their ``params`` dict."""
    from .. import _core

    schedulers = key_order(spec.runs)
    tails = [f"/{s}/{variant}" for s in schedulers]
    k = len(tails)
    params = _gen_params(spec, g, p)
    head, at = _seed_head(spec.seed, g, spec.per_cpu, p), _key_at(g.label, p)
    reps = list(reps)
    for c in range(0, len(reps), _CHUNK):
        chunk = reps[c:c + _CHUNK]
        seeds, keys = _core.point_rows(head, at, chunk, tails)
        for i, r in enumerate(chunk):
            todo = [(s, key) for s, key in zip(schedulers, keys[i * k:(i + 1) * k]) if key not in done]
            if todo:
                yield Unit(spec.name, g.name, g.label, params, g.param, p, r, seeds[i], spec.duration_ns, spec.on_miss,
                           todo, spec.run, spec.topology)


@dataclass
class Span:
    """Rows of a sweep into an empty table, sent by their coordinates alone — runs of
    replications of one generator and point, every scheduler — so the coordinator does nothing
    per row: the worker makes their units, seeds and keys (:meth:`batch`) with the code
    :func:`units` uses. The variants are the coordinator's (an overhead profile is hashed where
    the spec was read)."""

    spec: Spec  # without its points and replications (a span names its own)
    pieces: list  # [(generator index, variant, point, [replications])]

    @property
    def sets(self) -> int:
        return sum(len(x[3]) for x in self.pieces)

    @property
    def rows(self) -> int:
        return self.sets * len(self.spec.runs)

    def batch(self) -> Batch:
        """The span's :class:`Batch`: what ``Batcher(units).take`` makes of its units (tested
        equal), built without a :class:`Unit` per task set. Every row is to be computed, so the
        strings of a point (parameters, the seed's canonical text less the replication, the
        keys' parts) are made once and a set costs one hash and its keys."""
        import pyarrow as pa

        from .. import _core
        from ..analysis import _params

        sp, k = self.spec, len(self.spec.runs)
        schedulers = key_order(sp.runs)
        gens, gindex = [], {}
        set_gen, params, canon, point, rep = [], [], [], [], []
        rows = []
        for gi, variant, p, reps in self.pieces:
            g = sp.generators[gi]
            gk = (g.name, g.label, g.param)
            if gk not in gindex:
                gindex[gk] = len(gens)
                gens.append(gk)
            pp = _gen_params(sp, g, p)
            n = len(reps)
            set_gen += [gindex[gk]] * n
            params += [_params(pp)] * n
            canon += [_canon(pp)] * n
            point += [float(p)] * n
            rep += reps
            rows.append((_seed_head(sp.seed, g, sp.per_cpu, p), _key_at(g.label, p), reps,
                         [f"/{s}/{variant}" for s in schedulers]))
        # The keys as an Arrow column: no Python object per row.
        seed, offsets, data = _core.span_rows(rows)
        keys = pa.Array.from_buffers(pa.string(), len(seed) * k, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
        return Batch(sp.name, schedulers, tuple(gens), set_gen, params, canon, point, rep, seed,
                     b"\x01" * (len(seed) * k), keys, sp.duration_ns, sp.on_miss, sp.run, sp.topology)


class Spans:
    """Cuts a whole sweep (nothing done yet) into :class:`Span` s of about a requested number
    of rows, in key order; the same interface as :class:`Batcher`."""

    def __init__(self, spec: Spec):
        from dataclasses import replace

        self.slim = replace(spec, points=(), replications=())
        self.k = len(spec.runs)
        self.reps = list(spec.replications)
        self.where = [(gi, _variant_hash(spec, g), p) for gi, g in enumerate(spec.generators) for p in spec.points]
        self.i, self.j = 0, 0  # next (generator, point), next replication in it
        self.left = spec.size

    def __bool__(self):
        return self.i < len(self.where)

    def take(self, rows: int) -> Span:
        want = max(1, rows // self.k)  # task sets
        pieces = []
        while self.i < len(self.where) and want > 0:
            gi, variant, p = self.where[self.i]
            reps = self.reps[self.j:self.j + want]
            pieces.append((gi, variant, p, reps))
            want -= len(reps)
            self.j += len(reps)
            if self.j >= len(self.reps):
                self.i, self.j = self.i + 1, 0
        span = Span(self.slim, pieces)
        self.left -= span.rows
        return span


@dataclass
class Batch:
    """Task sets and their rows as one worker call computes them (:func:`worker.run_batch`):
    per set a few values, per row only its key; picklable and compact, since an executor sends
    it. Rows are in set order, then in the order of ``schedulers`` (those ``todo`` flags)."""

    sweep: str
    schedulers: tuple  # the spec's runs (its schedulers, or SCHEDULER@PROTOCOL), in key order (`key_order`)
    generators: tuple  # ((name, label, param), ...)
    set_gen: list  # per set: index into generators
    set_params: list  # per set: the generator's parameters as "k=v,k=v"
    set_gen_params: list  # per set: the parameters as canonical JSON (the gen_params column)
    set_point: list
    set_replication: list
    set_seed: list
    todo: bytes  # len(sets) x len(schedulers) flags: the row is to be computed
    keys: list  # per row (from a Span: a pyarrow string array)
    duration_ns: int
    on_miss: str
    run: str | None = None
    topology: str | None = None

    @property
    def rows(self) -> int:
        return len(self.keys)

    @property
    def sets(self) -> int:
        return len(self.set_params)


class Batcher:
    """Cuts units (a list or an iterator, in order) into :class:`Batch` es of a requested
    number of rows, at task-set boundaries; the strings a batch repeats (parameters per point)
    are made once. ``rows``: how many rows the units hold (counted when not given)."""

    def __init__(self, units_, schedulers, rows=None):
        if rows is None:
            units_ = list(units_)
            rows = sum(len(u.schedulers) for u in units_)
        self.units = iter(units_)
        self.head = next(self.units, None)
        self.schedulers = key_order(schedulers)  # as the units list theirs
        self.index = {s: j for j, s in enumerate(self.schedulers)}
        self.left = rows
        self._strings = {}  # (label, point) -> ("k=v,...", canonical JSON)

    def __bool__(self):
        return self.head is not None

    def take(self, rows: int) -> Batch:
        """The next units, at least one and no more than ``rows`` rows when one fits."""
        from ..analysis import _params

        first = self.head
        gens, set_gen, params, canon, point, rep, seed, keys = [], [], [], [], [], [], [], []
        todo = bytearray()
        k = len(self.schedulers)
        gindex = {}
        while self.head is not None:
            u = self.head
            if keys and len(keys) + len(u.schedulers) > rows:
                break
            self.head = next(self.units, None)
            g = (u.generator, u.label, u.param)
            if g not in gindex:
                gindex[g] = len(gens)
                gens.append(g)
            set_gen.append(gindex[g])
            s = self._strings.get((u.label, u.point))
            if s is None:
                s = self._strings[(u.label, u.point)] = (_params(u.params), _canon(u.params))
            params.append(s[0])
            canon.append(s[1])
            point.append(float(u.point))
            rep.append(u.replication)
            seed.append(u.seed)
            flags = bytearray(k)
            if len(u.schedulers) == k:  # every scheduler (the common case): already in key order
                flags = b"\x01" * k
                keys.extend(key for _, key in u.schedulers)
            else:  # rows come back in key order of the schedulers: put the keys in it
                row = [None] * k
                for sched, key in u.schedulers:
                    row[self.index[sched]] = key
                    flags[self.index[sched]] = 1
                keys.extend(key for key in row if key is not None)
            todo += flags
        self.left -= len(keys)
        return Batch(first.sweep, self.schedulers, tuple(gens), set_gen, params, canon, point, rep, seed, bytes(todo), keys,
                     first.duration_ns, first.on_miss, first.run, first.topology)


def all_keys(spec: Spec) -> list[str]:
    return [k for u in units(spec) for _, k in u.schedulers]
