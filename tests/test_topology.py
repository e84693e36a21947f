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
