"""Reproductions of the papers' experiments: ``rtsched reproduce NAME [--quick] [--out DIR]``.

A registry of experiments, each on one skeleton (:mod:`rtsched.reproduce.experiment`, and
docs/sweeps.md, "Reproductions"): config → runs → frame → claims → figures → report. An experiment is a module
of this package (or of any installed package, through the ``rtsched.reproduce`` entry-point
group) that fills an :class:`~rtsched.reproduce.experiment.Experiment` and registers it::

    from rtsched.reproduce import register
    from rtsched.reproduce.experiment import Experiment

    EXPERIMENT = register(Experiment(name="lelli2011", paper="Lelli et al. ...", description="...",
                                     title="...", doc=__doc__, quick=QUICK, full=FULL, runs=runs,
                                     frame=frame, claims=claims, figures=figures, sections=sections))

Modules are discovered, not listed: dropping ``lelli2011.py`` into this directory (or shipping
it in another package with an entry point) registers it without editing any other file. It
writes into ``OUT/NAME/``: ``report.md`` with the paper's numbers beside rtsched's, the claims
(``claims.json``), figures (PNG and SVG) and its run tables. ``quick`` must finish in under a
minute on 2 cores.

**Real runs only when asked.** An experiment with a part on this machine's real cores (its
``real``: a :class:`~rtsched.reproduce.experiment.Real`) makes those runs only when asked
(``rtsched reproduce NAME --real``), as root too; its plan is printed before anything starts.
Without ``--real`` its report says the real part was not run and gives the command that runs it
(``_real.not_run``).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

from .._core import InputError
from .experiment import Experiment

_REGISTRY: dict[str, Experiment] = {}
_discovered = False
#: Modules of this package that are the skeleton's machinery, not experiments.
_MACHINERY = {"claims", "experiment", "report"}


def register(exp: Experiment, replace: bool = False) -> Experiment:
    """Register experiment ``exp`` under its name; returns it.

    A second registration of the same name from another module is an error unless
    ``replace=True`` (so two modules cannot silently shadow each other)."""
    old = _REGISTRY.get(exp.name)
    if old is not None and not replace and old.module != exp.module:
        raise ValueError(f"reproduce experiment {exp.name!r} is registered twice ({old.module} and {exp.module})")
    _REGISTRY[exp.name] = exp
    return exp


def _discover():
    global _discovered
    if _discovered:
        return
    _discovered = True
    for m in pkgutil.iter_modules(__path__):
        if not m.name.startswith("_") and m.name not in _MACHINERY:
            importlib.import_module(f"{__name__}.{m.name}")
    try:
        from importlib.metadata import entry_points

        for ep in entry_points(group="rtsched.reproduce"):
            try:
                ep.load()
            except Exception as e:  # noqa: BLE001 - a broken plugin must not hide the others
                print(f"rtsched: warning: reproduce plugin {ep.name} failed to load: {e}", file=sys.stderr)
    except Exception:  # noqa: BLE001
        pass


def experiments() -> list[Experiment]:
    """Every registered experiment, by name."""
    _discover()
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def get(name: str) -> Experiment:
    _discover()
    if name not in _REGISTRY:
        import difflib

        close = difflib.get_close_matches(name, list(_REGISTRY), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise InputError(f"unknown experiment '{name}'{hint}; known: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def reproduce(name: str, out="out", quick: bool = False, executor=None, real: bool = False, say=None):
    """Run experiment ``name`` into ``OUT/NAME/``; returns the report's path.

    ``real``: also make the experiment's real runs (real-time threads on this machine's CPUs;
    needs root: :class:`PrivilegeError` otherwise, before any work). Their plan is passed to
    ``say`` first (default: printed on stderr). Without it nothing real-time runs."""
    from pathlib import Path

    from .._core import PrivilegeError
    from . import experiment

    exp = get(name)
    if real:
        from ._real import can_run_real, plan_text

        if exp.real is None:
            (say or _stderr)(f"rtsched reproduce {name}: this experiment has no real runs; --real changes nothing")
            real = False
        else:
            ok, why = can_run_real()
            if not ok:
                raise PrivilegeError(f"--real: {why}")
            (say or _stderr)(plan_text(name, exp.real_plan(quick), quick))
    return experiment.run(exp, Path(out) / name, quick, executor, real=real)


def _stderr(text):
    print(text, file=sys.stderr, flush=True)
