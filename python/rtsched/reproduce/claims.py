"""Claims that can fail: what a reproduction checks of its paper, as data.

A :class:`Claim` is one sentence of a paper made testable: where it is (``source``), the
paper's words (``quote``), the metric as the paper defines it (``metric``), and a ``rule``
that maps the metric's 95% interval to a verdict, tied to the paper's words ("more than
double": the interval's lower end is above 2). A reproduction measures the metric twice: on
the mechanism the claim credits (``ours``) and on a weakened variant of it (``control``:
PAWS without stealing, a linear search where the heap is credited). A claim that holds must
stop holding under its control; where it does not, the experiment cannot tell, and the
verdict says so.

Every verdict and every sentence that explains one is computed here, from the numbers:
reproductions write no verdict words of their own. :func:`write` puts the claims into
``OUT/NAME/claims.json`` and :func:`table` renders the report's table from the same data.

Intervals: paired statistics over the same task sets are bootstrapped (resampling the sets,
a seeded generator: the same numbers give the same interval); proportions take Wilson's
interval (``scipy.stats.binomtest``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

#: The verdict words, in one place.
HOLDS = "holds"
PARTLY = "partly"
NOT = "does not hold"
NA = "not comparable"
CANNOT_TELL = "cannot tell"
VERDICTS = (HOLDS, PARTLY, NOT, NA, CANNOT_TELL)

LEVEL = 0.95
BOOTSTRAP = 4000


@dataclass(frozen=True)
class Estimate:
    """A statistic with its interval: ``value`` in [``lo``, ``hi``] at 95%, from ``n`` samples."""

    value: float
    lo: float
    hi: float
    n: int
    method: str
    unit: str = ""

    def short(self, digits: int = 3) -> str:
        """``value [lo, hi]`` (for a table's cell)."""
        f = lambda x: f"{x:.{digits}g}"  # noqa: E731
        return f"{f(self.value)} [{f(self.lo)}, {f(self.hi)}]"

    def text(self, digits: int = 3) -> str:
        if not self.n or math.isnan(self.value):
            return "no data"
        unit = f" {self.unit}" if self.unit else ""
        f = lambda x: f"{x:.{digits}g}"  # noqa: E731
        return f"{f(self.value)}{unit} [{f(self.lo)}, {f(self.hi)}] ({self.method}, n = {self.n})"


def nothing(method: str = "no data", unit: str = "") -> Estimate:
    return Estimate(float("nan"), float("nan"), float("nan"), 0, method, unit)


def _bootstrap(stat: Callable[[np.ndarray], float], n: int, seed: int) -> tuple[float, float, float]:
    """`stat(idx)` on all n samples, and its percentile interval over resamples of them (one
    call per resample: for statistics that do not vectorise, such as a fitted slope)."""
    return _percentiles(lambda rows: np.array([stat(r) for r in rows], dtype=float), n, seed)


def _percentiles(stat_rows: Callable[[np.ndarray], np.ndarray], n: int, seed: int) -> tuple[float, float, float]:
    """The percentile bootstrap: ``stat_rows(idx)`` takes a (k, n) array of resampled indices
    and gives one statistic per row. The value on all n samples, and the interval over
    BOOTSTRAP resamples from a seeded generator (the same numbers give the same interval)."""
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(np.asarray(stat_rows(np.arange(n)[None, :]), float)[0])
    if n == 1:
        return value, value, value
    rng = np.random.Generator(np.random.PCG64(seed))
    # In blocks of rows, so that memory stays bounded for large n (a million samples would be
    # 32 GB of indices at once). Up to 50 million indices they are drawn at once; past that,
    # block by block (a different, equally seeded stream).
    block = max(1, 4_000_000 // n)
    at_once = BOOTSTRAP * n <= 50_000_000
    draws = rng.integers(0, n, size=(BOOTSTRAP, n)) if at_once else None
    parts = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(0, BOOTSTRAP, block):
            rows = draws[k:k + block] if at_once else rng.integers(0, n, size=(min(block, BOOTSTRAP - k), n))
            parts.append(np.asarray(stat_rows(rows), float))
    boots = np.concatenate(parts)
    boots = boots[np.isfinite(boots)]
    if boots.size == 0:
        return value, float("nan"), float("nan")
    a = (1 - LEVEL) / 2
    lo, hi = np.quantile(boots, [a, 1 - a])
    return value, float(lo), float(hi)


def bootstrap(stat_rows: Callable[[np.ndarray], np.ndarray], n: int, method: str, unit: str = "", seed: int = 1) -> Estimate:
    """Any statistic of n paired samples with its percentile interval, vectorised:
    ``stat_rows(idx)`` maps a (k, n) array of sample indices to k values (for example
    ``lambda i: (a[i].mean(1) - b[i].mean(1)) / c[i].mean(1)``). :func:`mean`,
    :func:`mean_difference` and :func:`ratio_of_means` are this with their statistic."""
    return Estimate(*_percentiles(stat_rows, n, seed), n, method, unit)


def ratio_of_means(a: Sequence[float], b: Sequence[float], unit: str = "", seed: int = 1) -> Estimate:
    """mean(a) / mean(b), ``a`` and ``b`` paired (the same task sets), bootstrapped by set."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape:
        raise ValueError(f"paired samples of different sizes: {a.shape} and {b.shape}")

    def stat(i):
        num, den = a[i].mean(axis=1), b[i].mean(axis=1)
        return np.where(den != 0, num / np.where(den != 0, den, 1), np.where(num > 0, np.inf, np.nan))

    return bootstrap(stat, len(a), "ratio of means, paired bootstrap", unit, seed)


def mean_difference(a: Sequence[float], b: Sequence[float], unit: str = "", seed: int = 1) -> Estimate:
    """mean(a − b) over paired samples, bootstrapped by pair."""
    d = np.asarray(a, float) - np.asarray(b, float)
    return bootstrap(lambda i: d[i].mean(axis=1), len(d), "mean paired difference, bootstrap", unit, seed)


def mean(a: Sequence[float], unit: str = "", seed: int = 1) -> Estimate:
    x = np.asarray(a, float)
    return bootstrap(lambda i: x[i].mean(axis=1), len(x), "mean, bootstrap", unit, seed)


def proportion(k: int, n: int) -> Estimate:
    """k of n, with Wilson's interval."""
    if n == 0:
        return nothing("Wilson")
    from scipy.stats import binomtest

    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=LEVEL, method="wilson")
    return Estimate(k / n, float(ci.low), float(ci.high), int(n), "proportion, Wilson")


def loglog_slope(x: Sequence[float], y: Sequence[float], seed: int = 1, floor: float = 1.0) -> Estimate:
    """The slope of log y against log x (1: linear growth, 0: constant), bootstrapped over
    the (x, y) samples. A y below ``floor`` (one unit: a count, a ns) is read as ``floor``, so a
    cost measured as 0 does not weigh as minus infinity. Each resample's least-squares slope in
    closed form (a resample whose x are all equal has none)."""
    lx, ly = np.log(np.asarray(x, float)), np.log(np.maximum(np.asarray(y, float), floor))

    def stat(i):
        X, Y = lx[i], ly[i]
        mx, my = X.mean(-1, keepdims=True), Y.mean(-1, keepdims=True)
        sxx = ((X - mx) ** 2).sum(-1)
        return np.where(np.ptp(X, axis=-1) == 0, np.nan, ((X - mx) * (Y - my)).sum(-1) / np.where(sxx == 0, 1, sxx))

    return bootstrap(stat, len(lx), "log-log slope, bootstrap", seed=seed)


# --- rules: an interval to a verdict, in the paper's words ------------------------------------

@dataclass(frozen=True)
class Threshold:
    """The paper says the metric is above (or below) ``threshold`` (its words in ``words``):
    holds when the whole interval is beyond it, does not hold when none of it is."""

    threshold: float
    words: str = ""
    above: bool = True

    def judge(self, e: Estimate) -> tuple[str, str]:
        t, side = self.threshold, "above" if self.above else "below"
        if not e.n or math.isnan(e.lo) or math.isnan(e.hi):
            return NA, "no interval"
        (near, near_end), (far, far_end) = ((e.lo, "lower"), (e.hi, "upper")) if self.above else ((e.hi, "upper"), (e.lo, "lower"))
        beyond = (lambda x: x > t) if self.above else (lambda x: x < t)  # noqa: E731
        if beyond(near):
            return HOLDS, f"the interval's {near_end} end {near:.3g} is {side} {t:g}"
        if not beyond(far):
            return NOT, f"the interval's {far_end} end {far:.3g} is not {side} {t:g}"
        return PARTLY, f"the interval [{e.lo:.3g}, {e.hi:.3g}] contains {t:g}"

    def text(self) -> str:
        return self.words or f"{'above' if self.above else 'below'} {self.threshold:g}"


def Above(threshold: float, words: str = "") -> Threshold:  # noqa: N802 - reads as the rule it makes
    return Threshold(threshold, words, True)


def Below(threshold: float, words: str = "") -> Threshold:  # noqa: N802
    return Threshold(threshold, words, False)


@dataclass(frozen=True)
class Within:
    lo: float
    hi: float
    words: str = ""

    def judge(self, e: Estimate) -> tuple[str, str]:
        if not e.n or math.isnan(e.lo):
            return NA, "no interval"
        if self.lo <= e.lo and e.hi <= self.hi:
            return HOLDS, f"[{e.lo:.3g}, {e.hi:.3g}] lies within [{self.lo:g}, {self.hi:g}]"
        if e.hi < self.lo or e.lo > self.hi:
            return NOT, f"[{e.lo:.3g}, {e.hi:.3g}] lies outside [{self.lo:g}, {self.hi:g}]"
        return PARTLY, f"[{e.lo:.3g}, {e.hi:.3g}] overlaps [{self.lo:g}, {self.hi:g}] only in part"

    def text(self) -> str:
        return self.words or f"within [{self.lo:g}, {self.hi:g}]"


@dataclass(frozen=True)
class Contains:
    """The paper reports ``value`` (a count as a proportion, say): holds when our 95% interval
    contains it, does not hold when it lies outside."""

    value: float
    words: str = ""

    def judge(self, e: Estimate) -> tuple[str, str]:
        if not e.n or math.isnan(e.lo) or math.isnan(e.hi):
            return NA, "no interval"
        inside = e.lo <= self.value <= e.hi
        return (HOLDS if inside else NOT), f"the paper's {self.value:.3g} lies {'in' if inside else 'outside'} [{e.lo:.3g}, {e.hi:.3g}]"

    def text(self) -> str:
        return self.words or f"the interval contains {self.value:g}"


@dataclass(frozen=True)
class PerPart:
    """The rule of a claim whose parts each have their own (the paper's count, window by
    window): measured with :meth:`Claim.measure_parts` on (label, estimate, rule) parts."""

    words: str

    def judge(self, e: Estimate) -> tuple[str, str]:
        raise ValueError("a claim with a rule per part is measured part by part, each with its rule")

    def text(self) -> str:
        return self.words


def combine(verdicts: Sequence[str]) -> str:
    """Several parts of one claim: holds if every part holds, does not hold if none does."""
    vs = [v for v in verdicts if v != NA]
    if not vs:
        return NA
    if all(v == HOLDS for v in vs):
        return HOLDS
    if all(v == NOT for v in vs):
        return NOT
    return PARTLY


# --- a claim ----------------------------------------------------------------------------------

@dataclass
class Measured:
    """One measurement of a claim's metric: its estimate (or parts), verdict and why."""

    estimate: Estimate | None
    verdict: str
    why: str
    parts: list = field(default_factory=list)  # (label, Estimate, verdict, why) of a claim in parts


@dataclass
class Claim:
    id: str
    source: str
    quote: str
    metric: str
    rule: object
    #: the weakened variant of the mechanism (its name), measured with the same rule
    control_variant: str = ""
    ours: Measured | None = None
    control: Measured | None = None
    notes: list = field(default_factory=list)

    def measure(self, e: Estimate) -> Measured:
        v, why = self.rule.judge(e)
        return Measured(e, v, why)

    def measure_parts(self, parts: Sequence[tuple]) -> Measured:
        """Each part (label, estimate) judged by the claim's rule, or (label, estimate, rule)
        by its own; the verdict combines them (:func:`combine`)."""
        judged = [(p[0], p[1], *(p[2] if len(p) > 2 else self.rule).judge(p[1])) for p in parts]
        v = combine([p[2] for p in judged])
        held = sum(p[2] == HOLDS for p in judged)
        if held == len(judged):
            why = f"all {len(judged)} parts hold"
        else:
            why = f"{held} of {len(judged)} parts hold (" + "; ".join(f"{p[0]}: {p[2]}, {p[3]}" for p in judged) + ")"
        return Measured(None, v, why, judged)

    @property
    def verdict(self) -> str:
        """The claim's verdict with its control: a claim that holds while its control holds
        too (or while its control could not be measured) is one the experiment cannot tell
        apart from the weakened mechanism."""
        if self.ours is None:
            return NA
        if self.ours.verdict == HOLDS and (self.control is None or self.control.verdict in (HOLDS, NA)):
            return CANNOT_TELL
        return self.ours.verdict

    def why(self) -> str:
        if self.ours is None:
            return "not measured"
        text = self.ours.why
        if self.verdict == CANNOT_TELL:
            if self.control is None or self.control.verdict == NA:
                text += f"; but its control ({self.control_variant or 'none named'}) was not measured: nothing shows the mechanism is what makes it hold"
            else:
                text += f"; but it holds under the control ({self.control_variant}) too: the experiment cannot tell the mechanism from its weakened variant"
        elif self.control is not None and self.ours.verdict == HOLDS:
            text += f"; under the control ({self.control_variant}) it {self.control.verdict}"
        return text

    def to_dict(self) -> dict:
        def m(x: Measured | None):
            if x is None:
                return None
            return {"estimate": asdict(x.estimate) if x.estimate else None, "verdict": x.verdict, "why": x.why,
                    "parts": [{"label": p[0], "estimate": asdict(p[1]), "verdict": p[2], "why": p[3]} for p in x.parts]}

        return {"id": self.id, "source": self.source, "quote": self.quote, "metric": self.metric, "rule": self.rule.text(),
                "ours": m(self.ours), "verdict": self.verdict, "why": self.why(),
                "control": {"variant": self.control_variant, **(m(self.control) or {"verdict": NA})} if self.control_variant else None,
                "notes": list(self.notes)}


#: What every report says of controls, once (Report.claims appends it), in the verdict words above.
CONTROLS_TEXT = (f"Each claim is measured again on its control: the same comparison with the mechanism it credits "
                 f"weakened, by the same rule. A claim that {HOLDS} under its control too, or whose control could not be "
                 f"measured, is reported as “{CANNOT_TELL}”: the experiment cannot credit the mechanism. The same data: "
                 f"claims.json.")


def _number(m: Measured | None) -> str:
    if m is None:
        return "—"
    if m.estimate is not None:
        return m.estimate.text()
    return "; ".join(f"{label}: {e.text()}" for label, e, _, _ in m.parts)


def table(claims: Sequence[Claim]) -> tuple[list, list]:
    """The report's table of claims: (headers, rows), every cell from the claims' data."""
    headers = ("claim", "where", "the paper", "metric", "ours", "verdict", "control", "control's verdict")
    rows = [[c.id, c.source, f"“{c.quote}”", c.metric, _number(c.ours), f"**{c.verdict}**: {c.why()}",
             c.control_variant or "—", (c.control.verdict + ": " + _number(c.control)) if c.control else "—"] for c in claims]
    return headers, rows


def write(claims: Sequence[Claim], out_dir) -> str:
    """``out_dir/claims.json``, atomically."""
    import os

    from .._io import write_text_atomic

    path = os.path.join(os.fspath(out_dir), "claims.json")
    write_text_atomic(path, json.dumps(to_jsonable(claims), indent=2, allow_nan=False) + "\n")
    return path


def to_jsonable(claims: Sequence[Claim]) -> list:
    """The claims as claims.json holds them (NaN written as null)."""
    def clean(x):
        if isinstance(x, float) and not math.isfinite(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    return [clean(c.to_dict()) for c in claims]


def markdown(path) -> str:
    """A compact Markdown table of a claims.json (for docs/papers/*.md): claim, where, verdict,
    ours, control; every cell from the file."""
    doc = json.loads(open(path).read())

    def num(m):
        if not m:
            return "—"
        if m.get("estimate"):
            e = m["estimate"]
            return "no data" if e["value"] is None else f"{e['value']:.3g} [{e['lo']:.3g}, {e['hi']:.3g}]"
        return "; ".join(f"{p['label']}: " + ("no data" if p["estimate"]["value"] is None else
                                             f"{p['estimate']['value']:.3g} [{p['estimate']['lo']:.3g}, {p['estimate']['hi']:.3g}]")
                         for p in m.get("parts", []))

    lines = ["| claim | where | the paper | verdict | ours (95% interval) | control: verdict |", "|---|---|---|---|---|---|"]
    for c in doc:
        ctrl = c.get("control") or {}
        cell = lambda s: str(s).replace("|", "\\|")  # noqa: E731
        lines.append(f"| {c['id']} | {cell(c['source'])} | “{cell(c['quote'])}” | **{c['verdict']}** | {cell(num(c['ours']))} | "
                     f"{cell(ctrl.get('variant', '—'))}: {ctrl.get('verdict', '—')} |")
    return "\n".join(lines)
