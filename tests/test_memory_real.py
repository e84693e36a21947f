"""Real memory workloads (needs root, as tests/test_real.py): tasks with a `wss` stride over
their own buffers on real cores, each job records the CPU time its work took (`exec_ns`),
and cache interference shows as execution-time inflation, since this machine has no PMU for
the hardware counters (`unavailable.hardware_counters` says so). docs/real-runs.md, "Memory
workloads and hardware counters".

This VM is noisy (host steal, other processes sharing the last-level cache), so every check
compares medians over many jobs of one run, reruns a bounded number of times, and reports the
host's steal with any failure."""

import json
import os
import statistics
from pathlib import Path

import pytest

from conftest import run_cli

CAN_RT = os.geteuid() == 0
pytestmark = pytest.mark.skipif(not CAN_RT, reason="real runs need root (CI runs as root)")

BACKENDS = ["testbed:pedf", "kernel:fifo"]


def llc_bytes():
    """The last-level cache of CPU 0 as sysfs gives it (this VM: 32 MiB L3 shared by both CPUs)."""
    best = (0, 0)
    for d in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        if (d / "type").read_text().strip() == "Instruction":
            continue
        size = (d / "size").read_text().strip()
        n = int(size.rstrip("KMG")) * {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1], 1)
        best = max(best, (int((d / "level").read_text()), n))
    return best[1]


def has_pmu():
    return any(Path("/sys/bus/event_source/devices", d).exists() for d in ("cpu", "cpu_core", "cpu_atom"))


def run_json(tmp_path, yaml_text, backend):
    p = tmp_path / "m.yaml"
    p.write_text(yaml_text)
    out = tmp_path / "r.json"
    run_cli("run", p, "-b", backend, "--json", out, "--json-jobs", check=0)
    return json.loads(out.read_text())["runs"][0]


def rates(run):
    """Calibrated line updates per us, by buffer size in bytes (measurements memory.<n>B.lines_per_us)."""
    out = {}
    for k, v in run["measurements"].items():
        if k.startswith("memory.") and k.endswith("B.lines_per_us"):
            out[int(k[len("memory."):-len("B.lines_per_us")])] = v
    return out


def steal(run):
    return run["measurements"].get("host.steal_ms", 0)


# One memory task whose buffer fits the private L2 (512 KiB here), one CPU task.
ALONE = """platform: {cpus: 2}
run: {duration: 500}
tasks:
  - {name: m, period: 10, wcet: 2, wss: 256KiB, cpu: 0}
  - {name: c, period: 10, wcet: 1, cpu: 1}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_memory_jobs_record_their_cpu_time_close_to_demand_alone(tmp_path, backend):
    for _ in range(3):
        r = run_json(tmp_path, ALONE, backend)
        m = [j for j in r["jobs"] if j["task"] == "m" and j["finish_ns"] is not None]
        med = statistics.median((j["exec_ns"] - j["overhead_ns"]) / j["demand_ns"] for j in m)
        if 0.7 <= med <= 1.4:
            break
    assert len(m) >= 49 and all(j["exec_ns"] > 0 for j in m)
    # The calibrated rate holds for the task alone: its jobs take about their demand in CPU time.
    assert 0.7 <= med <= 1.4, (med, steal(r))
    # CPU burn: its work takes exactly its demand, plus at most a chunk per piece.
    done = [j for j in r["jobs"] if j["finish_ns"] is not None]
    for j in done:
        if j["task"] == "c":
            assert j["demand_ns"] <= j["exec_ns"] - j["overhead_ns"] <= j["demand_ns"] * 1.05 + 50_000, j
    # The kernel backends charge a job the CPU time of its task's thread between jobs too (its
    # overhead: wake-up, bookkeeping); the testbed's workers measure the work alone.
    if backend.startswith("kernel:"):
        assert all(j["overhead_ns"] > 0 for j in done)
    else:
        assert all(j["overhead_ns"] == 0 for j in done)
    assert rates(r).get(262144, 0) > 0, r["measurements"]
    demand, ex, oh = (sum(j[k] for j in done) for k in ("demand_ns", "exec_ns", "overhead_ns"))
    assert r["total"]["exec_inflation"] == pytest.approx(ex / demand) and r["total"]["ipc_proxy"] == pytest.approx(demand / (ex - oh))
    if not has_pmu():
        # This VM: no PMU, said in the results with the kernel's reason; no job has counters.
        why = r["unavailable"]["hardware_counters"]
        assert why.startswith("not available here: perf_event_open(") and "no hardware PMU" in why, why
        assert why.endswith("execution-time inflation (exec_ns / demand_ns) is the measure")
        assert all(j["hw"] is None for j in r["jobs"])
    else:
        assert "hardware_counters" not in r.get("unavailable", {})
        assert all(j["hw"]["instructions"] > 0 for j in m)


def cache_probe(tmp_path):
    """The calibration curve of this machine: one short run whose tasks have buffers from
    LLC/32 to 2 x LLC (each size calibrated once, alone, before the run starts). Returns
    {bytes: lines per us}."""
    llc = llc_bytes()
    sizes = [llc // 32, llc // 16, llc // 8, llc // 4, llc // 2, 3 * llc // 4, llc, 2 * llc]
    tasks = "".join(f"  - {{name: s{i}, period: 100, wcet: 0.1, wss: {s}, cpu: 0}}\n" for i, s in enumerate(sizes))
    r = run_json(tmp_path, "platform: {cpus: 2}\nrun: {duration: 100}\ntasks:\n" + tasks, "testbed:pedf")
    return rates(r)


def fitting_size(curve):
    """The largest buffer that still runs at cache speed (at least half the smallest buffer's
    rate) when alone: two such buffers together do not fit in what this machine's LLC gives
    one task. sysfs says 32 MiB here, but the host shares its L3 with other guests, and
    measured alone a buffer beyond 4-8 MiB ran at memory speed already."""
    sizes = sorted(curve)
    fast = curve[sizes[0]]
    fits = [s for s in sizes if curve[s] >= 0.5 * fast]
    w = max(fits)
    assert w < sizes[-1], f"even a buffer of 2 x LLC runs at cache speed: {curve}"
    return w


def one_pass_us(size, curve):
    """How long one pass over a buffer of `size` bytes takes at the calibrated rate of the
    smallest probed buffer at least as large (slower rates give longer jobs), in whole us."""
    rate = curve[min((s for s in curve if s >= size), default=max(curve))]
    return -(-(size // 64) // max(1, int(rate)))


A_US = 500


def cold_inflation(w, curve):
    """What a's job would take over its demand if its buffer were not in the cache at all when
    it starts: its first pass at memory speed (the rate of the largest probed buffer, 2 x LLC),
    the rest at the calibrated rate."""
    passes = A_US * curve[w] * 64 / w
    return (max(passes - 1, 0) + min(passes, 1) * curve[w] / curve[max(curve)]) / passes


def interference_set(w, curve):
    """On CPU 0: a (every P, 5 ms or more) strides over its buffer of w bytes for 0.5 ms; every
    2P, just before one of a's jobs, b makes a pass over a buffer of its own, twice a's and at
    least twice the fitting size, and P later c burns CPU for as long (b and c more urgent:
    priority 2, deadline P - 1 ms). So a's jobs alternate between following b and following c
    with the same timing (same gaps, same CPU occupancy, same calibration, in the same run):
    only the memory touched just before differs. b's pass alone is beyond what the cache keeps.
    (With b's buffer the size of a's, a fresh CI machine whose guest kept 16 MiB at cache speed
    showed a after b only 1.04-1.08x a after c at 8 MiB: both buffers stayed. With b's buffer
    2w, a CI run of 7481659 found a warm after c at 4 MiB, 1.18x, but after b's 8 MiB only
    1.36x, short of its cold 1.57x: b's pass had left part of a's buffer in the cache.)
    The period is long enough for b's and a's jobs at 2x inflation (on this loaded VM a's jobs
    take 1.1-2.4x their demand even after c); with b replaced by CPU burn, after-b and after-c
    agree within 15%."""
    b_wss = max(2 * w, 2 * fitting_size(curve))
    b_us = max(A_US, one_pass_us(b_wss, curve) * 6 // 5)
    period_us = max(5000, -(-2 * (A_US + b_us) // 1000) * 1000 + 1000)
    return f"""platform: {{cpus: 2}}
run: {{duration: {200 * period_us // 1000}ms}}
tasks:
  - {{name: a, period: {period_us}us, wcet: {A_US}us, wss: {w}, cpu: 0, priority: 1}}
  - {{name: b, period: {2 * period_us}us, deadline: {period_us - 1000}us, wcet: {b_us}us, wss: {b_wss}, cpu: 0, priority: 2}}
  - {{name: c, period: {2 * period_us}us, offset: {period_us}us, deadline: {period_us - 1000}us, wcet: {b_us}us, cpu: 0, priority: 2}}
"""


def a_after(run):
    """Median exec/demand of a's jobs by the task whose job finished last before each started,
    and how many jobs each median is over."""
    done = [j for j in run["jobs"] if j["finish_ns"] is not None]
    split = {"a": [], "b": [], "c": []}
    for j in done:
        if j["task"] != "a":
            continue
        before = [k for k in done if k["finish_ns"] <= j["start_ns"]]
        if before:
            split[max(before, key=lambda k: k["finish_ns"])["task"]].append((j["exec_ns"] - j["overhead_ns"]) / j["demand_ns"])
    return {k: (statistics.median(v), len(v)) for k, v in split.items() if v}


@pytest.mark.parametrize("backend", BACKENDS)
def test_buffers_that_together_exceed_the_cache_inflate_execution(tmp_path, backend):
    # The calibration finds what fits when a buffer is hammered alone; during a run other
    # processes share the cache in the gaps, so what stays resident between jobs is less: try
    # the fitting size, then half, then a quarter, and stop at the first that shows it. The
    # guest's share of the host's LLC moves with the neighbours' load (a fresh CI machine once
    # showed 1.2x at 4 MiB): when no size shows it, probe and try once more (two rounds at
    # most); the assertion is not loosened.
    tries = []
    for _round in range(2):
        curve = cache_probe(tmp_path)
        fit = fitting_size(curve)
        for w in (fit, fit // 2, fit // 4):
            r = run_json(tmp_path, interference_set(w, curve), backend)
            m = a_after(r)
            (after_b, n_b), (after_c, n_c) = m.get("b", (0, 0)), m.get("c", (0, 0))
            tries.append((w >> 10, round(after_c, 2), round(after_b, 2), n_c, n_b, steal(r),
                          round(cold_inflation(w, curve), 2)))
            if n_b >= 80 and n_c >= 80 and after_b >= 1.25 * after_c:
                break
        if n_b >= 80 and n_c >= 80 and after_b >= 1.25 * after_c:
            break
    print(f"{backend}: calibration {({k >> 10: round(v) for k, v in sorted(curve.items())})} (KiB: lines/us); "
          f"wss KiB per task, a's median exec/demand after c, after b, jobs, jobs, steal ms, "
          f"a's exec/demand if cold: {tries}")
    # The order was kept: a's jobs alternate between following b and following c.
    assert n_b >= 80 and n_c >= 80, tries
    shown = any(t[3] >= 80 and t[4] >= 80 and t[2] >= 1.25 * t[1] for t in tries)
    # The premise, measured: after c's CPU burn a's buffer was still in the cache, and the
    # size leaves room to see the difference. From the calibration, what a's job would cost
    # if its buffer were cold (first pass at the rate of 2 x LLC, the rest warm): at least
    # 1.5x its demand, and a after c within a third of the way from warm (1.0) to that. Then
    # b evicting a's buffer takes a to the cold cost, at least 1.29x a after c, and the 1.25x
    # below can show. Where it is not so, the host kept too little of a's buffer across the
    # gap (other guests share the L3: on one machine a 4 MiB buffer touched every 2-20 ms ran
    # at its cold rate) or the size shows too little, and b has nothing to show.
    warm = [t for t in tries if t[6] >= 1.5 and t[1] <= 1 + (t[6] - 1) / 3]
    if not shown and not warm:
        pytest.skip(f"{backend}: at no size was a's buffer still warm after c's CPU burn (a within a third "
                    f"of the way from its demand to its cold cost, that cost >= 1.5x): the host's L3 kept too "
                    f"little across the gap to test interference with; tries {tries}")
    # The same work, the same calibration, the same run: only the memory touched before differs.
    assert shown, (curve, tries)
    # The summary shows it: b's jobs follow a's and are inflated as well.
    tasks = {t["name"]: t for t in r["tasks"]}
    assert tasks["b"]["exec_inflation"] > tasks["c"]["exec_inflation"], r["tasks"]
