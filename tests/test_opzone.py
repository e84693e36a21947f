"""Mixed workloads (best-effort tasks beside real-time ones) under `cfs` as a user runs them:
the CLI's latency / balancing / share tables, determinism, bad input (exit 2, the field named),
and the balancers' invariants on random sets (hypothesis)."""

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import rtsched
from rtsched.balance_metrics import cpu_utilisation, fair_shares, latencies_ns
from conftest import run_cli, write_dedented

MIXED = """\
platform: {cpus: 2}
run: {duration: 500, overheads: {release: 5us}}
tasks:
  - {name: urgent, period: 1ms, wcet: 20us, priority: 99, cpu: 1}
  - {name: hog0, class: fair, behaviour: hog}
  - {name: hog1, behaviour: hog, nice: 5}
  - {name: sl, behaviour: sleeper, run: 2ms, sleep: 8ms}
  - {name: io, behaviour: bursty, run: [1ms, 5ms], sleep: [2ms, 20ms]}
"""


def write(tmp_path, text, name="mixed.yaml"):
    return write_dedented(tmp_path, text, name)


def test_simulate_prints_latency_balancing_and_shares(tmp_path):
    p = write(tmp_path, MIXED)
    r = run_cli("simulate", p, "-s", "cfs", "cfs:balancer=opzone,zone=warm-high", "cfs:balancer=none", "--util-plot", tmp_path / "u.png", check=0)
    out = r.stdout
    assert "scheduling latency (release to first run):" in out and "load balancing:" in out and "best-effort CPU share" in out
    lat = [line.split() for line in out.splitlines() if " urgent " in f" {line} "]
    assert len(lat) == 3 and all(row[2] == "500" for row in lat), out
    # With no balancer and only the release latency, every wake-up takes exactly 5 us.
    none = next(row for row in lat if row[0] == "cfs:balancer=none")
    assert none[3:] == ["5.0", "5.00", "5.0", "5.0"], none
    pngs = sorted(x.name for x in tmp_path.glob("u-*.png"))
    assert pngs == ["u-cfs-balancerlinux.png", "u-cfs-balancernone.png", "u-cfs-balanceropzone-zonewarm-high.png"]


def test_mixed_runs_are_deterministic(tmp_path):
    p = write(tmp_path, MIXED)
    for k in (1, 2):
        run_cli("simulate", p, "-s", "cfs", "cfs:balancer=opzone", "--json", tmp_path / f"r{k}.json", check=0)
    assert (tmp_path / "r1.json").read_bytes() == (tmp_path / "r2.json").read_bytes()


def test_api_metrics():
    ts = rtsched.parse_taskset(MIXED, "yaml", "mixed.yaml")
    r = rtsched.simulate(ts, "cfs:balancer=none", trace=True)
    lat = latencies_ns(r, "urgent")
    assert len(lat) == 500 and (lat == 5000).all()
    shares = fair_shares(r)
    assert set(shares) == {"hog0", "hog1", "sl", "io"}
    # No balancer: every fair task stays on CPU 0 (spawned there), which is never idle.
    assert abs(sum(shares.values()) - 1.0) < 0.01, shares
    _, u = cpu_utilisation(r, 100_000_000)
    assert u.shape == (2, 5) and np.allclose(u[0], 1.0, atol=1e-3) and np.allclose(u[1], 0.02, atol=0.002)


BAD = [
    ("  - {name: bg, behaviour: hog, nice: 25}", "cfs", "field 'nice'"),
    ("  - {name: bg, behaviour: sprinter}", "cfs", "field 'behaviour'"),
    ("  - {name: bg, behaviour: sleeper, run: 2ms}", "cfs", "field 'sleep'"),
    ("  - {name: bg, behaviour: bursty, run: [5ms, 1ms], sleep: 1ms}", "cfs", "field 'run'"),
    ("  - {name: bg, behaviour: hog, period: 10}", "cfs", "field 'period'"),
    ("  - {name: bg, class: idle}", "cfs", "field 'class'"),
    ("  - {name: bg, behaviour: hog}", "gedf", "task 'bg' is best-effort"),
    ("  - {name: bg, behaviour: hog}", "cfs:balancer=opzone,warm_spot_low=60%", "warm_spot_low"),
    ("  - {name: bg, behaviour: hog}", "cfs:balancer=opzone,hot_threshold=120%", "hot_threshold"),
    ("  - {name: bg, behaviour: hog}", "cfs:balancer=opzone,zone=tepid", "unknown operation zone 'tepid'"),
    ("  - {name: bg, behaviour: hog}", "cfs:balancer=opzone,cold_threshold=-5%", "cold_threshold"),
]


def test_bad_input_exits_2_naming_the_field(tmp_path):
    for line, sched, needle in BAD:
        p = write(tmp_path, "platform: {cpus: 2}\ntasks:\n  - {name: rt, period: 10, wcet: 1}\n" + line + "\n")
        r = run_cli("simulate", p, "-s", sched)
        assert r.returncode == 2, (line, sched, r.stdout, r.stderr)
        assert needle in r.stderr and "Traceback" not in r.stderr, (line, sched, r.stderr)
        if "best-effort" not in needle and sched == "cfs":
            assert "mixed.yaml" in r.stderr and "task 'bg'" in r.stderr, r.stderr


def test_real_runs_refuse_best_effort_tasks(tmp_path):
    p = write(tmp_path, MIXED)
    r = run_cli("run", p, "-b", "kernel:fifo")
    assert r.returncode == 2 and "field 'class'" in r.stderr and "rtsched stress" in r.stderr, r.stderr


fair_task = st.tuples(
    st.sampled_from(["hog", "sleeper", "bursty"]),
    st.integers(-5, 10),
    st.integers(1, 8),  # run, ms
    st.integers(0, 12),  # sleep, ms
    st.booleans(),  # pinned
)


@settings(max_examples=30, deadline=None)
@given(m=st.integers(2, 4), tasks=st.lists(fair_task, min_size=1, max_size=7),
       spec=st.sampled_from(["cfs", "cfs:balancer=opzone,zone=warm-low", "cfs:balancer=opzone,zone=cold,util=average", "cfs:balancer=opzone,zone=hot"]))
def test_balancers_keep_their_invariants(m, tasks, spec):
    lines = [f"platform: {{cpus: {m}}}", "run: {duration: 200}", "tasks:", f"  - {{name: urgent, period: 2ms, wcet: 100us, priority: 99, cpu: {m - 1}}}"]
    pins = {}
    for i, (b, nice, run, sleep, pinned) in enumerate(tasks):
        extra = f", cpu: {i % m}" if pinned else ""
        if pinned:
            pins[f"f{i}"] = i % m
        if b == "hog":
            lines.append(f"  - {{name: f{i}, behaviour: hog, nice: {nice}{extra}}}")
        elif b == "sleeper":
            lines.append(f"  - {{name: f{i}, behaviour: sleeper, run: {run}, sleep: {sleep}, nice: {nice}{extra}}}")
        else:
            lines.append(f"  - {{name: f{i}, behaviour: bursty, run: [1, {run}], sleep: [0, {sleep}], nice: {nice}{extra}}}")
    ts = rtsched.parse_taskset("\n".join(lines) + "\n", "yaml", "random.yaml")
    r = rtsched.simulate(ts, spec, trace=True)
    iv = r.intervals
    # A pinned task never runs elsewhere (the urgent one included).
    for name, cpu in list(pins.items()) + [("urgent", m - 1)]:
        assert (iv[iv.task == name].cpu == cpu).all(), (name, spec)
    # No CPU runs two entities at once; no entity runs on two CPUs at once.
    for key in ("cpu", "task"):
        for _, g in iv.groupby(key):
            g = g.sort_values("start_ns")
            assert (g.start_ns.to_numpy()[1:] >= g.end_ns.to_numpy()[:-1]).all(), (key, spec)
    # The urgent task (FIFO 99, 5 % of its CPU) meets every deadline; the fair tasks share
    # at most the machine.
    assert r.summary["dsr"] == 1.0
    assert sum(fair_shares(r).values()) <= m + 1e-9
    doc = json.loads(json.dumps(r.to_json(jobs=False)))
    assert doc["counters"]["overheads"]["policy_ns"] == r.measurements.get("balance.ns", 0)
