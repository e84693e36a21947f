"""rtsched schedulers — list every policy."""

from __future__ import annotations

from .. import schedulers
from ..report import table


def register(sub):
    p = sub.add_parser("schedulers", help="list every scheduling policy with its paper",
                       description="Every scheduling policy. Write NAME[:OPTION[,KEY=VALUE...]], e.g. gfp:rm.")
    p.set_defaults(func=run)


def run(args):
    rows = [[s["name"], s["summary"], s["paper"]] for s in schedulers()]
    print(table(["name", "what it does", "from"], rows, ["<", "<", "<"]))
    opts = [s for s in schedulers() if s["options"]]
    if opts:
        print("\noptions:")
        for s in opts:
            print(f"  {s['name']}: {s['options']}")
    return 0
