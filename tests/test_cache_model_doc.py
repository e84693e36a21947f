"""The cache model's defaults as the docs state them (docs/cache-model.md: the commented
`run.cache` block and the per-line cost table; the lwfg2012 report's "default" sweeps) are the
code's (`CacheParams::default`, read back from a task set written out with `cache: true`)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

import rtsched

ROOT = Path(__file__).resolve().parents[1]
FIELDS = ["l2", "l3", "remote_cache", "remote_node", "memory", "remote_memory"]


def code_defaults() -> dict:
    """`run.cache` as the code fills it in for `cache: true`: costs in ps, passes."""
    ts = rtsched.parse_taskset("platform: {cpus: 2}\nrun: {cache: true}\ntasks: [{name: a, period: 10, wcet: 1}]\n", "yaml", "d.yaml")
    cache = yaml.safe_load(rtsched.analysis.to_yaml(ts))["run"]["cache"]
    out = {k: int(re.fullmatch(r"(\d+)ps", str(cache[k])).group(1)) for k in FIELDS}
    out["passes"] = int(cache["passes"])
    return out


def _ps(text: str) -> int:
    m = re.fullmatch(r"(\d+(?:\.\d+)?) ?ns", text.strip())
    assert m, text
    return round(float(m.group(1)) * 1000)


def doc_defaults(text: str) -> dict:
    """The values of the commented block under `cache: true  # the defaults, as if written out:`."""
    m = re.search(r"cache: true\s+# the defaults[^\n]*\n((?:\s*#[^\n]*\n)+)", text)
    assert m, "docs/cache-model.md: the commented defaults block under `cache: true`"
    block = yaml.safe_load(" ".join(line.strip().lstrip("#") for line in m.group(1).splitlines()).split("cache:", 1)[1])
    out = {k: _ps(block[k]) for k in FIELDS}
    out["passes"] = int(block["passes"])
    return out


def doc_cost_table(text: str) -> dict:
    """The cost column of the table "Where a line is found": `name` (N ns) per row."""
    return {k: _ps(v) for k, v in re.findall(r"\| `(\w+)` \((\d+(?:\.\d+)? ?ns)\) \|", text)}


def test_the_docs_state_the_codes_cache_defaults():
    # CacheParams::default (crates/model/src/task.rs): l2 2 ns, l3 8 ns, remote_cache 20 ns,
    # remote_node 30 ns, memory 25 ns, remote_memory 40 ns per line, 1 sweep per job.
    code = code_defaults()
    assert code == {"l2": 2000, "l3": 8000, "remote_cache": 20000, "remote_node": 30000, "memory": 25000,
                    "remote_memory": 40000, "passes": 1}
    text = (ROOT / "docs" / "cache-model.md").read_text()
    assert doc_defaults(text) == code
    table = doc_cost_table(text)
    assert table == {k: code[k] for k in FIELDS}, table


def test_the_lwfg2012_report_states_the_default_sweeps():
    src = (ROOT / "python" / "rtsched" / "reproduce" / "lwfg2012.py").read_text()
    said = re.findall(r"default(?: is)? (\d+)", src)
    assert said and all(int(n) == code_defaults()["passes"] for n in said), said
    assert "its default 2 sweeps" not in src


def test_the_old_stale_block_would_fail():
    # The block as it stood before (l3 10 ns, memory 60 ns, 2 sweeps): the check sees it.
    old = 'run:\n  cache: true                     # the defaults, as if written out:\n  # cache: {l2: "2ns", l3: "10ns", remote_cache: "20ns", remote_node: "30ns",\n  #         memory: "60ns", remote_memory: "40ns", passes: 2}\n'
    assert doc_defaults(old) != code_defaults()
