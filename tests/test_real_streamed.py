"""Real runs that hold no per-job records (needs root, as tests/test_real.py): `rtsched run`
without an output that reads the records after the run folds each job into the summaries as it
ends, and writes it to --jobs-parquet, so a long run's memory does not grow with its jobs
(docs/real-runs.md, "Long runs"). A real run cannot be repeated exactly, so each run is checked
against itself: the records written as the run went must be every job the task set releases,
once each, in release order, and the summaries built on the way must be what those records say.
"""

import json

import numpy as np
import pytest

import rtsched
from conftest import REAL, run_cli

pytestmark = REAL

# Overloaded (U = 1.77 on 2 CPUs) with aborts at the deadline: the testbed aborts jobs while
# their worker is inside a piece of work, whose CPU time the record gets afterwards.
OVERLOAD = """platform: {cpus: 2}
run: {duration: 1s, seed: 3, on_miss: abort}
tasks:
  - {name: a, period: 10, wcet: 6, cpu: 0}
  - {name: b, period: 15, wcet: 9, cpu: 1}
  - {name: c, period: 7, wcet: 4, cpu: 0}
"""

# Half load, partitioned by the `cpu` fields for kernel:fifo; a short window, so that jobs are
# still pending when it ends.
HALF = """platform: {cpus: 2}
run: {duration: 700ms, seed: 17}
tasks:
  - {name: a, period: 10, wcet: 2, cpu: 0}
  - {name: b, period: 20, wcet: 4, cpu: 1}
  - {name: c, period: 25, wcet: 5, cpu: 0}
  - {name: f, period: 100, wcet: 10, cpu: 1}
"""

CASES = [("testbed:gedf", OVERLOAD, ["--allow-overload"]), ("testbed:gfifo", OVERLOAD, ["--allow-overload"]),
         ("kernel:fifo", HALF, []), ("kernel:other", HALF, [])]


def summary_of(jobs):
    """The summary fields that follow from the records alone (Summary in crates/model)."""
    done = jobs.finish_ns.notna() & ~jobs.aborted
    resp = (jobs.finish_ns[jobs.finish_ns.notna()] - jobs.release_ns[jobs.finish_ns.notna()]).astype("int64")
    counted = done & (jobs.exec_ns > 0)
    return dict(
        jobs=len(jobs), completed=int(jobs.finish_ns.notna().sum()), missed=int(jobs.missed.sum()),
        aborted=int(jobs.aborted.sum()), max_response_ns=int(resp.max()) if len(resp) else 0,
        preemptions=int(jobs.preemptions.sum()), migrations=int(jobs.migrations.sum()),
        context_switches=int(jobs.context_switches.sum()),
        exec_inflation=float(jobs.exec_ns[counted].sum() / jobs.demand_ns[counted].sum()),
        mean_response_ns=float(resp.mean()) if len(resp) else 0.0,
    )


@pytest.mark.parametrize("backend,text,extra", CASES, ids=[c[0] for c in CASES])
def test_a_streamed_real_run_writes_every_job_once_and_summarises_them(tmp_path, backend, text, extra):
    p = tmp_path / "ts.yaml"
    p.write_text(text)
    out, pq = tmp_path / "r.json", tmp_path / "jobs.parquet"
    run_cli("run", p, "-b", backend, *extra, "--json", out, "--jobs-parquet", pq)
    (doc,) = json.loads(out.read_text())["runs"]
    jobs = rtsched.read_jobs(pq)
    released = rtsched.parse_taskset(text, "yaml", "ts.yaml").estimated_jobs
    # Every job the task set releases in the window, once, with its indices 0..n-1 per task.
    # (counters.releases also counts the testbed's releases after the window, while the last
    # counted jobs finish.)
    assert len(jobs) == released == doc["total"]["jobs"] <= doc["counters"]["releases"], (len(jobs), released, doc["counters"])
    assert set(jobs.scheduler) == {doc["scheduler"]}
    assert not jobs.duplicated(["task", "job"]).any()
    for task, g in jobs.groupby("task"):
        assert list(g.job) == list(range(len(g))), task
    # In release order, as a held run sorts them.
    names = [t["name"] for t in doc["tasks"]]
    key = list(zip(jobs.release_ns, jobs.task.map(names.index), jobs.job))
    assert key == sorted(key)
    # The summaries built as the jobs ended say what the records say.
    want = summary_of(jobs)
    got = {k: doc["total"][k] for k in want}
    for k in ("exec_inflation", "mean_response_ns"):
        assert got.pop(k) == pytest.approx(want.pop(k), rel=1e-12), k
    assert got == want
    for t in doc["tasks"]:
        g = jobs[jobs.task == t["name"]]
        assert (t["jobs"], t["missed"], t["aborted"]) == (len(g), int(g.missed.sum()), int(g.aborted.sum())), t["name"]
    if "abort" in text:
        aborted = jobs[jobs.aborted]
        assert len(aborted) > 0, "the overload aborted no job"
        # An aborted job that had begun has the CPU time it took, up to the abort (the piece
        # its worker was in when it was aborted is added after the ledger decided the job).
        assert aborted.aborted_at_ns.notna().all() and aborted.finish_ns.isna().all()
        began = aborted[aborted.start_ns.notna()]
        assert len(began) > 0 and (began.exec_ns > 0).all(), began
    else:
        pending = jobs[jobs.finish_ns.isna()]
        # A job still pending at the end whose deadline had passed is a miss.
        assert ((pending.deadline_ns > doc["duration_ns"]) | pending.missed).all(), pending


def test_run_without_keep_jobs_has_summaries_and_says_why_it_has_no_records(tmp_path):
    ts = rtsched.parse_taskset(HALF, "yaml", "ts.yaml")
    r = rtsched.run(ts, "kernel:fifo", duration="300ms", keep_jobs=False, trace=False)
    assert r.summary["jobs"] == ts.with_run(duration_ns=300_000_000).estimated_jobs
    assert r.measurements["start_delay.count"] > 0
    with pytest.raises(ValueError, match="did not keep its per-job records"):
        _ = r.jobs
    # jobs_parquet=PATH: written as the run went, and read back as Result.jobs.
    r = rtsched.run(ts, "testbed:gedf", duration="300ms", jobs_parquet=tmp_path / "j.parquet", trace=False)
    assert len(r.jobs) == r.summary["jobs"] and np.isin(r.jobs.task, ts.task_names).all()
