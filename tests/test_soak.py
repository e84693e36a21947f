"""Soak: a long real run at 0.5·m on each backend, watched from outside (docs/real-runs.md,
"Soak"). Marked `slow`: plain `pytest` leaves it out; `make soak` runs it on every backend
available here, `make test` (CI) on the testbed, kernel:fifo and kernel:deadline.

RTSCHED_SOAK_SECONDS sets the run's length (default 600, the longest a real run may be);
RTSCHED_SOAK_BACKENDS (comma-separated) which backends run (default: all of SOAK_BACKENDS).

While `rtsched run` works in its own process, this test samples every 100 ms the host steal of
each CPU (/proc/stat) and every second the run's resident memory (psutil), and runs the latency
probe (`rtsched latency`'s, at SCHED_FIFO 99, above every thread of the run, 1 ms cycles, without
the cyclictest PM QoS request) to see when a CPU was taken from every thread of the guest. Then,
from the run's results and per-job records:

1. **Accounting.** The records hold every job the task set releases in the window, each
   (task, job) once with job indices 0..n-1; released = finished + aborted + pending at end, and
   a job still pending at the end whose deadline had passed is counted as missed; the run's
   summary counts the same jobs and misses.
2. **Misses.** A job's window reaches from its release to the later of its finish and its
   deadline, placed on CLOCK_MONOTONIC by the run's own time zero (`host.time_zero_monotonic_ns`;
   the first 100 ms sample that sees the run's `rtsched-*` threads and the first that no longer
   does, less the duration, must agree with it within 1 s). A miss is put down to the machine
   only if, inside its window, either
   - the host stole CPU time (any CPU, at least one tick of /proc/stat; the window's end is
     taken one sample later, as steal is accounted at a CPU's next tick), or
   - a CPU was taken from the probe at SCHED_FIFO 99 for at least as long as the job was late:
     what nothing the run does can cause (its threads are at most SCHED_FIFO 89 and use half of
     each CPU, far from the kernel's RT throttling), but a vCPU the host stopped without
     counting steal, or a long non-preemptible stretch of the guest kernel, does. On
     kernel:fifo (partitioned, fixed priorities) the outage need only be as long as the job was
     late less the work of the higher-priority jobs released on its CPU while it waited
     (`hp_work_released`): an outage of X delays a job by up to X plus the higher-priority
     work released in that extra time, so a job that had slack can end later than X. Not under
     kernel:deadline: SCHED_DEADLINE threads run before any SCHED_FIFO one, so there the probe
     is held off by the run's own jobs (PROBE_BLIND); there instead
   - the job was throttled by an overrun: its thread, or that of the task's missed job before
     it, was charged more CPU time than its reservation's runtime (`overrun_chains`; the job's
     `exec_ns`, which on the kernel backends holds what its thread was charged since the
     previous job's record, its wake-up and the bookkeeping between jobs too), or
   - the job was held off a CPU that had room for it: between its release and the earlier of
     its finish and its deadline, a CPU had room for all its work that no job as urgent was
     using, and its task's previous job had ended (`kept_waiting_with_room`; a SCHED_DEADLINE
     thread with the earliest deadline is never kept off such a CPU, so its CPU, or the one
     its wake-up timer fires on, was stopped), or it is one of the misses of its task right
     after such a one. A probe cycle
     late by L >= OUTAGE_NS took its CPU from [due - interval, due + L]; the outage counted for
     a job is that time inside [release - LONGEST_PERIOD, end of window] (backlog from just
     before the release delays it as well) on the CPUs it ran on (kernel:fifo, partitioned) or
     on any one CPU (the global backends).
   Any other miss fails the test, except on kernel:other (SCHED_OTHER promises no deadline: its
   misses are reported, not asserted). The report says how often a window as wide as the
   misses', placed anywhere in the run, would hold steal or an outage by chance.
3. **Memory.** The run holds no per-job records (`rtsched run` folds each job into the
   summaries and writes it to --jobs-parquet as it ends); what it keeps per job is a few
   8-byte measurement samples and, for the exact p99s, the largest 1% of the response times
   (SAMPLE_BYTES_PER_JOB allows for more). Apart from that its memory must not grow: the
   median RSS of the last quarter of the run may exceed that of the first quarter by at most
   that for the jobs released between the two quarters' middles, plus RSS_SLACK_BYTES.

The numbers (misses and which were explained, steal in total and the share of 100 ms samples
with steal, RSS first and last quarter, released / finished / aborted / pending) are printed
and, with RTSCHED_SOAK_REPORT=DIR, written there as JSON, one file per backend.
"""

import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import pytest
import yaml

import rtsched
from conftest import REAL, RTSCHED

pytestmark = [pytest.mark.slow, *REAL]

SOAK_S = float(os.environ.get("RTSCHED_SOAK_SECONDS", "600"))
SOAK_BACKENDS = ["testbed:gedf", "kernel:fifo", "kernel:deadline", "kernel:other"]
SELECTED = [b for b in os.environ.get("RTSCHED_SOAK_BACKENDS", ",".join(SOAK_BACKENDS)).split(",") if b]

# U = 1.0 on 2 CPUs (0.5·m), 0.5 per CPU through the `cpu` fields (kernel:fifo runs them
# partitioned; the testbed's global EDF and SCHED_DEADLINE ignore them). 245 jobs a second.
SOAK = """platform: {cpus: 2}
run: {duration: 10s, seed: 17}
tasks:
  - {name: a, period: 10, wcet: 2, cpu: 0}
  - {name: b, period: 20, wcet: 4, cpu: 1}
  - {name: c, period: 25, wcet: 5, cpu: 0}
  - {name: d, period: 40, wcet: 8, cpu: 1}
  - {name: e, period: 50, wcet: 5, cpu: 0}
  - {name: f, period: 100, wcet: 10, cpu: 1}
"""

SAMPLE_S = 0.1
# The probe watching the run: its cycle, priority (above the run's threads: kernel:fifo maps
# priorities onto 10..89, the testbed runs at 50 and 60), the shortest lateness counted as the
# CPU taken away (on this VM quiet: p99.9 0.1 ms, a few 1-4 ms stalls a minute), and how long
# before the run it starts and after the run it ends.
PROBE_INTERVAL_NS = 1_000_000
PROBE_PRIO = 99
OUTAGE_NS = 1_000_000
PROBE_MARGIN_S = 5.0
LONGEST_PERIOD_NS = 100_000_000
PARTITIONED = {"kernel:fifo"}
# SCHED_DEADLINE threads run before any SCHED_FIFO thread: under kernel:deadline the probe is
# held off by the run's own jobs, and what it sees says nothing about the machine.
PROBE_BLIND = {"kernel:deadline"}
RSS_SLACK_BYTES = 8 << 20
# A job leaves a few 8-byte measurement samples until the run ends (testbed: release jitter,
# the decisions it causes, preemption latencies, 21 B a job measured in a 60 s run; kernel
# backends: start delay and CPU overhead, 16 B) and, for the p99s, the largest 1% of the
# response times (0.16 B; every one, 8 B, until 2026-11-24).
SAMPLE_BYTES_PER_JOB = 40


def steal_ticks():
    """Per CPU, the host's steal so far in USER_HZ ticks (/proc/stat, cpuN lines, 8th value)."""
    with open("/proc/stat") as f:
        return [int(line.split()[8]) for line in f if line.startswith("cpu") and line[3].isdigit()]


def irq_time_accounting():
    """Whether this kernel accounts interrupt time apart from the running task (None: unknown)."""
    import gzip

    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            return any(line.strip() == "CONFIG_IRQ_TIME_ACCOUNTING=y" for line in f)
    except OSError:
        return None


# Threads of the process that are not the run's: the Parquet encoder lives from before the
# run (--jobs-parquet is opened first) until the file is closed after it.
NOT_THE_RUN = {"rtsched-parquet"}


def has_run_threads(pid):
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                comm = f.read().strip()
            if comm.startswith("rtsched-") and comm not in NOT_THE_RUN:
                return True
    except OSError:
        pass
    return False


class Watch(threading.Thread):
    """Samples steal (every SAMPLE_S) and the process's RSS (every second) until stopped."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        import psutil

        self.proc = psutil.Process(pid)
        self.pid = pid
        self.stop = threading.Event()
        self.steal = []  # (monotonic s, [ticks per CPU])
        self.rss = []  # (monotonic s, bytes)
        self.threads_seen = None  # first sample that saw the run's threads
        self.threads_gone = None  # first sample after that which did not

    def run(self):
        last_rss = 0.0
        while not self.stop.is_set():
            t = time.monotonic()
            self.steal.append((t, steal_ticks()))
            if self.threads_seen is None:
                if has_run_threads(self.pid):
                    self.threads_seen = t
            elif self.threads_gone is None and not has_run_threads(self.pid):
                self.threads_gone = t
            if t - last_rss >= 1.0:
                try:
                    self.rss.append((t, self.proc.memory_info().rss))
                except Exception:  # noqa: BLE001 - the process has ended
                    pass
                last_rss = t
            self.stop.wait(max(0.0, SAMPLE_S - (time.monotonic() - t)))


class Probe(threading.Thread):
    """The latency probe for the whole run (the Rust probe releases the GIL while it runs)."""

    def __init__(self, seconds):
        super().__init__(daemon=True)
        self.duration_ns = int(seconds * 1e9)
        self.result = self.error = self._outages = None

    def run(self):
        try:
            self.result = rtsched._core.latency_probe(self.duration_ns, PROBE_INTERVAL_NS, PROBE_PRIO, None, False)
        except Exception as e:  # noqa: BLE001 - reported by the test
            self.error = e

    def outages(self):
        """Per CPU, merged [start, end) intervals (monotonic ns) when the CPU was taken from the probe
        (worked out once)."""
        if self._outages is not None:
            return self._outages
        start, samples = self.result
        out = []
        for lat in samples:
            lat = np.asarray(lat, dtype=np.int64)
            due = start + (np.arange(len(lat), dtype=np.int64) + 1) * PROBE_INTERVAL_NS
            k = lat >= OUTAGE_NS
            a, b = due[k] - PROBE_INTERVAL_NS, due[k] + lat[k]
            merged = []
            for x, y in zip(a.tolist(), b.tolist()):
                if merged and x <= merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], y)
                else:
                    merged.append([x, y])
            out.append(np.array(merged, dtype=np.int64).reshape(-1, 2))
        self._outages = out
        return out


def outage_within(iv, a, b):
    """Time (ns) of the merged intervals `iv` inside [a, b]."""
    if len(iv) == 0:
        return 0
    return int(np.clip(np.minimum(iv[:, 1], b) - np.maximum(iv[:, 0], a), 0, None).sum())


def released_per_task(ts_yaml, duration_ns):
    ts = rtsched.parse_taskset(ts_yaml, "yaml", "soak.yaml")
    return ts, ts.with_run(duration_ns=duration_ns, seed=None, on_miss=None).estimated_jobs


def soak(backend, tmp_path, seconds=SOAK_S, beside=None):
    """Run SOAK for `seconds` on `backend`, watched; `beside(launch)`, if given, runs in a thread
    once the run is launched (its monotonic launch time as argument)."""
    path = tmp_path / "soak.yaml"
    path.write_text(SOAK)
    dur_ns = int(seconds * 1e9)
    ts, released = released_per_task(SOAK, dur_ns)
    out, jobs_pq = tmp_path / "r.json", tmp_path / "jobs.parquet"
    probe = Probe(seconds + 2 * PROBE_MARGIN_S)
    probe.start()
    time.sleep(PROBE_MARGIN_S)
    t_launch = time.monotonic()
    p = subprocess.Popen([RTSCHED, "run", path, "-b", backend, "--duration", f"{seconds:g}s", "--json", out,
                          "--jobs-parquet", jobs_pq], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    w = Watch(p.pid)
    w.start()
    side = threading.Thread(target=beside, args=(t_launch,), daemon=True) if beside else None
    if side:
        side.start()
    t_ended = None
    try:
        stdout, stderr = p.communicate(timeout=seconds + 300)
        t_ended = time.monotonic()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        w.stop.set()
        w.join()
        t_exit = time.monotonic()
        if side:
            side.join()
        probe.join()
    if w.threads_seen is not None and w.threads_gone is None:
        # The process ended before a sample saw its run's threads gone: it holds no records, so
        # it writes its outputs and exits in less than one sample period after them.
        w.threads_gone = t_ended
    assert p.returncode == 0, stderr
    assert w.threads_seen is not None, "never saw the run's threads"
    assert probe.error is None, probe.error
    (doc,) = json.loads(out.read_text())["runs"]
    jobs = rtsched.read_jobs(jobs_pq)
    # The run's time zero on CLOCK_MONOTONIC (time.monotonic's clock), as the run reports it,
    # checked against what the samples saw: its threads appear just before it (setup) and end
    # just after zero + duration (each stops within a chunk of work).
    t0_ns = int(doc["measurements"]["host.time_zero_monotonic_ns"])
    assert w.threads_gone is not None, "never saw the run's threads end"
    t0_ends = (w.threads_seen, w.threads_gone - seconds)
    assert all(abs(x - t0_ns / 1e9) <= 1.0 for x in t0_ends), ("the samples do not agree with the run's time zero", t0_ns, t0_ends)
    p_start, p_samples = probe.result
    p_end = p_start + min(len(x) for x in p_samples) * PROBE_INTERVAL_NS
    assert p_start < t0_ns and p_end > t0_ns + dur_ns, ("the probe did not cover the run", p_start, p_end, t0_ns)
    return dict(ts=ts, released=released, doc=doc, jobs=jobs, watch=w, probe=probe, t_launch=t_launch, t_exit=t_exit,
                stdout=stdout, dur_ns=dur_ns, t0_ns=t0_ns, t0_ends=t0_ends)


def steal_between(watch, a, b):
    """Ticks of steal (all CPUs) in the sample intervals that overlap [a, b] (monotonic s; a and
    b may be arrays)."""
    t = np.array([s[0] for s in watch.steal])
    tot = np.array([sum(s[1]) for s in watch.steal])
    i = np.maximum(0, np.searchsorted(t, a, side="right") - 1)
    j = np.minimum(len(t) - 1, np.searchsorted(t, b, side="left"))
    return tot[j] - tot[i]


def explain_misses(backend, r):
    """Each missed job of the run `r` (from `soak`) against the host's steal and the probe's
    outages in its window (module docstring, 2.)."""
    jobs, w, dur_ns, t0_ns = r["jobs"], r["watch"], r["dur_ns"], r["t0_ns"]
    t0 = t0_ns / 1e9
    missed = jobs[jobs.missed]
    rel = missed.release_ns.to_numpy(dtype="int64")
    fin = missed.finish_ns.fillna(dur_ns).to_numpy(dtype="int64")
    ends = np.maximum(fin, missed.deadline_ns.to_numpy(dtype="int64"))
    late = fin - missed.deadline_ns.to_numpy(dtype="int64")
    stolen = steal_between(w, t0 + rel / 1e9, t0 + ends / 1e9 + SAMPLE_S)
    outages = r["probe"].outages()
    ncpu = len(outages)
    taken = np.array([max(outage_within(outages[c], t0_ns + a - LONGEST_PERIOD_NS, t0_ns + b)
                          for c in (cpus if backend in PARTITIONED and len(cpus) else range(ncpu)))
                      for a, b, cpus in zip(rel, ends, missed.cpus)], dtype=np.int64)
    hp = hp_work_released(r["ts"], jobs, missed, fin) if backend in PARTITIONED else np.zeros(len(missed), dtype=np.int64)
    by_outage = outage_explains(taken, late, hp) & (backend not in PROBE_BLIND)
    by_overrun = np.zeros(len(missed), dtype=bool)
    by_idle = np.zeros(len(missed), dtype=bool)
    if backend.startswith("kernel:deadline"):
        by_overrun = overrun_chains(r["ts"], jobs).loc[missed.index].to_numpy()
        idle = pd.Series(False, index=jobs.index)
        idle.loc[missed.index] = kept_waiting_with_room(jobs, missed, r["ts"].cpus)
        by_idle = overrun_chains(r["ts"], jobs, roots=idle).loc[missed.index].to_numpy() & ~by_overrun
    # How often a window as wide as a miss's would contain steal or an outage by chance: the
    # check is only as sharp as these are small.
    width = (float(np.max(ends - rel)) / 1e9 if len(missed) else 0.1) + LONGEST_PERIOD_NS / 1e9
    starts = np.arange(t0, t0 + dur_ns / 1e9 - width, width)
    chance = float(np.mean(steal_between(w, starts, starts + width + SAMPLE_S) > 0)) if len(starts) else float("nan")
    chance_outage = (float(np.mean([any(outage_within(o, int(x * 1e9), int((x + width) * 1e9)) > 0 for o in outages) for x in starts]))
                     if len(starts) else float("nan"))
    run_outages = [o[(o[:, 1] > t0_ns) & (o[:, 0] < t0_ns + dur_ns)] for o in outages]
    per_sample = np.diff(np.array([sum(s[1]) for s in w.steal]))
    unexplained = (stolen == 0) & ~by_outage & ~by_overrun & ~by_idle
    report = dict(missed=int(len(missed)), missed_unexplained=int(unexplained.sum()),
                  missed_explained_by_steal=int((stolen > 0).sum()), missed_explained_by_outage=int(by_outage.sum()),
                  missed_explained_by_overrun=int(by_overrun.sum()), missed_explained_by_idle_cpu=int(by_idle.sum()),
                  steal_ms=(sum(w.steal[-1][1]) - sum(w.steal[0][1])) * 1000 / os.sysconf("SC_CLK_TCK"),
                  samples_with_steal=float(np.mean(per_sample > 0)), probe_blind=backend in PROBE_BLIND,
                  outages_per_cpu=[len(o) for o in run_outages],
                  longest_outage_ms=max([float((o[:, 1] - o[:, 0]).max()) / 1e6 for o in run_outages if len(o)], default=0.0),
                  window_s=width, chance_window_has_steal=chance, chance_window_has_outage=chance_outage,
                  missed_steal_ticks=stolen[:50].tolist(), missed_late_ms=(late[:50] / 1e6).tolist(),
                  missed_outage_ms=(taken[:50] / 1e6).tolist(), missed_hp_work_ms=(hp[:50] / 1e6).tolist())
    return missed[unexplained], report


def outage_explains(taken, late, hp_work):
    """Whether CPU time `taken` from every thread of the run (ns, an outage) explains a job late by
    `late` that waited for `hp_work` of higher-priority work released after it (0 where that is
    not bounded so, as under global EDF). On one CPU under fixed priorities, with the same
    releases and execution times, an outage of X leaves the level-i work at any instant at most
    X behind where it would be; so a job that would have ended at f <= its deadline ends at most
    X plus the higher-priority work released in (f, end] later, and late <= X + hp_work. A miss
    later than that had another cause."""
    return taken >= np.maximum(late - hp_work, 1)


def hp_work_released(ts, jobs, missed, fin):
    """Per missed job (kernel:fifo, partitioned, rate-monotonic, its default assignment): the CPU
    time (`exec_ns`) of the jobs of tasks on its CPU with shorter periods released after it and
    before `fin`, its finish (the run's end if it never finished). A job that did not finish
    counts 0, which only makes `outage_explains` stricter."""
    tasks = {t["name"]: t for t in ts.tasks()}
    exec_ns = jobs.exec_ns.fillna(0).to_numpy(dtype="int64")
    rel_all = jobs.release_ns.to_numpy(dtype="int64")
    out = np.zeros(len(missed), dtype=np.int64)
    for k, (task, rel, end) in enumerate(zip(missed.task, missed.release_ns, fin)):
        me = tasks[task]
        hp = [n for n, t in tasks.items() if t["cpu"] == me["cpu"] and t["period_ns"] < me["period_ns"]]
        sel = jobs.task.isin(hp).to_numpy() & (rel_all > rel) & (rel_all < end)
        out[k] = exec_ns[sel].sum()
    return out


def kept_waiting_with_room(jobs, missed, m):
    """Per missed job (kernel:deadline, global EDF on `m` CPUs): whether, between its release
    and the earlier of its finish and its deadline, there was room for all its work that the
    run's other jobs could not have taken. Room is time when fewer than `m` other jobs with a
    deadline no later than its own were between their start and their finish (more than were
    running, so room is counted short) and the job before it of its task had finished. A
    SCHED_DEADLINE thread with the earliest deadlines is never kept off a CPU that runs
    nothing more urgent, and the job, having missed, ran less than its work in that room, so
    for some of it the thread was held off its CPU by something outside the run: its wake-up
    timer's CPU or its own CPU stopped (a vCPU the host did not run, counting no steal) or
    taking no interrupt. Had it run in all the room, it would have ended by its deadline. A
    job throttled is the overrun rule's (what it was charged includes the time before its
    start). Sound only where every job that ran is recorded (a kernel run releases nothing
    after its window; the simulator does, unrecorded)."""
    rel = jobs.release_ns.to_numpy(dtype="int64")
    start = jobs.start_ns.to_numpy(dtype="float64")
    fin = jobs.finish_ns.to_numpy(dtype="float64")
    fin = np.where(np.isnan(fin), np.inf, fin)
    dl = jobs.deadline_ns.to_numpy(dtype="int64")
    pos = {k: i for i, k in enumerate(zip(jobs.task, jobs.job))}
    out = []
    for idx, j in missed.iterrows():
        i = jobs.index.get_loc(idx)
        hi = min(fin[i], dl[i])
        if np.isnan(start[i]) or hi <= rel[i] or not j.exec_ns > 0:
            out.append(False)
            continue
        lo = rel[i]
        sel = (dl <= dl[i]) & (start < hi) & (fin > lo)
        sel[i] = False
        a, b = np.maximum(start[sel], lo), np.minimum(fin[sel], hi)
        ev = [(x, 1) for x in a] + [(x, -1) for x in b]
        p = pos.get((j.task, j.job - 1))
        if p is not None and fin[p] > lo:  # its thread is still busy with the job before
            ev += [(lo, m), (min(fin[p], hi), -m)]
        ev.sort()
        room, count, t = 0.0, 0, lo
        for x, d in ev:
            if count < m:
                room += x - t
            count += d
            t = x
        if count < m:
            room += hi - t
        out.append(room >= j.exec_ns)
    return np.array(out, dtype=bool)


def overrun_chains(ts, jobs, roots=None):
    """Per job (kernel:deadline): whether it was throttled by an overrun, its own or one it
    inherited. A job whose thread was charged more CPU time than its reservation's runtime
    (`exec_ns` beyond `rtsched._core.sched_deadline_runtimes`: its work, done by calibrated
    loops, and `overhead_ns`, what the thread was charged outside the work since the previous
    job's record; the excess is time the CPU spent elsewhere, interrupts or a stall, charged
    to the thread) exhausted the runtime and was throttled to its next period. The
    reservation's deadline then stays behind and catches up by the allowance (10%, at least
    250 us) per period, so the jobs after it miss too until it has: a miss is put down to an
    overrun if the job overran or the job before it of the same task missed and is put down to
    one. With `roots` (a boolean per job), the chains start from those misses instead."""
    runtimes = {t["name"]: sum(rt) for t, rt in zip(ts.tasks(), rtsched._core.sched_deadline_runtimes(ts))}
    over = jobs.exec_ns.to_numpy() > jobs.task.map(runtimes).to_numpy()
    if roots is not None:  # e.g. `kept_waiting_with_room`
        over = roots.loc[jobs.index].to_numpy(dtype=bool)
    out = np.zeros(len(jobs), dtype=bool)
    for _, g in jobs.assign(_over=over, _i=np.arange(len(jobs))).sort_values(["task", "job"]).groupby("task"):
        chain = False
        for i, o, m in zip(g._i, g._over, g.missed):
            chain = bool(m) and (o or chain)
            out[i] = chain
    return pd.Series(out, index=jobs.index)


@pytest.mark.parametrize("backend", SOAK_BACKENDS)
def test_soak_at_half_load(backend, tmp_path):
    if backend not in SELECTED:
        pytest.skip(f"not in RTSCHED_SOAK_BACKENDS ({','.join(SELECTED)})")
    r = soak(backend, tmp_path)
    jobs, doc, w, dur_ns, t0_ends = r["jobs"], r["doc"], r["watch"], r["dur_ns"], r["t0_ends"]
    t0 = r["t0_ns"] / 1e9
    summary = doc["total"]

    # 1. Accounting.
    finished = jobs.finish_ns.notna() & ~jobs.aborted
    aborted = jobs.aborted.astype(bool)
    pending = jobs.finish_ns.isna() & ~aborted
    counts = dict(released=r["released"], records=len(jobs), finished=int(finished.sum()), aborted=int(aborted.sum()),
                  pending=int(pending.sum()))
    assert counts["records"] == r["released"] == summary["jobs"] == doc["counters"]["releases"], (counts, summary, doc["counters"])
    assert (summary["completed"], summary["aborted"]) == (counts["finished"], counts["aborted"]), (counts, summary)
    assert not jobs.duplicated(["task", "job"]).any(), "a job recorded twice"
    for task, g in jobs.groupby("task"):
        assert sorted(g.job) == list(range(len(g))), f"task {task}: job indices with gaps"
    assert counts["finished"] + counts["aborted"] + counts["pending"] == counts["released"], counts
    late_pending = jobs[pending & (jobs.deadline_ns < dur_ns)]
    assert late_pending.missed.all(), ("jobs pending past their deadline not counted as missed", late_pending)
    assert int(jobs.missed.sum()) == summary["missed"], (int(jobs.missed.sum()), summary["missed"])

    # 2. Misses against the host's steal and the CPU outages the probe saw.
    unexplained, misses = explain_misses(backend, r)

    # 3. Memory.
    rss_t = np.array([x[0] for x in w.rss]) - t0
    rss = np.array([x[1] for x in w.rss], dtype="float64")
    q = SOAK_S / 4
    first, last = rss[(rss_t >= 0) & (rss_t < q)], rss[(rss_t >= 3 * q) & (rss_t < SOAK_S)]
    between = int(((jobs.release_ns >= dur_ns / 8) & (jobs.release_ns < dur_ns * 7 / 8)).sum())
    allowed = between * SAMPLE_BYTES_PER_JOB + RSS_SLACK_BYTES
    growth = float(np.median(last) - np.median(first))

    report = dict(backend=backend, seconds=SOAK_S, **counts, max_tardiness_ms=float(summary["max_tardiness_ns"]) / 1e6,
                  steal_ms_rust=doc.get("measurements", {}).get("host.steal_ms"), **misses,
                  rss_first_quarter_mib=float(np.median(first)) / 2**20, rss_last_quarter_mib=float(np.median(last)) / 2**20,
                  rss_growth_mib=growth / 2**20, rss_allowed_mib=allowed / 2**20, rss_max_mib=float(rss.max()) / 2**20,
                  record_bytes=r["ts"].job_record_bytes, jobs_between_quarters=between,
                  t0_threads_seen_minus_zero_s=t0_ends[0] - t0, t0_threads_gone_minus_zero_s=t0_ends[1] - t0,
                  exit_after_end_s=r["t_exit"] - SOAK_S - t0)
    print(json.dumps(report))
    if os.environ.get("RTSCHED_SOAK_REPORT"):
        d = os.environ["RTSCHED_SOAK_REPORT"]
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, backend.replace(":", "_") + ".json"), "w") as f:
            json.dump(report, f, indent=2)

    assert len(first) >= 3 and len(last) >= 3, report
    assert growth <= allowed, ("memory grew beyond the per-job samples", report)
    if backend == "kernel:deadline" and not unexplained.empty and irq_time_accounting() is False:
        # Not a looser bound: the known cause, detected. This kernel charges interrupt time to
        # the running thread, so a reservation sized from the WCET is exhausted now and then and
        # the job throttled to its next period (docs/real-runs.md, "Findings"; measured in the
        # soak: "Soak" there). The overruns in what a job's thread was charged (its work and
        # the time between jobs) explain nearly all of these misses (above: 364 of 382 in a
        # 600 s soak), and jobs held off a CPU with room the rest (18). A miss neither
        # explains is one these rules have no account of: the probe, held off by the run's
        # own SCHED_DEADLINE threads, cannot say whether the machine stalled. Accounting and
        # memory were checked above.
        pytest.xfail(f"{len(unexplained)} of {misses['missed']} misses without host steal or an overrun in their window; "
                     "CONFIG_IRQ_TIME_ACCOUNTING is not set (interrupt time is charged to SCHED_DEADLINE reservations) "
                     "and the probe cannot see a CPU stall under SCHED_DEADLINE")
    if backend != "kernel:other":
        assert unexplained.empty, ("misses without host steal or a CPU outage in their window", report,
                                   unexplained[["task", "job", "release_ns", "deadline_ns", "finish_ns", "cpus"]].head(20))


@pytest.mark.parametrize("hog_prio", [99, 95])
def test_an_outage_explains_the_misses_it_causes_and_nothing_else(tmp_path, hog_prio):
    """The outage rule, checked on an outage made on purpose: 12 s of kernel:fifo with a thread
    spinning 60 ms on CPU 0 after 5 s, above every thread of the run. At SCHED_FIFO 99, the
    probe's priority, the probe cannot preempt it: the probe sees CPU 0 taken for about 60 ms,
    and every miss (all on CPU 0) is put down to it. At 95 the probe preempts it and sees no such
    outage: the same misses stay unexplained, as a miss the run's own threads caused would."""
    if "kernel:fifo" not in SELECTED:
        pytest.skip(f"not in RTSCHED_SOAK_BACKENDS ({','.join(SELECTED)})")
    spin_s = 0.06
    hog = ("import os, time\n"
           f"os.sched_setaffinity(0, {{0}}); os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param({hog_prio}))\n"
           f"t = time.monotonic(); print(t, flush=True)\nwhile time.monotonic() - t < {spin_s}: pass\n")
    # Up to three tries, each printed, the last asserted: at 95 a real host outage the probe
    # sees (not the spin: the probe preempts it) can fall in a held job's window and explain it
    # (a fresh-clone run here: 1 of 11 held jobs, beside 10 host outages of up to 3 ms on CPU 0).
    for attempt in range(1, 4):
        spun = []

        def beside(launch):
            time.sleep(max(0.0, launch + 5.0 - time.monotonic()))
            out = subprocess.run([sys.executable, "-c", hog], capture_output=True, text=True, timeout=30, check=True)
            spun.append(float(out.stdout))  # noqa: B023 - called within this attempt

        (tmp_path / f"try{attempt}").mkdir()
        r = soak("kernel:fifo", tmp_path / f"try{attempt}", seconds=12.0, beside=beside)
        unexplained, report = explain_misses("kernel:fifo", r)
        print(json.dumps(dict(hog_prio=hog_prio, attempt=attempt, **report)))
        assert spun, "the spinning thread did not run"
        jobs = r["jobs"]
        spin_ns = int(spun[0] * 1e9) - r["t0_ns"]
        # The jobs the spin held back: on CPU 0, released before it ended, finished after it began.
        held = jobs[jobs.missed & (jobs.release_ns < spin_ns + int(spin_s * 1e9)) & (jobs.finish_ns > spin_ns)]
        on_cpu0 = {t["name"] for t in yaml.safe_load(SOAK)["tasks"] if t["cpu"] == 0}
        assert len(held) > 0 and set(held.task) <= on_cpu0, jobs[jobs.missed][["task", "job", "release_ns", "finish_ns", "cpus"]]
        outages = r["probe"].outages()
        during = max(outage_within(o, r["t0_ns"] + spin_ns, r["t0_ns"] + spin_ns + int(spin_s * 1e9)) for o in outages) / 1e9
        if hog_prio == 99:
            assert during >= spin_s * 0.95, (during, report)
            assert set(held.index).isdisjoint(unexplained.index), (report, unexplained)
            return
        assert during < spin_s / 2, (during, report)
        if set(held.index) <= set(unexplained.index) or report["missed_explained_by_steal"] > 0 or attempt == 3:
            break
        print(f"try {attempt}: {len(set(held.index) - set(unexplained.index))} of {len(held)} held jobs explained by a "
              f"host outage the probe saw ({report['outages_per_cpu']} outages per CPU); trying again")
    assert set(held.index) <= set(unexplained.index) or report["missed_explained_by_steal"] > 0, (report, unexplained)
