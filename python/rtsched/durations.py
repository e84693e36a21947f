"""How rtsched writes a duration given in ns. Every Python formatter of a duration is here,
and the rule is Rust's (``model::time``, through ``_core``), as the parsing is
(``parse_duration``):

- :func:`words` — for reading (a warning, a caption): the largest unit in which it is at
  least 1, to six significant digits, spelt as a file spells it (``"1.5ms"``,
  ``"33.3333ms"``, ``"250us"``; ``time::fmt_duration_rounded``). The exact spelling, which
  files get, is the task-set writer's (``time::fmt_duration``: ``"1100us"``).
- :func:`in_unit` — a number of a unit the text names elsewhere (a column's header, the rest
  of a sentence): ``ns`` in ``unit`` (the parser's units), with ``decimals`` places, or to
  six significant digits; ``"-"`` for a value not there (``time::fmt_duration_in``).
"""

from __future__ import annotations

from ._core import format_duration, format_duration_in


def words(ns) -> str:
    """``ns`` for reading: ``"1.5ms"`` (``time::fmt_duration_rounded``, six significant digits)."""
    return format_duration(int(ns))


def in_unit(ns, unit: str = "ms", decimals: int | None = None) -> str:
    """``ns`` as a number of ``unit`` (``"ns"``, ``"us"``, ``"ms"``, ``"s"``;
    ``time::fmt_duration_in``): ``decimals`` places (``in_unit(1_234_567, "ms", 3)`` is
    ``"1.235"``), or six significant digits without trailing zeros when None (``"1.23457"``);
    ``ns`` may be fractional (a mean); ``"-"`` for None (a value not measured)."""
    if ns is None:
        return "-"
    return format_duration_in(float(ns), unit, decimals)
