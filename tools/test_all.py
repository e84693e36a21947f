"""`make test`: every test stage, within CI's budget on a 2-core machine, ending with one table of
the stages and their wall times, and one line of the tests passed and failed in all.

Each stage is a target of the Makefile (so `make test-rust` runs one alone, the same way).
Stages in one step run at once when they share no resource and leave a core idle alone (the
Rust tests run beside the loom model check's build; the kernel guest runs single-threaded TCG
beside the fuzzers, which run one process each). Measured, not assumed: the extension's build
beside loom's took 3:01 and 4:01 (one after the other: 1:05, then loom beside the Rust tests
2:03). Stages that make
real runs (real-time threads on every CPU: `make test-real`, `make test-soak`) run alone, after
everything else. The simulator-only Python tests run without CAP_SYS_NICE (setpriv), so a test
that makes a real run without the `real` mark fails there instead of running beside others.

A stage whose prerequisite failed is not run (shown as such); the others still run, so one CI
log shows every failure. The output of stages run at once is printed when each ends; a stage
run alone streams its output. Only the standard library: this runs before the venv exists.

    python3 tools/test_all.py            # what `make test` runs
    python3 tools/test_all.py --list     # the steps, without running them
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "target" / "test-logs"
MAKE = os.environ.get("MAKE", "make")


@dataclass
class Stage:
    name: str
    target: str
    after: tuple = ()
    wall: float = 0.0
    status: str = "not run"
    counts: dict = field(default_factory=dict)


#: The steps, in order; the stages of one step run at once.
STEPS = [
    [Stage("setup: venv and Python packages", "setup"), Stage("setup: system packages", "system-deps"),
     Stage("build: Rust tests", "build-rust-tests")],
    [Stage("build: extension", "build-test", after=("setup",))],
    [Stage("Rust tests", "test-rust", after=("build-rust-tests",)), Stage("loom (cpudl)", "test-loom")],
    [Stage("Python tests (simulator)", "test-python", after=("build-test",))],
    [Stage("kernel guest (sched_ext)", "test-kernel", after=("build-rust-tests", "system-deps")),
     Stage("fuzzers", "test-fuzz"), Stage("lint: fmt, clippy, ruff", "lint", after=("setup",))],
    [Stage("real runs (Rust, Python)", "test-real", after=("build-test", "build-rust-tests", "system-deps"))],
    [Stage("soak (CI length)", "test-soak", after=("build-test",))],
]

# What the test runners print at their end, added up for the last line.
CARGO = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", re.M)
PYTEST = re.compile(r"^(?!test result)=*\s*(\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b.*) in [\d.]+s", re.M)
GUEST = re.compile(r"^kernel test: (\d+) passed, (\d+) failed", re.M)
FUZZ = re.compile(r"^fuzz: (\d+) targets?, (\d+) crashed", re.M)


def counts(text: str) -> dict:
    c = {"passed": 0, "failed": 0, "skipped": 0}
    for m in CARGO.finditer(text):
        c["passed"] += int(m.group(1))
        c["failed"] += int(m.group(2))
        c["skipped"] += int(m.group(3))
    for m in PYTEST.finditer(text):
        for n, word in re.findall(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)", m.group(1)):
            key = {"error": "failed", "errors": "failed", "xfailed": "skipped", "xpassed": "passed"}.get(word, word)
            c[key] += int(n)
    for m in GUEST.finditer(text):
        c["passed"] += int(m.group(1))
        c["failed"] += int(m.group(2))
    for m in FUZZ.finditer(text):
        c["passed"] += int(m.group(1)) - int(m.group(2))
        c["failed"] += int(m.group(2))
    return c


def fmt(s: float) -> str:
    return f"{int(s // 60)}:{int(s % 60):02d}"


def run_step(step, done: dict):
    """Run the stages of one step at once; a stage alone streams its output."""
    procs = []
    for st in step:
        missing = [a for a in st.after if done.get(a) != "ok"]
        if missing:
            st.status = f"not run ({', '.join(missing)} did not pass)"
            done[st.target] = "not run"
            continue
        log = LOGS / f"{st.target}.log"
        print(f"\n=== {st.name} (make {st.target}) ===", flush=True)
        cmd = [MAKE, "--no-print-directory", st.target]
        if done.get("build-test") == "ok":
            cmd.append("RTSCHED_TEST_BUILT=1")  # the extension is built and installed: not again
        if len(step) == 1:
            p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
            procs.append((st, p, log, time.monotonic(), None))
        else:
            f = open(log, "w")
            p = subprocess.Popen(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT)
            procs.append((st, p, log, time.monotonic(), f))
    for st, p, log, t0, f in procs:
        if f is None:  # streamed (a stage alone): copy to the terminal and the log
            with open(log, "w") as out:
                for line in p.stdout:
                    sys.stdout.write(line)
                    sys.stdout.flush()
                    out.write(line)
            p.wait()
            st.wall = time.monotonic() - t0
    running = [(st, p, t0, f) for st, p, log, t0, f in procs if f is not None]
    while running:  # each stage's own end, whichever ends first
        time.sleep(0.2)
        for st, p, t0, f in [r for r in running if r[1].poll() is not None]:
            st.wall = time.monotonic() - t0
            f.close()
            running.remove((st, p, t0, f))
    for st, p, log, _t0, f in procs:
        text = log.read_text(errors="replace")
        if f is not None:
            print(f"\n--- {st.name} (make {st.target}): output ---")
            sys.stdout.write(text)
        st.counts = counts(text)
        st.status = "ok" if p.returncode == 0 else f"FAILED (exit {p.returncode})"
        done[st.target] = "ok" if p.returncode == 0 else "failed"
        print(f"--- {st.name}: {st.status}, {fmt(st.wall)} ---", flush=True)


def main() -> int:
    if "--list" in sys.argv:
        for i, step in enumerate(STEPS, 1):
            print(f"step {i}: " + " | ".join(f"{s.name} (make {s.target})" for s in step))
        return 0
    LOGS.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    done: dict = {}
    step_walls = []
    for step in STEPS:
        s0 = time.monotonic()
        run_step(step, done)
        step_walls.append(time.monotonic() - s0)
    total = time.monotonic() - t0
    print("\n=== make test: stages and wall times ===")
    rows = []
    for i, (step, w) in enumerate(zip(STEPS, step_walls), 1):
        for j, st in enumerate(step):
            c = st.counts
            tally = f"{c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped" if c and any(c.values()) else ""
            rows.append((str(i) if j == 0 else "", fmt(w) if j == 0 else "", st.name, fmt(st.wall), st.status, tally))
    widths = [max(len(r[k]) for r in rows + [("step", "step wall", "stage", "wall", "result", "tests")]) for k in range(6)]
    for r in [("step", "step wall", "stage", "wall", "result", "tests")] + rows:
        print("  ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip())
    print(f"total wall time: {fmt(total)} (CI's limit 90:00; this project's budget 30:00)")
    passed = sum(st.counts.get("passed", 0) for step in STEPS for st in step)
    failed = sum(st.counts.get("failed", 0) for step in STEPS for st in step)
    bad = [st for step in STEPS for st in step if st.status != "ok"]
    if bad:
        print("not ok: " + "; ".join(f"{st.name}: {st.status}" for st in bad))
    print(f"total: {passed} passed, {failed} failed")
    return 1 if bad or failed else 0


if __name__ == "__main__":
    sys.exit(main())
