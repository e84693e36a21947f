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


def sweep_in_thread(spec, **kw):
    """rtsched.sweep(spec, **kw) started on a thread of its own (the test kills workers
    meanwhile). Returns (thread, result, errors): result["df"] is set when it ends, errors
    holds what it raised."""
    import threading

    import rtsched

    result, errors = {}, []

    def go():
        try:
            result["df"] = rtsched.sweep(spec, **kw)
        except BaseException as e:  # noqa: BLE001 - the test reports it
            errors.append(e)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t, result, errors


async def exit_now():
    """Ends the process it runs in (client.run on a Dask worker: a coroutine, so the call
    need not wait for an answer that never comes)."""
    import os

    os._exit(1)
