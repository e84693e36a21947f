"""PAWS (Nogueira & Pinho, 2013) §5, the baseline part: global EDF against the GFB bound.

The paper runs 20 random task sets per utilisation window on 2 cores under SCHED_DEADLINE
(a global EDF) and under PAWS, and reports (Table 1) how many task sets missed a deadline:
SCHED_DEADLINE 0, 0, 4, 3 in the windows 28-30%, 58-60%, 78-80%, 83-85%; PAWS 0 in all. It
explains SCHED_DEADLINE's misses by the GFB bound U ≤ m − u_max(m − 1) (= 1.6 for m = 2,
u_max = 0.4). Figures 2 and 3 (migrations, context switches) give no numbers in the text.

Here: the same task sets (generator ``paws2013``, windows read as fractions of m — see
docs/generators.md), simulated under ``gedf`` (the policy SCHED_DEADLINE approximates without
its bandwidth management, which the paper disabled), with WCET = execution time. Each task
with n_i > 1 threads is a fork-join job — sequential, n_i parallel threads, sequential (PAWS §5's
workload) — whose threads global EDF schedules as separate entities with the job's deadline.
Each set is also checked against GFB with every task read as sequential (C_i, T_i), as the paper
does. PAWS itself (per-core deques, priority-aware stealing) is planned.
"""

from __future__ import annotations

from pathlib import Path

from . import register
from ._common import run_sweep
from .report import Report, fmt_pct

WINDOWS = {1: "28-30%", 2: "58-60%", 3: "78-80%", 4: "83-85%"}
PAPER_DEADLINE_MISSES = {1: 0, 2: 0, 3: 4, 4: 3}  # Table 1, SCHED_DEADLINE row (task sets of 20)
PAPER_PAWS_MISSES = {1: 0, 2: 0, 3: 0, 4: 0}  # Table 1, SCHED_PAWS row


@register("paws2013", paper="L. Nogueira, L. M. Pinho, Priority-aware work-stealing (PAWS), 2013 — §5, Table 1",
          description="global EDF deadline misses vs the GFB bound in PAWS's four utilisation windows (PAWS itself: planned)")
def run(out_dir, quick, executor):
    import rtsched
    from rtsched import plots

    out_dir = Path(out_dir)
    sets = 20  # the paper's count per window
    spec = {
        "name": "paws2013",
        "seed": 2013,
        "generator": {"name": "paws2013", "params": {"m": 2}},
        "utilisation": {"param": "window", "points": [1, 2, 3, 4]},
        "schedulers": ["gedf"] if quick else ["gedf", "gfp:rm"],
        "seeds": sets,
        "duration": "3s" if quick else "60s",
    }
    df = run_sweep(spec, out_dir, executor, quick)
    # GFB verdict of each task set (regenerated from its seed: the same set).
    gfb = {}
    for (w, seed) in df[["point", "taskset_seed"]].drop_duplicates().itertuples(index=False):
        # parallel=0: the same C_i and T_i without regions (GFB has no parallel model).
        g = rtsched.generate("paws2013", seed=int(seed), m=2, window=int(w), parallel=0)
        verdict = next(a["schedulable"] for a in rtsched.analyze(g.taskset) if a["test"] == "gedf-gfb")
        gfb[(w, seed)] = verdict is True
    df["gfb"] = [gfb[(w, s)] for w, s in zip(df["point"], df["taskset_seed"])]
    ge = df[df["scheduler"] == "gedf"]

    rep = Report("paws2013", "PAWS 2013 — global EDF baseline vs the GFB bound", run.paper, quick)
    rep.para(__doc__.split("\n\n", 1)[1])
    rep.heading("Task sets that missed a deadline (of 20 per window)")
    rows = []
    for w, label in WINDOWS.items():
        g = ge[ge["point"] == w]
        missed = int((g["missed"] > 0).sum())
        rows.append([f"{label}: task sets with a miss, global EDF", f"{PAPER_DEADLINE_MISSES[w]} (SCHED_DEADLINE)",
                     f"{missed} of {len(g)} (gedf)",
                     f"U {g['U'].min():.3f}-{g['U'].max():.3f}; GFB passes {int(g['gfb'].sum())} of {len(g)}"])
    for w, label in WINDOWS.items():
        rows.append([f"{label}: task sets with a miss, PAWS", str(PAPER_PAWS_MISSES[w]), "not reproduced yet", "PAWS is planned"])
    rep.comparison(rows)
    rep.heading("Per window")
    trows = []
    for w, label in WINDOWS.items():
        g = ge[ge["point"] == w]
        trows.append([label, len(g), f"{g['n'].mean():.1f}", f"{g['U'].mean():.3f}", fmt_pct(g["gfb"].mean()),
                      int((g["missed"] > 0).sum()), f"{g['dsr'].min():.4f}", f"{g['migrations'].mean():.0f}",
                      f"{g['context_switches'].mean():.0f}"])
    rep.table(["window", "sets", "mean n", "mean U", "GFB passes", "sets with a miss", "min DSR",
               "mean migrations", "mean context switches"], trows)
    rep.para("A set that passes GFB cannot miss under global EDF (a sufficient test); a set that fails it may still "
             "meet every deadline. In the simulator the execution time is the WCET and there are no overheads, so "
             "misses come from the schedule alone; on the paper's Linux 2.6.36 machine overheads and timer "
             "resolution (HZ = 1000) add to them, which is one reason to expect more misses there.")
    figs = []
    fig = plots.schedulability(df, title="task sets without a miss (global EDF)")
    figs.append(("schedulability", "Fraction of task sets with no deadline miss per window (95% Wilson intervals)"))
    plots.save(fig, out_dir / "schedulability")
    plots.save(plots.migrations(df), out_dir / "migrations")
    figs.append(("migrations", "Migrations per task set (mean ± 95% CI) — the paper's Fig. 2 measures these for SCHED_DEADLINE and PAWS"))
    plots.save(plots.metric_vs_utilisation(df, "context_switches", ylabel="context switches per task set",
                                           title="context switches vs window"), out_dir / "context_switches")
    figs.append(("context_switches", "Context switches per task set (mean ± 95% CI) — the paper's Fig. 3"))
    rep.heading("Figures")
    for f, cap in figs:
        rep.figure(out_dir / f"{f}.png", cap, out_dir)
    rep.not_reproduced([
        "PAWS (SCHED_PAWS): per-core work-stealing deques and priority-aware stealing (Rules B-F) are not "
        "implemented yet; the parallel threads here are scheduled by plain global EDF.",
        "Figures 2 and 3 (average migrations and context switches of SCHED_DEADLINE vs PAWS on Linux) report no "
        "numbers in the text; rtsched's simulated counts are shown above for global EDF only, and they count "
        "simulator events, not kernel events.",
        "SCHED_DEADLINE's kernel behaviour (push/pull, last-CPU wake-up placement, overheads): `rtsched run "
        "-b kernel:deadline` can measure it on a real machine; this report uses the simulator only.",
    ])
    return rep.write(out_dir / "report.md")
