#!/usr/bin/env python3
"""Schedulability by locking protocol (issue 56): the acceptance ratio against utilisation, one
line per scheduler and protocol, as the locking literature plots it (Brandenburg 2011, ch. 6-7;
Wieder & Brandenburg 2013): the two example sweeps of a ``locking`` axis.

- ``examples/sweeps/locking-uniprocessor.yaml``: one CPU, 6 tasks (UUniFast), 2 resources,
  p_acc = 0.5, 1-2 long sections (5-1280 us) per job of a resource used; ``gfp:rm`` and ``gedf``
  simulated (miss-free ratio), ``test:fp-rta-rm`` and ``test:edf-exact`` with the protocol's
  blocking term; protocols none, pip, pcp, srp.
- ``examples/sweeps/locking-partitioned.yaml``: 2 CPUs, 8 tasks (RandFixedSum) placed by worst
  fit on load, 4 resources, p_acc = 0.3, 1-3 medium sections (1-100 us); ``pfp`` simulated and
  ``test:p-fp-rta-rm`` (spin and blocking terms); protocols msrp, mrsp, fmlp+.

A row a protocol does not apply to (``none`` under a blocking test, ``srp`` under fixed priority
where the simulator refuses it, ``mrsp`` where a task can preempt a holder) is left out of the
ratio and counted in the table's "n/a" column.

    .venv/bin/python benchmarks/locking_sweep.py [--seeds 40] [--workers 2]

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


def draw(panels, path):
    plt = _plt()
    fig, axes = plt.subplots(1, len(panels), figsize=(6.2 * len(panels), 4.4), squeeze=False)
    for ax, (title, xlabel, r) in zip(axes[0], panels):
        for i, (series, pts) in enumerate(r.items()):
            xs = [x for x, (_, n, _) in pts.items() if n]
            if not xs:
                continue
            ys = [pts[x][0] / pts[x][1] for x in xs]
            lo = [y - wilson(pts[x][0], pts[x][1])[0] for x, y in zip(xs, ys)]
            hi = [wilson(pts[x][0], pts[x][1])[1] - y for x, y in zip(xs, ys)]
            style = "--" if series.startswith("test:") else "-"
            ax.errorbar(xs, ys, yerr=[lo, hi], fmt=style + "o", ms=3, capsize=2, label=series,
                        color=plt.cm.tab10(i % 10))
        ax.set_title(title, fontsize=10)
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
    ap.add_argument("--seeds", type=int, default=40, help="task sets per point (default 40)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "locking_sweep.png"))
    args = ap.parse_args()
    panels, doc = [], {"seeds": args.seeds, "workers": args.workers}
    for name, title, xlabel in [
        ("locking-uniprocessor", "1 CPU: 6 tasks, 2 resources, p_acc 0.5, long sections", "utilisation U"),
        ("locking-partitioned", "2 CPUs (worst fit): 8 tasks, 4 resources, p_acc 0.3, medium sections",
         "utilisation per CPU U/m"),
    ]:
        df, secs = run(name, args.seeds, args.workers)
        r = ratios(df)
        panels.append((title, xlabel, r))
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
