"""docs/architecture.md's drawings of the crates and of the Python package agree with the code
(tools/architecture.py): every crate and its [dependencies] from the Cargo.toml files, every
import between the package's parts, each drawn at its height; a made-up edge, a missing one, a
node drawn in the wrong layer or a crate the drawing omits is caught."""

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("architecture", ROOT / "tools" / "architecture.py")
A = importlib.util.module_from_spec(spec)
sys.modules["architecture"] = A
spec.loader.exec_module(A)

DOC = (ROOT / "docs" / "architecture.md").read_text()
LINUX = "  4  linux     → runtime, policies, analysis, model"
COMMANDS = "  4  commands   → reproduce, convert, rtsched, sweep, modules"


def test_the_drawings_are_the_code():
    assert A.disagreements(ROOT) == []


def test_the_drawings_hold_every_crate_and_part():
    deps, dev = A.crate_edges(ROOT)
    assert set(A.drawn(DOC, "crates")[0]) == set(deps) and "sweep" in deps["py"] and "sim" in dev["linux"]
    assert set(A.drawn(DOC, "python")[0]) == {"rtsched", "modules", "commands", "sweep", "reproduce", "convert"}


@pytest.mark.parametrize("old, new, said", [
    (LINUX, LINUX + ", sim", "crates: linux → sim is drawn but linux does not use sim"),  # made up
    (LINUX, "  4  linux     → runtime, policies, model", "crates: linux uses analysis, not drawn"),
    ("  5  scx ", "  6  scx ", "crates: scx is drawn in layer 6, its height is 5"),
    ("  0  model     → —", "  0  modell    → —", "crates: model is not drawn"),
    ("linux → runtime, sim;", "linux → runtime, sim, py;", "crates: tests only drawn"),
    (COMMANDS, COMMANDS.replace("convert, ", ""), "python: commands uses convert, not drawn"),
    ("  1  sweep      → modules", "  1  sweep      → modules, reproduce", "python: sweep → reproduce is drawn"),
])
def test_a_drawing_that_differs_from_the_code_is_caught(old, new, said):
    assert DOC.count(old) == 1
    found = A.disagreements(ROOT, DOC.replace(old, new))
    assert any(f.startswith(said) for f in found), found


def test_a_made_up_dependency_in_the_code_is_caught(tmp_path):
    """The control on the code's side: sim made to use linux in a copy of the tree."""
    for f in ["Cargo.toml", "docs/architecture.md", *(str(p.relative_to(ROOT)) for p in ROOT.glob("crates/*/Cargo.toml"))]:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / f, tmp_path / f)
    shutil.copytree(ROOT / "python" / "rtsched", tmp_path / "python" / "rtsched", ignore=shutil.ignore_patterns("*.so"))
    sim = tmp_path / "crates" / "sim" / "Cargo.toml"
    sim.write_text(sim.read_text().replace("[dependencies]\n", "[dependencies]\nrtsched-linux.workspace = true\n", 1))
    found = A.disagreements(tmp_path)
    assert "crates: sim uses linux, not drawn" in found
    assert "crates: sim is drawn in layer 4, its height is 5" in found
