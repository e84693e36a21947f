"""Hostile inputs: about 80 things a careless or malicious user gives rtsched, by class (the
classes of docs/hardening.md). Each runs the installed `rtsched` (or the Python API) in a fresh
directory and is *handled* when it ends as it must: the exit code it should have (2 for a
refusal), no Python traceback, no Rust panic, no death by a signal (an abort), within 30 s and
2 GB of memory, and every file it was given (the inputs, a device, a link) as it was.

    .venv/bin/python tests/hostile.py           # every case, then the table by class
    .venv/bin/python tests/hostile.py -k paws   # the cases whose name has 'paws'

tests/test_hostile_inputs.py runs each case as a test. Cases marked `root` need real-time
privilege to reach what they test (a real run's own checks); without it they are skipped.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RTSCHED = str(Path(sys.executable).parent / "rtsched")
TIME_LIMIT_S = 30.0
MEMORY_LIMIT_KB = 2 * 1024 * 1024

BASE = "platform: {cpus: 2}\nrun: {duration: 100}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n"


def task(line: str, cpus: int = 2, run: str = "{duration: 100}") -> str:
    """A task file of one task line (the text inside `- {...}`)."""
    return f"platform: {{cpus: {cpus}}}\nrun: {run}\ntasks:\n  - {{{line}}}\n"


@dataclass
class Case:
    cls: str
    name: str
    #: argv after `rtsched`, or ("python", CODE) for the API; "{d}" is the case's directory.
    argv: tuple
    #: files to create: name -> text or bytes (or a callable taking the directory).
    files: dict = field(default_factory=dict)
    setup: Callable[[Path], object] | None = None
    #: paths (relative to the directory, or absolute) that must be left exactly as they were.
    keep: tuple = ()
    rc: tuple = (2,)
    #: words the output (stdout + stderr) must have, and must not.
    says: tuple = ()
    never: tuple = ()
    root: bool = False
    #: many seconds or a GB of memory: in `make test-hostile`, not in `make test`.
    heavy: bool = False
    check: Callable[[Path, subprocess.CompletedProcess], str | None] | None = None


@dataclass
class Outcome:
    case: Case
    handled: bool
    why: str
    rc: int | None
    seconds: float
    max_rss_kb: int
    output: str


def _snapshot(p: str):
    """What must not change about a path: its kind, link target, device number, contents."""
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(p))
    if stat.S_ISREG(st.st_mode):
        h = hashlib.sha256()
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return ("file", st.st_ino, h.hexdigest())
    if stat.S_ISDIR(st.st_mode):
        return ("dir", st.st_ino, sorted(os.listdir(p)))
    return ("special", stat.S_IFMT(st.st_mode), st.st_rdev, st.st_ino)


# Commands start from a small process of their own: a child's peak memory (wait4's ru_maxrss)
# counts the memory of the process it was forked from, and the harness holds tens of MB of
# test files. The spawner forks each command, kills its process group after TIME_LIMIT_S,
# and reports its exit status, peak memory (its waited-for children's too) and time.
SPAWNER = r"""
import json, os, sys, threading, time
for line in sys.stdin:
    req = json.loads(line)
    fds = [os.open(req[k], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) for k in ("out", "err")]
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            os.dup2(fds[0], 1)
            os.dup2(fds[1], 2)
            os.chdir(req["cwd"])
            os.execve(req["argv"][0], req["argv"], req["env"])
        finally:
            os._exit(127)
    for f in fds:
        os.close(f)
    killed = []
    def kill():
        killed.append(1)
        try:
            os.killpg(pid, 9)
        except ProcessLookupError:
            pass
    timer = threading.Timer(req["timeout"], kill)
    timer.start()
    t0 = time.monotonic()
    _, status, ru = os.wait4(pid, 0)
    seconds = time.monotonic() - t0
    timer.cancel()
    try:
        os.killpg(pid, 9)  # anything it left behind
    except ProcessLookupError:
        pass
    print(json.dumps({"status": status, "maxrss": ru.ru_maxrss, "seconds": seconds, "killed": bool(killed)}), flush=True)
"""
_spawner = None
_spawner_lock = threading.Lock()


def _spawn(cmd, cwd: Path, env) -> dict:
    global _spawner
    import json

    with _spawner_lock:
        if _spawner is None or _spawner.poll() is not None:
            _spawner = subprocess.Popen([sys.executable, "-S", "-c", SPAWNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, bufsize=1)
        req = {"argv": list(cmd), "cwd": str(cwd), "env": env, "timeout": TIME_LIMIT_S,
               "out": str(cwd / ".stdout"), "err": str(cwd / ".stderr")}
        _spawner.stdin.write(json.dumps(req) + "\n")
        _spawner.stdin.flush()
        return json.loads(_spawner.stdout.readline())


def can_rt() -> bool:
    try:
        from rtsched.reproduce._real import can_run_real
    except ImportError:
        return False
    return can_run_real()[0]


def run_case(case: Case, d: Path) -> Outcome:
    d.mkdir(parents=True, exist_ok=True)
    for name, content in case.files.items():
        content = content(d) if callable(content) else content
        (d / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    held = case.setup(d) if case.setup else None
    keep = [k if os.path.isabs(k) else str(d / k) for k in case.keep]
    before = {k: _snapshot(k) for k in keep}
    if case.argv and case.argv[0] == "python":
        cmd = [sys.executable, "-c", "import sys, rtsched\ntry:\n" + "".join(f"    {ln}\n" for ln in case.argv[1].format(d=d).splitlines())
               + "except rtsched.InputError as e:\n    print(e, file=sys.stderr)\n    sys.exit(2)\n"]
    else:
        cmd = [RTSCHED, *(str(a).format(d=d) for a in case.argv)]
    env = dict(os.environ, MPLBACKEND="Agg", COLUMNS="200")
    env.pop("RTSCHED_DEBUG", None)
    res = _spawn(cmd, d, env)
    out = {"out": (d / ".stdout").read_bytes(), "err": (d / ".stderr").read_bytes()}
    (d / ".stdout").unlink()
    (d / ".stderr").unlink()
    seconds, killed, maxrss = res["seconds"], res["killed"], res["maxrss"]
    p = subprocess.CompletedProcess(cmd, os.waitstatus_to_exitcode(res["status"]))
    text = (out.get("out", b"") + b"\n" + out.get("err", b"")).decode(errors="replace")
    if held is not None and hasattr(held, "close"):
        held.close()
    why = []
    if killed:
        why.append(f"still running after {TIME_LIMIT_S:.0f} s")
    elif p.returncode < 0:
        why.append(f"killed by signal {-p.returncode} ({signal.Signals(-p.returncode).name})")
    elif p.returncode not in case.rc:
        why.append(f"exit {p.returncode}, expected {' or '.join(map(str, case.rc))}")
    if "Traceback (most recent call last)" in text:
        why.append("a Python traceback")
    if "panicked" in text:
        why.append("a Rust panic")
    if maxrss > MEMORY_LIMIT_KB:
        why.append(f"{maxrss / 1048576:.1f} GB of memory")
    for k in keep:
        if _snapshot(k) != before[k]:
            why.append(f"{k} changed")
    why += [f"no {w!r} in its output" for w in case.says if w not in text]
    why += [f"{w!r} in its output" for w in case.never if w in text]
    if case.check and not why:
        extra = case.check(d, subprocess.CompletedProcess(cmd, p.returncode, out.get("out", b""), out.get("err", b"")))
        if extra:
            why.append(extra)
    return Outcome(case, not why, "; ".join(why), p.returncode, seconds, maxrss, text)


# --- setups -------------------------------------------------------------------------------

def _link(name, target):
    def go(d):
        os.symlink(target if os.path.isabs(target) else d / target, d / name)
    return go


def _device(name, major, minor):
    """A character device of the case's own (as root: mknod, so that code that replaces a
    device replaces this one, not the machine's /dev/null: d0dec2a did, in this harness);
    without root, a link to the machine's (which no one but root can replace)."""
    def go(d):
        if os.geteuid() == 0:
            os.mknod(d / name, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
        else:
            os.symlink("/dev/" + {(1, 3): "null", (1, 7): "full"}[(major, minor)], d / name)
    return go


def _mkdir(name):
    def go(d):
        (d / name).mkdir()
    return go


def _lock(table):
    """Hold the table's lock as a running sweep does (runner.table_lock)."""
    def go(d):
        f = open(d / (table + ".lock"), "a+")
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        f.seek(0)
        f.truncate()
        f.write("424242\n")
        f.flush()
        return f
    return go


def _sweep_table(name, cut=False):
    """A real sweep table of SMALL_SPEC (cut in half when `cut`)."""
    def go(d):
        (d / "small.yaml").write_text(SMALL_SPEC)
        subprocess.run([RTSCHED, "sweep", str(d / "small.yaml"), "-o", str(d / name), "--no-plots", "-q", "-j", "1"],
                       check=True, capture_output=True, cwd=d, env=dict(os.environ, MPLBACKEND="Agg"))
        if cut:
            b = (d / name).read_bytes()
            (d / name).write_bytes(b[: len(b) // 2])
    return go


def _jobs_parquet(name):
    def go(d):
        (d / "ts.yaml").write_text(BASE)
        subprocess.run([RTSCHED, "simulate", str(d / "ts.yaml"), "--jobs-parquet", str(d / name)], check=True,
                       capture_output=True, cwd=d)
    return go


def _all(*fs):
    def go(d):
        out = None
        for f in fs:
            out = f(d) or out
        return out
    return go


def _no_escape(d, p):
    return "a raw escape character reached the terminal" if b"\x1b" in p.stdout + p.stderr else None


def _short_message(d, p):
    return f"a {len(p.stderr):,}-byte message" if len(p.stderr) > 2500 else None


def _same_as_text(path, text):
    def check(d, p):
        return None if (d / path).read_text() == text else f"{path} is not what was given"
    return check


SMALL_SPEC = ("name: s\nseed: 1\ngenerator: {name: uunifast-discard, params: {n: 4, m: 2}}\nutilisation: {points: [1.0]}\n"
              "schedulers: [gedf]\nseeds: 2\nduration: 100ms\n")

ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))


def _big(n_bytes, line):
    def make(d):
        head = "platform: {cpus: 2}\nrun: {duration: 100}\ntasks:\n"
        body = line * (n_bytes // len(line) + 1)
        return head + body
    return make


def _tuf_points(n_bytes):
    def make(d):
        pts = ", ".join(f"[{i}us, 1]" for i in range(n_bytes // 12))
        return f"platform: {{cpus: 2}}\nrun: {{duration: 100}}\ntasks:\n  - {{name: a, period: 10, wcet: 2, tuf: {{shape: points, points: [{pts}]}}}}\n"
    return make


OUT = "Outputs"
SWEEP = "Sweeps"
READ = "Unbounded reading"
TIME = "Unbounded time"
MSG = "Exit codes and messages"

CASES = [
    # --- outputs: never replace an input, a device, a link --------------------------------
    *[Case(OUT, f"{opt} names the input", ("simulate", "ts.yaml", opt, "ts.yaml"), {"ts.yaml": BASE}, keep=("ts.yaml",),
           says=("an input of this run",)) for opt in ("--json", "--jobs-csv", "--jobs-parquet", "--trace")],
    Case(OUT, "--gantt names the input", ("simulate", "ts.yaml", "--gantt", "ts.yaml"), {"ts.yaml": BASE}, keep=("ts.yaml",)),
    Case(OUT, "--json is a link to the input", ("simulate", "ts.yaml", "--json", "l.json"), {"ts.yaml": BASE},
         setup=_link("l.json", "ts.yaml"), keep=("ts.yaml", "l.json"), says=("an input of this run",)),
    Case(OUT, "--json a null device is written through", ("simulate", "ts.yaml", "--json", "null"), {"ts.yaml": BASE},
         setup=_device("null", 1, 3), keep=("null",), rc=(0,)),
    Case(OUT, "--json a full device: the write fails", ("simulate", "ts.yaml", "--json", "full"), {"ts.yaml": BASE},
         setup=_device("full", 1, 7), keep=("full",), says=("full",)),
    Case(OUT, "--json is a link to another file: followed", ("simulate", "ts.yaml", "--json", "l.json"),
         {"ts.yaml": BASE, "target.json": "old"}, setup=_link("l.json", "target.json"), keep=("l.json", "ts.yaml"), rc=(0,),
         check=lambda d, p: None if (d / "target.json").read_text().startswith("{") else "the link's file was not written"),
    Case(OUT, "--json is a link to nothing", ("simulate", "ts.yaml", "--json", "l.json"), {"ts.yaml": BASE},
         setup=_link("l.json", "nowhere.json"), keep=("l.json",), says=("leads to no file",)),
    Case(OUT, "--json is a directory", ("simulate", "ts.yaml", "--json", "out"), {"ts.yaml": BASE}, setup=_mkdir("out"),
         keep=("out",)),
    Case(OUT, "two outputs name one file", ("simulate", "ts.yaml", "--json", "o", "--jobs-csv", "o"), {"ts.yaml": BASE},
         says=("given to both",)),
    Case(OUT, "partition -o names its input", ("partition", "ts.yaml", "-o", "ts.yaml"), {"ts.yaml": BASE}, keep=("ts.yaml",)),
    Case(OUT, "run --json names its input", ("run", "ts.yaml", "--json", "ts.yaml"), {"ts.yaml": BASE}, keep=("ts.yaml",)),
    Case(OUT, "compare --json names its input", ("compare", "ts.yaml", "--json", "ts.yaml"), {"ts.yaml": BASE}, keep=("ts.yaml",)),
    Case(OUT, "calibrate --report names the profile checked", ("calibrate", "--check", "--profile", "p.yaml", "--report", "p.yaml"),
         {"p.yaml": "costs: {}\n"}, keep=("p.yaml",)),
    Case(OUT, "gen -o is a directory", ("gen", "uunifast-discard", "n=4", "m=2", "U=1", "-o", "out"), setup=_mkdir("out"), keep=("out",)),
    Case(OUT, "sweep -o names the spec", ("sweep", "spec.yaml", "-o", "spec.yaml", "--no-plots", "-q"), {"spec.yaml": SMALL_SPEC},
         keep=("spec.yaml",)),
    Case(OUT, "--json '-' writes to standard output", ("simulate", "ts.yaml", "--json", "-"), {"ts.yaml": BASE}, rc=(0,),
         keep=("ts.yaml",), says=('"runs"',)),

    # --- sweeps ---------------------------------------------------------------------------
    Case(SWEEP, "the table is a per-job Parquet file", ("sweep", "spec.yaml", "-o", "jobs.parquet", "--no-plots", "-q"),
         {"spec.yaml": SMALL_SPEC}, setup=_jobs_parquet("jobs.parquet"), keep=("jobs.parquet",), says=("is not a sweep table",)),
    Case(SWEEP, "the table is garbage", ("sweep", "spec.yaml", "-o", "t.parquet", "--no-plots", "-q"),
         {"spec.yaml": SMALL_SPEC, "t.parquet": b"PAR1" + os.urandom(4000)}, keep=("t.parquet",)),
    Case(SWEEP, "the table was cut in half", ("sweep", "small.yaml", "-o", "t.parquet", "--no-plots", "-q"),
         setup=_sweep_table("t.parquet", cut=True), keep=("t.parquet",), says=("cannot be read as a sweep table",)),
    Case(SWEEP, "the table is a CSV of something else", ("sweep", "spec.yaml", "-o", "t.csv", "--no-plots", "-q"),
         {"spec.yaml": SMALL_SPEC, "t.csv": "a,b\n1,2\n"}, keep=("t.csv",)),
    Case(SWEEP, "another sweep holds the table", ("sweep", "spec.yaml", "-o", "t.parquet", "--no-plots", "-q"),
         {"spec.yaml": SMALL_SPEC}, setup=_lock("t.parquet"), says=("another sweep",)),
    Case(SWEEP, "a finished table resumes without rewriting", ("sweep", "small.yaml", "-o", "t.parquet", "--no-plots", "-q"),
         setup=_sweep_table("t.parquet"), keep=("t.parquet",), rc=(0,)),
    Case(SWEEP, "the spec is a directory", ("sweep", "d"), setup=_mkdir("d"), keep=("d",)),
    Case(SWEEP, "the spec is /dev/zero", ("sweep", "/dev/zero"), keep=("/dev/zero",)),
    Case(SWEEP, "the spec is an alias bomb", ("sweep", "bomb.yaml"), {"bomb.yaml": ALIAS_BOMB}),
    Case(SWEEP, "the spec has a Python tag", ("sweep", "tag.yaml"), {"tag.yaml": "name: !!python/object/apply:os.system ['true']\n"}),
    Case(SWEEP, "the spec is 2 MB", ("sweep", "big.yaml"), {"big.yaml": "name: s\n" + "# padding\n" * 200_000}),
    Case(SWEEP, "the spec has paws on 65,536 CPUs", ("sweep", "spec.yaml", "-o", "t.parquet", "--no-plots", "-q", "-j", "1"),
         {"spec.yaml": "name: p\nseed: 1\ngenerator: {name: uunifast-discard, params: {n: 4, m: 65536}}\n"
                       "utilisation: {points: [2.0]}\nschedulers: [paws]\nseeds: 1\nduration: 1s\n"}, rc=(0, 2)),

    # --- unbounded reading ----------------------------------------------------------------
    Case(READ, "the task file is /dev/zero", ("simulate", "/dev/zero"), keep=("/dev/zero",), says=("character device",)),
    Case(READ, "the task file is a directory", ("validate", "d"), setup=_mkdir("d"), keep=("d",)),
    Case(READ, "a 40 MB task file", ("validate", "big.yaml"), {"big.yaml": _big(40 << 20, "  - {name: a, period: 10, wcet: 1}\n")},
         says=("limit",)),
    Case(READ, "30 MB of TUF points", ("validate", "tuf.yaml"), {"tuf.yaml": _tuf_points(30 << 20)}, rc=(0, 2), heavy=True),
    Case(READ, "540 KB of {threads: 4096} regions", ("validate", "w.yaml"),
         {"w.yaml": task("name: a, period: 10, regions: [" + ", ".join(["{threads: 4096, wcet: 1us}"] * 21_600) + "]")},
         says=("limit of 200000 threads in a task",)),
    Case(READ, "250,000 threads written out", ("validate", "w.yaml"),
         {"w.yaml": task("name: a, period: 10, regions: [[" + ", ".join(["1us"] * 250_000) + "]]")}, says=("threads",)),
    Case(READ, "11 tasks of 200,000 threads", ("validate", "w.yaml"),
         {"w.yaml": "platform: {cpus: 2}\ntasks:\n" + "".join(f"  - {{name: t{i}, period: 10, regions: [{{threads: 200000, wcet: 1ns}}]}}\n" for i in range(11))},
         says=("threads in a set",)),
    Case(READ, "the overhead profile is /dev/zero", ("validate", "ts.yaml"),
         {"ts.yaml": "platform: {cpus: 2}\nrun: {overheads: /dev/zero}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n"}, keep=("/dev/zero",)),
    Case(READ, "partition --overheads is a directory", ("partition", "ts.yaml", "--overheads", "d"), {"ts.yaml": BASE}, setup=_mkdir("d")),
    Case(READ, "the API: a billion-job run", ("python", "rtsched.simulate(rtsched.parse_taskset(open('{d}/ts.yaml').read(), 'yaml', 'ts.yaml'), duration='10000s')"),
         {"ts.yaml": task("name: a, period: 10us, wcet: 1us")}, says=("the limit is 10,000,000",)),
    Case(READ, "the API: no job limit, still bounded", ("python", "rtsched.simulate('{d}/ts.yaml', duration='100000000s', max_jobs=None)"),
         {"ts.yaml": task("name: a, period: 1ns, wcet: 1ns")}, says=("at most",)),
    Case(READ, "--jobs-csv of 9.9 million jobs (under the job limit)", ("simulate", "ts.yaml", "--jobs-csv", "j.csv", "--duration", "99s"),
         {"ts.yaml": task("name: a, period: 10us, wcet: 1us")}, rc=(0,), heavy=True),
    Case(READ, "a task file of invalid UTF-8", ("validate", "b.yaml"), {"b.yaml": b"tasks:\n  - {name: \xff\xfe, period: 10}\n"}),
    Case(READ, "a task file of random bytes", ("validate", "r.yaml"), {"r.yaml": os.urandom(100_000)}),

    # --- unbounded time -------------------------------------------------------------------
    Case(TIME, "a 1 ns overhead tick", ("simulate", "ts.yaml"),
         {"ts.yaml": "platform: {cpus: 2}\nrun: {duration: 1s, overheads: {tick: 1ns, tick_period: 1ns}}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n"},
         says=("steps of scheduling work", "--max-work")),
    Case(TIME, "cfs:tick=1ns", ("simulate", "ts.yaml", "-s", "cfs:tick=1ns"), {"ts.yaml": task("name: a, period: 10, wcet: 2", run="{duration: 1s}")},
         says=("steps of scheduling work",)),
    Case(TIME, "paws on 65,536 CPUs", ("simulate", "ts.yaml", "-s", "paws"),
         {"ts.yaml": task("name: a, period: 1, wcet: 0.5", cpus=65536, run="{duration: 1s}")}, says=("65,536 CPUs",)),
    Case(TIME, "ggua on 65,536 CPUs", ("simulate", "ts.yaml", "-s", "ggua"),
         {"ts.yaml": task("name: a, period: 1, wcet: 0.5", cpus=65536, run="{duration: 1s}")}, says=("steps",)),
    Case(TIME, "the API: paws on 65,536 CPUs", ("python", "rtsched.simulate('{d}/ts.yaml', 'paws')"),
         {"ts.yaml": task("name: a, period: 1, wcet: 0.5", cpus=65536, run="{duration: 1s}")}, says=("max_work",)),
    Case(TIME, "a 1 ns period", ("simulate", "ts.yaml"), {"ts.yaml": task("name: a, period: 1ns, wcet: 1ns", run="{duration: 1s}")},
         says=("--max-jobs",)),
    Case(TIME, "--max-work lifts the limit knowingly", ("simulate", "ts.yaml", "-s", "paws", "--max-work", "100000000000"),
         {"ts.yaml": task("name: a, period: 10, wcet: 5", cpus=1024, run="{duration: 50}")}, rc=(0,)),
    Case(TIME, "gen: 100,000 tasks of randfixedsum", ("gen", "randfixedsum", "n=100000", "m=4", "U=2")),
    Case(TIME, "gen: paws2013 on 65,536 CPUs", ("gen", "paws2013", "m=65536")),
    Case(TIME, "gen: a billion tasks", ("gen", "uunifast-discard", "n=1000000000", "m=4", "U=2")),
    Case(TIME, "kernel:fifo with 70,000 threads", ("run", "w.yaml", "-b", "kernel:fifo"),
         {"w.yaml": task("name: a, period: 100, regions: [{threads: 70000, wcet: 1us}]")}, says=("limit of 4096",), root=True),
    Case(TIME, "testbed with cfs:tick=1ns", ("run", "ts.yaml", "-b", "testbed:cfs:tick=1ns"),
         {"ts.yaml": task("name: a, period: 10, wcet: 2", run="{duration: 1s}")}, says=("steps of scheduling work",)),

    # --- exit codes and messages ----------------------------------------------------------
    Case(MSG, "--seed 2^64", ("simulate", "ts.yaml", "--seed", str(2**64)), {"ts.yaml": BASE}, says=("--seed",)),
    Case(MSG, "--seed -1", ("simulate", "ts.yaml", "--seed", "-1"), {"ts.yaml": BASE}, says=("--seed",)),
    Case(MSG, "gen --seed -5", ("gen", "uunifast-discard", "n=4", "m=2", "U=1", "--seed", "-5"), says=("--seed",)),
    Case(MSG, "the API: seed 2^64", ("python", "rtsched.simulate('{d}/ts.yaml', seed=2**64)"), {"ts.yaml": BASE}, says=("seed",)),
    Case(MSG, "--gantt out.txt", ("simulate", "ts.yaml", "--gantt", "out.txt"), {"ts.yaml": BASE}, says=("--gantt",)),
    Case(MSG, "a 1 MB task name", ("validate", "n.yaml"), {"n.yaml": task("name: " + "x" * 1_000_000 + ", period: 10, wcet: -1")},
         check=_short_message),
    Case(MSG, "escape sequences in a task name", ("simulate", "e.yaml"),
         {"e.yaml": "platform: {cpus: 2}\nrun: {duration: 100}\ntasks:\n  - {name: \"\\e[2J\\e[31mred\", period: 10, wcet: 2}\n"},
         rc=(0,), check=_no_escape),
    Case(MSG, "escape sequences in an error", ("validate", "e.yaml"),
         {"e.yaml": "platform: {cpus: 2}\ntasks:\n  - {name: \"\\e]0;pwned\\a\", period: 10, wcet: -1}\n"}, check=_no_escape),
    Case(MSG, "--duration -5", ("simulate", "ts.yaml", "--duration", "-5"), {"ts.yaml": BASE}, says=("--duration",)),
    Case(MSG, "a byte-order mark", ("simulate", "bom.yaml"), {"bom.yaml": "\ufeff" + BASE}, rc=(0,)),
    Case(MSG, "a bare 10.00000000000000001", ("validate", "x.yaml"), {"x.yaml": task("name: a, period: 10.00000000000000001, wcet: 2")},
         says=("10.00000000000000001",)),
    Case(MSG, "a quoted '10.00000000000000001'", ("validate", "x.yaml"), {"x.yaml": task("name: a, period: '10.00000000000000001', wcet: 2")},
         says=("period",)),
    Case(MSG, "1e-1 in a spec is 0.1", ("python", "from rtsched.sweep.spec import load_spec\n"
                                                  "s = load_spec('{d}/s.yaml')\n"
                                                  "assert list(s.points) == [0.1], s.points"),
         {"s.yaml": SMALL_SPEC.replace("[1.0]", "[1e-1]")}, rc=(0,)),
    Case(MSG, "a misspelt field", ("validate", "t.yaml"), {"t.yaml": task("name: a, perod: 10, wcet: 2")}, says=("did you mean 'period'",)),
    Case(MSG, "a negative WCET", ("validate", "t.yaml"), {"t.yaml": task("name: a, period: 10, wcet: -2")}, says=("task 'a'", "wcet")),
    Case(MSG, "NaN", ("validate", "t.yaml"), {"t.yaml": task("name: a, period: .nan, wcet: 2")}, says=("NaN",)),
    Case(MSG, "a key given twice", ("validate", "t.yaml"), {"t.yaml": task("name: a, period: 10, period: 5, wcet: 2")}, says=("twice",)),
    Case(MSG, "two YAML documents", ("validate", "t.yaml"), {"t.yaml": BASE + "---\n" + BASE}),
    Case(MSG, "an empty file", ("validate", "t.yaml"), {"t.yaml": ""}),
    Case(MSG, "JSON NaN", ("validate", "t.json"), {"t.json": '{"platform": {"cpus": 1}, "tasks": [{"name": "a", "period": NaN, "wcet": 1}]}'},
         says=("NaN",)),
    Case(MSG, "70,000 CPUs", ("validate", "t.yaml"), {"t.yaml": task("name: a, period: 10, wcet: 2", cpus=70000)}, says=("65536",)),
    Case(MSG, "100,000 levels of nesting", ("validate", "t.yaml"), {"t.yaml": "a: " + "[" * 100_000}, says=("levels",)),
    Case(MSG, "--max-jobs 0", ("simulate", "ts.yaml", "--max-jobs", "0"), {"ts.yaml": BASE}, says=("--max-jobs",)),
    Case(MSG, "--max-work -1", ("simulate", "ts.yaml", "--max-work", "-1"), {"ts.yaml": BASE}, says=("--max-work",)),
    Case(MSG, "an unknown scheduler", ("simulate", "ts.yaml", "-s", "gedff"), {"ts.yaml": BASE}, says=("gedf",)),
    Case(MSG, "a period of 1e30", ("validate", "t.yaml"), {"t.yaml": task("name: a, period: 1e30, wcet: 2")}, says=("period",)),
    Case(MSG, "a task file that does not exist", ("simulate", "nope.yaml"), says=("nope.yaml",)),
]


def main(argv):
    import shutil
    import tempfile

    only = argv[argv.index("-k") + 1] if "-k" in argv else None
    rt = can_rt()
    base = Path(tempfile.mkdtemp(prefix="rtsched-hostile-"))
    rows, outcomes = {}, []
    try:
        for i, case in enumerate(CASES):
            if only and only not in case.name:
                continue
            if case.root and not rt:
                print(f"skip  {case.cls}: {case.name} (needs real-time privilege)")
                continue
            o = run_case(case, base / f"c{i}")
            outcomes.append(o)
            print(f"{'ok  ' if o.handled else 'FAIL'}  {case.cls}: {case.name} (exit {o.rc}, {o.seconds:.1f} s, "
                  f"{o.max_rss_kb / 1024:.0f} MB){'' if o.handled else ': ' + o.why}", flush=True)
            tried, ok = rows.get(case.cls, (0, 0))
            rows[case.cls] = (tried + 1, ok + o.handled)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("\n| class | cases tried | handled | slowest | most memory |\n|---|---|---|---|---|")
    for cls, (tried, ok) in rows.items():
        mine = [o for o in outcomes if o.case.cls == cls]
        print(f"| {cls} | {tried} | {ok} | {max(o.seconds for o in mine):.1f} s | {max(o.max_rss_kb for o in mine) / 1024:.0f} MB |")
    total = sum(t for t, _ in rows.values())
    handled = sum(h for _, h in rows.values())
    print(f"| **all** | {total} | {handled} | | |")
    return 0 if handled == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
