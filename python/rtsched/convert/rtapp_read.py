"""rt-app files → rtsched task sets (docs/workloads.md "rt-app → rtsched" has the tables).

rt-app (scheduler-tools/rt-app, its doc/tutorial.txt; Debian ships 1.0) describes a workload
as ``global`` options and ``tasks``, each a thread running a loop of events, with its policy
(``policy``, ``priority``, ``dl-*``), affinity (``cpus``), copies (``instance``) and phases
(``phases``, each repeated ``loop`` times). Older files (rt-app 0.x, still run by 1.0; the
``merge/thread*.json`` of its examples) give a thread as ``exec`` per ``period`` with mutexes
held in ``lock_order`` for each ``resources`` entry's ``duration`` (rt-app 0.x's ``run``:
each entry is locked, busy-waited and unlocked in turn, then the rest of ``exec`` runs).
This module reads the thread-level keys; the events are mapped in rtapp_events.py, the text in
rtapp_dialect.py. Every approximation is told to ``warn``; what has no rtsched meaning is
refused naming the file, line, task, phase and event.
"""

from __future__ import annotations

import json
import sys

from .._core import InputError
from .rtapp_dialect import Obj
from .rtapp_events import (
    MAX_EVENTS,
    MAX_PIECES,
    RELEASES,
    Ev,
    Linker,
    Piece,
    at,
    chains,
    cond_name,
    cut,
    event_kind,
    periods,
    releases,
    segments,
    smallest_unit,
    timer_job,
    whole,
)

#: Thread-object keys that are not events.
THREAD_KEYS = {"instance", "policy", "priority", "dl-runtime", "dl-period", "dl-deadline", "cpus", "delay", "phases",
               "loop", "taskgroup", "util_min", "util_max", "nice"}
#: Keys of rt-app 0.x's thread form (``exec`` per ``period``).
LEGACY_KEYS = {"exec", "period", "deadline", "lock_order", "resources", "cpus", "policy", "priority", "delay"}
#: ``global`` keys rt-app reads that have no timing meaning for the task set.
GLOBAL_IGNORED = {"calibration", "lock_pages", "logdir", "log_basename", "log_size", "ftrace", "gnuplot", "io_device",
                  "mem_buffer_size", "cumulative_slack", "log_basedir", "logstats", "pi_enabled", "default_policy",
                  "duration"}
POLICIES = {"SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_DEADLINE", "SCHED_IDLE", "SCHED_BATCH"}
#: rt-app's policies as rtsched's: SCHED_BATCH and SCHED_IDLE are the fair class's too.
POLICY_OF = {"SCHED_OTHER": "other", "SCHED_BATCH": "other", "SCHED_IDLE": "other", "SCHED_FIFO": "fifo",
             "SCHED_RR": "rr", "SCHED_DEADLINE": "deadline"}
#: Upper bound on the tasks an rt-app file makes (``instance`` multiplies them).
MAX_TASKS = 100_000


def is_rtapp(doc) -> bool:
    """An rt-app file: an object whose ``tasks`` is an object (rtsched's is a list), or a
    fragment of one (``global`` or ``resources`` alone, as rt-app's merge/ examples)."""
    if not isinstance(doc, Obj):
        return False
    if "tasks" in doc:
        return isinstance(doc.get("tasks"), Obj)
    return bool(doc.keys()) and set(doc.keys()) <= {"global", "resources"}


def _ns(us: int) -> str:
    return f"{us * 1000}ns"


class _Once:
    def __init__(self, warn):
        self.warn, self.seen = warn, set()

    def __call__(self, key, msg):
        if key not in self.seen:
            self.seen.add(key)
            self.warn(msg)


def unroll(name, th: Obj, src) -> list:
    """One iteration of the thread's loop: every phase's events repeated its ``loop`` times."""
    where = f"{src}:{th.line}: task '{name}'"
    phases = th.get("phases")
    if phases is None:
        bodies = [("", th, 1)]
    else:
        if not isinstance(phases, Obj) or not phases:
            raise InputError(f"{where}: field 'phases': expected a non-empty object of phases")
        bodies = []
        for pname, ph in phases:
            if not isinstance(ph, Obj):
                raise InputError(f"{src}:{phases.line_of(pname)}: task '{name}', phase '{pname}': expected an object")
            loop = ph.get("loop", 1)
            pwhere = f"{src}:{ph.line_of('loop')}: task '{name}', phase '{pname}'"
            if loop == -1:
                if pname != phases.keys()[-1]:
                    raise InputError(f"{pwhere}: field 'loop': -1 (forever) before the last phase, so the later "
                                     "phases never run; remove them or give a count")
                loop = 1  # the phase repeats forever: one iteration is the pattern
            bodies.append((pname, ph, whole(loop, f"{pwhere}: field 'loop'", 1, unit="iterations")))
    out = []
    for pname, body, loop in bodies:
        evs = []
        for (key, val), line in zip(body, body.lines):
            kind = event_kind(key)
            if kind is None:
                if key not in THREAD_KEYS:
                    raise InputError(f"{src}:{line}: task '{name}'{f', phase {pname!r}' if pname else ''}: "
                                     f"field '{key}': not an rt-app thread key or event")
                continue
            evs.append(Ev(kind, key, val, pname, line))
        if len(out) + len(evs) * loop > MAX_EVENTS:
            raise InputError(f"{where}: more than {MAX_EVENTS} events once phases are repeated by their 'loop'")
        out.extend(evs * loop)
    return out


def _phase_objs(th) -> list:
    """The thread's phases that are objects (unroll refuses the others, naming them)."""
    phases = th.get("phases")
    return [(n, ph) for n, ph in phases if isinstance(ph, Obj)] if isinstance(phases, Obj) else []


def _cpu(where, cpus, m, cpus_given, warn):
    """The CPU of a thread's affinity (None: every CPU) and the platform, widened when the file
    names a CPU beyond this machine's and ``--cpus`` was not given."""
    if cpus is None:
        return None, m
    if not isinstance(cpus, list) or not cpus:
        raise InputError(f"{where}: field 'cpus': expected a non-empty list of CPU numbers")
    cs = sorted({whole(c, f"{where}: field 'cpus'", unit="CPU numbers") for c in cpus})
    if cs[-1] >= m:
        if cpus_given:
            raise InputError(f"{where}: field 'cpus': CPU {cs[-1]} on a platform of {m} CPUs (give --cpus)")
        warn(f"{where}: field 'cpus': CPU {cs[-1]}: the platform is taken as {cs[-1] + 1} CPUs (give --cpus)")
        m = cs[-1] + 1
    if len(cs) == 1:
        return cs[0], m
    if cs == list(range(m)):
        return None, m
    raise InputError(f"{where}: field 'cpus': affinity to CPUs {cs}, a subset of the {m}; an rtsched task runs on one "
                     "CPU ('cpu', partitioned schedulers) or on all (global): choose one")


def _thread_cpus(name, th, src, m, cpus_given, warn):
    """The thread's affinity; phases that change it are taken as their union, **warned**."""
    sets = []
    if th.get("cpus") is not None:
        sets.append(th.get("cpus"))
    for _, ph in _phase_objs(th):
        if "cpus" in ph:
            sets.append(ph.get("cpus"))
    where = f"{src}:{th.line_of('cpus')}: task '{name}'"
    if len(sets) > 1:
        warn(f"{where}: an affinity that changes between phases ({', '.join(json.dumps(s) for s in sets)}): taken "
             "as every CPU (an rtsched task keeps one affinity: one CPU or all)")
        for s_ in sets:
            m = _cpu(where, s_[-1:] if isinstance(s_, list) else s_, m, cpus_given, warn)[1]  # the platform holds them
        return None, m
    return _cpu(where, sets[0] if sets else None, m, cpus_given, warn)


def _policy(name, th, src, default_policy, warn) -> dict:
    """The task fields of the thread's policy: ``policy``, ``priority``, ``nice``, ``runtime``,
    and the thread's ``dl-deadline``/``dl-period`` (µs) for the caller."""
    where = f"{src}:{th.line}: task '{name}'"
    own = th.get("policy")
    policy = default_policy if own is None else own
    if not isinstance(policy, str) or policy not in POLICIES:
        raise InputError(f"{src}:{th.line_of('policy')}: task '{name}': field 'policy': unknown policy {json.dumps(policy)}")
    if own in ("SCHED_BATCH", "SCHED_IDLE"):
        warn(f"{where}: policy {own}: taken as other (SCHED_OTHER's fair class)")
    out = {"_policy": policy}
    if own is not None:
        out["policy"] = POLICY_OF[policy]
    if policy in ("SCHED_FIFO", "SCHED_RR"):
        prio = whole(th.get("priority", 10), f"{src}:{th.line_of('priority')}: task '{name}': field 'priority'", 1,
                     unit="priority levels")
        if prio > 99:
            raise InputError(f"{where}: field 'priority': {prio}, SCHED_FIFO/SCHED_RR priorities are 1 to 99")
        out["priority"] = prio
    elif POLICY_OF[policy] == "other":
        # rt-app's priority of a SCHED_OTHER thread is its nice value (doc/tutorial.txt)
        key = "nice" if "nice" in th else "priority"
        nice = th.get(key, 0)
        if isinstance(nice, bool) or not isinstance(nice, int) or not -20 <= nice <= 19:
            raise InputError(f"{src}:{th.line_of(key)}: task '{name}': field '{key}': a SCHED_OTHER thread's nice "
                             f"value, -20 to 19, got {json.dumps(nice)}")
        if nice:
            out["nice"] = nice
            out["policy"] = "other"
        if "dl-runtime" in th:
            warn(f"{where}: dl-runtime on a SCHED_OTHER thread (the custom slice of EEVDF): not modelled")
    dl = {k: whole(th.get(k), f"{src}:{th.line_of(k)}: task '{name}': field '{k}'", 1)
          for k in ("dl-runtime", "dl-period", "dl-deadline") if th.get(k) is not None}
    if policy == "SCHED_DEADLINE":
        if "dl-runtime" not in dl:
            raise InputError(f"{where}: policy SCHED_DEADLINE without 'dl-runtime'")
        out["runtime"] = _ns(dl["dl-runtime"])
    out["_dl"] = dl
    for key in ("taskgroup", "util_min", "util_max"):
        if key in th or any(key in ph for _, ph in _phase_objs(th)):
            warn(f"{where}: '{key}' (a cgroup's CPU controller, uclamp): not modelled, the task runs as without it")
    return out


def _pieces(name, th, events, src, delay, pol, warn, once) -> list | dict:
    """The thread's pieces, the first released as rt-app starts it (its timer, its run and
    sleep, or another thread); a dict for a thread that never waits (a hog)."""
    where = f"{src}:{th.line}: task '{name}'"
    timers = [e for e in events if e.kind == "timer"]
    blocks = [e for e in events if e.kind in RELEASES and e.kind != "timer"]
    if timers and blocks:
        b = blocks[0]
        raise InputError(f"{at(src, name, b)}: waits both for its timer and for other "
                         "threads in one loop; rtsched would need a task released by a timer and an event together")
    if timers:
        per = {}
        for e in timers:
            ewhere = f"{src}:{e.line}: task '{name}', event '{e.key}'"
            if not isinstance(e.value, Obj):
                raise InputError(f"{ewhere}: expected an object {{\"ref\": NAME, \"period\": MICROSECONDS}}")
            mode = e.value.get("mode", "relative")
            if mode not in ("relative", "absolute"):
                raise InputError(f"{ewhere}: field 'mode': 'relative' or 'absolute', got {json.dumps(mode)}")
            per.setdefault(whole(e.value.get("period"), f"{ewhere}: field 'period'", 1), e)
        if len(per) > 1:
            (p1, e1), (p2, e2) = list(per.items())[:2]
            raise InputError(f"{where}: timers of different periods ('{e1.key}': {p1} us, '{e2.key}': {p2} us); "
                             "an rtsched task has one period")
        period = next(iter(per))
        job, mult = timer_job(name, cut(name, events, src, once, None), src, warn)
        job[0].release = ("period", period * mult, delay)
        return job
    if blocks:
        if delay:
            warn(f"{where}: 'delay' {delay} us on a thread released by other threads: not modelled (a triggered "
                 "task has no offset)")
        return cut(name, smallest_unit(events), src, once, None)
    # run and sleep only: the loop is cut after its last sleep
    sleeps = [i for i, e in enumerate(events) if e.kind == "sleep" and whole(e.value, f"{where}: event '{e.key}'")]
    if not sleeps:
        return _hog(name, th, events, src, pol, warn)
    last = sleeps[-1]
    unit = smallest_unit(events[last + 1:] + events[:last + 1])
    probe = cut(name, unit, src, lambda *a: None, ("period", 1, 0))
    period = sum(x[1] for p in probe for x in p.items if x[0] in ("run", "sleep"))
    warn(f"{where}: run and sleep without a timer: its period is taken as its runs and sleeps, {period} us "
         "(rt-app's real period grows when the thread is delayed)")
    return cut(name, unit[:-1], src, once, ("period", period, delay))  # the last sleep is the gap


def _hog(name, th, events, src, pol, warn) -> dict:
    where = f"{src}:{th.line}: task '{name}'"
    if any(e.kind in ("resume", "signal", "broad", "fork") for e in events):
        raise InputError(f"{where}: wakes other threads but never waits itself: rtsched would need a task that runs "
                         "without end yet releases others")
    if pol["_policy"] == "SCHED_DEADLINE":
        dl = pol["_dl"]
        period = dl.get("dl-period", dl["dl-runtime"])
        warn(f"{where}: never sleeps: under SCHED_DEADLINE it runs its whole reservation, {dl['dl-runtime']} us "
             f"every {period} us, taken as its WCET and period")
        return {"period": _ns(period), "wcet": _ns(dl["dl-runtime"])}
    if POLICY_OF[pol["_policy"]] == "other":
        warn(f"{where}: never sleeps: a best-effort hog (class: fair, behaviour: hog)")
        return {"class": "fair", "behaviour": "hog"}
    raise InputError(f"{where}: a {pol['_policy']} thread that never sleeps or waits: rtsched would need a real-time "
                     "task whose one job never ends")


def _legacy(name, th, src, pol, warn) -> dict:
    """rt-app 0.x's thread: ``exec`` of work per ``period``, each ``lock_order`` entry held
    for its ``resources`` duration in turn (its ``access`` mutexes around it), then the rest."""
    where = f"{src}:{th.line}: task '{name}'"
    for key in th.keys():
        if key not in LEGACY_KEYS:
            raise InputError(f"{src}:{th.line_of(key)}: task '{name}': field '{key}': not a key of rt-app's "
                             "exec/period thread form")
    ex = whole(th.get("exec"), f"{src}:{th.line_of('exec')}: task '{name}': field 'exec'", 1)
    period = whole(th.get("period", ex), f"{src}:{th.line_of('period')}: task '{name}': field 'period'", 1)
    task = {"period": _ns(period), "wcet": _ns(ex)}
    if th.get("deadline") is not None:
        d = whole(th.get("deadline"), f"{src}:{th.line_of('deadline')}: task '{name}': field 'deadline'", 1)
        if d != period:
            task["deadline"] = _ns(d)
    res = th.get("resources") or Obj()
    order = th.get("lock_order") or []
    if not isinstance(order, list) or not isinstance(res, Obj):
        raise InputError(f"{where}: 'lock_order' is a list of names and 'resources' an object")
    pos, sections = 0, []
    for r in order:
        spec = res.get(r)
        if not isinstance(spec, Obj):
            raise InputError(f"{src}:{th.line_of('lock_order')}: task '{name}': field 'lock_order': '{r}' has no "
                             "entry in 'resources'")
        dur = whole(spec.get("duration", 0), f"{src}:{res.line_of(r)}: task '{name}': resource '{r}': field 'duration'")
        if dur == 0:
            warn(f"{src}:{res.line_of(r)}: task '{name}': resource '{r}' held for no time (in rt-app 0.x a wait, "
                 "signal or broadcast whose type the separate resources file gives): not modelled")
            continue
        access = spec.get("access") or []
        held = [a for a in access if isinstance(a, str)] + [r]
        sections += [{"resource": m, "start": _ns(pos), "length": _ns(dur)} for m in held]
        pos += dur
    if pos > ex:
        raise InputError(f"{where}: resources held for {pos} us, more than 'exec' {ex} us")
    if sections:
        task["sections"] = sections
    return task


def _globals(doc, src, warn):
    glob = doc.get("global", Obj())
    if not isinstance(glob, Obj):
        raise InputError(f"{src}:{doc.line_of('global')}: field 'global': expected an object")
    default_policy = glob.get("default_policy", "SCHED_OTHER")
    if not isinstance(default_policy, str) or default_policy not in POLICIES:
        raise InputError(f"{src}:{glob.line_of('default_policy')}: field 'global.default_policy': unknown policy "
                         f"{json.dumps(default_policy)}")
    if default_policy in ("SCHED_BATCH", "SCHED_IDLE"):
        warn(f"{src}: global.default_policy {default_policy}: taken as other (SCHED_OTHER's fair class)")
    for key in glob.keys():
        if key not in GLOBAL_IGNORED:
            warn(f"{src}:{glob.line_of(key)}: field 'global.{key}': not a key rt-app reads; ignored, as rt-app does")
    if glob.get("pi_enabled"):
        warn(f"{src}:{glob.line_of('pi_enabled')}: global.pi_enabled: the mutexes are written without a protocol, "
             "since the 'linux' scheduler does not model priority inheritance; add 'run: {locking: pip}' to "
             "simulate it under gfp, pfp, gedf or pedf (docs/locking.md), or run with a ':pi' backend "
             "(rtsched run -b kernel:fifo:file:pi)")
    return glob, default_policy


class _Reading:
    """What the threads read so far: the linker of their pieces, each thread's task fields,
    the tasks that are no pieces (hogs, legacy threads), the forks, the platform."""

    def __init__(self, src, cpus, cpus_given, warn, default_policy):
        self.src, self.m, self.cpus_given, self.warn = src, cpus, cpus_given, warn
        self.default_policy, self.once = default_policy, _Once(warn)
        self.lk, self.attrs, self.fixed, self.order, self.forks = Linker(src, warn), {}, [], [], []

    def thread(self, name, th, line, names):
        src, warn = self.src, self.warn
        if not isinstance(th, Obj):
            raise InputError(f"{src}:{line}: task '{name}': expected an object")
        pol = _policy(name, th, src, self.default_policy, warn)
        cpu, self.m = _thread_cpus(name, th, src, self.m, self.cpus_given, warn)
        delay = whole(th.get("delay", 0), f"{src}:{th.line_of('delay')}: task '{name}': field 'delay'")
        instances = whole(th.get("instance", 1), f"{src}:{th.line_of('instance')}: task '{name}': field 'instance'",
                          0, unit="threads")
        if len(self.attrs) + len(self.fixed) + instances > MAX_TASKS:
            raise InputError(f"{src}:{th.line}: task '{name}': field 'instance': more than {MAX_TASKS} tasks in all")
        loop = th.get("loop", -1)
        if loop != -1:
            whole(loop, f"{src}:{th.line_of('loop')}: task '{name}': field 'loop'", 1, unit="iterations")
            warn(f"{src}:{th.line_of('loop')}: task '{name}': 'loop': {loop}: rt-app stops the thread after that many "
                 "iterations; the rtsched task runs for the whole run")
        own = {k: v for k, v in pol.items() if not k.startswith("_")}
        if cpu is not None:
            own["cpu"] = cpu
        legacy = "exec" in th
        events = None if legacy else unroll(name, th, src)
        for e in (events or []):
            if e.kind == "fork":
                target = cond_name(e, at(src, name, e))
                if target not in names:
                    raise InputError(f"{src}:{e.line}: task '{name}', event '{e.key}': forks '{target}', no such task")
                self.forks.append((name, target, e))
        for k in range(instances):
            iname = name if instances == 1 else f"{name}-{k}"
            if legacy:
                self.fixed.append({"name": iname, **_legacy(name, th, src, pol, warn), **own})
                continue
            ps = _pieces(iname, th, events, src, delay, pol, warn, self.once)
            if isinstance(ps, dict):
                self.fixed.append({"name": iname, **ps, **own})
                continue
            self.lk.add(iname, ps)
            self.order.extend(ps)
            self.attrs[iname] = (own, pol, th)


def from_rtapp(doc: Obj, src: str, cpus: int, warn, cpus_given: bool = True) -> dict:
    """The rtsched task-set document (a dict, durations as ``"NNNns"``) an rt-app file
    describes. ``cpus``: the platform's CPUs (widened to the CPUs the file names when
    ``cpus_given`` is false). ``warn(msg)`` is told of each approximation."""
    if "tasks" not in doc:
        raise InputError(f"{src}: a fragment with no tasks (only {', '.join(doc.keys())}): rt-app's doc/merge.py "
                         "joins such pieces into one file; convert the joined file")
    glob, default_policy = _globals(doc, src, warn)
    rd = _Reading(src, cpus, cpus_given, warn, default_policy)
    tasks = doc.get("tasks")
    for (name, th), line in zip(tasks, tasks.lines):
        rd.thread(name, th, line, set(tasks.keys()))
    forked = {target for _, target, _ in rd.forks}
    for (name, th), line in zip(tasks, tasks.lines):
        if th.get("instance") == 0 and name not in forked:
            warn(f"{src}:{line}: task '{name}': instance 0 and no thread forks it: rt-app never runs it, no task")
    for forker, target, e in rd.forks:
        _fork(rd.lk, forker, target, e, tasks.get(target), src, warn, rd.once, rd.attrs, rd.order, default_policy)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * MAX_PIECES + 1000))  # trigger paths are walked recursively
    try:
        rel = releases(rd.lk, rd.order)
        eff = periods(rel, rd.order)
        cs = chains(rel, rd.order)
    finally:
        sys.setrecursionlimit(limit)
    out = list(rd.fixed)
    for p in rd.order:
        if p.name in rel:
            own, pol, _ = rd.attrs[p.thread]
            out.append(_task(p, rel[p.name], eff[p.name], own, pol, src, warn, rd.once))
    ts = {"name": src.rsplit("/", 1)[-1], "description": "converted from rt-app", "platform": {"cpus": rd.m},
          "tasks": out, "run": {"default_policy": POLICY_OF[default_policy]}}
    if glob.get("pi_enabled"):
        ts["description"] += "; pi_enabled: mutexes with priority inheritance (run with a :pi backend, e.g. kernel:fifo:file:pi)"
    duration = glob.get("duration", -1)
    if duration not in (-1, None):
        ts["run"]["duration"] = f"{whole(duration, f'{src}: field global.duration', 1, unit='seconds')}s"
    if cs:
        ts["chains"] = cs
    seen = set()
    for t in out:
        if t["name"] in seen:
            raise InputError(f"{src}: task '{t['name']}': two tasks of that name once instances and pieces are numbered")
        seen.add(t["name"])
    return ts


def _fork(lk, forker, target, e, th, src, warn, once, attrs, order, default_policy):
    """A thread forked by ``e``: one more instance of ``target``, released by the piece that
    forks it (rt-app's fork starts a new thread of that task, rt-app/src/rt-app.c ``create_thread``)."""
    sites = [p for p in list(order) if any(w is e for w in p.wakes)]
    for site in sites:
        iname = f"{target}@{site.thread if len({q.thread for q in sites}) == len(sites) else site.name}"
        pol = _policy(target, th, src, default_policy, warn)
        own = dict(attrs.get(target, attrs.get(f"{target}-0", ({}, None, None)))[0]) or \
            {k: v for k, v in pol.items() if not k.startswith("_")}
        ps = _pieces(iname, th, unroll(target, th, src), src, 0, pol, warn, once)
        if isinstance(ps, dict):
            raise InputError(f"{src}:{e.line}: task '{forker}', event '{e.key}': forks '{target}', which never waits: "
                             "rtsched would need a task released once that runs without end")
        warn(f"{src}:{e.line}: task '{forker}', event '{e.key}': the thread it forks is the task '{iname}', released "
             "at the fork, once per fork (its own loop after that is not modelled)")
        ps[0].release = ("trigger", [site])
        lk.add(iname, ps)
        order.extend(ps)
        attrs[iname] = (own, pol, th)


def _task(p: Piece, rel, eff_period, own, pol, src, warn, once) -> dict:
    segs, work, sections = segments(p.name, p, src, once)
    task = {"name": p.name}
    dl = pol["_dl"]
    if rel[0] == "period":
        task["period"] = _ns(rel[1])
        if rel[2]:
            task["offset"] = _ns(rel[2])
        d = dl.get("dl-deadline", dl.get("dl-period") if pol["_policy"] == "SCHED_DEADLINE" else None)
        if d is not None and d != rel[1]:
            task["deadline"] = _ns(d)
        if pol["_policy"] == "SCHED_DEADLINE" and dl.get("dl-period", rel[1]) != rel[1]:
            warn(f"{src}: task '{p.name}': dl-period {dl['dl-period']} us differs from its period {rel[1]} us: "
                 "the period is its release's")
    else:
        names = [m.name for m in rel[1]]
        if not names:
            raise InputError(f"{src}:{p.line}: task '{p.name}': released by nothing that has work")
        task["trigger"] = names[0] if len(names) == 1 else {"all": names}
        task["deadline"] = _ns(dl.get("dl-deadline", eff_period))
    if segs:
        task["segments"] = [_ns(s) if isinstance(s, int) else s if isinstance(s, str) else {"suspend": _ns(s["suspend"])}
                            for s in segs]
    else:
        task["wcet"] = _ns(work)
    if sections:
        task["sections"] = [{"resource": r, "start": _ns(s), "length": _ns(n)} for r, s, n in sections]
    task.update(own)
    if "runtime" in task and int(task["runtime"][:-2]) < work * 1000:
        warn(f"{src}: task '{p.name}': dl-runtime {task['runtime']} is less than its work {work} us: the task's WCET is "
             "the work, its runtime the reservation (the kernel, and 'simulate -s linux', throttle it)")
    return task
