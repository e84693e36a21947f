"""The reproductions' skeleton (rtsched.reproduce.experiment) on a toy experiment of two runs:
every step called once in its order, the tables written and a mapped one reused, the claims
judged by the engine against a control, the figures and report.md assembled in the skeleton's
order. The control is the test's negative control: with the credited mechanism taken away the
claim must not hold, and a control that still holds takes the claim's verdict away."""

import json
from dataclasses import dataclass, replace
from types import SimpleNamespace

import numpy as np
import pytest

from rtsched.reproduce import claims as C
from rtsched.reproduce import experiment
from rtsched.reproduce.experiment import Experiment

#: Every step the toy's operations were called in, in order; and the items its map ran.
CALLS: list = []
MAPPED: list = []


@dataclass(frozen=True)
class Config:
    sets: int
    #: The control's factor: 0.5 takes the toy's mechanism (doubling) away and more (a control
    #: must not hold: a ratio about 1 only "cannot tell"), 2 leaves it in.
    control: float = 0.5


def _base(k) -> list:
    MAPPED.append(k)
    return [{"set": k, "x": 1.0 + 0.1 * k}]


def _doubled(k) -> list:
    return [{"set": k, "y": 2.0 * (1.0 + 0.1 * k)}]


def runs(r):
    CALLS.append("runs")
    items = list(range(r.cfg.sets))
    r.map(_base, items, "base", chunk=len(items))  # one chunk: no pool for a toy
    r.serial(_doubled, items, "doubled")


def frame(t):
    CALLS.append("frame")
    return SimpleNamespace(x=t["base"]["x"].to_numpy(), y=t["doubled"]["y"].to_numpy(), cfg=t.cfg)


def claims(f):
    CALLS.append("claims")
    c = C.Claim("T1", "§1", "doubling makes it larger", "y / x, paired sets", C.Above(1.0, "larger: the ratio above 1"),
                control_variant="x scaled by the control's factor (± 2 %) in y's place")
    c.ours = c.measure(C.ratio_of_means(f.y, f.x))
    # Not x itself (a variant compared with itself weakens nothing: the engine refuses it), x
    # scaled by the factor, give or take 2 % set by set.
    wobble = f.cfg.control + 0.02 * (-1.0) ** np.arange(len(f.x))
    c.control = c.measure(C.ratio_of_means(f.x * wobble, f.x))
    return [c]


def figures(f):
    CALLS.append("figures")
    from rtsched import plots

    fig, ax = plots._plt().subplots()
    ax.plot(f.x, f.y)
    return [(fig, "toy", "y against x")]


def sections(rep, f):
    CALLS.append("sections")
    rep.heading("The toy's table")
    rep.table(["x", "y"], list(zip(f.x, f.y)))


def afterword(rep, f):
    CALLS.append("afterword")
    rep.para("The toy's afterword.")


def toy(name="zz-toy", **kw) -> Experiment:
    """A toy experiment of two runs (a mapped one and a serial one) on the skeleton."""
    return Experiment(name=name, paper="A. Toy (2026)", description="a toy", title="A toy experiment",
                      doc="The toy.\n\nIts introduction.", quick=Config(12), full=Config(20), runs=runs, frame=frame,
                      claims=claims, figures=figures, sections=sections, afterword=afterword, note="How it was measured.",
                      not_reproduced=("nothing",), **kw)


@pytest.fixture
def fewer_resamples(monkeypatch):
    monkeypatch.setattr(C, "BOOTSTRAP", 400)


def test_a_toy_runs_every_step_once_in_order_and_its_claim_holds_against_a_failing_control(tmp_path, fewer_resamples):
    CALLS.clear()
    MAPPED.clear()
    report = experiment.run(toy(), tmp_path, quick=True, progress=False)
    assert CALLS == ["runs", "frame", "claims", "sections", "figures", "afterword"]
    assert MAPPED == list(range(12))
    assert (tmp_path / "base-quick.parquet").exists() and (tmp_path / "doubled-quick.parquet").exists()
    assert (tmp_path / "toy.png").exists() and (tmp_path / "toy.svg").exists()
    (doc,) = json.loads((tmp_path / "claims.json").read_text())
    # The control (the doubling taken away: a ratio about 0.5) does not hold, so the claim holds.
    assert doc["control"]["verdict"] != C.HOLDS and doc["verdict"] == C.HOLDS, doc
    text = report.read_text()
    order = ["# A toy experiment", "Its introduction.", "## The paper's claims, checked", "| T1 |", "How it was measured.",
             "## The toy's table", "## Figures", "](toy.png)", "The toy's afterword.", "## Not reproduced yet", "- nothing"]
    at = [text.index(s) for s in order]
    assert at == sorted(at), text
    assert "The toy.\n" not in text  # the docstring's first paragraph is the title's, not the report's


def test_a_control_that_still_holds_takes_the_verdict_away(tmp_path, fewer_resamples):
    """The negative control of the test above: a control that keeps the mechanism holds too, and
    the claim then does not hold (the engine's rule, through the skeleton)."""
    experiment.run(toy(), tmp_path, quick=True, cfg=Config(12, control=2.0), progress=False)
    (doc,) = json.loads((tmp_path / "claims.json").read_text())
    assert doc["control"]["verdict"] == C.HOLDS and doc["verdict"] != C.HOLDS, doc


def test_a_rerun_reuses_a_mapped_table_of_the_same_items_only(tmp_path, fewer_resamples):
    experiment.run(toy(), tmp_path, quick=True, progress=False)
    MAPPED.clear()
    experiment.run(toy(), tmp_path, quick=True, progress=False)
    assert MAPPED == []  # the same items: read back, not run again
    experiment.run(toy(), tmp_path, quick=True, cfg=Config(13), progress=False)
    assert MAPPED == list(range(13))  # other items: run again
    full = experiment.run(toy(), tmp_path, quick=False, cfg=Config(3), progress=False)
    assert (tmp_path / "base.parquet").exists() and "Quick mode" not in full.read_text()


def test_the_real_part_runs_only_when_asked_and_permitted(tmp_path, fewer_resamples, monkeypatch):
    from rtsched.reproduce import _real

    made = []
    exp = toy(real=experiment.Real(plan=lambda cfg: [], runs=lambda r: made.append(r.cfg)))
    monkeypatch.setattr(_real, "can_run_real", lambda: (False, "not permitted here"))
    experiment.run(exp, tmp_path / "a", quick=True, progress=False)
    experiment.run(exp, tmp_path / "b", quick=True, real=True, progress=False)
    assert made == []
    monkeypatch.setattr(_real, "can_run_real", lambda: (True, ""))
    experiment.run(exp, tmp_path / "c", quick=True, real=True, progress=False)
    assert made == [Config(12)]
    assert "--real" in (tmp_path / "c" / "report.md").read_text().splitlines()[4]


def test_two_registrations_of_one_name_from_two_modules_clash():
    from rtsched.reproduce import _REGISTRY, register

    exp = toy("zz-clash")
    try:
        register(exp)
        register(exp)  # the same module again: a reload, not a clash
        other = replace(exp, runs=lambda r: None)
        other.runs.__module__ = "elsewhere"
        with pytest.raises(ValueError, match="registered twice"):
            register(other)
    finally:
        _REGISTRY.pop("zz-clash", None)
