#!/usr/bin/env python3
"""Digests of every output rtsched writes for the bundled examples, to show that a change of
structure (a file split, a function cut in two) left the behaviour byte-identical.

    PY tools/outputs_digest.py --out DIR [-j N] [--only TEXT] [--quick]
    python3 tools/outputs_digest.py --compare A B

PY is the Python of the build under test (the `rtsched` it imports is what runs, through its
command line's `main`): `.venv/bin/python` here, `/elsewhere/.venv/bin/python` for another
checkout. Standard library and that build only; about 1,300 commands, 2-3 minutes with -j 2. A refactor is checked by running it on the commit before (into A) and
after (into B) and comparing: `--compare` lists every file whose digest differs, or that one
side has and the other has not, and exits 1 if there is any (docs/performance.md "Behaviour
unchanged").

What it runs (each command in its own directory under DIR/runs, with relative paths, so the
file names written into the outputs are the same from any checkout):
- inputs: every examples/*.yaml and *.json of this repository, a few sets written here (best-
  effort tasks for cfs and the opzone balancer, a cache topology, the task fields no example
  uses), and sets drawn by `rtsched gen` (every generator, fixed seeds; the YAML it writes is
  itself an output);
- per input: `validate`, `analyze`, `convert` to YAML, JSON and rt-app JSON (kernel:fifo and
  kernel:deadline), `partition` with three heuristics;
- per input: `simulate` under every registered scheduler (`rtsched.schedulers()`) and, on the
  examples and the sets written here, the variants in VARIANTS (partition heuristics, push
  variants, PAWS's options, the utility-accrual models, the cfs balancers and opzone options),
  each writing the JSON results with every job (`--json --json-jobs`), the Perfetto trace
  (`--trace`) and the jobs CSV (`--jobs-csv`), with `--per-task`. A scheduler that refuses a
  set is recorded too (its message and exit code): a refusal is behaviour.
- the reader on bad input: each input as JSON, mutated one field at a time (removed, replaced by
  a value of another type or out of range, a key added), parsed by `rtsched.parse_taskset`; the
  error message, or the task set written back by `to_yaml`, per mutant (DIR/parse/*.txt).
The commands run in -j processes, each importing rtsched once (command k in process k mod j);
every command's exit code, standard output and standard error go into `console.txt` beside its
outputs. DIR/digests.txt lists `sha256  bytes  path` for every file under DIR/runs and
DIR/parse, sorted. Nothing here reads the wall clock into an output (`--measure-policy` is not
used), so two runs of one build agree byte for byte.

--quick runs the examples and the sets written here under the bare scheduler names only
(seconds, for a first look);
--only TEXT keeps the commands whose directory name contains TEXT.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Options of the registered schedulers, run on the examples and the sets written here.
VARIANTS = (
    "gedf:model=stw", "gedf:model=ac", "gedf:model=stw,mapper=none", "gnpedf:model=ac",
    "gfp:prio=rm", "gfp:prio=dm", "gfp:model=ac,prio=rm", "gfifo:model=stw",
    "pedf:ffd", "pedf:wfd", "pedf:bfd", "pedf:nfd", "pedf:bf", "pedf:lwfg", "pedf:lwfg+ffd",
    "pedf:wfd-overflow", "pedf:ffdd",
    "pfp:partition=ffd", "pfp:prio=dm,partition=wfd",
    "gedf-dist:push=linear", "gedf-dist:push=fmask", "gedf-dist:push=heap",
    "gfp-dist:push=linear", "gfp-dist:push=heap", "gfp-dist:prio=dm",
    "paws:pull=inversion", "paws:master=joining", "paws:steal=bottom", "paws:steal=none",
    "paws:fork=global", "paws:pull=inversion,master=joining",
    "ggua:model=ac", "ggua:chain_pud=max", "ggua:abort=off", "ggua:chains=off", "ggua:mapper=none",
    "nggua:shed=off", "nggua:model=ac", "nggua:chains=off", "ghvdf:model=ac",
    "dasa:load", "pdasa:load", "pdasa:ffd", "lbesa:load", "lbesa:wfd",
    "cfs:balancer=opzone", "cfs:balancer=none", "cfs:balancer=linux,guard=on",
    "cfs:balancer=opzone,util=average", "cfs:balancer=opzone,checks=periodic",
    "cfs:balancer=opzone,zone=cold", "cfs:balancer=opzone,zone=warm-low",
    "cfs:balancer=opzone,zone=warm-high", "cfs:balancer=opzone,zone=hot",
    "cfs:balancer=opzone,task_floor=spot", "cfs:balancer=opzone,task_floor=off",
    "cfs:balancer=opzone,task_usage=running", "cfs:balancer=opzone,guard=off",
    "cfs:balancer=opzone,prize_time=5ms,punish_time=50ms,score_step=2",
    "cfs:tick=4ms,latency=12ms,min_granularity=1ms,wakeup_granularity=2ms",
)
# Run options of the simulate command, each with a few schedulers.
OPTION_RUNS = (
    (("--on-miss", "abort"), ("gedf", "pedf", "ggua", "paws")),
    (("--seed", "17", "--duration", "150ms"), ("gedf", "gfp-dist", "cfs")),
    (("--partition", "lwfg+ffd"), ("pedf", "pfp", "pdasa", "lbesa")),
)
HEURISTICS = ("ffd", "wfd", "lwfg+ffd")
# Sets drawn by `rtsched gen NAME ARGS --seed N`.
GENERATED = (
    ("uunifast", ("n=8", "U=2.6", "m=4", "tmin=5ms", "tmax=50ms"), 3),
    ("uunifast-discard", ("n=6", "U=1.5", "m=2", "u_max=0.5", "deadline=constrained"), 4),
    ("randfixedsum", ("n=10", "U=3.2", "m=4", "period=harmonic"), 5),
    ("paws2013", ("m=4", "window=2"), 6),
    ("lelli2011", ("m=4",), 7),
    ("mwh", ("m=8", "U=4"), 3),
    ("mlu", ("m=8", "U=3"), 3),
    ("chronos2011", ("m=4", "U=5"), 2),
    ("dag-nfj", ("n=3", "U=1.5", "m=4", "d=2", "k=3"), 2),
    ("dag-layered", ("n=3", "U=2", "m=4", "nodes=6", "layers=2"), 2),
    ("waters2015", ("m=4", "U=2"), 1),
)
# Sets that exercise what the examples do not: best-effort tasks (cfs, opzone), a cache
# topology, and the task fields no example uses.
WRITTEN = {
    "fair.yaml": """\
platform: {cpus: 4}
run: {duration: 300ms, seed: 3}
tasks:
  - {name: urgent, period: 1ms, wcet: 20us, priority: 99, cpu: 1}
  - {name: ctl, period: 10ms, wcet: 2ms, priority: 50}
  - {name: plain, period: 20ms, wcet: 3ms}
  - {name: hog0, class: fair, behaviour: hog}
  - {name: hog1, class: fair, nice: 5, behaviour: hog}
  - {name: hog2, class: fair, behaviour: hog, cpu: 0}
  - {name: hog3, nice: -3}
  - {name: ui, class: fair, nice: -5, behaviour: sleeper, run: 2ms, sleep: 8ms}
  - {name: net, behaviour: bursty, run: [1ms, 20ms], sleep: [5ms, 50ms]}
  - {name: late, class: fair, behaviour: hog, offset: 50ms}
""",
    "cache.yaml": """\
platform:
  cpus: 4
  topology:
    caches:
      - {level: 1, type: data, size: 32KiB, ways: 8}
      - {level: 1, type: instruction, size: 32KiB, ways: 8}
      - {level: 2, size: 1MiB, line: 64, ways: 16, shared_by: 2}
      - {level: 3, size: 8MiB, ways: 16, cpus: ["0-3"]}
    nodes: [[0, 1], [2, 3]]
run: {duration: 200ms, seed: 5, cache: {l2: 4, l3: 12, memory: 60, passes: 2}}
tasks:
  - {name: a, period: 10ms, wcet: 3ms, wss: 512KiB, group: 1}
  - {name: b, period: 10ms, wcet: 2ms, wss: 512KiB, group: 1}
  - {name: c, period: 20ms, wcet: 6ms, wss: 4MiB, group: 2}
  - {name: d, period: 25ms, wcet: 5ms, wss: 64KiB}
  - {name: e, period: 40ms, wcet: 9ms, wss: 2MiB, group: 2}
""",
    "preset.yaml": """\
platform: {cpus: 12, topology: {preset: opteron6164x4, nodes: 6}}
run: {duration: 100ms, seed: 2, cache: true}
tasks:
  - {name: a, period: 10ms, wcet: 4ms, wss: 1MiB, group: 1}
  - {name: b, period: 10ms, wcet: 4ms, wss: 1MiB, group: 1}
  - {name: c, period: 5ms, wcet: 2ms, wss: 6MiB}
""",
    "fields.yaml": """\
name: fields
description: the task fields no example uses
platform: {cpus: 3}
resources: [bus, log, dma]
run:
  duration: 250ms
  seed: 9
  on_miss: continue
  execution: {model: overrun, ratio: 1.3, probability: 0.2}
  overheads: {decision: 2us, context_switch: 5us, migration: 10us, release: 3us, tick: 1us,
              tick_period: 2ms, abort_handler: 4us, rt_runtime: 950ms, rt_period: 1s}
tasks:
  - {name: spor, min_interarrival: 8ms, max_interarrival: 12ms, wcet: 2ms, deadline: 7ms,
     offset: 1ms, priority: 30}
  - name: par
    period: 30ms
    priority: 20
    regions: [2ms, [3ms, 1.5ms, 500us], {threads: 3, wcet: 1ms}, 1ms]
    sections:
      - {resource: bus, start: 0.5ms, length: 1ms}
      - {resource: log, start: 0.6ms, length: 250us}
      - {resource: log, region: 1, thread: 2, start: 100us, length: 200us}
      - {resource: dma, region: 2, thread: 1, start: 0, length: 300us}
  - name: replay
    period: 15ms
    wcet: 4ms
    priority: 25
    execution_times: [3ms, 3.5ms, 4ms, 2500us]
    sections: [{resource: dma, start: 1ms, length: 1ms}, {resource: bus, start: 2500us, length: 500us}]
  - name: graph
    period: 40ms
    deadline: 35ms
    priority: 10
    dag:
      nodes: {grab: 3ms, detect: 9ms, track: 7ms, fuse: 4ms, log: 2ms}
      edges: [[grab, detect], [grab, track], [detect, fuse], [track, fuse], [detect, log]]
    sections: [{resource: bus, node: fuse, start: 3ms, length: 1ms}]
    tuf: {shape: linear, utility: 7.5}
  - {name: late, period: 50ms, wcet: 12ms, deadline: 60ms, cpu: 2, priority: 5, tuf: {shape: quadratic, termination: 70ms}}
""",
}


def slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.+=" else "_" for c in text)


def run_here(args: list[str], where: Path) -> None:
    """Run `rtsched ARGS` in this process with `where` as working directory; its exit code,
    standard output and standard error (Python's and any the extension writes) into
    where/console.txt."""
    from rtsched.cli import main as cli

    where.mkdir(parents=True, exist_ok=True)
    os.chdir(where)
    saved = os.dup(1), os.dup(2)
    with open(".stdout", "w+") as o, open(".stderr", "w+") as e:
        sys.stdout.flush(), sys.stderr.flush()
        os.dup2(o.fileno(), 1), os.dup2(e.fileno(), 2)
        try:
            code = str(cli(args))
        except SystemExit as x:  # argparse refuses with exit 2
            code = str(x.code)
        except BaseException as x:  # noqa: BLE001 - a traceback is an outcome to compare
            code = f"exception {type(x).__name__}: {x}"
        finally:
            sys.stdout.flush(), sys.stderr.flush()
            os.dup2(saved[0], 1), os.dup2(saved[1], 2)
            os.close(saved[0]), os.close(saved[1])
        o.seek(0), e.seek(0)
        text = f"$ rtsched {' '.join(args)}\nexit {code}\n--- stdout\n{o.read()}--- stderr\n{e.read()}"
    os.remove(".stdout"), os.remove(".stderr")
    (where / "console.txt").write_text(text)


def worker(listing: Path) -> int:
    """Run the commands of a list written by run_all, in order."""
    for k in ("COLUMNS", "LINES", "RTSCHED_DEBUG"):
        os.environ.pop(k, None)
    os.environ["MPLBACKEND"] = "Agg"
    for where, args in json.loads(listing.read_text()):
        run_here(args, Path(where))
    return 0


def run_all(todo: list[tuple[Path, list[str]]], jobs: int, scratch: Path) -> None:
    """Run the commands in `jobs` processes (each imports rtsched once), command k in process
    k mod jobs, in order; progress from the console files written."""
    scratch.mkdir(parents=True, exist_ok=True)
    procs = []
    for w in range(max(1, min(jobs, len(todo)))):
        listing = scratch / f"worker-{w}.json"
        listing.write_text(json.dumps([[str(where.resolve()), args] for where, args in todo[w::jobs]]))
        procs.append(subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", str(listing)]))
    shown = 0
    while any(p.poll() is None for p in procs):
        time.sleep(2)
        done = sum((where / "console.txt").is_file() for where, _ in todo)
        if done >= shown + 100:
            shown = done
            print(f"  {done}/{len(todo)}", file=sys.stderr)
    bad = [p.returncode for p in procs if p.returncode]
    if bad:
        raise SystemExit(f"a worker failed (exit {bad[0]})")


def inputs(out: Path, jobs: int, quick: bool) -> tuple[list[str], list[str]]:
    """Write every input into out/runs/inputs: the examples and written sets, and (unless
    `quick`) the drawn ones."""
    d = out / "runs" / "inputs"
    d.mkdir(parents=True)
    rich = []
    for f in sorted(ROOT.glob("examples/*.yaml")) + sorted(ROOT.glob("examples/*.json")):
        shutil.copyfile(f, d / f.name)
        rich.append(f.name)
    for name, text in WRITTEN.items():
        (d / f"written-{name}").write_text(text)
        rich.append(f"written-{name}")
    gens = []
    for name, args, seed in () if quick else GENERATED:
        f = f"gen-{name}.yaml"
        gens.append((out / "runs" / "gen" / name, ["gen", name, *args, "--seed", str(seed), "-o", f"../../inputs/{f}"]))
    if gens:
        run_all(gens, jobs, out / "scratch" / "gen")
    drawn = [f"gen-{name}.yaml" for name, _, _ in GENERATED if (d / f"gen-{name}.yaml").is_file()]
    return rich, drawn


def commands(rich: list[str], drawn: list[str], schedulers: list[str], quick: bool):
    """(directory under runs/, rtsched arguments) of every command, the input as ../../inputs/F."""
    for f in rich + ([] if quick else drawn):
        src = f"../../inputs/{f}"
        stem = Path(f).stem
        if not quick:
            yield f"{stem}/validate", ["validate", src]
            yield f"{stem}/analyze", ["analyze", src]
            yield f"{stem}/convert-yaml", ["convert", src, "-o", "out.yaml"]
            yield f"{stem}/convert-json", ["convert", src, "-o", "out.json"]
            for b in ("kernel:fifo", "kernel:deadline"):
                yield f"{stem}/rtapp-{slug(b)}", ["convert", src, "--to", "rt-app", "--backend", b, "-o", "rtapp.json"]
            for h in HEURISTICS:
                yield f"{stem}/partition-{slug(h)}", ["partition", src, "--heuristic", h, "-o", "out.yaml"]
        specs = list(schedulers)
        if not quick and f in rich:
            specs += VARIANTS
        outputs = ["--json", "r.json", "--json-jobs", "--trace", "trace.json", "--jobs-csv", "jobs.csv", "--per-task"]
        for s in specs:
            yield f"{stem}/sim-{slug(s)}", ["simulate", src, "-s", s, *outputs]
        if not quick and f in rich:
            for opts, names in OPTION_RUNS:
                for s in names:
                    yield f"{stem}/sim-{slug(s)}{slug('_'.join(opts))}", ["simulate", src, "-s", s, *opts, *outputs]


# ---------------------------------------------------------------- the reader on bad input

BAD_VALUES = (None, True, -1, 0, 1.5, 10**20, "x", "-5ms", "1ms", "0", [], {}, [1, 2], {"bogus": 1})


def paths(doc, at=()):
    """Every path into a JSON document (keys and list indices), parents first."""
    yield at
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from paths(v, at + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from paths(v, at + (i,))


def mutants(doc):
    """(label, document) for each one-place change of `doc`."""
    import copy

    for p in paths(doc):
        if not p:
            continue
        *head, last = p
        parent = doc
        for k in head:
            parent = parent[k]
        where = "/".join(str(k) for k in p)
        if isinstance(parent, dict):
            m = copy.deepcopy(doc)
            q = m
            for k in head:
                q = q[k]
            del q[last]
            yield f"{where} removed", m
        for v in BAD_VALUES:
            if parent[last] == v and type(parent[last]) is type(v):
                continue
            m = copy.deepcopy(doc)
            q = m
            for k in head:
                q = q[k]
            q[last] = v
            yield f"{where} = {json.dumps(v)}", m
        if isinstance(parent[last], dict):
            m = copy.deepcopy(doc)
            q = m
            for k in p:
                q = q[k]
            q["bogus_field"] = 1
            yield f"{where} + bogus_field", m
        if isinstance(parent[last], list) and parent[last]:
            m = copy.deepcopy(doc)
            q = m
            for k in p:
                q = q[k]
            q.append(copy.deepcopy(q[0]))
            yield f"{where} + copy of [0]", m


def parse_mutants(out: Path, files: list[str]) -> None:
    """Each input as JSON (`convert -o out.json` wrote it), mutated, parsed; one line per mutant."""
    import rtsched
    from rtsched import _core

    d = out / "parse"
    d.mkdir()
    for f in files:
        src = out / "runs" / Path(f).stem / "convert-json" / "out.json"
        if not src.is_file():
            continue
        doc = json.loads(src.read_text())
        lines = []
        for label, m in mutants(doc):
            try:
                ts = rtsched.parse_taskset(json.dumps(m), "json", f)
                res = "ok " + hashlib.sha256(_core.to_yaml(ts).encode()).hexdigest()[:16]
            except Exception as e:  # noqa: BLE001 - any failure is an outcome to compare
                res = f"{type(e).__name__}: {e}"
            lines.append(f"{label}\t{res}")
        (d / f"{Path(f).stem}.txt").write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------- digests


def digest_tree(out: Path) -> list[tuple[str, int, str]]:
    rows = []
    for sub in ("runs", "parse"):
        for f in sorted((out / sub).rglob("*")):
            if f.is_file():
                data = f.read_bytes()
                rows.append((hashlib.sha256(data).hexdigest(), len(data), str(f.relative_to(out))))
    return sorted(rows, key=lambda r: r[2])


def read_digests(where: Path) -> dict[str, str]:
    f = where / "digests.txt" if where.is_dir() else where
    out = {}
    for line in f.read_text().splitlines():
        h, _, path = line.split(None, 2)
        out[path] = h
    return out


def compare(a: Path, b: Path) -> int:
    da, db = read_digests(a), read_digests(b)
    only_a = sorted(set(da) - set(db))
    only_b = sorted(set(db) - set(da))
    differ = sorted(p for p in set(da) & set(db) if da[p] != db[p])
    for p in only_a:
        print(f"only in A: {p}")
    for p in only_b:
        print(f"only in B: {p}")
    for p in differ:
        print(f"differs:   {p}")
    same = len(set(da) & set(db)) - len(differ)
    print(f"{same} files identical, {len(differ)} differ, {len(only_a)} only in A, {len(only_b)} only in B")
    return 1 if only_a or only_b or differ else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="directory to write (must not exist)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"),
                    help="compare two output directories (or their digests.txt) and list differences")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="commands at once")
    ap.add_argument("--only", metavar="TEXT", help="only the commands whose directory contains TEXT")
    ap.add_argument("--quick", action="store_true", help="the examples under the bare scheduler names only")
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.worker)
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        ap.error("--out DIR or --compare A B")
    if args.out.exists():
        ap.error(f"{args.out} exists")
    names = json.loads(subprocess.run(
        [sys.executable, "-c", "import json, rtsched; print(json.dumps([s['name'] for s in rtsched.schedulers()]))"],
        check=True, capture_output=True, text=True).stdout)
    rich, drawn = inputs(args.out, args.jobs, args.quick)
    todo = [(where, argv) for where, argv in commands(rich, drawn, names, args.quick)
            if not args.only or args.only in where]
    print(f"{len(todo)} commands, {len(rich)} + {len(drawn)} inputs, {len(names)} schedulers", file=sys.stderr)
    run_all([(args.out / "runs" / where, argv) for where, argv in todo], args.jobs, args.out / "scratch")
    if not args.quick:
        parse_mutants(args.out, rich + drawn)
    rows = digest_tree(args.out)
    (args.out / "digests.txt").write_text("".join(f"{h}  {n}  {p}\n" for h, n, p in rows))
    print(f"wrote {args.out / 'digests.txt'}: {len(rows)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
