"""`rtsched.load_taskset` of a path, a dict (the task-set document) or a list (of tasks)."""

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import rtsched
from conftest import EXAMPLES
from rtsched import InputError
from rtsched.analysis import to_yaml

#: Two tasks written by hand: U = 3/10 + 5/25 = 0.5.
DOC = {
    "platform": {"cpus": 2},
    "run": {"duration": 100, "seed": 4},
    "tasks": [
        {"name": "a", "period": 10, "wcet": 3},
        {"name": "b", "period": "25ms", "wcet": "5ms", "deadline": 20, "cpu": 1},
    ],
}


def test_a_dict_is_the_document(tmp_path):
    ts = rtsched.load_taskset(DOC)
    assert (ts.cpus, ts.task_names, ts.duration_ns, ts.seed) == (2, ["a", "b"], 100_000_000, 4)
    assert ts.utilization == pytest.approx(0.5)
    b = ts.tasks()[1]
    assert (b["period_ns"], b["wcet_ns"], b["deadline_ns"], b["cpu"]) == (25_000_000, 5_000_000, 20_000_000, 1)
    assert ts.source == "<dict>"
    # The same document as a file gives the same set.
    f = tmp_path / "doc.yaml"
    f.write_text(yaml.safe_dump(DOC))
    assert to_yaml(rtsched.load_taskset(f)) == to_yaml(ts)
    # The caller's dict is not changed.
    assert DOC["tasks"][0] == {"name": "a", "period": 10, "wcet": 3}


def test_a_list_is_the_tasks_on_one_cpu_unless_told():
    tasks = [{"name": "a", "period": 10, "wcet": 3}, {"name": "b", "period": "25ms", "wcet": "5ms"}]
    ts = rtsched.load_taskset(tasks)
    assert (ts.cpus, ts.task_names, ts.source) == (1, ["a", "b"], "<list>")
    assert ts.utilization == pytest.approx(0.5)
    # The default run section, as a file without one.
    assert ts.duration_ns == rtsched.load_taskset({"platform": {"cpus": 1}, "tasks": tasks}).duration_ns
    assert rtsched.load_taskset(tuple(DOC["tasks"]), cpus=4).cpus == 4
    # cpu: 1 needs two CPUs: the check a file gets.
    with pytest.raises(InputError, match=r"^<list>: task 'b' \(tasks\[1\]\): field 'cpu': CPU 1 is out of range"):
        rtsched.load_taskset(DOC["tasks"])


def test_numpy_values_and_paths_are_taken():
    ts = rtsched.load_taskset({"platform": {"cpus": np.int64(2)},
                               "tasks": [{"name": "a", "period": np.float64(10.0), "wcet": np.int32(3)}]})
    assert (ts.cpus, ts.tasks()[0]["period_ns"], ts.tasks()[0]["wcet_ns"]) == (2, 10_000_000, 3_000_000)
    assert rtsched.load_taskset(Path(EXAMPLES / "dhall.yaml")).task_names == rtsched.load_taskset(str(EXAMPLES / "dhall.yaml")).task_names


@pytest.mark.parametrize("source, message", [
    # A misspelt field of the second task: the source, the task and the field.
    ({"platform": {"cpus": 2}, "tasks": [{"name": "a", "period": 10, "wcet": 3}, {"name": "b", "period": 10, "wcett": 3}]},
     "<dict>: task 'b' (tasks[1]): field 'wcett': unknown field (did you mean 'wcet'?)"),
    ({"platform": {"cpus": 2}, "tasks": [{"name": "a", "period": 10, "wcet": "3 apples"}]},
     "<dict>: task 'a' (tasks[0]): field 'wcet': "),
    ({"tasks": [{"name": "a", "period": 10, "wcet": 3}]}, "<dict>: field 'platform': missing required field"),
    ([{"name": "a", "period": 10}], "<list>: task 'a' (tasks[0]): field 'wcet': missing required field"),
    # What JSON cannot hold is named before the parser sees it.
    ({"platform": {"cpus": 2}, "tasks": [{"name": "a", "period": float("nan"), "wcet": 3}]},
     "<dict>: task 'a' (tasks[0]): field 'period': nan is not a finite number"),
    ([{"name": "p", "period": 10, "regions": [1, {2, 3}]}],
     "<list>: task 'p' (tasks[0]): field 'regions[1]': a value of type set is not a number"),
    ({"platform": {"cpus": 2}, "run": {"duration": object()}, "tasks": []},
     "<dict>: field 'run.duration': a value of type object"),
    ({"platform": {"cpus": 2}, 3: 4, "tasks": []}, "<dict>: the document: key 3 is not a string"),
    # cpus= is for a list only.
    (DOC, "<dict>: cpus= is only for a list of tasks"),
    (12, "expected a path, a dict (a task-set document) or a list (of tasks), got int"),
])
def test_errors_name_the_source_task_and_field(source, message):
    kwargs = {"cpus": 2} if source is DOC else {}
    with pytest.raises(InputError) as e:
        rtsched.load_taskset(source, **kwargs)
    assert str(e.value).startswith(message) or message in str(e.value), str(e.value)


def test_a_missing_file_is_still_named(tmp_path):
    missing = tmp_path / "nope.yaml"
    with pytest.raises(InputError, match=f"^{missing}"):
        rtsched.load_taskset(missing)
    with pytest.raises(InputError, match="cpus= is only for a list"):
        rtsched.load_taskset(EXAMPLES / "dhall.yaml", cpus=2)


@pytest.mark.parametrize("name", ["dhall.yaml", "fork-join.yaml", "quad-mixed.yaml", "tuf-overload.yaml", "overload.json"])
def test_every_example_loads_the_same_from_its_document(name):
    f = EXAMPLES / name
    doc = json.loads(f.read_text()) if f.suffix == ".json" else yaml.safe_load(f.read_text())
    assert to_yaml(rtsched.load_taskset(doc)) == to_yaml(rtsched.load_taskset(f))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([("waters2015", {"m": 4, "U": 2}), ("waters2015", {"n": 30, "tasks": "runnable"}),
                        ("randfixedsum", {"n": 8, "U": 2.5, "m": 4}), ("paws2013", {"m": 2, "window": 2}),
                        ("chronos2011", {})]),
       st.integers(0, 2**32))
def test_round_trip_through_a_dict(gen, seed):
    """A generated set written as YAML, read back by a YAML library into a dict, loads as the
    same set (the dict path and the file path validate alike)."""
    name, params = gen
    text = to_yaml(rtsched.generate(name, seed=seed, **params).taskset)
    assert to_yaml(rtsched.load_taskset(yaml.safe_load(text))) == text


def test_simulate_takes_a_dict_or_a_list_as_load_taskset_does():
    doc = {"platform": {"cpus": 1}, "tasks": [{"name": "a", "period": 10, "wcet": 2}]}
    by_dict = rtsched.simulate(doc, "gedf").summary
    by_list = rtsched.simulate(doc["tasks"], "gedf").summary
    assert by_dict["jobs"] == by_list["jobs"] == 100 and by_dict["met"] == 100
    with pytest.raises(rtsched.InputError, match=r"<dict>: task 'a'.*'wcett'"):
        rtsched.simulate({"platform": {"cpus": 1}, "tasks": [{"name": "a", "period": 10, "wcett": 2}]}, "gedf")
