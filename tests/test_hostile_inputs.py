"""Each hostile input of tests/hostile.py as a test: handled (the exit code it must have, no
traceback, no panic, no signal, within 30 s and 2 GB, every file given left as it was).
Cases that make a real run's own checks need real-time privilege (make test-real runs them);
the heavy ones (seconds and a GB each) run in `make test-hostile`, which prints the table."""

import pytest

from conftest import REAL
from hostile import CASES, run_case


def _params():
    for _i, c in enumerate(CASES):
        marks = list(REAL) if c.root else []
        if c.heavy:
            marks.append(pytest.mark.slow)
        yield pytest.param(c, id=f"{c.cls}: {c.name}", marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_a_hostile_input_is_handled(case, tmp_path):
    o = run_case(case, tmp_path)
    assert o.handled, f"{o.why}\n--- output ---\n{o.output[-3000:]}"
