"""Does a calibrated overhead profile make the simulator predict the testbed? (issue 13)

For the Dhall example and ``sets`` random task sets (RandFixedSum, 2 CPUs, U evenly from
0.7 m to 1.0 m, fixed seeds), run global EDF on the testbed once and simulate it twice, without
overheads and with the profile (``run: {overheads: PROFILE}``), and compare the deadline
satisfaction ratios. The goal: with the profile every set's simulated DSR within 0.02 of the
testbed's. Each testbed run records the CPU time the hypervisor took (``host.steal_ms``),
since a constant-cost model cannot predict a host taking the CPUs away.

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


def with_profile(ts, profile_path):
    """``ts`` with ``run.overheads`` naming the profile (an absolute path, so the task set's
    own location does not matter)."""
    doc = yaml.safe_load(_core.to_yaml(ts))
    doc.setdefault("run", {})["overheads"] = os.path.abspath(profile_path)
    return _core.parse_taskset(yaml.safe_dump(doc, sort_keys=False), "yaml", ts.source)


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
    load0 = os.getloadavg()
    rows = []
    for name, ts in tqdm(cases, desc="testbed + simulator", unit="set", disable=not progress or None):
        rows.append(_row(name, ts, profile_path, policy, model, repeat))
    with open(profile_path) as f:
        profile = yaml.safe_load(f)
    return {
        "profile": profile,
        "profile_path": os.path.abspath(profile_path),
        "policy": policy,
        "model": model,
        "duration": duration,
        "repeat": repeat,
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
    for key, label in (("gap", "without"), ("gap_profile", "with")):
        g = [r[key] for r in rows]
        out[label] = {"mean_gap": sum(g) / len(g), "max_gap": max(g), "within_goal": sum(x <= GOAL + 1e-12 for x in g)}
    out["steal_ms_total"] = sum(r["steal_ms"] for r in rows)
    return out


def markdown(res: dict) -> str:
    """The rows and the summary as Markdown tables."""
    lines = ["| set | U | jobs | missed testbed / sim / sim+profile | DSR testbed | DSR sim | DSR sim+profile | gap | gap with profile | steal ms |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        runs = r["dsr_testbed_runs"]
        spread = f" ({min(runs):.4f}–{max(runs):.4f})" if len(runs) > 1 else ""
        missed = ",".join(map(str, r["missed_testbed"]))
        lines.append(f"| {r['set']} | {r['U']:.3f} | {r['jobs']} | {missed} / {r['missed_sim']} / {r['missed_sim_profile']} | "
                     f"{r['dsr_testbed']:.4f}{spread} | {r['dsr_sim']:.4f} | {r['dsr_sim_profile']:.4f} | {r['gap']:.4f} | {r['gap_profile']:.4f} | {r['steal_ms']:.0f} |")
    s = res["summary"]
    if s:
        lines += ["", f"| {s['sets']} random sets | mean gap | max gap | within {GOAL} |", "|---|---|---|---|"]
        for label in ("without", "with"):
            x = s[label]
            lines.append(f"| {label} the profile | {x['mean_gap']:.4f} | {x['max_gap']:.4f} | {x['within_goal']} of {s['sets']} |")
    return "\n".join(lines)
