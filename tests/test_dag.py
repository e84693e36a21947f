"""DAG tasks in task-set files (docs/dag.md): read from a file or a dict, validated with
messages naming the file, the task and the field (exit 2 from the CLI), written back by
`rtsched convert`, and simulated."""

import json

import pytest

import rtsched
from conftest import EXAMPLES, real
from rtsched import InputError

DIAMOND = {
    "platform": {"cpus": 2},
    "run": {"duration": 40},
    "tasks": [
        {"name": "s", "period": 10, "wcet": 3, "deadline": 4},
        {"name": "p", "period": 20,
         "dag": {"nodes": {"a": "2ms", "b": 4, "c": 2, "d": 1}, "edges": [["a", "b"], ["a", "c"], ["b", "d"], ["c", "d"]]}},
    ],
}


def with_dag(dag, **extra):
    doc = json.loads(json.dumps(DIAMOND))
    doc["tasks"][1] = {"name": "p", "period": 20, "dag": dag, **extra}
    return doc


def test_a_dag_task_is_read_with_its_work_and_critical_path(tmp_path):
    ts = rtsched.load_taskset(DIAMOND)
    p = ts.tasks()[1]
    assert p["wcet_ns"] == 9_000_000 and p["regions"] == []
    assert p["dag"]["nodes"] == [("a", 2_000_000), ("b", 4_000_000), ("c", 2_000_000), ("d", 1_000_000)]
    assert p["dag"]["edges"] == [(0, 1), (0, 2), (1, 3), (2, 3)]
    assert p["dag"]["critical_path_ns"] == p["critical_path_ns"] == 7_000_000
    assert ts.tasks()[0]["dag"] is None
    f = tmp_path / "d.json"
    f.write_text(json.dumps(DIAMOND))
    assert rtsched.load_taskset(f).tasks() == ts.tasks()


def test_validate_summarises_a_dag_set(cli, tmp_path):
    f = tmp_path / "d.json"
    f.write_text(json.dumps(DIAMOND))
    p = cli("validate", f, check=0)
    assert "1 DAG task(s) (up to 4 nodes" in p.stdout


BAD = [
    ({"nodes": {"a": 1, "b": 1, "c": 1}, "edges": [["a", "b"], ["b", "c"], ["a", "c"], ["a", "x"]]},
     "task 'p' (tasks[1]): field 'dag.edges[3]': unknown node 'x'"),
    ({"nodes": {"a": 1, "bb": 1, "cc": 1}, "edges": [["a", "bb"], ["bb", "cd"]]},
     "field 'dag.edges[1]': unknown node 'cd' (did you mean 'cc'?)"),
    ({"nodes": {"a": 1, "b": 1, "c": 1}, "edges": [["a", "b"], ["b", "c"], ["c", "b"]]},
     "field 'dag.edges': the graph has a cycle: b -> c -> b"),
    ({"nodes": {"a": 1, "b": 1, "c": 1, "d": 1}, "edges": [["a", "b"], ["c", "d"]]},
     "field 'dag.edges': the graph is not connected: 'c', 'd' are not linked to 'a'"),
    ({"nodes": {"a": 1, "b": 1}, "edges": [["a", "a"]]}, "field 'dag.edges[0]': a self-loop on 'a'"),
    ({"nodes": {"a": 1, "b": 1}, "edges": [["a", "b"], ["a", "b"]]},
     "field 'dag.edges[1]': duplicate edge 'a' -> 'b' (also dag.edges[0])"),
    ({"nodes": {"a": 1, "b": 0}, "edges": [["a", "b"]]}, "field 'dag.nodes.b': must be > 0"),
    ({"nodes": {}}, "field 'dag.nodes': is empty"),
]


@pytest.mark.parametrize(("dag", "message"), BAD, ids=[m.split(": ")[-1][:24] for _, m in BAD])
def test_a_bad_dag_is_named_from_a_dict_and_from_the_cli(dag, message, cli, tmp_path):
    with pytest.raises(InputError) as e:
        rtsched.load_taskset(with_dag(dag))
    assert str(e.value).startswith("<dict>: ") and message in str(e.value)
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(with_dag(dag)))
    p = cli("validate", f, check=2)
    assert message in p.stderr and str(f) in p.stderr and "Traceback" not in p.stderr


def test_regions_beside_a_dag_and_a_wrong_wcet_are_refused():
    dag = {"nodes": {"a": 1, "b": 2}, "edges": [["a", "b"]]}
    with pytest.raises(InputError, match=r"field 'dag': give either 'regions' or 'dag'"):
        rtsched.load_taskset(with_dag(dag, regions=[1, [1, 1]]))
    with pytest.raises(InputError, match=r"field 'wcet': is 4ms but the DAG's nodes sum to 3ms"):
        rtsched.load_taskset(with_dag(dag, wcet=4))
    assert rtsched.load_taskset(with_dag(dag, wcet=3)).tasks()[1]["wcet_ns"] == 3_000_000


def test_convert_writes_the_dag_back(cli, tmp_path):
    src = tmp_path / "d.json"
    src.write_text(json.dumps(with_dag(DIAMOND["tasks"][1]["dag"], sections=[{"resource": "bus", "node": "b", "start": 1, "length": 2}])))
    out = tmp_path / "out.yaml"
    cli("convert", src, "-o", out, check=0)
    text = out.read_text()
    assert 'dag: {nodes: {"a": "2ms"' in text and 'node: "b"' in text
    a, b = rtsched.load_taskset(src), rtsched.load_taskset(out)
    assert a.tasks() == b.tasks()
    # rt-app has no DAGs: refused, naming the task.
    p = cli("convert", src, "-o", tmp_path / "r.json", "--to", "rt-app", check=2)
    assert "'p'" in p.stderr and "DAG" in p.stderr


def test_the_example_runs_under_gedf_paws_and_federated(cli, tmp_path):
    p = cli("simulate", EXAMPLES / "dag.yaml", "-s", "gedf", "paws", "federated", "--trace", tmp_path / "t.json", check=0)
    assert "gedf" in p.stdout and "paws" in p.stdout and "federated" in p.stdout
    trace = (tmp_path / "t.json").read_text()
    assert '"pipeline/0.detect"' in trace


def test_intervals_and_the_gantt_chart_name_nodes(tmp_path):
    r = rtsched.simulate(DIAMOND, "gedf", trace=True)
    iv = r.intervals
    p = iv[(iv.task == "p") & (iv.job == 0)].sort_values("start_ns")
    # By hand (crates/sim/tests/dag.rs): a [0,2], b [2,6], c [3,5], d [6,7].
    assert list(p.node) == ["a", "b", "c", "d"]
    assert list(p.start_ns // 1_000_000) == [0, 2, 3, 6]
    assert iv[iv.task == "s"].node.isna().all()
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    r.gantt(ax=ax, start=0, end=20_000_000)
    assert {"a", "b", "c", "d"} <= {t.get_text() for t in ax.texts}
    plt.close(fig)
    # A set without DAGs keeps its columns.
    assert "node" not in rtsched.simulate(EXAMPLES / "dhall.yaml", "gedf", trace=True).intervals.columns


#: A hand-spaced DAG case for the testbed: events at least 5 ms apart (0, 5, 15, 20, 25, then
#: 30 ... 55 for the second job), so only host steal could reorder them. Under paws on 2 CPUs:
#: a [0,5] on CPU 0; at 5 b and c are forked on CPU 0's deque: CPU 0 takes c (the bottom),
#: the idle CPU 1 steals b (the top) — one steal a job; d, released at the join (20), runs
#: [20,25].
SPACED = """platform: {cpus: 2}
run: {duration: 60, seed: 3}
tasks:
  - name: p
    period: 30
    dag: {nodes: {a: 5, b: 15, c: 10, d: 5}, edges: [[a, b], [a, c], [b, d], [c, d]]}
"""


def node_sequences(result):
    iv = result.intervals.sort_values(["cpu", "start_ns"])
    seqs = {}
    for cpu, g in iv.groupby("cpu"):
        seq = []
        for j, n in zip(g.job, g.node):
            if not seq or seq[-1] != (j, n):
                seq.append((j, n))
        seqs[cpu] = seq
    return seqs


@real
def test_a_dag_set_on_the_testbed_under_paws_counts_as_in_the_simulator():
    ts = rtsched.parse_taskset(SPACED, "yaml", "spaced.yaml")
    sim = rtsched.simulate(ts, "paws", trace=True)
    assert node_sequences(sim) == {0: [(0, "a"), (0, "c"), (0, "d"), (1, "a"), (1, "c"), (1, "d")],
                                   1: [(0, "b"), (1, "b")]}
    assert (sim.summary["jobs"], sim.summary["missed"], sim.summary["steals"]) == (2, 0, 2)

    def counts(r):
        s = r.summary
        return (s["jobs"], s["missed"], s["steals"], s["preemptions"], s["migrations"], node_sequences(r))

    real_run = None
    for _ in range(3):
        real_run = rtsched.run(ts, "testbed:paws")
        if counts(real_run) == counts(sim):
            break
    if counts(real_run) != counts(sim) and real_run.measurements.get("host.steal_ms", 0) > 0:
        pytest.skip(f"the host stole CPU time in each of 3 runs ({real_run.measurements['host.steal_ms']:.0f} ms); not testable now")
    assert counts(real_run) == counts(sim)


def test_a_dag_tasks_sections_are_hatched_on_their_node(tmp_path):
    """Node b's section (from 1 ms of b's work, 2 ms long) on the diamond under gedf, by hand:
    s (C 3, D 4) and a run at 0; a ends at 2 and forks b and c on its CPU, where b (the lower
    index) runs 2-6; so b holds bus over 3-5 ms, and again 20 ms later in p's second job."""
    from rtsched.gantt import _held_spans

    doc = with_dag(DIAMOND["tasks"][1]["dag"], sections=[{"resource": "bus", "node": "b", "start": 1, "length": 2}])
    doc["resources"] = ["bus"]
    r = rtsched.simulate(rtsched.load_taskset(doc), "gedf", trace=True)
    spans = sorted(_held_spans(r.intervals, r.taskset), key=lambda x: x[1])
    assert [x[1:] for x in spans] == [(3_000_000, 5_000_000, 0), (23_000_000, 25_000_000, 0)], spans
    b = r.intervals[(r.intervals.task == "p") & (r.intervals.thread == 1)]
    assert set(b.cpu) == {spans[0][0]}
    fig = r.gantt(tmp_path / "g.png")
    hatched = [c for c in fig.axes[0].collections if c.get_hatch()]
    assert len(hatched) == 2


def test_warnings_judge_a_dag_by_its_critical_path(cli, tmp_path):
    """A heavy DAG task (C 9 ms > D 8 ms, L 7 ms) is legal: no warning. A critical path longer
    than the deadline is warned about, named as the longest path (exit 0)."""
    heavy = with_dag(DIAMOND["tasks"][1]["dag"], deadline=8)
    f = tmp_path / "heavy.json"
    f.write_text(json.dumps(heavy))
    p = cli("validate", f, check=0)
    assert p.stderr == ""
    f.write_text(json.dumps(with_dag(DIAMOND["tasks"][1]["dag"], deadline=6)))
    p = cli("validate", f, check=0)
    assert "task 'p': longest path 7ms > deadline 6ms" in p.stderr
