"""`rtsched record` sees who wakes whom (issue 54; docs/workloads.md "Who wakes whom"): on
hand-made traces, a thread woken by another thread's activations becomes `trigger:` of it,
the pipelines found are chains, and wake-ups from interrupts or the idle task's wake list
are nobody's. Real recording: tests/test_convert_rtapp_chains_real.py."""

from __future__ import annotations

import pytest

import rtsched
from conftest import run_cli
from rtsched import record as rec

US = 1_000
MS = 1_000_000


def line(t_us, who, pid, cpu, flags, event, rest):
    ts = f"{100 + t_us // 1_000_000}.{t_us % 1_000_000:06d}"
    return f"{who:>16}-{pid:<7} [{cpu:03d}] {flags} {ts}: {event}: {rest}"


def wake(t, waker, wpid, comm, pid, prio, flags="d..3.", cpu=0):
    return line(t, waker, wpid, cpu, flags, "sched_wakeup", f"comm={comm} pid={pid} prio={prio} target_cpu={cpu:03d}")


def switch(t, pc, pp, pprio, state, nc, np_, nprio, cpu=0):
    return line(t, pc, pp, cpu, "d..2.", "sched_switch",
                f"prev_comm={pc} prev_pid={pp} prev_prio={pprio} prev_state={state} ==> next_comm={nc} next_pid={np_} next_prio={nprio}")


def pipeline(n=6, period_us=10_000, mid_waker=None, mid_flags="d..3."):
    """head (tid 10, SCHED_FIFO 30 = prio 69) is woken by its timer (interrupt context on the
    idle CPU) every 10 ms and runs 1 ms; at its end it wakes mid (11, prio 79), which runs 1 ms
    and wakes tail (12, prio 89), which runs 1 ms: all on CPU 0, times in µs."""
    out = []
    for i in range(n):
        t = 1_000 + i * period_us
        out.append(wake(t, "<idle>", 0, "head", 10, 69, flags="d.h2."))
        out.append(switch(t + 5, "swapper/0", 0, 120, "R", "head", 10, 69))
        who, wpid = mid_waker(i) if mid_waker else ("head", 10)
        out.append(wake(t + 1_000, who, wpid, "mid", 11, 79, flags=mid_flags))
        out.append(switch(t + 1_001, "head", 10, 69, "S", "mid", 11, 79))
        out.append(wake(t + 2_000, "mid", 11, "tail", 12, 89))
        out.append(switch(t + 2_001, "mid", 11, 79, "S", "tail", 12, 89))
        out.append(switch(t + 3_001, "tail", 12, 89, "S", "swapper/0", 0, 120))
    return "\n".join(out) + "\n"


def fits_of(text):
    fits = rec.extract(rec.parse_trace(text).events)
    return {f.name: f for f in fits}


def test_waker_is_common_pid_unless_idle_or_interrupt():
    assert rec.waker_of(10, "d..3.") == 10
    assert rec.waker_of(10, None) == 10          # trace-cmd report -R: no flags
    assert rec.waker_of(0, "d..3.") is None      # the idle task: a wake list's IPI
    assert rec.waker_of(10, "d.h2.") is None     # a hard interrupt (a timer) on 10's CPU
    assert rec.waker_of(10, "dNs3.") is None     # a softirq
    assert rec.waker_of(10, "d.H2.") is None     # an NMI within a hard interrupt
    (ev,) = [e for e in rec.parse_trace(wake(5, "head", 10, "mid", 11, 79)).events]
    assert (ev.kind, ev.pid, ev.waker) == ("wakeup", 11, 10)


def test_a_wakeup_traced_by_an_idle_cpus_ipi_is_its_sched_wakings():
    """A wake-up queued to an idle CPU's wake list is traced (sched_wakeup) by that CPU's idle
    task; the sched_waking just before it, on the waker's CPU, names the waker. Controls: without
    the sched_waking the waker is unknown; a sched_waking older than WAKING_NS, or from an
    interrupt, names nobody."""
    waking = line(5, "head", 10, 0, "d..3.", "sched_waking", "comm=mid pid=11 prio=79 target_cpu=001")
    ipi = wake(9, "<idle>", 0, "mid", 11, 79, cpu=1)
    (ev,) = rec.parse_trace(waking + "\n" + ipi).events
    assert (ev.kind, ev.pid, ev.waker) == ("wakeup", 11, 10)
    (ev,) = rec.parse_trace(ipi).events
    assert ev.waker is None
    old = line(5, "head", 10, 0, "d..3.", "sched_waking", "comm=mid pid=11 prio=79 target_cpu=001")
    late = wake(5 + rec.WAKING_NS // 1000 + 1, "<idle>", 0, "mid", 11, 79, cpu=1)
    (ev,) = rec.parse_trace(old + "\n" + late).events
    assert ev.waker is None
    irq = line(5, "head", 10, 0, "d.h3.", "sched_waking", "comm=mid pid=11 prio=79 target_cpu=001")
    (ev,) = rec.parse_trace(irq + "\n" + ipi).events
    assert ev.waker is None


def test_pipeline_gives_two_triggers_and_a_chain():
    """mid is woken by head in 6 of 6 activations, tail by mid in 6 of 6: trigger: head and
    trigger: mid (share 100 %); head's wake-ups come from its timer's interrupt (nobody's),
    so head stays periodic (10 ms); one chain [head, mid, tail], named after its head."""
    f = fits_of(pipeline())
    assert (f["head"].kind, f["head"].period, f["head"].trigger, f["head"].waker) == ("periodic", 10 * MS, None, None)
    assert (f["mid"].trigger, f["mid"].waker_share) == (10, 1.0)
    assert (f["tail"].trigger, f["tail"].waker_share) == (11, 1.0)
    assert rec.pipelines(list(f.values())) == [["head", "mid", "tail"]]
    text = rec.taskset_yaml(list(f.values()), 1, 60 * MS)
    ts = rtsched.parse_taskset(text, "yaml", "rec.yaml")
    trig = {t["name"]: t["trigger"] for t in ts.tasks()}
    assert trig == {"head": None, "mid": {"tasks": ["head"], "all": False}, "tail": {"tasks": ["mid"], "all": False}}
    t = {x["name"]: x for x in ts.tasks()}
    # A triggered task's deadline: the period of the head of its triggers (implicit).
    assert (t["mid"]["deadline_ns"], t["tail"]["deadline_ns"], t["tail"]["wcet_ns"]) == (10 * MS, 10 * MS, 1 * MS)
    assert ts.chains() == [{"name": "head", "tasks": ["head", "mid", "tail"], "communication": None, "deadline_ns": None}]
    assert "woken by head in 100% of its activations" in text
    head, rows = rec.fit_table(list(f.values()), 99)
    notes = {r[0]: (r[4], r[-1]) for r in rows}
    assert notes == {"head": ("periodic", ""), "mid": ("triggered", "trigger: head, 100% of activations"),
                     "tail": ("triggered", "trigger: mid, 100% of activations")}


def test_the_simulated_recording_has_the_pipelines_latency():
    """The recorded set simulates as a chain: on 1 CPU under gfp with the recorded
    priorities, head (996 us: its switch-in 5 us after its wake-up, its switch-out at 1001) →
    mid (1 ms) → tail (1 ms): 2996 us on every instance, the sum of the recorded WCETs."""
    ts = rtsched.parse_taskset(rec.taskset_yaml(list(fits_of(pipeline()).values()), 1, 60 * MS), "yaml", "rec.yaml")
    assert [t["wcet_ns"] for t in ts.tasks()] == [996 * US, 1 * MS, 1 * MS]
    r = rtsched.simulate(ts, "gfp")
    lat = r.summary["chains"]["head"]["latency_ns"]
    assert (lat["max"], lat["mean"], r.summary["chains"]["head"]["instances"]) == (2996 * US, 2996 * US, 6)


def test_wakeups_below_the_share_make_no_trigger():
    """mid woken by head in 4 of 6 activations (67 % < 80 %), by nobody (the idle CPU's wake
    list) in 2: no trigger (mid is periodic, its own task), the note says who woke most;
    tail's trigger (mid) stays."""
    f = fits_of(pipeline(mid_waker=lambda i: ("<idle>", 0) if i in (1, 4) else ("head", 10)))
    assert f["mid"].trigger is None and f["mid"].kind == "periodic" and f["mid"].alternatives == []
    assert (f["mid"].waker, round(f["mid"].waker_share, 2)) == (10, 0.67)
    assert f["tail"].trigger == 11
    notes = {r[0]: r[-1] for r in rec.fit_table(list(f.values()), 99)[1]}
    assert notes["mid"] == "woken by head in 67%"
    assert rec.pipelines(list(f.values())) == [["mid", "tail"]]
    assert rec.warnings(list(f.values())) == []


def test_interrupt_and_idle_wakeups_are_nobodys():
    """Control: the same pipeline with mid's wake-ups in interrupt context on head's CPU, or
    traced by the idle task: mid has no waker and no trigger."""
    for kw in ({"mid_flags": "d.h3."}, {"mid_waker": lambda i: ("<idle>", 0)}):
        f = fits_of(pipeline(**kw))
        assert f["mid"].waker is None and f["mid"].trigger is None, kw
        assert f["tail"].trigger == 11


def test_a_cycle_of_wakers_keeps_one_source():
    """a (tid 10) and b (tid 11) wake each other every time: both shares 100 %; b would close
    the cycle a → b → a, so only a (the smaller tid, the first of equal shares) takes its
    trigger; the written set loads (the format refuses cycles)."""
    out = []
    for i in range(5):
        t = 1_000 + i * 10_000
        out += [wake(t, "b", 11, "a", 10, 69), switch(t + 1, "b", 11, 69, "S", "a", 10, 69),
                wake(t + 5_000, "a", 10, "b", 11, 69), switch(t + 5_001, "a", 10, 69, "S", "b", 11, 69)]
    f = fits_of("\n".join(out) + "\n")
    assert (f["a"].trigger, f["b"].trigger) == (11, None)
    ts = rtsched.parse_taskset(rec.taskset_yaml(list(f.values()), 1, 50 * MS), "yaml", "c.yaml")
    assert [t["trigger"] for t in ts.tasks()] == [{"tasks": ["b"], "all": False}, None]


def test_cli_writes_triggers_and_chains(tmp_path):
    f = tmp_path / "t.txt"
    f.write_text(pipeline())
    out = tmp_path / "o.yaml"
    p = run_cli("record", "--from", f, "-o", out, check=0)
    assert "trigger: head, 100% of activations" in p.stdout, p.stdout
    ts = rtsched.load_taskset(out)
    assert [t["trigger"] and t["trigger"]["tasks"] for t in ts.tasks()] == [None, ["head"], ["mid"]]
    assert ts.chain_names == ["head"]


@pytest.mark.parametrize("args,msg", [
    (["--settle", "2s", "--from", "t.txt"], "--settle applies to a command"),
    (["--settle", "soon", "--", "true"], "--settle: expected 'auto' or a duration"),
])
def test_cli_settle_errors_exit_2(tmp_path, args, msg):
    (tmp_path / "t.txt").write_text(pipeline())
    p = run_cli("record", "-o", "o.yaml", *args, cwd=tmp_path, check=2)
    assert msg in p.stderr and "Traceback" not in p.stderr


class _Keep:
    first_thread = None


def test_settle_start_of_the_window():
    """auto: at the first wake-up of a thread the command started, not before its release;
    none yet: unknown until SETTLE_LIMIT_NS has passed, then the release; a duration: the
    release plus it."""
    k = _Keep()
    assert rec._settle_done(k, 100, None, 100 + rec.SETTLE_LIMIT_NS - 1) is None
    assert rec._settle_done(k, 100, None, 100 + rec.SETTLE_LIMIT_NS) == 100
    k.first_thread = 4_000_000_100
    assert rec._settle_done(k, 100, None, 200) == 4_000_000_100
    k.first_thread = 50
    assert rec._settle_done(k, 100, None, 200) == 100
    assert rec._settle_done(_Keep(), 100, 2 * MS, 150) == 100 + 2 * MS
    assert rec._settle_done(_Keep(), 100, 0, 150) == 100


def suspending_pipeline(n=6, suspend_in=lambda i: True):
    """head (10) → mid (11) → tail (12) as in `pipeline`, but mid runs 1 ms, sleeps (its
    suspension: 500 µs in even periods, 520 µs in odd ones, ended by a timer: interrupt
    context), runs 501 µs, then wakes tail; in the periods where `suspend_in(i)` is false mid
    runs 1501 µs without sleeping."""
    out = []
    for i in range(n):
        t = 1_000 + i * 10_000
        out.append(wake(t, "<idle>", 0, "head", 10, 69, flags="d.h2."))
        out.append(switch(t + 5, "swapper/0", 0, 120, "R", "head", 10, 69))
        out.append(wake(t + 1_000, "head", 10, "mid", 11, 79))
        out.append(switch(t + 1_001, "head", 10, 69, "S", "mid", 11, 79))
        if suspend_in(i):
            d = 500 + 20 * (i % 2)
            out.append(switch(t + 2_001, "mid", 11, 79, "S", "swapper/0", 0, 120))
            out.append(wake(t + 2_001 + d, "<idle>", 0, "mid", 11, 79, flags="d.h2."))
            out.append(switch(t + 2_002 + d, "swapper/0", 0, 120, "R", "mid", 11, 79))
            t += d + 1
        out.append(wake(t + 2_502, "mid", 11, "tail", 12, 89))
        out.append(switch(t + 2_503, "mid", 11, 79, "S", "tail", 12, 89))
        out.append(switch(t + 3_503, "tail", 12, 89, "S", "swapper/0", 0, 120))
    return "\n".join(out) + "\n"


def test_a_triggered_thread_that_suspends_gets_its_segments():
    """mid's activations: 6 woken by head, 6 by its timer (50 % each, below 80 %); grouped
    into jobs (a wake-up by head, then the timer's) they are 6 jobs of 2 runs (100 %): mid is
    `trigger: head` with segments [1 ms, {suspend: [500 us, 520 us]}, 502 us] (runs: p99 of
    their CPU times, switch-in to switch-out: 1001 → 2001 and 2002 + d → 2504 + d µs; the
    suspension: sleep to wake-up, its range); tail stays triggered by mid."""
    f = fits_of(suspending_pipeline())
    assert (f["mid"].trigger, f["mid"].waker_share) == (10, 1.0)
    assert f["mid"].segments == [1 * MS, (500 * US, 520 * US), 502 * US]
    assert f["tail"].trigger == 11
    text = rec.taskset_yaml(list(f.values()), 1, 60 * MS)
    ts = rtsched.parse_taskset(text, "yaml", "s.yaml")
    t = {x["name"]: x for x in ts.tasks()}
    assert (t["mid"]["regions"], t["mid"]["suspensions"], t["mid"]["wcet_ns"]) == (
        [[1 * MS], [502 * US]], [(500 * US, 520 * US)], 1_502 * US)
    assert t["mid"]["trigger"] == {"tasks": ["head"], "all": False}
    notes = {r[0]: r[-1] for r in rec.fit_table(list(f.values()), 99)[1]}
    assert notes["mid"] == "trigger: head, 100% of jobs of 2 runs (self-suspending)"
    assert ts.chains()[0]["tasks"] == ["head", "mid", "tail"]


def test_irregular_suspensions_are_no_segments():
    """Control: mid suspends in only half of its jobs (2 runs in 3 jobs, 1 in 3: no count of
    runs in 80 % of them): no segments, no trigger (woken by head in 67 % of activations)."""
    f = fits_of(suspending_pipeline(suspend_in=lambda i: i % 2 == 0))
    assert f["mid"].segments == [] and f["mid"].trigger is None
    assert rec.pipelines(list(f.values())) == [["mid", "tail"]]


def join_trace(n=5, order=lambda i: (10, 11)):
    """a (tid 10) and b (tid 11), each woken by its timer every 10 ms (interrupt context), run
    1 ms, one after the other on CPU 0 (`order(i)` says which first), and each wakes j (12); j
    waits for both as rt-app's join does: woken by the first, it runs 4 µs and suspends again;
    woken by the second, it runs 1 ms."""
    out = []
    names = {10: "a", 11: "b"}
    for i in range(n):
        t = 1_000 + i * 10_000
        for k, tid in enumerate(order(i)):
            c = names[tid]
            out.append(wake(t, "<idle>", 0, c, tid, 69, flags="d.h2."))
            out.append(switch(t + 1, "swapper/0", 0, 120, "R", c, tid, 69))
            out.append(wake(t + 1_001, c, tid, "j", 12, 79))
            out.append(switch(t + 1_002, c, tid, 69, "S", "j", 12, 79))
            run = 4 if k == 0 else 1_000
            out.append(switch(t + 1_002 + run, "j", 12, 79, "S", "swapper/0", 0, 120))
            t += 1_010 + run
    return "\n".join(out) + "\n"


def test_a_join_is_recognised():
    """j is woken by a and by b in turn (50 % each, below 80 %): a join, `trigger: {all: [a,
    b]}`, its WCET the CPU time of a whole job (4 + 1000 µs), its deadline the longest of its
    triggers' periods (10 ms); the chains are [a, j] and [b, j]."""
    f = fits_of(join_trace())
    assert (f["j"].join, f["j"].trigger, f["j"].join_wcet, f["j"].waker_share) == ([10, 11], None, 1_004 * US, 1.0)
    ts = rtsched.parse_taskset(rec.taskset_yaml(list(f.values()), 1, 50 * MS), "yaml", "j.yaml")
    t = {x["name"]: x for x in ts.tasks()}
    assert t["j"]["trigger"] == {"tasks": ["a", "b"], "all": True}
    assert (t["j"]["wcet_ns"], t["j"]["deadline_ns"]) == (1_004 * US, 10 * MS)
    assert sorted(c["tasks"] for c in ts.chains()) == [["a", "j"], ["b", "j"]]
    notes = {r[0]: r[-1] for r in rec.fit_table(list(f.values()), 99)[1]}
    assert notes["j"] == "trigger: all of a, b, 100% of activations"


def test_one_waker_in_most_activations_is_no_join():
    """Control: in the first period a runs twice and b not at all: j is woken 6 times by a and
    4 by b, b's count below 80 % of a's: no join (and a's 60 % of the activations no trigger)."""
    f = fits_of(join_trace(order=lambda i: (10, 10) if i == 0 else (10, 11)))
    assert f["j"].join == [] and f["j"].trigger is None


def test_chain_names_are_unique():
    assert rec.chain_names([["a", "b"]]) == ["a"]
    assert rec.chain_names([["a", "b"], ["a", "c"]]) == ["a-b", "a-c"]
    assert rec.chain_names([["h", "m", "t", "j"], ["h", "j"], ["x", "y"]]) == ["h-m-t-j", "h-j", "x"]


# Verbatim lines of `trace-cmd report -R -t -l` (3.1.6) of a .dat extracted here from a tracefs
# instance while rt-app ran the exported pipeline: "CPU-0xFLAGS" instead of "[CPU]".
TRACECMD_LATENCY = """\
cpus=2
i54dat:     head-1052    1-0x1 27909.137628072: sched_switch:          prev_comm=head prev_pid=1052 prev_prio=120 prev_state=2 next_comm=python next_pid=951 next_prio=120
i54dat:      mid-1053    0-0x1 27909.137634953: sched_wakeup:          comm=head pid=1052 prio=120 target_cpu=001
i54dat: weakened-19111   0-0x2d 27906.029596420: sched_wakeup:          comm=memfd:sealed-91 pid=11321 prio=120 target_cpu=000
"""


def test_trace_cmd_latency_flags():
    """`report -l`'s flags: 0x1 (interrupts off) keeps the waker (mid woke head); 0x2d has the
    hard-interrupt bit 0x08: the wake-up is nobody's."""
    tr = rec.parse_trace(TRACECMD_LATENCY)
    assert tr.unparsed == 0 and tr.cpus == 2
    got = [(e.kind, e.cpu, e.pid, e.waker) for e in tr.events]
    assert got == [("wakeup", 0, 11321, None), ("switch", 1, 1052, None), ("wakeup", 0, 1052, 1053)]
    assert [rec._hex_flags(h) for h in ("1", "8", "10", "40", "2d", "80")] == [".", "h", "h", "h", "h", "."]


def test_window_start_when_the_recording_ends():
    """The command ended before the window's start was known: from its first thread's wake-up,
    else from its release; never after the end; and how, as the report says it."""
    k = _Keep()
    assert rec._window_start(k, 100, 900, None, None) == (100, "no thread of its own started")
    assert rec._window_start(k, 100, 100 + rec.SETTLE_LIMIT_NS, 100, None) == (100, "no thread of its own started within 30 s")
    k.first_thread = 500
    assert rec._window_start(k, 100, 900, None, None) == (500, "its first thread woke")
    assert rec._window_start(_Keep(), 100, 900, 2_000_000_100, 2_000_000_000) == (900, "--settle 2.00 s")


def woken_trace(seq, runs=lambda i: 1_000, again=None):
    """a (tid 10) and b (11), each woken by its timer every 10 ms on CPUs 0 and 1, run 1 ms
    (b from 1.5 ms); j (12, CPU 0) is woken in period i by each of `seq[i]` ("a", "b") at
    that one's end and runs `runs(i)` µs after each. With `again` (a period -> True), b's wake
    comes 2 µs after j was switched in by a's, before j slept (one activation, both wakers)."""
    out = []
    ends = {"a": 1_001, "b": 2_501}
    tids = {"a": 10, "b": 11}
    for i, who in enumerate(seq):
        t = 1_000 + i * 10_000
        for c, cpu, at in (("a", 0, t), ("b", 1, t + 1_500)):
            out.append(wake(at, "<idle>", 0, c, tids[c], 69, flags="d.h2.", cpu=cpu))
            out.append(switch(at + 1, f"swapper/{cpu}", 0, 120, "R", c, tids[c], 69, cpu=cpu))
            out.append(switch(at + 1_001, c, tids[c], 69, "S", f"swapper/{cpu}", 0, 120, cpu=cpu))
        if again and again(i):
            out.append(wake(t + ends["a"], "a", 10, "j", 12, 79))
            out.append(switch(t + ends["a"] + 1, "swapper/0", 0, 120, "R", "j", 12, 79))
            out.append(wake(t + ends["a"] + 3, "b", 11, "j", 12, 79, cpu=1))
            out.append(switch(t + ends["a"] + 1 + runs(i), "j", 12, 79, "S", "swapper/0", 0, 120))
            continue
        for k, c in enumerate(who):
            at = t + ends[c] + 1_100 * k
            out.append(wake(at, c, tids[c], "j", 12, 79))
            out.append(switch(at + 1, "swapper/0", 0, 120, "R", "j", 12, 79))
            out.append(switch(at + 1 + runs(i) // len(who), "j", 12, 79, "S", "swapper/0", 0, 120))
    return "\n".join(sorted(out, key=lambda s: s.split(": ")[0].split()[-1])) + "\n"


def test_a_join_woken_by_both_within_one_activation():
    """Each of j's 6 activations is started by a's wake-up and woken again by b's before j
    slept (the kernel traces a wake-up of a thread that has not yet reached schedule()): a
    wake from each of a and b precedes every job — a join `trigger: {all: [a, b]}`, though a
    alone started 100 % of them. Control: without b's second wake, j is `trigger: a`."""
    f = fits_of(woken_trace(["a"] * 6, again=lambda i: True))
    assert [a.wakers for a in f["j"].activations] == [(10, 11)] * 6
    assert (f["j"].join, f["j"].trigger, f["j"].join_wcet, f["j"].waker_share) == ([10, 11], None, 1 * MS, 1.0)
    ts = rtsched.parse_taskset(rec.taskset_yaml(list(f.values()), 2, 60 * MS), "yaml", "j.yaml")
    assert {x["name"]: x for x in ts.tasks()}["j"]["trigger"] == {"tasks": ["a", "b"], "all": True}
    f = fits_of(woken_trace(["a"] * 6))
    assert (f["j"].join, f["j"].trigger) == ([], 10)


def test_a_thread_woken_by_one_of_two_is_alternatives(tmp_path):
    """j is woken by a in 4 of 8 periods and by b in the other 4, in no order (a a b a b b
    a b), and runs 1 ms each time: no task woke 80 %, and the activations form no rounds of
    both (a twice before b): alternatives a (50 %) or b (50 %), no trigger, no join; j stays
    its own task (sporadic, its 10 ms minimum inter-arrival), written without a trigger and
    warned. Controls: strictly in turn (a, b) with the first activation of each pair short
    (4 µs) is the join; strictly in turn with a whole job each time is still alternatives."""
    seq = [["a"], ["a"], ["b"], ["a"], ["b"], ["b"], ["a"], ["b"]]
    f = fits_of(woken_trace(seq))
    j = f["j"]
    assert (j.alternatives, j.join, j.trigger, j.segments) == ([(10, 0.5), (11, 0.5)], [], None, [])
    assert j.kind == "sporadic" and j.min_interarrival == 8_500 * US
    notes = {r[0]: r[-1] for r in rec.fit_table(list(f.values()), 99)[1]}
    assert notes["j"] == "woken by a (50%) or b (50%): alternatives, no trigger (warned)"
    (w,) = rec.warnings(list(f.values()))
    assert w.startswith("j: woken by a (50%) or b (50%), one of them per activation") and "no chain" in w
    ts = rtsched.parse_taskset(rec.taskset_yaml(list(f.values()), 2, 80 * MS), "yaml", "alt.yaml")
    assert {x["name"]: x for x in ts.tasks()}["j"]["trigger"] is None and ts.chains() == []
    (tmp_path / "t.txt").write_text(woken_trace(seq))
    p = run_cli("record", "--from", tmp_path / "t.txt", "-o", tmp_path / "o.yaml", check=0)
    assert "rtsched record: warning: j: woken by a (50%) or b (50%)" in p.stderr, p.stderr
    # the join: each period a then b, j's first activation short
    f = fits_of(woken_trace([["a", "b"]] * 5, runs=lambda i: 2_000))
    assert f["j"].join == [] and f["j"].alternatives  # 1 ms each: a whole job each time
    short = fits_of(join_trace())
    assert short["j"].join == [10, 11] and short["j"].alternatives == []


def timer_suspending(n=6, runs=(1_000, 500), gaps=lambda i: (500 + 10 * (i % 2),), per=lambda i: 2, period_us=10_000):
    """p (tid 20, SCHED_FIFO 30) on CPU 0: in period i its timer (interrupt context) wakes it
    `per(i)` times: it runs runs[0] µs, sleeps gaps(i)[0] µs (woken by its timer again), runs
    runs[1] µs, … then sleeps to its next period."""
    out = []
    for i in range(n):
        t = 1_000 + i * period_us
        for r in range(per(i)):
            out.append(wake(t, "<idle>", 0, "p", 20, 69, flags="d.h2."))
            out.append(switch(t + 1, "swapper/0", 0, 120, "R", "p", 20, 69))
            out.append(switch(t + 1 + runs[r], "p", 20, 69, "S", "swapper/0", 0, 120))
            if r + 1 < per(i):
                t += 1 + runs[r] + gaps(i)[r]
    return "\n".join(out) + "\n"


def test_a_periodic_thread_that_suspends_gets_its_segments():
    """p runs 1 ms, sleeps 500 or 510 µs and runs 500 µs every 10 ms, each run woken by its
    timer: its 12 activations alone are not periodic (1.5 and 8.5 ms apart), two per job are:
    periodic 10 ms with segments [1 ms, {suspend: [500, 510 us]}, 500 us] (the cut whose jobs
    span least, not [500 us, 8.5 ms, 1 ms]), WCET 1.5 ms. Controls: a second run in 3 of 8
    periods gives no segments (sporadic); a plain periodic thread has none."""
    f = fits_of(timer_suspending())["p"]
    assert (f.kind, f.period, f.segments, f.wcet) == ("periodic", 10 * MS, [1 * MS, (500 * US, 510 * US), 500 * US], 1_500 * US)
    assert (f.exec_min, f.exec_max, f.in_tolerance) == (1_500 * US, 1_500 * US, 1.0)
    ts = rtsched.parse_taskset(rec.taskset_yaml([f], 1, 60 * MS), "yaml", "p.yaml")
    (t,) = ts.tasks()
    assert (t["period_ns"], t["regions"], t["suspensions"], t["wcet_ns"]) == (
        10 * MS, [[1 * MS], [500 * US]], [(500 * US, 510 * US)], 1_500 * US)
    assert {r[0]: r[-1] for r in rec.fit_table([f], 99)[1]}["p"] == "periodic, 2 runs per job (self-suspending)"
    # three runs a job
    f = fits_of(timer_suspending(runs=(300, 400, 500), gaps=lambda i: (200, 700), per=lambda i: 3))["p"]
    assert f.segments == [300 * US, (200 * US, 200 * US), 400 * US, (700 * US, 700 * US), 500 * US]
    f = fits_of(timer_suspending(n=8, per=lambda i: 2 if i in (1, 2, 5) else 1))["p"]
    assert f.segments == [] and f.kind == "sporadic"
    f = fits_of(timer_suspending(per=lambda i: 1))["p"]
    assert (f.kind, f.period, f.segments) == ("periodic", 10 * MS, [])
