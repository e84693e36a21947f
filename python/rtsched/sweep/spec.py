"""The sweep spec: the validated :class:`Spec`, its parsing from a dict or a file, and the
probe that tries the generator and every scheduler before any work.

Every error is one :class:`InputError` naming the file and the field, e.g.
``spec.yaml: field 'utilisation.points[1]': expected a number, got 'x'``.
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass
from pathlib import Path

from .._core import InputError

# Which generator parameter the utilisation points set, when the spec does not say.
DEFAULT_PARAM = {"paws2013": "window", "lelli2011": "R"}

_SPEC_KEYS = {"name", "seed", "generator", "generators", "utilisation", "utilization", "schedulers", "seeds",
              "duration", "on_miss", "output", "retries"}



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
    from ..analysis import generators as known_generators

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
    from ..result import duration_ns

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
    from .. import _core
    from ..analysis import generate

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
