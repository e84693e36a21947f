"""Lim, Min, Eom (2012), "Load-Balancing for Improving User Responsiveness on Multicore
Embedded Systems" (Linux Symposium), §3-4, Fig 7: the scheduling latency of an urgent task
(SCHED_FIFO 99, pinned, sleeping and waking like cyclictest) under heavy background stress,
with Linux's load balancer and with the operation-zone balancer (warm zone, high spot).

The simulator runs the paper's setup — four CPUs, the urgent task pinned to one of them,
stress of CPU hogs, bursty (I/O-like) and periodic sleeper tasks in the fair class — on the
same stress sets (one per seed) under `cfs:balancer=linux`, the zone balancer and an ablation
of both: one factor changed at a time (each zone setting, zones off, the check points, the
two-more guard, the check's and the double lock's lengths), so that the report can say which
part produces the latency gain. A moderate load, where the zones differ, tests §3.1's zones;
2 to 64 CPUs extend the comparison. Latency comes from the model of §2's costs (cfs.rs rule
5): balancing passes and double-locked migrations are non-preemptible sections, and an urgent
wake-up that lands in one on its CPU waits for it; a wake-up also pays the overhead model's
release latency. The section lengths are parameters, not measurements of the paper's Q9400:
the ratio and the mechanism compare, the microseconds do not. On this machine the same
comparison runs for real (`rtsched stress`, the kernel's balancer vs `rtsched balance`, the
probe and cyclictest) when asked (`--real`, as root) — see the report's last section.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from . import claims as C
from . import register
from .experiment import Experiment, Real

ZONES = ["cold", "warm-low", "warm-mid", "warm-high", "hot"]
PAPER_MEAN_US = {"linux": 72.0, "warm-high": 31.0}
# The overhead model's wake-up path (release latency), context switch and migration: the
# order of a 2012 desktop's (docs/overheads.md; `rtsched calibrate` measures this machine's).
OVERHEADS = "{release: 5us, context_switch: 2us, migration: 10us}"

#: The least effect the paper resolves: its means have two digits (72 and 31 us), about 5 %.
EFFECT = 0.05

LINUX = "cfs:balancer=linux"
WARM_HIGH = "cfs:balancer=opzone,zone=warm-high"
#: Zones off: the cold policy with its bar at 0 % balances at every check point where one CPU
#: is busier than another (the balancer "balancing always").
ZONES_OFF = "cfs:balancer=opzone,zone=cold,cold_threshold=0%"

#: The ablation at Fig 7's load: (name, spec, the factor it changes). Each row changes one
#: thing of Linux's balancer or of the paper's setting (warm-high), a few two or three.
ABLATION = [
    ("linux", LINUX, "Linux's periodic balancer (§2): the baseline"),
    ("linux, guard", LINUX + ",guard=on", "guard: Linux moves only from a queue two fair tasks longer"),
    ("linux, 100 ms passes", LINUX + ",balance_min=100ms", "check frequency: Linux's interval fixed at its longest"),
    ("linux, guard, 100 ms passes", LINUX + ",guard=on,balance_min=100ms", "guard and check frequency"),
    ("linux, passes free", LINUX + ",balance_cost=0us,balance_cost_per_cpu=0ns", "a balance pass's section: 0"),
    ("linux, no double lock", LINUX + ",lock=0us", "the double lock's section: 0"),
    ("warm-high", WARM_HIGH, "the paper's setting (§4.2)"),
    ("cold", "cfs:balancer=opzone,zone=cold", "zone"),
    ("warm-low", "cfs:balancer=opzone,zone=warm-low", "zone"),
    ("warm-mid", "cfs:balancer=opzone,zone=warm-mid", "zone"),
    ("hot", "cfs:balancer=opzone,zone=hot", "zone"),
    ("zones off", ZONES_OFF, "zones: off (balance at every check point)"),
    ("warm-high, no guard", WARM_HIGH + ",guard=off", "guard: off (Linux's queue-of-two rule)"),
    ("warm-high, Linux's check sites", WARM_HIGH + ",checks=periodic", "check points: every CPU's balance interval, as Linux"),
    ("warm-high, Linux's sites, no guard", WARM_HIGH + ",checks=periodic,guard=off", "check points and guard"),
    ("zones off, Linux's sites, no guard", ZONES_OFF + ",checks=periodic,guard=off", "zones, check points and guard"),
    ("warm-high, 3 us checks", WARM_HIGH + ",check_cost=3us", "a check's section as long as a Linux pass's"),
    ("warm-high, no double lock", WARM_HIGH + ",lock=0us", "the double lock's section: 0"),
    ("none", "cfs:balancer=none", "no balancer"),
    ("none, no double lock", "cfs:balancer=none,lock=0us", "no balancer, the double lock's section: 0"),
]

#: Moderate load (CPUs between 30 % and 80 %), where §3.1's zones differ: (name, spec).
MODERATE = [
    ("linux", LINUX),
    ("cold", "cfs:balancer=opzone,zone=cold"),
    ("warm-low", "cfs:balancer=opzone,zone=warm-low"),
    ("warm-mid", "cfs:balancer=opzone,zone=warm-mid"),
    ("warm-high", WARM_HIGH),
    ("hot", "cfs:balancer=opzone,zone=hot"),
    ("hot, bar at 31 %", "cfs:balancer=opzone,zone=hot,hot_threshold=31%"),
    ("warm-high, spot at 50 %", WARM_HIGH + ",warm_spot_high=50%"),
    ("zones off", ZONES_OFF),
]


def taskset_yaml(m: int, duration: str, seed: int, load: str = "heavy") -> str:
    """The paper's scenario on `m` CPUs: the urgent task (cyclictest: 1 ms interval, FIFO 99,
    pinned to the last CPU) and "heavy background stress reaching to the worst load": 2m CPU
    hogs, m bursty tasks (I/O-like: bursts 0.2-5 ms, sleeps 1-20 ms) and m periodic sleepers
    (2 ms every 6 ms), all nice 0, spawned on CPU 0."""
    lines = [f"platform: {{cpus: {m}}}", f"run: {{duration: {duration}, seed: {seed}, overheads: {OVERHEADS}}}", "tasks:",
             f"  - {{name: urgent, period: 1ms, wcet: 10us, priority: 99, cpu: {m - 1}}}"]
    if load == "heavy":
        lines += [f"  - {{name: hog{i}, behaviour: hog}}" for i in range(2 * m)]
        lines += [f"  - {{name: io{i}, behaviour: bursty, run: [200us, 5ms], sleep: [1ms, 20ms]}}" for i in range(m)]
        lines += [f"  - {{name: sl{i}, behaviour: sleeper, run: 2ms, sleep: 4ms}}" for i in range(m)]
    else:
        # Moderate: about 55 % of the machine in sleepers and bursts, no hog.
        lines += [f"  - {{name: sl{i}, behaviour: sleeper, run: 3ms, sleep: 7ms}}" for i in range(m)]
        lines += [f"  - {{name: io{i}, behaviour: bursty, run: [200us, 4ms], sleep: [2ms, 30ms]}}" for i in range(2 * m)]
    return "\n".join(lines) + "\n"


def one(m: int, spec: str, duration: str, seed: int, trace: bool = False, load: str = "heavy") -> dict:
    import rtsched

    from ..balance_metrics import latencies_ns

    ts = rtsched.parse_taskset(taskset_yaml(m, duration, seed, load), "yaml", f"opzone2012-m{m}-{load}.yaml")
    r = rtsched.simulate(ts, spec, trace=trace)
    lat = latencies_ns(r, "urgent") / 1e3
    meas = r.measurements
    row = {"m": m, "scheduler": spec, "seed": seed, "wakeups": len(lat), "min_us": lat.min(), "mean_us": lat.mean(),
           "p99_us": float(np.percentile(lat, 99, method="inverted_cdf")), "max_us": lat.max(),
           "delayed": float((lat > lat.min()).mean()), "migrations": meas.get("balance.migrations", 0.0),
           "invocations": meas.get("balance.invocations", 0.0), "checks": meas.get("balance.checks", 0.0),
           "balance_ms": meas.get("balance.ns", 0.0) / 1e6, "dsr": r.summary["dsr"]}
    return {"row": row, "lat": lat, "result": r if trace else None}


def _label(spec: str) -> str:
    if "opzone" in spec:
        return spec.split("zone=")[1].split(",")[0]
    return spec.split("balancer=")[1] if "balancer=" in spec else "linux"


@dataclass(frozen=True)
class Config:
    """Sizes of each part: stress sets (seeds), run lengths, lock lengths, CPU counts; the real
    comparison's run length (s), repeats and zone conditions."""

    seeds: tuple
    duration: str
    locks: tuple
    ms: tuple
    scale_seeds: tuple
    scale_duration: str
    real_seconds: float
    real_repeats: int
    real_zones: tuple


QUICK = Config(tuple(range(1, 11)), "2s", (5, 20, 80), (2, 4, 16), (1, 2, 3), "1s", 2.0, 1, ("warm-high",))
FULL = Config(tuple(range(1, 31)), "10s", (5, 10, 20, 40, 80, 160), (2, 4, 8, 16, 32, 64), tuple(range(1, 11)), "5s",
              10.0, 3, ("warm-high", "cold", "hot"))


def _items(variants, seeds, duration, load, m=4, **extra):
    """One run per (name, spec) and seed, in that order: the items of :func:`_run_one`."""
    return [(m, name, spec, duration, s, load, tuple(extra.items())) for name, spec in variants for s in seeds]


def _run_one(item) -> list:
    """One stress set under one balancer: its row, with its `variant` (and any extra columns)."""
    m, name, spec, duration, seed, load, extra = item
    return [dict(one(m, spec, duration, seed=seed, load=load)["row"], variant=name, **dict(extra))]


def _runs(variants, seeds, duration, load, m=4):
    """Every (name, spec) on every seed, in this process: a frame of rows with a `variant` column."""
    import pandas as pd

    return pd.DataFrame([row for it in _items(variants, seeds, duration, load, m) for row in _run_one(it)])


def _col(df, variant, metric):
    """`metric` of `variant`, one value per seed in seed order (the pairing of every statistic)."""
    d = df[df.variant == variant].sort_values("seed")
    if not len(d):
        raise KeyError(f"no runs of {variant!r}")
    return d[metric].to_numpy(float)


def _ratio(df, a, b, metric="mean_us"):
    return C.ratio_of_means(_col(df, a, metric), _col(df, b, metric))


def _tmean(df, variant, metric="mean_us", unit="") -> C.Estimate:
    return C.mean(_col(df, variant, metric), unit)


# --- claims ------------------------------------------------------------------------------------

def claims(heavy, moderate, locks):
    """The paper's claims, each with its control, on the stress sets of `heavy` (Fig 7's load),
    `moderate` (30-80 %) and `locks` (Linux and warm-high at each double-lock length)."""
    out = []
    gain_metric = (f"urgent task's mean scheduling latency (release to first run), Linux's balancer / the zone balancer "
                   f"(warm zone, high spot), 4 CPUs, heavy stress, paired over {heavy.seed.nunique()} stress sets")

    # O1's size is the model's: a double-locked migration's section (`lock=`) is a parameter the
    # paper does not give, and the lock-length runs move the ratio across 2 (5 us: ×1.07, 80 us:
    # ×2.16 in the quick run). Its reach is that span: "more than two times" is then the
    # parameter's choice, not comparable; O2 judges the direction, which no length reverses.
    lock_ratios = {lk: _ratio(locks[locks.lock_us == lk], "linux", "warm-high") for lk in sorted(locks.lock_us.unique())}
    vals = [e.value for e in lock_ratios.values()]
    reach = (C.Reach(min(vals), max(vals), f"Linux / warm-high with a {min(lock_ratios):g} to {max(lock_ratios):g} us double lock, "
                     "a parameter of the model the paper does not give", parameter=True) if len(vals) > 1 else None)
    c = C.Claim("O1", "§4.2, Fig 7; abstract",
                "the scheduling latency of our test thread is reduced more than two times: from 72 microseconds to 31 "
                "microseconds on average", gain_metric, C.Above(2.0, "more than two times: the ratio's lower end above 2"),
                control_variant="zones off (zone=cold, cold_threshold=0%: balance at every check point)", reach=reach)
    c.ours = c.measure(_ratio(heavy, "linux", "warm-high"))
    c.control = c.measure(_ratio(heavy, "linux", "zones off"))
    c.notes.append(f"the paper's means: {PAPER_MEAN_US['linux']:g} → {PAPER_MEAN_US['warm-high']:g} us "
                   f"({PAPER_MEAN_US['linux'] / PAPER_MEAN_US['warm-high']:.2f}×, one run on a Q9400); ours are the model's, "
                   "whose 5 us release latency is the floor of both")
    for lk, e in lock_ratios.items():
        c.notes.append(f"with a {lk:g} us double lock (a parameter; 20 us by default) the ratio is {e.text()}")
    out.append(c)

    c = C.Claim("O2", "§4.2",
                "our approach can reduce average scheduling latency of tasks by effectively removing vital costs caused by "
                "the load-balancing", gain_metric, C.Above(1.0, "reduce: the ratio's lower end above 1", effect=EFFECT),
                control_variant="zones off (zone=cold, cold_threshold=0%): the zone policy the paper configures taken away")
    c.ours = c.measure(_ratio(heavy, "linux", "warm-high"))
    c.control = c.measure(_ratio(heavy, "linux", "zones off"))
    out.append(c)

    c = C.Claim("O3", "§3, Fig 2",
                "The existing load-balancer ... regularly checks whether load-balancing is needed or not. On the contrary, "
                "our approach checks only when the status of tasks can be changed", gain_metric,
                C.Above(1.0, "reduce: the ratio's lower end above 1", effect=EFFECT),
                control_variant="Linux's check sites (checks=periodic: every CPU at its balance interval, none at creation or wake-up)")
    c.ours = c.measure(_ratio(heavy, "linux", "warm-high"))
    c.control = c.measure(_ratio(heavy, "linux", "warm-high, Linux's check sites"))
    out.append(c)

    c = C.Claim("O4", "§3; §5",
                "By avoiding frequent unnecessary task migration, we can minimize heavy double-lock overhead",
                f"migrations, Linux's balancer / warm-high, 4 CPUs, heavy stress, paired over {heavy.seed.nunique()} stress sets",
                C.Above(2.0, "avoiding frequent migration: at most half of Linux's, the ratio's lower end above 2"),
                control_variant="zones off (zone=cold, cold_threshold=0%)")
    c.ours = c.measure(_ratio(heavy, "linux", "warm-high", "migrations"))
    c.control = c.measure(_ratio(heavy, "linux", "zones off", "migrations"))
    out.append(c)

    c = C.Claim("O6", "§3.1.1-3.1.2",
                "The cold zone policy loosely performs load-balancing operation ... Under the hot zone policy, kernel defers "
                "load-balancing until the CPU utilization reaches hot zone, and thus, we can avoid many task migrations",
                f"migrations, cold / hot zone, 4 CPUs, moderate load (CPUs between 30 % and 80 %), paired over "
                f"{moderate.seed.nunique()} sets", C.Above(2.0, "avoid many: the ratio's lower end above 2"),
                control_variant="the same two zones at Fig 7's heavy stress, where every CPU is past the hot zone's bar: "
                                "deferring has nothing to defer")
    c.ours = c.measure(_ratio(moderate, "cold", "hot", "migrations"))
    c.control = c.measure(_ratio(heavy, "cold", "hot", "migrations"))
    out.append(c)

    c = C.Claim("O7", "§3.1.3, Fig 4",
                "If the system is configured in mid spot of the warm zone policy, the load-balancer starts operations when "
                "the average usage of CPU is over 50% ... In case of high spot ..., over 80%",
                f"migrations, warm zone mid spot / high spot, 4 CPUs, moderate load, paired over {moderate.seed.nunique()} sets",
                C.Above(1.0, "the mid spot balances more: the ratio's lower end above 1", effect=EFFECT),
                control_variant="the same two spots at Fig 7's heavy stress, where every CPU is past both spots")
    c.ours = c.measure(_ratio(moderate, "warm-mid", "warm-high", "migrations"))
    c.control = c.measure(_ratio(heavy, "warm-mid", "warm-high", "migrations"))
    out.append(c)
    return out


def real_claim(res) -> C.Claim | None:
    """O1 on this machine (--real): the probe's mean latency, kernel / warm-high, paired by
    repeat (the runs interleave); control: the cold zone's runs, when they were made."""
    conds = res["conditions"]
    if "zone:warm-high" not in conds:
        return None
    means = {n: [r["probe"].get("mean_us", float("nan")) for r in c["runs"]] for n, c in conds.items()}
    c = C.Claim("O1-real", "§4.2, Fig 7", "the scheduling latency of our test thread is reduced more than two times: from 72 "
                "microseconds to 31 microseconds on average",
                f"the probe's mean wake-up latency on this machine, kernel's balancer / zone balancer (warm-high), "
                f"paired over {len(means['kernel'])} interleaved repeats", C.Above(2.0, "more than two times: the ratio's lower end above 2"),
                control_variant="the cold zone (`rtsched balance --zone cold`)")
    c.ours = c.measure(C.ratio_of_means(means["kernel"], means["zone:warm-high"], seed=2))
    if "zone:cold" in means:
        c.control = c.measure(C.ratio_of_means(means["kernel"], means["zone:cold"], seed=2))
    for n in means:
        c.notes.append(f"{n}: host steal {conds[n]['steal_pct']:.1f} % of CPU time")
    return c


# --- the ablation, and what acts ---------------------------------------------------------------

def ablation_rows(heavy):
    """One row per ablation variant: mean latency, Linux / variant and variant / warm-high
    (paired ratios), migrations, checks and passes, delayed wake-ups; each with its interval."""
    rows = []
    for name, _spec, factor in ABLATION:
        rows.append({"variant": name, "factor": factor,
                     "mean_us": _tmean(heavy, name, unit="us"),
                     "linux_over": _ratio(heavy, "linux", name),
                     "over_warm_high": _ratio(heavy, name, "warm-high"),
                     "migrations": _tmean(heavy, name, "migrations"),
                     "passes": float(np.mean(_col(heavy, name, "invocations") + _col(heavy, name, "checks"))),
                     "delayed": float(np.mean(_col(heavy, name, "delayed")))})
    return rows


def _acts(rows) -> str:
    """What the ablation's intervals say, from the numbers: which changes move the latency off
    warm-high's (variant / warm-high interval without 1) and which leave it there."""
    def fmt(rs):
        return "; ".join(f"{r['variant']} {r['over_warm_high'].value:.3f} [{r['over_warm_high'].lo:.3f}, {r['over_warm_high'].hi:.3f}]"
                         for r in rs) or "none"

    def beyond(rule):  # the variants whose interval lies wholly beyond 1, by the claims' own rule
        return [r for r in rows if rule.judge(r["over_warm_high"])[0] == C.HOLDS]

    rows = [r for r in rows if r["variant"] != "warm-high"]
    above, below = beyond(C.Above(1.0)), beyond(C.Below(1.0))
    rest = [r for r in rows if r not in above and r not in below]
    return (f"Mean latency of each variant over warm-high's (paired, 95% interval). Interval above 1 (slower than "
            f"warm-high): {fmt(above)}. Interval containing 1: {fmt(rest)}. Interval below 1 (faster): {fmt(below)}.")


def gap_closed(heavy, variant) -> C.Estimate:
    """How much of Linux's latency gap to warm-high a Linux variant closes: (Linux − variant) /
    (Linux − warm-high) of the mean latencies, bootstrapped over the paired stress sets."""
    a, b, w = (_col(heavy, v, "mean_us") for v in ("linux", variant, "warm-high"))
    return C.bootstrap(lambda i: (a[i].mean(1) - b[i].mean(1)) / (a[i].mean(1) - w[i].mean(1)), len(a),
                 "share of the gap, paired bootstrap", seed=3)


def _ci(e: C.Estimate, digits: int = 3) -> str:
    return e.short(digits)


# --- figures -----------------------------------------------------------------------------------

def latency_figures(lats: dict):
    """Fig 7's analog: the urgent task's latency over time, and the histograms (figures, unsaved)."""
    from ..plots import _plt

    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for name, lat in lats.items():
        ax.plot(np.arange(len(lat)) / 1000.0, lat, ".", ms=1.5, label=f"{name} (mean {lat.mean():.1f} us)")
    ax.set(xlabel="time from the test start (s)", ylabel="scheduling latency (us)", title="urgent task, 4 CPUs (Fig 7 analog)")
    ax.legend(fontsize=7, markerscale=6)
    fig.tight_layout()
    fig2, ax = plt.subplots(figsize=(7, 3.2))
    top = max(float(lat.max()) for lat in lats.values())
    bins = np.linspace(0, top + 1, 60)
    for name, lat in lats.items():
        ax.hist(lat, bins=bins, histtype="step", label=name)
    ax.set(xlabel="scheduling latency (us)", ylabel="wake-ups", yscale="log", title="urgent task latency histogram")
    ax.legend(fontsize=7)
    fig2.tight_layout()
    return fig, fig2


def ablation_figure(rows):
    """Mean latency and migrations of every ablation variant, with 95% intervals."""
    from ..plots import _plt

    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.32 * len(rows) + 1.2), sharey=True)
    y = np.arange(len(rows))[::-1]
    for ax, key, label in ((axes[0], "mean_us", "mean latency (us)"), (axes[1], "migrations", "migrations per run")):
        v = np.array([r[key].value for r in rows])
        lo = np.array([r[key].lo for r in rows])
        hi = np.array([r[key].hi for r in rows])
        ax.errorbar(v, y, xerr=[v - lo, hi - v], fmt="o", ms=3, capsize=2)
        ax.set(xlabel=label)
        ax.grid(alpha=0.3)
    axes[1].set_xscale("symlog", linthresh=10)
    axes[0].set_yticks(y, [r["variant"] for r in rows], fontsize=7)
    fig.suptitle("Fig 7's load, 4 CPUs: one factor at a time (95% intervals over the stress sets)", fontsize=9)
    fig.tight_layout()
    return fig


def _scale_figure(scale):
    from ..plots import _plt

    plt = _plt()
    fig, ax = plt.subplots(1, 2, figsize=(8, 3))
    g = scale.groupby(["scheduler", "m"])[["mean_us", "max_us"]].mean().reset_index()
    for spec, d in g.groupby("scheduler"):
        ax[0].plot(d["m"], d["mean_us"], "o-", label=_label(spec))
        ax[1].plot(d["m"], d["max_us"], "o-", label=_label(spec))
    for a, t in zip(ax, ("mean", "max")):
        a.set(xscale="log", xlabel="CPUs", ylabel=f"{t} latency (us), mean of the sets")
        a.set_xticks(sorted(scale["m"].unique()), [str(x) for x in sorted(scale["m"].unique())])
        a.legend(fontsize=7)
    fig.tight_layout()
    return fig


# --- the experiment ----------------------------------------------------------------------------

def real_plan(cfg: Config):
    import os
    import shutil

    from ._real import RealPart

    n = os.cpu_count() or 1
    ct = shutil.which("cyclictest") is not None
    return [RealPart(f"the urgent task's wake-up latency under `rtsched stress` ({2 * n} CPU hogs, {n} sleepers, disk and "
                     f"loopback I/O, SCHED_OTHER), the kernel's balancer vs the zone balancer ({', '.join(cfg.real_zones)})",
                     runs=cfg.real_repeats * (1 + len(cfg.real_zones)), seconds=1 + cfg.real_seconds * (2 if ct else 1),
                     cpus=f"CPU {n - 1} (the probe) and all {n} CPUs (the stress)",
                     policy="the probe at SCHED_FIFO 99 pinned to the last CPU, 1 ms cycles"
                            + ("; then cyclictest -S -m at SCHED_FIFO 99 on every CPU" if ct else "")
                            + "; `rtsched balance` moves the stress processes by affinity")]


def runs(r):
    """Fig 7's load (the ablation), a moderate load, the lock's length, 2-64 CPUs; the first
    stress set traced under Linux and warm-high (the figures')."""
    cfg = r.cfg
    seeds, duration = cfg.seeds, cfg.duration
    r.map(_run_one, _items([(n, s) for n, s, _ in ABLATION], seeds, duration, "heavy"), "heavy", chunk=4, file="ablation_m4.csv")
    r.map(_run_one, _items(MODERATE, seeds, duration, "moderate"), "moderate", chunk=4, file="latency_m4_moderate.csv")
    locks = [it for lk in cfg.locks
             for it in _items([("linux", f"{LINUX},lock={lk}us"), ("warm-high", f"{WARM_HIGH},lock={lk}us")], seeds, duration,
                              "heavy", lock_us=lk)]
    r.map(_run_one, locks, "locks", chunk=4, file="lock_sensitivity.csv")
    scale = [it for m in cfg.ms
             for it in _items([("linux", LINUX), ("warm-high", WARM_HIGH)], [1000 * m + s for s in cfg.scale_seeds],
                              cfg.scale_duration, "heavy", m=m)]
    r.map(_run_one, scale, "scale", chunk=4, file="latency_scale.csv")
    r.step("tracing the first stress set")
    r.keep("traced", {name: one(4, spec, duration, seed=seeds[0], trace=True) for name, spec in (("linux", LINUX), ("warm-high", WARM_HIGH))})


def real_runs(r):
    """The real comparison (`opzone_real.real_comparison`); --quick makes it short (one 2 s run
    per condition)."""
    import os

    from .opzone_real import real_comparison

    if os.geteuid() != 0:
        r.real_not_run("needs root (SCHED_FIFO 99 for the urgent task, affinity of the stress processes)")
        return
    try:
        r.keep("real", real_comparison(duration_s=r.cfg.real_seconds, out_dir=r.out_dir, repeats=r.cfg.real_repeats,
                                       zones=r.cfg.real_zones))
    except Exception as e:  # noqa: BLE001 - a real run that cannot start says why; the simulation stands
        r.real_not_run(str(e))


def frame(t):
    heavy = t["heavy"]
    return SimpleNamespace(heavy=heavy, moderate=t["moderate"], locks=t["locks"], scale=t["scale"], traced=t["traced"],
                           rows=ablation_rows(heavy), real=t.get("real") if t.real_ran else None, why_not=t.real_why,
                           cfg=t.cfg)


def all_claims(f) -> list:
    """The claims of the simulation, and O1-real when the real comparison ran."""
    found = claims(f.heavy, f.moderate, f.locks)
    real_c = real_claim(f.real) if f.real is not None else None
    return found + [real_c] * (real_c is not None)


def note(f) -> str:
    return (f"Each ratio is a ratio of means over the same {len(f.cfg.seeds)} stress sets (one seed each: the same tasks, bursts "
            f"and sleeps under every balancer, {f.cfg.duration} each), with a 95% paired bootstrap interval. The runs: "
            "ablation_m4.csv, latency_m4_moderate.csv, lock_sensitivity.csv.")


def sections(rep, f):
    heavy, moderate, locks, scale, rows = f.heavy, f.moderate, f.locks, f.scale, f.rows
    lin = {r["variant"]: r for r in rows}
    n = len(f.cfg.seeds)
    # The ablation: which part produces the gain.
    rep.heading("Which part produces the latency gain: the ablation at Fig 7's load")
    rep.para("Each row changes one factor (a few two or three) of Linux's balancer or of the paper's warm-high setting and "
             f"runs the same {n} stress sets on 4 CPUs. *Linux / variant* and *variant / warm-high* are paired ratios of mean "
             "latency; *checks + passes* counts the zone checks and balance passes per run (each a non-preemptible section on "
             "its CPU); *delayed*: wake-ups slower than the fastest one.")
    rep.table(["variant", "what changes", "mean latency us", "Linux / variant", "variant / warm-high", "migrations",
               "checks + passes", "delayed"],
              [[r["variant"], r["factor"], _ci(r["mean_us"], 4), _ci(r["linux_over"]), _ci(r["over_warm_high"], 4),
                _ci(r["migrations"]), f"{r['passes']:.0f}", f"{100 * r['delayed']:.2f}%"] for r in rows])
    rep.para(_acts(rows))
    g, w = lin["linux, guard, 100 ms passes"], lin["warm-high"]
    rep.para(f"Linux's balancer: {_ci(lin['linux']['mean_us'], 4)} us with {lin['linux']['migrations'].value:.0f} migrations; "
             f"with the guard {_ci(lin['linux, guard']['mean_us'], 4)} us ({lin['linux, guard']['migrations'].value:.0f}); "
             f"with 100 ms passes {_ci(lin['linux, 100 ms passes']['mean_us'], 4)} us "
             f"({lin['linux, 100 ms passes']['migrations'].value:.0f}); with both {_ci(g['mean_us'], 4)} us "
             f"({g['migrations'].value:.0f}), against warm-high's {_ci(w['mean_us'], 4)} us ({w['migrations'].value:.0f}): "
             f"Linux with both / warm-high = {_ci(g['over_warm_high'], 4)}. Without the double lock Linux gives "
             f"{_ci(lin['linux, no double lock']['mean_us'], 4)} us; with free passes {_ci(lin['linux, passes free']['mean_us'], 4)} us.")
    closes = [(v, gap_closed(heavy, v)) for v in ("linux, guard", "linux, 100 ms passes", "linux, guard, 100 ms passes",
                                                  "linux, passes free", "linux, no double lock")]
    rep.para("Share of Linux's gap to warm-high that each change to Linux closes ((Linux − variant) / (Linux − warm-high), "
             "paired, 95% interval): " + "; ".join(f"{v}: {100 * e.value:.0f} % [{100 * e.lo:.0f}, {100 * e.hi:.0f}]" for v, e in closes)
             + ". Taking a zone or the check points away from the zone balancer moves its latency by "
             + ", ".join(f"{r['variant']} {100 * (r['over_warm_high'].value - 1):+.1f} %" for r in rows
                         if r["variant"] in ("zones off", "hot", "cold", "warm-high, Linux's check sites", "warm-high, no guard"))
             + " (variant / warm-high − 1).")

    rep.heading("Moderate load: where the zones differ")
    moved = [name for name, _ in MODERATE if np.mean(_col(moderate, name, "migrations")) > 0]
    rep.para("Four sleepers (3 ms every 10 ms) and eight bursty tasks, no hog, chosen to keep the CPUs between 30 % and 80 %, "
             "where §3.1's policies should part (claims O6 and O7 judge it). Variants that migrated at all here: "
             + ("; ".join(moved) or "none") + ". That never did: "
             + ("; ".join(name for name, _ in MODERATE if name not in moved) or "none") + ".")
    rep.table(["variant", "mean latency us", "migrations", "checks + passes"],
              [[name, _ci(_tmean(moderate, name), 4), _ci(_tmean(moderate, name, "migrations")),
                f"{np.mean(_col(moderate, name, 'invocations') + _col(moderate, name, 'checks')):.0f}"] for name, _ in MODERATE])

    rep.heading("How the gain depends on the double lock's length")
    rep.para("The section length is the model's parameter (`lock=`); the paper does not give it.")
    rep.table(["lock us", "Linux mean us", "warm-high mean us", "Linux / warm-high", "Linux migrations"],
              [[lk, _ci(_tmean(d, "linux"), 4), _ci(_tmean(d, "warm-high"), 4), _ci(_ratio(d, "linux", "warm-high")), f"{np.mean(_col(d, 'linux', 'migrations')):.0f}"]
               for lk, d in locks.groupby("lock_us")])

    rep.heading("2 to 64 CPUs (beyond the paper, which has 4)")
    rep.table(["m", "sets", "Linux mean us", "warm-high mean us", "Linux / warm-high", "Linux migrations", "warm-high migrations"],
              [[m, d.seed.nunique(), _ci(_tmean(d, "linux"), 4), _ci(_tmean(d, "warm-high"), 4), _ci(_ratio(d, "linux", "warm-high")), f"{np.mean(_col(d, 'linux', 'migrations')):.0f}",
                f"{np.mean(_col(d, 'warm-high', 'migrations')):.0f}"] for m, d in scale.groupby("m")])



def figures(f):
    """The first stress set, traced, under Linux and warm-high; the ablation; the CPU counts."""
    from ..balance_metrics import utilisation_figure

    f_time, f_hist = latency_figures({k: v["lat"] for k, v in f.traced.items()})
    return [(f_time, "latency_time", "Urgent task latency over time, Linux vs warm-high, first stress set (Fig 7 analog)"),
            (f_hist, "latency_hist", "Latency histograms, first stress set"),
            (ablation_figure(f.rows), "ablation", "The ablation: mean latency and migrations with 95% intervals"),
            (_scale_figure(f.scale), "latency_scale", "Mean and max latency vs CPUs"),
            (utilisation_figure(f.traced["linux"]["result"]), "util_linux", "Per-CPU utilisation, Linux balancer"),
            (utilisation_figure(f.traced["warm-high"]["result"]), "util_warm_high", "Per-CPU utilisation, warm-high")]


def afterword(rep, f):
    duration = f.cfg.duration
    rep.para(f"Stress: {taskset_yaml(4, duration, 1).count('hog')} hogs, 4 bursty and 4 sleeper tasks, on 4 CPUs for {duration}; "
             f"overheads {OVERHEADS}; `cfs` defaults (balance pass 2 us + 250 ns per CPU, double lock 20 us, check 1 us, intervals "
             "10-100 ms).")

    rep.heading("On this machine")
    _real_section(rep, f)
    rep.heading("What a 2-core VM can and cannot show")
    rep.para("The simulator shows the mechanism at any size: how often balancing sections meet the urgent task's wake-ups, and how "
             "much each balancer moves. Its latencies are those of the section lengths given (defaults above), not a kernel's. The "
             "real comparison here has two cores, one of which the urgent task owns: the kernel's balancer has one pair of run "
             "queues to balance, and host steal (recorded per run) adds latency of its own that neither balancer controls. The "
             "user-space zone balancer acts by affinity, so it can only stop the kernel's balancer from moving the tasks it pins; "
             "it cannot remove the kernel's own checks — a kernel implementation (or sched_ext, issue 15) could.")


def _real_section(rep, f):
    """The real comparison's table (its claim O1-real is with the others), or why it was not run."""
    from pathlib import Path

    res = f.real
    if res is None:
        rep.para(f"Not run: {f.why_not}.")
        return
    rows = []
    for name, c in res["conditions"].items():
        p, ct = c["probe"], c.get("cyclictest") or {}
        per_run = ", ".join(f"{r['probe'].get('mean_us', float('nan')):.0f}" for r in c["runs"])
        rows.append([name, len(c["runs"]), f"{p['min_us']:.1f}", f"{p['mean_us']:.1f}", per_run, f"{p['p99_us']:.1f}", f"{p['max_us']:.1f}",
                     f"{ct.get('mean_us', float('nan')):.1f}" if ct else "-", f"{ct.get('max_us', float('nan')):.1f}" if ct else "-",
                     "-" if c["migrations"] is None else c["migrations"], f"{c['steal_pct']:.1f}", f"{c['busy_pct']:.0f}"])
    rep.para(f"{res['machine']['cpus']} CPUs, kernel {res['machine']['kernel']}; the urgent task (the probe, FIFO 99) on CPU "
             f"{res['settings']['probe_cpu']}, under `rtsched {' '.join(['stress'] * (res['settings']['stress'][:1] != ['stress']) + list(res['settings']['stress']))}`; each condition "
             f"{res['settings']['repeats']} interleaved runs of {res['settings']['duration_s']} s.")
    rep.table(["condition", "runs", "probe min us", "probe mean us", "per-run means us", "probe p99 us", "probe max us",
               "cyclictest mean us", "cyclictest max us", "balancer migrations", "steal %", "busy %"], rows)
    if res.get("figure"):
        rep.figure(res["figure"], "On this machine: the probe's latency per condition", Path(res["figure"]).parent)


EXPERIMENT = register(Experiment(
    name="opzone2012",
    paper="G. Lim, C. Min, Y. Eom, Load-Balancing for Improving User Responsiveness on Multicore Embedded Systems (Linux "
          "Symposium 2012) — §3-4, Fig 7",
    description="urgent-task scheduling latency under stress: Linux's load balancer vs the operation-zone balancer, an "
                "ablation of both, 2-64 CPUs; and on this machine",
    title="Operation-zone load balancing: urgent-task latency under stress (opzone2012)",
    cite="Lim, Min & Eom, Linux Symposium 2012 (§3 the zones, §4 Fig 7)", doc=__doc__, quick=QUICK, full=FULL,
    runs=runs, frame=frame, claims=all_claims, figures=figures, sections=sections, afterword=afterword, note=note,
    real=Real(plan=real_plan, runs=real_runs),
    not_reproduced=(
        "the paper's absolute microseconds (Q9400, Linux 2.6.32, its ftrace): the model's sections are parameters (see the lock table)",
        "network and disk stress as such: the model has them as bursty fair tasks (the real section uses real disk and loopback I/O)",
        "the kernel implementation of the zones (/proc knobs inside the scheduler): here the simulator's `cfs` and the user-space "
        "`rtsched balance` (by affinity, beside the kernel's own balancer)",
        "the ablation's check-site variant (`checks=periodic`) has Linux's periodic sites but not its newly-idle pull",
    )))
