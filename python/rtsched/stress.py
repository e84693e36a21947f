"""Background load like the opzone paper's (§4.1: "very high CPU load, network stress, and disk
I/O"), from plain Python worker processes (no external tool needed):

- ``cpu``: busy loops (the "very high CPU load");
- ``sleepers``: periodic workers, busy ``run`` then asleep ``sleep`` (wake-ups on idle CPUs:
  the paper's "idle CPU's task wakes up" check point);
- ``bursty``: busy and asleep for random times (mean ``burst``; seeded), so CPU utilisation
  fluctuates as the warm zone's weight-based score expects;
- ``io``: write 1 MiB and fsync, over and over, in a temporary file (the "disk I/O");
- ``net``: UDP datagrams to themselves over loopback (the "network stress", softirqs).

Each worker is a ``python -c`` child at nice ``nice``, with SIGINT at its default (it dies
quietly with the terminal's Ctrl-C). :meth:`Stress.stop` ends every worker and removes the
temporary directory; it runs on every exit of :func:`run_stress`.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from ._core import InputError, RunFailed
from .durations import in_unit

# Every worker dies with its parent, even a SIGKILLed one (PR_SET_PDEATHSIG = 1): no busy loop
# is ever left behind; and quietly on the terminal's Ctrl-C (SIGINT at its default).
_PRELUDE = """import ctypes, os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_DFL)
ctypes.CDLL(None).prctl(1, signal.SIGKILL)
if os.getppid() != int(os.environ["RTSCHED_STRESS_PARENT"]):
    sys.exit(0)
"""

_CPU = "while True:\n    pass\n"

# Busy `run` ns, asleep `sleep` ns, on absolute times so the period does not drift.
_SLEEPER = """run, sleep = int(sys.argv[1]), int(sys.argv[2])
t = time.monotonic_ns()
while True:
    end = t + run
    while time.monotonic_ns() < end:
        pass
    t = end + sleep
    d = t - time.monotonic_ns()
    if d > 0:
        time.sleep(d / 1e9)
    else:
        t = time.monotonic_ns()
"""

_BURSTY = """import random
mean, seed = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
while True:
    end = time.monotonic_ns() + int(rng.expovariate(1 / mean))
    while time.monotonic_ns() < end:
        pass
    time.sleep(rng.expovariate(1 / mean) / 1e9)
"""

# 1 MiB written and fsynced at a time; the file restarts at 64 MiB so the disk never fills.
_IO = """path = sys.argv[1]
block = os.urandom(1 << 20)
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
n = 0
while True:
    os.write(fd, block)
    os.fsync(fd)
    n += 1
    if n == 64:
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, 0)
        n = 0
"""

_NET = """import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
addr = s.getsockname()
msg = b"x" * 1400
while True:
    for _ in range(32):
        s.sendto(msg, addr)
    for _ in range(32):
        s.recv(2048)
"""


class Stress:
    """The workers; ``start()`` them, read ``pids``, ``stop()`` them (also as a context manager)."""

    def __init__(self, cpu=None, sleepers=0, run_ns=2_000_000, sleep_ns=8_000_000, bursty=0, burst_ns=20_000_000, io=0, net=0,
                 nice=0, seed=1):
        ncpu = os.cpu_count() or 1
        self.counts = {"cpu": ncpu * 2 if cpu is None else cpu, "sleepers": sleepers, "bursty": bursty, "io": io, "net": net}
        for k, v in self.counts.items():
            if v < 0:
                raise InputError(f"--{k}: {v} workers: must be 0 or more")
        if sum(self.counts.values()) == 0:
            raise InputError("stress: no workers: give --cpu, --sleepers, --bursty, --io or --net")
        if sum(self.counts.values()) > 256:
            raise InputError(f"stress: {sum(self.counts.values())} workers is more than 256")
        if sleepers and (run_ns <= 0 or sleep_ns <= 0):
            raise InputError("--run/--sleep: both must be positive")
        if bursty and burst_ns <= 0:
            raise InputError("--burst: must be positive")
        if not -20 <= nice <= 19:
            raise InputError(f"--nice: {nice} is outside -20..19")
        self.run_ns, self.sleep_ns, self.burst_ns, self.nice, self.seed = run_ns, sleep_ns, burst_ns, nice, seed
        self.procs: list[subprocess.Popen] = []
        self.tmp = None

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def _spawn(self, code: str, *args):
        nice = f"os.nice({self.nice})\n" if self.nice else ""
        env = dict(os.environ, RTSCHED_STRESS_PARENT=str(os.getpid()))
        self.procs.append(subprocess.Popen([sys.executable, "-c", _PRELUDE + nice + code, *map(str, args)], stdin=subprocess.DEVNULL,
                                           env=env))

    def start(self):
        try:
            for _ in range(self.counts["cpu"]):
                self._spawn(_CPU)
            for _ in range(self.counts["sleepers"]):
                self._spawn(_SLEEPER, self.run_ns, self.sleep_ns)
            for i in range(self.counts["bursty"]):
                self._spawn(_BURSTY, self.burst_ns, self.seed + i)
            if self.counts["io"]:
                self.tmp = tempfile.mkdtemp(prefix="rtsched-stress-")
                for i in range(self.counts["io"]):
                    self._spawn(_IO, os.path.join(self.tmp, f"io{i}"))
            for _ in range(self.counts["net"]):
                self._spawn(_NET)
        except BaseException:
            self.stop()
            raise
        return self

    def failed(self) -> list[tuple[int, int]]:
        """Workers that ended by themselves: (pid, exit code)."""
        return [(p.pid, p.returncode) for p in self.procs if p.poll() is not None]

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()  # the workers hold nothing worth a graceful end
        for p in self.procs:
            p.wait()
        self.procs = []
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def describe(self) -> str:
        parts = [f"{n} {k}" for k, n in self.counts.items() if n]
        if self.counts["sleepers"]:
            parts[[k for k, n in self.counts.items() if n].index("sleepers")] += f" ({in_unit(self.run_ns)} ms run / {in_unit(self.sleep_ns)} ms sleep)"
        return ", ".join(parts) + (f", nice {self.nice}" if self.nice else "")

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _stat_totals():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return sum(v) - v[3] - v[4], sum(v), v[7]


def run_stress(stress: Stress, duration_ns=None, quiet=False) -> int:
    """What ``rtsched stress`` does: run the workers for ``duration_ns`` (None: until a signal)
    and stop them all on every exit. Returns 0, or 128 + the signal that stopped it."""
    got = []

    def on_signal(signum, _frame):
        # Noted, not raised: an exception inside Popen could leave a forked worker untracked.
        # The loop looks every 50 ms.
        got.append(signum)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    b0, t0, s0 = _stat_totals()
    start = time.monotonic()
    try:
        try:
            stress.start()
            if not quiet:
                print(f"stress: {stress.describe()}" + (f" for {in_unit(duration_ns, 's')} s" if duration_ns else " until Ctrl-C"), flush=True)
            while not got and (duration_ns is None or time.monotonic() - start < duration_ns / 1e9):
                time.sleep(0.05 if duration_ns is None else min(0.05, max(0.0, duration_ns / 1e9 - (time.monotonic() - start))))
                dead = stress.failed()
                if dead and not got:
                    if any(rc == -signal.SIGINT for _, rc in dead):  # the terminal's Ctrl-C reached them first
                        got.append(signal.SIGINT)
                        break
                    raise RunFailed(f"stress worker {dead[0][0]} ended by itself (exit code {dead[0][1]}); every worker was stopped")
        finally:
            for s in old:  # ignore further signals while the workers are stopped
                signal.signal(s, signal.SIG_IGN)
            stress.stop()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    b1, t1, s1 = _stat_totals()
    if not quiet and t1 > t0:
        print(f"stress: stopped after {time.monotonic() - start:.1f} s; CPUs busy {100 * (b1 - b0) / (t1 - t0):.0f} %, "
              f"host steal {100 * (s1 - s0) / (t1 - t0):.1f} %")
    return 128 + got[0] if got else 0
