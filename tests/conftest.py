import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
RTSCHED = str(Path(sys.executable).parent / "rtsched")


def run_cli(*args, cwd=None, check=None):
    """Run the installed `rtsched` command; returns CompletedProcess with text output."""
    env = dict(os.environ, MPLBACKEND="Agg")
    env.pop("RTSCHED_DEBUG", None)
    p = subprocess.run([RTSCHED, *map(str, args)], capture_output=True, text=True, cwd=cwd or ROOT, env=env, timeout=300)
    if check is not None:
        assert p.returncode == check, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p


@pytest.fixture
def cli():
    return run_cli


def write_dedented(tmp_path, text, name="ts.yaml"):
    """Write `text` (dedented) as `tmp_path / name`; returns the path."""
    import textwrap

    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def comparable(df):
    """A sweep table in key order (row order is not part of a sweep's result)."""
    return df.sort_values("key").reset_index(drop=True)
