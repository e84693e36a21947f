"""rt-app files as rt-app reads them (docs/workloads.md "rt-app's dialect" and "rt-app's
events"): the dialect (comments, trailing commas, repeated keys, syntax errors with line and
column), the thread keys and ``global``, the legacy exec/period form, and every event mapped
to triggers, suspensions, sections and chains or refused with its reason. The fixtures in
tests/data/convert/rtapp/ are written for these tests; the worked values are in each test.

``RTSCHED_RTAPP_EXAMPLES=path/to/rt-app/doc/examples`` runs the issue's check over rt-app's own
examples: the files with tasks convert, validate and simulate under ``linux``, each pipeline a
chain; the two task-less merge/ fragments and the two files with a bare ``"suspend",`` are
refused with their reason.
"""

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rtsched
from conftest import ROOT, run_cli
from rtsched.convert import from_document, read
from rtsched.convert.rtapp import from_rtapp
from rtsched.convert.rtapp_dialect import DialectError, loads

DATA = ROOT / "tests" / "data" / "convert" / "rtapp"
MS, US = 1_000_000, 1_000


def doc_of(path, cpus=1):
    warned = []
    d = from_rtapp(loads(Path(path).read_text()), str(path), cpus, warned.append)
    return d, {t["name"]: t for t in d["tasks"]}, warned


# ----------------------------------------------------------------------------- the dialect

def test_comments_trailing_commas_and_repeated_keys_in_file_order():
    doc = loads('{ /* a */ "t": {"run": 1, // b\n "sleep": 2, "run": 3,},\n "l": [1, 2,], }')
    assert doc.keys() == ["t", "l"]
    assert list(doc.get("t")) == [("run", 1), ("sleep", 2), ("run", 3)]
    assert doc.get("t").lines == [1, 2, 2] and doc.line_of("l") == 3
    assert doc.get("l") == [1, 2]


@pytest.mark.parametrize("text,line,col,words", [
    ('{\n  "tasks": {\n    "a": {\n      "suspend",\n', 4, 16, "expected ':' after the key \"suspend\""),
    ('{"a": 1 /* never closed', 1, 9, "never closed"),
    ('{"a": 1 "b": 2}', 1, 9, "expected ',' or '}'"),
    ('{"a": [1 2]}', 1, 10, "expected ',' or ']'"),
    ('{"a": tru}', 1, 7, "expected a value"),
])
def test_syntax_errors_give_line_and_column(text, line, col, words):
    with pytest.raises(DialectError) as e:
        loads(text)
    assert (e.value.line, e.value.col) == (line, col) and words in e.value.msg


def test_a_file_rtapp_refuses_is_refused_with_its_line_and_column(tmp_path):
    f = tmp_path / "bare.json"
    f.write_text('{\n\t"tasks" : {\n\t\t"t" : {\n\t\t\t"loop" : -1,\n\t\t\t"suspend",\n\t\t\t"run" : 10\n\t\t}\n\t}\n}\n')
    p = run_cli("convert", f, "-o", tmp_path / "out.yaml", check=2)
    assert f"{f}:5:13: not rt-app JSON" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "out.yaml").exists()


@pytest.mark.parametrize("body,words", [
    ({"global": {"duration": 5}}, "a fragment with no tasks (only global)"),
    ({"resources": {"m": {"type": "mutex"}}}, "a fragment with no tasks (only resources)"),
])
def test_a_fragment_without_tasks_is_refused_as_one(tmp_path, body, words):
    f = tmp_path / "frag.json"
    f.write_text(json.dumps(body))
    p = run_cli("convert", f, "-o", tmp_path / "out.yaml", check=2)
    assert words in p.stderr and "Traceback" not in p.stderr


def test_a_file_opening_with_a_comment_is_read_as_rtapp(tmp_path):
    f = tmp_path / "c.json"
    f.write_text('/* a header */\n// and a line\n{"tasks": {"t": {"run": 100, "timer": {"ref": "u", "period": 1000}}}}')
    ts, kind, _ = read(f, cpus=1)
    assert kind == "rtapp" and ts.task_names == ["t"]


def test_a_broken_rtsched_json_file_is_not_told_as_rtapp(tmp_path):
    f = tmp_path / "set.json"
    f.write_text('{"platform": {"cpus": 1}, "resources": ["bus"], "tasks": [{"name": "a", "period": 10 "wcet": 1}]}')
    p = run_cli("convert", f, "-o", tmp_path / "out.yaml", check=2)
    assert "not rt-app JSON" not in p.stderr and "Traceback" not in p.stderr


# ----------------------------------------------------------------------------- a pipeline

def test_a_pipeline_becomes_triggers_a_suspension_and_a_chain_named_after_its_head():
    d, t, warned = doc_of(DATA / "pipeline.json")
    assert t["camera"]["period"] == "20000000ns" and t["camera"]["wcet"] == "1000000ns"
    assert t["filter"]["trigger"] == "camera" and t["display"]["trigger"] == "filter"
    assert t["filter"]["segments"] == ["2000000ns", {"suspend": "1000000ns"}, "1000000ns"]
    assert t["display"]["wcet"] == "3000000ns"  # `runtime`: wall time, taken as execution
    # a triggered task's deadline: the period of the cascade's periodic head
    assert t["filter"]["deadline"] == t["display"]["deadline"] == "20000000ns"
    assert d["chains"] == [{"name": "camera", "tasks": ["camera", "filter", "display"]}]
    assert d["run"] == {"default_policy": "other", "duration": "1s"}
    assert [t[n]["priority"] for n in ("camera", "filter", "display")] == [30, 20, 10]
    assert not warned


def test_the_pipeline_simulates_under_linux_with_its_end_to_end_latency():
    """On 1 CPU, SCHED_FIFO 30 > 20 > 10: camera [0, 1], filter [1, 3], suspended [3, 4],
    [4, 5], display [5, 8]: every instance's latency is 8 ms, 50 instances in 1 s."""
    ts, kind, _ = read(DATA / "pipeline.json", cpus=1)
    assert kind == "rtapp" and ts.chain_names == ["camera"]
    r = rtsched.simulate(ts, "linux")
    lat = r.chains[r.chains.chain == "camera"].latency_ns
    assert len(lat) == 50 and (lat == 8 * MS).all(), lat.describe()


def test_simulate_reads_the_rtapp_file_and_prints_the_chain(tmp_path):
    out = tmp_path / "p.yaml"
    run_cli("convert", DATA / "pipeline.json", "-o", out, "--cpus", "1", check=0)
    p = run_cli("simulate", out, "-s", "linux", check=0)
    row = next(line for line in p.stdout.splitlines() if line.split()[:2] == ["linux", "camera"])
    assert "8.000/8.000/8.000" in row, p.stdout


# ----------------------------------------------------------------------------- every event

def test_signal_broad_barrier_fork_lock_yield_mem_iorun():
    """sync.json by hand: `src` (timer 10 ms) runs 500, locks m, runs 200, signals `one` — so
    `src` is 700 us with m held over [500, 700] and `single` (waiting on `one`) is triggered by
    it; `src.1` runs 100 still holding m and broadcasts `all`, waking both `fan` instances
    (one-to-many); `src.2` is the yield (no time) and mem 4000 B + iorun 3000 B at the stated
    2000 and 1000 B/us: 2 + 3 us. Each `fan-k` runs 400 and meets the other at the barrier:
    `fan-k.1` joins both (`all`), runs 100 and forks `child`, a task released by that fork."""
    d, t, warned = doc_of(DATA / "sync.json")
    assert t["src"]["wcet"] == "700000ns" and t["src"]["period"] == "10000000ns"
    assert t["src"]["sections"] == [{"resource": "m", "start": "500000ns", "length": "200000ns"}]
    assert t["src.1"]["trigger"] == "src" and t["src.1"]["sections"] == [
        {"resource": "m", "start": "0ns", "length": "100000ns"}]
    assert t["src.2"]["trigger"] == "src.1" and t["src.2"]["wcet"] == "5000ns"
    assert t["single"]["trigger"] == "src" and t["single"]["wcet"] == "300000ns"
    assert t["fan-0"]["trigger"] == t["fan-1"]["trigger"] == "src.1"
    assert t["fan-0.1"]["trigger"] == t["fan-1.1"]["trigger"] == {"all": ["fan-0", "fan-1"]}
    assert t["child@fan-0"]["trigger"] == "fan-0.1" and t["child@fan-1"]["trigger"] == "fan-1.1"
    assert t["child@fan-0"]["wcet"] == "50000ns" and "child" not in t  # instance 0: only forked
    # the path through most threads: src → fan-0 → (the barrier joins fan-0 into fan-1.1) → child@fan-1
    assert d["chains"] == [{"name": "src", "tasks": ["src", "src.1", "fan-0", "fan-1.1", "child@fan-1"]}]
    for words in ("yield gives the CPU up", "4000 bytes taken as 2 us", "3000 bytes taken as 3 us",
                  "pi_enabled", "'global.frag'", "released at the fork"):
        assert any(words in w for w in warned), words
    ts = from_document(d, "sync.json")
    assert ts.chain_names == ["src"]
    r = rtsched.simulate(ts, "linux", duration="100ms")
    assert len(r.chains) == 10 and (r.chains.latency_ns >= (700 + 100 + 400 + 100 + 50) * US).all()


def test_sync_signals_then_waits():
    """`a` (timer 10 ms) runs 1 ms and syncs on c (signals c, waits c); `b` waits on c, runs
    2 ms and signals c. So b is triggered by a's first piece, and a's second piece joins its
    own first piece and b (the thread reached its wait and was woken)."""
    text = json.dumps({"tasks": {
        "a": {"policy": "SCHED_FIFO", "suspend": "go", "run": 1000, "lock": "m",
              "sync": {"ref": "c", "mutex": "m"}, "unlock": "m", "run1": 500},
        "b": {"policy": "SCHED_FIFO", "lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m", "run": 2000,
              "lock0": "m", "signal": "c", "unlock0": "m"},
        "tick": {"policy": "SCHED_FIFO", "run": 100, "resume": "go", "timer": {"ref": "t", "period": 10000}}}})
    d, t, _ = convert_text_tmp(text)
    assert t["a"]["trigger"] == "tick" and t["b"]["trigger"] == "a"
    assert t["a.1"]["trigger"] == {"all": ["a", "b"]} and t["a.1"]["wcet"] == "500000ns"
    assert d["chains"] == [{"name": "tick", "tasks": ["tick", "a", "b", "a.1"]}]


def convert_text_tmp(text, cpus=1):
    warned = []
    d = from_rtapp(loads(text), "in.json", cpus, warned.append)
    from_document(d, "in.json")  # validates
    return d, {t["name"]: t for t in d["tasks"]}, warned


def test_threads_waking_each_other_in_turn_are_cut_into_a_periodic_head():
    """rt-app's tutorial ping-pong, written again: a runs 3 ms then resumes b and waits; b
    runs 5 ms then resumes a and waits. rtsched's triggers cannot cycle: a, the first in file
    order, is periodic with the cycle's length 3 + 5 = 8 ms and b is triggered by it."""
    text = ('{"tasks": {"a": {"run": 3000, "resume": "b", "suspend": "a"},'
            ' "b": {"run": 5000, "resume": "a", "suspend": "b"}}}')
    d, t, warned = convert_text_tmp(text)
    assert t["a"]["period"] == "8000000ns" and t["b"]["trigger"] == "a"
    assert any("in a cycle" in w and "8000 us" in w for w in warned)


def test_a_cut_cycle_is_never_shorter_than_its_head_threads_own_loop():
    """a wakes b after 1 ms and runs 9 ms more; b runs 2 ms and wakes a. Round the cycle a → b
    → a is 3 ms, but a's own loop takes 10 ms before it waits again: the period is 10 ms."""
    text = ('{"tasks": {"a": {"suspend": "a", "run": 1000, "resume": "b", "run1": 9000},'
            ' "b": {"suspend": "b", "run": 2000, "resume": "a"}}}')
    d, t, _ = convert_text_tmp(text)
    assert t["a"]["period"] == "10000000ns" and t["a.1"]["trigger"] == "a" and t["b"]["trigger"] == "a"


def test_a_barrier_loop_is_cut_at_its_first_barrier_with_the_cycle_length():
    """Two threads meeting at X then Y: p runs 1 ms to X, 4 ms to Y; q runs 2 ms to X, 1 ms
    to Y. Both released together at X (periodic), at Y each waits for the other: the cycle is
    max(4, 1) + max(1, 2) = 6 ms; after X both run, and after Y each runs its next part."""
    text = ('{"tasks": {"p": {"run": 1000, "barrier": "X", "run1": 4000, "barrier1": "Y"},'
            ' "q": {"run": 2000, "barrier": "X", "run1": 1000, "barrier1": "Y"}}}')
    d, t, warned = convert_text_tmp(text)
    assert t["p"]["period"] == t["q"]["period"] == "6000000ns"
    assert t["p"]["wcet"] == "4000000ns" and t["q"]["wcet"] == "1000000ns"
    assert t["p.1"]["trigger"] == t["q.1"]["trigger"] == {"all": ["p", "q"]}


def test_sleep_in_a_timer_thread_is_a_suspension_and_timer_modes_are_the_period():
    for mode in ("relative", "absolute"):
        d, t, _ = convert_text_tmp(json.dumps({"tasks": {"w": {
            "run": 1000, "sleep": 2000, "run1": 500, "timer": {"ref": "u", "period": 10000, "mode": mode}}}}))
        assert t["w"]["period"] == "10000000ns"
        assert t["w"]["segments"] == ["1000000ns", {"suspend": "2000000ns"}, "500000ns"]
    with pytest.raises(rtsched.InputError, match="field 'mode'"):
        convert_text_tmp('{"tasks": {"w": {"run": 1, "timer": {"ref": "u", "period": 10, "mode": "x"}}}}')


def test_a_sleep_after_the_last_run_delays_what_the_piece_releases():
    """A sleep between a piece's last run and its wake (or wait) is kept: `a` (timer 10 ms)
    runs 1 ms, sleeps 500 us and resumes `b` (1 ms): a's segments [1 ms, {suspend: 500 us},
    1 ns], so under linux on 1 CPU b runs [1.5, 2.5] and the chain's latency is 2.5 ms +
    1 ns (rt-app's: b is resumed after the sleep). Control: the same file without the sleep
    gives 2 ms. A barrier (tutorial example7's shape): p runs 1 ms and sleeps 2 ms before X,
    q runs 2 ms: the rendezvous cycle is max(1 + 2, 2) = 3 ms, not 2."""
    def pipe(sleep):
        a = {"run": 1000, **({"sleep": sleep} if sleep else {}), "resume": "b", "timer": {"ref": "t", "period": 10000}}
        return json.dumps({"tasks": {"a": a, "b": {"suspend": "b", "run": 1000}}})

    d, t, warned = convert_text_tmp(pipe(500))
    assert t["a"]["segments"] == ["1000000ns", {"suspend": "500000ns"}, "1ns"] and t["b"]["trigger"] == "a"
    assert any("a sleep after the last run" in w and "kept as a suspension" in w for w in warned)
    lat = {}
    for sleep in (500, 0):
        d, _, _ = convert_text_tmp(pipe(sleep))
        r = rtsched.simulate(from_document(d, "in.json"), "linux")
        lat[sleep] = set(r.chains.latency_ns)
    assert lat == {500: {2_500 * US + 1}, 0: {2 * MS}}
    d, t, _ = convert_text_tmp('{"tasks": {"p": {"run": 1000, "sleep": 2000, "barrier": "X"}, "q": {"run": 2000, "barrier": "X"}}}')
    assert t["p"]["period"] == t["q"]["period"] == "3000000ns"
    assert t["p"]["segments"] == ["1000000ns", {"suspend": "2000000ns"}, "1ns"]


def test_a_timer_that_wakes_in_one_of_its_periods_releases_once_per_that_many():
    """rt-app's mp3 shape: a tick thread with no work wakes `out` in one of its 5 timer
    periods of 6 ms: `out` is periodic with 30 ms (the tick, with no work, is no task)."""
    d, t, warned = convert_text_tmp(json.dumps({"tasks": {
        "tick": {"phases": {"p1": {"resume": "out", "timer": {"ref": "t", "period": 6000}},
                            "p2": {"loop": 4, "timer": {"ref": "t", "period": 6000}}}},
        "out": {"suspend": "out", "run": 1000}}}))
    assert "tick" not in t and t["out"]["period"] == "30000000ns"
    assert any("once in 5" in w for w in warned)


# ----------------------------------------------------------------------------- thread keys, global

def test_thread_keys_and_global_options():
    d, t, warned = convert_text_tmp(json.dumps({
        "global": {"default_policy": "SCHED_FIFO", "duration": 3, "calibration": "CPU0", "pi_enabled": False},
        "tasks": {
            "a": {"instance": 2, "loop": -1, "cpus": [1], "priority": 7, "run": 100, "timer": {"ref": "u", "period": 1000}},
            "o": {"policy": "SCHED_OTHER", "priority": -5, "taskgroup": "/tg", "util_min": 10, "loop": 4,
                  "run": 100, "sleep": 900},
            "dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 300, "dl-period": 1000, "dl-deadline": 800,
                   "run": 200, "timer": {"ref": "u", "period": 1000}},
            "ph": {"phases": {"x": {"cpus": [0], "run": 100, "sleep": 400}, "y": {"cpus": [1], "loop": 2, "run": 100,
                                                                                 "sleep": 400}}},
            "hog": {"policy": "SCHED_OTHER", "run": 1000},
            "never": {"instance": 0, "run": 10, "sleep": 10}}}), cpus=2)
    assert not any(n.startswith("never") for n in t)
    assert t["a-0"]["cpu"] == t["a-1"]["cpu"] == 1 and t["a-0"]["priority"] == 7 and "policy" not in t["a-0"]
    assert d["run"] == {"default_policy": "fifo", "duration": "3s"}
    assert t["o"]["nice"] == -5 and t["o"]["policy"] == "other" and t["o"]["period"] == "1000000ns"
    assert t["dl"]["runtime"] == "300000ns" and t["dl"]["deadline"] == "800000ns" and t["dl"]["policy"] == "deadline"
    # three phases of 100 run + 400 sleep: one 500 us job repeated, on both CPUs (the union)
    assert t["ph"]["period"] == "500000ns" and "cpu" not in t["ph"]
    assert t["hog"] == {"name": "hog", "class": "fair", "behaviour": "hog", "policy": "other"}
    for words in ("'taskgroup'", "'util_min'", "'loop': 4", "changes between phases", "best-effort hog",
                  "task 'never': instance 0 and no thread forks it"):
        assert any(words in w for w in warned), words
    assert not any("pi_enabled" in w for w in warned) and not any("calibration" in w for w in warned)


def test_cpus_beyond_the_machine_widen_the_platform_only_without_cpus():
    text = json.dumps({"tasks": {"w": {"cpus": [3], "run": 10, "timer": {"ref": "u", "period": 100}}}})
    warned = []
    d = from_rtapp(loads(text), "in.json", 2, warned.append, cpus_given=False)
    assert d["platform"] == {"cpus": 4} and d["tasks"][0]["cpu"] == 3
    assert any("the platform is taken as 4 CPUs" in w for w in warned)
    with pytest.raises(rtsched.InputError, match="CPU 3 on a platform of 2 CPUs"):
        from_rtapp(loads(text), "in.json", 2, warned.append)


def test_a_thread_woken_by_several_follows_the_first_with_a_warning():
    """rtsched's trigger is one task or a join of all: `sub` is resumed by both `a` and `b`,
    so it is triggered by `a` (first in file order) and the warning says `b` is not modelled."""
    d, t, warned = convert_text_tmp(json.dumps({"tasks": {
        "a": {"run": 100, "resume": "sub", "timer": {"ref": "t", "period": 1000}},
        "b": {"run": 200, "resume": "sub", "timer": {"ref": "u", "period": 1000}},
        "sub": {"suspend": "sub", "run": 50, "delay": 10}}}))
    assert t["sub"]["trigger"] == "a" and "offset" not in t["sub"]
    assert any("'delay' 10 us on a thread released by other threads" in w for w in warned)
    assert any("woken by any of 2 threads (a, b)" in w and "not modelled" in w for w in warned)


def test_the_legacy_exec_period_form():
    """control: exec 3 ms per 10 ms, deadline 8 ms; bus held 1 ms (with its access mutex
    outer around it), tick 0 (its type lives in a separate resources file: warned), then log
    0.5 ms: sections in turn, as rt-app 0.x's run() takes them."""
    d, t, warned = doc_of(DATA / "legacy.json")
    c = t["control"]
    assert (c["period"], c["wcet"], c["deadline"]) == ("10000000ns", "3000000ns", "8000000ns")
    assert c["sections"] == [{"resource": "outer", "start": "0ns", "length": "1000000ns"},
                             {"resource": "bus", "start": "0ns", "length": "1000000ns"},
                             {"resource": "log", "start": "1000000ns", "length": "500000ns"}]
    assert any("resource 'tick' held for no time" in w for w in warned)


@pytest.mark.parametrize("tasks,words", [
    ({"w": {"suspend": "nobody", "run": 10}}, "in.json:1: task 'w', event 'suspend': no other thread resumes 'nobody'"),
    ({"w": {"run": 10, "policy": "SCHED_FIFO"}}, "never sleeps or waits"),
    ({"w": {"phases": {"p": {"run": 10, "timer": {"ref": "u", "period": 100}, "wait": {"ref": "c"}}}}},
     "task 'w', phase 'p', event 'wait': waits both for its timer and for other threads"),
    ({"w": {"run": 10, "resume": "x"}}, "wakes other threads but never waits itself"),
    ({"w": {"run": 10, "sleep": 5, "fork": "nope"}}, "forks 'nope', no such task"),
    ({"w": {"exec": 10, "period": 100, "lock_order": ["r"]}}, "'r' has no entry in 'resources'"),
    ({"w": {"run": 10, "resume": 5, "timer": {"ref": "u", "period": 100}}, "x": {"suspend": "x", "run": 1}},
     "in.json:1: task 'w', event 'resume': expected the name of a condition"),
])
def test_refusals_say_where_and_why(tasks, words):
    with pytest.raises(rtsched.InputError) as e:
        convert_text_tmp(json.dumps({"tasks": tasks}))
    assert words in str(e.value), str(e.value)


def test_a_long_pipeline_of_wakes_converts_and_too_many_pieces_are_refused():
    """1500 resumes in one loop: 1500 pieces, each triggered by the one before (paths that
    deep are walked without running out of stack); 2500 are more than MAX_PIECES (2000)."""
    def text(n):
        body = ", ".join(f'"run{k}": 10, "resume{k}": "x"' for k in range(n))
        return '{"tasks": {"w": {' + body + ', "timer": {"ref": "t", "period": 100000}}, "x": {"suspend": "x", "run": 1}}}'
    d, t, warned = convert_text_tmp(text(1500))
    assert len(t) == 1501 and t["w.1499"]["trigger"] == "w.1498"
    # the chain is the pipeline of threads w → x (not w's own 1500 pieces)
    assert d["chains"] == [{"name": "w", "tasks": ["w", "x"]}]
    assert t["x"]["trigger"] == "w" and any("woken 1500 times in a loop of 'w'" in m for m in warned)
    with pytest.raises(rtsched.InputError, match="more than 2000 tasks"):
        convert_text_tmp(text(2500))


_events = st.sampled_from(["run", "runtime", "sleep", "timer", "suspend", "resume", "signal", "wait", "broad", "sync",
                           "barrier", "lock", "unlock", "fork", "yield", "mem", "iorun", "loop", "instance", "cpus",
                           "phases", "exec", "period", "lock_order", "resources", "policy", "dl-runtime"])
_vals = st.sampled_from([100, 0, -1, 2, "a", "b", "c", "m", {"ref": "a", "mutex": "m"}, {"ref": "t", "period": 1000},
                         [0], None, 1.5, ["m"], {"m": {"duration": 5, "access": ["n"]}}, "SCHED_DEADLINE",
                         {"p": {"run": 10, "suspend": "a", "loop": 2}, "q": {"resume": "b", "sleep": 5}}])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), st.lists(st.tuples(_events, _vals), max_size=7), min_size=1))
def test_any_event_soup_converts_to_a_valid_set_or_is_refused_naming_the_file(threads):
    text = "{\"tasks\": {" + ", ".join(
        f"{json.dumps(n)}: {{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in evs) + "}"
        for n, evs in threads.items()) + "}}"
    try:
        from_document(from_rtapp(loads(text), "f.json", 2, lambda m: None), "f.json")
    except rtsched.InputError as e:
        assert "f.json" in str(e)


# ----------------------------------------------------------------------------- rt-app's own examples

EXAMPLES = os.environ.get("RTSCHED_RTAPP_EXAMPLES")
REFUSED = {"merge/global.json": "a fragment with no tasks", "merge/resources.json": "a fragment with no tasks",
           "video-long.json": ":6:13: not rt-app JSON", "video-short.json": ":6:13: not rt-app JSON"}


@pytest.mark.skipif(not EXAMPLES, reason="RTSCHED_RTAPP_EXAMPLES (an rt-app checkout's doc/examples) not given")
def test_rtapps_own_examples_convert_validate_and_simulate_under_linux():
    root = Path(EXAMPLES)
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.json"))
    converted, refused = [], []
    for rel in files:
        warned = []
        try:
            ts, kind, _ = read(root / rel, cpus=4, warn=warned.append)
        except rtsched.InputError as e:
            assert rel in REFUSED and REFUSED[rel] in str(e), (rel, str(e))
            refused.append(rel)
            continue
        assert kind == "rtapp" and rel not in REFUSED, rel
        d = from_rtapp(loads((root / rel).read_text()), rel, 4, lambda m: None)
        heads = [c["name"] for c in d.get("chains", [])]
        assert ts.chain_names == heads, rel
        for c in d.get("chains", []):  # each pipeline a chain: its tasks trigger one another
            by = {t["name"]: t for t in d["tasks"]}
            for a, b in zip(c["tasks"], c["tasks"][1:]):
                trig = by[b]["trigger"]
                assert a == trig or a in trig.get("all", []), (rel, c)
        r = rtsched.simulate(ts, "linux", duration="200ms")
        real_time = [t for t in ts.tasks() if not t["fair"]]  # a fair hog (example8) has no job records
        assert (len(r.jobs) > 0) == bool(real_time) and set(r.chains.chain.unique()) <= set(heads), rel
        converted.append(rel)
    assert (len(files), len(converted), len(refused)) == (28, 24, 4), (converted, refused)


# ----------------------------------------------------------------------------- the export read back

CHAIN_SET = """\
platform: {cpus: 2}
run: {duration: 1s}
tasks:
  - {name: head, period: 10ms, wcet: 1ms, priority: 30}
  - {name: mid, trigger: head, deadline: 10ms, segments: [1ms, {suspend: 500us}, 500us], priority: 20}
  - {name: side, period: 20ms, wcet: 2ms, priority: 25}
  - {name: join, trigger: {all: [mid, side]}, deadline: 20ms, wcet: 1ms, priority: 10}
chains:
  - {name: head, tasks: [head, mid, join]}
"""


def test_the_export_of_a_chain_set_reads_back_to_the_same_triggers_segments_and_chain(tmp_path):
    """convert --to rt-app (rtapp_export) then this reader: the triggers, the join, the
    suspension segments, the periods and the chain come back (a differential test of the two
    directions; the export writes `all` as one suspend per member, in the members' order)."""
    from rtsched.convert.rtapp_export import to_rtapp

    f = tmp_path / "set.yaml"
    f.write_text(CHAIN_SET)
    exported = json.dumps(to_rtapp(rtsched.load_taskset(f), "kernel:fifo:file", lambda m: None))
    d, t, warned = convert_text_tmp(exported, cpus=2)
    assert t["head"]["period"] == "10000000ns" and t["side"]["period"] == "20000000ns"
    assert t["mid"]["trigger"] == "head" and t["join"]["trigger"] == {"all": ["mid", "side"]}
    assert t["mid"]["segments"] == ["1000000ns", {"suspend": "500000ns"}, "500000ns"]
    assert [t[n]["priority"] for n in ("head", "mid", "side", "join")] == [30, 20, 25, 10]
    assert {"name": "head", "tasks": ["head", "mid", "join"]} in d["chains"]


def test_the_export_of_a_fork_join_task_is_refused_on_the_way_back(tmp_path):
    """Its lanes wait for their timers and meet at barriers: a task released by a timer and by
    other threads together, which rtsched has not (docs/workloads.md, fork-join tasks)."""
    from rtsched.convert.rtapp_export import to_rtapp
    from test_convert import FORK_JOIN

    f = tmp_path / "fj.yaml"
    f.write_text(FORK_JOIN)
    exported = json.dumps(to_rtapp(rtsched.load_taskset(f), "kernel:fifo:file", lambda m: None))
    with pytest.raises(rtsched.InputError, match="task 'fft.0', event 'barrier0': waits both for its timer"):
        convert_text_tmp(exported, cpus=2)
