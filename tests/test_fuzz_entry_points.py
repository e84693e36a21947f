"""The Python entry points on arbitrary input (hypothesis): loading a task set through the API,
the sweep spec, and `rtsched validate` / `rtsched simulate` on any file contents.

The contract: a result, or an InputError (exit 2) whose message names the file; never a Python
traceback, never a Rust panic. The CLI runs in-process with RTSCHED_DEBUG=1, so an internal
error raises here instead of being turned into exit 1, and a Rust panic surfaces as pyo3's
PanicException (a BaseException). The Rust side is fuzzed by libFuzzer (`make test-fuzz`);
docs/hardening.md says how to run these for longer (HYPOTHESIS_PROFILE=long).
"""

import contextlib
import io
import json
import os
import tempfile

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rtsched
from conftest import EXAMPLES
from rtsched import InputError
from rtsched.cli import main
from rtsched.sweep.spec import load_spec, parse_spec

settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("long", deadline=None, max_examples=5_000, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def examples(n):
    """`n` examples in CI; the long profile's count when HYPOTHESIS_PROFILE=long."""
    return settings.default.max_examples if os.environ.get("HYPOTHESIS_PROFILE") == "long" else n

# -- strategies ---------------------------------------------------------------------------

DURATIONS = st.one_of(
    st.integers(-5, 10**22),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["10ms", "1ns", "0", "-1ms", "1.5ns", "2s", "1e30ms", "250us", "abc", "", "18446744073709551616ns", "-0.0"]),
)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=6), DURATIONS)
TASK_KEYS = ["name", "period", "min_interarrival", "max_interarrival", "deadline", "wcet", "offset", "priority", "cpu", "wss",
             "group", "regions", "sections", "tuf", "class", "nice", "behaviour", "run", "sleep", "shape", "utility", "points",
             "resource", "start", "length", "threads"]
ANY = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                   | st.dictionaries(st.sampled_from(TASK_KEYS) | st.text(max_size=4), inner, max_size=4), max_leaves=10)
TASK = st.fixed_dictionaries(
    {"name": st.sampled_from(["a", "b", "c"]) | st.text(max_size=3)},
    optional={
        "period": DURATIONS, "wcet": DURATIONS, "deadline": DURATIONS, "offset": DURATIONS, "priority": SCALARS,
        "cpu": st.integers(-1, 5) | SCALARS, "max_interarrival": DURATIONS,
        "regions": st.lists(DURATIONS | st.lists(DURATIONS, max_size=3) | st.fixed_dictionaries({"threads": st.integers(-1, 4), "wcet": DURATIONS}), max_size=3),
        "sections": st.lists(st.fixed_dictionaries({"resource": st.sampled_from(["R", "S", 1]), "start": DURATIONS, "length": DURATIONS},
                                                   optional={"region": st.integers(-1, 3), "thread": st.integers(-1, 3)}), max_size=2),
        "tuf": SCALARS | st.fixed_dictionaries({}, optional={"shape": st.sampled_from(["step", "linear", "quadratic", "piecewise", "x"]),
                                                             "utility": SCALARS, "termination": DURATIONS,
                                                             "points": st.lists(st.lists(DURATIONS, max_size=3), max_size=3)}),
        "nice": st.integers(-25, 25), "behaviour": st.sampled_from(["hog", "sleeper", "bursty", "x"]),
    },
)
DOCUMENT = st.fixed_dictionaries({}, optional={
    "platform": st.fixed_dictionaries({"cpus": st.integers(-1, 70_000) | SCALARS}) | ANY,
    "run": st.fixed_dictionaries({}, optional={"duration": DURATIONS, "seed": st.integers(-1, 2**65), "on_miss": st.sampled_from(["abort", "continue", "x"]),
                                               "execution": ANY, "overheads": ANY}) | ANY,
    "tasks": st.lists(TASK | ANY, max_size=4) | ANY,
    "resources": st.lists(st.sampled_from(["R", "S", "R"]), max_size=3) | ANY,
    "name": SCALARS,
})
EXAMPLE_TEXTS = sorted((p.name, p.read_text()) for p in EXAMPLES.iterdir() if p.suffix in (".yaml", ".json"))


@st.composite
def mutated_example(draw):
    """An example task file with one slice of it replaced by arbitrary text."""
    name, text = draw(st.sampled_from(EXAMPLE_TEXTS))
    i = draw(st.integers(0, len(text)))
    j = draw(st.integers(i, min(len(text), i + 40)))
    return name, text[:i] + draw(st.text(max_size=12)) + text[j:]


@st.composite
def task_file(draw):
    """(suffix, bytes) of a task file: structured, a mutated example, or arbitrary text/bytes."""
    kind = draw(st.sampled_from(["yaml", "json", "mutated", "text", "bytes"]))
    if kind == "yaml":
        return ".yaml", yaml.safe_dump(draw(DOCUMENT), allow_unicode=True).encode()
    if kind == "json":
        return ".json", json.dumps(draw(DOCUMENT)).encode()  # NaN and Infinity included
    if kind == "mutated":
        name, text = draw(mutated_example())
        return os.path.splitext(name)[1], text.encode("utf-8", "surrogatepass")
    if kind == "text":
        return draw(st.sampled_from([".yaml", ".json"])), draw(st.text(max_size=200)).encode("utf-8", "surrogatepass")
    return draw(st.sampled_from([".yaml", ".json"])), draw(st.binary(max_size=200))


@contextlib.contextmanager
def a_file(suffix, data):
    with tempfile.TemporaryDirectory(prefix="rtsched-fuzz-") as d:
        path = os.path.join(d, "ts" + suffix)
        with open(path, "wb") as f:
            f.write(data)
        yield path


def cli(*argv):
    """`rtsched ARGV` in-process: (exit code, stdout, stderr); internal errors raise."""
    out, err = io.StringIO(), io.StringIO()
    old = os.environ.get("RTSCHED_DEBUG")
    os.environ["RTSCHED_DEBUG"] = "1"
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(list(argv))
    finally:
        if old is None:
            del os.environ["RTSCHED_DEBUG"]
        else:
            os.environ["RTSCHED_DEBUG"] = old
    return rc, out.getvalue(), err.getvalue()


# -- the API ------------------------------------------------------------------------------

@settings(max_examples=examples(1000))
@given(task_file())
def test_the_api_loads_any_file_or_says_which_file_is_wrong(f):
    suffix, data = f
    try:
        text = data.decode()
    except UnicodeDecodeError:
        text = None
    if text is not None and "\x00" not in text:
        try:
            ts = rtsched.parse_taskset(text, suffix[1:], "given" + suffix)
            assert ts.cpus >= 1
        except InputError as e:
            assert str(e).startswith("given" + suffix), str(e)
    with a_file(suffix, data) as path:
        try:
            rtsched.load_taskset(path)
        except InputError as e:
            assert str(e).startswith(path), str(e)


# -- the CLI ------------------------------------------------------------------------------

@settings(max_examples=examples(400))
@given(task_file())
def test_validate_exits_0_or_2_naming_the_file(f):
    with a_file(*f) as path:
        rc, out, err = cli("validate", path)
    assert rc in (0, 2), (rc, out, err)
    if rc == 2:
        assert path in err, err
    else:
        assert out.startswith(f"{path}: ok"), out


SCHEDULERS = ["gedf", "pedf", "gfp", "pfp:rm", "gnpedf", "paws", "federated", "gedf-dist", "dasa", "lbesa", "ggua", "nggua", "cfs", "all"]


@settings(max_examples=examples(200))
@given(task_file(), st.sampled_from(SCHEDULERS), st.sampled_from([[], ["--on-miss", "abort"], ["--duration", "5ms"]]))
def test_simulate_exits_0_or_2_naming_the_file(f, scheduler, extra):
    with a_file(*f) as path:
        rc, out, err = cli("simulate", path, "-s", scheduler, "--max-jobs", "20000", *extra)
    assert rc in (0, 2), (rc, out, err)
    if rc == 2:
        assert path in err, err


# -- the sweep spec -----------------------------------------------------------------------

BASE_SPEC = {"generator": {"name": "uunifast", "params": {"n": 3, "m": 2}}, "utilisation": {"points": [0.5, 1.0]},
             "schedulers": ["gedf"], "seeds": 2, "duration": "5ms"}
SPEC_KEYS = ["name", "seed", "generator", "generators", "utilisation", "utilization", "schedulers", "seeds", "duration", "on_miss",
             "output", "retries", "run", "topology", "params", "points", "from", "to", "step", "per_cpu", "param", "label", "n", "m", "U"]
SPEC_VALUES = st.recursive(
    SCALARS | st.sampled_from(["uunifast", "randfixedsum", "lelli2011", "paws2013", "mwl", "gedf", "pedf:ffd", "x.parquet", 10**12, 10**7, 1e308, 1e-308]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(SPEC_KEYS) | st.text(max_size=3), inner, max_size=4),
    max_leaves=8)


@st.composite
def spec_dict(draw):
    """A working spec with a few fields (top-level or one level down) replaced, added or removed."""
    d = json.loads(json.dumps(BASE_SPEC))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from([[k] for k in SPEC_KEYS[:14]] + [["generator", "params"], ["generator", "params", "n"],
                                                                     ["generator", "params", "m"], ["generator", "name"],
                                                                     ["utilisation", "points"], ["utilisation", "per_cpu"]]))
        parent = d
        for k in path[:-1]:
            if not isinstance(parent.get(k), dict):
                parent[k] = {}
            parent = parent[k]
        if draw(st.booleans()) or path[-1] not in parent:
            parent[path[-1]] = draw(SPEC_VALUES)
        else:
            del parent[path[-1]]
    return d


@settings(max_examples=examples(400))
@given(spec_dict())
def test_a_sweep_spec_is_taken_or_refused_naming_the_spec(d):
    try:
        spec = parse_spec(d, "spec.yaml")
    except InputError as e:
        assert str(e).startswith("spec.yaml"), str(e)
        return
    assert 1 <= spec.size <= 10_000_000


@settings(max_examples=examples(200))
@given(st.one_of(st.builds(lambda d: yaml.safe_dump(d).encode(), spec_dict()), st.binary(max_size=120),
                 st.text(max_size=120).map(lambda s: s.encode("utf-8", "surrogatepass"))))
def test_a_sweep_spec_file_is_taken_or_refused_naming_the_file(data):
    with a_file(".yaml", data) as path:
        try:
            load_spec(path)
        except InputError as e:
            assert str(e).startswith(path), str(e)


@pytest.mark.parametrize("text", ["seeds: [1, 2", "\xff\xfe", "- a\n- b\n", "!!python/object:os.system {}", "a: &x [*x]"])
def test_sweep_command_on_a_bad_spec_exits_2_naming_it(tmp_path, text):
    p = tmp_path / "spec.yaml"
    p.write_bytes(text.encode("latin-1"))
    rc, out, err = cli("sweep", str(p))
    assert rc == 2 and str(p) in err, (rc, out, err)
