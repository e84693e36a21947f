"""A run whose job count would exhaust memory is refused before it starts, with the numbers."""

import os
import subprocess

import pytest

from conftest import RTSCHED
from conftest import run_cli as rtsched


@pytest.fixture
def fast(tmp_path):
    p = tmp_path / "fast.yaml"
    p.write_text("platform: {cpus: 1}\nrun: {duration: 1s}\ntasks:\n  - {name: fast, period: 1ns, wcet: 1ns}\n"
                 "  - {name: slow, period: 10ms, wcet: 1ms}\n")
    return p


def test_a_run_of_a_billion_jobs_is_refused_up_front(fast):
    r = rtsched("simulate", str(fast))
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    assert "1,000,000,100 jobs per scheduler" in r.stderr
    assert "task 'fast' releases one every 1 ns" in r.stderr
    assert "memory stays bounded" in r.stderr and "the limit is 10,000,000" in r.stderr
    # An output that holds every record: the message says how much memory that would be.
    r = rtsched("simulate", str(fast), "--trace", str(fast.with_suffix(".json")))
    assert r.returncode == 2 and "272.0 GB" in r.stderr, r.stderr


def test_more_jobs_than_one_run_can_count_are_refused_whatever_the_limit(fast):
    r = rtsched("simulate", str(fast), "--duration", "5s", "--max-jobs", str(10**12))
    assert r.returncode == 2 and "one run counts at most 4,294,967,294" in r.stderr, r.stderr


def test_the_limit_counts_each_scheduler_and_follows_duration_and_max_jobs(fast):
    r = rtsched("simulate", str(fast), "--duration", "1ms", "--max-jobs", "2000000", "-s", "gedf", "gfp:rm")
    assert r.returncode == 0, r.stderr  # 1,000,001 jobs each, under the raised limit
    r = rtsched("simulate", str(fast), "--duration", "1ms", "--max-jobs", "1000000")
    assert r.returncode == 2 and "1,000,001 jobs" in r.stderr and "the limit is 1,000,000" in r.stderr
    r = rtsched("simulate", str(fast), "--max-jobs", "0")
    assert r.returncode == 2 and "--max-jobs must be at least 1" in r.stderr


def _peak_rss_mb(*args):
    """Run the installed `rtsched` with `args`; its exit code, stdout and peak RSS in MB (its own,
    from wait4, not the largest of every child this test process ever had)."""
    env = dict(os.environ, MPLBACKEND="Agg")
    p = subprocess.Popen([RTSCHED, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), out, usage.ru_maxrss / 1024


def test_memory_does_not_grow_with_the_runs_length(tmp_path):
    # Two tasks whose jobs' response times all differ (the p99 needs them): 1 M and then 10 M
    # jobs. Only the largest 1% of the response times stay (0.16 bytes a job): 10x the jobs
    # adds about 1.5 MB. Keeping every response time added 8 bytes a job, twice that while the
    # total was merged: about 140 MB here.
    p = tmp_path / "long.yaml"
    p.write_text("platform: {cpus: 1}\nrun: {duration: 1s}\ntasks:\n"
                 "  - {name: a, period: 2us, wcet: 700ns}\n  - {name: b, period: 3us, wcet: 900ns}\n")
    rss = {}
    for d in ("1.2s", "12s"):
        rc, out, rss[d] = _peak_rss_mb("simulate", p, "--duration", d, "--max-jobs", "20000000", "-s", "gedf")
        assert rc == 0, out
    growth = rss["12s"] - rss["1.2s"]
    assert growth < 20, f"peak RSS {rss}: {growth:.1f} MB more for 9 M more jobs"


@pytest.mark.parametrize("cmd", [["run", "-b", "testbed:gedf"], ["compare", "-p", "gedf"]])
def test_real_runs_are_refused_too(fast, cmd):
    # Refused before any privilege check or thread: nothing runs.
    r = rtsched(cmd[0], str(fast), *cmd[1:])
    assert r.returncode == 2 and "jobs per scheduler" in r.stderr, r.stderr


# -- generator and sweep specs of absurd sizes: a clear error (exit 2, naming the file or the
# parameter and the limit) at once, never an attempt to allocate it all.

@pytest.mark.parametrize("params, words", [
    (["randfixedsum", "n=1000000000", "U=2", "m=4"], ["parameter n=1000000000: at most 100000 tasks", "256.0 GB"]),
    (["uunifast", "n=1000000000", "U=2"], ["parameter n=1000000000: at most 100000 tasks"]),
    (["uunifast", "n=8", "U=2", "m=10000000"], ["parameter m=10000000", "between 1 and 65536"]),
    (["lelli2011", "m=10000000"], ["parameter m=10000000"]),
    (["randfixedsum", "n=100000", "U=2", "m=4"], ["at most 2000 tasks", "160.0 GB"]),
    (["paws2013", "m=65536"], ["threads in all, more than the limit of 1000000"]),
    (["mlu", "m=65536", "U=65536"], ["needs more than 100000 tasks"]),
])
def test_gen_of_absurd_size_is_refused_at_once(params, words):
    r = rtsched("gen", *params)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and all(w in r.stderr for w in words), r.stderr


def test_gen_of_the_largest_allowed_set_works(tmp_path):
    out = tmp_path / "big.yaml"
    r = rtsched("gen", "uunifast-discard", "n=100000", "U=40", "m=64", "-o", out)
    assert r.returncode == 0, r.stderr
    r = rtsched("validate", out)
    assert r.returncode == 0 and "100000 tasks on 64 CPUs" in r.stdout, r.stderr


SPEC = "generator: {name: uunifast, params: {n: 4, m: 2}}\nutilisation: {points: [0.5, 1.0]}\nschedulers: [gedf]\nseeds: 2\nduration: 10ms\n"


@pytest.mark.parametrize("change, field, words", [
    ("seeds: 1000000000000", "seeds", ["1,000,000,000,000 seeds is too many (at most 1,000,000"]),
    ("seeds: 1000000\nutilisation: {points: {from: 0.1, to: 2.0, step: 0.1}}", "seeds",
     ["20,000,000 rows (1 generator(s) × 20 points × 1,000,000 seeds × 1 schedulers)", "the limit is 10,000,000"]),
    ("utilisation: {points: {from: 0, to: 1000000000000, step: 1}}", "utilisation.points", ["points is too many (at most 100,000)"]),
    ("utilisation: {points: {from: 0, to: 1.0e+300, step: 1.0e-300}}", "utilisation.points", ["points is too many"]),
    ("generator: {name: uunifast, params: {n: 1000000000, m: 2}}", "generator.params", ["n=1000000000: at most 100000 tasks"]),
    ("generator: {name: uunifast, params: {n: 4, m: 10000000}}", "generator.params", ["m=10000000"]),
    ("generator: {name: lelli2011, params: {m: 10000000}}", "generator.params", ["m=10000000"]),
])
def test_a_sweep_spec_of_absurd_size_is_refused_naming_the_field(tmp_path, change, field, words):
    keys = [line.split(":")[0] + ":" for line in change.splitlines()]
    text = "\n".join(line for line in SPEC.splitlines() if not line.startswith(tuple(keys))) + "\n" + change + "\n"
    p = tmp_path / "spec.yaml"
    p.write_text(text)
    r = rtsched("sweep", p, "--workers", "1")
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert f"{p}: field '{field}'" in r.stderr and all(w in r.stderr for w in words), r.stderr
    assert "Traceback" not in r.stderr


def test_a_sweep_spec_that_is_not_utf8_is_refused_naming_the_file(tmp_path):
    p = tmp_path / "spec.yaml"
    p.write_bytes(b"seeds: 2\n\x80\n")
    r = rtsched("sweep", p)
    assert r.returncode == 2 and f"{p}: not UTF-8 text (byte 0x80 at offset 9)" in r.stderr, r.stderr


def test_the_api_refuses_what_the_cli_refuses_and_max_jobs_raises_it(fast):
    """rtsched.simulate had no limit: simulate(ts, duration=1e9) asked for 16 GB at once."""
    import time

    import rtsched

    ts = rtsched.load_taskset(str(fast))
    t = time.monotonic()
    with pytest.raises(rtsched.InputError, match=r"1,000,000,100 jobs per scheduler.*the limit is 10,000,000 \(max_jobs=N raises it\)"):
        rtsched.simulate(ts, "gedf")
    with pytest.raises(rtsched.InputError, match="about 27.2 GB of per-job records"):  # 10^8 jobs of a 10 ms task
        rtsched.simulate(rtsched.parse_taskset("platform: {cpus: 1}\ntasks:\n  - {name: s, period: 10ms, wcet: 1ms}\n", "yaml", "s.yaml"),
                         "gedf", duration="1000000s")
    assert time.monotonic() - t < 5
    with pytest.raises(rtsched.InputError, match="max_jobs must be at least 1"):
        rtsched.simulate(ts, "gedf", max_jobs=0)
    r = rtsched.simulate(ts, "gedf", duration="1us", max_jobs=2000)  # 1,000 jobs of 'fast'
    assert r.summary["jobs"] >= 1000


# --- bounded time: the estimate of a run's work (crates/sim/src/estimate.rs) ----------------

def big(tmp_path, cpus, run="{duration: 1s}", name="big.yaml"):
    p = tmp_path / name
    p.write_text(f"platform: {{cpus: {cpus}}}\nrun: {run}\ntasks:\n  - {{name: a, period: 1, wcet: 0.5}}\n"
                 "  - {name: b, period: 2, wcet: 1}\n")
    return p


@pytest.mark.parametrize("args,words", [
    (("-s", "paws"), ["a run under paws would take about 1.3e+13 steps", "3,000 decisions", "on 65,536 CPUs",
                      "the limit is 20,000,000,000 (--max-work N raises it"]),
    (("-s", "gedf", "paws"), ["under paws"]),  # gedf is fine; the set is refused before it runs
    (("-s", "cfs:tick=1ns"), ["2,000,000,000", "tick events"]),
])
def test_a_run_that_would_take_hours_is_refused_with_its_estimate(tmp_path, args, words):
    import time

    t = time.monotonic()
    r = rtsched("simulate", big(tmp_path, 65536 if "paws" in args else 2), *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
    assert time.monotonic() - t < 10
    assert r.stdout == ""  # nothing ran, not even gedf


def test_gedf_on_65536_cpus_and_paws_on_1024_are_under_the_limit(tmp_path):
    """Measured before the limit: 1,500 jobs of G-EDF take 0.6 s on 65,536 CPUs, PAWS 6.7 s on
    1,024 (its estimate: 3,000 decisions of about 1,048,628 steps, 3.1e9)."""
    import rtsched as api

    ts = api.load_taskset(str(big(tmp_path, 1024, run="{duration: 100}")))
    decisions, ticks, per, steps, threads = ts.estimated_work("paws")
    assert (decisions, ticks, per, threads) == (300, 0, 1024 * 1024 + 50 + 2, 2)
    assert steps == decisions * per
    assert api.simulate(ts, "paws").summary["jobs"] == 150
    r = rtsched("simulate", big(tmp_path, 65536, run="{duration: 100}", name="g.yaml"), "-s", "gedf")
    assert r.returncode == 0, r.stderr


def test_the_api_and_testbed_refuse_by_work_and_max_work_lifts_it(tmp_path):
    import rtsched

    ts = rtsched.load_taskset(str(big(tmp_path, 65536)))
    with pytest.raises(rtsched.InputError, match=r"under paws would take .* \(max_work=N raises it\)"):
        rtsched.simulate(ts, "paws")
    with pytest.raises(rtsched.InputError, match="max_work must be at least 1"):
        rtsched.simulate(ts, "gedf", max_work=0)
    # A real run on the testbed runs the policy's decisions too: refused before any privilege
    # is asked for (no real-time thread starts).
    with pytest.raises(rtsched.InputError, match="under cfs:tick=1ns would take"):
        rtsched.run(big(tmp_path, 2, name="small.yaml"), "testbed:cfs:tick=1ns")
    small = rtsched.load_taskset(str(big(tmp_path, 1024, run="{duration: 20}", name="s.yaml")))
    with pytest.raises(rtsched.InputError):
        rtsched.simulate(small, "paws", max_work=1000)
    assert rtsched.simulate(small, "paws", max_work=None).summary["jobs"] == 30


def test_a_sweep_row_that_would_take_hours_is_not_run_and_says_why(tmp_path):
    import pandas as pd
    import yaml

    spec = {"name": "w", "seed": 1, "generator": {"name": "uunifast-discard", "params": {"n": 4, "m": 65536}},
            "utilisation": {"points": [2.0]}, "schedulers": ["paws", "gedf"], "seeds": 1, "duration": "1s"}
    p = tmp_path / "w.yaml"
    p.write_text(yaml.safe_dump(spec))
    r = rtsched("sweep", p, "-o", tmp_path / "w.parquet", "--no-plots", "-q", "-j", "1")
    assert r.returncode == 0, r.stderr
    df = pd.read_parquet(tmp_path / "w.parquet").set_index("scheduler")
    assert df.loc["paws", "status"] == "too-long" and "steps of scheduling work" in df.loc["paws", "error"]
    assert df.loc["gedf", "status"] == "ok"
