"""The column catalogue as Python reads it: every column of rtsched's results — its name, type,
unit, meaning, where it appears, what measures it — declared once, in Rust
(``crates/model/src/results/columns/catalogue.rs``), and given here as data by ``_core.columns()``.

``Result`` (its per-job columns and run-level counters), the sweep table (its columns and their
types) and the comparison table (its columns, headers, when each is shown) are built from it,
so a column added there reaches them with no change here.
"""

from __future__ import annotations

from functools import cache

from . import _core

#: Where a column can appear: a per-job record, a task's summary, the run's summary, a sweep's
#: row, the comparison table, a chain instance's record (docs/chains.md).
PLACES = ("job", "task", "run", "row", "table", "chain")


@cache
def columns(place: str | None = None) -> tuple:
    """The columns of ``place`` (one of :data:`PLACES`) in that place's order, or every column
    in the catalogue's order: dicts with ``name``, ``kind``, ``unit``, ``nullable``,
    ``meaning``, ``at``, ``measured``, ``doc``, ``source`` and ``table``
    (``_core.columns``)."""
    return tuple(_core.columns(place))


def names(place: str, **where) -> list[str]:
    """The names of ``place``'s columns, in its order, whose fields equal ``where``'s (e.g.
    ``names("job", nullable=True)``)."""
    return [c["name"] for c in columns(place) if all(c[k] == v for k, v in where.items())]
