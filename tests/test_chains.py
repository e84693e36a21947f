"""Chains, triggers and self-suspensions from Python and the CLI (docs/chains.md): the
Result.chains frame, summary["chains"], --chains-csv and simulate's chains table, the file's
errors (exit 2) and the real substrates' refusal."""

import math

import pandas as pd
import pytest

import rtsched
from conftest import EXAMPLES, run_cli

MS = 1_000_000
AB = """platform: {cpus: 1}
run: {duration: 100}
tasks:
  - {name: a, period: 10, wcet: 2, priority: 5}
  - {name: b, trigger: a, deadline: 10, wcet: 3, priority: 4}
  - {name: f, period: 5, wcet: 0.5, priority: 6}
  - {name: s, period: 10, wcet: 0.5, priority: 1}
chains:
  - {name: ab, tasks: [a, b], deadline: 4}
  - {name: fs, tasks: [f, s], communication: let}
"""


def load(tmp_path, text, name="ts.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_result_chains_frame_and_summary(tmp_path):
    r = rtsched.simulate(rtsched.load_taskset(load(tmp_path, AB)), "gfp:file")
    df = r.chains
    assert list(df.columns) == ["chain", "instance", "start_ns", "end_ns", "latency_ns", "data_age_ns",
                                "reaction_time_ns"]
    ab = df[df.chain == "ab"]
    # a runs after f's 0.5 ms: [0.5, 2.5], b [2.5, 5.5] (f again at 5: b is preempted to 6).
    assert len(ab) == 10 and ab.data_age_ns.isna().all()
    assert (ab.latency_ns == ab.end_ns - ab.start_ns).all()
    fs = df[df.chain == "fs"]
    assert len(fs) == 9 and fs.latency_ns.isna().all()
    assert (fs.data_age_ns == 15 * MS).all(), fs
    s = r.summary["chains"]
    assert s["fs"]["data_age_ns"] == {"max": 15 * MS, "mean": 15 * MS, "p99": 15 * MS}
    assert s["fs"]["latency_ns"] is None and s["fs"]["deadline_ns"] is None
    assert s["ab"]["instances"] == 10
    assert s["ab"]["latency_ns"]["max"] == ab.latency_ns.max()
    assert s["ab"]["deadline_misses"] == int((ab.latency_ns > 4 * MS).sum()) > 0


def test_a_set_without_chains_has_an_empty_frame(tmp_path):
    r = rtsched.simulate(rtsched.load_taskset(EXAMPLES / "dhall.yaml"), "gedf")
    assert r.chains.empty and "chains" not in r.summary


def test_simulate_prints_a_chains_table_and_writes_the_csv(tmp_path):
    out = tmp_path / "chains.csv"
    r = run_cli("simulate", load(tmp_path, AB), "-s", "gfp:file", "gedf", "--chains-csv", out, check=0)
    assert any(line.startswith("scheduler") and "data age" in line for line in r.stdout.splitlines()), r.stdout
    df = pd.read_csv(out)
    assert list(df.columns)[:2] == ["scheduler", "chain"]
    assert set(df.scheduler) == {"gfp:file", "gedf"}
    assert len(df) == 2 * (10 + 9)
    assert math.isnan(df[df.chain == "ab"].data_age_ns.iloc[0])
    # Those runs streamed their chain records into the file as they went (no output held
    # them); with --trace the runs hold them and the file is written after: the same bytes.
    held = tmp_path / "held.csv"
    run_cli("simulate", load(tmp_path, AB), "-s", "gfp:file", "gedf", "--chains-csv", held, "--trace",
            tmp_path / "t.json", check=0)
    assert out.read_bytes() == held.read_bytes()


def test_a_trigger_cycle_exits_2_naming_it(tmp_path):
    p = load(tmp_path, "platform: {cpus: 1}\ntasks:\n  - {name: a, trigger: b, deadline: 5, wcet: 1}\n"
                       "  - {name: b, trigger: a, deadline: 5, wcet: 1}\n")
    r = run_cli("simulate", p, check=2)
    assert "task 'a' (tasks[0]): field 'trigger': triggers form a cycle: a → b → a" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("backend", ["kernel:scx-gedf", "kernel:scx-pedf"])
def test_sched_exts_bpf_native_modes_refuse_a_chain_set(tmp_path, backend):
    # The testbed and the kernel's own policies run them (test_chains_real.py), and
    # kernel:scx:POLICY in the guest (crates/scx/guest/chains.yaml).
    ts = rtsched.load_taskset(load(tmp_path, AB))
    with pytest.raises(rtsched.InputError, match="field 'trigger': event-triggered tasks are not yet supported by rtsched's "
                                                 "sched_ext scheduler in its BPF-native modes"):
        rtsched.run(ts, backend)


def _enclosing(slices, e):
    """The name of the innermost X slice enclosing flow event ``e`` on its track (how Perfetto
    binds a flow's start, and its end with "bp": "e")."""
    inside = [s for s in slices if (s["pid"], s["tid"]) == (e["pid"], e["tid"]) and s["ts"] <= e["ts"] < s["ts"] + s["dur"]]
    return min(inside, key=lambda s: s["dur"])["name"] if inside else None


def test_the_trace_links_each_chain_instances_jobs(tmp_path):
    """The issue's example (1 CPU, gfp, a T 10 C 2 prio 5, b trigger a C 3 prio 4, chain [a, b])
    through `simulate --trace`: one flow arrow per instance, from the slice of a's job k to the
    slice of the job of b it released, distinct ids."""
    import json

    text = "\n".join(line for line in AB.splitlines() if "name: f" not in line and "name: s," not in line
                     and "name: fs" not in line)
    trace = tmp_path / "t.json"
    run_cli("simulate", load(tmp_path, text), "-s", "gfp:file", "--trace", trace, check=0)
    ev = json.loads(trace.read_text())["traceEvents"]
    slices = [e for e in ev if e["ph"] == "X"]
    starts = {e["id"]: e for e in ev if e["ph"] == "s"}
    ends = {e["id"]: e for e in ev if e["ph"] == "f"}
    assert starts.keys() == ends.keys() and len(starts) == 10
    got = sorted((_enclosing(slices, starts[i]), _enclosing(slices, ends[i]), ends[i]["bp"], ends[i]["name"])
                 for i in starts)
    assert got == sorted((f"a/{k}", f"b/{k}", "e", "ab") for k in range(10))


def test_a_streamed_run_summarises_its_chains_as_the_held_one(tmp_path):
    ts = rtsched.load_taskset(load(tmp_path, AB))
    held = rtsched.simulate(ts, "gfp:file")
    streamed = rtsched.simulate(ts, "gfp:file", keep_jobs=False)
    assert streamed.summary["chains"] == held.summary["chains"]
    with pytest.raises(ValueError, match="did not keep its chain records"):
        _ = streamed.chains


def test_compares_chain_table_sets_each_chains_metric_side_by_side():
    # Two simulated runs stand in for compare's simulated and real one (the layout only).
    ts = rtsched.parse_taskset(AB, "yaml", "ab.yaml")
    a, b = rtsched.simulate(ts, "gfp:file"), rtsched.simulate(ts, "gedf")
    from rtsched.chains import chains_side_by_side

    lines = chains_side_by_side(a, b).splitlines()
    assert lines[0].split() == ["chain", "metric", "sim", "n", "sim", "max/mean/p99", "ms", "real", "n", "real", "max/mean/p99", "ms"]
    ab, fs = (line.split() for line in lines[1:])

    def cells(s, chain, metric):
        return [str(s[chain]["instances"]), "/".join(f"{s[chain][metric][k] / 1e6:.3f}" for k in ("max", "mean", "p99"))]
    sa, sb = a.summary["chains"], b.summary["chains"]
    # An event chain by its latency, a data-flow chain by its data age.
    assert ab == ["ab", "latency", *cells(sa, "ab", "latency_ns"), *cells(sb, "ab", "latency_ns")]
    assert fs == ["fs", "data", "age", *cells(sa, "fs", "data_age_ns"), *cells(sb, "fs", "data_age_ns")]
