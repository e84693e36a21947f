"""tools/outputs_digest.py, the check that a refactor leaves every output byte-identical: its
digests are stable from one run to the next, and its comparison names a changed, a missing and
an added file (the negative control of the comparison)."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "outputs_digest.py"
_spec = importlib.util.spec_from_file_location("outputs_digest", TOOL)
od = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(od)


def digest(out, *extra):
    subprocess.run([sys.executable, TOOL, "--out", out, "--quick", "-j", "1", "--only", "dhall/sim-gedf", *extra],
                   check=True, capture_output=True, text=True, timeout=300)
    return od.read_digests(out)


def test_digests_are_stable_and_a_change_is_listed(tmp_path, capsys):
    a = digest(tmp_path / "a")
    runs = sorted(p for p in a if p.startswith("runs/dhall/sim-gedf/"))
    assert runs == [f"runs/dhall/sim-gedf/{f}" for f in ("console.txt", "jobs.csv", "r.json", "trace.json")]
    assert "exit 0" in (tmp_path / "a/runs/dhall/sim-gedf/console.txt").read_text()
    assert json.loads((tmp_path / "a/runs/dhall/sim-gedf/r.json").read_text())["runs"][0]["scheduler"] == "gedf"
    b = digest(tmp_path / "b")
    assert a == b and od.compare(tmp_path / "a", tmp_path / "b") == 0

    # One byte changed, one file gone, one file new: each is named, and the comparison fails.
    run = tmp_path / "b/runs/dhall/sim-gedf"
    (run / "jobs.csv").write_bytes((run / "jobs.csv").read_bytes().replace(b"gedf", b"gEdf", 1))
    (run / "trace.json").unlink()
    (run / "new.txt").write_text("x")
    rows = od.digest_tree(tmp_path / "b")
    (tmp_path / "b/digests.txt").write_text("".join(f"{h}  {n}  {p}\n" for h, n, p in rows))
    capsys.readouterr()
    assert od.compare(tmp_path / "a", tmp_path / "b") == 1
    out = capsys.readouterr().out
    assert "differs:   runs/dhall/sim-gedf/jobs.csv" in out
    assert "only in A: runs/dhall/sim-gedf/trace.json" in out
    assert "only in B: runs/dhall/sim-gedf/new.txt" in out


def test_mutants_change_one_place_each():
    doc = {"platform": {"cpus": 2}, "tasks": [{"name": "a", "period": 10}]}
    got = dict(od.mutants(doc))
    assert got["platform/cpus removed"] == {"platform": {}, "tasks": [{"name": "a", "period": 10}]}
    assert got["tasks/0/period = \"x\""]["tasks"][0] == {"name": "a", "period": "x"}
    assert got["tasks + copy of [0]"]["tasks"] == [{"name": "a", "period": 10}] * 2
    assert got["platform + bogus_field"]["platform"] == {"cpus": 2, "bogus_field": 1}
    assert doc == {"platform": {"cpus": 2}, "tasks": [{"name": "a", "period": 10}]}  # not changed in place
