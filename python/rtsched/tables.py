"""Tables that fit the terminal, and the same rows for machines (CSV, JSON).

A table is a list of :class:`Column` and rows of cells. :func:`render` draws it with rich
(``rich.table.Table`` through a ``rich.console.Console`` of the fitted width): no borders, a
line of dashes under the header, columns two cells apart, no colour or markup whatever the
output is (the text is the same on a terminal, in a pipe and in a test, and cells are shown
as written: ``[b]`` is not markup). Given a width (:func:`output_width`: ``COLUMNS``, else the
terminal's), a table wider than it is fitted in two ways, in this order:

1. text columns (``fold=True``: a description, a paper's title) are folded over several lines
   (rich wraps at spaces and folds a word longer than the column), down to a readable minimum;
2. columns are left out, highest ``rank`` first (the rightmost first among equals) until the
   table fits; then each one left out that fits in the room left is taken back, most important
   first (a narrow column may fit where a wide one did not). Rank 0 is never left out. The
   caller says which were left out (:meth:`Rendered.note`).

Rich folds and shrinks columns but never leaves one out, and shrinks a number as readily as a
sentence; so which columns are shown and how wide each is (numbers whole, text at least
MIN_FOLD cells and its words whole where the room allows) is decided here, and rich is given
those widths. A table that still does not fit (its rank-0 columns alone are wider) is printed
as it is.

Output that is not a terminal, with no ``COLUMNS``, has no width: every column, at full width
(a script reading ``rtsched simulate | ...`` sees every column). A cell's width is counted in
terminal cells (``rich.cells.cell_len``: a wide character takes two, a combining mark none).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
import sys
import textwrap
from dataclasses import dataclass

#: The space between two columns.
GAP = 2
#: A folded column is never made narrower than this (or its longest word, if shorter).
MIN_FOLD = 16


@dataclass(frozen=True)
class Column:
    """A table column: its header, alignment (``"<"`` left, ``">"`` right), ``rank`` (0: always
    shown; higher: left out sooner when the table is too wide) and whether its cells may be
    folded over several lines (text, not numbers)."""

    header: str
    align: str = "<"
    rank: int = 0
    fold: bool = False


@dataclass(frozen=True)
class Rendered:
    """A rendered table: its text and the headers of the columns left out to fit the width."""

    text: str
    left_out: tuple = ()

    def note(self, width, hint: str = "") -> str:
        """A line saying which columns were left out (and `hint`, where the rest are), folded to
        `width`; or ''."""
        if not self.left_out:
            return ""
        text = f"(left out to fit {width} columns: {', '.join(self.left_out)}{'; ' + hint if hint else ''})"
        return textwrap.fill(text, width, break_long_words=False, break_on_hyphens=False) if width else text

    def __str__(self) -> str:
        return self.text


def output_width(stream=None) -> int | None:
    """The width a table on `stream` (default: standard output) must fit: ``COLUMNS`` when it is
    a positive integer, else the terminal's width when `stream` is a terminal, else None (no
    limit: piped or redirected output keeps every column)."""
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    stream = stream if stream is not None else sys.stdout
    try:
        if stream.isatty():
            return shutil.get_terminal_size().columns
    except (AttributeError, ValueError, OSError):  # a closed or unusual stream: no limit
        pass
    return None


def cell(c) -> str:
    """A cell as the terminal should show it: control characters (in a task name, say) escaped."""
    c = str(c)
    return c if c.isprintable() else "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in c)


def cells_wide(text: str) -> int:
    """How many terminal cells `text` takes (East Asian wide and full-width characters take two,
    combining marks none)."""
    if text.isascii():
        return len(text)
    from rich.cells import cell_len  # (rich is imported only by a command that draws a table)

    return cell_len(text)


def _total(widths) -> int:
    return sum(widths) + GAP * max(0, len(widths) - 1)


#: Words up to this wide are not broken when a column folds, if the table can afford it.
WHOLE_WORD = 24


def _fold_floor(col: Column, natural: int, words: int = 0) -> int:
    """The narrowest a fold column gets: MIN_FOLD, its header's longest word or `words` (its
    cells' longest word, to keep whole), whichever is widest, or its natural width if less."""
    head = max([cells_wide(w) for w in col.header.split()] or [0])
    return min(natural, max(MIN_FOLD, head, words))


def _widths(columns, natural, width, words=None):
    """Column widths within `width`, folding the fold columns as far as needed, or None when the
    table cannot be made that narrow. Words of the fold columns' cells (`words`: the longest,
    per column, up to WHOLE_WORD) stay whole if they can; else they are broken."""
    if _total(natural) <= width:
        return list(natural)
    folds = [i for i, c in enumerate(columns) if c.fold]
    room = width - _total(natural) + sum(natural[i] for i in folds)  # what the fold columns may take
    for keep_words in (True, False):
        floors = {i: _fold_floor(columns[i], natural[i], (words[i] if words and keep_words else 0)) for i in folds}
        if folds and room >= sum(floors.values()):
            break
    else:
        return None
    out = list(natural)
    # Share the room in proportion to the natural widths, each column at least its floor;
    # the narrowest first, so what one does not need goes to the wider ones.
    left = sorted(folds, key=lambda i: natural[i])
    while left:
        i = left.pop(0)
        rest = sum(natural[j] for j in left)
        share = room * natural[i] // (natural[i] + rest) if left else room
        share = min(share, room - sum(floors[j] for j in left))  # the others keep their floors
        out[i] = min(natural[i], max(floors[i], share))
        room -= out[i]
    return out


#: rich's box for our tables (``rich.box.Box``): no edges and a blank rule between columns;
#: under the header a dash over each column and its padding. ASCII only (the same bytes on any
#: terminal or file). Rows: top, head, head row, mid, row, foot row, foot, bottom; each one's
#: left, line, cross, right.
PLAIN_BOX = "    \n    \n -  \n    \n    \n    \n    \n    \n"


def _draw(columns, rows, widths) -> str:
    """The table drawn by rich at exactly `widths` (each column's, padding not counted): a
    column's cells right-aligned or left, folded if it is a fold column (the others are as wide
    as their widest cell, so never folded). Trailing spaces are stripped from each line."""
    from rich.box import Box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    # GAP cells between columns: a cell's right padding (none after the last) and the rule.
    t = Table(box=Box(PLAIN_BOX, ascii=True), show_edge=False, pad_edge=False, padding=(0, GAP - 1, 0, 0), expand=False,
              highlight=False)
    for col, w in zip(columns, widths):
        t.add_column(Text(cell(col.header)), width=w, justify="right" if col.align == ">" else "left",
                     no_wrap=not col.fold, overflow="fold")
    for r in rows:
        t.add_row(*(Text(c) for c in r))
    buf = io.StringIO()
    # Nothing from the environment (TERM, NO_COLOR, COLUMNS...): the width is the one given.
    console = Console(file=buf, width=max(1, _total(widths)), color_system=None, force_terminal=False, no_color=True,
                      highlight=False, markup=False, emoji=False, legacy_windows=False, soft_wrap=False, _environ={})
    console.print(t)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines())


def render(columns, rows, width: int | None = None) -> Rendered:
    """The table, fitted to `width` terminal cells when given (see the module's docstring)."""
    columns = list(columns)
    rows = [[cell(c) for c in r] for r in rows]
    heads = [cell(c.header) for c in columns]
    natural = [max([cells_wide(h)] + [cells_wide(r[i]) for r in rows]) for i, h in enumerate(heads)]
    words = [min(WHOLE_WORD, max([cells_wide(w) for r in rows for w in r[i].split()] or [0])) if c.fold else 0
             for i, c in enumerate(columns)]
    keep = list(range(len(columns)))
    left_out = []
    widths = natural
    if width is not None:
        # Leave out the highest rank first, the rightmost first among equals.
        order = sorted((i for i in keep if columns[i].rank > 0), key=lambda i: (-columns[i].rank, -i))
        while True:
            fitted = _widths([columns[i] for i in keep], [natural[i] for i in keep], width, [words[i] for i in keep])
            if fitted is not None or not order:
                break
            gone = order.pop(0)
            keep.remove(gone)
            left_out.append(gone)
        # Then take back, most important first, each column left out that still fits (a
        # narrow one of a lower rank may fit where a wide one did not).
        for i in reversed(list(left_out)):
            trial = sorted(keep + [i])
            widths_then = _widths([columns[j] for j in trial], [natural[j] for j in trial], width, [words[j] for j in trial])
            if widths_then is not None:
                keep, fitted = trial, widths_then
                left_out.remove(i)
        if fitted is None:  # too wide even so: the text columns at their narrowest, the rest whole
            fitted = [_fold_floor(columns[i], natural[i]) if columns[i].fold else natural[i] for i in keep]
        widths = fitted
    cols = [columns[i] for i in keep]
    text = _draw(cols, [[r[i] for i in keep] for r in rows], widths)
    return Rendered(text, tuple(heads[i] for i in sorted(left_out)))


def plain(headers, rows, aligns) -> str:
    """A table at full width (no fitting): `headers`, `rows` of cells, `aligns` of "<" or ">"."""
    return render([Column(h, a) for h, a in zip(headers, aligns)], rows).text


def _jsonable(v):
    """A value for JSON: NaN and infinities (no JSON number) become null; tuples, lists."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return v


def to_json(obj) -> str:
    """`obj` (dicts, lists, numbers, strings, None) as indented JSON; NaN and infinities null."""
    return json.dumps(_jsonable(obj), indent=2, allow_nan=False)


def as_json(records) -> str:
    """`records` (a list of dicts) as a JSON array, one object per record, keys in order."""
    return to_json(list(records))


def as_csv(records) -> str:
    """`records` (a list of dicts) as CSV: a header of every key (in order of first appearance)
    and one line per record; a missing value is empty, a list is joined by ';'."""
    keys = list(dict.fromkeys(k for r in records for k in r))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(keys)
    for r in records:
        r = _jsonable(r)
        w.writerow(["" if r.get(k) is None else ";".join(map(str, r[k])) if isinstance(r[k], list) else r[k]
                    for k in keys])
    return buf.getvalue().rstrip("\n")


FORMATS = ("table", "csv", "json")


def as_format(fmt: str, records) -> str:
    """`records` as `fmt`, "csv" or "json"."""
    return as_csv(records) if fmt == "csv" else as_json(records)
