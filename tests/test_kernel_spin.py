"""msrp and mrsp on the kernel backends (docs/locking.md "Real runs"): what is refused, with
exit 2 before any thread starts — the file, the task or resource, the protocol and what to use
instead. No real-time thread runs here (the plan refuses first); the real run is
test_kernel_spin_real.py."""

import pytest

from conftest import run_cli

PAIR = """\
platform: {cpus: 2}
run: {duration: 100ms, locking: LOCKING}
resources: [R]
tasks:
  - {name: a, period: 20ms, wcet: 8ms, priority: 2CPU0, sections: [{resource: R, start: 0, length: 6ms}]}
  - {name: b, period: 20ms, offset: 2ms, wcet: 6ms, priority: 2CPU1, sections: [{resource: R, start: 0, length: 4ms}]}
  - {name: c, period: 20ms, offset: 4ms, wcet: 1ms, priority: 3CPU1}
"""


def pair(tmp_path, locking, pinned=True):
    text = PAIR.replace("LOCKING", locking)
    for k in (0, 1):
        text = text.replace(f"CPU{k}", f", cpu: {k}" if pinned else "")
    p = tmp_path / "pair.yaml"
    p.write_text(text)
    return p


@pytest.mark.parametrize("locking, backend, message", [
    ("msrp", "kernel:fifo", "task 'a': resource 'R' uses msrp (run: field 'locking'), a protocol for partitioned scheduling: kernel:fifo does not pin the task to a CPU"),
    ("mrsp", "kernel:deadline", "resource 'R' uses mrsp (run: field 'locking'): kernel:deadline cannot give its spin lock"),
])
def test_spinning_protocols_are_refused_where_the_kernel_cannot_spin(tmp_path, locking, backend, message):
    """kernel:fifo: the unpinned file; another backend: the pinned one, refused all the same.
    (Every backend and both protocols: protocol_tests.rs, without a process each.)"""
    p = pair(tmp_path, locking, pinned=backend != "kernel:fifo")
    r = run_cli("run", p, "-b", backend)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{p}: {message}" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert "testbed:pfp" in r.stderr, r.stderr


def test_an_option_that_contradicts_spinning_is_refused(tmp_path):
    r = run_cli("run", pair(tmp_path, "msrp"), "-b", "kernel:fifo:pi")
    assert r.returncode == 2 and "the backend option ':pi' asks for priority inheritance" in r.stderr, r.stderr
