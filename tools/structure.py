"""The structure check: import circles between the modules of each Rust crate and Python package,
the size of Rust files and functions, and paths named in the docs and sources that do not exist.

    python3 tools/structure.py [ROOT] [--layers] [--sizes]

ROOT (default: this repository) holds crates/*/src and python/*/ (a package has __init__.py).
Prints every strongly connected component of more than one module, per crate or package, with
the edges that form it (file:line of the first import on each edge); exits 1 when there is any.
With --layers, also prints each crate's and package's modules in dependency order, bottom
first: layer 0 imports no module of its own crate, layer k imports only layers below k (a
circle shares one layer). Standard library only.

What a module is
- Rust: each .rs file under src/ (lib.rs is the crate root, `dir/mod.rs` is the module `dir`);
  src/bin/* are crates of their own (they reach the library by its crate name) and are left
  out. An inline `mod x { ... }` (e.g. `#[cfg(test)] mod tests`) belongs to its file's module.
- Python: each .py file; `pkg/__init__.py` is the module `pkg`.

What an edge is (module A imports module B)
- Rust: `use` trees and paths written in code (`crate::x::Y`, `super::x`, `self::x`, and a
  bare `x::` where `x` is a module declared in the current one), in every block, tests
  included: a circle through a test is still a circle. `super` inside an inline module counts
  from that inline module. Comments and string literals are ignored (intra-doc links are not
  imports). A path to an item is an edge to the module that defines the item, following
  `use` re-exports (a `pub use x::Item` in lib.rs does not make every user of `crate::Item`
  depend on lib.rs), and a path to a method (`Type::f`) is an edge to the module whose
  inherent `impl Type` block defines `f`; a path ending at a module is an edge to that module. Declaring a child
  (`mod x;`) is containment, not an edge; other crates are not followed (Cargo forbids
  circles between crates). An edge from a module to one of its ancestors (`super::Item`,
  `crate::Item` defined in lib.rs, `crate::dir::Item` defined in dir/mod.rs, from inside
  dir/) is not counted: a module split into files is one namespace whose children see the
  parent's private items by the language's design. Edges between siblings, and from a
  parent down to its children, count.
- Python: `import p.x`, `from p.x import y` (an edge to p.x.y when that is a module, else to
  p.x, following re-exports the same way) and relative imports, wherever they are written:
  a lazy import inside a function hides a circle, it does not remove it; `if TYPE_CHECKING:`
  imports count too. Importing p.x.y runs p/__init__.py and p/x/__init__.py first; that
  implicit edge is not counted (every package would be a circle with its children), but an
  explicit import of a package's own names from one of its submodules is: unlike Rust, it is
  an import-order hazard at run time. `from p import x` where x is neither a .py module nor
  a name p/__init__.py defines or imports is a compiled submodule (rtsched._core): no edge.
- A module importing itself (self-loop) is not a circle.

Sizes (docs/architecture.md "Rules every part keeps": a room a reader can hold)
- No Rust source file under crates/*/src has more than MAX_FILE_LINES lines of non-test code,
  and no non-test function more than MAX_FN_LINES lines, except the files in SIZE_EXCEPTIONS
  (each with its reason; an exception no longer needed, or naming a file that is gone, is
  reported too, so the list shrinks). The list is empty: the rule holds everywhere.
- Test code is what `#[cfg(test)]` or `#[test]` marks: the item after the attribute (an inline
  `mod tests { ... }`, a function, an impl) up to its closing brace; and a whole file that a
  `#[cfg(test)] mod NAME;` declares (NAME.rs or NAME/mod.rs). src/bin/ counts as non-test.
- A file's lines are all its lines outside test code (comments and blank lines included); a
  function's are those from its `fn` line to its closing brace (its doc comment and
  attributes excluded), nested functions counted in their parent and on their own.
- With --sizes, the tool also prints the ten longest functions.

Paths named in text
- Every path of the repository named in a doc, a comment or a message (``crates/…/NAME.rs``,
  ``python/rtsched/NAME.py``, ``docs/NAME.md``; a crate's ``tests/NAME.rs`` from the crate's directory)
  exists (``missing_paths``): a file moved or removed leaves no name behind.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

# ---------------------------------------------------------------- graph


@dataclass
class Graph:
    """Modules of one crate or package and the edges between them."""

    name: str
    modules: dict[str, Path] = field(default_factory=dict)
    # (a, b) -> "file:line" of the first import of b in a
    edges: dict[tuple[str, str], str] = field(default_factory=dict)

    def add(self, a: str, b: str, where: str) -> None:
        if a != b and b in self.modules:
            self.edges.setdefault((a, b), where)

    def drop_upward(self) -> None:
        """Forget edges from a Rust module to its own ancestors (see the module docstring)."""
        for a, b in list(self.edges):
            if b == "lib" or a.startswith(b + "::"):
                del self.edges[(a, b)]

    def succ(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {m: [] for m in self.modules}
        for a, b in sorted(self.edges):
            out[a].append(b)
        return out

    def circles(self) -> list[list[str]]:
        """Strongly connected components of more than one module (Tarjan), each sorted."""
        return [sorted(c) for c in _scc(self.succ()) if len(c) > 1]

    def layers(self) -> list[list[str]]:
        """Modules grouped by layer: 0 imports nothing of its own, k only layers below k."""
        succ = self.succ()
        comps = _scc(succ)  # reverse topological order: a component comes after its imports
        comp_of = {m: i for i, c in enumerate(comps) for m in c}
        level: list[int] = []
        for i, c in enumerate(comps):
            deps = {comp_of[b] for a in c for b in succ[a]} - {i}
            level.append(1 + max((level[d] for d in deps), default=-1))
        out: list[list[str]] = [[] for _ in range(max(level, default=-1) + 1)]
        for i, c in enumerate(comps):
            out[level[i]].extend(c)
        return [sorted(layer) for layer in out]


def _scc(succ: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively, in reverse topological order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comps: list[list[str]] = []
    for root in sorted(succ):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on.add(v)
            for j in range(i, len(succ[v])):
                w = succ[v][j]
                if w not in index:
                    work.append((v, j + 1))
                    work.append((w, 0))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    comps.append(comp)
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
    return comps


# ---------------------------------------------------------------- Rust

_RUST_ITEM = re.compile(
    r"\b(?:fn|struct|enum|trait|type|const|static|union|mod)\s+(?:r#)?(\w+)|macro_rules!\s*(\w+)"
)
_RUST_USE = re.compile(r"\buse\s+([^;]+);")
_RUST_PATH = re.compile(r"(?<![\w:])(\$?crate|super|self|[A-Za-z_]\w*)((?:\s*::\s*\w+)+)")
_RUST_INLINE_MOD = re.compile(r"\bmod\s+(\w+)\s*\{")
_RUST_FILE_MOD = re.compile(r"\bmod\s+(\w+)\s*;")
_RUST_IMPL = re.compile(r"\bimpl\s*(?:<[^{;]*?>)?\s*(\w+)\s*(?:<[^{;]*?>)?\s*(?:where[^{;]*)?\{")
_RUST_VIS_IN = re.compile(r"\bpub\s*\(\s*in\s+[\w:\s]+\)")


def strip_rust(text: str) -> str:
    """Blank out comments, string and char literals, keeping line numbers."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif (m := re.match(r'b?r(#*)"', text[i:i + 8])) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # a char literal ('a', '\n', '\u{1F600}'), else a lifetime or label
            m = re.match(r"'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:i + 12])
            if m:
                out.append(" " * m.end())
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _use_paths(tree: str) -> list[tuple[list[str], str]]:
    """Expand a `use` tree into (path segments, bound name) pairs; a glob binds '*'."""
    tree = re.sub(r"\s+as\s+", "@", tree)  # `x::Y as Z` -> `x::Y@Z`
    tree = re.sub(r"\s+", "", tree)
    out: list[tuple[list[str], str]] = []

    def walk(prefix: list[str], s: str) -> None:
        s = s.lstrip(":")
        if not s:
            return
        brace = s.find("{")
        if brace < 0:
            s, _, alias = s.partition("@")
            segs = prefix + [p for p in s.split("::") if p]
            if segs and segs[-1] == "self":
                segs = segs[:-1]
            if segs:
                out.append((segs, alias or segs[-1]))
            return
        head = [p for p in s[:brace].split("::") if p]
        body = s[brace + 1:s.rfind("}")]
        depth, start = 0, 0
        for k, ch in enumerate(body + ","):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                walk(prefix + head, body[start:k])
                start = k + 1

    walk([], tree)
    return out


@dataclass
class RustModule:
    path: tuple[str, ...]
    file: Path
    text: str
    defines: set[str] = field(default_factory=set)
    # name bound by `use` in this module -> absolute path it names
    binds: dict[str, list[str]] = field(default_factory=dict)
    globs: list[list[str]] = field(default_factory=list)
    children: set[str] = field(default_factory=set)
    # type -> functions of its inherent `impl` blocks in this module
    methods: dict[str, set[str]] = field(default_factory=dict)


def _rust_use_trees(text: str):
    """(position, use tree) for each `use` in stripped text."""
    for m in _RUST_USE.finditer(text):
        yield m.start(), m.group(1)


def _block_end(text: str, start: int) -> int:
    """The end of the block whose `{` is just before `start`."""
    depth, j = 1, start
    while j < len(text) and depth:
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
        j += 1
    return j


def _inline_scopes(text: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of each inline `mod name { ... }` block."""
    return [(m.start(), _block_end(text, m.end()), m.group(1)) for m in _RUST_INLINE_MOD.finditer(text)]


def _scope_at(scopes, pos: int) -> list[str]:
    return [name for s, e, name in scopes if s < pos < e]


def rust_graph(crate: Path) -> Graph:
    src = crate / "src"
    g = Graph(crate.name)
    mods: dict[tuple[str, ...], RustModule] = {}
    for f in sorted(src.rglob("*.rs")):
        rel = f.relative_to(src)
        if rel.parts[0] == "bin":
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] in ("lib", "main", "mod"):
            parts = parts[:-1]
        text = strip_rust(f.read_text(encoding="utf-8"))
        text = _RUST_VIS_IN.sub(lambda m: " " * len(m.group(0)), text)
        mods[tuple(parts)] = RustModule(tuple(parts), f, text)
    for p, m in mods.items():
        g.modules[_rname(p)] = m.file
        m.defines = {a or b for a, b in _RUST_ITEM.findall(m.text)}
        for x in _RUST_IMPL.finditer(m.text):
            body = m.text[x.end():_block_end(m.text, x.end())]
            m.methods.setdefault(x.group(1), set()).update(re.findall(r"\bfn\s+(\w+)", body))
        m.children = set(_RUST_FILE_MOD.findall(m.text)) | {
            name for _, _, name in _inline_scopes(m.text)
        }

    def absolute(mod: tuple[str, ...], scope: list[str], segs: list[str]) -> list[str] | None:
        """Absolute path (from the crate root) of `segs` written in `mod` inside `scope`."""
        here = list(mod) + scope
        first = segs[0]
        if first in ("crate", "$crate"):
            return segs[1:]
        if first == "self":
            return here + segs[1:]
        if first == "super":
            k = 0
            while k < len(segs) and segs[k] == "super":
                k += 1
            if k > len(here):
                return None
            return here[: len(here) - k] + segs[k:]
        # a bare path: a module declared in the current one, or a name bound by `use` there
        owner = mods[mod]
        if first in owner.children and not scope:
            return here + segs
        # inside an inline module, the file's names (most such modules `use super::*`)
        if first in owner.binds:
            return owner.binds[first] + segs[1:]
        return None

    # bindings first, so that re-exports can be followed
    for p, m in mods.items():
        scopes = _inline_scopes(m.text)
        for pos, tree in _rust_use_trees(m.text):
            scope = _scope_at(scopes, pos)
            if scope:
                continue
            for segs, name in _use_paths(tree):
                a = absolute(p, [], segs)
                if a is None:
                    continue
                if name == "*":
                    m.globs.append(a[:-1])
                else:
                    m.binds[name] = a

    def resolve(path: list[str], seen=None) -> tuple[str, ...]:
        """The module an absolute path names or whose item it names."""
        k = len(path)
        while k > 0 and tuple(path[:k]) not in mods:
            k -= 1
        mod = tuple(path[:k])
        if k == len(path):
            return mod
        item = path[k]
        m = mods[mod]
        seen = seen or set()
        if item in m.defines and len(path) > k + 1 and path[k + 1] not in m.methods.get(item, ()):
            # a method of the type written in another module's `impl` block
            for other in mods.values():
                if item not in other.defines and path[k + 1] in other.methods.get(item, ()):
                    return other.path
        if item in m.defines or (mod, item) in seen:
            return mod
        seen.add((mod, item))
        if item in m.binds:
            return resolve(m.binds[item] + path[k + 1:], seen)
        for gpath in m.globs:
            t = resolve(gpath + [item], seen)
            if t != tuple(gpath[: len(t)]) or item in mods[t].defines:
                return t
        return mod

    for p, m in mods.items():
        scopes = _inline_scopes(m.text)
        for pos, tree in _rust_use_trees(m.text):
            scope = _scope_at(scopes, pos)
            for segs, name in _use_paths(tree):
                a = absolute(p, scope, segs)
                if a is not None:
                    dest = resolve(a[:-1] if name == "*" else a)
                    g.add(_rname(p), _rname(dest), _where(m.file, m.text, pos))
        code = _RUST_USE.sub(lambda u: re.sub(r"[^\n]", " ", u.group(0)), m.text)
        for x in _RUST_PATH.finditer(code):
            segs = [s.strip() for s in (x.group(1) + x.group(2)).split("::")]
            scope = _scope_at(scopes, x.start())
            a = absolute(p, scope, segs)
            if a is not None:
                g.add(_rname(p), _rname(resolve(a)), _where(m.file, m.text, x.start()))
    g.drop_upward()
    return g


def _rname(p: tuple[str, ...]) -> str:
    return "::".join(p) if p else "lib"


def _where(file: Path, text: str, pos: int) -> str:
    return f"{file}:{text.count(chr(10), 0, pos) + 1}"


# ---------------------------------------------------------------- Python


def python_graph(pkg: Path) -> Graph:
    g = Graph(pkg.name)
    mods: dict[str, Path] = {}
    for f in sorted(pkg.rglob("*.py")):
        rel = f.relative_to(pkg.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = f
    g.modules = dict(mods)
    trees = {name: ast.parse(f.read_text(encoding="utf-8"), str(f)) for name, f in mods.items()}

    defines: dict[str, set[str]] = {}
    binds: dict[str, dict[str, str]] = {}
    for name, tree in trees.items():
        d: set[str] = set()
        b: dict[str, str] = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                d.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    d.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, ast.ImportFrom):
                base = _py_base(name, mods, node)
                if base is not None:
                    for a in node.names:
                        if a.name != "*":
                            b[a.asname or a.name] = f"{base}.{a.name}"
        defines[name], binds[name] = d, b

    def resolve(dotted: str, seen=None) -> str | None:
        """The module `dotted` names, or that defines the item it names."""
        parts = dotted.split(".")
        k = len(parts)
        while k > 0 and ".".join(parts[:k]) not in mods:
            k -= 1
        if k == 0:
            return None
        mod = ".".join(parts[:k])
        if k == len(parts):
            return mod
        item = parts[k]
        seen = seen or set()
        if item in defines[mod] or (mod, item) in seen:
            return mod
        seen.add((mod, item))
        if mods[mod].name == "__init__.py" and binds[mod].get(item, f"{mod}.{item}") == f"{mod}.{item}":
            return None  # a submodule not in the tree: the compiled extension (rtsched._core)
        if item in binds[mod]:
            return resolve(binds[mod][item], seen)  # None: re-exported from outside the tree
        return mod

    for name, tree in trees.items():
        f = mods[name]
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _py_base(name, mods, node)
                if base is None:
                    continue
                targets = [base if a.name == "*" else f"{base}.{a.name}" for a in node.names]
            for t in targets:
                dest = resolve(t)
                if dest is not None:
                    g.add(name, dest, f"{f}:{node.lineno}")
    return g


def _py_base(name: str, mods: dict[str, Path], node: ast.ImportFrom) -> str | None:
    """The absolute module a `from ... import` reads from."""
    if node.level == 0:
        return node.module
    is_pkg = mods[name].name == "__init__.py"
    parts = name.split(".")
    keep = len(parts) - node.level + (1 if is_pkg else 0)
    if keep <= 0:
        return None
    base = ".".join(parts[:keep])
    return f"{base}.{node.module}" if node.module else base


# ---------------------------------------------------------------- sizes

MAX_FILE_LINES = 1200
MAX_FN_LINES = 150
# Files allowed over the limits for now, relative to the root, with why. None: the rule holds
# everywhere (the last, the ledger's single file, became the module crates/runtime/src/ledger/).
SIZE_EXCEPTIONS: dict[str, str] = {}

_TEST_ATTR = re.compile(r"#\s*\[\s*(?:cfg\s*\(\s*test\s*\)|test)\s*\]")
_FN = re.compile(r"\bfn\s+(?:r#)?(\w+)")


def _item_end(text: str, pos: int) -> tuple[int, str | None]:
    """The end of the item starting at `pos` (after its attributes): its closing brace, or the
    `;` of a body-less item; and the name of a `mod NAME;` declaration."""
    n = len(text)
    while True:  # further attributes
        while pos < n and text[pos].isspace():
            pos += 1
        if text.startswith("#", pos) and (m := re.match(r"#\s*!?\s*\[", text[pos:])):
            depth, j = 1, pos + m.end()
            while j < n and depth:
                depth += {"[": 1, "]": -1}.get(text[j], 0)
                j += 1
            pos = j
        else:
            break
    decl = re.match(r"(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text[pos:])
    if decl:
        return pos + decl.end(), decl.group(1)
    depth, j = 0, pos
    while j < n:
        c = text[j]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == ";" and depth == 0:
            return j + 1, None
        elif c == "{" and depth == 0:
            return _block_end(text, j + 1), None
        j += 1
    return n, None


def test_code(text: str) -> tuple[list[tuple[int, int]], list[str]]:
    """(start, end) offsets of the test items in stripped text, and the modules declared
    `#[cfg(test)] mod NAME;`."""
    spans: list[tuple[int, int]] = []
    files: list[str] = []
    for m in _TEST_ATTR.finditer(text):
        if spans and m.start() < spans[-1][1]:
            continue  # inside a test item already
        end, decl = _item_end(text, m.end())
        spans.append((m.start(), end))
        if decl:
            files.append(decl)
    return spans, files


def rust_functions(text: str) -> list[tuple[str, int, int, int]]:
    """(name, start offset, first line, last line) of every function with a body."""
    out = []
    for m in _FN.finditer(text):
        depth, j, n = 0, m.end(), len(text)
        while j < n:
            c = text[j]
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif c == ";" and depth == 0:
                j = -1
                break
            elif c == "{" and depth == 0:
                break
            j += 1
        if j < 0 or j >= n:
            continue
        end = _block_end(text, j + 1)
        out.append((m.group(1), m.start(), text.count("\n", 0, m.start()) + 1, text.count("\n", 0, end - 1) + 1))
    return out


@dataclass
class Sizes:
    """Non-test lines per file and non-test functions' lines, over crates/*/src."""

    files: dict[str, int] = field(default_factory=dict)
    # (lines, file, name, first line)
    functions: list[tuple[int, str, str, int]] = field(default_factory=list)

    def findings(self, exceptions: dict[str, str] = SIZE_EXCEPTIONS) -> list[str]:
        out = []
        over: set[str] = set()
        for f, n in sorted(self.files.items()):
            if n > MAX_FILE_LINES:
                over.add(f)
                if f not in exceptions:
                    out.append(f"{f}: {n} lines of non-test code, more than {MAX_FILE_LINES}")
        for n, f, name, line in sorted(self.functions, key=lambda x: (x[1], x[3])):
            if n > MAX_FN_LINES:
                over.add(f)
                if f not in exceptions:
                    out.append(f"{f}:{line}: fn {name} is {n} lines, more than {MAX_FN_LINES}")
        for f in sorted(exceptions):
            if f not in self.files:
                out.append(f"{f}: no such non-test file; remove it from SIZE_EXCEPTIONS")
            elif f not in over:
                out.append(f"{f}: within the limits now; remove it from SIZE_EXCEPTIONS")
        return out


def rust_sizes(root: Path) -> Sizes:
    sizes = Sizes()
    for crate in sorted((root / "crates").glob("*/")):
        src = crate / "src"
        if not src.is_dir():
            continue
        texts = {f: strip_rust(f.read_text(encoding="utf-8")) for f in sorted(src.rglob("*.rs"))}
        test_files: set[Path] = set()
        spans_of = {}
        for f, text in texts.items():
            spans, decls = test_code(text)
            spans_of[f] = spans
            # `mod x;` in lib.rs, main.rs or mod.rs is beside it; in a.rs, under a/
            here = f.parent if f.name in ("lib.rs", "main.rs", "mod.rs") else f.with_suffix("")
            for name in decls:
                test_files.update(p for p in (here / f"{name}.rs", here / name / "mod.rs") if p.is_file())
        for f, text in texts.items():
            if f in test_files or any(p in test_files for p in f.parents if (p / "mod.rs") in test_files):
                continue
            rel = f.relative_to(root).as_posix()
            spans = spans_of[f]
            test_lines = set()
            for s, e in spans:
                test_lines.update(range(text.count("\n", 0, s) + 1, text.count("\n", 0, max(s, e - 1)) + 2))
            total = text.count("\n") + (0 if text.endswith("\n") else 1)
            sizes.files[rel] = total - len(test_lines & set(range(1, total + 1)))
            for name, pos, first, last in rust_functions(text):
                if not any(s <= pos < e for s, e in spans):
                    sizes.functions.append((last - first + 1, rel, name, first))
    return sizes


# ---------------------------------------------------------------- paths named in text

#: The files whose text names paths of the repository: the docs, the sources (their comments,
#: doc comments and messages), the tests, the tools and the build files.
TEXT_GLOBS = ("*.md", "docs/**/*.md", "crates/**/*.rs", "crates/**/*.c", "crates/**/*.h", "crates/**/*.toml",
              "crates/**/*.sh", "python/**/*.py", "tools/**/*.py", "tests/**/*.py", "benchmarks/**/*.py",
              "Makefile", "Cargo.toml", "pyproject.toml")
#: Files that name paths of made-up trees they build (not of this repository).
MADE_UP_TREES = {"tests/test_code_structure.py"}
_NAMED_PATH = re.compile(
    r"(?<![\w/.-])((?:crates|python|tools|tests|benchmarks|docs|examples|src)/[\w./-]*\w\."
    r"(?:rs|py|md|yaml|json|toml|c|h|sh))(?![\w*{}])")
#: Paths a crate's files name from the crate's own directory (`tests/registry_walk.rs`).
_CRATE_RELATIVE = ("tests/", "examples/", "benches/", "src/")


def missing_paths(root: Path) -> list[str]:
    """``file:line: PATH`` for every path of this repository named in its text (a comment, a
    doc, a message) that does not exist: a file that was moved or removed leaves its name
    behind. A path is written from the repository's root (``crates/sim/src/engine.rs``), or,
    for a crate's tests, examples and sources, from the crate's directory; a placeholder (a
    word in capitals: ``NAME.rs``, ``tests/test_NAME.py``) or a pattern (``*.md``) is no path."""
    crates = [c for c in sorted((root / "crates").glob("*/")) if c.is_dir()]
    out = []
    seen: set[Path] = set()
    for pattern in TEXT_GLOBS:
        for f in sorted(root.glob(pattern)):
            rel = f.relative_to(root).as_posix()
            if f in seen or not f.is_file() or rel in MADE_UP_TREES or rel.startswith(("target/", ".venv/")):
                continue
            seen.add(f)
            for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                for p in _NAMED_PATH.findall(line):
                    if re.search(r"(?<![A-Za-z])[A-Z][A-Z0-9]+(?![a-z])", p):
                        continue
                    where = [root / p]
                    if p.startswith(_CRATE_RELATIVE):
                        where += [c / p for c in crates]
                    if not any(w.exists() for w in where):
                        out.append(f"{rel}:{n}: {p}")
    return out


# ---------------------------------------------------------------- main


def graphs(root: Path) -> list[tuple[str, Graph]]:
    out = []
    for crate in sorted((root / "crates").glob("*/")):
        if (crate / "src").is_dir():
            out.append(("crate", rust_graph(crate)))
    for pkg in sorted((root / "python").glob("*/")):
        if (pkg / "__init__.py").is_file():
            out.append(("package", python_graph(pkg)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", type=Path, default=Path(__file__).resolve().parent.parent)
    ap.add_argument("--layers", action="store_true", help="list modules in dependency order")
    ap.add_argument("--sizes", action="store_true", help="also list the ten longest Rust functions")
    args = ap.parse_args(argv)
    found = 0
    for kind, g in graphs(args.root):
        if args.layers:
            print(f"{kind} {g.name}: layers, bottom first")
            for i, layer in enumerate(g.layers()):
                print(f"  {i}: {' '.join(layer)}")
        for comp in g.circles():
            found += 1
            members = set(comp)
            print(f"circle in {kind} {g.name}: {' '.join(comp)}")
            for (a, b), where in sorted(g.edges.items()):
                if a in members and b in members:
                    print(f"  {a} -> {b}  ({where})")
    sizes = rust_sizes(args.root)
    if args.sizes:
        print("longest non-test Rust functions:")
        for n, f, name, line in sorted(sizes.functions, reverse=True)[:10]:
            print(f"  {n:5}  {f}:{line} {name}")
    too_big = sizes.findings()
    for msg in too_big:
        print(f"too big: {msg}")
    missing = missing_paths(args.root)
    for msg in missing:
        print(f"names a path that does not exist: {msg}")
    if found:
        print(f"{found} import circle(s)")
    else:
        print("no import circles")
    if not too_big:
        print(f"no Rust file over {MAX_FILE_LINES} lines or function over {MAX_FN_LINES} lines of non-test code"
              + (f" (except {', '.join(sorted(SIZE_EXCEPTIONS))})" if SIZE_EXCEPTIONS else ""))
    if not missing:
        print("every path named in the docs and sources exists")
    return 1 if found or too_big or missing else 0


if __name__ == "__main__":
    sys.exit(main())
