"""Does a calibrated overhead profile make the simulator predict the testbed? (issue 13)

For the Dhall example and ``sets`` random task sets (RandFixedSum, 2 CPUs, U evenly from
0.7 m to 1.0 m, fixed seeds), run global EDF on the testbed (``repeat`` times) and simulate it
without overheads and with the profile (``run: {overheads: PROFILE}``), and compare the
deadline satisfaction ratios. The goal: with the profile every set's simulated DSR within 0.02
of the testbed's. Each testbed run records the CPU time the hypervisor took
(``host.steal_ms``), since a constant-cost model cannot predict a host taking the CPUs away.

The profile carries the machine's real-time bandwidth cap (``rt_runtime`` of ``rt_period``,
from ``sched_rt_runtime_us`` / ``sched_rt_period_us``), which the simulator applies as RT
throttling: a CPU that used its runtime in a period stops until the period ends. A third
simulation takes the profile's costs without the cap, to show what the cap alone explains.

Entry point: ``rtsched calibrate --check`` (docs/real-runs.md, "Calibrated overheads").
"""

from __future__ import annotations

import os
import platform

import yaml

from . import _core
from .analysis import generate
from .result import run as real_run
from .result import simulate

#: The goal of issue 13.
GOAL = 0.02


def with_profile(ts, profile_path, no_cap=False):
    """``ts`` with ``run.overheads`` naming the profile (an absolute path, so the task set's
    own location does not matter); with ``no_cap``, without its real-time bandwidth cap."""
    doc = yaml.safe_load(_core.to_yaml(ts))
    oh = os.path.abspath(profile_path)
    if no_cap:
        oh = {"profile": oh, "rt_runtime": "0ns"}
    doc.setdefault("run", {})["overheads"] = oh
    return _core.parse_taskset(yaml.safe_dump(doc, sort_keys=False), "yaml", ts.source)


def rt_cap_share() -> float:
    """The share of each CPU real-time threads may not use (RT throttling: 1 −
    sched_rt_runtime_us / sched_rt_period_us; 0.05 by default; 0 if unlimited or unknown)."""
    try:
        with open("/proc/sys/kernel/sched_rt_runtime_us") as f:
            runtime = int(f.read())
        with open("/proc/sys/kernel/sched_rt_period_us") as f:
            period = int(f.read())
    except (OSError, ValueError):
        return 0.0
    return 0.0 if runtime < 0 or period <= 0 else max(0.0, 1.0 - runtime / period)


def random_sets(count: int, m: int = 2, n: int = 6, seed: int = 1, duration: str = "5s"):
    """``count`` RandFixedSum sets of ``n`` tasks on ``m`` CPUs at U evenly from 0.7 m to 1.0 m
    (periods log-uniform in 10–100 ms), set k seeded ``seed + k``."""
    out = []
    for k in range(count):
        u = m * (0.7 + 0.3 * k / max(count - 1, 1))
        g = generate("randfixedsum", n=n, m=m, U=round(u, 4), seed=seed + k)
        ts = g.taskset.with_run(duration_ns=_core.parse_duration(duration))
        out.append((f"randfixedsum n={n} m={m} U={u:.3f} seed={seed + k}", ts))
    return out


def _row(name, ts, profile_path, policy, model, repeat):
    # At U = 1.0 m the generator's rounding may leave U a hair above m: allowed.
    tbs = [real_run(ts, "testbed:" + policy, model=model, trace=False, allow_overload=True) for _ in range(repeat)]
    bare = simulate(ts, policy)
    charged = simulate(with_profile(ts, profile_path), policy)
    # The profile's costs alone, without the bandwidth cap.
    costs = simulate(with_profile(ts, profile_path, no_cap=True), policy).summary
    b, c = bare.summary, charged.summary
    dsrs = [t.summary["dsr"] for t in tbs]
    dsr = sum(dsrs) / len(dsrs)
    oh = charged.counters.get("overheads", {})
    return {
        "set": name,
        "U": round(ts.utilization, 4),
        "jobs": b["jobs"],
        "missed_testbed": [t.summary["missed"] for t in tbs],
        "missed_sim": b["missed"],
        "missed_sim_profile": c["missed"],
        # With repeats: the mean over the testbed runs (and each run's).
        "dsr_testbed": dsr,
        "dsr_testbed_runs": dsrs,
        "dsr_sim": b["dsr"],
        "dsr_sim_profile": c["dsr"],
        "gap": abs(b["dsr"] - dsr),
        "gap_profile": abs(c["dsr"] - dsr),
        "dsr_sim_costs_only": costs["dsr"],
        "gap_costs_only": abs(costs["dsr"] - dsr),
        "throttle_ms": charged.counters.get("overheads", {}).get("throttle_ns", 0) / 1e6,
        "steal_ms": sum(t.measurements.get("host.steal_ms", 0.0) for t in tbs),
        "overhead_ms": sum(v for k, v in oh.items() if k.endswith("_ns")) / 1e6,
    }


def run_check(profile_path, sets: int = 20, duration: str = "5s", seed: int = 1, dhall: str | None = None,
              dhall_duration: str = "2s", policy: str = "gedf", model: str = "stw", repeat: int = 1, progress: bool = True) -> dict:
    """Run the experiment; returns a dict with the rows, the summaries and the conditions."""
    from tqdm import tqdm

    cases = []
    if dhall:
        d = _core.load_taskset(dhall).with_run(duration_ns=_core.parse_duration(dhall_duration))
        cases.append((f"dhall ({os.path.basename(dhall)}, {dhall_duration})", d))
    cases += random_sets(sets, seed=seed, duration=duration)
    with open(profile_path) as f:
        profile = yaml.safe_load(f)
    share = rt_cap_share()
    load0 = os.getloadavg()
    rows = []
    for name, ts in tqdm(cases, desc="testbed + simulator", unit="set", disable=not progress or None):
        rows.append(_row(name, ts, profile_path, policy, model, repeat))
    return {
        "profile": profile,
        "profile_path": os.path.abspath(profile_path),
        "policy": policy,
        "model": model,
        "duration": duration,
        "repeat": repeat,
        "rt_cap_share": share,
        "machine": f"{platform.node()} ({platform.machine()}, {os.cpu_count()} CPUs, Linux {platform.release()})",
        "loadavg_before": load0,
        "loadavg_after": os.getloadavg(),
        "rows": rows,
        "summary": summarize([r for r in rows if not r["set"].startswith("dhall")]),
    }


def summarize(rows) -> dict:
    if not rows:
        return {}
    out = {"sets": len(rows)}
    for key, label in (("gap", "without"), ("gap_profile", "with"), ("gap_costs_only", "costs_only")):
        g = [r[key] for r in rows]
        out[label] = {"mean_gap": sum(g) / len(g), "max_gap": max(g), "within_goal": sum(x <= GOAL + 1e-12 for x in g)}
    out["steal_ms_total"] = sum(r["steal_ms"] for r in rows)
    return out


def markdown(res: dict) -> str:
    """The rows and the summary as Markdown tables."""
    lines = ["| set | U | jobs | missed testbed / sim / sim+profile | DSR testbed | DSR sim | DSR sim+profile | gap | gap with profile | DSR sim+costs only | throttled ms | steal ms |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        runs = r["dsr_testbed_runs"]
        spread = f" ({min(runs):.4f}–{max(runs):.4f})" if len(runs) > 1 else ""
        missed = ",".join(map(str, r["missed_testbed"]))
        lines.append(f"| {r['set']} | {r['U']:.3f} | {r['jobs']} | {missed} / {r['missed_sim']} / {r['missed_sim_profile']} | "
                     f"{r['dsr_testbed']:.4f}{spread} | {r['dsr_sim']:.4f} | {r['dsr_sim_profile']:.4f} | {r['gap']:.4f} | {r['gap_profile']:.4f} | "
                     f"{r['dsr_sim_costs_only']:.4f} | {r.get('throttle_ms', 0):.0f} | {r['steal_ms']:.0f} |")
    s = res["summary"]
    if s:
        lines += ["", f"| {s['sets']} random sets | mean gap | max gap | within {GOAL} |", "|---|---|---|---|"]
        names = {"without": "without the profile", "with": "with the profile (costs and the real-time bandwidth cap)",
                 "costs_only": "with the profile's costs only (no bandwidth cap)"}
        for label, text in names.items():
            x = s[label]
            lines.append(f"| {text} | {x['mean_gap']:.4f} | {x['max_gap']:.4f} | {x['within_goal']} of {s['sets']} |")
    return "\n".join(lines)
