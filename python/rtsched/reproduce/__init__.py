"""Reproductions of the papers' experiments: ``rtsched reproduce NAME [--quick] [--out DIR]``.

A registry of experiments. Each experiment is a module of this package (or of any installed
package, through the ``rtsched.reproduce`` entry-point group) that registers itself::

    from rtsched.reproduce import register

    @register("lelli2011", paper="Lelli et al., An efficient and scalable implementation of global EDF in Linux (2011)",
              description="push/enqueue operations per scheduler and core count")
    def run(out_dir, quick, executor, real=False):
        ...            # write figures and out_dir/report.md (see rtsched.reproduce.report)
        return report_path

Modules are discovered, not listed: dropping ``lelli2011.py`` into this directory (or shipping
it in another package with an entry point) registers it without editing any other file.
``run(out_dir, quick, executor, real=False)`` writes into ``out_dir`` (created for it): a
Markdown report (``report.md``) with the paper's numbers beside rtsched's, and figures (PNG and
SVG). ``quick`` must finish in under a minute on 2 cores; ``executor`` is a
``concurrent.futures.Executor`` for sweeps (None: the experiment chooses).

**Real runs only when asked.** An experiment with a part on this machine's real cores makes
those runs only when ``real`` is true (``rtsched reproduce NAME --real``), as root too, and
registers ``real_plan(quick)``: the list of :class:`rtsched.reproduce._real.RealPart` it will
run, printed before anything starts. Without ``real`` its report says the real part was not
run and gives the command that runs it (``_real.not_run``).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable
from dataclasses import dataclass

from .._core import InputError


@dataclass(frozen=True)
class Experiment:
    name: str
    description: str
    paper: str
    run: Callable
    module: str = ""
    #: ``real_plan(quick)``: the real runs ``--real`` makes (None: the experiment has none).
    real_plan: Callable | None = None


_REGISTRY: dict[str, Experiment] = {}
_discovered = False


def register(name: str, description: str, paper: str, replace: bool = False, real_plan: Callable | None = None):
    """Decorator: register ``run(out_dir, quick, executor, real=False)`` as experiment ``name``
    (``real_plan``: see the module's docstring).

    A second registration of the same name is an error unless ``replace=True`` (so two modules
    cannot silently shadow each other)."""

    def deco(fn):
        old = _REGISTRY.get(name)
        if old is not None and not replace and old.module != fn.__module__:
            raise ValueError(f"reproduce experiment {name!r} is registered twice ({old.module} and {fn.__module__})")
        _REGISTRY[name] = Experiment(name, description, paper, fn, fn.__module__, real_plan)
        fn.experiment, fn.paper, fn.description = name, paper, description
        return fn

    return deco


def _discover():
    global _discovered
    if _discovered:
        return
    _discovered = True
    for m in pkgutil.iter_modules(__path__):
        if not m.name.startswith("_") and m.name != "report":
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
    import inspect
    from pathlib import Path

    from .._core import PrivilegeError

    exp = get(name)
    kw = {}
    if real:
        from ._real import can_run_real, plan_text

        if exp.real_plan is None or "real" not in inspect.signature(exp.run).parameters:
            (say or _stderr)(f"rtsched reproduce {name}: this experiment has no real runs; --real changes nothing")
        else:
            ok, why = can_run_real()
            if not ok:
                raise PrivilegeError(f"--real: {why}")
            (say or _stderr)(plan_text(name, exp.real_plan(quick), quick))
            kw["real"] = True
    out_dir = Path(out) / name
    out_dir.mkdir(parents=True, exist_ok=True)
    return exp.run(out_dir, quick, executor, **kw)


def _stderr(text):
    print(text, file=sys.stderr, flush=True)
