"""Reading a task set from a file, a document (dict) or a list of tasks: the one entry point
(``rtsched.load_taskset``) that every API taking a task set goes through."""

from __future__ import annotations

import json
import math
import numbers
import os
from collections.abc import Mapping

from ._core import InputError, TaskSet, parse_taskset
from ._core import load_taskset as _load_taskset


def load_taskset(source, *, cpus: int | None = None) -> TaskSet:
    """Read and validate a task set (docs/taskset-format.md) from

    - a path (``str`` or path-like) to a YAML or JSON file;
    - a ``dict``: the task-set document itself, as the file would hold it
      (``{"platform": {"cpus": 2}, "tasks": [{"name": "a", "period": 10, "wcet": 2}]}``);
    - a ``list`` of task dicts: the document's ``tasks``, on ``cpus`` CPUs (default 1) with the
      default ``run`` section. ``cpus`` is only for a list: a file or a dict sets
      ``platform.cpus`` itself.

    A dict or list is checked exactly as a file is (unknown fields, units, limits). Raises
    :class:`InputError` naming the source (the file, ``<dict>`` or ``<list>``), the task and the
    field on bad input.
    """
    if isinstance(source, Mapping):
        if cpus is not None:
            raise InputError("<dict>: cpus= is only for a list of tasks; a task-set document sets platform.cpus")
        return _parse_document(source, "<dict>")
    if isinstance(source, (list, tuple)):
        return _parse_document({"platform": {"cpus": 1 if cpus is None else cpus}, "tasks": source}, "<list>")
    if isinstance(source, (str, bytes, os.PathLike)):
        path = os.fsdecode(source)
        if cpus is not None:
            raise InputError(f"{path}: cpus= is only for a list of tasks; a task-set file sets platform.cpus")
        return _load_taskset(path)
    raise InputError(f"load_taskset: expected a path, a dict (a task-set document) or a list (of tasks), got {type(source).__name__}")


def _parse_document(doc, source: str) -> TaskSet:
    """Validate a task-set document held in Python objects, through the file parser (as JSON)."""
    return parse_taskset(json.dumps(_plain(doc, source), allow_nan=False), "json", source)


def _plain(doc, source: str):
    """``doc`` as JSON types (numpy scalars and path-likes converted), or an :class:`InputError`
    naming the source, the task and the field of the first value JSON cannot hold."""

    def where(path):
        if len(path) >= 2 and path[0] == "tasks" and isinstance(path[1], int):
            task = doc["tasks"][path[1]] if isinstance(doc, Mapping) else None
            name = task.get("name") if isinstance(task, Mapping) else None
            head = f"task '{name}' (tasks[{path[1]}])" if isinstance(name, str) else f"tasks[{path[1]}]"
            rest = _dotted(path[2:])
            return f"{head}: field '{rest}'" if rest else head
        return f"field '{_dotted(path)}'" if path else "the document"

    def walk(x, path):
        if x is None or isinstance(x, (bool, str)):
            return x
        if isinstance(x, numbers.Integral):
            return int(x)
        if isinstance(x, numbers.Real):
            if not math.isfinite(x):
                raise InputError(f"{source}: {where(path)}: {x} is not a finite number")
            return float(x)
        if isinstance(x, Mapping):
            out = {}
            for k, v in x.items():
                if not isinstance(k, str):
                    raise InputError(f"{source}: {where(path)}: key {k!r} is not a string")
                out[k] = walk(v, path + [k])
            return out
        if isinstance(x, (list, tuple)):
            return [walk(v, path + [i]) for i, v in enumerate(x)]
        if isinstance(x, os.PathLike):
            return os.fspath(x)
        item = getattr(x, "item", None)  # a numpy scalar (np.bool_ is no numbers.Integral)
        if callable(item) and getattr(x, "shape", None) == ():
            return walk(item(), path)
        raise InputError(f"{source}: {where(path)}: a value of type {type(x).__name__} is not a number, string, list or mapping")

    return walk(doc, [])


def _dotted(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out
