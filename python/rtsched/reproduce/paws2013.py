"""PAWS (J. C. Fonseca, L. Nogueira, C. Maia, L. M. Pinho) §5: PAWS against global EDF, the
federated and sequential baselines and SCHED_DEADLINE — in the simulator, on this machine's real
cores, and on more cores than the paper had.

The paper runs 20 random task sets per utilisation window on 2 cores under SCHED_DEADLINE (a
global EDF) and under PAWS, and reports (Table 1) how many task sets missed a deadline:
SCHED_DEADLINE 0, 0, 4, 3 in the windows 28-30%, 58-60%, 78-80%, 83-85%; PAWS 0 in all. It
shows (Figs 2 and 3, no numbers in the text) fewer migrations and context switches under PAWS,
both growing with the load, and concludes (§6) that PAWS's priority inversion "does not
compromise the schedulability goals".

Here: the same task sets (generator ``paws2013``, windows read as fractions of m — see
docs/generators.md): each task with n_i > 1 threads is a fork-join job — sequential, n_i
parallel threads, sequential (PAWS §5's workload). Schedulers: ``paws`` (Rules A-F,
docs/papers/paws.md); ``gedf``, global EDF on threads (every thread an entity with its job's
deadline: what SCHED_DEADLINE does with the threads of a parallel task); ``gedf-dist``,
SCHED_DEADLINE's own mechanism (per-CPU run queues with push/pull, a woken job on the CPU its
task last ran on — what §5 blames for SCHED_DEADLINE's context switches), with ``gedf``'s
schedule; ``federated`` (Li et al., ECRTS 2014), the baseline parallel real-time papers use
today, which the PAWS paper does not; and ``gedf-seq``, global EDF with each region's threads
run one after another (an unparallelised application). The negative controls are PAWS with a
credited mechanism taken away: ``paws:steal=none`` (no work stealing, Rule E off) and
``paws:fork=global`` (forked threads on the global queue as jobs: no locality, Rules B-C off),
and, for the growth claims, the same task sets without parallel regions. In the simulator WCET
= execution time and there are no overheads; migrations are counted twice — as a kernel counts
them (``kernel_migrations``: a stolen thread moved to the thief, a fresh thread first run on
another CPU than the one it was forked or woken on, a job resuming elsewhere) and as an entity
resuming on another CPU (``migrations``) — and context switches are decision-level counts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import claims as C
from . import register
from ._common import run_sweep
from .report import Report, fmt_pct

WINDOWS = {1: "28-30%", 2: "58-60%", 3: "78-80%", 4: "83-85%"}
PAPER_DEADLINE_MISSES = {1: 0, 2: 0, 3: 4, 4: 3}  # Table 1, SCHED_DEADLINE row (task sets of 20)
PAPER_PAWS_MISSES = {1: 0, 2: 0, 3: 0, 4: 0}  # Table 1, SCHED_PAWS row
PAPER_SETS = 20

#: Baselines PAWS is compared against, with what each stands for.
BASELINES = {
    "gedf": "global EDF on threads",
    "gedf-dist": "SCHED_DEADLINE's push/pull model",
    "federated": "Li et al., ECRTS 2014",
    "gedf-seq": "global EDF, regions sequential",
}
SCHEDULERS = ["paws", *BASELINES]
#: PAWS with one credited mechanism taken away (crates/policies/src/paws.rs "Weakened variants").
NO_STEAL = "paws:steal=none"
NO_LOCALITY = "paws:fork=global"
CONTROLS = {NO_STEAL: "PAWS without work stealing (Rule E off)",
            NO_LOCALITY: "PAWS with forked threads on the global queue (no locality: Rules B-C off)"}
#: SCHED_DEADLINE in the claims: its mechanism (push/pull) and its schedule (global EDF on threads).
SD, GEDF = "gedf-dist", "gedf"
#: The paper's future work: more cores, in the simulator.
SCALE_M = [4, 8, 16, 64]
#: Real cores: PAWS and global EDF deciding on rtsched's testbed, and the kernel's own classes.
REAL_BACKENDS = ["testbed:paws", "testbed:gedf", "kernel:deadline", "kernel:fifo"]


# --- metrics ----------------------------------------------------------------------------------

def worst_response(ts, scheduler) -> float:
    """The set's worst normalised response: the largest response / relative deadline of its
    counted jobs (a job still running at the end counts to the end); above 1 is a miss."""
    from rtsched import _core

    r = _core.simulate(ts, scheduler, False)
    c = r.jobs_columns()
    rel = np.asarray(c["release_ns"], float)
    dl = np.asarray(c["deadline_ns"], float)
    fin = np.array([r.end_ns if f is None else f for f in c["finish_ns"]], float)
    return float(np.max((fin - rel) / (dl - rel))) if len(rel) else float("nan")


def _margins(df, duration_ns, schedulers):
    """Per (window, set seed, scheduler): the worst normalised response (simulated again here,
    in-process: a sweep row keeps no per-job records)."""
    import rtsched

    out = {}
    for w, seed in sorted(df[["point", "taskset_seed"]].drop_duplicates().itertuples(index=False)):
        ts = rtsched.generate("paws2013", seed=int(seed), m=2, window=int(w)).taskset.with_run(duration_ns=int(duration_ns), seed=int(seed))
        for s in schedulers:
            out[(int(w), int(seed), s)] = worst_response(ts, s)
    return out


class _Paired:
    """Per set run by both schedulers: a metric under each, in one order (set seed); the sets x
    schedulers table of each metric built once."""

    def __init__(self, df):
        self.ok, self.tables = df[df["status"] == "ok"], {}

    def __call__(self, w, a, b, metric):
        if metric not in self.tables:
            self.tables[metric] = self.ok.pivot_table(index=["point", "taskset_seed"], columns="scheduler", values=metric,
                                                      aggfunc="first")
        t = self.tables[metric]
        if w not in t.index.get_level_values(0) or a not in t or b not in t:
            return np.array([]), np.array([])
        both = t.loc[w][list(dict.fromkeys([a, b]))].dropna().sort_index()
        return both[a].to_numpy(float), both[b].to_numpy(float)


def _misses(df, w, s):
    g = df[(df["point"] == w) & (df["scheduler"] == s)]
    ok = g[g["status"] == "ok"]
    return int((ok["missed"] > 0).sum()), len(ok)


def _slope(df, s, metric):
    ok = df[(df["status"] == "ok") & (df["scheduler"] == s)].sort_values(["point", "taskset_seed"])
    return C.loglog_slope(ok["U"].to_numpy(float), ok[metric].to_numpy(float))



def _same_runs(df, a, b) -> str:
    """On how many task sets schedulers ``a`` and ``b`` gave the same run (jobs, misses, worst
    response, context switches, migrations), from the rows, not asserted."""
    cols = ["jobs", "missed", "max_response_ns", "context_switches", "migrations"]
    ok = df[df["status"] == "ok"]
    x = ok[ok["scheduler"] == a].set_index(["point", "taskset_seed"])[cols]
    y = ok[ok["scheduler"] == b].set_index(["point", "taskset_seed"])[cols]
    both = x.index.intersection(y.index)
    same = int((x.loc[both] == y.loc[both]).all(axis=1).sum())
    return f"the two gave the same jobs, misses, worst response, context switches and migrations on {same} of {len(both)} sets run by both"

def claims(df, seq, margins):
    """§5's claims (Table 1, Figs 2-3) and §6's on schedulability, each with its control.
    ``df``: the m = 2 sweep (paws, baselines, controls); ``seq``: the same sets without parallel
    regions; ``margins``: :func:`_margins`."""
    out = []
    paired = _Paired(df)
    windows = sorted(int(w) for w in df["point"].unique())
    hi_windows = [w for w in windows if PAPER_DEADLINE_MISSES[w] > 0]

    def prop(w, s):
        return C.proportion(*_misses(df, w, s))

    def margin_of(w, s):
        """The worst response per deadline of scheduler ``s`` in window ``w``, set by set."""
        return [margins[(w, x, s)] for x in sorted({k[1] for k in margins if k[0] == w})]

    # Table 1, PAWS's row.
    c = C.Claim("T1-paws", "§5, Table 1 (SCHED_PAWS row); §6",
                "SCHED_PAWS 0 0 0 0 … our scheduling algorithm proved to be very robust as we did not get any deadline miss",
                "task sets with a deadline miss per window (proportion of the sets run, Wilson)",
                C.Contains(0.0, "0 in each window: 0 lies in the 95% interval"), control_variant=CONTROLS[NO_STEAL])
    c.ours = c.measure_parts([(WINDOWS[w], prop(w, "paws")) for w in windows])
    c.control = c.measure_parts([(WINDOWS[w], prop(w, NO_STEAL)) for w in windows])
    out.append(c)

    # Table 1, SCHED_DEADLINE's row: the paper's count per window.
    rules = tuple(C.Contains(PAPER_DEADLINE_MISSES[w] / PAPER_SETS) for w in windows)
    c = C.Claim("T1-sched-deadline", "§5, Table 1 (SCHED_DEADLINE row)", "SCHED_DEADLINE 0 0 4 3",
                "task sets with a deadline miss per window under gedf-dist (proportion, Wilson)",
                C.PerPart("the paper's count of 20 (0, 0, 0.2, 0.15) lies in the 95% interval, window by window"),
                control_variant="global EDF on threads (gedf: the same schedule without SCHED_DEADLINE's push/pull placement)")
    c.ours = c.measure_parts([(WINDOWS[w], prop(w, SD), r) for w, r in zip(windows, rules)])
    c.control = c.measure_parts([(WINDOWS[w], prop(w, GEDF), r) for w, r in zip(windows, rules)])
    out.append(c)

    # Table 1 as a comparison, made able to fail: the worst response per deadline, paired.
    def margin_diff(w, a, b):
        return C.mean_difference(margin_of(w, a), margin_of(w, b))

    c = C.Claim("T1-margin", "§5, Table 1 (78-80%, 83-85%)",
                "Table 1 shows the number of deadline misses … so that we can understand if an increase in overheads is "
                "justified by a gain in schedulability [SCHED_PAWS 0, 0; SCHED_DEADLINE 4, 3]",
                "per set, the worst job's response / relative deadline (> 1: a miss), PAWS − SCHED_DEADLINE (gedf-dist), "
                "mean paired difference", C.Below(0.0, "a gain in schedulability: PAWS's worst response per deadline below SCHED_DEADLINE's"),
                control_variant=CONTROLS[NO_STEAL])
    c.ours = c.measure_parts([(WINDOWS[w], margin_diff(w, "paws", SD)) for w in hi_windows])
    c.control = c.measure_parts([(WINDOWS[w], margin_diff(w, NO_STEAL, SD)) for w in hi_windows])
    out.append(c)

    # §6: the priority inversion does not compromise schedulability.
    def margin(w, s):
        return C.mean(margin_of(w, s))

    c = C.Claim("S6-inversion", "§6 (on §5's experiments)",
                "some priority inversion, on the randomized work-stealing algorithm, does not compromise the schedulability goals",
                "per set, the worst job's response / relative deadline under PAWS (mean over the sets, bootstrap)",
                C.Below(1.0, "does not compromise: below 1 (every deadline met)"), control_variant=CONTROLS[NO_STEAL])
    c.ours = c.measure_parts([(WINDOWS[w], margin(w, "paws")) for w in windows])
    c.control = c.measure_parts([(WINDOWS[w], margin(w, NO_STEAL)) for w in windows])
    ok = df[(df["status"] == "ok") & (df["scheduler"] == "paws")]
    if len(ok):
        c.notes.append(f"PAWS's inversion per job, over the sets: {ok['inverted_jobs'].sum() / max(ok['jobs'].sum(), 1):.1%} of the "
                       f"jobs are victims; the longest {ok['inversion_job_max_ns'].max() / 1e6:.1f} ms, the largest per-set p99 "
                       f"{ok['inversion_job_p99_ns'].max() / 1e6:.1f} ms")
    out.append(c)

    # Figs 2 and 3: fewer migrations and context switches, against SCHED_DEADLINE's mechanism and schedule.
    def fewer(metric, s):
        return [(f"{WINDOWS[w]} vs {b}", C.ratio_of_means(*paired(w, s, b, metric))) for b in (SD, GEDF) for w in windows]

    for cid, metric, fig, quote, what in (
        ("F2-kernel", "kernel_migrations", "§5, Fig. 2",
         "no matter the considered workload rate, SCHED_PAWS outperforms SCHED_DEADLINE. This is easily explained by our decision "
         "to favour data locality, generating parallelism only when strictly required",
         "migrations as the kernel counts them (set_task_cpu: steals, fresh threads first run elsewhere, resumptions elsewhere)"),
        ("F2-entity", "migrations", "§5, Fig. 2 (rtsched's definition)",
         "no matter the considered workload rate, SCHED_PAWS outperforms SCHED_DEADLINE",
         "migrations as rtsched defines them (an entity resuming on another CPU than it last ran on)"),
        ("F3", "context_switches", "§5, Fig. 3",
         "SCHED_PAWS also outperforms SCHED_DEADLINE in every experiments … preemption is minimised because a released job is "
         "assigned to a idle core … we do not allow parallel threads to preempt other threads or jobs, unless they have been stolen",
         "context switches"),
    ):
        c = C.Claim(cid, fig, quote, f"{what} per set, PAWS / SCHED_DEADLINE (gedf-dist: its mechanism; gedf: its schedule), "
                    "ratio of means paired over the sets, per window", C.Below(1.0, "outperforms: ratio below 1"),
                    control_variant=CONTROLS[NO_LOCALITY])
        c.ours = c.measure_parts(fewer(metric, "paws"))
        c.control = c.measure_parts(fewer(metric, NO_LOCALITY))
        out.append(c)

    # §5's explanation of SCHED_DEADLINE's context switches: its placement of woken jobs.
    c = C.Claim("F3-cause", "§5, Fig. 3 (SCHED_DEADLINE)",
                "the latter policy blindly assigns new jobs to the core where the task was last executed, which rather "
                "frequently leads to a preemption",
                "context switches per set, gedf-dist (a woken job on its task's last CPU, then push/pull) / gedf (the same "
                "schedule, jobs placed on any free CPU), ratio of means paired over the sets, per window",
                C.Above(1.0, "leads to a preemption: more context switches than the same schedule without the placement"),
                control_variant="gedf in gedf-dist's place (the placement taken away)")
    c.ours = c.measure_parts([(WINDOWS[w], C.ratio_of_means(*paired(w, SD, GEDF, "context_switches"))) for w in windows])
    c.control = c.measure_parts([(WINDOWS[w], C.ratio_of_means(*paired(w, GEDF, GEDF, "context_switches"))) for w in windows])
    out.append(c)

    # Growth with the load: Fig. 2 linear, Fig. 3 less than linear.
    c = C.Claim("F2-growth", "§5, Fig. 2",
                "the number of migrations increases with higher system utilisations … as a greater number of tasks must enter "
                "the system … and each one of them create more threads in the parallel regions. Nonetheless, values indicate "
                "a linear scalability for both policies",
                "log-log slope of kernel migrations per set against the set's U, per policy",
                C.Within(0.8, 1.2, "increases linearly: slope in [0.8, 1.2]"),
                control_variant="the same task sets without parallel regions (no threads created)")
    c.ours = c.measure_parts([(s, _slope(df, s, "kernel_migrations")) for s in ("paws", SD)])
    c.control = c.measure_parts([(s, _slope(seq, s, "kernel_migrations")) for s in ("paws", SD)])
    out.append(c)

    c = C.Claim("F3-growth", "§5, Fig. 3",
                "Even though the number of context switches follows the previous metric trend, when system workload gets heavier, "
                "it appears to scale less than linearly",
                "log-log slope of context switches per set against the set's U, per policy",
                C.Below(1.0, "less than linearly: slope below 1"), control_variant=CONTROLS[NO_LOCALITY] + " in PAWS's place")
    c.ours = c.measure_parts([(s, _slope(df, s, "context_switches")) for s in ("paws", SD)])
    c.control = c.measure_parts([(s, _slope(df, s, "context_switches")) for s in (NO_LOCALITY, SD)])
    out.append(c)
    return out


NOTE = ("Each claim is judged on the same task sets under PAWS and under the baseline (paired by set), with 95% intervals: "
        "Wilson for the proportion of sets with a miss, bootstrap over the sets for ratios, differences and slopes. Its control "
        "is the same measurement with the credited mechanism taken away (PAWS without stealing, or with forked threads on the "
        "global queue; the sets without parallel regions for the growth claims). Table 1's counts can fail "
        "only where a scheduler misses; the simulator charges no overheads, so the comparison of Table 1 is also measured "
        "where it can fail at every load (T1-margin): per set, the worst response per deadline (a miss is > 1), paired. "
        "Fig. 2 is judged on migrations as the authors' kernel counts them first (F2-kernel), on rtsched's definition second "
        "(F2-entity).")


def _sim(df, m):
    """Per window and scheduler: the aggregates the data tables cite."""
    out = {}
    for (w, s), g in df.groupby(["point", "scheduler"]):
        ok = g[g["status"] == "ok"]
        out[(int(w), s)] = {
            "sets": len(g), "ran": len(ok), "refused": int((g["status"] != "ok").sum()),
            "missed_sets": int((ok["missed"] > 0).sum()), "migrations": _col(ok, "migrations"),
            "kernel_migrations": _col(ok, "kernel_migrations"),
            "context_switches": _col(ok, "context_switches"), "jobs": _col(ok, "jobs"),
            "steals": _col(ok, "steals"), "failed_steals": _col(ok, "failed_steals"),
            "steal_attempts": _col(ok, "steal_attempts"), "priority_inversions": _col(ok, "priority_inversions"),
            "priority_inversion_ns": _col(ok, "priority_inversion_ns"), "inverted_jobs": _col(ok, "inverted_jobs"),
            "inversion_job_max_ns": _col(ok, "inversion_job_max_ns"), "inversion_job_p99_ns": _col(ok, "inversion_job_p99_ns"),
            "mean_response_ns": _col(ok, "mean_response_ns"),
            "min_dsr": float(ok["dsr"].astype("float64").min()) if len(ok) else float("nan"),
            "U": float(g["U"].astype("float64").mean()), "n": float(g["n"].astype("float64").mean()), "m": m,
        }
    return out


def _col(g, c):
    """The mean of column ``c`` as a float (NaN when there is no row: never pandas' NA)."""
    return float(g[c].astype("float64").mean()) if c in g.columns and len(g) else float("nan")


def _spec(name, m, sets, duration, schedulers, parallel=1):
    params = {"m": m} if parallel else {"m": m, "parallel": 0}
    return {"name": name, "seed": 2013, "generator": {"name": "paws2013", "params": params},
            "utilisation": {"param": "window", "points": [1, 2, 3, 4]}, "schedulers": schedulers,
            "seeds": sets, "duration": duration}


def _against_baselines(agg, m):
    """Rows (data, no verdicts): for each baseline, PAWS's means against the baseline's, window by window."""
    rows = []
    for b, what in BASELINES.items():
        cells = []
        for metric, p in (("kernel_migrations", 0), ("migrations", 0), ("context_switches", 0), ("missed_sets", 0),
                          ("mean_response_ns", 1)):
            scale = 1e-6 if metric.endswith("_ns") else 1
            per = [(agg.get((w, "paws"), {}).get(metric), agg.get((w, b), {}).get(metric)) for w in WINDOWS]
            cells.append("; ".join(f"{x * scale:.{p}f} vs {y * scale:.{p}f}" for x, y in per
                                   if x is not None and y is not None and x == x and y == y) or "n/a")
        refused = sum(agg.get((w, b), {}).get("refused", 0) for w in WINDOWS)
        rows.append([m, f"{b} ({what})", *cells, refused])
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
          description="PAWS vs global EDF, federated, sequential and SCHED_DEADLINE: misses, migrations (kernel count and entity count), context switches, per-job priority inversion (m = 2 simulated and on real cores; m = 4-64 simulated)")
def run(out_dir, quick, executor, real=False):
    import rtsched

    from ._real import can_run_real, not_run, run_real_sets

    out_dir = Path(out_dir)
    sets = 3 if quick else 20  # per window for m >= 4 (m = 2 always has the paper's 20)
    duration = "3s" if quick else "60s"
    df = run_sweep(_spec("paws2013", 2, PAPER_SETS, duration, SCHEDULERS + list(CONTROLS)), out_dir, executor, quick)
    seq = run_sweep(_spec("paws2013-seq", 2, PAPER_SETS, duration, ["paws", SD], parallel=0), out_dir, executor, quick,
                    table="sweep-sequential")
    margins = _margins(df, df["duration_ns"].iloc[0], ["paws", SD, NO_STEAL])
    # GFB's verdict of each task set (data: regenerated from its seed, the same set).
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

    found = claims(df, seq, margins)
    rep = Report("paws2013", "PAWS 2013 — PAWS vs global EDF, federated, sequential and SCHED_DEADLINE", run.paper, quick, asked)
    rep.para(__doc__.split("\n\n", 1)[1])
    rep.claims(found, out_dir, note=NOTE)

    # ---- Table 1 beside the paper (data) ----
    rep.heading("Table 1: task sets with a miss, the paper's and rtsched's (simulated)")
    rows = []
    for w, label in WINDOWS.items():
        row = [label, PAPER_PAWS_MISSES[w], PAPER_DEADLINE_MISSES[w]]
        for s in ("paws", SD, GEDF, NO_STEAL, NO_LOCALITY):
            k, n = _misses(df, w, s)
            row.append(f"{k} of {n}")
        gw = df[(df["scheduler"] == GEDF) & (df["point"] == w)]
        row += [f"{gw['U'].min():.3f}-{gw['U'].max():.3f}", f"{int(gw['gfb'].sum())} of {len(gw)}"]
        rows.append(row)
    rep.table(["window", "paper: PAWS", "paper: SCHED_DEADLINE", "paws", "gedf-dist", "gedf", NO_STEAL, NO_LOCALITY,
               "U of the sets", "GFB passes"], rows)
    rep.para("GFB (U ≤ m − u_max(m − 1)) is a sufficient test for global EDF: a set that passes it cannot miss under "
             "global EDF, one that fails it may still meet every deadline. The paper does not relate its misses to it.")

    # ---- PAWS against each baseline, every m (data) ----
    rep.heading("PAWS against each baseline (simulated), m = 2 and the paper's future work m = 4-64")
    rep.para("Per window (28-30%, 58-60%, 78-80%, 83-85% of m), PAWS's mean per task set against the baseline's, "
             f"over 20 sets (m = 2, {'3' if quick else '60'} s each) or {sets} sets (m ≥ 4, {'1' if quick else '10'} s each). "
             "Sets with a miss: PAWS's count vs the baseline's.")
    brows = _against_baselines(agg2, 2)
    for m in SCALE_M:
        brows += _against_baselines(scale[m][1], m)
    rep.table(["m", "baseline", "kernel migrations PAWS vs baseline", "migrations (entity) PAWS vs baseline",
               "context switches PAWS vs baseline", "sets with a miss PAWS vs baseline", "mean response ms PAWS vs baseline",
               "sets the baseline did not run (refused, or too long to simulate)"], brows)

    # ---- m = 2 in detail (data) ----
    rep.heading("m = 2 per window and scheduler (simulated)")
    trows = []
    for w, label in WINDOWS.items():
        for s in SCHEDULERS + list(CONTROLS):
            a = agg2[(w, s)]
            g = df[(df["scheduler"] == s) & (df["point"] == w)]
            wr = [margins[k] for k in margins if k[0] == w and k[2] == s]
            trows.append([label, s, a["ran"], a["refused"], f"{a['n']:.1f}", f"{a['U']:.3f}", fmt_pct(g["gfb"].mean()),
                          a["missed_sets"], f"{max(wr):.3f}" if wr else "—", f"{a['min_dsr']:.4f}",
                          f"{a['mean_response_ns'] / 1e6:.2f}", _n(a["kernel_migrations"]), _n(a["migrations"]),
                          _n(a["context_switches"]), _n(a["steals"]), _n(a["failed_steals"]), _n(a["priority_inversions"]),
                          _n(a["priority_inversion_ns"] / 1e6, 1), _n(a["inverted_jobs"], 1),
                          _n(a["inversion_job_max_ns"] / 1e6, 2), _n(a["inversion_job_p99_ns"] / 1e6, 2)])
    rep.table(["window", "scheduler", "sets run", "refused", "mean n", "mean U", "GFB passes", "sets with a miss",
               "worst response / deadline", "min DSR", "mean response ms", "mean kernel migrations", "mean migrations (entity)",
               "mean context switches", "mean steals", "mean failed steals", "mean inversion onsets", "mean inversion ms (system)",
               "mean jobs inverted", "mean max inversion per job ms", "mean p99 inversion per job ms"], trows)
    rep.para("Every paws2013 task has u ≤ 0.4 < 1, so C ≤ D: federated scheduling finds no heavy task and runs every task "
             f"sequentially under global EDF on all m cores, as gedf-seq does: {_same_runs(df, 'federated', 'gedf-seq')}. Priority "
             "inversion follows docs/semantics.md: a CPU runs an entity while a strictly earlier-deadline ready entity runs "
             "nowhere; the system-wide time counts each such stretch once, and each job whose ready entity waits so accrues "
             "it as its own inversion time (its maximum and 99th percentile over the jobs of a set, then averaged over the "
             "sets). PAWS's local queues have inversions by design (the paper's \"controlled priority inversion\"); global "
             "EDF on threads has none. `worst response / deadline` is the largest over the window's sets (above 1: a miss).")

    # ---- Real cores (data) ----
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
                f = lambda c, s=1.0, p=0: _n(ok[c].mean() * s, p) if len(ok) and c in ok else "n/a"  # noqa: E731, B023 - used within the iteration
                paper = PAPER_PAWS_MISSES[w] if "paws" in b else PAPER_DEADLINE_MISSES[w] if b == "kernel:deadline" else "—"
                rrows.append([label, b, len(ok), len(g) - len(ok), paper, int((ok["missed"] > 0).sum()) if len(ok) else "n/a",
                              f("mean_response_ns", 1e-6, 2), f("migrations"), f("context_switches"), f("steals"),
                              f("priority_inversions"), f"{ok['host_steal_ms'].max():.0f}" if len(ok) else "n/a"])
        rep.table(["window", "backend", "sets run", "refused", "paper's sets with a miss (of 20)", "sets with a miss",
                   "mean response ms", "mean migrations", "mean context switches", "mean steals", "mean priority inversions",
                   "max host steal ms"], rrows)
        refusals = real[real["status"] != "ok"]["error"].drop_duplicates().head(2).tolist()
        rep.para(f"Each set ran {'500 ms' if quick else '2 s'} per backend (WCET busy loops; real overheads, timer resolution "
                 "and host steal included). Testbed counts are the ledger's (migrations: an entity resuming elsewhere), kernel "
                 "counts the kernel's own (docs/real-runs.md); the two are not the same measure. kernel:deadline gives each "
                 "lane of a parallel task its own reservation (runtime = the lane's WCETs + an allowance), so its admitted "
                 "bandwidth exceeds ΣC/T; sets above the kernel's deadline bandwidth (95% of each CPU, less the 5% Linux 6.12+ "
                 "reserves for each CPU's fair server) are refused, never run halfway. The paper disabled SCHED_DEADLINE's "
                 "bandwidth management; a run refused here is one the paper's kernel would have run."
                 + (" First refusal messages: " + " / ".join(f"`{e}`" for e in refusals) if refusals else ""))

    # ---- Figures ----
    from rtsched import plots

    main = df[df["scheduler"].isin(SCHEDULERS)]
    figs = [
        (plots.schedulability(main, title="task sets without a miss (m = 2)"), "schedulability",
         "Fraction of task sets with no deadline miss per window, m = 2 (95% Wilson intervals)"),
        (plots.metric_vs_utilisation(main, "kernel_migrations", ylabel="kernel migrations per task set",
                                     title="migrations as the kernel counts them (m = 2)"), "kernel_migrations",
         "Migrations per task set as the kernel counts them, m = 2 (mean ± 95% CI) — the paper's Fig. 2"),
        (plots.migrations(main), "migrations", "Migrations per task set as rtsched defines them (an entity resuming "
         "elsewhere), m = 2 (mean ± 95% CI)"),
        (plots.metric_vs_utilisation(main, "context_switches", ylabel="context switches per task set",
                                     title="context switches vs window (m = 2)"), "context_switches",
         "Context switches per task set, m = 2 (mean ± 95% CI) — the paper's Fig. 3"),
        (_scaling_figure(agg2, {m: a for m, (_, a) in scale.items()}), "scaling",
         "Kernel migrations and context switches per job against m (window 83-85%, log scales)"),
    ]
    if real is not None and (real["status"] == "ok").any():
        figs.append((_real_figure(real), "real",
                     "Real cores, m = 2: migrations and context switches per task set per backend (mean ± 95% CI)"))
    rep.figures(figs, out_dir)
    rep.not_reproduced([
        "The paper's Linux 2.6.36 kernel with SCHED_RTWS: PAWS runs here as an rtsched policy on the testbed "
        "(one pinned SCHED_FIFO worker per core executes what the policy decides), not as a kernel class; the "
        "kernel driver (sched_ext) is a later issue.",
        "Figures 2 and 3 report no numbers in the text; the claims compare directions and growth. Simulated counts are "
        "decisions, kernel counts are the kernel's own (docs/real-runs.md).",
        "The kernel's overheads and tick: the simulator runs without them (WCET = execution time), so a miss needs an "
        "overload of the schedule itself.",
    ])
    return rep.write(out_dir / "report.md")


def _n(x, p=0):
    return "n/a" if x is None or x != x else f"{x:.{p}f}"


def _scaling_figure(agg2, aggs):
    from rtsched import plots

    plt = plots._plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    ms = [2, *sorted(aggs)]
    for ax, metric in zip(axes, ("kernel_migrations", "context_switches")):
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
