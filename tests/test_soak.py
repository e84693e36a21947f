"""Soak: a long real run at 0.5·m on each backend, watched from outside (docs/real-runs.md,
"Soak"). Marked `slow`: plain `pytest` leaves it out; `make soak` runs it on every backend
available here, `make test` (CI) on the testbed and kernel:fifo.

RTSCHED_SOAK_SECONDS sets the run's length (default 600, the longest a real run may be);
RTSCHED_SOAK_BACKENDS (comma-separated) which backends run (default: all of SOAK_BACKENDS).

While `rtsched run` works in its own process, this test samples every 100 ms the host steal of
each CPU (/proc/stat) and every second the run's resident memory (psutil). Then, from the run's
results and per-job records:

1. **Accounting.** The records hold every job the task set releases in the window, each
   (task, job) once with job indices 0..n-1; released = finished + aborted + pending at end, and
   a job still pending at the end whose deadline had passed is counted as missed; the run's
   summary counts the same jobs and misses.
2. **Misses.** A miss is put down to the host only if the host stole CPU time (any CPU, at
   least one tick of /proc/stat) inside the job's window: from its release to the later of its
   finish and its deadline, on the test's clock. The run's time zero is placed on that clock
   twice: by the first sample that sees the run's threads (`rtsched-*`, created just before
   zero) and by the first that no longer does (or by the process's exit, when it exits within
   a sample period of them), less the duration (they stop just after the end); the two must
   agree within 1 s, and the window reaches from the earlier estimate less ALIGN_S to the
   later plus ALIGN_S. Any miss without steal in its window fails the test,
   except on kernel:other (SCHED_OTHER promises no deadline: its misses are reported, not
   asserted).
3. **Memory.** The run holds no per-job records (`rtsched run` folds each job into the
   summaries and writes it to --jobs-parquet as it ends); what it keeps per job is a few
   8-byte measurement samples and each completed job's response time for the exact p99
   (SAMPLE_BYTES_PER_JOB). Apart from that its memory must not grow: the median RSS of the
   last quarter of the run may exceed that of the first quarter by at most that for the jobs
   released between the two quarters' middles, plus RSS_SLACK_BYTES.

The numbers (misses and which were explained, steal in total and the share of 100 ms samples
with steal, RSS first and last quarter, released / finished / aborted / pending) are printed
and, with RTSCHED_SOAK_REPORT=DIR, written there as JSON, one file per backend.
"""

import json
import os
import subprocess
import threading
import time

import numpy as np
import pytest

import rtsched
from conftest import RTSCHED

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.geteuid() != 0, reason="real runs need root (CI runs as root)")]

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
# Beyond the two estimates of the run's time zero (below): one sample period and the time a
# thread takes to start or stop.
ALIGN_S = 0.2
RSS_SLACK_BYTES = 8 << 20
# A job leaves a few 8-byte measurement samples until the run ends (testbed: release jitter,
# the decisions it causes, preemption latencies, 21 B a job measured in a 60 s run; kernel
# backends: start delay and CPU overhead, 16 B) and its response time (8 B, the summary's p99).
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


def released_per_task(ts_yaml, duration_ns):
    ts = rtsched.parse_taskset(ts_yaml, "yaml", "soak.yaml")
    return ts, ts.with_run(duration_ns=duration_ns, seed=None, on_miss=None).estimated_jobs


def soak(backend, tmp_path):
    path = tmp_path / "soak.yaml"
    path.write_text(SOAK)
    dur_ns = int(SOAK_S * 1e9)
    ts, released = released_per_task(SOAK, dur_ns)
    out, jobs_pq = tmp_path / "r.json", tmp_path / "jobs.parquet"
    t_launch = time.monotonic()
    p = subprocess.Popen([RTSCHED, "run", path, "-b", backend, "--duration", f"{SOAK_S:g}s", "--json", out,
                          "--jobs-parquet", jobs_pq], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    w = Watch(p.pid)
    w.start()
    t_ended = None
    try:
        stdout, stderr = p.communicate(timeout=SOAK_S + 300)
        t_ended = time.monotonic()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        w.stop.set()
        w.join()
    t_exit = time.monotonic()
    if w.threads_seen is not None and w.threads_gone is None:
        # The process ended before a sample saw its run's threads gone: it holds no records, so
        # it writes its outputs and exits in less than one sample period after them.
        w.threads_gone = t_ended
    assert p.returncode == 0, stderr
    assert w.threads_seen is not None, "never saw the run's threads"
    (doc,) = json.loads(out.read_text())["runs"]
    jobs = rtsched.read_jobs(jobs_pq)
    return dict(ts=ts, released=released, doc=doc, jobs=jobs, watch=w, t_launch=t_launch, t_exit=t_exit,
                stdout=stdout, dur_ns=dur_ns)


def steal_between(watch, a, b):
    """Ticks of steal (all CPUs) in the sample intervals that overlap [a, b] (monotonic s; a and
    b may be arrays)."""
    t = np.array([s[0] for s in watch.steal])
    tot = np.array([sum(s[1]) for s in watch.steal])
    i = np.maximum(0, np.searchsorted(t, a, side="right") - 1)
    j = np.minimum(len(t) - 1, np.searchsorted(t, b, side="left"))
    return tot[j] - tot[i]


@pytest.mark.parametrize("backend", SOAK_BACKENDS)
def test_soak_at_half_load(backend, tmp_path):
    if backend not in SELECTED:
        pytest.skip(f"not in RTSCHED_SOAK_BACKENDS ({','.join(SELECTED)})")
    r = soak(backend, tmp_path)
    jobs, doc, w, dur_ns = r["jobs"], r["doc"], r["watch"], r["dur_ns"]
    summary = doc["total"]
    # The run's time zero on this clock, from both ends: its threads appear just before it
    # (setup) and end just after zero + duration (each stops within a chunk of work).
    assert w.threads_gone is not None, "never saw the run's threads end"
    t0_ends = (w.threads_seen, w.threads_gone - SOAK_S)
    assert abs(t0_ends[1] - t0_ends[0]) <= 1.0, ("the run's start and end do not agree on its time zero", t0_ends)
    t0, t0_lo, t0_hi = t0_ends[0], min(t0_ends) - ALIGN_S, max(t0_ends) + ALIGN_S

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

    # 2. Misses against the host's steal.
    missed = jobs[jobs.missed]
    ends = np.maximum(missed.finish_ns.fillna(dur_ns).astype("float64"), missed.deadline_ns.astype("float64"))
    stolen = steal_between(w, t0_lo + missed.release_ns.to_numpy(dtype="float64") / 1e9, t0_hi + ends.to_numpy() / 1e9)
    unexplained = missed[stolen == 0]
    steal_total_ms = (sum(w.steal[-1][1]) - sum(w.steal[0][1])) * 1000 / os.sysconf("SC_CLK_TCK")
    per_sample = np.diff(np.array([sum(s[1]) for s in w.steal]))
    # How often a window like a miss's (a job of the longest period, widened) would contain
    # steal by chance: the check is only as sharp as this is small.
    width = t0_hi - t0_lo + 0.1
    probes = np.arange(t0, t0 + SOAK_S - width, width)
    chance = float(np.mean(steal_between(w, probes, probes + width) > 0)) if len(probes) else float("nan")

    # 3. Memory.
    rss_t = np.array([x[0] for x in w.rss]) - t0
    rss = np.array([x[1] for x in w.rss], dtype="float64")
    q = SOAK_S / 4
    first, last = rss[(rss_t >= 0) & (rss_t < q)], rss[(rss_t >= 3 * q) & (rss_t < SOAK_S)]
    between = int(((jobs.release_ns >= dur_ns / 8) & (jobs.release_ns < dur_ns * 7 / 8)).sum())
    allowed = between * SAMPLE_BYTES_PER_JOB + RSS_SLACK_BYTES
    growth = float(np.median(last) - np.median(first))

    report = dict(backend=backend, seconds=SOAK_S, **counts, missed=int(len(missed)), missed_unexplained=int(len(unexplained)),
                  max_tardiness_ms=float(summary["max_tardiness_ns"]) / 1e6, steal_ms=steal_total_ms,
                  steal_ms_rust=doc.get("measurements", {}).get("host.steal_ms"),
                  samples_with_steal=float(np.mean(per_sample > 0)), chance_window_has_steal=chance,
                  rss_first_quarter_mib=float(np.median(first)) / 2**20, rss_last_quarter_mib=float(np.median(last)) / 2**20,
                  rss_growth_mib=growth / 2**20, rss_allowed_mib=allowed / 2**20, rss_max_mib=float(rss.max()) / 2**20,
                  record_bytes=r["ts"].job_record_bytes, jobs_between_quarters=between,
                  t0_end_minus_start_s=t0_ends[1] - t0_ends[0], window_widening_s=t0_hi - t0_lo,
                  exit_after_end_s=r["t_exit"] - SOAK_S - t0, missed_steal_ticks=stolen[:50].tolist())
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
        # soak: "Soak" there). Accounting and memory were checked above all the same.
        pytest.xfail(f"{len(unexplained)} of {len(missed)} misses without host steal in their window; "
                     "CONFIG_IRQ_TIME_ACCOUNTING is not set: interrupt time is charged to SCHED_DEADLINE reservations")
    if backend != "kernel:other":
        assert unexplained.empty, ("misses without host steal in their window", report,
                                   unexplained[["task", "job", "release_ns", "deadline_ns", "finish_ns"]].head(20))
