"""The round trip of docs/workloads.md, as a user runs it: a task set → `rtsched convert --to
rt-app` → the real rt-app, started by `rtsched record` (as root, through tracefs) → the task set
recorded from the kernel's trace. Its tasks give back the periods within 5 % and the execution
times within 30 % (issue 39's bound).

The set (hand-worked): `fast` T = 10 ms, C = 1 ms, priority 60; `slow` T = 20 ms, C = 3 ms,
priority 50; 2 s on every CPU (`test_convert_rtapp_real.SET`). The recorded WCET is taken at `--percentile 50`, the median of
the per-activation CPU times: what rt-app's `run` asks for (its calibrated loop takes ~10 %
longer here; the default p99 includes the longest activations, up to +27 % on `slow`).
Up to three attempts (host steal on this VM can stretch one run), each printed; the last is
asserted.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

import rtsched
from conftest import RTSCHED, real
from test_convert_rtapp_real import SET  # the same hand-worked set, 2 s

pytestmark = [pytest.mark.skipif(shutil.which("rt-app") is None, reason="needs rt-app (Debian's rt-app package; make system-deps installs it as root)")]

WANT = {"fast": (10_000_000, 1_000_000), "slow": (20_000_000, 3_000_000)}  # period, wcet in ns


def run_cli(*args, cwd):
    return subprocess.run([RTSCHED, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


@real
def test_convert_run_in_rtapp_and_record_gives_the_set_back(tmp_path):
    (tmp_path / "set.yaml").write_text(SET % (os.cpu_count() or 1))
    p = run_cli("convert", "set.yaml", "-o", "set-rtapp.json", "--to", "rt-app", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    for attempt in range(3):
        out = f"recorded{attempt}.yaml"
        p = run_cli("record", "-o", out, "--duration", "60s", "--percentile", "50", "--", "rt-app", "set-rtapp.json", cwd=tmp_path)
        assert p.returncode == 0, p.stdout + p.stderr
        print(p.stdout)
        got = {t["name"]: (t["period_ns"], t["wcet_ns"]) for t in rtsched.load_taskset(tmp_path / out).tasks()}
        bad = []
        for name, (period, wcet) in WANT.items():
            if name not in got:
                bad.append(f"{name}: not recorded (got {sorted(got)})")
                continue
            gp, gw = got[name]
            print(f"attempt {attempt + 1}: {name}: period {gp / 1e6:.3f} ms ({(gp - period) / period:+.1%}), wcet {gw / 1e6:.3f} ms ({(gw - wcet) / wcet:+.1%})")
            if abs(gp - period) > 0.05 * period:
                bad.append(f"{name}: period {gp} not within 5% of {period}")
            if abs(gw - wcet) > 0.30 * wcet:
                bad.append(f"{name}: wcet {gw} not within 30% of {wcet}")
        if not bad:
            break
    assert not bad, bad
