"""Task sets from and to other tools' formats: rt-app JSON (in and out), SimSo XML (in).

:func:`read` tells the format from the content and returns a validated :class:`TaskSet`;
:func:`rtsched_text` and :func:`rtapp_text` write one. ``rtsched convert`` is the command.
"""

from __future__ import annotations

import json
import os
import re

from .._core import InputError, TaskSet, parse_taskset, to_yaml
from . import rtapp, rtapp_export, simso

#: The largest input read (an rt-app or SimSo file is a few kilobytes).
MAX_INPUT_BYTES = 32 << 20  # as the Rust reader (MAX_TASKSET_BYTES)


#: Whitespace and C comments before a JSON document's ``{`` (rt-app files may open with one).
_LEADING = re.compile(r"\A(?:\s|/\*.*?\*/|//[^\n]*)*", re.S)
#: An rt-app file's ``"tasks": {`` (rtsched's ``tasks`` is a list), or a merge/ fragment's
#: ``"global"``/``"resources"`` object: how a file rt-app's parser would refuse is still told
#: as rt-app's, with the line and column of its syntax error.
_RTAPP_HINT = re.compile(r'"(tasks|global|resources)"\s*:\s*\{')


def detect(text: str, source: str = "<text>"):
    """("simso" | "rtapp" | "rtsched", parsed rt-app document or None). A text that looks like
    rt-app's (``_RTAPP_HINT``) but does not parse raises InputError naming line and column."""
    if simso.is_simso(text):
        return "simso", None
    if _LEADING.sub("", text).startswith("{"):
        try:
            doc = rtapp.loads(text)
        except rtapp.DialectError as e:
            if _RTAPP_HINT.search(text):
                raise InputError(f"{source}:{e.line}:{e.col}: not rt-app JSON (rt-app's parser refuses it too): "
                                 f"{e.msg}") from None
            doc = None
        except RecursionError:
            doc = None
        if doc is not None and rtapp.is_rtapp(doc):
            return "rtapp", doc
    return "rtsched", None


def read(path, cpus: int | None = None, warn=lambda msg: None) -> tuple[TaskSet, str, str | None]:
    """The task set in ``path`` (rtsched YAML/JSON, rt-app JSON or SimSo XML), the format
    read, and a description of where it came from (None for an rtsched file). ``cpus``: the
    platform of an rt-app file (default: this machine's CPUs, more if the file names more)."""
    from .._io import read_input_bytes

    p = os.fspath(path)
    raw = read_input_bytes(p, MAX_INPUT_BYTES, "a task-set, rt-app or SimSo file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{p}: not UTF-8 text (byte {e.start})") from None
    kind, doc = detect(text, p)
    if kind == "rtsched":
        return parse_taskset(text, "json" if p.endswith(".json") else "yaml", p), kind, None
    if kind == "simso":
        d = simso.from_simso(text, p, warn)
    else:
        m = cpus or os.cpu_count() or 1
        d = rtapp.from_rtapp(doc, p, m, warn, cpus_given=cpus is not None)
    return from_document(d, p), kind, d.get("description")


def from_document(doc: dict, source: str) -> TaskSet:
    """Validate a task-set document (a dict) exactly as a file is validated."""
    return parse_taskset(json.dumps(doc), "json", source)


def rtsched_text(ts: TaskSet, fmt: str, name: str | None = None, description: str | None = None) -> str:
    """The task set as rtsched YAML (``fmt`` "yaml") or JSON ("json"), reading back exactly."""
    body = to_yaml(ts)
    if fmt == "json":
        import yaml

        doc = {}
        if name:
            doc["name"] = name
        if description:
            doc["description"] = description
        doc.update(yaml.safe_load(body))
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    head = ""
    if name:
        head += f"name: {json.dumps(name, ensure_ascii=False)}\n"
    if description:
        head += f"description: {json.dumps(description, ensure_ascii=False)}\n"
    return head + body


def rtapp_text(ts: TaskSet, backend: str, warn=lambda msg: None, pi: bool = False, work: str = "run") -> str:
    return json.dumps(rtapp_export.to_rtapp(ts, backend, warn, pi=pi, work=work), indent=2) + "\n"
