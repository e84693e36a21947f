"""The sweep spec: the validated :class:`Spec`, its parsing from a dict or a file, and the
probe that tries the generator and every scheduler before any work.

The checks themselves are a schema (:mod:`.schema`, pydantic), imported only when a spec is
parsed, so workers and the rest of the CLI do not pay for it. Every error is one
:class:`InputError` naming the file and the field, e.g.
``spec.yaml: field 'utilisation.points[1]': expected a number, got 'x'``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .._core import InputError
from .generator import Generator


@dataclass(frozen=True)
class Spec:
    """A validated sweep spec (see :func:`load_spec`, :func:`parse_spec`)."""

    name: str
    seed: int
    generators: tuple
    points: tuple
    per_cpu: bool
    schedulers: tuple
    replications: tuple
    duration_ns: int
    on_miss: str
    output: str | None = None
    retries: int = 3
    source: str = "<spec>"
    #: The spec's ``run:`` (execution, cache, overheads) as canonical JSON, an overhead
    #: profile's path made absolute; None when not given. Applied to every generated set.
    run: str | None = None
    #: The spec's ``topology:`` (a preset name or a mapping) as canonical JSON, or None.
    topology: str | None = None
    #: The spec's ``locking:`` axis, the protocols each set runs under (``run.locking``);
    #: empty without the axis (each set runs under its own).
    locking: tuple = ()

    @property
    def runs(self) -> tuple:
        """What each task set runs under, one row each: the schedulers, or with a ``locking``
        axis every scheduler under every protocol, ``SCHEDULER@PROTOCOL``
        (``rtsched_sweep::LOCKING_SEP``: the row's key holds it, the table splits it into the
        ``scheduler`` and ``locking`` columns)."""
        if not self.locking:
            return self.schedulers
        from .._core import LOCKING_SEP

        return tuple(f"{s}{LOCKING_SEP}{p}" for s in self.schedulers for p in self.locking)

    @property
    def size(self) -> int:
        """Rows the sweep produces: task sets × schedulers (× protocols)."""
        return len(self.generators) * len(self.points) * len(self.replications) * len(self.runs)


def parse_spec(d: dict, source: str = "<spec>") -> Spec:
    """Validate a spec given as a dict. Raises :class:`InputError` naming the field."""
    from .schema import validate

    if not isinstance(d, dict):
        raise InputError(f"{source}: a sweep spec is a mapping (name, generator, utilisation, schedulers, seeds, duration)")
    m = validate(d, source)
    u = m.utilisation
    reps = tuple(m.seeds) if isinstance(m.seeds, list) else tuple(range(1, m.seeds + 1))
    name = m.name or (Path(source).stem if source != "<spec>" else "sweep")
    run, topology = _options(m, source)
    spec = Spec(name, m.seed, m.generator_list(), u.points, u.per_cpu, tuple(m.schedulers), reps, m.duration, m.on_miss,
                m.output, m.retries, source, run, topology, tuple(m.locking or ()))
    _probe(spec)
    return spec


def _canon(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def _options(m, source: str):
    """The spec's ``run:`` and ``topology:`` as canonical JSON (None when absent or empty)."""
    run = None
    if m.run is not None:
        d = {k: v for k, v in m.run.model_dump().items() if v is not None}
        if "overheads" in d:
            d["overheads"] = _absolute_profile(d["overheads"], source)
        run = _canon(d) if d else None
    return run, (None if m.topology is None else _canon(m.topology))


def _absolute_profile(overheads, source: str):
    """``run.overheads`` with its profile path made absolute (relative to the spec file, or
    to the working directory for a spec given as a dict), so any worker can read it."""
    base = os.path.dirname(os.path.abspath(source)) if not source.startswith("<") else os.getcwd()
    if isinstance(overheads, str):
        return os.path.join(base, overheads)
    if isinstance(overheads, dict) and isinstance(overheads.get("profile"), str):
        return dict(overheads, profile=os.path.join(base, overheads["profile"]))
    return overheads


#: The source name the options are read under (stripped from their errors).
_OPTIONS_SOURCE = "<sweep options>"


def with_options(ts, run: str | None, topology: str | None):
    """``ts`` with the sweep's run options and topology applied (as a task file reads them)."""
    if run is None and topology is None:
        return ts
    return ts.with_options(run=run, topology=topology, source=_OPTIONS_SOURCE)


def _options_field(msg: str) -> tuple[str, str]:
    """A task-file reader's error about the options as (spec field, message): ``run.execution:
    field 'ratio': …`` is about ``run.execution.ratio``, ``platform: field 'topology.caches[0].size'``
    about ``topology.caches[0].size``. An error from an overhead profile names its file: it is
    about ``run.overheads``."""
    prefix = _OPTIONS_SOURCE + ": "
    if not msg.startswith(prefix):
        return "run.overheads", msg
    m = re.match(r"(?:(?P<ctx>[^:']+): )?(?:field '(?P<field>[^']*)': )?(?P<msg>.*)\Z", msg[len(prefix):], re.S)
    path = ".".join(x for x in (m["ctx"], m["field"]) if x)
    path = path.removeprefix("platform.") if path != "platform" else "topology"
    return path or "run", m["msg"]


#: The most values a spec may hold once its YAML aliases are expanded: a spec is a few dozen;
#: nested aliases ("a billion laughs") expand a few hundred bytes into gigabytes.
MAX_SPEC_NODES = 100_000
#: YAML 1.2's floats (PyYAML reads YAML 1.1, where `1e-1` and `1E3` are strings, not numbers).
_FLOAT_12 = re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)$")


def strict_yaml(text: str, source: str):
    """Read a spec's YAML as the task-file reader reads task files: no explicit tags, aliases
    only while the expanded document stays under MAX_SPEC_NODES values (and never one that
    contains itself), YAML 1.2 numbers (`1e-1` is 0.1). Raises InputError naming ``source``."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    # A copy of the resolvers: PyYAML's add_implicit_resolver would append to SafeLoader's lists.
    Loader.yaml_implicit_resolvers = {k: list(v) for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12, list("-+0123456789."))
    loader = Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_nodes(node, source)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _check_nodes(root, source):
    """Refuse explicit tags, a recursive alias, and a document that expands past MAX_SPEC_NODES
    (each node's expanded size counted once, so this takes time in the nodes written, not in
    their expansion)."""
    import yaml

    def children(node):
        if isinstance(node, yaml.SequenceNode):
            return node.value
        return [x for kv in node.value for x in kv] if isinstance(node, yaml.MappingNode) else []

    size, state, stack = {}, {}, [(root, False)]
    while stack:
        node, children_done = stack.pop()
        k = id(node)
        if children_done:
            size[k] = min(1 + sum(size[id(c)] for c in children(node)), MAX_SPEC_NODES + 1)
            state[k] = "done"
            continue
        if state.get(k) == "done":
            continue
        if state.get(k) == "open":
            raise InputError(f"{source}: a YAML alias refers to a value that contains it (a recursive structure)")
        if not node.tag.startswith("tag:yaml.org,2002:"):  # a tag of YAML's own is what an untagged value gets
            raise InputError(f"{source}: line {node.start_mark.line + 1}: the YAML tag {node.tag!r} is not accepted in a spec")
        state[k] = "open"
        stack.append((node, True))
        stack.extend((c, False) for c in children(node))
    if size[id(root)] > MAX_SPEC_NODES:
        raise InputError(f"{source}: its YAML aliases expand it past {MAX_SPEC_NODES:,} values (a spec holds a few "
                         "dozen): refusing to expand it")


#: The largest sweep spec read (a spec is a few hundred bytes; a huge file or a device named
#: by mistake is refused, not read).
MAX_SPEC_BYTES = 1 << 20


def load_spec(path) -> Spec:
    """Read and validate a sweep spec file (YAML or JSON)."""
    import yaml

    from .._io import read_input_bytes

    path = os.fspath(path)
    data = read_input_bytes(path, MAX_SPEC_BYTES, "a sweep spec")
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark, if any, is not text
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})") from None
    try:
        d = strict_yaml(text, path)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise InputError(f"{path}: not valid YAML{where}: {getattr(e, 'problem', e)}") from None
    spec = parse_spec(d, source=path)
    if spec.output and not os.path.isabs(spec.output):
        spec = _replace(spec, output=os.path.join(os.path.dirname(os.path.abspath(path)), spec.output))
    return spec


def _replace(spec, **kw):
    from dataclasses import replace

    return replace(spec, **kw)


def _probe(spec: Spec):
    """Fail early, naming the field, on parameters or schedulers that can never work."""
    import yaml

    from .. import _core
    from ..analysis import generate_from
    from ..policies import info, with_heuristic
    from .schema import TEST_PREFIX, _err

    cpus = 1
    placed = []  # generated sets: a partitioned scheduler may read their `cpu` fields (chronos2011)
    for i, g in enumerate(spec.generators):
        f = "generator" if len(spec.generators) == 1 else f"generators[{i}]"
        for p in (spec.points[0], spec.points[-1]):
            try:
                gen = generate_from(g.name, 0, _gen_params(spec, g, p))
            except InputError as e:
                raise _err(spec.source, f"{f}.params", f"at point {p:g}: {e}") from None
            cpus = max(cpus, gen.taskset.cpus)
            placed.append(gen.taskset)
            if p == spec.points[0]:
                try:
                    with_options(gen.taskset, spec.run, spec.topology)
                except InputError as e:
                    where, msg = _options_field(str(e))
                    if where.startswith("topology") and len(spec.generators) > 1:
                        msg += f" (with the {gen.taskset.cpus} CPUs of {f})"
                    raise _err(spec.source, where, msg) from None
    # One light task on as many CPUs as the generators give.
    probe = {"platform": {"cpus": cpus}, "tasks": [{"name": "probe", "period": 100, "wcet": 1}]}
    tiny = _core.parse_taskset(yaml.safe_dump(probe), "yaml", "<probe>")
    for s in spec.schedulers:
        if s.startswith(TEST_PREFIX):  # a test: its name was checked with the spec; nothing to build
            continue
        # Built, not run: a run of PAWS on 65,536 CPUs took 10 s even for one job.
        try:
            tiny.with_run(duration_ns=1).estimated_work(s)
        except InputError as e:
            msg = str(e).replace("<probe>: task 'probe': ", "")
            if "field 'cpu'" in msg and _runs_on_all(s, placed):
                continue
            if "field 'cpu'" in msg:
                name = _core.parse_scheduler(s)[0]
                hint = with_heuristic(name, "ffd") if info(name)["partition"] else f"{name}:ffd"
                msg += f" (generated task sets have no CPUs: use a partitioner, e.g. '{hint}')"
            raise _err(spec.source, "schedulers", f"{s!r}: {msg}") from None


def _runs_on_all(scheduler: str, tasksets) -> bool:
    """Whether ``scheduler`` accepts every generated set (whose generators set `cpu` fields)."""
    try:
        for ts in tasksets:
            ts.with_run(duration_ns=1).estimated_work(scheduler)
    except InputError:
        return False
    return True


def _gen_params(spec: Spec, g: Generator, point: float) -> dict:
    params = g.params_dict
    v = point * float(params["m"]) if spec.per_cpu else point
    params[g.param] = str(int(v)) if float(v).is_integer() and g.param in ("window", "n", "m") else repr(float(v))
    return params
