"""A run whose job count would exhaust memory is refused before it starts, with the numbers."""

import pytest
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
    assert "240.0 GB" in r.stderr and "the limit is 10,000,000" in r.stderr


def test_the_limit_counts_each_scheduler_and_follows_duration_and_max_jobs(fast):
    r = rtsched("simulate", str(fast), "--duration", "1ms", "--max-jobs", "2000000", "-s", "gedf", "gfp:rm")
    assert r.returncode == 0, r.stderr  # 1,000,001 jobs each, under the raised limit
    r = rtsched("simulate", str(fast), "--duration", "1ms", "--max-jobs", "1000000")
    assert r.returncode == 2 and "1,000,001 jobs" in r.stderr and "the limit is 1,000,000" in r.stderr
    r = rtsched("simulate", str(fast), "--max-jobs", "0")
    assert r.returncode == 2 and "--max-jobs must be at least 1" in r.stderr


@pytest.mark.parametrize("cmd", [["run", "-b", "testbed:gedf"], ["compare", "-p", "gedf"]])
def test_real_runs_are_refused_too(fast, cmd):
    # Refused before any privilege check or thread: nothing runs.
    r = rtsched(cmd[0], str(fast), *cmd[1:])
    assert r.returncode == 2 and "jobs per scheduler" in r.stderr, r.stderr
