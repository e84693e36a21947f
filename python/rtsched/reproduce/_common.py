"""Shared pieces of the reproductions: running a sweep into the experiment's directory."""

from __future__ import annotations

from pathlib import Path


def run_sweep(spec: dict, out_dir: Path, executor, quick: bool, table: str = "sweep", progress=None):
    """Run ``spec`` into ``out_dir/TABLE[-quick].parquet`` (resumable) and return its rows.

    ``progress``: as for :func:`rtsched.sweep` (None: a bar on stderr when it is a terminal)."""
    import rtsched.sweep as S
    path = Path(out_dir) / (f"{table}-quick.parquet" if quick else f"{table}.parquet")
    return S.sweep(S.parse_spec(spec, f"<reproduce {spec['name']}>"), executor=executor, output=path,
                   progress=progress, batch_rows=5000)
