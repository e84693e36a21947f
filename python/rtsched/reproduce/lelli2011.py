"""Lelli, Lipari, Faggioli, Cucinotta (2011), "An efficient and scalable implementation of
global EDF in Linux", §6: the cost of the scheduler's push and enqueue operations against the
number of CPUs, for the four find-CPU variants of distributed-run-queue global scheduling.

The paper generates N = 3m tasks with U = R·m by RandFixedSum, periods log-uniform in
[10, 100] ms, WCET = u·T, 20 task sets for m in {2, 4, 8, 16, 24, 32, 40, 48}, R in {0.6, 0.7,
0.8}, runs each for 10 s in the kernel and reports cycles per push (Figs 8-9) and per enqueue
(Figs 10-11) for `original` (linear scan), `fmask` (idle mask first), `heap` (cpudl max-heap)
and `SCHED_FIFO` (cpupri). Here the same task sets run in the simulator under `gedf-dist`
with `push=linear|fmask|heap` and `gfp-dist` (RM priorities, cpupri), each operation timed in
ns (`measure`), net of the timer's own cost; extended to m = 64 ... 512 (N = 3m tasks: RandFixedSum
draws at most 2,000, so m = 1,024 is out of reach). The numbers are
those of a user-space data structure without locks or cache-line contention: trends compare,
absolute cycles do not.
"""

from __future__ import annotations

from pathlib import Path

from . import claims as C
from . import register
from .report import Report

VARIANTS = [
    ("original", "gedf-dist:linear,measure"),
    ("fmask", "gedf-dist:fmask,measure"),
    ("heap", "gedf-dist:heap,measure"),
    ("SCHED_FIFO", "gfp-dist:rm,push=cpupri,measure"),
]

def _one(args):
    """Simulate one task set under every variant; returns rows of per-operation costs."""
    import rtsched
    from rtsched import _core

    m, R, seed, duration_ns = args
    ts = rtsched.generate("lelli2011", m=m, R=R, seed=seed).taskset.with_run(duration_ns=duration_ns)
    rows, finish = [], None
    for name, spec in VARIANTS:
        r = _core.simulate(ts, spec, policy_stats=True)
        s = dict(r.policy_stats)
        timer = s.get("ns_timer_overhead", 0.0)
        net = lambda k: max(0.0, s.get(k, float("nan")) - timer)  # noqa: E731, B023 - used within the iteration
        per = lambda k, n: s.get(k, 0.0) / s[n] if s.get(n) else float("nan")  # noqa: E731, B023
        rows.append({"m": m, "R": R, "seed": seed, "variant": name, "push_ns": net("ns_per_push"), "enqueue_ns": net("ns_per_enqueue"),
                     "dequeue_ns": net("ns_per_dequeue"), "pull_ns": net("ns_per_pull"), "find_cpu_ns": net("ns_per_find_cpu"),
                     "pushes": s.get("push_calls", 0.0), "enqueues": s.get("enqueue", 0.0), "timer_ns": timer,
                     # The work each operation does, counted (deterministic): CPUs, mask words,
                     # heap slots or priority levels read per push's find-CPU, written per enqueue.
                     "push_reads": per("find_cpu_touched", "push_calls"), "enqueue_writes": per("update_touched", "enqueue")})
        if name != "SCHED_FIFO":  # the three EDF variants must give one schedule
            jobs = tuple(r.jobs_columns()["finish_ns"])
            assert finish is None or jobs == finish, f"gedf-dist variants disagree at m={m} R={R} seed={seed}"
            finish = jobs
    return rows


@register("lelli2011", paper="J. Lelli, G. Lipari, D. Faggioli, T. Cucinotta, An efficient and scalable implementation of global EDF in Linux (OSPERT 2011) — §6, Figs 8-11",
          description="cost per push and per enqueue vs number of CPUs for linear / fmask / heap / cpupri find-CPU (distributed run queues)")
def run(out_dir, quick, executor):
    import pandas as pd

    out_dir = Path(out_dir)
    if quick:
        ms, Rs, sets = [2, 8, 32, 128], [0.6, 0.8], 2
    else:
        # Up to m = 512: N = 3m tasks, and RandFixedSum draws at most 2,000 (m = 1,024 was
        # refused, and with it the whole full run, since that limit came in).
        ms, Rs, sets = [2, 4, 8, 16, 24, 32, 40, 48, 64, 128, 256, 512], [0.6, 0.7, 0.8], 20
    jobs = []
    for m in ms:
        n_sets = sets if m <= 48 else max(2, sets // 4)
        duration = (300 if quick else 2000 if m <= 48 else 500) * 1_000_000
        for R in Rs:
            jobs += [(m, R, 1000 * m + int(R * 10) * 100 + k, duration) for k in range(n_sets)]
    # Timing runs go one after another in this process: parallel runs would measure contention.
    rows = [row for job in jobs for row in _one(job)]
    df = pd.DataFrame(rows)
    df.to_csv(out_dir / "operations.csv", index=False)
    med = df.groupby(["R", "m", "variant"])[["push_ns", "enqueue_ns", "dequeue_ns", "pull_ns", "find_cpu_ns"]].median().reset_index()

    figs = _figures(med)
    found = claims(df)
    rep = Report("lelli2011", "Global EDF with distributed run queues: cost per operation vs CPUs",
                 "Lelli et al., OSPERT 2011, §6", quick)
    rep.para(__doc__.split("\n\n", 1)[1])
    rep.claims(found, out_dir, note=("Each claim is judged first on the work an operation does, counted (CPUs, mask words, heap slots or "
             "priority levels read per push, written per enqueue: deterministic, the same on any machine), then on its "
             "time (ns, net of the timer pair's own cost; the `-time` claims). Intervals are 95% bootstraps over the "
             f"task sets (m <= 48, the paper's range: {int((df.m <= 48).sum() / len(VARIANTS))} sets)."))
    for R in Rs:
        rep.heading(f"R = {R}: median ns per push / per enqueue")
        sub = med[med.R == R]
        tab = []
        for m in ms:
            cells = [str(m)]
            for v, _ in VARIANTS:
                x = sub[(sub.m == m) & (sub.variant == v)]
                cells.append(f"{x.push_ns.iloc[0]:.0f} / {x.enqueue_ns.iloc[0]:.0f}" if len(x) else "")
            tab.append(cells)
        rep.table(["m"] + [v for v, _ in VARIANTS], tab)
    rep.figures(figs, out_dir)
    rep.not_reproduced([
        "absolute cycle counts: these are a user-space simulation's ns, without the kernel's run-queue locks, "
        "cache-line transfers between NUMA nodes or sched_debug accounting; compare shapes and orderings",
        "dequeue and pull figures are measured (operations.csv) but, as in the paper, not plotted",
        "the real kernel implementation (sched_ext) comes later; the thread-safe cpudl (LockedCpudl, ShardedCpudl) is stress- and loom-tested but not yet timed under contention",
    ])
    return rep.write(out_dir / "report.md")


def _figures(med):
    """Figs 8-11's analogs: (figure, file stem, caption) for Report.figures."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = []
    for metric, label, fig_no in (("push_ns", "push", "8-9"), ("enqueue_ns", "enqueue", "10-11")):
        Rs = sorted(med.R.unique())
        fig, axes = plt.subplots(1, len(Rs), figsize=(5 * len(Rs), 3.8), squeeze=False)
        for ax, R in zip(axes[0], Rs):
            for v, _ in VARIANTS:
                d = med[(med.R == R) & (med.variant == v)].sort_values("m")
                ax.plot(d.m, d[metric], marker="o", label=v)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("CPUs (m)")
            ax.set_ylabel(f"ns per {label} (median)")
            ax.set_title(f"R = {R}")
            ax.grid(alpha=0.3)
        axes[0][0].legend()
        fig.tight_layout()
        out.append((fig, f"{label}_cost", f"ns per {label} vs m (analog of the paper's Figs {fig_no})"))
    return out


#: The paper's range of CPU counts (the extension to 1,024 is reported, not judged).
PAPER_M = 48


def _per_set(df, R, variant, metric):
    """Per task set (m, seed) at load R: the metric of `variant`, in one order for every variant."""
    d = df[(df.R == R) & (df.variant == variant) & (df.m <= PAPER_M)].sort_values(["m", "seed"])
    return d.m.to_numpy(), d[metric].to_numpy()


def claims(df):
    """§6.3's claims, on the work counted (then, `-time`, on ns), each with its control."""
    Rs = sorted(df.R.unique())
    lo_R, hi_R = Rs[0], Rs[-1]
    out = []

    def slope_parts(variant, metric):
        return [(f"R = {R}", C.loglog_slope(*_per_set(df, R, variant, metric))) for R in Rs]

    def ratio(R, a, b, metric):
        return C.ratio_of_means(_per_set(df, R, a, metric)[1], _per_set(df, R, b, metric)[1])

    def diff(R, a, b, metric):
        return C.mean_difference(_per_set(df, R, a, metric)[1], _per_set(df, R, b, metric)[1])

    for suffix, push, enq, unit in (("", "push_reads", "enqueue_writes", "reads"), ("-time", "push_ns", "enqueue_ns", "ns")):
        what = "CPUs, words, slots or levels read per push" if unit == "reads" else "ns per push"
        c = C.Claim(f"L1{suffix}", "§6.3, Figs 8-9",
                    "the overhead of the original implementation of SCHED_DEADLINE increases linearly with the number of "
                    "processors, as expected, both for light load and for heavier load",
                    f"log-log slope of {what} against m (original), per load", C.Within(0.8, 1.2, "linear: slope in [0.8, 1.2]"),
                    control_variant="heap (the root of a max-heap instead of the scan)")
        c.ours = c.measure_parts(slope_parts("original", push))
        c.control = c.measure_parts(slope_parts("heap", push))
        out.append(c)

        c = C.Claim(f"L2{suffix}", "§6.3, Figs 8-9",
                    "[fmask] substantially decreases the overhead for both types of loads, and it becomes almost constant "
                    "in the number of processors", f"log-log slope of {what} against m (fmask), per load",
                    C.Below(0.3, "almost constant: slope below 0.3"), control_variant="original (no idle mask)")
        c.ours = c.measure_parts(slope_parts("fmask", push))
        c.control = c.measure_parts(slope_parts("original", push))
        out.append(c)

        others = [v for v, _ in VARIANTS if v != "fmask"]
        c = C.Claim(f"L3{suffix}", "§6.3, Fig 8",
                    "For light load, fmask is actually the one with lowest average number of cycles",
                    f"{what}: fmask / each other variant, R = {lo_R}, paired sets", C.Below(1.0, "lowest: ratio below 1 against each"),
                    control_variant="original in fmask's place (the mask taken away)")
        c.ours = c.measure_parts([(f"fmask / {v}", ratio(lo_R, "fmask", v, push)) for v in others])
        c.control = c.measure_parts([(f"original / {v}", ratio(lo_R, "original", v, push)) for v in others if v != "original"])
        out.append(c)

        c = C.Claim(f"L4{suffix}", "§6.3, Fig 9",
                    "For heavier loads ... the SCHED_FIFO and the heap implementations are now the ones with lowest "
                    "average overhead", f"{what}: heap and SCHED_FIFO / original and fmask, R = {hi_R}, paired sets",
                    C.Below(1.0, "lowest: ratio below 1 against each"), control_variant="original in the heap's place")
        c.ours = c.measure_parts([(f"{a} / {b}", ratio(hi_R, a, b, push)) for a in ("heap", "SCHED_FIFO") for b in ("original", "fmask")])
        c.control = c.measure_parts([(f"original / {b}", ratio(hi_R, "original", b, push)) for b in ("fmask",)]
                                    + [(f"SCHED_FIFO / {b}", ratio(hi_R, "SCHED_FIFO", b, push)) for b in ("original", "fmask")])
        out.append(c)

        c = C.Claim(f"L5{suffix}", "§6.3, Fig 9", "Notice also that the latter two [SCHED_FIFO and heap] show very similar performance",
                    f"{what}: heap / SCHED_FIFO, R = {hi_R}, paired sets", C.Within(0.5, 2.0, "very similar: ratio in [0.5, 2]"),
                    control_variant="original in the heap's place")
        c.ours = c.measure(ratio(hi_R, "heap", "SCHED_FIFO", push))
        c.control = c.measure(ratio(hi_R, "original", "SCHED_FIFO", push))
        out.append(c)

        what_e = "mask bits, heap slots or levels written per enqueue" if unit == "reads" else "ns per enqueue"
        c = C.Claim(f"L6{suffix}", "§6.3, Figs 10-11",
                    "The implementation with the lower enqueue overhead is original ... fmask has a slightly higher overhead "
                    "... Heap and SCHED_FIFO require the higher overhead",
                    f"{what_e}: paired differences original < fmask < heap, SCHED_FIFO (both loads pooled by load)",
                    C.Above(0.0, "higher: the paired difference above 0"), control_variant="original in the heap's place")
        c.ours = c.measure_parts([(f"R = {R}: {a} − {b}", diff(R, a, b, enq)) for R in Rs
                                  for a, b in (("fmask", "original"), ("heap", "fmask"), ("SCHED_FIFO", "fmask"))])
        c.control = c.measure_parts([(f"R = {R}: original − fmask", diff(R, "original", "fmask", enq)) for R in Rs])
        out.append(c)

        c = C.Claim(f"L7{suffix}", "§6.3, Figs 10-11",
                    "Updating the heap takes less time probably because it is a small data structure guarded by one single "
                    "coarse-grain lock, whereas the priority mask is a complex and larger data structure with fine-grained locks",
                    f"{what_e}: heap − SCHED_FIFO, per load, paired sets", C.Below(0.0, "less: the paired difference below 0"),
                    control_variant="fmask in the heap's place")
        c.ours = c.measure_parts([(f"R = {R}", diff(R, "heap", "SCHED_FIFO", enq)) for R in Rs])
        c.control = c.measure_parts([(f"R = {R}", diff(R, "fmask", "SCHED_FIFO", enq)) for R in Rs])
        c.notes.append("the paper explains the difference by locking; this simulation has no locks, so only the work done "
                       "on the structures is compared")
        out.append(c)
    return out
