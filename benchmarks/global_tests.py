#!/usr/bin/env python3
"""Global schedulability tests on 4 and 8 CPUs (issue 55): acceptance, weighted schedulability
and the tightness of the per-task response-time bounds.

1. The sweep examples/sweeps/global-tests.yaml: RandFixedSum sets (n = 2m, T in 10–100 ms,
   implicit deadlines) at U/m = 0.3 … 1.0, every global test of the registry (`test:NAME`),
   partitioning by FFD/WFD/BFD with the exact EDF test per CPU, and gedf / gfp:rm simulated on
   the same sets. Its acceptance ratios and weighted schedulability (Bastoni, Brandenburg &
   Anderson, OSPERT 2010) are drawn by the sweep's own figures (`rtsched.plots`).
2. Tightness: for the tests that bound each task's response time (`gfp-rta-rm`, Bertogna &
   Cirinei 2007; `gfp-rta-lc-rm`, Guan et al. 2009; `gedf-rta`, Bertogna & Cirinei 2007), each
   bounded task's bound over its maximum response simulated from a synchronous release at WCET
   under the scheduler the test speaks for (`rtsched.analysis.simulated_max_response`: gfp:rm,
   gedf), on sets of the same generator (seeds 1..N of `rtsched.generate`; the sweep's seeds
   are its own). A task the test leaves unbounded (R > D) gives no ratio, nor one it bounds by
   its WCET (under FP the m most urgent tasks: exact by construction, they would pull every
   median to 1). With D = T the DM
   forms equal the RM ones (the same priorities), so they are not drawn twice.

    .venv/bin/python benchmarks/global_tests.py [--seeds 50] [--tight-sets 20]

(also `make global-tests`). Writes docs/img/global_tests_{acceptance,weighted,tightness}.png,
benchmarks/results/global_tests.json and the sweep's table out/global-tests.parquet. A ratio of
1 is a bound the simulation attains; the simulation is one release pattern, so the ratio is an
upper estimate of the bound's pessimism.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml
from tqdm import tqdm

import rtsched
from _results import write_atomic

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "examples/sweeps/global-tests.yaml"
# Each test with per-task bounds, and the scheduler its bounds speak for (the same run serves both gfp:rm tests).
TIGHT = {"gfp-rta-rm": "gfp:rm", "gfp-rta-lc-rm": "gfp:rm", "gedf-rta": "gedf"}


def quantiles(xs: list[float]) -> dict:
    xs = sorted(xs)
    at = lambda q: xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]  # noqa: E731
    return {"n": len(xs), "min": xs[0], "p10": at(0.1), "median": at(0.5), "p90": at(0.9), "max": xs[-1]}


def ratios(ts) -> dict[str, list[float]]:
    """Per test of TIGHT: each task's bound / simulated maximum response, for the tasks it bounds
    above their WCET."""
    verdicts = {v["test"]: v for v in rtsched.analyze(ts)}
    wcet = [t["wcet_ns"] for t in ts.tasks()]
    sims: dict[str, list] = {}
    out = {}
    for test, sched in TIGHT.items():
        v = verdicts.get(test)
        if v is None:
            continue
        if sched not in sims:
            run = rtsched.analysis.simulated_max_response(ts, test)
            assert run["scheduler"] == sched, run["scheduler"]
            sims[sched] = run["max_response_ns"]
        sim = sims[sched]
        # A task the analysis credits no interference (bound = C: fewer than m more urgent
        # tasks under FP) is exact by construction and left out.
        out[test] = [b["bound_ns"] / s for b, s, c in zip(v["tasks"], sim, wcet, strict=True)
                     if b["bound_ns"] and s and b["bound_ns"] > c]
    return out


def tightness(spec: dict, sets: int) -> dict:
    """{label: {test: {point: quantiles}}} over `sets` sets per point."""
    points = spec["utilisation"]["points"]
    us = [round(points["from"] + k * points["step"], 6)
          for k in range(int(round((points["to"] - points["from"]) / points["step"])) + 1)]
    out = {}
    for g in spec["generators"]:
        p = g["params"]
        per: dict[str, dict] = {t: {} for t in TIGHT}
        for u in tqdm(us, desc=f"tightness {g['label']}"):
            pool: dict[str, list[float]] = {t: [] for t in TIGHT}
            for seed in range(1, sets + 1):
                ts = rtsched.generate(g["name"], seed=seed, U=u * p["m"], **p).taskset
                for t, rs in ratios(ts).items():
                    pool[t] += rs
            for t, rs in pool.items():
                if rs:
                    per[t][u] = quantiles(rs)
        out[g["label"]] = per
    return out


def tightness_figure(tight: dict, path: Path, sets: int) -> None:
    import matplotlib.pyplot as plt

    labels = list(tight)
    fig, axes = plt.subplots(1, len(labels), figsize=(5.2 * len(labels), 3.8), sharey=True, squeeze=False)
    for a, label in zip(axes[0], labels):
        for i, (test, per) in enumerate(tight[label].items()):
            xs = sorted(per)
            if not xs:
                continue
            off = (i - 1) * 0.012
            a.plot([x + off for x in xs], [per[x]["median"] for x in xs], "o-", color=f"C{i}", ms=3,
                   label=f"{test}: median")
            a.vlines([x + off for x in xs], [per[x]["min"] for x in xs], [per[x]["p90"] for x in xs],
                     color=f"C{i}", alpha=0.5, lw=2.5, label=f"{test}: min to p90")
        a.axhline(1, color="k", lw=0.8)
        a.set_yscale("log")
        a.set_yticks([1, 1.5, 2, 3, 5, 10], labels=["1", "1.5", "2", "3", "5", "10"])
        a.set_title(f"{label}: randfixedsum, n = 2m, {sets} sets per point", fontsize=9)
        a.set_xlabel("utilisation per CPU U/m")
        a.grid(alpha=0.3)
    axes[0][0].set_ylabel("bound / simulated max response (per task)")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle("Tightness of the global response-time bounds (tasks bounded within D, above C)", fontsize=10)
    fig.tight_layout()
    rtsched.plots.save(fig, path, formats=("png",))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=50, help="sets per point in the sweep (default 50)")
    ap.add_argument("--tight-sets", type=int, default=20, help="sets per point for tightness (default 20)")
    ap.add_argument("--img", default=str(ROOT / "docs/img"))
    ap.add_argument("--table", default=str(ROOT / "out/global-tests.parquet"), help="the sweep's table (resumed)")
    args = ap.parse_args()
    spec = yaml.safe_load(SPEC.read_text())
    spec["seeds"] = args.seeds
    spec.pop("output")
    img = Path(args.img)
    Path(args.table).parent.mkdir(parents=True, exist_ok=True)
    df = rtsched.sweep(spec, output=args.table, progress=True)
    rtsched.plots.save(rtsched.plots.schedulability(df, per_cpu=True), img / "global_tests_acceptance.png",
                       formats=("png",))
    rtsched.plots.save(rtsched.plots.weighted_schedulability(df, per_cpu=True), img / "global_tests_weighted.png",
                       formats=("png",))
    w = rtsched.plots.weighted(df)
    ok = df[df["status"] != "not-applicable"]
    accept = (ok.groupby(["generator", "scheduler", "point"])["schedulable"].mean().unstack("point"))
    tight = tightness(spec, args.tight_sets)
    tightness_figure(tight, img / "global_tests_tightness.png", args.tight_sets)
    write_atomic(ROOT / "benchmarks/results/global_tests.json", {
        "seeds": args.seeds, "tight_sets": args.tight_sets,
        "weighted": [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()} for r in w.to_dict("records")],
        "acceptance": {f"{g}/{s}": {f"{p:.1f}": round(float(v), 3) for p, v in row.items()}
                       for (g, s), row in accept.iterrows()},
        "tightness": {lab: {t: {f"{u:.1f}": {k: round(v, 4) for k, v in q.items()} for u, q in per.items()}
                            for t, per in d.items()} for lab, d in tight.items()},
    })
    for r in w.to_dict("records"):
        print(f"W {r['generator']} {r['scheduler']}: {r['W']:.3f} [{r['low']:.3f}, {r['high']:.3f}]")
    for lab, d in tight.items():
        for t, per in d.items():
            print(f"tightness {lab} {t}: " + ", ".join(f"U/m={u:.1f} median {q['median']:.2f} p90 {q['p90']:.2f} "
                                                        f"min {q['min']:.2f} (n={q['n']})" for u, q in per.items()))
    print(f"wrote {img}/global_tests_{{acceptance,weighted,tightness}}.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
