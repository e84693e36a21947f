"""The training run of the profile-guided build (tools/pgo_build.py): what users run, on an
instrumented extension, so the compiler learns which branches are hot.

Every policy on every bundled example (with the JSON, CSV and Parquet writers), the
throughput benchmark's global-EDF sets at m = 2, 8 and 32, the parallel and utility-accrual
generators' sets, sets with the cache model, overheads, shared resources and aborts on, and
the scale benchmark's sweep rows (4 tasks on 2 CPUs, 50 ms and 500 ms,
four schedulers) in this process. A few seconds, instrumented. Only the counts matter: outputs go
to a temporary folder and nothing is checked here (the tests check the built extension).

    python tools/pgo_train.py     (run by pgo_build.py with the instrumented package first on sys.path)
"""

from __future__ import annotations

import contextlib
import glob
import importlib
import io
import json
import math
import os
import random
import sys
import tempfile
from pathlib import Path

import rtsched
from rtsched.cli import main as cli

ROOT = Path(__file__).resolve().parent.parent
#: Each batch computed when submitted, in this process (the counts are this process's).
InProcess = importlib.import_module("rtsched.sweep.runner").InProcess


def _cli(*args):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = cli([str(a) for a in args])
    if code not in (0, None):
        raise SystemExit(f"pgo training: rtsched {' '.join(map(str, args))} exited {code}")


def _cache_set(m: int) -> dict:
    """3m tasks at U = 0.7 m (periods 10-100 ms) with working sets of 16 KiB-4 MiB in memory
    groups of three, on the Opteron topology, the cache model on."""
    rng = random.Random(m)
    tasks = []
    for i in range(3 * m):
        period = int(math.exp(rng.uniform(math.log(10_000), math.log(100_000))))
        tasks.append({"name": f"t{i}", "period": f"{period}us", "wcet": f"{max(1, int(period * 0.7 / 3))}us",
                      "wss": int(math.exp(rng.uniform(math.log(16), math.log(4096)))) * 1024, "group": i // 3})
    return {"platform": {"cpus": m, "topology": "opteron6164x4"}, "run": {"duration": "5s", "cache": True},
            "tasks": tasks}


def _sweep(d: Path, name: str, duration: str, seeds: int):
    spec = {"name": name, "seed": 1,
            "generator": {"name": "randfixedsum", "params": {"n": 4, "m": 2, "tmin": "1ms", "tmax": "10ms"}},
            "utilisation": {"points": [0.8, 1.0, 1.2, 1.4, 1.6, 1.7, 1.8, 1.9, 1.95, 2.0]},
            "schedulers": ["gedf", "pedf:ffd", "gfp:rm", "gnpedf"], "seeds": seeds, "duration": duration}
    rtsched.sweep(spec, executor=InProcess(), output=d / f"{name}.parquet", progress=False)


def main():
    pkg = os.environ.get("RTSCHED_PGO_PKG")
    if pkg and not Path(rtsched._core.__file__).resolve().is_relative_to(Path(pkg).resolve()):
        raise SystemExit(f"pgo training: imported {rtsched._core.__file__}, not the instrumented build under {pkg}")
    with tempfile.TemporaryDirectory(prefix="rtsched-pgo-") as tmp:
        d = Path(tmp)
        # Every policy on the bundled examples, with the result writers.
        for f in sorted(glob.glob(str(ROOT / "examples" / "*.yaml")) + glob.glob(str(ROOT / "examples" / "*.json"))):
            stem = Path(f).stem
            _cli("simulate", f, "-s", "all", "--json", d / f"{stem}.json", "--jobs-csv", d / f"{stem}.csv",
                 "--jobs-parquet", d / f"{stem}.parquet")
        # The throughput benchmark's sets (global EDF, streamed; and held, with per-job Parquet).
        for m, secs in ((2, 20), (8, 10), (32, 3)):
            path = d / f"u{m}.yaml"
            _cli("gen", "uunifast-discard", f"n={3 * m}", f"m={m}", f"U={0.7 * m}", "tmin=10ms", "tmax=100ms", "--seed", 1,
                 "-o", path)
            _cli("simulate", path, "-s", "gedf", "gedf-dist", "gfp", "--duration", f"{secs}s")
            _cli("simulate", path, "-s", "gedf", "--duration", f"{secs}s", "--jobs-parquet", d / f"u{m}.parquet")
        # Parallel (PAWS) and utility-accrual (ChronOS) sets.
        _cli("gen", "paws2013", "m=8", "--seed", 1, "--duration", "2s", "-o", d / "paws.yaml")
        _cli("simulate", d / "paws.yaml", "-s", "paws", "gedf", "gedf-seq", "federated")
        _cli("gen", "chronos2011", "m=4", "--seed", 1, "--duration", "2s", "-o", d / "chronos.yaml")
        _cli("simulate", d / "chronos.yaml", "-s", "ggua", "nggua", "ghvdf", "gedf", "lbesa:load", "dasa:load")
        # The models a run may switch on: the cache model (working sets, memory groups, the
        # Opteron topology; as benchmarks/sim_throughput.py prices it), overheads, and shared
        # resources with aborts (the parity case the simulator and the testbed share).
        for m in (2, 8):
            path = d / f"cache{m}.json"
            path.write_text(json.dumps(_cache_set(m)))
            _cli("simulate", path, "-s", "gedf", "pedf:lwfg", "gedf-dist", "--duration", "5s")
            _cli("simulate", path, "-s", "gedf", "--duration", "5s", "--jobs-parquet", d / f"cache{m}.parquet")
        path = d / "overheads.json"
        doc = _cache_set(8)
        doc["run"] = {"duration": "5s", "overheads": {"decision": "2us", "context_switch": "5us", "migration": "20us",
                                                       "tick": "20us", "release": "10us", "abort_handler": "10us"}}
        path.write_text(json.dumps(doc))
        _cli("simulate", path, "-s", "gedf", "gfp", "pedf:ffd", "gedf-dist", "cfs")
        for f in ("parity.yaml", "pedf-inversions.yaml", "abort-holder.yaml"):
            if (ROOT / "tests" / "data" / f).exists():
                _cli("simulate", ROOT / "tests" / "data" / f, "-s", "all", "--json", d / f"{f}.json")
        # Sweep rows, as benchmarks/sweep_scale.py runs them.
        _sweep(d, "rows", "50ms", 500)
        _sweep(d, "heavy", "500ms", 20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
