"""The sweep spec's schema (pydantic) and the wording of its errors.

The models below check types (strictly: no "1" for 1, no 1 for true), ranges, required and
unknown fields, and then the rules that span fields; :func:`validate` turns the first error
into one :class:`InputError` naming the file and the field, in the same words as the rest of
rtsched (``field 'utilisation.points[1]': expected a number, got 'x'``). :mod:`.spec` builds
the :class:`~.spec.Spec` from the validated model.
"""

from __future__ import annotations

import difflib
import math
import numbers
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    AllowInfNan,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from .._core import LOCKING_SEP as _LOCKING_SEP
from .._core import TEST_PREFIX as _TEST_PREFIX
from .._core import InputError
from .generator import DEFAULT_PARAM, Generator


def _err(source, fieldname, msg):
    return InputError(f"{source}: field '{fieldname}': {msg}")


def _fail(msg: str, at: str = "") -> PydanticCustomError:
    """A validation error with our own words; ``at`` names a field below the one being
    validated (a rule that spans fields is checked on their parent)."""
    return PydanticCustomError("rtsched", "{msg}", {"msg": msg, "at": at})


def _did_you_mean(word, known) -> str:
    close = difflib.get_close_matches(str(word), list(known), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


class _Model(BaseModel):
    """Strict types (no "1" for 1, no 1 for true), unknown fields refused with the known ones."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _known_fields(cls, data):
        if isinstance(data, dict):
            accepted, shown = [], []
            for name, f in cls.model_fields.items():
                alias = f.validation_alias or f.alias or name
                choices = list(alias.choices) if isinstance(alias, AliasChoices) else [alias]
                given = [c for c in choices if c in data]
                if len(given) > 1:
                    raise _fail(f"give either {given[0]!r} or {given[1]!r}, not both", at=given[1])
                accepted += choices
                shown.append(choices[0])
            unknown = sorted(str(k) for k in data if k not in accepted)
            if unknown:
                raise _fail(f"unknown field (known: {', '.join(sorted(shown))}){_did_you_mean(unknown[0], accepted)}",
                            at=unknown[0])
        return data


#: Utilisation points a spec may give (as a list or a range).
MAX_POINTS = 100_000
#: Replications (seeds) a spec may ask for: `seeds: N` is a range of N seeds made up front.
MAX_SEEDS = 1_000_000
#: Rows a sweep may have (generators × points × seeds × schedulers). The coordinator keeps a
#: few hundred bytes per row it has to track, and at a millisecond a row 10^7 rows are hours on
#: one machine; a bigger experiment is several specs (each resumable on its own).
MAX_ROWS = 10_000_000

Number = Annotated[float, AllowInfNan(False)]
Name = Annotated[str, Field(min_length=1)]


def _param_text(v) -> str:
    """A generator parameter as the generators read it (``key=value`` text)."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (numbers.Real, str)):
        s = repr(v) if isinstance(v, float) else str(v)
        if "," in s or "=" in s or not s:
            raise _fail(f"value {v!r} may not be empty or contain ',' or '='")
        return s
    raise _fail(f"expected a number or a string, got {type(v).__name__}")


@lru_cache(maxsize=1)
def _known_generators() -> frozenset:
    from ..analysis import generators

    return frozenset(g["name"] for g in generators())


def _generator_name(name: str) -> str:
    known = _known_generators()
    if name not in known:
        raise _fail(f"unknown generator {name!r}{_did_you_mean(name, known)}; known: {', '.join(sorted(known))}")
    return name


class _GeneratorModel(_Model):
    name: Annotated[str, AfterValidator(_generator_name)]
    params: dict[str, Annotated[Any, AfterValidator(_param_text)]] | None = None
    param: Name | None = None
    label: Annotated[str, Field(min_length=1, pattern=r"^[^/]*$")] | None = None


# A generator may be written as its bare name.
_GeneratorItem = Annotated[_GeneratorModel, BeforeValidator(lambda v: {"name": v} if isinstance(v, str) else v)]


class _RangeModel(_Model):
    start: Number = Field(alias="from")
    to: Number
    step: Number

    @model_validator(mode="after")
    def _not_empty(self):
        a, b, s = self.start, self.to, self.step
        if s <= 0 or b < a:
            raise _fail(f"empty range from {a:g} to {b:g} step {s:g}")
        # In floating point: (to - from) / step may be 10^600 (or overflow to inf) before any
        # point is made.
        span = (b - a) / s
        if not math.isfinite(span) or span >= MAX_POINTS:
            raise _fail(f"{span + 1:.4g} points is too many (at most {MAX_POINTS:,})")
        return self

    def count(self) -> int:
        return int(math.floor((self.to - self.start) / self.step + 1e-9)) + 1

    def points(self) -> list:
        return [round(self.start + i * self.step, 10) for i in range(self.count())]


def _points(v) -> tuple:
    out = v.points() if isinstance(v, _RangeModel) else [float(p) for p in v]
    if len(set(out)) != len(out):
        raise _fail("points repeat")
    if any(p < 0 for p in out):
        raise _fail("points must be >= 0")
    return tuple(out)


def _distinct(what):
    def check(v):
        if len(set(v)) != len(v):
            raise _fail(what)
        return v

    return check


# Points are a list or a {from, to, step} range; the tags (dropped from field names in
# messages) make pydantic report only the errors of the form the spec used.
_Points = Annotated[
    Annotated[list[Number], Field(min_length=1, max_length=MAX_POINTS), Tag("<list>")] | Annotated[_RangeModel, Tag("<range>")],
    Discriminator(lambda v: "<range>" if isinstance(v, dict) else "<list>"),
    AfterValidator(_points),
]


class _UtilisationModel(_Model):
    points: _Points
    param: Name | None = None
    per_cpu: bool = False


#: A sweep "scheduler" that is a schedulability test (``test:gedf-bcl``, ``test:partition:ffd``):
#: its rows carry the test's verdict instead of a simulation's metrics (``rtsched_sweep::TEST_PREFIX``).
TEST_PREFIX = _TEST_PREFIX


def _schedulers(names: list) -> list:
    from .. import _core

    for s in names:
        if "/" in s or LOCKING_SEP in s:
            raise _fail(f"{s!r}: scheduler names may not contain '/' or {LOCKING_SEP!r} (a protocol is the spec's 'locking' axis)")
        try:
            if s.startswith(TEST_PREFIX):  # a schedulability test in place of a simulation
                _core.check_test(s[len(TEST_PREFIX):])
            else:
                _core.parse_scheduler(s)
        except InputError as e:
            raise _fail(f"{s!r}: {e}") from None
    return _distinct("a scheduler is listed twice")(names)


#: What joins a row's scheduler and its protocol of the ``locking`` axis (``pfp:ffd@pcp``).
LOCKING_SEP = _LOCKING_SEP


def _protocols(names: list) -> list:
    from .. import _core

    known = list(_core.LOCKING_PROTOCOLS)
    for p in names:
        if p not in known:
            raise _fail(f"unknown locking protocol {p!r}{_did_you_mean(p, known)}; known: {', '.join(known)}")
    return _distinct("a protocol is listed twice")(names)


def _seed_count(n: int) -> int:
    if n > MAX_SEEDS:
        raise _fail(f"{n:,} seeds is too many (at most {MAX_SEEDS:,} replications per point)")
    return n


def _duration(v) -> int:
    from ..result import duration_ns

    try:
        ns = duration_ns(v)
    except InputError as e:
        raise _fail(str(e).removeprefix("duration: ")) from None
    if ns <= 0:
        raise _fail("must be positive")
    return ns


def _output(v: str) -> str:
    if Path(v).suffix.lower() not in (".parquet", ".csv"):
        raise _fail(f"expected {_EXPECTED['output']}, got {v!r}")
    return v


class _RunModel(_Model):
    """The spec's ``run:``: what a task file's ``run:`` says about the model the simulator runs
    (its values are checked by the task-file reader itself, in :func:`.spec.parse_spec`);
    duration, seed and on_miss are the spec's own top-level fields."""

    execution: Any | None = None
    cache: Any | None = None
    overheads: Any | None = None

    @model_validator(mode="before")
    @classmethod
    def _not_run_level(cls, data):
        if isinstance(data, dict):
            for k in ("duration", "on_miss", "seed"):
                if k in data:
                    where = "the spec's top-level 'seed' (task sets get seeds from it)" if k == "seed" else f"the spec's top-level {k!r}"
                    raise _fail(f"belongs to {where}, not to run", at=k)
        return data


def _topology(v):
    if isinstance(v, str) and v:
        return v
    if isinstance(v, dict) and v:
        return v
    raise _fail(f"expected {_EXPECTED['topology']}, got {v!r}")


class _SpecModel(_Model):
    name: Name | None = None
    seed: Annotated[int, Field(ge=0)] = 1
    generator: _GeneratorItem | None = None
    generators: Annotated[list[_GeneratorItem], Field(min_length=1)] | None = None
    utilisation: _UtilisationModel = Field(validation_alias=AliasChoices("utilisation", "utilization"))
    schedulers: Annotated[list[Name], Field(min_length=1), BeforeValidator(lambda v: [v] if isinstance(v, str) else v),
                          AfterValidator(_schedulers)]
    seeds: Annotated[
        Annotated[int, Field(ge=1), AfterValidator(_seed_count), Tag("<count>")] | Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=1, max_length=MAX_SEEDS), AfterValidator(_distinct("seeds repeat")), Tag("<list>")],
        Discriminator(lambda v: "<list>" if isinstance(v, list) else "<count>"),
    ] = 1
    duration: Annotated[Any, AfterValidator(_duration)]  # in ns once validated
    on_miss: Literal["continue", "abort"] = "continue"
    output: Annotated[str, AfterValidator(_output)] | None = None
    retries: Annotated[int, Field(ge=0)] = 3
    run: _RunModel | None = None
    topology: Annotated[Any, AfterValidator(_topology)] | None = None
    locking: Annotated[list[Name], Field(min_length=1), BeforeValidator(lambda v: [v] if isinstance(v, str) else v),
                       AfterValidator(_protocols)] | None = None

    _generators: tuple = PrivateAttr(default=())

    @model_validator(mode="after")
    def _generators_fit(self):
        """The rules that span fields: one of generator/generators; the parameter the points
        set is not also fixed; labels differ; per-CPU points need each generator's m."""
        if self.generator is not None and self.generators is not None:
            raise _fail("give either 'generator' or 'generators', not both", at="generators")
        if self.generator is None and self.generators is None:
            raise _fail(f"missing ({_MISSING['generator']})", at="generator")
        many = self.generators is not None
        out, labels = [], set()
        for i, g in enumerate(self.generators if many else [self.generator]):
            f = f"generators[{i}]" if many else "generator"
            params = g.params or {}
            param = g.param or self.utilisation.param or DEFAULT_PARAM.get(g.name, "U")
            if param in params:
                raise _fail("is set by the utilisation points; remove it from params", at=f"{f}.params.{param}")
            if self.utilisation.per_cpu and "m" not in params:
                raise _fail("per_cpu points need the generator's m set explicitly", at=f"{f}.params.m")
            label = g.label or g.name
            if label in labels:
                raise _fail(f"label {label!r} used twice; give each generator its own label", at=f"{f}.label")
            labels.add(label)
            out.append(Generator(g.name, tuple(sorted(params.items())), param, label))
        self._generators = tuple(out)
        # The sweep's size, from the counts alone (nothing is made yet).
        points = self.utilisation.points
        n_seeds = self.seeds if isinstance(self.seeds, int) else len(self.seeds)
        n_locking = len(self.locking or [None])
        rows = len(out) * len(points) * n_seeds * len(self.schedulers) * n_locking
        if rows > MAX_ROWS:
            per = f" × {n_locking} protocols" if self.locking else ""
            raise _fail(f"the sweep would have {rows:,} rows ({len(out)} generator(s) × {len(points):,} points × {n_seeds:,} seeds × "
                        f"{len(self.schedulers)} schedulers{per}); the limit is {MAX_ROWS:,}: split it into several specs", at="seeds")
        return self

    def generator_list(self) -> tuple:
        """The :class:`~.generator.Generator` of each generator entry, defaults filled in."""
        return self._generators


# What a field holds, by the field's name, where the type alone says too little.
_EXPECTED = {
    "points": "a non-empty list of numbers or {from, to, step}",
    "schedulers": "a non-empty list of scheduler names or tests (e.g. [gedf, 'pedf:ffd', 'test:gedf-bcl', 'test:partition:ffd'])",
    "generator": "a mapping with 'name' and 'params' (or a generator name)",
    "generators": "a non-empty list of generators ({name, params, param, label})",
    "params": "a mapping of parameters",
    "label": "a name without '/'",
    "param": "a parameter name",
    "utilisation": "a mapping (e.g. {points: [1.0, 2.0, 3.0]})",
    "utilization": "a mapping (e.g. {points: [1.0, 2.0, 3.0]})",
    "output": "a file name ending in .parquet or .csv",
    "run": "a mapping with execution, cache and/or overheads (as in a task file's run:)",
    "topology": "a topology preset name (e.g. opteron6164x4) or a mapping (as in a task file's platform.topology)",
    "locking": "a non-empty list of locking protocols (e.g. [none, pip, pcp, srp])",
}
# What to write when a field is missing, by the field's name.
_MISSING = {
    "generator": "e.g. {name: randfixedsum, params: {n: 8, m: 4}}",
    "name": "a generator name, e.g. randfixedsum",
    "utilisation": "e.g. {points: [1.0, 2.0, 3.0]}",
    "points": "a list of numbers, or {from, to, step}",
    "from": "a range is written {from: A, to: B, step: S}",
    "to": "a range is written {from: A, to: B, step: S}",
    "step": "a range is written {from: A, to: B, step: S}",
    "schedulers": "e.g. [gedf, 'pedf:ffd', 'gfp:rm', 'test:gedf-bcl']",
    "duration": "e.g. 1s, 500ms, or a number of ms",
}
# pydantic's error types in the words of the rest of rtsched's messages.
_TYPES = {
    "float_type": "a number", "finite_number": "a number", "int_type": "an integer", "bool_type": "true or false",
    "string_type": "a string", "string_too_short": "a non-empty string", "dict_type": "a mapping",
    "model_type": "a mapping", "model_attributes_type": "a mapping", "list_type": "a list", "too_short": "a non-empty list",
}


def _field(loc) -> tuple[str, str | None]:
    """``('utilisation', 'points', '<list>', 1)`` -> ``('utilisation.points[1]', None)``; the
    second item is the field's own name when the error is about the field, not an item of it."""
    where, last = "", None
    for p in loc:
        if isinstance(p, int):
            where, last = f"{where}[{p}]", None
        elif not p.startswith(("<", "[")):  # union tags and dict-key markers are not fields
            where, last = f"{where}.{p}" if where else p, p
    return where, last


def _message(e: dict) -> tuple[str, str]:
    """One pydantic error as (field, message)."""
    where, name = _field(e["loc"])
    ctx, t, got = e.get("ctx") or {}, e["type"], e.get("input")
    if t == "rtsched":
        at = ctx.get("at", "")
        return (f"{where}.{at}" if where and at else where or at), ctx["msg"]
    if t == "missing":
        return where, "missing" + (f" ({_MISSING[name]})" if name in _MISSING else "")
    if t == "extra_forbidden":
        return where, "unknown field"
    if name in _EXPECTED:
        expected = _EXPECTED[name]
    elif t == "greater_than_equal":
        expected = f"an integer >= {ctx['ge']}"
    elif t == "literal_error":
        expected = ctx["expected"].replace("'", "")
    elif t in _TYPES:
        expected = _TYPES[t]
    else:
        return where, e["msg"]
    return where, f"expected {expected}, got {got!r}"


def validate(d: dict, source: str) -> _SpecModel:
    """The validated model of ``d``; raises :class:`InputError` naming the first bad field."""
    try:
        return _SpecModel.model_validate(d)
    except ValidationError as e:
        where, msg = _message(e.errors(include_url=False)[0])
        raise (_err(source, where, msg) if where else InputError(f"{source}: {msg}")) from None
