#!/usr/bin/env python3
"""Schedulability by locking protocol (issue 56): the acceptance ratio against utilisation, one
line per scheduler and protocol, as the locking literature plots it (Brandenburg 2011, ch. 6-7;
Wieder & Brandenburg 2013): the two example sweeps of a ``locking`` axis.

- ``examples/sweeps/locking-uniprocessor.yaml``: one CPU, 6 tasks (UUniFast, periods 3-30 ms),
  2 resources, p_acc = 0.5, 1-3 long sections (5-1280 us) per job of a resource used; ``gfp:rm`` and ``gedf``
  simulated (miss-free ratio), ``test:fp-rta-rm`` and ``test:edf-exact`` with the protocol's
  blocking term; protocols none, pip, pcp, srp.
- ``examples/sweeps/locking-partitioned.yaml``: 4 CPUs, 16 tasks (RandFixedSum, periods 3-30 ms)
  placed by worst fit on load, 6 resources, p_acc = 0.2, 1-3 medium sections (1-100 us); ``pfp`` simulated and
  ``test:p-fp-rta-rm`` (spin and blocking terms); protocols msrp, mrsp, fmlp+.

A row a protocol does not apply to (``none`` under a blocking test: a plain FIFO mutex has no
bound) is left out of the ratio and counted in the table's "n/a" column; a test's inconclusive
verdict counts as not accepted.

    .venv/bin/python benchmarks/locking_sweep.py [--seeds 100] [--workers 2]

(also ``make locking-sweep``). Writes docs/img/locking_sweep.png and
benchmarks/results/locking_sweep.json (the ratios), and prints the table of docs/locking.md.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import yaml

import rtsched
from _results import write_atomic
from rtsched.plots import _plt, by_locking, wilson

ROOT = Path(__file__).resolve().parent.parent
SPECS = ["locking-uniprocessor", "locking-partitioned"]


def run(name: str, seeds: int, workers: int):
    d = yaml.safe_load((ROOT / "examples" / "sweeps" / f"{name}.yaml").read_text())
    d["seeds"] = seeds
    d.pop("output", None)
    t = time.perf_counter()
    df = rtsched.sweep(d, workers=workers, progress=False)
    return by_locking(df), time.perf_counter() - t


def ratios(df) -> dict:
    """Per series (``SCHEDULER @ PROTOCOL``) and point: (schedulable, applicable, not applicable)."""
    out = {}
    for (s, p), grp in df.groupby(["scheduler", "point"], sort=True):
        ok = grp[grp["status"] != "not-applicable"]
        out.setdefault(s, {})[float(p)] = (int(ok["schedulable"].sum()), len(ok), len(grp) - len(ok))
    return out


PROTOCOL_COLOURS = {"none": 7, "pip": 0, "pcp": 1, "srp": 2, "msrp": 3, "mrsp": 4, "fmlp+": 5}


def draw(panels, path):
    """One panel per (title, x label, ratios, schedulers); a colour per protocol, solid for the
    simulation, dashed for the test, with 95% Wilson intervals."""
    plt = _plt()
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.4), squeeze=False)
    for ax, (title, xlabel, r, scheds) in zip(axes[0], panels):
        for series, pts in r.items():
            sched, _, proto = series.partition(" @ ")
            xs = [x for x, (_, n, _) in pts.items() if n]
            if sched not in scheds or not xs:
                continue
            ys = [pts[x][0] / pts[x][1] for x in xs]
            lo = [max(0.0, y - wilson(pts[x][0], pts[x][1])[0]) for x, y in zip(xs, ys)]
            hi = [max(0.0, wilson(pts[x][0], pts[x][1])[1] - y) for x, y in zip(xs, ys)]
            style = "--" if sched.startswith("test:") else "-"
            ax.errorbar(xs, ys, yerr=[lo, hi], fmt=style + "o", ms=3, capsize=2, label=series,
                        color=plt.cm.tab10(PROTOCOL_COLOURS.get(proto, 9)))
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("acceptance ratio")
        ax.set_ylim(-0.05, 1.05)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def table(r) -> list[str]:
    points = sorted({p for pts in r.values() for p in pts})
    lines = ["| series | " + " | ".join(f"{p:g}" for p in points) + " | n/a |",
             "|---|" + "---|" * (len(points) + 1)]
    for s, pts in r.items():
        cells = [f"{pts[p][0] / pts[p][1]:.2f}" if p in pts and pts[p][1] else "–" for p in points]
        lines.append(f"| `{s}` | " + " | ".join(cells) + f" | {sum(v[2] for v in pts.values())} |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=100, help="task sets per point (default 100)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "locking_sweep.png"))
    args = ap.parse_args()
    panels, doc = [], {"seeds": args.seeds, "workers": args.workers}
    for name, figs in [
        ("locking-uniprocessor", [
            ("1 CPU, fixed priority (RM): 6 tasks, 2 resources,\np_acc 0.5, 1-3 long sections", ("gfp:rm", "test:fp-rta-rm")),
            ("1 CPU, EDF: the same sets", ("gedf", "test:edf-exact"))]),
        ("locking-partitioned", [
            ("4 CPUs, partitioned FP (worst fit): 16 tasks,\n6 resources, p_acc 0.2, 1-3 medium sections", ("pfp", "test:p-fp-rta-rm"))]),
    ]:
        df, secs = run(name, args.seeds, args.workers)
        r = ratios(df)
        xlabel = "utilisation per CPU U/m" if name.endswith("partitioned") else "utilisation U"
        panels += [(title, xlabel, r, scheds) for title, scheds in figs]
        doc[name] = {"rows": len(df), "seconds": round(secs, 1),
                     "ratios": {s: {str(p): list(v) for p, v in pts.items()} for s, pts in r.items()}}
        print(f"{name}: {len(df)} rows in {secs:.1f} s")
        print("\n".join(table(r)))
        errors = df[df["status"] == "not-applicable"].groupby("scheduler")["error"].first()
        for s, e in errors.items():
            print(f"  n/a {s}: {e[:160]}")
    draw(panels, args.out)
    write_atomic(ROOT / "benchmarks" / "results" / "locking_sweep.json", doc)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
