"""The drawings of docs/architecture.md "Layers" against the code: which crate uses which, and
which part of the Python package imports which.

    python3 tools/architecture.py [ROOT]

Prints every disagreement and exits 1 when there is one (tests/test_architecture.py runs it).

What is compared
- The crates: each line of the drawing after the comment ``<!-- drawn: crates -->`` is
  ``LAYER  NAME  → DEP, DEP, ...  what it is`` (``—`` for none). The code's edges are each
  workspace member's ``[dependencies]`` on another member (crates/NAME/Cargo.toml; a crate is
  named by its directory, its package being ``rtsched-NAME``); the line
  ``tests only: A → B, C; ...`` gives the ``[dev-dependencies]`` the same way.
- The Python package, after ``<!-- drawn: python -->``, the same form over five parts of
  python/rtsched: ``rtsched`` (its ``__init__.py``, the API), ``modules`` (the other files
  directly in it), and the subpackages by name (``commands``, ``sweep``, ...). An edge is an
  import from one part into another, lazy ones included (tools/structure.py's graph).
- Every node of the code is drawn once, no edge is missing or made up, and LAYER is the
  node's height: 0 for a node that uses no other, else one more than the highest it uses
  (so a node is drawn above everything it uses). Lines go from the top layer down.

Standard library only.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from structure import python_graph  # noqa: E402 - beside this file

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "rtsched-"
LINE = re.compile(r"^\s*(\d+)\s+([\w.]+)\s+→\s+((?:[\w.]+, )*[\w.]+|—)(?:\s{2,}\S.*)?$")
TESTS_ONLY = re.compile(r"^\s*tests only[^:]*:\s*(.*)$")

Edges = dict[str, set[str]]


def _sections(toml: str) -> dict[str, list[str]]:
    """A Cargo.toml's keys by [section] (the lines ``KEY = ...`` or ``KEY.workspace = true``;
    enough for the workspace's own manifests, which Cargo reads in full)."""
    out: dict[str, list[str]] = {}
    section = ""
    for line in toml.splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("["):
            section = line.strip("[]")
        elif "=" in line:
            out.setdefault(section, []).append(line.split("=", 1)[0].strip().split(".")[0])
    return out


@cache
def crate_edges(root: Path) -> tuple[Edges, Edges]:
    """Each workspace member's uses of the others: ([dependencies], [dev-dependencies])."""
    top = (root / "Cargo.toml").read_text()
    members = re.findall(r'"([^"]+)"', re.search(r"^members\s*=\s*\[([^\]]*)\]", top, re.M)[1])
    deps: Edges = {}
    dev: Edges = {}
    for m in members:
        name = Path(m).name
        keys = _sections((root / m / "Cargo.toml").read_text())
        deps[name] = {d.removeprefix(PREFIX) for d in keys.get("dependencies", []) if d.startswith(PREFIX)}
        dev[name] = {d.removeprefix(PREFIX) for d in keys.get("dev-dependencies", []) if d.startswith(PREFIX)}
    return deps, {k: v for k, v in dev.items() if v}


@cache
def python_edges(root: Path) -> Edges:
    """Imports between the parts of python/rtsched."""
    pkg = root / "python" / "rtsched"
    subpackages = {d.name for d in pkg.iterdir() if (d / "__init__.py").is_file()}

    def part(module: str) -> str:
        name = module.split(".")[1] if "." in module else None
        return "rtsched" if name is None else name if name in subpackages else "modules"

    g = python_graph(pkg)
    out: Edges = {part(m): set() for m in g.modules}
    for a, b in g.edges:
        if part(a) != part(b):
            out[part(a)].add(part(b))
    return out


def drawn(doc: str, what: str) -> tuple[dict[str, tuple[int, set[str]]], list[str], Edges]:
    """The drawing after ``<!-- drawn: WHAT -->``: {node: (layer, uses)} in drawn order, and
    its "tests only" edges."""
    at = doc.find(f"<!-- drawn: {what} -->")
    if at < 0:
        return {}, [], {}
    body = doc[at:].split("```")[1]  # the fenced block after the comment
    nodes: dict[str, tuple[int, set[str]]] = {}
    order: list[str] = []
    tests: Edges = {}
    for line in body.splitlines():
        if m := LINE.match(line):
            uses = set() if m[3] == "—" else set(m[3].split(", "))
            nodes[m[2]] = (int(m[1]), uses)
            order.append(m[2])
        elif m := TESTS_ONLY.match(line):
            for part in filter(None, (p.strip() for p in m[1].split(";"))):
                a, _, bs = part.partition("→")
                tests[a.strip()] = {b.strip() for b in bs.split(",")}
    return nodes, order, tests


def heights(edges: Edges) -> dict[str, int]:
    """0 for a node that uses none, else 1 + the highest it uses (the graph has no circle)."""
    out: dict[str, int] = {}

    def h(n: str, seen: tuple[str, ...] = ()) -> int:
        if n not in out:
            if n in seen:
                raise ValueError(f"a circle through {n}")
            out[n] = 1 + max((h(d, (*seen, n)) for d in edges.get(n, ())), default=-1)
        return out[n]

    for n in edges:
        h(n)
    return out


def compare(what: str, code: Edges, doc: str, dev: Edges | None = None) -> list[str]:
    """Each way the drawing of ``what`` differs from ``code``."""
    nodes, order, tests = drawn(doc, what)
    if not nodes:
        return [f"{what}: no drawing (<!-- drawn: {what} --> and a fenced block)"]
    out = [f"{what}: {n} is not drawn" for n in sorted(set(code) - set(nodes))]
    out += [f"{what}: {n} is drawn but is not in the code" for n in sorted(set(nodes) - set(code))]
    height = heights(code)
    for n in order:
        if n not in code:
            continue
        layer, uses = nodes[n]
        out += [f"{what}: {n} → {d} is drawn but {n} does not use {d}" for d in sorted(uses - code[n])]
        out += [f"{what}: {n} uses {d}, not drawn" for d in sorted(code[n] - uses)]
        if layer != height[n]:
            out.append(f"{what}: {n} is drawn in layer {layer}, its height is {height[n]}")
    if [nodes[n][0] for n in order] != sorted((nodes[n][0] for n in order), reverse=True):
        out.append(f"{what}: the lines are not in order from the top layer down")
    if dev is not None and tests != dev:
        out.append(f"{what}: tests only drawn {_text(tests)}, the code has {_text(dev)}")
    return out


def _text(edges: Edges) -> str:
    return "; ".join(f"{a} → {', '.join(sorted(b))}" for a, b in sorted(edges.items())) or "none"


def disagreements(root: Path, doc: str | None = None) -> list[str]:
    """Every way docs/architecture.md's drawings differ from the code under ``root`` (``doc``:
    the document's text, default the file's)."""
    doc = (root / "docs" / "architecture.md").read_text() if doc is None else doc
    deps, dev = crate_edges(root)
    return compare("crates", deps, doc, dev) + compare("python", python_edges(root), doc)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    found = disagreements(Path(args[0]) if args else ROOT)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
