"""Shared pieces of the reproductions: running a sweep into the experiment's directory."""

from __future__ import annotations

import importlib
from pathlib import Path


def run_sweep(spec: dict, out_dir: Path, executor, quick: bool):
    """Run ``spec`` into ``out_dir/sweep[-quick].parquet`` (resumable) and return its rows."""
    S = importlib.import_module("rtsched.sweep")
    table = Path(out_dir) / ("sweep-quick.parquet" if quick else "sweep.parquet")
    return S.sweep(S.parse_spec(spec, f"<reproduce {spec['name']}>"), executor=executor, output=table,
                   progress=None, batch_rows=5000)
