"""The sched_ext kernel driver from the command line, on a machine without sched_ext.

What runs inside a kernel with sched_ext is checked in a QEMU guest (crates/scx/guest/test.sh,
`make test-kernel`); here: the backends are known, bad input and an unsuitable kernel are
refused with exit code 2 and a message that names the file, task and field, and nothing runs.
"""

from pathlib import Path

import pytest

from conftest import real, run_cli, write_dedented

HAS_SCX = Path("/sys/kernel/sched_ext/state").exists()

SET = """\
platform: {cpus: 2}
run: {duration: 100}
tasks:
  - {name: a, period: 10, wcet: 6}
  - {name: b, period: 10, wcet: 5}
  - {name: c, period: 10, wcet: 4}
"""


def test_the_backends_are_listed():
    out = "".join(run_cli("run", "--help", check=0).stdout.split())
    for b in ["kernel:scx-gedf[:linear]", "kernel:scx-pedf[:HEURISTIC]", "kernel:scx:POLICY"]:
        assert b in out, b


@real
@pytest.mark.skipif(HAS_SCX, reason="this kernel has sched_ext: the refusal is for kernels without it")
@pytest.mark.parametrize("backend", ["kernel:scx-gedf", "kernel:scx-gedf:linear", "kernel:scx-pedf:ffd", "kernel:scx:gedf"])
def test_a_kernel_without_sched_ext_is_refused_and_nothing_runs(tmp_path, backend):
    p = write_dedented(tmp_path, SET)
    r = run_cli("run", p, "-b", backend, "--json", tmp_path / "out.json", check=2)
    assert "this kernel has no sched_ext" in r.stderr and "CONFIG_SCHED_CLASS_EXT" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "out.json").exists()


def test_bad_plans_are_refused_before_the_kernel_is_asked(tmp_path):
    # Bandwidth 2.1 on 2 CPUs: refused with the numbers, whatever the kernel, even when the
    # user allows an overloaded run (the scheduler's admission test is not optional).
    over = write_dedented(tmp_path, SET.replace("wcet: 4", "wcet: 10"), "over.yaml")
    r = run_cli("run", over, "-b", "kernel:scx-gedf", "--allow-overload", check=2)
    assert "field 'tasks': total bandwidth 2.100" in r.stderr and "exceeds the 2 CPUs" in r.stderr, r.stderr
    # P-EDF needs a partition: the file's cpu fields, or a heuristic.
    p = write_dedented(tmp_path, SET)
    r = run_cli("run", p, "-b", "kernel:scx-pedf", check=2)
    assert "task 'a': field 'cpu': missing" in r.stderr, r.stderr
    r = run_cli("run", p, "-b", "kernel:scx-pedf:fdd", check=2)
    assert "unknown partitioner 'fdd'" in r.stderr, r.stderr
    r = run_cli("run", p, "-b", "kernel:scx-gedf:pi", check=2)
    assert "kernel:scx-gedf: unknown option 'pi' (known: linear)" in r.stderr, r.stderr
    r = run_cli("run", p, "-b", "kernel:scx:nosuch", check=2)
    assert "kernel:scx:" in r.stderr and "nosuch" in r.stderr, r.stderr
