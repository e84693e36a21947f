"""Claims that can fail: what a reproduction checks of its paper, as data.

A :class:`Claim` is one sentence of a paper made testable: where it is (``source``), the
paper's words (``quote``), the metric as the paper defines it (``metric``), and a ``rule``
that maps the metric's 95% interval to a verdict, tied to the paper's words ("more than
double": the interval's lower end is above 2). A reproduction measures the metric twice: on
the mechanism the claim credits (``ours``) and on a weakened variant of it (``control``:
PAWS without stealing, a linear search where the heap is credited).

**Five verdicts, one meaning each.** *holds*: the interval lies beyond the paper's threshold
(and beyond it by at least the least effect the paper's own precision resolves, where the claim
states one), and the control's matching part does not hold. *does not hold*: the interval lies
on the wrong side, or the effect is smaller than that least effect; for a claim in parts, one
part that does not hold contradicts the claim. *partly*: some parts hold and none contradicts
(the others cannot be told). *cannot tell*: an interval that straddles the threshold; a cell
with fewer than ``min_n`` samples (not judged: its interval would not mean much); or a part that
holds whose control holds too, equals the claim's own numbers, compares a variant with itself
(the same numbers set by set) or has a zero-width interval (identical runs: no evidence).
*not comparable*: the metric cannot reach the paper's threshold at all (or cannot fail it) in
this experiment — its :class:`Reach`, computed from the metric's own range or a saturation run,
lies on one side of the threshold — or a free parameter of the model moves it across.

**The control, part by part.** A claim in parts (window by window, load by load) has a control
in the same parts, in the same order (or one control for every part); a part of the claim holds
only where its control's part does not hold. A control that fails only in parts where the claim
does not hold credits nothing.

Every verdict and every sentence that explains one is computed here, from the numbers:
reproductions write no verdict words of their own. Printed numbers that are compared with a
threshold get as many digits as it takes for the printed comparison to be the true one.
:func:`write` puts the claims into ``OUT/NAME/claims.json`` and :func:`table` renders the
report's table from the same data.

Intervals: paired statistics over the same task sets are bootstrapped (resampling the sets,
a seeded generator: the same numbers give the same interval); proportions take Wilson's
interval (``scipy.stats.binomtest``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace

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
#: The least number of samples (task sets, stress sets, jobs) a cell is judged on: below it a
#: percentile bootstrap has too few distinct resamples to mean much, and the cell says so.
MIN_N = 10


def num(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits (for a table's cell)."""
    return f"{x:.{digits}g}"


def beside(x: float, t: float, digits: int = 3) -> str:
    """``x`` printed with the fewest digits (at least ``digits``) that keep its comparison with
    ``t`` true when read back: 1.0004 beside 1 prints 1.0004, never 1."""
    for d in range(digits, 18):
        s = f"{x:.{d}g}"
        y = float(s)
        if (y > t) == (x > t) and (y < t) == (x < t):
            return s
    return repr(x)


@dataclass(frozen=True)
class Estimate:
    """A statistic with its interval: ``value`` in [``lo``, ``hi``] at 95%, from ``n`` samples.
    ``same``: a paired comparison whose two sides were identical sample by sample, the samples
    varying (a variant compared with itself, or with a variant that runs the same schedule).
    ``sides``: what a paired comparison compares (the two variants' names, see :func:`between`),
    where a claim says so: two estimates with the same numbers but different sides coincide
    because the variants ran alike, not because one comparison was reused."""

    value: float
    lo: float
    hi: float
    n: int
    method: str
    unit: str = ""
    same: bool = False
    sides: tuple[str, str] | None = None

    def short(self, digits: int = 3) -> str:
        """``value [lo, hi]`` (for a table's cell)."""
        return f"{num(self.value, digits)} [{num(self.lo, digits)}, {num(self.hi, digits)}]"

    def text(self, digits: int = 3) -> str:
        if not self.n or math.isnan(self.value):
            return "no data"
        unit = f" {self.unit}" if self.unit else ""
        return f"{num(self.value, digits)}{unit} [{num(self.lo, digits)}, {num(self.hi, digits)}] ({self.method}, n = {self.n})"

    @property
    def measured(self) -> bool:
        """An interval there is: a sample and both ends."""
        return bool(self.n) and not (math.isnan(self.lo) or math.isnan(self.hi))


def between(e: Estimate, a: str, b: str) -> Estimate:
    """``e`` marked as the comparison of variant ``a`` with variant ``b`` (its ``sides``)."""
    return replace(e, sides=(a, b))


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
    return value, *_interval(np.concatenate(parts))


def _interval(boots: np.ndarray) -> tuple[float, float]:
    """The percentile interval of bootstrap values; none when more than the interval's own tail
    (2.5 %) of them is undefined (a ratio over a zero mean, a logarithm of a mean ≤ 0): the
    statistic is not defined often enough to bound."""
    a = (1 - LEVEL) / 2
    defined = boots[~np.isnan(boots)]
    if defined.size == 0 or boots.size - defined.size > a * boots.size:
        return float("nan"), float("nan")
    # ±∞ (a ratio over a zero mean) is ordered like any value: read as the largest float for
    # the interpolation, and given back as ∞.
    big = np.finfo(float).max
    lo, hi = np.quantile(np.clip(defined, -big, big), [a, 1 - a])
    back = lambda x: math.copysign(math.inf, x) if abs(x) >= big else float(x)  # noqa: E731
    return back(lo), back(hi)


def bootstrap(stat_rows: Callable[[np.ndarray], np.ndarray], n: int, method: str, unit: str = "", seed: int = 1) -> Estimate:
    """Any statistic of n paired samples with its percentile interval, vectorised:
    ``stat_rows(idx)`` maps a (k, n) array of sample indices to k values (for example
    ``lambda i: (a[i].mean(1) - b[i].mean(1)) / c[i].mean(1)``). :func:`mean`,
    :func:`mean_difference` and :func:`ratio_of_means` are this with their statistic."""
    return Estimate(*_percentiles(stat_rows, n, seed), n, method, unit)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Both sides identical sample by sample while the samples vary: a variant compared with
    itself (or with one that runs its very schedule), not two runs that both hit a bound (every
    deadline met, no migration), which give a zero-width interval instead."""
    return len(a) > 1 and bool(np.array_equal(a, b, equal_nan=True)) and bool(np.nanmax(a) > np.nanmin(a))


def ratio_of_means(a: Sequence[float], b: Sequence[float], unit: str = "", seed: int = 1) -> Estimate:
    """mean(a) / mean(b), ``a`` and ``b`` paired (the same task sets), bootstrapped by set. A
    resample whose mean(b) is 0 gives ∞ (or nothing if mean(a) is 0 too), one whose mean(b) is
    negative (a cost net of a timer's, below the timer's resolution) gives nothing."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape:
        raise ValueError(f"paired samples of different sizes: {a.shape} and {b.shape}")

    def stat(i):
        num_, den = a[i].mean(axis=1), b[i].mean(axis=1)
        return np.where(den > 0, num_ / np.where(den > 0, den, 1),
                        np.where((den == 0) & (num_ > 0), np.inf, np.nan))

    e = bootstrap(stat, len(a), "ratio of means, paired bootstrap", unit, seed)
    return Estimate(e.value, e.lo, e.hi, e.n, e.method, unit, _same(a, b))


def mean_difference(a: Sequence[float], b: Sequence[float], unit: str = "", seed: int = 1) -> Estimate:
    """mean(a − b) over paired samples, bootstrapped by pair."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = a - b
    e = bootstrap(lambda i: d[i].mean(axis=1), len(d), "mean paired difference, bootstrap", unit, seed)
    return Estimate(e.value, e.lo, e.hi, e.n, e.method, unit, _same(a, b))


def mean(a: Sequence[float], unit: str = "", seed: int = 1) -> Estimate:
    x = np.asarray(a, float)
    return bootstrap(lambda i: x[i].mean(axis=1), len(x), "mean, bootstrap", unit, seed)


def maximum(a: Sequence[float], unit: str = "", seed: int = 1) -> Estimate:
    """The largest of the samples (the worst set), with the percentile interval of the
    resampled maxima: its lower end is a value some set reached; its upper end never exceeds
    the largest observed (a maximum's bootstrap cannot look past the sample)."""
    x = np.asarray(a, float)
    return bootstrap(lambda i: x[i].max(axis=1), len(x), "maximum, bootstrap", unit, seed)


def proportion(k: int, n: int) -> Estimate:
    """k of n, with Wilson's interval."""
    if n == 0:
        return nothing("Wilson")
    lo, hi = wilson(k, n)
    return Estimate(k / n, lo, hi, int(n), "proportion, Wilson")


def wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson's 95% interval of k of n."""
    from scipy.stats import binomtest

    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=LEVEL, method="wilson")
    return float(ci.low), float(ci.high)


def loglog_slope(x: Sequence[float], y: Sequence[float], seed: int = 1, floor: float = 1.0) -> Estimate:
    """The slope of log y against log x (1: linear growth, 0: constant), bootstrapped over
    the (x, y) samples. A y below ``floor`` (one unit: a count) is read as ``floor``, so a
    count of 0 does not weigh as minus infinity. Each resample's least-squares slope in
    closed form (a resample whose x are all equal has none). For costs net of a timer's, whose
    values may be ≤ 0, :func:`slope_of_means`."""
    lx, ly = np.log(np.asarray(x, float)), np.log(np.maximum(np.asarray(y, float), floor))

    def stat(i):
        X, Y = lx[i], ly[i]
        mx, my = X.mean(-1, keepdims=True), Y.mean(-1, keepdims=True)
        sxx = ((X - mx) ** 2).sum(-1)
        return np.where(np.ptp(X, axis=-1) == 0, np.nan, ((X - mx) * (Y - my)).sum(-1) / np.where(sxx == 0, 1, sxx))

    return bootstrap(stat, len(lx), "log-log slope, bootstrap", seed=seed)


def slope_of_means(x: Sequence[float], y: Sequence[float], minus: Sequence[float] | None = None, seed: int = 1) -> Estimate:
    """The log-log slope of the mean of ``y`` at each distinct ``x`` against ``x``, with a
    bootstrap that resamples the samples within each ``x`` (stratified). Nothing is clamped: a
    mean ≤ 0 (a cost net of a timer's that the timer cannot resolve) has no logarithm, and a
    resample with one gives no slope (:func:`_interval` says when too many do). ``minus``: a
    second metric on the same samples (paired with ``y`` one by one), whose slope on the same
    resamples is subtracted (is one cost as scalable as another)."""
    x = np.asarray(x, float)
    ys = [np.asarray(y, float)] + ([np.asarray(minus, float)] if minus is not None else [])
    xs = np.unique(x)
    method = "log-log slope of means" + (" minus another's" if minus is not None else "") + ", stratified bootstrap"
    if len(xs) < 2:
        return nothing(method)
    groups = [np.flatnonzero(x == v) for v in xs]
    lx = np.log(xs)
    rng = np.random.Generator(np.random.PCG64(seed))
    draws = [np.vstack([np.arange(len(g)), rng.integers(0, len(g), size=(BOOTSTRAP, len(g)))]) for g in groups]

    def slopes(v):  # one slope per row: row 0 is the sample itself, then the resamples
        means = np.stack([v[g][d].mean(axis=1) for g, d in zip(groups, draws)], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ly = np.where(means > 0, np.log(np.where(means > 0, means, 1)), np.nan)
        mx = lx.mean()
        return ((lx - mx) * (ly - ly.mean(axis=1, keepdims=True))).sum(axis=1) / ((lx - mx) ** 2).sum()

    s = slopes(ys[0]) - (slopes(ys[1]) if minus is not None else 0.0)
    return Estimate(float(s[0]), *_interval(s[1:]), len(x), method,
                    same=minus is not None and _same(ys[0], ys[1]))


# --- rules: an interval to a verdict, in the paper's words ------------------------------------

@dataclass(frozen=True)
class Threshold:
    """The paper says the metric is above (or below) ``threshold`` (its words in ``words``):
    holds when the whole interval is beyond it by at least ``effect`` (the least effect the
    paper's own precision resolves; 0: any), does not hold when the whole interval falls short
    of that, cannot tell when the interval straddles it."""

    threshold: float
    words: str = ""
    above: bool = True
    effect: float = 0.0

    @property
    def bar(self) -> float:
        """What the interval must clear to hold: the threshold moved by the least effect."""
        return self.threshold + self.effect if self.above else self.threshold - self.effect

    def beyond(self, x: float, t: float) -> bool:
        return x > t if self.above else x < t

    def judge(self, e: Estimate) -> tuple[str, str]:
        if not e.measured:
            return CANNOT_TELL, "no interval"
        t, b, side = self.threshold, self.bar, "above" if self.above else "below"
        (near, near_end), (far, far_end) = ((e.lo, "lower"), (e.hi, "upper")) if self.above else ((e.hi, "upper"), (e.lo, "lower"))
        least = f" ({t:g} {'+' if self.above else '−'} the least effect {self.effect:g})" if self.effect else ""
        if self.beyond(near, b):
            return HOLDS, f"the interval's {near_end} end {beside(near, b)} is {side} {b:g}{least}"
        if not self.beyond(far, t):
            return NOT, f"the interval's {far_end} end {beside(far, t)} is not {side} {t:g}"
        if not self.beyond(far, b):
            return NOT, (f"the interval [{beside(e.lo, b)}, {beside(e.hi, b)}] is not {side} {b:g}{least}: an effect smaller "
                         "than the paper's precision resolves")
        return CANNOT_TELL, f"the interval [{beside(e.lo, b)}, {beside(e.hi, b)}] straddles {b:g}{least}"

    def text(self) -> str:
        rule = self.words or f"{'above' if self.above else 'below'} {self.threshold:g}"
        return rule + (f" (by at least {self.effect:g}: the least effect the paper resolves)" if self.effect else "")


def Above(threshold: float, words: str = "", effect: float = 0.0) -> Threshold:  # noqa: N802 - reads as the rule it makes
    return Threshold(threshold, words, True, effect)


def Below(threshold: float, words: str = "", effect: float = 0.0) -> Threshold:  # noqa: N802
    return Threshold(threshold, words, False, effect)


@dataclass(frozen=True)
class Within:
    """The paper says the metric lies in [``lo``, ``hi``]: holds when the whole interval does,
    does not hold when none of it does, cannot tell when it overlaps an edge."""

    lo: float
    hi: float
    words: str = ""

    def judge(self, e: Estimate) -> tuple[str, str]:
        if not e.measured:
            return CANNOT_TELL, "no interval"
        if self.lo <= e.lo and e.hi <= self.hi:
            return HOLDS, f"[{beside(e.lo, self.lo)}, {beside(e.hi, self.hi)}] lies within [{self.lo:g}, {self.hi:g}]"
        if e.hi < self.lo or e.lo > self.hi:
            return NOT, f"[{beside(e.lo, self.hi)}, {beside(e.hi, self.lo)}] lies outside [{self.lo:g}, {self.hi:g}]"
        return CANNOT_TELL, f"[{beside(e.lo, self.lo)}, {beside(e.hi, self.hi)}] overlaps an edge of [{self.lo:g}, {self.hi:g}]"

    def text(self) -> str:
        return self.words or f"within [{self.lo:g}, {self.hi:g}]"


@dataclass(frozen=True)
class Contains:
    """The paper reports ``value`` with its own precision [``lo``, ``hi``] (a count of k in n:
    Wilson's interval of k of n, :meth:`count`). Holds when our interval lies within the
    paper's (as precise as the paper, and agreeing); does not hold when the two are disjoint;
    cannot tell otherwise — an interval wide enough to contain the paper's value and much else
    (0 of 20 contains 3 of 20 too) reproduces nothing."""

    value: float
    lo: float
    hi: float
    words: str = ""

    @classmethod
    def count(cls, k: int, n: int, words: str = "") -> Contains:
        return cls(k / n, *wilson(k, n), words or f"the paper's {k} of {n}: our interval within its Wilson interval")

    def judge(self, e: Estimate) -> tuple[str, str]:
        if not e.measured:
            return CANNOT_TELL, "no interval"
        ours, paper = f"[{num(e.lo)}, {num(e.hi)}]", f"the paper's {self.value:.3g} [{num(self.lo)}, {num(self.hi)}]"
        if self.lo <= e.lo and e.hi <= self.hi:
            return HOLDS, f"{ours} lies within {paper}"
        if e.hi < self.lo or e.lo > self.hi:
            return NOT, f"{ours} is disjoint from {paper}"
        return CANNOT_TELL, f"{ours} overlaps {paper} without lying within it"

    def text(self) -> str:
        return self.words or f"within the paper's {self.value:g} [{self.lo:.3g}, {self.hi:.3g}]"


@dataclass(frozen=True)
class PerPart:
    """The rule of a claim whose parts each have their own (the paper's count, window by
    window): measured with :meth:`Claim.measure_parts` on (label, estimate, rule) parts."""

    words: str

    def judge(self, e: Estimate) -> tuple[str, str]:
        raise ValueError("a claim with a rule per part is measured part by part, each with its rule")

    def text(self) -> str:
        return self.words


@dataclass(frozen=True)
class Reach:
    """The range [``lo``, ``hi``] the metric can take in this experiment, and how it is known
    (``why``: its own range over every run, or a saturation run). A threshold outside it cannot
    be reached (nor, on the other side, failed): the claim is *not comparable*, whatever the
    interval. ``parameter``: the range is the span a free parameter of the model (one the paper
    does not give) moves the metric over; a threshold inside it is then the parameter's choice,
    also *not comparable* (a threshold outside it is judged: the parameter does not decide)."""

    lo: float
    hi: float
    why: str
    parameter: bool = False

    def blocks(self, rule) -> str | None:
        """Why ``rule`` cannot be judged on a metric confined to this range (None: it can)."""
        lo_edge, hi_edge = self._edges(rule)
        span = f"[{beside(self.lo, lo_edge)}, {beside(self.hi, hi_edge)}]"
        if self.parameter:  # the span a parameter moves the metric over, not the metric's whole range
            if self.lo < lo_edge <= hi_edge < self.hi:
                return f"the metric spans {span} ({self.why}): on which side of the paper's threshold it falls is the parameter's choice"
            return None
        if isinstance(rule, Threshold):
            b = rule.bar
            if not rule.beyond(self.hi if rule.above else self.lo, b):
                return f"the metric cannot pass {b:g}: it lies in {span} ({self.why})"
            if rule.beyond(self.lo if rule.above else self.hi, b):
                return f"the metric cannot fail {b:g}: it lies in {span} ({self.why})"
        elif isinstance(rule, (Within, Contains)):
            if self.hi < lo_edge or self.lo > hi_edge:
                return f"the metric cannot reach [{lo_edge:g}, {hi_edge:g}]: it lies in {span} ({self.why})"
            if lo_edge <= self.lo and self.hi <= hi_edge:
                return f"the metric cannot leave [{lo_edge:g}, {hi_edge:g}]: it lies in {span} ({self.why})"
        return None

    @staticmethod
    def _edges(rule) -> tuple[float, float]:
        if isinstance(rule, Threshold):
            return rule.bar, rule.bar
        if isinstance(rule, (Within, Contains)):
            return rule.lo, rule.hi
        return -math.inf, math.inf


def combine(verdicts: Sequence[str]) -> str:
    """Several parts of one claim: holds if every part holds; does not hold if one part does
    not (it contradicts the claim); partly if some hold and the others cannot be told or
    compared; not comparable if none can be compared; else cannot tell."""
    vs = list(verdicts)
    if not vs:
        return CANNOT_TELL
    if all(v == HOLDS for v in vs):
        return HOLDS
    if NOT in vs:
        return NOT
    if HOLDS in vs:
        return PARTLY
    if all(v == NA for v in vs):
        return NA
    return CANNOT_TELL


# --- a claim ----------------------------------------------------------------------------------

@dataclass
class Measured:
    """One measurement of a claim's metric: its estimate (or parts), verdict and why."""

    estimate: Estimate | None
    verdict: str
    why: str
    parts: list = field(default_factory=list)  # (label, Estimate, verdict, why) of a claim in parts

    def cells(self) -> list:
        """(label, estimate, verdict, why) per part; one unlabelled part for a single estimate."""
        return list(self.parts) if self.parts else [("", self.estimate, self.verdict, self.why)]


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
    #: the range the metric can take here (:class:`Reach`); None: not bounded short of the rule
    reach: Reach | None = None
    #: the least sample a cell is judged on (None: :data:`MIN_N`)
    min_n: int | None = None

    @property
    def least_n(self) -> int:
        return MIN_N if self.min_n is None else self.min_n

    def judge(self, rule, e: Estimate | None) -> tuple[str, str]:
        """One cell's verdict: a metric that cannot reach the rule is not comparable (whatever
        the sample); no data and too few samples cannot tell; else the rule's."""
        blocked = self.reach.blocks(rule) if self.reach is not None else None
        if blocked:
            return NA, blocked
        if e is None or not e.measured:
            return CANNOT_TELL, "no data" if e is None or not e.n else f"no interval ({e.method}, n = {e.n})"
        if e.n < self.least_n:
            return CANNOT_TELL, f"n = {e.n}, fewer than the {self.least_n} samples a cell is judged on"
        return rule.judge(e)

    def measure(self, e: Estimate) -> Measured:
        return Measured(e, *self.judge(self.rule, e))

    def measure_parts(self, parts: Sequence[tuple]) -> Measured:
        """Each part (label, estimate) judged by the claim's rule, or (label, estimate, rule)
        by its own; the verdict combines them (:func:`combine`)."""
        judged = [(p[0], p[1], *self.judge(p[2] if len(p) > 2 else self.rule, p[1])) for p in parts]
        v = combine([p[2] for p in judged])
        return Measured(None, v, _parts_why(judged, v), judged)

    def _control_cells(self, k: int) -> list | None:
        """The control's cell for each of the claim's k cells: the same count, in order, or one
        for all."""
        if self.control is None:
            return None
        cells = self.control.cells()
        if len(cells) == k:
            return cells
        if len(cells) == 1:
            return cells * k
        raise ValueError(f"claim {self.id}: its control has {len(cells)} parts for the claim's {k}: give one per part, "
                         "in the same order, or one for all")

    def judged(self) -> list:
        """Per cell of the claim: (label, verdict, why, control cell) after the control — a cell
        that holds keeps its verdict only where its control's cell does not hold."""
        if self.ours is None:
            return []
        cells = self.ours.cells()
        ctrl = self._control_cells(len(cells))
        out = []
        for i, (label, e, v, why) in enumerate(cells):
            c = ctrl[i] if ctrl else None
            if v == HOLDS:
                refused = self._refuse(e, c)
                if refused:
                    v, why = CANNOT_TELL, f"{why}; but {refused}"
                else:
                    why = f"{why}; under its control it {c[2]} ({c[3]})"
            out.append((label, v, why, c))
        return out

    def _refuse(self, e: Estimate | None, c) -> str | None:
        """Why a cell that holds cannot be credited to the mechanism, given its control's cell."""
        name = self.control_variant or "none named"
        if c is None or c[1] is None or not c[1].measured:
            return f"its control ({name}) was not measured: nothing shows the mechanism is what makes it hold"
        ce = c[1]
        if ce.same:
            return (f"its control ({name}{': ' + c[0] if c[0] else ''}) compares a variant with itself (the same numbers, "
                    "sample by sample): it weakens nothing")
        if e is not None and (ce.value, ce.lo, ce.hi, ce.n) == (e.value, e.lo, e.hi, e.n):
            return f"its control ({name}) gives the claim's own numbers: it weakens nothing"
        if ce.n >= 2 and ce.lo == ce.hi:
            return f"its control's interval is zero-width ([{num(ce.lo)}, {num(ce.hi)}], identical runs): no evidence either way"
        if c[2] == HOLDS:
            return f"it holds under the control ({name}) too: the experiment cannot tell the mechanism from its weakened variant"
        if c[2] != NOT:
            return f"under its control ({name}) it {c[2]} ({c[3]}): the control does not show that the mechanism matters"
        return None

    @property
    def verdict(self) -> str:
        """The claim's verdict: its cells, each after its control (:meth:`judged`), combined."""
        if self.ours is None:
            return CANNOT_TELL
        return combine([j[1] for j in self.judged()])

    def why(self) -> str:
        if self.ours is None:
            return "not measured"
        judged = self.judged()
        if not self.ours.parts:
            return judged[0][2]
        return _parts_why([(label, None, v, why) for label, v, why, _ in judged], combine([j[1] for j in judged]),
                          control=self.control_variant)

    def to_dict(self) -> dict:
        def m(x: Measured | None):
            if x is None:
                return None
            return {"estimate": asdict(x.estimate) if x.estimate else None, "verdict": x.verdict, "why": x.why,
                    "parts": [{"label": p[0], "estimate": asdict(p[1]) if p[1] else None, "verdict": p[2], "why": p[3]} for p in x.parts]}

        judged = [{"label": label, "verdict": v, "why": why, "control_label": c[0] if c else None,
                   "control_verdict": c[2] if c else None, "control_estimate": asdict(c[1]) if c and c[1] else None}
                  for label, v, why, c in self.judged()]
        return {"id": self.id, "source": self.source, "quote": self.quote, "metric": self.metric, "rule": self.rule.text(),
                "ours": m(self.ours), "verdict": self.verdict, "why": self.why(), "judged": judged,
                "reach": asdict(self.reach) if self.reach else None, "min_n": self.least_n,
                "control": {"variant": self.control_variant, **(m(self.control) or {"verdict": CANNOT_TELL})} if self.control_variant else None,
                "notes": list(self.notes)}


def _parts_why(judged: Sequence[tuple], verdict: str, control: str = "") -> str:
    """The sentence of a verdict in parts: how many hold, and each part's verdict and why."""
    held = sum(p[2] == HOLDS for p in judged)
    if verdict == HOLDS:
        return f"all {len(judged)} parts hold" + (f", and none under the control ({control})" if control else "")
    return f"{held} of {len(judged)} parts hold (" + "; ".join(f"{p[0]}: {p[2]}, {p[3]}" for p in judged) + ")"


#: What every report says of controls, once (Report.claims appends it), in the verdict words above.
CONTROLS_TEXT = (f"Each claim is measured again on its control: the same comparison with the mechanism it credits "
                 f"weakened, by the same rule, part by part. A part that {HOLDS} counts only where its control's part "
                 f"{NOT}; where the control holds too, was not measured, gives the claim's own numbers, compares a variant "
                 f"with itself or has a zero-width interval, the part is “{CANNOT_TELL}”. “{PARTLY}”: some parts hold and "
                 f"none contradicts; “{CANNOT_TELL}” also marks an interval that straddles the threshold and a cell of fewer "
                 f"than its least n; “{NA}”: the metric cannot reach (or cannot fail) the paper's threshold here. "
                 f"The same data: claims.json.")


def _number(m: Measured | None) -> str:
    if m is None:
        return "—"
    if m.estimate is not None:
        return m.estimate.text()
    return "; ".join(f"{label}: {e.text() if e is not None else 'no data'}" for label, e, _, _ in m.parts)


def table(claims: Sequence[Claim]) -> tuple[list, list]:
    """The report's table of claims: (headers, rows), every cell from the claims' data (each
    number with its n)."""
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
    """The claims as claims.json holds them (NaN written as null, ±∞ as ±1e308)."""
    def clean(x):
        if isinstance(x, float) and not math.isfinite(x):
            return None if math.isnan(x) else math.copysign(1e308, x)
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    return [clean(c.to_dict()) for c in claims]


def _cell(e: dict | None) -> str:
    """One estimate of claims.json as a table's cell: value [lo, hi] and its n."""
    if not e or e["value"] is None or not e["n"]:
        return "no data" if not e or not e.get("n") else f"no interval (n = {e['n']})"
    if e["lo"] is None:
        return f"{num(e['value'])} [no interval] (n = {e['n']})"
    return f"{num(e['value'])} [{num(e['lo'])}, {num(e['hi'])}] (n = {e['n']})"


def markdown(path) -> str:
    """A compact Markdown table of a claims.json (for docs/papers/*.md): claim, where, verdict,
    ours, control (its verdict and numbers); every cell from the file, each number with its n."""
    doc = json.loads(open(path).read())

    def nums(m):
        if not m:
            return "—"
        if m.get("estimate"):
            return _cell(m["estimate"])
        return "; ".join(f"{p['label']}: {_cell(p['estimate'])}" for p in m.get("parts", []))

    cell = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    lines = ["| claim | where | the paper | verdict | ours (95% interval, n) | control: verdict (95% interval, n) |",
             "|---|---|---|---|---|---|"]
    for c in doc:
        ctrl = c.get("control") or {}
        lines.append(f"| {c['id']} | {cell(c['source'])} | “{cell(c['quote'])}” | **{c['verdict']}** | {cell(nums(c['ours']))} | "
                     f"{cell(ctrl.get('variant', '—'))}: {ctrl.get('verdict', '—')}; {cell(nums(ctrl))} |")
    return "\n".join(lines)
