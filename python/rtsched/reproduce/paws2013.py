"""PAWS (J. C. Fonseca, L. Nogueira, C. Maia, L. M. Pinho) §5: PAWS against global EDF, the
federated and sequential baselines and SCHED_DEADLINE — in the simulator, on this machine's real
cores, and on more cores than the paper had.

The paper runs 20 random task sets per utilisation window on 2 cores under SCHED_DEADLINE (a
global EDF) and under PAWS, and reports (Table 1) how many task sets missed a deadline:
SCHED_DEADLINE 0, 0, 4, 3 in the windows 28-30%, 58-60%, 78-80%, 83-85%; PAWS 0 in all. It
explains SCHED_DEADLINE's misses by the GFB bound U ≤ m − u_max(m − 1) (= 1.6 for m = 2,
u_max = 0.4), and shows (Figs 2 and 3, no numbers in the text) fewer migrations and context
switches under PAWS.

Here: the same task sets (generator ``paws2013``, windows read as fractions of m — see
docs/generators.md): each task with n_i > 1 threads is a fork-join job — sequential, n_i
parallel threads, sequential (PAWS §5's workload). Schedulers: ``paws`` (Rules A-F,
docs/papers/paws.md); ``gedf``, global EDF on threads (every thread an entity with its job's
deadline: what SCHED_DEADLINE does with the threads of a parallel task); ``gedf-dist``,
SCHED_DEADLINE's own mechanism (per-CPU run queues with push/pull, a woken job on the CPU its
task last ran on — what §5 blames for SCHED_DEADLINE's context switches), with ``gedf``'s
schedule; ``federated`` (Li et al., ECRTS 2014), the baseline parallel real-time papers use
today, which the PAWS paper does not; and ``gedf-seq``, global EDF with each region's threads
run one after another (an unparallelised application). In the simulator WCET = execution time
and there are no overheads; migrations and context switches are decision-level counts.
"""

from __future__ import annotations

from pathlib import Path

from . import register
from ._common import run_sweep
from .report import Report, fmt_pct

WINDOWS = {1: "28-30%", 2: "58-60%", 3: "78-80%", 4: "83-85%"}
PAPER_DEADLINE_MISSES = {1: 0, 2: 0, 3: 4, 4: 3}  # Table 1, SCHED_DEADLINE row (task sets of 20)
PAPER_PAWS_MISSES = {1: 0, 2: 0, 3: 0, 4: 0}  # Table 1, SCHED_PAWS row

#: Baselines PAWS is compared against, with what each stands for.
BASELINES = {
    "gedf": "global EDF on threads",
    "gedf-dist": "SCHED_DEADLINE's push/pull model",
    "federated": "Li et al., ECRTS 2014",
    "gedf-seq": "global EDF, regions sequential",
}
SCHEDULERS = ["paws", *BASELINES]
#: The paper's future work: more cores, in the simulator.
SCALE_M = [4, 8, 16, 64]
#: Real cores: PAWS and global EDF deciding on rtsched's testbed, and the kernel's own classes.
REAL_BACKENDS = ["testbed:paws", "testbed:gedf", "kernel:deadline", "kernel:fifo"]
METRICS = [("migrations", "Fig. 2"), ("context_switches", "Fig. 3")]


def _sim(df, m):
    """Per window and scheduler: the aggregates the report cites."""
    out = {}
    for (w, s), g in df.groupby(["point", "scheduler"]):
        ok = g[g["status"] == "ok"]
        out[(int(w), s)] = {
            "sets": len(g), "ran": len(ok), "refused": int((g["status"] != "ok").sum()),
            "missed_sets": int((ok["missed"] > 0).sum()), "migrations": ok["migrations"].mean(),
            "context_switches": ok["context_switches"].mean(), "jobs": ok["jobs"].mean(),
            "steals": _col(ok, "steals"), "failed_steals": _col(ok, "failed_steals"),
            "steal_attempts": _col(ok, "steal_attempts"), "priority_inversions": _col(ok, "priority_inversions"),
            "priority_inversion_ns": _col(ok, "priority_inversion_ns"), "mean_response_ns": ok["mean_response_ns"].mean(),
            "min_dsr": ok["dsr"].min() if len(ok) else float("nan"), "U": g["U"].mean(), "n": g["n"].mean(), "m": m,
        }
    return out


def _col(g, c):
    return g[c].mean() if c in g.columns and len(g) else float("nan")


def _verdict(k, n):
    return "holds" if k == n else ("partly" if k else "does not hold")


def _spec(name, m, sets, duration, schedulers):
    return {"name": name, "seed": 2013, "generator": {"name": "paws2013", "params": {"m": m}},
            "utilisation": {"param": "window", "points": [1, 2, 3, 4]}, "schedulers": schedulers,
            "seeds": sets, "duration": duration}


def _against_baselines(agg, m):
    """Rows: for each baseline, whether PAWS has fewer migrations, fewer context switches and no
    more sets with a miss, window by window."""
    rows = []
    for b, what in BASELINES.items():
        cells, checks = [], []
        for metric in ("migrations", "context_switches"):
            per = [(w, agg.get((w, "paws"), {}).get(metric), agg.get((w, b), {}).get(metric)) for w in WINDOWS]
            per = [(w, p, q) for w, p, q in per if p == p and q == q and p is not None and q is not None]
            k = sum(p < q for _, p, q in per)
            cells.append("; ".join(f"{p:.0f} vs {q:.0f}" for _, p, q in per) or "n/a")
            checks.append((k, len(per)))
        per = [(agg.get((w, "paws"), {}).get("missed_sets", 0), agg.get((w, b), {}).get("missed_sets", 0),
                agg.get((w, b), {}).get("ran", 0)) for w in WINDOWS]
        k = sum(p <= q for p, q, ran in per if ran)
        n = sum(1 for _, _, ran in per if ran)
        cells.append("; ".join(f"{p} vs {q}" for p, q, _ in per))
        checks.append((k, n))
        resp = [(agg.get((w, "paws"), {}).get("mean_response_ns"), agg.get((w, b), {}).get("mean_response_ns")) for w in WINDOWS]
        cells.append("; ".join(f"{p / 1e6:.1f} vs {q / 1e6:.1f}" for p, q in resp if p == p and q == q and p is not None and q is not None))
        refused = sum(agg.get((w, b), {}).get("refused", 0) for w in WINDOWS)
        verdict = ", ".join(f"{lbl} {_verdict(k, n)} ({k}/{n})" for lbl, (k, n) in
                            zip(("fewer migrations", "fewer context switches", "no more misses"), checks))
        if refused:
            verdict += f"; {refused} sets refused by {b}"
        rows.append([m, f"{b} ({what})", *cells, verdict])
    return rows


def _real_setup(quick):
    """Sets per window, backends and each run's length of the m = 2 real runs."""
    return (1, ["testbed:paws", "kernel:deadline"], 0.5) if quick else (20, REAL_BACKENDS, 2.0)


def real_plan(quick: bool):
    from ._real import RealPart

    per, backends, secs = _real_setup(quick)
    return [RealPart(f"m = 2 task sets of the paper's generator, {per} per utilisation window ({', '.join(WINDOWS.values())})",
                     tuple(backends), runs=per * len(WINDOWS), seconds=secs, cpus=2)]


@register("paws2013", real_plan=real_plan, paper="J. C. Fonseca, L. Nogueira, C. Maia, L. M. Pinho, Real-Time Scheduling of Parallel Tasks in the Linux Kernel (PAWS) — §5, Table 1, Figs 2-3",
          description="PAWS vs global EDF, federated, sequential and SCHED_DEADLINE: misses, migrations, context switches, steals (m = 2 simulated and on real cores; m = 4-64 simulated)")
def run(out_dir, quick, executor, real=False):
    import rtsched
    from rtsched import plots

    from ._real import can_run_real, not_run, run_real_sets

    out_dir = Path(out_dir)
    sets = 3 if quick else 20  # per window for m >= 4 (m = 2 always has the paper's 20)
    df = run_sweep(_spec("paws2013", 2, 20, "3s" if quick else "60s", SCHEDULERS), out_dir, executor, quick)
    # GFB verdict of each task set (regenerated from its seed: the same set).
    gfb = {}
    for (w, seed) in df[["point", "taskset_seed"]].drop_duplicates().itertuples(index=False):
        # parallel=0: the same C_i and T_i without regions (GFB has no parallel model).
        g = rtsched.generate("paws2013", seed=int(seed), m=2, window=int(w), parallel=0)
        verdict = next(a["schedulable"] for a in rtsched.analyze(g.taskset) if a["test"] == "gedf-gfb")
        gfb[(w, seed)] = verdict is True
    df["gfb"] = [gfb[(w, s)] for w, s in zip(df["point"], df["taskset_seed"])]
    agg2 = _sim(df, 2)

    scale = {}
    for m in SCALE_M:
        d = run_sweep(_spec(f"paws2013-m{m}", m, sets, "1s" if quick else "10s", SCHEDULERS), out_dir, executor, quick,
                      table=f"sweep-m{m}")
        scale[m] = (d, _sim(d, m))

    # Real cores, only when asked: the m = 2 sets, one after another (full: all 20 per window
    # for 2 s; quick: one).
    real_ok, why_not = can_run_real() if real else (False, not_run("paws2013", quick))
    asked, real = real, None
    if real_ok:
        per, backends, secs = _real_setup(quick)
        units = []
        for (w, seed) in sorted(df[["point", "taskset_seed"]].drop_duplicates().itertuples(index=False)):
            if sum(u[0]["window"] == int(w) for u in units) >= per:
                continue
            ts = rtsched.generate("paws2013", seed=int(seed), m=2, window=int(w)).taskset
            units.append(({"window": int(w), "taskset_seed": int(seed)}, ts))
        real = run_real_sets(units, backends, "500ms" if quick else "2s", out_dir / ("real-quick.csv" if quick else "real.csv"))

    rep = Report("paws2013", "PAWS 2013 — PAWS vs global EDF, federated, sequential and SCHED_DEADLINE", run.paper, quick, asked)
    rep.para(__doc__.split("\n\n", 1)[1])

    # ---- The paper's claims ----
    rep.heading("The paper's claims beside rtsched's numbers")
    rows = []
    for w, label in WINDOWS.items():
        for sched, paper, who in (("gedf", PAPER_DEADLINE_MISSES, "SCHED_DEADLINE"), ("paws", PAPER_PAWS_MISSES, "PAWS")):
            a = agg2[(w, sched)]
            note = "holds" if a["missed_sets"] == paper[w] else "does not hold"
            if sched == "gedf" and a["missed_sets"] != paper[w]:
                gw = df[(df["scheduler"] == "gedf") & (df["point"] == w)]
                note += (f": the simulator has no overheads or tick (U {gw['U'].min():.3f}-{gw['U'].max():.3f}; "
                         f"GFB passes {int(gw['gfb'].sum())} of {len(gw)})")
            rows.append([f"{label}: task sets with a miss, {who} (simulated)", str(paper[w]), f"{a['missed_sets']} of {a['ran']} ({sched})", note])
    if real is not None:
        for w, label in WINDOWS.items():
            for backend, paper, who in (("kernel:deadline", PAPER_DEADLINE_MISSES, "SCHED_DEADLINE"), ("testbed:paws", PAPER_PAWS_MISSES, "PAWS")):
                g = real[(real["window"] == w) & (real["backend"] == backend)]
                ok = g[g["status"] == "ok"]
                if not len(g):
                    continue
                k = int((ok["missed"] > 0).sum())
                refused = len(g) - len(ok)
                if not len(ok):
                    note = "not run"
                elif len(ok) < 20:
                    note = f"not comparable: {len(ok)} sets run, the paper ran 20"
                else:
                    note = "holds" if k == paper[w] else "does not hold"
                if refused:
                    note += f"; {refused} of {len(g)} sets refused by the kernel's admission control"
                if k and ok["host_steal_ms"].max() > 0:
                    note += f"; host steal up to {ok['host_steal_ms'].max():.0f} ms per run"
                rows.append([f"{label}: task sets with a miss, {who} (real cores, {backend})", str(paper[w]), f"{k} of {len(ok)} run", note])
    for metric, fig in METRICS:
        per = [(w, agg2[(w, "paws")][metric], agg2[(w, "gedf-dist")][metric]) for w in WINDOWS]
        k = sum(a < b for _, a, b in per)
        rows.append([f"{fig}: mean {metric.replace('_', ' ')} per task set, PAWS below SCHED_DEADLINE in every window (simulated)",
                     "PAWS lower in all four", "paws vs gedf-dist: " + "; ".join(f"{WINDOWS[w]}: {a:.0f} vs {b:.0f}" for w, a, b in per),
                     f"{_verdict(k, len(per))} ({k} of {len(per)} windows; decision-level counts, no kernel noise)"])
        if real is not None:
            ok = real[real["status"] == "ok"]
            per = []
            for w in WINDOWS:
                a = ok[(ok["window"] == w) & (ok["backend"] == "testbed:paws")][metric]
                b = ok[(ok["window"] == w) & (ok["backend"] == "kernel:deadline")][metric]
                if len(a) and len(b):
                    per.append((w, a.mean(), b.mean()))
            if per:
                k = sum(a < b for _, a, b in per)
                rows.append([f"{fig}: mean {metric.replace('_', ' ')} per task set, PAWS below SCHED_DEADLINE (real cores)",
                             "PAWS lower in all four", "testbed:paws vs kernel:deadline: " + "; ".join(f"{WINDOWS[w]}: {a:.0f} vs {b:.0f}" for w, a, b in per),
                             f"{_verdict(k, len(per))} ({k} of {len(per)} windows with both run; testbed counts are the "
                             "ledger's, kernel counts the kernel's: see docs/real-runs.md)"])
    rep.comparison(rows, headers=("quantity", "paper", "rtsched", "holds?"))

    # ---- PAWS against each baseline, every m ----
    rep.heading("PAWS against each baseline (simulated), m = 2 and the paper's future work m = 4-64")
    rep.para("Per window (28-30%, 58-60%, 78-80%, 83-85% of m), PAWS's mean per task set against the baseline's, "
             f"over 20 sets (m = 2, {'3' if quick else '60'} s each) or {sets} sets (m ≥ 4, {'1' if quick else '10'} s each). "
             "Sets with a miss: PAWS's count vs the baseline's.")
    brows = _against_baselines(agg2, 2)
    for m in SCALE_M:
        brows += _against_baselines(scale[m][1], m)
    rep.table(["m", "baseline", "migrations PAWS vs baseline", "context switches PAWS vs baseline",
               "sets with a miss PAWS vs baseline", "mean response ms PAWS vs baseline", "verdict"], brows)

    # ---- m = 2 in detail ----
    rep.heading("m = 2 per window and scheduler (simulated)")
    trows = []
    for w, label in WINDOWS.items():
        for s in SCHEDULERS:
            a = agg2[(w, s)]
            g = df[(df["scheduler"] == s) & (df["point"] == w)]
            trows.append([label, s, a["ran"], a["refused"], f"{a['n']:.1f}", f"{a['U']:.3f}", fmt_pct(g["gfb"].mean()),
                          a["missed_sets"], f"{a['min_dsr']:.4f}", f"{a['mean_response_ns'] / 1e6:.2f}", f"{a['migrations']:.0f}",
                          f"{a['context_switches']:.0f}", _n(a["steals"]), _n(a["failed_steals"]), _n(a["priority_inversions"]),
                          _n(a["priority_inversion_ns"] / 1e6, 1)])
    rep.table(["window", "scheduler", "sets run", "refused", "mean n", "mean U", "GFB passes", "sets with a miss", "min DSR",
               "mean response ms", "mean migrations", "mean context switches", "mean steals", "mean failed steals",
               "mean priority inversions", "mean inversion ms"], trows)
    rep.para("A set that passes GFB cannot miss under global EDF (a sufficient test); a set that fails it may still "
             "meet every deadline. Every paws2013 task has u ≤ 0.4 < 1, so C ≤ D: federated scheduling finds no heavy "
             "task and runs every task sequentially under global EDF on all m cores — the same schedule as gedf-seq "
             "(check the two rows). Priority inversions follow docs/semantics.md: a CPU runs an entity while a strictly "
             "earlier-deadline ready entity runs nowhere; PAWS's local queues have them by design (the paper's "
             "\"controlled priority inversion\"), global EDF on threads has none.")

    # ---- Real cores ----
    rep.heading("m = 2 on this machine's real cores")
    if real is None:
        rep.para(f"Not run: {why_not}.")
    else:
        rrows = []
        for w, label in WINDOWS.items():
            for b in REAL_BACKENDS:
                g = real[(real["window"] == w) & (real["backend"] == b)]
                if not len(g):
                    continue
                ok = g[g["status"] == "ok"]
                f = lambda c, s=1.0, p=0: _n(ok[c].mean() * s, p) if len(ok) else "n/a"  # noqa: E731
                rrows.append([label, b, len(ok), len(g) - len(ok), int((ok["missed"] > 0).sum()) if len(ok) else "n/a",
                              f("mean_response_ns", 1e-6, 2), f("migrations"), f("context_switches"), f("steals"),
                              f("priority_inversions"), f"{ok['host_steal_ms'].max():.0f}" if len(ok) else "n/a"])
        rep.table(["window", "backend", "sets run", "refused", "sets with a miss", "mean response ms", "mean migrations",
                   "mean context switches", "mean steals", "mean priority inversions", "max host steal ms"], rrows)
        refusals = real[real["status"] != "ok"]["error"].drop_duplicates().head(2).tolist()
        rep.para(f"Each set ran {'500 ms' if quick else '2 s'} per backend (WCET busy loops; real overheads, timer resolution "
                 "and host steal included). kernel:deadline gives each lane of a parallel task its own reservation "
                 "(runtime = the lane's WCETs + an allowance), so its admitted bandwidth exceeds ΣC/T; sets above the "
                 "kernel's deadline bandwidth (95% of each CPU, less the 5% Linux 6.12+ reserves for each CPU's fair "
                 "server) are refused, never run halfway. The paper disabled "
                 "SCHED_DEADLINE's bandwidth management; a run refused here is one the paper's kernel would have run."
                 + (" First refusal messages: " + " / ".join(f"`{e}`" for e in refusals) if refusals else ""))

    # ---- Figures ----
    figs = []
    fig = plots.schedulability(df, title="task sets without a miss (m = 2)")
    plots.save(fig, out_dir / "schedulability")
    figs.append(("schedulability", "Fraction of task sets with no deadline miss per window, m = 2 (95% Wilson intervals)"))
    plots.save(plots.migrations(df), out_dir / "migrations")
    figs.append(("migrations", "Migrations per task set, m = 2 (mean ± 95% CI) — the paper's Fig. 2"))
    plots.save(plots.metric_vs_utilisation(df, "context_switches", ylabel="context switches per task set",
                                           title="context switches vs window (m = 2)"), out_dir / "context_switches")
    figs.append(("context_switches", "Context switches per task set, m = 2 (mean ± 95% CI) — the paper's Fig. 3"))
    plots.save(_scaling_figure(agg2, {m: a for m, (_, a) in scale.items()}), out_dir / "scaling")
    figs.append(("scaling", "Migrations and context switches per job against m (window 83-85%, log scales)"))
    if real is not None and (real["status"] == "ok").any():
        plots.save(_real_figure(real), out_dir / "real")
        figs.append(("real", "Real cores, m = 2: migrations and context switches per task set per backend (mean ± 95% CI)"))
    rep.heading("Figures")
    for f, cap in figs:
        rep.figure(out_dir / f"{f}.png", cap, out_dir)
    rep.not_reproduced([
        "The paper's Linux 2.6.36 kernel with SCHED_RTWS: PAWS runs here as an rtsched policy on the testbed "
        "(one pinned SCHED_FIFO worker per core executes what the policy decides), not as a kernel class; the "
        "kernel driver (sched_ext) is a later issue.",
        "Figures 2 and 3 report no numbers in the text; the verdicts compare directions. Simulated counts are "
        "decisions, kernel counts are the kernel's own (docs/real-runs.md).",
    ])
    return rep.write(out_dir / "report.md")


def _n(x, p=0):
    return "n/a" if x != x else f"{x:.{p}f}"


def _scaling_figure(agg2, aggs):
    from rtsched import plots

    plt = plots._plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    ms = [2, *sorted(aggs)]
    for ax, metric in zip(axes, ("migrations", "context_switches")):
        for s in SCHEDULERS:
            ys = []
            for m in ms:
                a = (agg2 if m == 2 else aggs[m]).get((4, s))
                ys.append(a[metric] / a["jobs"] if a and a["jobs"] else float("nan"))
            ax.plot(ms, ys, marker="o", label=s)
        ax.set_xscale("log", base=2)
        ax.set_yscale("symlog", linthresh=0.01)
        ax.set_xticks(ms, [str(m) for m in ms])
        ax.set_xlabel("cores m")
        ax.set_ylabel(f"{metric.replace('_', ' ')} per job")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("PAWS and baselines against m (window 83-85%)")
    fig.tight_layout()
    return fig


def _real_figure(real):
    from rtsched import plots

    plt = plots._plt()
    ok = real[real["status"] == "ok"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    backends = [b for b in REAL_BACKENDS if (ok["backend"] == b).any()]
    for ax, metric in zip(axes, ("migrations", "context_switches")):
        for i, b in enumerate(backends):
            xs, ys, es = [], [], []
            for w in WINDOWS:
                mean, h, n = plots.mean_ci(ok[(ok["window"] == w) & (ok["backend"] == b)][metric].astype("float64"))
                if n:
                    xs.append(w + (i - (len(backends) - 1) / 2) * 0.08)
                    ys.append(mean)
                    es.append(h)
            ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=b)
        ax.set_xticks(list(WINDOWS), list(WINDOWS.values()))
        ax.set_xlabel("utilisation window")
        ax.set_ylabel(f"{metric.replace('_', ' ')} per task set")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig
