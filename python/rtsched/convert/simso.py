"""SimSo configuration files in (SimSo's own loader: simso/configuration/parser.py).

A SimSo file is ``<simulation duration=CYCLES cycles_per_ms=N ...>`` with a ``<sched
class=...>``, ``<processors>`` (one ``<processor>`` per CPU) and ``<tasks>`` (one ``<task>``
per task: ``name``, ``id``, ``task_type`` Periodic/Sporadic/APeriodic, ``period``,
``activationDate``, ``deadline``, ``WCET`` in ms, ``abort_on_miss``, ...).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from decimal import Decimal, InvalidOperation

from .._core import InputError
from ..durations import in_unit


def is_simso(text: str) -> bool:
    head = text.lstrip()[:4096]
    return head.startswith("<") and "<simulation" in head


def _ms_ns(v, where) -> int:
    """A SimSo time (a decimal number of ms) as integer ns, exactly."""
    try:
        d = Decimal(v) * 1_000_000
    except (InvalidOperation, TypeError):
        raise InputError(f"{where}: expected a number of milliseconds, got {v!r}") from None
    if not d.is_finite() or d != d.to_integral_value() or d < 0:
        raise InputError(f"{where}: {v} ms is not a whole number of nanoseconds ≥ 0")
    return int(d)


def from_simso(text: str, src: str, warn) -> dict:
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise InputError(f"{src}: a SimSo file with a DOCTYPE or entities: refused (SimSo never writes one)")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise InputError(f"{src}: not well-formed XML: {e}") from None
    if root.tag != "simulation":
        raise InputError(f"{src}: the root element is <{root.tag}>, not SimSo's <simulation>")
    cpms = root.get("cycles_per_ms", "1000000")
    try:
        cycles_per_ms = int(cpms)
        duration_cycles = int(root.get("duration", "50000"))
    except ValueError:
        raise InputError(f"{src}: <simulation>: 'duration' and 'cycles_per_ms' must be integers") from None
    if cycles_per_ms <= 0 or duration_cycles <= 0:
        raise InputError(f"{src}: <simulation>: 'duration' and 'cycles_per_ms' must be > 0")
    procs = root.findall("processors/processor")
    if not procs:
        raise InputError(f"{src}: no <processors><processor .../></processors>")
    speeds = {p.get("speed", "1.0") for p in procs}
    if any(Decimal(s) != 1 for s in speeds):
        warn(f"{src}: processors of speed {sorted(speeds)}: rtsched's CPUs are identical and of speed 1; WCETs kept as written")
    sched = root.find("sched")
    clas = sched.get("class") if sched is not None else None
    tasks, aborts = [], set()
    for i, el in enumerate(root.findall("tasks/task")):
        name = el.get("name") or f"task{el.get('id', i)}"
        where = f"{src}: task '{name}'"
        kind = el.get("task_type") or ("APeriodic" if el.get("periodic") == "no" else "Periodic")
        if el.get("followed_by") not in (None, "", "None"):
            raise InputError(f"{where}: field 'followed_by': a task chain (each job activates the next task) has no rtsched meaning")
        for f in ("WCET", "deadline"):
            if el.get(f) is None:
                raise InputError(f"{where}: field '{f}': missing")
        t = {"name": name}
        if kind == "Periodic":
            if el.get("period") is None:
                raise InputError(f"{where}: field 'period': missing")
            t["period"] = f"{_ms_ns(el.get('period'), f'{where}: field period')}ns"
        elif kind == "Sporadic":
            dates = [_ms_ns(x, f"{where}: field 'list_activation_dates'") for x in (el.get("list_activation_dates") or "").split(",") if x.strip()]
            gaps = [b - a for a, b in zip(dates, dates[1:]) if b > a]
            period = _ms_ns(el.get("period"), f"{where}: field 'period'") if el.get("period") else 0
            if not gaps and not period:
                raise InputError(f"{where}: a sporadic task without a period or two activation dates has no minimum inter-arrival time")
            mia = min(gaps + ([period] if period else []))
            t["min_interarrival"] = f"{mia}ns"
            warn(f"{where}: sporadic with listed activation dates: an rtsched sporadic task of minimum inter-arrival "
                 f"{in_unit(mia)} ms (strictly periodic at that rate; the dates themselves are not replayed)")
        else:
            raise InputError(f"{where}: field 'task_type': {kind}: an aperiodic task has no period or minimum inter-arrival")
        t["wcet"] = f"{_ms_ns(el.get('WCET'), f'{where}: field WCET')}ns"
        t["deadline"] = f"{_ms_ns(el.get('deadline'), f'{where}: field deadline')}ns"
        offset = _ms_ns(el.get("activationDate", "0"), f"{where}: field 'activationDate'")
        if offset and kind == "Periodic":
            t["offset"] = f"{offset}ns"
        aborts.add(el.get("abort_on_miss", "no") in ("yes", "true"))
        tasks.append(t)
    if not tasks:
        raise InputError(f"{src}: no <tasks><task .../></tasks>")
    if len(aborts) > 1:
        warn(f"{src}: abort_on_miss differs between tasks; rtsched's on_miss is one for the set: abort")
    duration_ns = duration_cycles * 1_000_000 // cycles_per_ms
    if duration_cycles * 1_000_000 % cycles_per_ms:
        warn(f"{src}: duration {duration_cycles} cycles at {cycles_per_ms} cycles/ms is not a whole ns: rounded down")
    return {"name": src.rsplit("/", 1)[-1],
            "description": "converted from SimSo" + (f" (scheduler {clas})" if clas else ""),
            "platform": {"cpus": len(procs)},
            "run": {"duration": f"{duration_ns}ns", "on_miss": "abort" if True in aborts else "continue"},
            "tasks": tasks}
