"""PAWS and its baselines from the user's side: bad options and unplaceable sets exit 2 with a
message naming what is wrong; the reproduction's real runs resume instead of rerunning."""


import rtsched
from conftest import real, run_cli


def test_paws_options_that_do_not_exist_exit_2(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("platform: {cpus: 2}\ntasks:\n  - {name: p, period: 20, regions: [2, [4, 4], 2]}\n")
    r = run_cli("simulate", f, "-s", "paws:victim=first", check=2)
    assert "scheduler 'paws' has no option 'victim'" in r.stderr and "Traceback" not in r.stderr


@real
def test_real_runs_resume_where_they_stopped(tmp_path, monkeypatch):
    from rtsched.reproduce._real import run_real_sets

    ts = rtsched.generate("paws2013", seed=3, m=2, window=1).taskset
    out = tmp_path / "real.csv"
    first = run_real_sets([({"window": 1, "taskset_seed": 3}, ts)], ["testbed:paws"], "300ms", out, progress=False)
    assert list(first["status"]) == ["ok"] and first["jobs"].iloc[0] > 0
    # A second call finds the row and runs nothing; a new backend runs only that one.
    calls = []
    real_run = rtsched.run
    monkeypatch.setattr(rtsched, "run", lambda ts, backend, **kw: calls.append(backend) or real_run(ts, backend=backend, **kw))
    again = run_real_sets([({"window": 1, "taskset_seed": 3}, ts)], ["testbed:paws"], "300ms", out, progress=False)
    assert calls == [] and len(again) == 1
    more = run_real_sets([({"window": 1, "taskset_seed": 3}, ts)], ["testbed:paws", "testbed:gedf"], "300ms", out, progress=False)
    assert calls == ["testbed:gedf"] and sorted(more["backend"]) == ["testbed:gedf", "testbed:paws"]


@real
def test_a_refused_real_run_is_a_row_not_a_crash(tmp_path):
    from rtsched.reproduce._real import run_real_sets

    # U = 1.95 on 2 CPUs: within the CPUs but beyond the kernel's RT bandwidth (2 x 95%, more
    # with the reservations' allowance): refused before anything runs.
    f = tmp_path / "over.yaml"
    f.write_text("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 9}\n  - {name: b, period: 10, wcet: 9}\n"
                 "  - {name: c, period: 20, wcet: 3}\n")
    ts = rtsched.load_taskset(f)
    rows = run_real_sets([({"set": 1}, ts)], ["kernel:deadline"], "200ms", tmp_path / "r.csv", progress=False)
    assert list(rows["status"]) == ["refused"] and "task" in rows["error"].iloc[0]
