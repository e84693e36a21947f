#!/usr/bin/env python3
"""Tightness of the chain bounds (issue 53): bound / simulated maximum, per utilisation point.

Sets of the project's generators (docs/chains.md, "Generators"), on one CPU under rate-monotonic
fixed priority (`gfp:rm`; neither generator gives priorities, `rtsched.chain_bounds` then
takes rate-monotonic ones too), each a series:
- `ros2-tree` (n=8 callbacks, 2 timers, no joins, log-uniform periods in [10, 100] ms on a
  1 ms grid): event chains, one per leaf callback, bounded by the holistic analysis;
- `ros2-tree` with one timer and p_join=0.3: the same with joins under one timer (a join of
  two timers' callbacks is analysed too, more loosely: docs/chains.md "Joins across heads");
- `waters2015-chains` (m=1, runnable-level tasks, chains=5, implicit communication): data-flow
  chains, data age bounded by Dürr et al. (2019), and the same chains by Davare et al. (2007)
  as a series of their own; the script also prints Dürr's bound over Davare's (data age and
  reaction time) per point.
Each set is analysed (`rtsched.chain_bounds`) and simulated from synchronous release at WCET for
two hyperperiods plus the longest bound, at most 4 s; a chain whose bound is refused (an
unbounded response, a join not analysed) is counted as refused, not plotted.

    .venv/bin/python benchmarks/chain_tightness.py [--sets 20] [--seed 1]

(also `make chain-tightness`). Writes docs/img/chain_tightness.png and
benchmarks/results/chain_tightness.json. A ratio of 1 is a bound the simulation attains; the
simulation is one release pattern (synchronous, at WCET), so the ratio is an upper estimate
of the true pessimism.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from tqdm import tqdm

import rtsched
from _results import write_atomic

ROOT = Path(__file__).resolve().parent.parent
POINTS = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
#: (label, generator, its parameters besides U, plot style). ros2-tree's joins get a one-timer
#: series of their own (joins of one transaction; two timers' joins are bounded more loosely).
GENERATORS = [
    ("ros2-tree latency", "ros2-tree", {"n": 8, "timers": 2, "p_join": 0, "granularity": "1ms"}, "o-"),
    ("ros2-tree latency, joins", "ros2-tree", {"n": 8, "timers": 1, "p_join": 0.3}, "^:"),
    ("waters2015-chains data age", "waters2015-chains", {"m": 1, "chains": 5}, "s--"),
]
#: The series of the implicit chains' bounds by Davare et al. (the WATERS chains again).
DAVARE = "waters2015-chains data age, Davare"
#: The longest simulated run (ns): a set's two hyperperiods plus its longest bound, capped.
MAX_RUN_NS = 4_000_000_000


def one(ts) -> list[tuple[str, float, dict | None]]:
    """(metric, bound / simulated maximum, for an implicit chain Davare's ratio and Dürr's
    bounds over Davare's) of each chain with a bound and a simulated value; ("refused", nan,
    None) for one without a bound."""
    bounds = rtsched.chain_bounds(ts)
    davare = {b["chain"]: b for b in rtsched.chain_bounds(ts, implicit="davare")}
    hyper = math.lcm(*(t["period_ns"] for t in ts.tasks()))
    longest = max([b["latency_ns"] or b["data_age_ns"] or 0 for b in bounds] + [0])
    run_ns = min(2 * hyper + longest, MAX_RUN_NS)
    r = rtsched.simulate(ts, "gfp:rm", duration=f"{run_ns // 1000}us", keep_jobs=False, _warn=False)
    out = []
    for b in bounds:
        metric = "latency" if b["communication"] is None else "data age"
        bound = b["latency_ns"] if metric == "latency" else b["data_age_ns"]
        sim = (r.summary["chains"][b["chain"]][f"{metric.replace(' ', '_')}_ns"] or {}).get("max")
        if bound is None:
            out.append(("refused", float("nan"), None))
        elif sim:
            d = davare[b["chain"]]
            extra = None if b["communication"] != "implicit" else {
                "ratio": d["data_age_ns"] / sim, "age": bound / d["data_age_ns"],
                "reaction": b["reaction_time_ns"] / d["reaction_time_ns"]}
            out.append((metric, bound / sim, extra))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", type=int, default=20, help="sets per generator and utilisation point (default 20)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "docs/img/chain_tightness.png"))
    args = ap.parse_args()
    rows, tighter = [], []
    for u in tqdm(POINTS, desc="utilisation points"):
        for label, gen, params, _ in GENERATORS:
            for k in range(args.sets):
                ts = rtsched.generate(gen, seed=args.seed * 100_000 + k, U=u, **params).taskset
                for metric, ratio, extra in one(ts):
                    rows.append({"u": u, "series": label, "metric": metric, "ratio": ratio})
                    if extra:
                        rows.append({"u": u, "series": DAVARE, "metric": metric, "ratio": extra["ratio"]})
                        tighter.append({"u": u, "age": extra["age"], "reaction": extra["reaction"]})
    series = GENERATORS + [(DAVARE, "waters2015-chains", GENERATORS[2][2], "x-.")]
    summary = {}
    for label, *_ in series:
        per = {}
        for u in POINTS:
            xs = sorted(r["ratio"] for r in rows if r["u"] == u and r["series"] == label and r["metric"] != "refused")
            if xs:
                per[u] = {"n": len(xs), "min": xs[0], "median": xs[len(xs) // 2], "p90": xs[int(0.9 * (len(xs) - 1))],
                          "max": xs[-1]}
        summary[label] = per
    refused = {g: {u: sum(1 for r in rows if r["u"] == u and r["series"] == g and r["metric"] == "refused")
                   for u in POINTS} for g, *_ in GENERATORS}
    durr_over_davare = {}
    for u in POINTS:
        per = {}
        for key in ("age", "reaction"):
            xs = sorted(t[key] for t in tighter if t["u"] == u)
            if xs:
                per[key] = {"n": len(xs), "min": xs[0], "median": xs[len(xs) // 2], "max": xs[-1],
                            "mean": sum(xs) / len(xs)}
        durr_over_davare[u] = per
    write_atomic(ROOT / "benchmarks/results/chain_tightness.json",
                 {"sets_per_point": args.sets, "seed": args.seed, "summary": {m: {str(u): v for u, v in s.items()}
                                                                             for m, s in summary.items()},
                  "series": {label: {"generator": g, "params": p} for label, g, p, _ in series},
                  "durr_over_davare": {str(u): v for u, v in durr_over_davare.items()},
                  "refused": {g: {str(u): n for u, n in per.items()} for g, per in refused.items()}})
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for metric, _, _, style in series:
        if not summary[metric]:
            continue
        s = summary[metric]
        xs = sorted(s)
        ax.plot(xs, [s[u]["median"] for u in xs], style, label=f"{metric}: median")
        if metric == DAVARE:  # its band is nearly Dürr's: the median line only
            continue
        ax.fill_between(xs, [s[u]["min"] for u in xs], [s[u]["p90"] for u in xs], alpha=0.2,
                        label=f"{metric}: min to p90")
    ax.axhline(1, color="k", lw=0.8)
    ax.set_yscale("log")  # WATERS chains through 1 s tasks reach ratios of hundreds
    ax.set_xlabel("utilisation (1 CPU, gfp:rm)")
    ax.set_ylabel("bound / simulated maximum")
    ax.set_title(f"Holistic (event chains), Dürr and Davare (implicit), {args.sets} sets per generator and point",
                 fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    for metric, s in summary.items():
        for u, v in s.items():
            print(f"{metric} U={u}: n={v['n']} median {v['median']:.2f} p90 {v['p90']:.2f} min {v['min']:.2f}")
    for u, per in durr_over_davare.items():
        print(f"Dürr / Davare U={u}: " + "; ".join(
            f"{k} n={v['n']} median {v['median']:.3f} mean {v['mean']:.3f} min {v['min']:.3f}"
            for k, v in per.items()))
    for g, per in refused.items():
        print(f"refused ({g}): " + ", ".join(f"U={u}: {n}" for u, n in per.items()))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
