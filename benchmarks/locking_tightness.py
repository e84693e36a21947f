#!/usr/bin/env python3
"""Tightness of the blocking-aware fixed-priority analysis (issue 56): per protocol, the bound
over the simulated maximum, for the response time and for the blocking.

Random one-CPU sets from a seeded generator of this script's own: 3–5 tasks, T in 10, 20, 25,
40, 50 ms (D = T), WCETs from UUniFast (Bini & Buttazzo 2005) at the point's utilisation,
rate-monotonic priorities written as the file's, three tasks in four with one critical section
on R or S (start and length drawn within the WCET), every task released at a random offset
(synchronous release is not the worst case for blocking). Each set is analysed by
`fp-rta-file` under `pip`, `pcp` and `srp` (`rtsched.analyze`: each task's bound and blocking
term B_i) and simulated under `gfp:file` with the same protocol for two hyperperiods. Per task:
bound / simulated maximum response, and, where the task was blocked at all, B_i / its largest
simulated blocking (the time tasks of lower priority executed while one of its jobs was
pending, from the execution intervals: what B_i bounds; the job records' blocking columns
also count waits behind higher-priority work, so they are not compared). A ratio of 1 is
a bound attained; the simulation is one release pattern, so a ratio is an upper estimate of
the analysis' pessimism.

The spinning protocols `msrp` and `mrsp` on partitioned sets: 2–4 CPUs, each CPU a set as
above (its tasks' `cpu` given) at the point's utilisation per CPU, three tasks in four with one
section on the global resource G (or on the CPU's local resource), analysed by
`p-fp-rta-file` (each task's bound and spin term spin_i) and simulated under `pfp` with the
file's partition and priorities. Per task: bound / simulated maximum response, and spin_i /
the largest `spin_ns` of one of its jobs (where it spun at all). Under `mrsp` every section is
on G; tasks without one may sit above G's local ceiling, which MrsP's helping makes harmless
(docs/locking.md "Helping"), so the test applies to every set (a set where it would not is
still counted, as `not_applicable`).

    .venv/bin/python benchmarks/locking_tightness.py [--sets 60] [--seed 1]

(also `make locking-tightness`). Writes docs/img/locking_tightness.png and
benchmarks/results/locking_tightness.json.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import rtsched
from _results import write_atomic

ROOT = Path(__file__).resolve().parent.parent
PERIODS_MS = [10, 20, 25, 40, 50]
POINTS = [0.3, 0.5, 0.7]
PROTOCOLS = ["pip", "pcp", "srp"]
SPINNING = ["msrp", "mrsp"]


def uunifast(rng: random.Random, n: int, u: float) -> list[float]:
    out, rest = [], u
    for i in range(1, n):
        nxt = rest * rng.random() ** (1 / (n - i))
        out.append(rest - nxt)
        rest = nxt
    return out + [rest]


def random_set(rng: random.Random, u: float) -> list[str]:
    """The task lines (YAML flow maps) of a set of utilisation about `u`."""
    n = rng.randint(3, 5)
    utils = uunifast(rng, n, u)
    periods = [rng.choice(PERIODS_MS) * 1000 for _ in range(n)]  # us
    rank = sorted(range(n), key=lambda i: (-periods[i], -i))  # lowest priority first
    prio = {i: k + 1 for k, i in enumerate(rank)}
    lines = []
    for i in range(n):
        c = max(2, round(utils[i] * periods[i]))
        sec = ""
        if rng.random() < 0.75:
            start = rng.randint(0, c - 1)
            length = rng.randint(1, c - start)
            sec = f", sections: [{{resource: {rng.choice('RS')}, start: {start}us, length: {length}us}}]"
        offset = rng.randint(0, periods[i] - 1)
        lines.append(f"  - {{name: t{i}, period: {periods[i]}us, wcet: {c}us, offset: {offset}us, priority: {prio[i]}{sec}}}")
    return lines


def one(lines: list[str], protocol: str) -> tuple[list[float], list[float]]:
    yaml = f"platform: {{cpus: 1}}\nrun: {{duration: 400ms, locking: {protocol}}}\nresources: [R, S]\ntasks:\n" + "\n".join(lines) + "\n"
    ts = rtsched.parse_taskset(yaml)
    v = next(x for x in rtsched.analyze(ts) if x["test"] == "fp-rta-file")
    r = rtsched.simulate(ts, "gfp:file", trace=True, _warn=False)
    jobs = r.jobs
    iv = r.intervals
    prio = {t["name"]: t["priority"] for t in ts.tasks()}
    runs = [(prio[t], s, e) for t, s, e in zip(iv["task"], iv["start_ns"], iv["end_ns"], strict=True)]
    resp, block = [], []
    for b in v["tasks"]:
        mine = jobs[jobs["task"] == b["task"]]
        if b["bound_ns"] is None or mine.empty:
            continue
        done = mine.dropna(subset=["finish_ns"])
        if not done.empty:
            resp.append(b["bound_ns"] / float((done["finish_ns"] - done["release_ns"]).max()))
        blocked = 0.0
        for rel, fin in zip(done["release_ns"], done["finish_ns"], strict=True):
            low = sum(max(0, min(e, fin) - max(s, rel)) for p, s, e in runs if p < prio[b["task"]])
            blocked = max(blocked, float(low))
        if blocked > 0:
            block.append((b["blocking_ns"] or 0) / blocked)
    return resp, block


def random_partitioned(rng: random.Random, u: float, protocol: str) -> tuple[int, list[str]]:
    """(CPUs, task lines) of a partitioned set: per CPU a set as `random_set`'s at `u`, with
    the CPU's `cpu` and its sections on the global G or the CPU's local Lk (under mrsp, on G)."""
    m = rng.randint(2, 4)
    lines = []
    for k in range(m):
        for line in random_set(rng, u):
            line = line.replace("{name: t", f"{{name: c{k}t", 1).replace(", priority:", f", cpu: {k}, priority:", 1)
            on = "G" if protocol == "mrsp" or rng.random() < 0.6 else f"L{k}"
            lines.append(line.replace("resource: R", f"resource: {on}").replace("resource: S", f"resource: {on}"))
    return m, lines


def one_spinning(m: int, lines: list[str], protocol: str) -> tuple[list[float], list[float]] | None:
    """Per task: bound / simulated max response, and spin_i / simulated max spin; None where
    the test does not apply."""
    res = ", ".join(["G"] + [f"L{k}" for k in range(m)])
    yaml = (f"platform: {{cpus: {m}}}\nrun: {{duration: 400ms, locking: {protocol}}}\nresources: [{res}]\n"
            "tasks:\n" + "\n".join(lines) + "\n")
    ts = rtsched.parse_taskset(yaml)
    v = next(x for x in rtsched.analyze(ts) if x["test"] == "p-fp-rta-file")
    if not v["tasks"]:
        return None
    jobs = rtsched.simulate(ts, "pfp", _warn=False).jobs
    resp, spin = [], []
    for b in v["tasks"]:
        done = jobs[jobs["task"] == b["task"]].dropna(subset=["finish_ns"])
        if b["bound_ns"] is None or done.empty:
            continue
        resp.append(b["bound_ns"] / float((done["finish_ns"] - done["release_ns"]).max()))
        spun = float(done["spin_ns"].max())
        if spun > 0:
            spin.append((b["spin_ns"] or 0) / spun)
    return resp, spin


def stats(xs: list[float]) -> dict:
    xs = sorted(xs)
    if not xs:
        return {"n": 0}
    return {"n": len(xs), "min": xs[0], "median": xs[len(xs) // 2], "p90": xs[int(0.9 * (len(xs) - 1))], "max": xs[-1]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", type=int, default=60, help="sets per utilisation point (default 60)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "docs/img/locking_tightness.png"))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    data = {p: {u: ([], []) for u in POINTS} for p in PROTOCOLS}
    for u in POINTS:
        for _ in range(args.sets):
            lines = random_set(rng, u)
            for p in PROTOCOLS:
                resp, block = one(lines, p)
                data[p][u][0].extend(resp)
                data[p][u][1].extend(block)
    summary = {p: {str(u): {"response": stats(data[p][u][0]), "blocking": stats(data[p][u][1])} for u in POINTS}
               for p in PROTOCOLS}
    spinning = {p: {u: ([], []) for u in POINTS} for p in SPINNING}
    skipped = {p: 0 for p in SPINNING}
    for u in POINTS:
        for _ in range(args.sets):
            for p in SPINNING:
                m, lines = random_partitioned(rng, u, p)
                got = one_spinning(m, lines, p)
                if got is None:
                    skipped[p] += 1
                    continue
                spinning[p][u][0].extend(got[0])
                spinning[p][u][1].extend(got[1])
    for p in SPINNING:
        summary[p] = {str(u): {"response": stats(spinning[p][u][0]), "spin": stats(spinning[p][u][1])}
                      for u in POINTS}
    write_atomic(ROOT / "benchmarks/results/locking_tightness.json",
                 {"sets_per_point": args.sets, "seed": args.seed, "summary": summary,
                  "not_applicable": skipped})
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4), sharey=False)
    panels = [(axes[0], "response", PROTOCOLS + SPINNING), (axes[1], "blocking", PROTOCOLS), (axes[2], "spin", SPINNING)]
    for ax, what, protocols in panels:
        for p in protocols:
            style = {"pip": "o-", "pcp": "s--", "srp": "^:", "msrp": "D-", "mrsp": "v--"}[p]
            color = f"C{(PROTOCOLS + SPINNING).index(p)}"  # one colour per protocol in every panel
            s = [summary[p][str(u)][what] for u in POINTS]
            ax.plot(POINTS, [x.get("median") for x in s], style, color=color, label=f"{p}: median")
            ax.fill_between(POINTS, [x.get("min") for x in s], [x.get("p90") for x in s], color=color, alpha=0.15)
        ax.axhline(1, color="k", lw=0.8)
        ax.set_xlabel("utilisation per CPU")
        ax.set_ylabel(f"bound / simulated max {what}")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    fig.suptitle(f"Blocking-aware FP RTA ({args.sets} sets per point; pip/pcp/srp: 1 CPU, gfp:file; msrp/mrsp: "
                 "2-4 CPUs, pfp; band: min to p90)", fontsize=9)
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    for p in PROTOCOLS + SPINNING:
        what = "blocking" if p in PROTOCOLS else "spin"
        for u in POINTS:
            s = summary[p][str(u)]
            print(f"{p} U={u}: response median {s['response'].get('median', float('nan')):.2f} min "
                  f"{s['response'].get('min', float('nan')):.2f} (n={s['response']['n']}); {what} median "
                  f"{s[what].get('median', float('nan')):.2f} min {s[what].get('min', float('nan')):.2f} "
                  f"(n={s[what]['n']})")
    print(f"not applicable (skipped): {skipped}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
