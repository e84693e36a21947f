"""The training run of the profile-guided build (tools/pgo_build.py): what users run, on an
instrumented extension, so the compiler learns which branches are hot.

Every policy on every bundled example (with the JSON, CSV and Parquet writers), the
throughput benchmark's global-EDF sets at m = 2, 8 and 32, the parallel and utility-accrual
generators' sets, and the scale benchmark's sweep rows (4 tasks on 2 CPUs, 50 ms and 500 ms,
four schedulers) in this process. A few seconds, instrumented. Only the counts matter: outputs go
to a temporary folder and nothing is checked here (the tests check the built extension).

    python tools/pgo_train.py     (run by pgo_build.py with the instrumented package first on sys.path)
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import glob
import io
import os
import sys
import tempfile
from pathlib import Path

import rtsched
from rtsched.cli import main as cli

ROOT = Path(__file__).resolve().parent.parent


class _InProcess(cf.Executor):
    """Runs each call when submitted: a sweep in this process (the counts are this process's)."""

    _max_workers = 1

    def submit(self, fn, /, *args, **kwargs):
        f = cf.Future()
        f.set_result(fn(*args, **kwargs))
        return f


def _cli(*args):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = cli([str(a) for a in args])
    if code not in (0, None):
        raise SystemExit(f"pgo training: rtsched {' '.join(map(str, args))} exited {code}")


def _sweep(d: Path, name: str, duration: str, seeds: int):
    spec = {"name": name, "seed": 1,
            "generator": {"name": "randfixedsum", "params": {"n": 4, "m": 2, "tmin": "1ms", "tmax": "10ms"}},
            "utilisation": {"points": [0.8, 1.0, 1.2, 1.4, 1.6, 1.7, 1.8, 1.9, 1.95, 2.0]},
            "schedulers": ["gedf", "pedf:ffd", "gfp:rm", "gnpedf"], "seeds": seeds, "duration": duration}
    rtsched.sweep(spec, executor=_InProcess(), output=d / f"{name}.parquet", progress=False)


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
            _cli("gen", "uunifast", f"n={3 * m}", f"m={m}", f"U={0.7 * m}", "tmin=10ms", "tmax=100ms", "--seed", 1,
                 "-o", path)
            _cli("simulate", path, "-s", "gedf", "gedf-dist", "gfp", "--duration", f"{secs}s")
            _cli("simulate", path, "-s", "gedf", "--duration", f"{secs}s", "--jobs-parquet", d / f"u{m}.parquet")
        # Parallel (PAWS) and utility-accrual (ChronOS) sets.
        _cli("gen", "paws2013", "m=8", "--seed", 1, "--duration", "2s", "-o", d / "paws.yaml")
        _cli("simulate", d / "paws.yaml", "-s", "paws", "gedf", "gedf-seq", "federated")
        _cli("gen", "chronos2011", "m=4", "--seed", 1, "--duration", "2s", "-o", d / "chronos.yaml")
        _cli("simulate", d / "chronos.yaml", "-s", "ggua", "nggua", "ghvdf", "gedf", "lbesa:load", "dasa:load")
        # Sweep rows, as benchmarks/sweep_scale.py runs them.
        _sweep(d, "rows", "50ms", 500)
        _sweep(d, "heavy", "500ms", 20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
