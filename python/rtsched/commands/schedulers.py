"""rtsched schedulers — list every policy."""

from __future__ import annotations

import sys
import textwrap

from .. import schedulers
from ..analysis import tests
from ..policies import needs
from ..tables import FORMATS, Column, as_format, output_width, render


def register(sub):
    p = sub.add_parser("schedulers", help="list every scheduling policy with its paper",
                       description="Every scheduling policy. Write NAME[:OPTION[,KEY=VALUE...]], e.g. gfp:rm.")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="'table' (default: on a terminal, or with COLUMNS set, the descriptions and papers are folded "
                        "to fit its width), or 'csv' or 'json' for machines: name, summary, paper, options, and what "
                        "each takes and needs (partition, fixed_priorities, takes, tufs, resolves_deadlocks, "
                        "grants_resources; in CSV nested as partition.bare, takes.dag, ...)")
    p.set_defaults(func=run)


#: The schedulability tests a sweep can run in place of a simulation (the analysis crate's
#: registry): what each tests, the kind of answer it gives and its source; the sets it applies to.
TESTS = [Column("entry"), Column("what it tests", fold=True), Column("applies to", fold=True)]

#: The table: the name on one line, what it does and where it comes from folded to fit.
COLUMNS = [Column("name"), Column("what it does", fold=True), Column("from", fold=True)]


def _flat(record: dict, prefix: str = "") -> dict:
    """A description with its nested parts (``partition``, ``takes``) as ``partition.bare``,
    ``takes.dag``... columns, for CSV (a policy without a partition leaves them empty)."""
    out = {}
    for k, v in record.items():
        if v is None and k == "partition":
            continue
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v
    return out


def run(args):
    if args.format != "table":
        rows = schedulers() if args.format == "json" else [_flat(s) for s in schedulers()]
        print(as_format(args.format, rows), file=getattr(args, "rows_out", None) or sys.stdout)
        return 0
    rows = [[s["name"], s["summary"], s["paper"]] for s in schedulers()]
    print(render(COLUMNS, rows, output_width()).text)
    opts = [s for s in schedulers() if s["options"]]
    if opts:
        print("\noptions:")
        width = output_width()
        for s in opts:
            line = f"  {s['name']}: {s['options']}"
            print(textwrap.fill(line, width, subsequent_indent="    ", break_on_hyphens=False) if width else line)
    width = output_width()
    head = "takes and needs (beyond sequential and parallel real-time tasks with critical sections):"
    print("\n" + (textwrap.fill(head, width, break_on_hyphens=False) if width else head))
    for s in schedulers():
        line = f"  {s['name']}: {needs(s)}"
        print(textwrap.fill(line, width, subsequent_indent="    ", break_on_hyphens=False) if width else line)
    head = "tests, as sweep entries 'test:NAME' (docs/sweeps.md; `rtsched analyze` runs them on a file):"
    print("\n" + (textwrap.fill(head, width, break_on_hyphens=False) if width else head))
    rows = [[f"test:{t['name']}", f"{t['summary']} — {t['kind']}; {t['citation']}", t["applies"]] for t in tests()]
    print(render(TESTS, rows, width).text)
    return 0
