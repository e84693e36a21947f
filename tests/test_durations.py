"""One rule for writing a duration (rtsched/durations.py over Rust's model::time): the spelling
for reading is byte for byte what the warnings wrote before it moved to Rust, and a number in a
column's unit is what the tables wrote."""

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


@given(st.integers(0, 2**53 - 1), st.sampled_from(["us", "ms", "s"]), st.sampled_from([None, 0, 1, 3]))
def test_in_unit_is_the_tables_number(ns, unit, decimals):
    scale = {"us": 1e3, "ms": 1e6, "s": 1e9}[unit]
    assert in_unit(ns, unit, decimals) == (f"{ns / scale:g}" if decimals is None else f"{ns / scale:.{decimals}f}")


def test_in_unit_by_hand():
    assert in_unit(1_234_567, "ms", 3) == "1.235" and in_unit(1_234_567, "ms") == "1.23457"
    assert in_unit(1_250, "us", 1) == "1.2"  # 1.25 is exact: to even, as before
    assert in_unit(None, "ms", 3) == "-"
