"""Platform topology in task files (docs/taskset-format.md "topology"): presets, written-out
caches and nodes, and bad input named by field (exit 2, no traceback)."""

from __future__ import annotations

import pytest

from conftest import run_cli

TASKS = "tasks: [{name: a, period: 10, wcet: 1}]\n"


def write(tmp_path, platform):
    p = tmp_path / "ts.yaml"
    p.write_text(f"platform: {platform}\n{TASKS}")
    return p


def test_presets_and_written_out_topologies_validate_and_simulate(tmp_path):
    r = run_cli("validate", write(tmp_path, "{cpus: 48, topology: opteron6164x4}"), check=0)
    assert "L3 5118KiB x8 (6 CPUs each); 4 NUMA nodes" in r.stdout
    r = run_cli("validate", write(tmp_path, "{cpus: 4, topology: {caches: [{level: 2, size: 1MiB, shared_by: 2}], nodes: 2}}"), check=0)
    assert "L2 1MiB x2 (2 CPUs each); 2 NUMA nodes" in r.stdout
    r = run_cli("validate", write(tmp_path, "{cpus: 1, topology: host}"), check=0)
    assert "topology: host:" in r.stdout
    run_cli("simulate", write(tmp_path, "{cpus: 48, topology: opteron6164x4}"), "-s", "gedf", check=0)


@pytest.mark.parametrize("platform, field, words", [
    ("{cpus: 4, topology: {caches: [{level: 2, size: 1MiB, cpus: [[0, 1], [2, 5]]}]}}", "topology.caches[0].cpus[1]", "CPU 5 does not exist"),
    ("{cpus: 2, topology: {caches: [{level: 1, size: 32, line: 64}]}}", "topology.caches[0].size", "smaller than one line"),
    ("{cpus: 2, topology: {caches: [{level: 1, size: 4KiB, line: 48}]}}", "topology.caches[0].line", "power of two"),
    ("{cpus: 2, topology: {nodes: [[0], [0, 1]]}}", "topology.nodes[1]", "two nodes"),
    ("{cpus: 64, topology: opteron6164x4}", "topology", "48 CPUs"),
])
def test_bad_topologies_exit_2_naming_the_field(tmp_path, platform, field, words):
    r = run_cli("validate", write(tmp_path, platform), check=2)
    assert f"field '{field}'" in r.stderr and words in r.stderr and "Traceback" not in r.stderr, r.stderr


def _sharer_stalls(topology, b):
    """Two memory sharers (group 1, 256 KiB = 4096 lines each) on CPUs 0 and ``b`` under P-EDF,
    released together every 10 ms for 30 ms: b's job stalls (ns)."""
    import rtsched

    ts = rtsched.parse_taskset(
        f"platform: {{cpus: 24, topology: {topology}}}\nrun: {{duration: 30, cache: true}}\ntasks:\n"
        f"  - {{name: a, period: 10, wcet: 1, wss: 256KiB, group: 1, cpu: 0}}\n"
        f"  - {{name: b, period: 10, wcet: 1, wss: 256KiB, group: 1, cpu: {b}}}\n", "yaml", "sharers.yaml")
    jobs = rtsched.simulate(ts, "pedf").jobs
    return [int(x) for x in jobs[jobs["task"] == "b"]["stall_ns"]]


@pytest.mark.parametrize("topology, b, each", [
    # a (CPU 0) is dispatched first and writes the group's 4096 lines; b then finds them in
    # CPU 0's caches. CPU 6 is die 1 of package 0: another L3 (Table 2: 6 cores per L3) but,
    # under Table 2's "NUMA Node: 12 cores", CPU 0's node: 4096 × remote_cache 20 ns = 81,920;
    # with a node per die, another node: 4096 × remote_node 30 ns = 122,880 — as CPU 12 (another
    # package) is under both.
    ("opteron6164x4", 6, 81_920),
    ("opteron6164x4-dies", 6, 122_880),
    ("opteron6164x4", 12, 122_880),
    ("opteron6164x4-dies", 12, 122_880),
    # CPUs 0 and 1 share die 0's L3 under both: 4096 × l3 8 ns = 32,768.
    ("opteron6164x4", 1, 32_768),
    ("opteron6164x4-dies", 1, 32_768),
])
def test_a_sharer_on_the_other_die_is_on_another_node_only_with_a_node_per_die(topology, b, each):
    assert _sharer_stalls(topology, b) == [each, each, each]


def test_the_dies_preset_validates_with_eight_nodes(tmp_path):
    r = run_cli("validate", write(tmp_path, "{cpus: 48, topology: opteron6164x4-dies}"), check=0)
    assert "opteron6164x4-dies: L1-I 64KiB x48, L1-D 64KiB x48, L2 512KiB x48, L3 5118KiB x8 (6 CPUs each); 8 NUMA nodes" in r.stdout
    r = run_cli("validate", write(tmp_path, "{cpus: 49, topology: opteron6164x4-dies}"), check=2)
    assert "field 'topology'" in r.stderr and "preset 'opteron6164x4-dies' has 48 CPUs" in r.stderr
