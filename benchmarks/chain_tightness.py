#!/usr/bin/env python3
"""Tightness of the chain bounds (issue 53): bound / simulated maximum, per utilisation point.

Random small chain sets on one CPU under fixed priority with the file's priorities (`gfp:file`),
from a seeded generator of this script's own: per set, 2–3 periodic heads (T in 5, 10, 20,
50 ms), each starting a line of 1–3 tasks it triggers (an event chain, head to the end of the
line), a quarter of the tasks self-suspending (one suspension of up to a tenth of the period
between two run segments), an implicit chain between two heads, random distinct priorities;
the WCETs are the utilisations of UUniFast (Bini & Buttazzo 2005) times the periods, so the set
has exactly the utilisation of its point. Each set is analysed (`rtsched.chain_bounds`: the
holistic bound of each event chain, Davare's data-age bound of the implicit one) and simulated
from synchronous release at WCET for two hyperperiods plus the longest chain's bound; a chain
whose bound is refused (a suspending task's window over more than one job, an unbounded
response) is counted as refused, not plotted.

    .venv/bin/python benchmarks/chain_tightness.py [--sets 40] [--seed 1]

(also `make chain-tightness`). Writes docs/img/chain_tightness.png and
benchmarks/results/chain_tightness.json. A ratio of 1 is a bound the simulation attains; the
simulation is one release pattern (synchronous, at WCET), so the ratio is an upper estimate
of the true pessimism.
"""

from __future__ import annotations

import argparse
import math
import random
from pathlib import Path

from tqdm import tqdm

import rtsched
from _results import write_atomic

ROOT = Path(__file__).resolve().parent.parent
PERIODS_MS = [5, 10, 20, 50]
POINTS = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]


def uunifast(rng: random.Random, n: int, u: float) -> list[float]:
    """n utilisations summing to u (Bini & Buttazzo 2005)."""
    out, rest = [], u
    for i in range(1, n):
        nxt = rest * rng.random() ** (1 / (n - i))
        out.append(rest - nxt)
        rest = nxt
    return out + [rest]


def random_set(rng: random.Random, u: float) -> tuple[str, list[int]]:
    """A chain set of utilisation `u`, as YAML, and its heads' periods (us)."""
    heads = rng.randint(2, 3)
    lines = [rng.randint(1, 3) for _ in range(heads)]
    n = heads + sum(lines)
    utils = uunifast(rng, n, u)
    prio = list(range(1, n + 1))
    rng.shuffle(prio)
    tasks, chains, periods, k = [], [], [], 0
    for h in range(heads):
        period = rng.choice(PERIODS_MS) * 1000  # us
        periods.append(period)
        line = []
        for pos in range(lines[h] + 1):
            name = f"t{k}"
            c = max(1, round(utils[k] * period))
            if rng.random() < 1 / 4 and c >= 2:
                a = rng.randint(1, c - 1)
                s = rng.randint(1, period // 10)
                body = f"segments: [{a}us, {{suspend: {s}us}}, {c - a}us]"
            else:
                body = f"wcet: {c}us"
            arrival = f"period: {period}us" if pos == 0 else f"trigger: {line[-1]}, deadline: {period}us"
            tasks.append(f"  - {{name: {name}, {arrival}, {body}, priority: {prio[k]}}}")
            line.append(name)
            k += 1
        chains.append(f"  - {{name: e{h}, tasks: [{', '.join(line)}]}}")
    heads_names = [t.split(",")[0].split("name: ")[1] for t in tasks if "period:" in t]
    chains.append(f"  - {{name: imp, tasks: [{heads_names[0]}, {heads_names[1]}], communication: implicit}}")
    return "platform: {cpus: 1}\ntasks:\n" + "\n".join(tasks) + "\nchains:\n" + "\n".join(chains) + "\n", periods


def one(yaml: str, periods_us: list[int]) -> list[tuple[str, float]]:
    """(metric, bound / simulated maximum) of each chain with a bound and a simulated value;
    ("refused", nan) for one without a bound."""
    ts = rtsched.parse_taskset(yaml)
    bounds = rtsched.chain_bounds(ts)
    hyper = math.lcm(*periods_us) * 1000
    longest = max([b["latency_ns"] or b["data_age_ns"] or 0 for b in bounds] + [0])
    r = rtsched.simulate(ts, "gfp:file", duration=f"{(2 * hyper + longest) // 1000}us", keep_jobs=False, _warn=False)
    out = []
    for b in bounds:
        metric = "latency" if b["communication"] is None else "data age"
        bound = b["latency_ns"] if metric == "latency" else b["data_age_ns"]
        sim = (r.summary["chains"][b["chain"]][f"{metric.replace(' ', '_')}_ns"] or {}).get("max")
        if bound is None:
            out.append(("refused", float("nan")))
        elif sim:
            out.append((metric, bound / sim))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", type=int, default=40, help="sets per utilisation point (default 40)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "docs/img/chain_tightness.png"))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    rows = []
    for u in tqdm(POINTS, desc="utilisation points"):
        for _ in range(args.sets):
            for metric, ratio in one(*random_set(rng, u)):
                rows.append({"u": u, "metric": metric, "ratio": ratio})
    summary = {}
    for metric in ("latency", "data age"):
        per = {}
        for u in POINTS:
            xs = sorted(r["ratio"] for r in rows if r["u"] == u and r["metric"] == metric)
            if xs:
                per[u] = {"n": len(xs), "min": xs[0], "median": xs[len(xs) // 2], "p90": xs[int(0.9 * (len(xs) - 1))],
                          "max": xs[-1]}
        summary[metric] = per
    refused = {u: sum(1 for r in rows if r["u"] == u and r["metric"] == "refused") for u in POINTS}
    write_atomic(ROOT / "benchmarks/results/chain_tightness.json",
                 {"sets_per_point": args.sets, "seed": args.seed, "summary": {m: {str(u): v for u, v in s.items()}
                                                                             for m, s in summary.items()},
                  "refused": {str(u): n for u, n in refused.items()}})
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for metric, style in (("latency", "o-"), ("data age", "s--")):
        s = summary[metric]
        xs = sorted(s)
        ax.plot(xs, [s[u]["median"] for u in xs], style, label=f"{metric}: median")
        ax.fill_between(xs, [s[u]["min"] for u in xs], [s[u]["p90"] for u in xs], alpha=0.2,
                        label=f"{metric}: min to p90")
    ax.axhline(1, color="k", lw=0.8)
    ax.set_xlabel("utilisation (1 CPU, gfp:file)")
    ax.set_ylabel("bound / simulated maximum")
    ax.set_title(f"Chain bounds: holistic (event) and Davare (implicit), {args.sets} sets per point")
    ax.legend(fontsize=7)
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    for metric, s in summary.items():
        print(metric + ": " + ", ".join(f"U={u}: median {v['median']:.2f} (n={v['n']})" for u, v in s.items()))
    print("refused: " + ", ".join(f"U={u}: {n}" for u, n in refused.items()))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
