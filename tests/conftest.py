import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
RTSCHED = str(Path(sys.executable).parent / "rtsched")


def run_cli(*args, cwd=None, check=None, env=None):
    """Run the installed `rtsched` command; returns CompletedProcess with text output. Its
    output is a pipe and COLUMNS is unset (tables at full width, whatever the shell exports),
    unless `env` (added to the environment) sets it."""
    extra = dict(env or {})
    env = dict(os.environ, MPLBACKEND="Agg")
    env.pop("RTSCHED_DEBUG", None)
    env.pop("COLUMNS", None)
    env.update(extra)
    p = subprocess.run([RTSCHED, *map(str, args)], capture_output=True, text=True, cwd=cwd or ROOT, env=env, timeout=300)
    if check is not None:
        assert p.returncode == check, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p


def _can_rt() -> bool:
    """Whether this process may start real-time threads (root or CAP_SYS_NICE), tried as the
    real runs try it."""
    from rtsched.reproduce._real import can_run_real

    return can_run_real()[0]


CAN_RT = _can_rt()
#: The marks of a test that makes real runs (real-time threads on every CPU): `real` (make
#: test-real runs these alone, one at a time; make test-python leaves them out and runs without
#: CAP_SYS_NICE) and a skip that says why when this process may not start real-time threads.
REAL = [pytest.mark.real,
        pytest.mark.skipif(not CAN_RT, reason="real run: needs real-time privilege (root or CAP_SYS_NICE), which this "
                                              "process does not have; make test runs it as root (make test-real)")]


def real(test):
    """Decorator: `test` makes real runs (see REAL)."""
    for m in REAL:
        test = m(test)
    return test


@pytest.fixture
def cli():
    return run_cli


def write_dedented(tmp_path, text, name="ts.yaml"):
    """Write `text` (dedented) as `tmp_path / name`; returns the path."""
    import textwrap

    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def comparable(df):
    """A sweep table in key order (row order is not part of a sweep's result)."""
    return df.sort_values("key").reset_index(drop=True)


def sweep_in_thread(spec, **kw):
    """rtsched.sweep(spec, **kw) started on a thread of its own (the test kills workers
    meanwhile). Returns (thread, result, errors): result["df"] is set when it ends, errors
    holds what it raised."""
    import threading

    import rtsched

    result, errors = {}, []

    def go():
        try:
            result["df"] = rtsched.sweep(spec, **kw)
        except BaseException as e:  # noqa: BLE001 - the test reports it
            errors.append(e)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t, result, errors


async def exit_now():
    """Ends the process it runs in (client.run on a Dask worker: a coroutine, so the call
    need not wait for an answer that never comes)."""
    import os

    os._exit(1)


#: Scheduling policies of real-time threads (/proc/PID/task/TID/stat field 41).
RT_POLICIES = {1: "SCHED_FIFO", 2: "SCHED_RR", 6: "SCHED_DEADLINE"}


def rt_threads(root):
    """{(comm, policy, priority)} of the real-time threads of `root`'s process tree now."""
    from rtsched._procfs import tree_threads

    found = set()
    for pid, tid in tree_threads(root):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat.rsplit(")", 1)[1].split()
        policy = int(rest[38])  # field 41; rest[0] is field 3
        if policy in RT_POLICIES:
            found.add((comm, RT_POLICIES[policy], int(rest[37])))  # field 40: rt_priority
    return found


def run_cli_watching_rt(*args, cwd=None, timeout=300, every_s=0.01):
    """Run the `rtsched` command as `run_cli` does, sampling every `every_s` the threads of its
    process tree; returns (CompletedProcess, {(comm, policy, priority)} of every real-time
    thread seen)."""
    import threading

    env = dict(os.environ, MPLBACKEND="Agg")
    env.pop("RTSCHED_DEBUG", None)
    p = subprocess.Popen([RTSCHED, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=cwd or ROOT, env=env)
    seen, done = set(), threading.Event()

    def watch():
        while not done.is_set():
            seen.update(rt_threads(p.pid))
            done.wait(every_s)

    w = threading.Thread(target=watch, daemon=True)
    w.start()
    try:
        out, err = p.communicate(timeout=timeout)
    finally:
        done.set()
        w.join()
    return subprocess.CompletedProcess(p.args, p.returncode, out, err), seen
