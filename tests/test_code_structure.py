"""The structure check (tools/structure.py): no import circles in the repository, no Rust file or
function over the size limits, no path named in a doc or a source that does not exist; and the
tool itself on small made-up trees, in Rust and in Python."""

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("structure", ROOT / "tools" / "structure.py")
structure = importlib.util.module_from_spec(_spec)
sys.modules["structure"] = structure  # dataclasses look their module up by name
_spec.loader.exec_module(structure)


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return root


def circles(root: Path) -> dict[str, list[list[str]]]:
    return {g.name: g.circles() for _, g in structure.graphs(root) if g.circles()}


@pytest.mark.parametrize("graph", [g for _, g in structure.graphs(ROOT)], ids=lambda g: g.name)
def test_no_import_circles(graph):
    """Each crate and the Python package, one test each: a failure names where the circle is."""
    circles = graph.circles()
    edges = [f"{a} -> {b} ({where})" for (a, b), where in sorted(graph.edges.items())
             if any(a in c and b in c for c in circles)]
    assert not circles, "\n".join(edges)


def test_the_tool_exits_0_without_circles_and_prints_layers(tmp_path, capsys):
    tree(tmp_path, {"crates/c/src/lib.rs": "mod a;\nmod b;\n", "crates/c/src/a.rs": "use crate::b::f;\n",
                    "crates/c/src/b.rs": "pub fn f() {}\n"})
    assert structure.main([str(tmp_path), "--layers"]) == 0
    out = capsys.readouterr().out
    assert "crate c: layers, bottom first\n  0: b lib\n  1: a\n" in out and "no import circles" in out


def test_rust_circle_between_siblings(tmp_path):
    tree(tmp_path, {
        "crates/c/src/lib.rs": "pub mod a;\npub mod b;\npub mod c;\n",
        "crates/c/src/a.rs": "use crate::b::B;\npub struct A;\n",
        "crates/c/src/b.rs": "pub struct B;\nfn f() { let _ = crate::c::g(); }\n",
        # c reaches a through lib.rs's re-export: the edge goes to a, not to lib
        "crates/c/src/c.rs": "use crate::A;\npub fn g() {}\n",
    })
    # lib.rs re-exports a's item
    (tmp_path / "crates/c/src/lib.rs").write_text("pub mod a;\npub mod b;\npub mod c;\npub use a::A;\n")
    assert circles(tmp_path) == {"c": [["a", "b", "c"]]}
    g = structure.rust_graph(tmp_path / "crates/c")
    assert ("c", "a") in g.edges and ("c", "lib") not in g.edges
    assert structure.main([str(tmp_path)]) == 1


def test_rust_no_circle(tmp_path):
    tree(tmp_path, {
        "crates/c/src/lib.rs": "pub mod spec;\npub mod registry;\npub mod p;\npub use spec::Spec;\n",
        "crates/c/src/spec.rs": "pub struct Spec;\n",
        "crates/c/src/p.rs": "use crate::Spec;\npub fn build(_: &Spec) {}\n",
        "crates/c/src/registry.rs": """\
            use crate::{p, spec::Spec};
            // crate::registry is not an import of itself; a comment mentioning crate::p::x is no edge
            pub fn build(s: &Spec) { p::build(s) }
            #[cfg(test)]
            mod tests {
                use super::*;
                #[test]
                fn t() { build(&Spec) }
            }
            """,
    })
    g = structure.rust_graph(tmp_path / "crates/c")
    assert g.circles() == []
    assert set(g.edges) == {("registry", "p"), ("registry", "spec"), ("p", "spec"), ("lib", "spec")}
    assert g.layers() == [["spec"], ["lib", "p"], ["registry"]]
    assert structure.main([str(tmp_path)]) == 0


def test_rust_circle_through_a_test_module_and_a_dir_module(tmp_path):
    tree(tmp_path, {
        "crates/c/src/lib.rs": "mod common;\nmod x;\n",
        "crates/c/src/common/mod.rs": "pub mod heap;\npub use heap::Heap;\n",
        "crates/c/src/common/heap.rs": """\
            pub struct Heap;
            // a child reaching its parent's items is containment, not an edge
            use super::Heap as _H;
            #[cfg(test)]
            mod tests {
                use crate::x::helper;
            }
            """,
        "crates/c/src/x.rs": "use crate::common::Heap;\npub fn helper() {}\n",
    })
    g = structure.rust_graph(tmp_path / "crates/c")
    assert ("common::heap", "common") not in g.edges
    assert ("x", "common::heap") in g.edges  # through common's re-export
    assert g.circles() == [["common::heap", "x"]]


def test_python_circle_through_a_lazy_import(tmp_path):
    tree(tmp_path, {
        "python/p/__init__.py": "from ._core import thing\nfrom .a import A\n",
        "python/p/a.py": "from p.sub.b import B\nclass A: ...\n",
        "python/p/sub/__init__.py": "",
        "python/p/sub/b.py": "B = 1\ndef f():\n    from ..a import A  # lazy: still a circle\n    return A\n",
    })
    assert circles(tmp_path) == {"p": [["p.a", "p.sub.b"]]}
    g = structure.python_graph(tmp_path / "python/p")
    assert ("p", "p.a") in g.edges and all(b != "p._core" for _, b in g.edges)


def test_python_no_circle_and_package_names(tmp_path):
    tree(tmp_path, {
        "python/p/__init__.py": "from . import _core\nfrom .b import B\n",
        "python/p/b.py": "from p import _core\nfrom .c import C\nclass B(C): ...\n",
        "python/p/c.py": "import p.d\nclass C: ...\n",
        "python/p/d.py": "import json\n",
    })
    g = structure.python_graph(tmp_path / "python/p")
    assert g.circles() == []
    assert set(g.edges) == {("p", "p.b"), ("p.b", "p.c"), ("p.c", "p.d")}
    assert g.layers() == [["p.d"], ["p.c"], ["p.b"], ["p"]]
    # a name the package re-exports is an edge to the module that defines it
    (tmp_path / "python/p/d.py").write_text("from p import B\n")
    assert circles(tmp_path) == {"p": [["p.b", "p.c", "p.d"]]}
    # a submodule importing a name its package defines, while the package imports it: a circle
    (tmp_path / "python/p/__init__.py").write_text("from .b import B\nVERSION = 1\n")
    (tmp_path / "python/p/d.py").write_text("def f():\n    from p import VERSION\n")
    assert circles(tmp_path) == {"p": [["p", "p.b", "p.c", "p.d"]]}


def test_every_policy_file_is_in_the_registry():
    """A policy is one file, its `pub mod` and one line of `registry::ENTRIES`
    (docs/architecture.md "Where a change goes"): a description no entry lists would be a
    policy no user, driver or property test can reach."""
    import re

    src = ROOT / "crates/policies/src"
    registry = (src / "registry.rs").read_text()
    listed = set(re.findall(r"info:\s*(\w+)::(INFO\w*)", registry))
    lib = (src / "lib.rs").read_text()
    declared = set()
    # A policy of several files is a directory module: its description in `dir/mod.rs`.
    for f in sorted(src.glob("*.rs")) + sorted(src.glob("*/mod.rs")):
        stem = f.parent.name if f.name == "mod.rs" else f.stem
        for const in re.findall(r"^pub const (INFO\w*): PolicyInfo", f.read_text(), re.M):
            declared.add((stem, const))
            assert re.search(rf"^pub mod {stem};", lib, re.M), f"{f.name}: no `pub mod {stem};` in lib.rs"
    assert declared, "no policy description found: the pattern is stale"
    assert declared - listed == set(), f"policy descriptions not in registry::ENTRIES: {sorted(declared - listed)}"
    assert listed - declared == set(), f"ENTRIES names descriptions that do not exist: {sorted(listed - declared)}"


def test_no_rust_file_or_function_over_the_size_limits():
    """No Rust file under crates/*/src over 1,200 lines of non-test code and no non-test
    function over 150 lines, but the listed exceptions (tools/structure.py "Sizes" says how
    test code is told apart)."""
    found = structure.rust_sizes(ROOT).findings()
    assert not found, "\n".join(found)


def _fn(name: str, lines: int) -> str:
    """A function of exactly `lines` lines, from its `fn` line to its closing brace."""
    body = "".join(f"    let _x{i} = {i}; // {{ not a brace\n" for i in range(lines - 2))
    return f"/// doc\n#[inline]\nfn {name}() {{\n{body}}}\n"


def test_size_limits_on_a_made_up_tree(tmp_path):
    lib = ("mod a;\nmod big;\n#[cfg(test)]\nmod tests;\n" + _fn("ok", 150) + _fn("long", 151)
           + "#[cfg(test)]\nmod inline {\n    #[test]\n" + _fn("long_test", 400).replace("\n", "\n    ") + "}\n"
           + "#[test]\n" + _fn("bare_test", 200) + "pub trait T {\n    fn declared(&self) -> [u8; 4];\n}\n")
    tree(tmp_path, {
        "crates/c/src/lib.rs": lib,
        # a test file declared `#[cfg(test)] mod tests;`: not counted at all
        "crates/c/src/tests.rs": _fn("in_test_file", 500) + "x\n" * 1300,
        "crates/c/src/a.rs": "#[cfg(test)]\nmod more;\n" + _fn("nested_outer", 20).replace("let _x0 = 0;", "fn inner() {}"),
        "crates/c/src/a/more.rs": _fn("under_a", 300),
        "crates/c/src/big.rs": "// a line\n" * 1201,
    })
    s = structure.rust_sizes(tmp_path)
    names = {name: n for n, _, name, _ in s.functions}
    assert names == {"ok": 150, "long": 151, "nested_outer": 20, "inner": 1}
    assert s.files["crates/c/src/big.rs"] == 1201 and "crates/c/src/tests.rs" not in s.files
    assert "crates/c/src/a/more.rs" not in s.files
    # test code: `mod tests;` (2 lines), the inline module (3 + the 402-line function + 1), the
    # bare #[test] function (1 + 202)
    assert s.files["crates/c/src/lib.rs"] == lib.count("\n") - 2 - 406 - 203
    found = s.findings(exceptions={})
    assert found == ["crates/c/src/big.rs: 1201 lines of non-test code, more than 1200",
                     f"crates/c/src/lib.rs:{lib.splitlines().index('fn long() {') + 1}: fn long is 151 lines, more than 150"]
    # An exception covers its file; one that is no longer needed is named.
    assert s.findings(exceptions={"crates/c/src/big.rs": "", "crates/c/src/lib.rs": ""}) == []
    assert s.findings(exceptions={"crates/c/src/a.rs": ""})[-1] == \
        "crates/c/src/a.rs: within the limits now; remove it from SIZE_EXCEPTIONS"
    # An exception naming a file that is gone (split into a module) is named too.
    assert s.findings(exceptions={"crates/c/src/gone.rs": ""})[-1] == \
        "crates/c/src/gone.rs: no such non-test file; remove it from SIZE_EXCEPTIONS"
    assert structure.main([str(tmp_path)]) == 1


def test_every_path_named_in_the_docs_and_sources_exists():
    """A file moved or removed leaves no name behind in a doc, a comment or a message."""
    found = structure.missing_paths(ROOT)
    assert not found, "\n".join(found)


def test_missing_paths_on_a_made_up_tree(tmp_path):
    tree(tmp_path, {
        "crates/c/src/lib.rs": "//! crates/c/src/gone.rs, crates/c/src/lib.rs, tests/t.rs, crates/c/src/NAME.rs\n",
        "crates/c/tests/t.rs": "// from the crate: tests/t.rs; from the root: crates/c/tests/gone.rs\n",
        "docs/a.md": "`python/p/x.py`, `docs/*.md`, docs/a.md, (docs/b.md)\n",
        "python/p/__init__.py": "# see tests/test_NAME.py and src/lib.rs\n",
    })
    assert structure.missing_paths(tmp_path) == [
        "docs/a.md:1: python/p/x.py", "docs/a.md:1: docs/b.md", "crates/c/src/lib.rs:1: crates/c/src/gone.rs",
        "crates/c/tests/t.rs:1: crates/c/tests/gone.rs"]
    assert structure.main([str(tmp_path)]) == 1
