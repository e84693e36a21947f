"""Sweeps: generator × utilisation points × schedulers × seeds, one row per (task set, scheduler).

A sweep spec (YAML or a dict; docs/sweeps.md) names a task-set generator and its parameters,
the utilisation points, the schedulers, the replications (seeds) and the simulated duration.
:func:`sweep` expands it into *units* — one generated task set with the schedulers still to
run on it — sends them in chunks to a ``concurrent.futures`` executor (by default a local
process pool on every core; a Dask cluster through ``Client.get_executor()``), and collects
one row per (task set, scheduler).

Overview of the guarantees and where each is kept:

- **Deterministic.** A task set's seed is a hash of the spec seed and its coordinates
  (generator, parameters, utilisation point, replication), never of completion order
  (:func:`taskset_seed`); every scheduler sees the same task set and the same jobs. Rows hold
  no timings. The table is sorted by ``key``.
- **Keyed.** ``key`` (:func:`row_key`) is readable and sortable —
  ``GENERATOR/POINT/REPLICATION/SCHEDULER/HASH`` — where HASH covers what else defines the row
  (parameters, duration, on_miss, spec seed), so two specs that share a row share its key.
- **Resumable.** Completed rows are written in batches to part files beside the table
  (``TABLE.parts/``), each atomically (temporary file, fsync, rename). A rerun reads the table
  and any parts, skips the keys already there, and at the end rewrites the table atomically
  with every row once, sorted, and removes the parts. A crash at any point leaves whole files.
- **No lost results.** A chunk whose worker died or raised is resubmitted (``retries``); a
  broken local process pool is replaced. Dask reschedules a dead worker's tasks by itself.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import math
import numbers
import os
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ._core import InputError

#: Summary columns, in order, as :attr:`rtsched.Result.summary` names them.
SUMMARY_COLUMNS = [
    "jobs", "completed", "met", "missed", "aborted", "dsr",
    "max_tardiness_ns", "mean_tardiness_ns", "max_response_ns", "mean_response_ns", "p99_response_ns",
    "preemptions", "migrations", "context_switches", "scheduler_invocations",
]
#: Coordinates of a row (what it is), then its outcome.
COORD_COLUMNS = [
    "key", "sweep", "generator", "gen_params", "param", "point", "replication", "taskset_seed",
    "scheduler", "m", "n", "U", "duration_ns", "on_miss",
]
OUTCOME_COLUMNS = ["status", "error"] + SUMMARY_COLUMNS + ["aur", "schedulable"]
COLUMNS = COORD_COLUMNS + OUTCOME_COLUMNS
_INT_COLUMNS = {"replication", "taskset_seed", "m", "n", "duration_ns", "jobs", "completed", "met", "missed", "aborted",
                "max_tardiness_ns", "max_response_ns", "p99_response_ns", "preemptions", "migrations",
                "context_switches", "scheduler_invocations"}
_FLOAT_COLUMNS = {"point", "U", "dsr", "mean_tardiness_ns", "mean_response_ns", "aur"}
_STR_COLUMNS = {"key", "sweep", "generator", "gen_params", "param", "scheduler", "on_miss", "status", "error"}

# Which generator parameter the utilisation points set, when the spec does not say.
DEFAULT_PARAM = {"paws2013": "window", "lelli2011": "R"}

_SPEC_KEYS = {"name", "seed", "generator", "generators", "utilisation", "utilization", "schedulers", "seeds",
              "duration", "on_miss", "output", "retries"}


# ----------------------------------------------------------------------------- the spec

@dataclass(frozen=True)
class Generator:
    """One generator of a sweep: its name, fixed parameters, and which parameter the points set."""

    name: str
    params: tuple  # sorted (key, value) pairs, values as strings
    param: str
    label: str

    @property
    def params_dict(self) -> dict:
        return dict(self.params)


@dataclass(frozen=True)
class Spec:
    """A validated sweep spec (see :func:`load_spec`, :func:`parse_spec`)."""

    name: str
    seed: int
    generators: tuple
    points: tuple
    per_cpu: bool
    schedulers: tuple
    replications: tuple
    duration_ns: int
    on_miss: str
    output: str | None = None
    retries: int = 3
    source: str = "<spec>"

    @property
    def size(self) -> int:
        """Rows the sweep produces: task sets × schedulers."""
        return len(self.generators) * len(self.points) * len(self.replications) * len(self.schedulers)


def _err(source, fieldname, msg):
    return InputError(f"{source}: field '{fieldname}': {msg}")


def _number(v, source, fieldname):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
        raise _err(source, fieldname, f"expected a number, got {v!r}")
    return float(v)


def _int(v, source, fieldname, minimum=0):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < minimum:
        raise _err(source, fieldname, f"expected an integer >= {minimum}, got {v!r}")
    return int(v)


def _param_text(v, source, fieldname):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (numbers.Real, str)):
        s = repr(v) if isinstance(v, float) else str(v)
        if "," in s or "=" in s or not s:
            raise _err(source, fieldname, f"value {v!r} may not be empty or contain ',' or '='")
        return s
    raise _err(source, fieldname, f"expected a number or a string, got {type(v).__name__}")


def _points(u, source):
    pts = u.get("points")
    if pts is None:
        raise _err(source, "utilisation.points", "missing (a list of numbers, or {from, to, step})")
    if isinstance(pts, dict):
        unknown = set(pts) - {"from", "to", "step"}
        if unknown or not {"from", "to", "step"} <= set(pts):
            raise _err(source, "utilisation.points", "a range is written {from: A, to: B, step: S}")
        a, b, s = (_number(pts[k], source, f"utilisation.points.{k}") for k in ("from", "to", "step"))
        if s <= 0 or b < a:
            raise _err(source, "utilisation.points", f"empty range from {a:g} to {b:g} step {s:g}")
        count = int(math.floor((b - a) / s + 1e-9)) + 1
        if count > 100_000:
            raise _err(source, "utilisation.points", f"{count} points is too many")
        out = [round(a + i * s, 10) for i in range(count)]
    elif isinstance(pts, list) and pts:
        out = [_number(p, source, f"utilisation.points[{i}]") for i, p in enumerate(pts)]
    else:
        raise _err(source, "utilisation.points", f"expected a non-empty list or {{from, to, step}}, got {pts!r}")
    if len(set(out)) != len(out):
        raise _err(source, "utilisation.points", "points repeat")
    if any(p < 0 for p in out):
        raise _err(source, "utilisation.points", "points must be >= 0")
    return tuple(out)


def _generators(d, source, default_param):
    if "generator" in d and "generators" in d:
        raise _err(source, "generators", "give either 'generator' or 'generators', not both")
    raw = d.get("generators", d.get("generator"))
    fname = "generators" if "generators" in d else "generator"
    if raw is None:
        raise _err(source, "generator", "missing (e.g. {name: randfixedsum, params: {n: 8, m: 4}})")
    items = raw if isinstance(raw, list) else [raw]
    if not items:
        raise _err(source, fname, "empty list")
    from .analysis import generators as known_generators

    known = {g["name"] for g in known_generators()}
    out, labels = [], set()
    for i, g in enumerate(items):
        f = f"{fname}[{i}]" if isinstance(raw, list) else fname
        if isinstance(g, str):
            g = {"name": g}
        if not isinstance(g, dict):
            raise _err(source, f, f"expected a mapping with 'name' and 'params', got {g!r}")
        unknown = set(g) - {"name", "params", "param", "label"}
        if unknown:
            raise _err(source, f"{f}.{sorted(unknown)[0]}", "unknown field (known: name, params, param, label)")
        name = g.get("name")
        if not isinstance(name, str) or name not in known:
            raise _err(source, f"{f}.name", f"unknown generator {name!r}; known: {', '.join(sorted(known))}")
        params = g.get("params") or {}
        if not isinstance(params, dict):
            raise _err(source, f"{f}.params", f"expected a mapping of parameters, got {params!r}")
        param = g.get("param", default_param or DEFAULT_PARAM.get(name, "U"))
        if not isinstance(param, str) or not param:
            raise _err(source, f"{f}.param", f"expected a parameter name, got {param!r}")
        if param in params:
            raise _err(source, f"{f}.params.{param}", f"is set by the utilisation points; remove it from params")
        pairs = tuple(sorted((str(k), _param_text(v, source, f"{f}.params.{k}")) for k, v in params.items()))
        label = g.get("label", name)
        if not isinstance(label, str) or not label or "/" in label:
            raise _err(source, f"{f}.label", f"expected a name without '/', got {label!r}")
        if label in labels:
            raise _err(source, f"{f}.label", f"label {label!r} used twice; give each generator its own label")
        labels.add(label)
        out.append(Generator(name, pairs, param, label))
    return tuple(out)


def parse_spec(d: dict, source: str = "<spec>") -> Spec:
    """Validate a spec given as a dict. Raises :class:`InputError` naming the field."""
    from .result import duration_ns

    if not isinstance(d, dict):
        raise InputError(f"{source}: a sweep spec is a mapping (name, generator, utilisation, schedulers, seeds, duration)")
    unknown = set(d) - _SPEC_KEYS
    if unknown:
        raise _err(source, sorted(unknown)[0], f"unknown field (known: {', '.join(sorted(_SPEC_KEYS - {'utilization'}))})")
    name = d.get("name", Path(source).stem if source != "<spec>" else "sweep")
    if not isinstance(name, str) or not name:
        raise _err(source, "name", f"expected a string, got {name!r}")
    seed = _int(d.get("seed", 1), source, "seed")
    u = d.get("utilisation", d.get("utilization"))
    if not isinstance(u, dict):
        raise _err(source, "utilisation", "missing or not a mapping (e.g. {points: [1.0, 2.0, 3.0]})")
    bad = set(u) - {"points", "param", "per_cpu"}
    if bad:
        raise _err(source, f"utilisation.{sorted(bad)[0]}", "unknown field (known: points, param, per_cpu)")
    points = _points(u, source)
    per_cpu = u.get("per_cpu", False)
    if not isinstance(per_cpu, bool):
        raise _err(source, "utilisation.per_cpu", f"expected true or false, got {per_cpu!r}")
    gens = _generators(d, source, u.get("param"))
    if per_cpu:
        for i, g in enumerate(gens):
            if "m" not in g.params_dict:
                raise _err(source, f"generator params.m" if len(gens) == 1 else f"generators[{i}].params.m",
                           "per_cpu points need the generator's m set explicitly")
    scheds = d.get("schedulers")
    if isinstance(scheds, str):
        scheds = [scheds]
    if not isinstance(scheds, list) or not scheds or not all(isinstance(s, str) and s for s in scheds):
        raise _err(source, "schedulers", f"expected a non-empty list of scheduler names (e.g. [gedf, 'pedf:ffd', 'gfp:rm']), got {scheds!r}")
    if len(set(scheds)) != len(scheds):
        raise _err(source, "schedulers", "a scheduler is listed twice")
    for s in scheds:
        if "/" in s:
            raise _err(source, "schedulers", f"{s!r}: scheduler names may not contain '/'")
    seeds = d.get("seeds", 1)
    if isinstance(seeds, list):
        if not seeds:
            raise _err(source, "seeds", "empty list")
        reps = tuple(_int(s, source, f"seeds[{i}]") for i, s in enumerate(seeds))
        if len(set(reps)) != len(reps):
            raise _err(source, "seeds", "seeds repeat")
    else:
        reps = tuple(range(1, _int(seeds, source, "seeds", minimum=1) + 1))
    if "duration" not in d:
        raise _err(source, "duration", "missing (e.g. 1s, 500ms, or a number of ms)")
    try:
        dur = duration_ns(d["duration"])
    except InputError as e:
        raise _err(source, "duration", str(e)) from None
    if dur <= 0:
        raise _err(source, "duration", "must be positive")
    on_miss = d.get("on_miss", "continue")
    if on_miss not in ("continue", "abort"):
        raise _err(source, "on_miss", f"expected continue or abort, got {on_miss!r}")
    output = d.get("output")
    if output is not None and (not isinstance(output, str) or Path(output).suffix.lower() not in (".parquet", ".csv")):
        raise _err(source, "output", f"expected a file name ending in .parquet or .csv, got {output!r}")
    retries = _int(d.get("retries", 3), source, "retries")
    spec = Spec(name, seed, gens, points, per_cpu, tuple(scheds), reps, dur, on_miss, output, retries, source)
    _probe(spec)
    return spec


def load_spec(path) -> Spec:
    """Read and validate a sweep spec file (YAML or JSON)."""
    import yaml

    path = os.fspath(path)
    with open(path) as f:
        text = f.read()
    try:
        d = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise InputError(f"{path}: not valid YAML{where}: {getattr(e, 'problem', e)}") from None
    spec = parse_spec(d, source=path)
    if spec.output and not os.path.isabs(spec.output):
        spec = _replace(spec, output=os.path.join(os.path.dirname(os.path.abspath(path)), spec.output))
    return spec


def _replace(spec, **kw):
    from dataclasses import replace

    return replace(spec, **kw)


def _probe(spec: Spec):
    """Fail early, naming the field, on parameters or schedulers that can never work."""
    from . import _core
    from .analysis import generate

    for i, g in enumerate(spec.generators):
        f = "generator" if len(spec.generators) == 1 else f"generators[{i}]"
        for p in (spec.points[0], spec.points[-1]):
            try:
                gen = generate(g.name, seed=0, **_gen_params(spec, g, p))
            except InputError as e:
                raise _err(spec.source, f"{f}.params", f"at point {p:g}: {e}") from None
    probe_ts = gen.taskset.with_run(duration_ns=1)
    tiny = _core.parse_taskset(f"platform: {{cpus: {max(1, probe_ts.cpus)}}}\ntasks:\n  - {{name: probe, period: 100, wcet: 1}}\n",
                               "yaml", "<probe>")
    for s in spec.schedulers:
        try:
            _core.simulate(tiny.with_run(duration_ns=1), s, False)
        except InputError as e:
            msg = str(e).replace("<probe>: task 'probe': ", "")
            if "field 'cpu'" in msg:
                msg += f" (generated task sets have no CPUs: use a partitioner, e.g. '{_core.parse_scheduler(s)[0]}:ffd')"
            raise _err(spec.source, "schedulers", f"{s!r}: {msg}") from None


def _gen_params(spec: Spec, g: Generator, point: float) -> dict:
    params = g.params_dict
    v = point * float(params["m"]) if spec.per_cpu else point
    params[g.param] = str(int(v)) if float(v).is_integer() and g.param in ("window", "n", "m") else repr(float(v))
    return params


# ----------------------------------------------------------------------------- keys and units

def _canon(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def _variant_hash(spec: Spec, g: Generator) -> str:
    """What else defines a row besides generator label, point, replication and scheduler."""
    what = {"gen": g.name, "params": g.params, "param": g.param, "per_cpu": spec.per_cpu,
            "duration_ns": spec.duration_ns, "on_miss": spec.on_miss, "seed": spec.seed}
    return hashlib.sha256(_canon(what).encode()).hexdigest()[:10]


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
                                    taskset_seed(spec.seed, g, spec.per_cpu, p, r), spec.duration_ns, spec.on_miss, todo))
    return out


def all_keys(spec: Spec) -> list[str]:
    return [k for u in units(spec) for _, k in u.schedulers]


# ----------------------------------------------------------------------------- the worker side

def run_unit(u: Unit) -> list[dict]:
    """Generate the unit's task set and simulate it under each of its schedulers."""
    from . import _core
    from .analysis import generate

    g = generate(u.generator, seed=u.seed, **u.params)
    ts = g.taskset.with_run(duration_ns=u.duration_ns, seed=u.seed, on_miss=u.on_miss)
    base = {"sweep": u.sweep, "generator": u.label, "gen_params": _canon(u.params), "param": u.param,
            "point": float(u.point), "replication": u.replication, "taskset_seed": u.seed,
            "m": ts.cpus, "n": len(ts.task_names), "U": float(ts.utilization),
            "duration_ns": u.duration_ns, "on_miss": u.on_miss}
    rows = []
    for sched, key in u.schedulers:
        row = dict(base, key=key, scheduler=sched)
        try:
            raw = _core.simulate(ts, sched, False)
        except InputError as e:
            # The scheduler was probed on a trivial set, so this is about this task set:
            # a partitioner that found no partition.
            row.update(status="partition-failed", error=str(e), schedulable=False)
        else:
            doc = json.loads(raw.to_json(False))
            total = doc["total"]
            row.update({c: total[c] for c in SUMMARY_COLUMNS if c in total})
            row["scheduler_invocations"] = doc["counters"]["scheduler_invocations"]
            row.update(status="ok", error="", schedulable=total["missed"] == 0)
            if g.utilities is not None:
                # Accrued utility ratio with the step TUFs of ChronOS: a job accrues its task's
                # utility iff it meets its deadline.
                tasks = doc["tasks"]
                got = sum(w * t["met"] for w, t in zip(g.utilities, tasks))
                could = sum(w * t["jobs"] for w, t in zip(g.utilities, tasks))
                row["aur"] = got / could if could else float("nan")
        rows.append(row)
    return rows


def run_chunk(chunk: list[Unit]) -> list[dict]:
    """What an executor runs: a few units at once (so tiny simulations amortise the round trip)."""
    out = []
    for u in chunk:
        out.extend(run_unit(u))
    return out


# ----------------------------------------------------------------------------- tables on disk

def _frame(rows):
    import pandas as pd

    df = pd.DataFrame.from_records(rows, columns=COLUMNS) if rows else pd.DataFrame({c: [] for c in COLUMNS})
    return _coerce(df)


def _coerce(df):
    """One dtype per column whatever the file type or the rows (failed rows have no metrics)."""
    import pandas as pd

    for c in COLUMNS:
        if c not in df.columns:
            df[c] = pd.NA
    df = df[COLUMNS + [c for c in df.columns if c not in COLUMNS]].copy()
    for c in _INT_COLUMNS:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("Int64")
    for c in _FLOAT_COLUMNS:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    for c in _STR_COLUMNS:
        df[c] = df[c].astype(object).where(df[c].notna(), "").astype(str)
    df["schedulable"] = df["schedulable"].map(lambda v: str(v).lower() in ("true", "1", "1.0")).astype(bool)
    return df


def _fmt(path) -> str:
    ext = Path(path).suffix.lower()
    if ext not in (".parquet", ".csv"):
        raise InputError(f"{path}: results table must end in .parquet or .csv")
    return ext[1:]


def _write_atomic(df, path):
    """Write ``df`` to ``path`` (Parquet or CSV by extension): temporary file, fsync, rename."""
    from ._io import write_atomic

    def write(tmp):
        if _fmt(path) == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp)
        else:
            df.to_csv(tmp, index=False)

    write_atomic(path, write)


def read_table(path):
    """Read a results table (Parquet or CSV) with the sweep's column types."""
    import pandas as pd

    path = os.fspath(path)
    if _fmt(path) == "parquet":
        df = pd.read_parquet(path)
    else:
        df = pd.read_csv(path, dtype={c: str for c in _STR_COLUMNS}, keep_default_na=False,
                         na_values={c: [""] for c in _INT_COLUMNS | _FLOAT_COLUMNS})
    return _coerce(df)


def parts_dir(path) -> Path:
    p = Path(path)
    return p.with_name(p.name + ".parts")


def _read_all(path):
    """The table and any part files left by earlier (maybe interrupted) runs, each key once."""
    import pandas as pd

    frames = []
    if os.path.exists(path):
        frames.append(read_table(path))
    pd_dir = parts_dir(path)
    parts = sorted(pd_dir.glob(f"part-*.{_fmt(path)}")) if pd_dir.is_dir() else []
    frames += [read_table(p) for p in parts]
    if not frames:
        return _frame([]), parts
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    df = df.drop_duplicates("key", keep="first").sort_values("key", kind="stable").reset_index(drop=True)
    return df, parts


def consolidate(path):
    """Fold part files into the table (atomically), then remove them. Returns the table."""
    df, parts = _read_all(path)
    if parts or not os.path.exists(path):
        _write_atomic(df, path)
    for p in parts:
        p.unlink(missing_ok=True)
    try:
        parts_dir(path).rmdir()
    except OSError:
        pass
    return df


class _Sink:
    """Completed rows: buffered, then written as one part file per batch (atomic)."""

    def __init__(self, path, batch_rows=1000, batch_seconds=10.0):
        self.path, self.batch_rows, self.batch_seconds = path, batch_rows, batch_seconds
        self.buffer, self.rows, self.last = [], [], time.monotonic()
        self.run_id = f"{int(time.time())}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.count = 0

    def add(self, rows):
        self.buffer.extend(rows)
        self.rows.extend(rows)
        if len(self.buffer) >= self.batch_rows or time.monotonic() - self.last >= self.batch_seconds:
            self.flush()

    def flush(self):
        self.last = time.monotonic()
        if not self.buffer or self.path is None:
            self.buffer = []
            return
        d = parts_dir(self.path)
        d.mkdir(parents=True, exist_ok=True)
        self.count += 1
        _write_atomic(_frame(self.buffer), d / f"part-{self.run_id}-{self.count:06d}.{_fmt(self.path)}")
        self.buffer = []


# ----------------------------------------------------------------------------- progress

class Progress:
    """A progress bar with rate and ETA on stderr. On a terminal it redraws in place at most
    10 times a second; otherwise it prints a line at most every ``interval`` seconds."""

    def __init__(self, total, label="sweep", stream=None, enabled=True, interval=10.0):
        self.total, self.label, self.enabled = total, label, enabled
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = 0.1 if self.tty else interval
        self.done, self.start, self.last = 0, time.monotonic(), -1e9
        self.note = ""

    def update(self, n=0, note=None, force=False):
        self.done += n
        if note is not None:
            self.note = note
        now = time.monotonic()
        if not self.enabled or (not force and now - self.last < self.interval):
            return
        self.last = now
        self.stream.write(("\r\x1b[K" if self.tty else "") + self.line(now) + ("" if self.tty else "\n"))
        self.stream.flush()

    def line(self, now=None):
        el = (now or time.monotonic()) - self.start
        rate = self.done / el if el > 0 else 0.0
        frac = self.done / self.total if self.total else 1.0
        eta = (self.total - self.done) / rate if rate > 0 else float("nan")
        width = 24
        bar = "#" * int(frac * width) + "." * (width - int(frac * width))
        eta_s = "?" if math.isnan(eta) else _hms(eta)
        return (f"{self.label} [{bar}] {self.done}/{self.total} rows ({100 * frac:.0f}%) "
                f"{rate:.1f}/s elapsed {_hms(el)} ETA {eta_s}" + (f" {self.note}" if self.note else ""))

    def close(self):
        if self.enabled:
            self.update(force=True)
            if self.tty:
                self.stream.write("\n")
                self.stream.flush()


def _hms(s):
    s = int(round(s))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


# ----------------------------------------------------------------------------- running

def _chunks(us, workers):
    # Enough chunks to keep every worker busy and to resubmit little on a failure; few enough
    # that the round trip (a process pool pickle, a Dask task) stays small beside the work.
    size = max(1, min(64, len(us) // max(1, workers * 16)))
    return [us[i:i + size] for i in range(0, len(us), size)]


def _workers(executor):
    n = getattr(executor, "_max_workers", None)
    if n:
        return n
    client = getattr(executor, "_client", None)
    if client is not None:
        try:
            return max(1, sum(client.nthreads().values()))
        except Exception:  # noqa: BLE001 - only a sizing hint
            pass
    return os.cpu_count() or 1


def sweep(spec, executor=None, output=None, progress=None, workers=None, batch_rows=5000, batch_seconds=10.0,
          resume=True):
    """Run a sweep and return its rows (a pandas DataFrame, sorted by ``key``).

    ``spec``: a :class:`Spec`, a dict, or a path to a YAML/JSON spec (docs/sweeps.md).
    ``executor``: any ``concurrent.futures.Executor`` — default a ``ProcessPoolExecutor`` on
    ``workers`` processes (default: every core); for Dask, ``Client(...).get_executor()``.
    ``output``: a ``.parquet`` or ``.csv`` table (default the spec's ``output``; None keeps the
    rows in memory only). Rows already in the table (or in part files of an interrupted run)
    are skipped when ``resume``; new rows are appended, batch by batch, atomically.
    ``progress``: None (a bar on stderr when it is a terminal), True, False, or a
    :class:`Progress`.
    """
    if isinstance(spec, (str, os.PathLike)):
        spec = load_spec(spec)
    elif isinstance(spec, dict):
        spec = parse_spec(spec)
    elif not isinstance(spec, Spec):
        raise InputError(f"sweep: expected a spec (path, dict or Spec), got {type(spec).__name__}")
    output = os.fspath(output) if output is not None else spec.output
    if output is not None:
        _fmt(output)
    done = set()
    if output is not None and resume:
        existing, _ = _read_all(output)
        done = set(existing["key"])
    elif output is not None:
        for p in [Path(output), *(parts_dir(output).glob("part-*") if parts_dir(output).is_dir() else [])]:
            p.unlink(missing_ok=True)
    every = units(spec)
    keys = {k for u in every for _, k in u.schedulers}
    todo = []
    for u in every:
        left = [(s, k) for s, k in u.schedulers if k not in done]
        if left:
            u.schedulers = left
            todo.append(u)
    total_rows = sum(len(u.schedulers) for u in todo)
    if not todo and progress is not False:
        print(f"sweep {spec.name}: all {spec.size} rows already in {output}; nothing to run", file=sys.stderr)
        progress = False
    if isinstance(progress, Progress):
        bar = progress
        bar.total = total_rows
    else:
        bar = Progress(total_rows, label=f"sweep {spec.name}",
                       enabled=sys.stderr.isatty() if progress is None else bool(progress))
    sink = _Sink(output, batch_rows, batch_seconds)
    try:
        if todo:
            _run(todo, spec.retries, executor, workers, sink, bar)
    finally:
        sink.flush()  # whatever completed is kept, even on an interrupt
    bar.close()
    if output is None:
        df = _frame(sink.rows).sort_values("key", kind="stable").reset_index(drop=True)
        return df
    table = consolidate(output)
    return table[table["key"].isin(keys)].reset_index(drop=True)


def _run(todo, retries, executor, workers, sink, bar):
    own = executor is None
    nworkers = (workers or os.cpu_count() or 1) if own else _workers(executor)
    if own:
        executor = cf.ProcessPoolExecutor(max_workers=nworkers)
    pending = {}  # future -> chunk
    tries = {}  # id(chunk) -> failures so far

    def submit(chunk):
        pending[executor.submit(run_chunk, chunk)] = chunk

    try:
        for c in _chunks(todo, nworkers):
            tries[id(c)] = 0
            submit(c)
        while pending:
            finished, _ = cf.wait(list(pending), timeout=1.0, return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                if fut not in pending:  # resubmitted with a replaced pool below
                    continue
                chunk = pending.pop(fut)
                try:
                    rows = fut.result()
                except Exception as e:  # noqa: BLE001 - a worker died or failed: retry the chunk
                    tries[id(chunk)] += 1
                    if tries[id(chunk)] > retries:
                        raise RuntimeError(f"a chunk of {len(chunk)} task sets failed {tries[id(chunk)]} times; "
                                           f"last error: {type(e).__name__}: {e}") from e
                    if own and isinstance(e, cf.process.BrokenProcessPool):
                        # Every future of a broken pool fails: replace the pool, resubmit them all.
                        lost = [chunk] + [pending.pop(f) for f in list(pending)]
                        executor.shutdown(wait=False, cancel_futures=True)
                        executor = cf.ProcessPoolExecutor(max_workers=nworkers)
                        bar.update(note=f"(a worker died: resubmitted {len(lost)} chunks)", force=True)
                        for c in lost:
                            submit(c)
                    else:
                        bar.update(note=f"(retrying a chunk after {type(e).__name__})", force=True)
                        submit(chunk)
                    continue
                sink.add(rows)
                bar.update(len(rows))
            bar.update()
    except BaseException:
        for f in pending:
            f.cancel()
        raise
    finally:
        if own:
            executor.shutdown(wait=True, cancel_futures=True)
