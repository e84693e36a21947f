"""One rule for writing a duration (rtsched/durations.py over Rust's model::time): the spelling
for reading is byte for byte what the warnings wrote before it moved to Rust, and a number in a
column's unit is what the tables wrote."""

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rtsched.durations import in_unit, words


def _words_before(ns) -> str:
    """checks.py's formatter before the rule moved to Rust (the oracle)."""
    for unit, scale in (("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)):
        if ns >= scale:
            return f"{ns / scale:g}{unit}"
    return f"{ns}ns"


@given(st.one_of(st.integers(0, 2**53 - 1), st.integers(0, 10**7), st.integers(999_000, 1_001_000)))
def test_words_is_the_warnings_spelling(ns):
    assert words(ns) == _words_before(ns)


def test_words_by_hand():
    assert [words(n) for n in (0, 999, 1_000, 250_000, 1_500_000, 33_333_333, 2_000_000_000, 10**15)] == [
        "0ns", "999ns", "1us", "250us", "1.5ms", "33.3333ms", "2s", "1e+06s"]


@given(st.one_of(st.integers(0, 2**53 - 1), st.floats(0, 1e15)), st.sampled_from(["us", "ms", "s"]),
       st.sampled_from([None, 0, 1, 2, 3]))
def test_in_unit_is_the_tables_number(ns, unit, decimals):
    """Integer ns and fractional means (a mean response time) alike, as the tables wrote them."""
    scale = {"us": 1e3, "ms": 1e6, "s": 1e9}[unit]
    assert in_unit(ns, unit, decimals) == (f"{ns / scale:g}" if decimals is None else f"{ns / scale:.{decimals}f}")


#: Hand-worked: (ns, unit, decimals) -> text.
IN_UNIT = [
    (1_234_567, "ms", 3, "1.235"),
    (1_234_567, "ms", None, "1.23457"),
    (1_250, "us", 1, "1.2"),  # 1.25 is exact in binary: ties to even, as f"{1.25:.1f}"
    (1_350, "us", 1, "1.4"),  # 1.35 is 1.3500000000000000888 in binary: up
    (2_500_000, "ms", 0, "2"),  # 2.5: to even
    (40_000_000, "ms", None, "40"),
    (1_500_000_000, "s", None, "1.5"),
    (0, "ms", 3, "0.000"),
    (1_234_567.8, "ms", 3, "1.235"),  # a mean
    (None, "ms", 3, "-"),  # not measured
]


def test_in_unit_by_hand():
    assert [in_unit(ns, u, d) for ns, u, d, _ in IN_UNIT] == [text for *_, text in IN_UNIT]


def test_in_unit_refuses_an_unknown_unit():
    with pytest.raises(ValueError, match="unknown unit 'h'"):
        in_unit(1, "h")


# A duration in ns formatted by hand in an f-string: `{x / 1e6:.3f}`, `{d / 1_000_000:g}`.
_BY_HAND = re.compile(r"/\s*(?:[0-9]+(?:\.[0-9]+)?e[369]|1_000(?:_000){0,2})\s*:[^}]*\}")
# Hand-formatted numbers that are no duration (a file size).
_NOT_DURATIONS = {"result.py": "size / 1e"}


def _by_hand(text, allowed=None):
    return [n for n, line in enumerate(text.splitlines(), 1)
            if _BY_HAND.search(line) and not (allowed and allowed in line)]


def test_no_duration_is_formatted_beside_the_rule():
    """Every duration the package writes goes through rtsched.durations (chains.py's table, the
    rt-app export's warnings and paws2013's report did not)."""
    root = Path(__file__).resolve().parent.parent / "python" / "rtsched"
    found = {f"{p.relative_to(root)}:{n}" for p in root.rglob("*.py")
             for n in _by_hand(p.read_text(encoding="utf-8"), _NOT_DURATIONS.get(p.name))}
    assert not found, sorted(found)
    # the control: each spelling the rule replaced is caught
    for line in ('f"{x / 1e6:.3f}"', 'f"{lo / 1e6:g}..{hi / 1e6:g} ms"', 'f"{(a + b) / 2e6:g}"',
                 'f"{d / 1_000_000:.1f}"'):
        assert _by_hand(line) == [1], line
    assert _by_hand("time.sleep(d / 1e9)") == []
