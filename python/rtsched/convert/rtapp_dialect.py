"""rt-app's JSON dialect, read as rt-app reads it (docs/workloads.md "rt-app's dialect").

rt-app parses its files with json-c (``json_tokener_parse`` in rt-app/src/rt-app_parse_config.c),
which is laxer than JSON: ``/* … */`` and ``//`` comments, a comma before ``}`` or ``]``, and a
key given twice in one object (json-c keeps the pairs; rt-app's doc/workgen numbers repeated
event keys so that ``"run", "sleep", "run"`` in one phase are three events in file order).
This reader takes the same text and keeps what the event mapping needs: every object as its
ordered (key, value) pairs with the line of each key, so an error names where it is.
What json-c refuses (a bare ``"suspend",`` without a value) is refused with its line and column.
"""

from __future__ import annotations

import bisect
from json.decoder import scanstring

#: Deeper nesting than any rt-app file has (a thread, its phases, an event's object).
MAX_DEPTH = 64


class DialectError(ValueError):
    """A syntax error: ``msg`` at ``line``:``col`` (1-based)."""

    def __init__(self, msg: str, line: int, col: int):
        super().__init__(f"line {line}, column {col}: {msg}")
        self.msg, self.line, self.col = msg, line, col


class Obj(list):
    """A JSON object as its ordered (key, value) pairs: rt-app's events are ordered, and a
    file may repeat a key. ``lines[i]`` is the line of the i-th key, ``line`` that of ``{``."""

    line = 0

    def __init__(self, pairs=(), lines=None, line=0):
        super().__init__(pairs)
        self.lines = list(lines) if lines is not None else [0] * len(self)
        self.line = line

    def get(self, key, default=None):
        for k, v in self:
            if k == key:
                return v
        return default

    def line_of(self, key) -> int:
        for (k, _), n in zip(self, self.lines):
            if k == key:
                return n
        return self.line

    def __contains__(self, key):
        return any(k == key for k, _ in self)

    def keys(self):
        return [k for k, _ in self]


_WS = " \t\r\n"
_NUMBER_CHARS = "+-0123456789.eE"


class _Reader:
    def __init__(self, text: str):
        self.s = text
        self.i = 0
        self.newlines = [k for k, c in enumerate(text) if c == "\n"]

    def where(self, i: int) -> tuple[int, int]:
        line = bisect.bisect_left(self.newlines, i)
        start = self.newlines[line - 1] + 1 if line else 0
        return line + 1, i - start + 1

    def fail(self, msg: str, i: int | None = None):
        line, col = self.where(self.i if i is None else i)
        raise DialectError(msg, line, col)

    def skip(self):
        """Past whitespace and comments."""
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c in _WS:
                self.i += 1
            elif s.startswith("/*", self.i):
                end = s.find("*/", self.i + 2)
                if end < 0:
                    self.fail("a '/*' comment that is never closed")
                self.i = end + 2
            elif s.startswith("//", self.i):
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end + 1
            else:
                return

    def peek(self) -> str:
        self.skip()
        return self.s[self.i] if self.i < len(self.s) else ""

    def value(self, depth: int):
        if depth > MAX_DEPTH:
            self.fail(f"nested deeper than {MAX_DEPTH} levels")
        c = self.peek()
        if c == "{":
            return self.obj(depth)
        if c == "[":
            return self.array(depth)
        if c == '"':
            return self.string()
        if c and (c in "-0123456789") and not self.s.startswith("-Infinity", self.i):
            return self.number()
        for word, val in (("true", True), ("false", False), ("null", None), ("NaN", float("nan")),
                          ("Infinity", float("inf")), ("-Infinity", float("-inf"))):
            if self.s.startswith(word, self.i):
                self.i += len(word)
                return val
        self.fail("expected a value" if c else "the text ends where a value was expected")

    def string(self) -> str:
        try:
            text, end = scanstring(self.s, self.i + 1)
        except ValueError as e:
            self.fail(f"a string that is not valid: {getattr(e, 'msg', e)}", getattr(e, "pos", self.i))
        self.i = end
        return text

    def number(self):
        start = self.i
        while self.i < len(self.s) and self.s[self.i] in _NUMBER_CHARS:
            self.i += 1
        tok = self.s[start:self.i]
        try:
            return int(tok)
        except ValueError:
            try:
                return float(tok)
            except ValueError:
                self.fail(f"not a number: {tok!r}", start)

    def obj(self, depth: int) -> Obj:
        out = Obj(line=self.where(self.i)[0])
        self.i += 1
        while True:
            c = self.peek()
            if c == "}":
                self.i += 1
                return out
            if c != '"':
                self.fail("expected a key in double quotes or '}'")
            key_at = self.i
            key = self.string()
            if self.peek() != ":":
                self.fail(f"expected ':' after the key \"{key}\" (a key needs a value)")
            self.i += 1
            out.append((key, self.value(depth + 1)))
            out.lines.append(self.where(key_at)[0])
            c = self.peek()
            if c == ",":
                self.i += 1
            elif c != "}":
                self.fail("expected ',' or '}' after a value")

    def array(self, depth: int) -> list:
        out = []
        self.i += 1
        while True:
            if self.peek() == "]":
                self.i += 1
                return out
            out.append(self.value(depth + 1))
            c = self.peek()
            if c == ",":
                self.i += 1
            elif c != "]":
                self.fail("expected ',' or ']' after a value")


def loads(text: str):
    """The document in ``text`` (objects as :class:`Obj`); :class:`DialectError` if json-c
    would not read it either."""
    r = _Reader(text)
    doc = r.value(0)
    if r.peek():
        r.fail("more text after the document's end")
    return doc
