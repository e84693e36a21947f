"""rt-app JSON in and out (docs/workloads.md "From and to rt-app" has the mapping table).

rt-app (scheduler-tools/rt-app; Debian ships 1.0) describes each thread as a loop of events:
``run``/``runtime`` (busy for N µs), ``sleep``, ``timer`` (wait for the next tick of a
periodic timer), ``lock``/``unlock`` (a pthread mutex), ... An rtsched task is one job per
period. Reading: the thread's events (all its phases, each repeated ``loop`` times) are cut
at each ``timer`` into jobs; the timer's period is the task's period, the work of the job
(sum of ``run``/``runtime``) its WCET, the mutexes held over parts of that work its critical
sections. What has no rtsched meaning is refused, naming the task and the event.

Writing is :mod:`rtsched.convert.rtapp_export`.
"""

from __future__ import annotations

import json

from .._core import InputError

#: Events rt-app knows (1.0 and upstream master), matched by prefix as rt-app does
#: (``run0``, ``lock_bus``...). Longer names first: ``runtime`` before ``run``.
EVENTS = ("lock", "unlock", "wait", "signal", "broad", "sync", "sleep", "runtime", "run", "timer", "suspend",
          "resume", "mem", "iorun", "yield", "barrier", "fork")
#: Events with no rtsched meaning, and why (the refusal message).
REFUSED = {
    "wait": "waits on a condition variable (another thread's signal), a dependency rtsched tasks do not have",
    "signal": "signals a condition variable (a dependency between threads)",
    "broad": "broadcasts a condition variable (a dependency between threads)",
    "sync": "signals and waits on a condition variable (a dependency between threads)",
    "suspend": "suspends until another thread resumes it (a dependency between threads)",
    "resume": "resumes another thread (a dependency between threads)",
    "mem": "writes memory (a load whose time depends on the machine, not a duration)",
    "iorun": "writes to an I/O device (a load whose time depends on the device, not a duration)",
    "yield": "yields the CPU (no rtsched meaning)",
    "barrier": "waits at a barrier for other threads (rtsched has no cross-task synchronisation; "
               "a fork-join task is one task with 'regions')",
    "fork": "forks a new thread (rtsched tasks are fixed)",
}
#: Thread-object keys that are not events.
THREAD_KEYS = {"instance", "policy", "priority", "dl-runtime", "dl-period", "dl-deadline", "cpus", "delay", "phases",
               "loop", "taskgroup", "util_min", "util_max", "nice"}
#: global keys with no timing meaning for the task set (kept by rt-app for its own run).
GLOBAL_IGNORED = {"calibration", "lock_pages", "logdir", "log_basename", "log_size", "ftrace", "gnuplot", "io_device",
                  "mem_buffer_size", "cumulative_slack", "log_basedir", "logstats", "pi_enabled", "default_policy",
                  "duration"}
POLICIES = {"SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_DEADLINE", "SCHED_IDLE", "SCHED_BATCH"}
#: rt-app's policies as rtsched's (``policy`` of a task, ``run.default_policy``): SCHED_BATCH and
#: SCHED_IDLE are the fair class's too (taken as ``other``, with a warning).
POLICY_OF = {"SCHED_OTHER": "other", "SCHED_BATCH": "other", "SCHED_IDLE": "other", "SCHED_FIFO": "fifo",
             "SCHED_RR": "rr", "SCHED_DEADLINE": "deadline"}
#: rtsched's policies as rt-app's.
RTAPP_POLICY = {"other": "SCHED_OTHER", "fifo": "SCHED_FIFO", "rr": "SCHED_RR", "deadline": "SCHED_DEADLINE"}
#: Upper bound on the events of one thread once phases are unrolled (a typo'd loop count
#: should not eat the machine).
MAX_EVENTS = 200_000
#: Upper bound on the tasks an rt-app file makes (``instance`` multiplies them).
MAX_TASKS = 100_000


class Obj(list):
    """A JSON object as its ordered (key, value) pairs: rt-app's events are ordered, and a
    file may repeat a key (rt-app's workgen accepts ``"run": 1, "sleep": 1, "run": 2``)."""

    def get(self, key, default=None):
        for k, v in self:
            if k == key:
                return v
        return default

    def __contains__(self, key):
        return any(k == key for k, _ in self)

    def keys(self):
        return [k for k, _ in self]


def loads(text: str):
    return json.loads(text, object_pairs_hook=Obj)


def is_rtapp(doc) -> bool:
    """An rt-app file: an object whose ``tasks`` is an object (rtsched's is a list)."""
    return isinstance(doc, Obj) and isinstance(doc.get("tasks"), Obj)


def event_kind(key: str):
    for e in EVENTS:
        if key.startswith(e):
            return e
    return None


def _int(v, where: str, minimum=0):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise InputError(f"{where}: expected a whole number of microseconds, got {json.dumps(v)}")
    v = int(v)
    if v < minimum:
        raise InputError(f"{where}: must be ≥ {minimum}, got {v}")
    return v


def _ns(us: int) -> str:
    return f"{us * 1000}ns"


# ----------------------------------------------------------------------------- reading

def _unroll(name, thread, src):
    """The thread's events in execution order for one iteration of its loop, each as
    (kind, key, value, phase): every phase's events repeated its ``loop`` times."""
    where = f"{src}: task '{name}'"
    phases = thread.get("phases")
    if phases is None:
        bodies = [("", thread, 1)]
    else:
        if not isinstance(phases, Obj) or not phases:
            raise InputError(f"{where}: field 'phases': expected a non-empty object of phases")
        bodies = []
        for pname, ph in phases:
            if not isinstance(ph, Obj):
                raise InputError(f"{where}: phase '{pname}': expected an object")
            loop = ph.get("loop", 1)
            if loop == -1:
                loop = 1  # the phase repeats forever: one iteration is the job pattern
                if pname != phases.keys()[-1]:
                    raise InputError(f"{where}: phase '{pname}': field 'loop': -1 (forever) before the last phase, "
                                     "so the later phases never run; remove them or give a count")
            bodies.append((pname, ph, _int(loop, f"{where}: phase '{pname}': field 'loop'", 1)))
    out = []
    for pname, body, loop in bodies:
        evs = []
        for key, val in body:
            kind = event_kind(key)
            if kind is None:
                continue
            at = f"{where}{f', phase {pname!r}' if pname else ''}: event '{key}'"
            if kind in REFUSED:
                raise InputError(f"{at}: {REFUSED[kind]}; it has no rtsched meaning (docs/workloads.md, rt-app)")
            evs.append((kind, key, val, pname))
        if len(out) + len(evs) * loop > MAX_EVENTS:
            raise InputError(f"{where}: more than {MAX_EVENTS} events once phases are repeated by their 'loop'")
        out.extend(evs * loop)
    return out


def _jobs(name, events, src):
    """Cut the cyclic event sequence into jobs at each timer. Returns (period_us or None,
    jobs, timer key), each job a list of events without the timer."""
    where = f"{src}: task '{name}'"
    timers = [i for i, e in enumerate(events) if e[0] == "timer"]
    if not timers:
        return None, [events], None
    periods = {}
    for i in timers:
        kind, key, val, ph = events[i]
        at = f"{where}: event '{key}'"
        if not isinstance(val, Obj):
            raise InputError(f"{at}: expected an object {{\"ref\": NAME, \"period\": MICROSECONDS}}")
        periods.setdefault(_int(val.get("period"), f"{at}: field 'period'", 1), key)
    if len(periods) > 1:
        (p1, k1), (p2, k2) = list(periods.items())[:2]
        raise InputError(f"{where}: timers of different periods ('{k1}': {p1} us, '{k2}': {p2} us); "
                         "an rtsched task has one period")
    # The loop repeats: what follows the last timer belongs to the first job.
    last = timers[-1]
    cyclic = events[last + 1:] + events[:last + 1]
    jobs, cur = [], []
    for e in cyclic:
        if e[0] == "timer":
            jobs.append(cur)
            cur = []
        else:
            cur.append(e)
    return next(iter(periods)), jobs, periods[next(iter(periods))]


def _job_work(name, job, src, allow_sleep):
    """(work_us, sleep_us, sections) of one job; sections as (resource, start_us, length_us)
    in the order their locks are taken."""
    where = f"{src}: task '{name}'"
    work = sleep = 0
    held = []  # (resource, start, index into sections)
    sections = []
    for kind, key, val, _ph in job:
        at = f"{where}: event '{key}'"
        if kind in ("run", "runtime"):
            work += _int(val, at)
        elif kind == "sleep":
            if not allow_sleep:
                raise InputError(f"{at}: a sleep inside a timer period suspends the job itself; rtsched tasks do "
                                 "not self-suspend (use the timer alone, or run and sleep without a timer)")
            if held:
                raise InputError(f"{at}: a sleep while holding '{held[-1][0]}'; rtsched sections hold a resource over work only")
            sleep += _int(val, at)
        elif kind == "lock":
            if not isinstance(val, str) or not val:
                raise InputError(f"{at}: expected the name of a mutex")
            if any(r == val for r, _, _ in held):
                raise InputError(f"{at}: locks '{val}' again while holding it (a mutex is not recursive)")
            held.append((val, work, len(sections)))
            sections.append(None)
        elif kind == "unlock":
            if not held or held[-1][0] != val:
                what = f"'{held[-1][0]}' is held innermost" if held else "nothing is held"
                raise InputError(f"{at}: unlocks '{val}' but {what}; sections must be nested (unlock in reverse order)")
            r, start, i = held.pop()
            sections[i] = (r, start, work - start)
    if held:
        raise InputError(f"{where}: '{held[-1][0]}' is locked and not unlocked within the job (before the next timer)")
    return work, sleep, [s for s in sections if s[2] > 0]


def _cpu(name, cpus, src, m):
    where = f"{src}: task '{name}': field 'cpus'"
    if cpus is None:
        return None
    if not isinstance(cpus, list) or not cpus:
        raise InputError(f"{where}: expected a non-empty list of CPU numbers")
    cs = sorted({_int(c, where) for c in cpus})
    if cs[-1] >= m:
        raise InputError(f"{where}: CPU {cs[-1]} on a platform of {m} CPUs (give --cpus)")
    if len(cs) == 1:
        return cs[0]
    if cs == list(range(m)):
        return None
    raise InputError(f"{where}: affinity to CPUs {cs}, a subset of the {m}; an rtsched task runs on one CPU "
                     "('cpu', partitioned schedulers) or on all (global): choose one")


def from_rtapp(doc: Obj, src: str, cpus: int, warn) -> dict:
    """The rtsched task-set document (a dict, durations as ``"NNNns"``) an rt-app file
    describes. ``cpus``: the platform's CPUs. ``warn(msg)`` is told of each approximation."""
    glob = doc.get("global", Obj())
    if not isinstance(glob, Obj):
        raise InputError(f"{src}: field 'global': expected an object")
    default_policy = glob.get("default_policy", "SCHED_OTHER")
    if not isinstance(default_policy, str) or default_policy not in POLICIES:
        raise InputError(f"{src}: field 'global.default_policy': unknown policy {json.dumps(default_policy)}")
    if default_policy in ("SCHED_BATCH", "SCHED_IDLE"):
        warn(f"{src}: global.default_policy {default_policy}: taken as other (SCHED_OTHER's fair class)")
    notes = []
    if glob.get("pi_enabled"):
        notes.append("pi_enabled: mutexes with priority inheritance (run with a :pi backend, e.g. kernel:fifo:file:pi)")
    out_tasks = []
    for name, th in doc.get("tasks"):
        where = f"{src}: task '{name}'"
        if not isinstance(th, Obj):
            raise InputError(f"{where}: expected an object")
        for key in th.keys():
            if event_kind(key) is None and key not in THREAD_KEYS:
                raise InputError(f"{where}: field '{key}': not an rt-app thread key or event")
        instances = _int(th.get("instance", 1), f"{where}: field 'instance'", 1)
        if len(out_tasks) + instances > MAX_TASKS:
            raise InputError(f"{where}: field 'instance': {instances}: more than {MAX_TASKS} tasks in all")
        own_policy = th.get("policy")
        policy = default_policy if own_policy is None else own_policy
        if not isinstance(policy, str) or policy not in POLICIES:
            raise InputError(f"{where}: field 'policy': unknown policy {json.dumps(policy)}")
        if own_policy in ("SCHED_BATCH", "SCHED_IDLE"):
            warn(f"{where}: policy {own_policy}: taken as other (SCHED_OTHER's fair class)")
        events = _unroll(name, th, src)
        period, jobs, timer_key = _jobs(name, events, src)
        works = [_job_work(name, j, src, allow_sleep=period is None) for j in jobs]
        worst = max(range(len(works)), key=lambda i: works[i][0])
        work, sleep, sections = works[worst]
        if len({(w, tuple(s)) for w, _, s in works}) > 1:
            warn(f"{where}: its jobs differ (work {min(w for w, _, _ in works)} to {work} us between timers): "
                 f"the rtsched task takes the largest job as its WCET and sections")
        if work == 0:
            raise InputError(f"{where}: no 'run' or 'runtime' work in a period")
        task = {"name": name}
        if period is None:
            if sleep == 0:
                raise InputError(f"{where}: neither a 'timer' nor a 'sleep': the thread never waits, so it has no period")
            period = work + sleep
            warn(f"{where}: run/sleep without a timer: its period is taken as run + sleep = {period} us "
                 "(rt-app's real period grows when the thread is delayed)")
        deadline = None
        if "dl-deadline" in th or "dl-period" in th or "dl-runtime" in th:
            dl_period = th.get("dl-period")
            dl_deadline = th.get("dl-deadline", dl_period)
            if dl_deadline is not None:
                deadline = _int(dl_deadline, f"{where}: field 'dl-deadline'", 1)
            if policy == "SCHED_DEADLINE":
                if dl_period is not None and timer_key is not None and _int(dl_period, f"{where}: field 'dl-period'", 1) != period:
                    warn(f"{where}: dl-period {dl_period} us differs from the timer's period {period} us: the timer's is the task's period")
                dl_runtime = th.get("dl-runtime")
                if dl_runtime is not None:
                    runtime = _int(dl_runtime, f"{where}: field 'dl-runtime'", 1)
                    task["runtime"] = _ns(runtime)
                    if runtime < work:
                        warn(f"{where}: dl-runtime {dl_runtime} us is less than its work per period {work} us: "
                             "the task's WCET is the work, its runtime the reservation (the kernel, and "
                             "'simulate -s linux', throttle it)")
                if timer_key is None and dl_period is not None:
                    period = _int(dl_period, f"{where}: field 'dl-period'", 1)
        elif policy == "SCHED_DEADLINE":
            raise InputError(f"{where}: policy SCHED_DEADLINE without 'dl-runtime'/'dl-period'/'dl-deadline'")
        task["period"] = _ns(period)
        task["wcet"] = _ns(work)
        if deadline is not None and deadline != period:
            task["deadline"] = _ns(deadline)
        if own_policy is not None:
            task["policy"] = POLICY_OF[policy]
        if policy in ("SCHED_FIFO", "SCHED_RR"):
            prio = _int(th.get("priority", 10), f"{where}: field 'priority'", 1)
            if prio > 99:
                raise InputError(f"{where}: field 'priority': {prio}, SCHED_FIFO/SCHED_RR priorities are 1 to 99")
            task["priority"] = prio
        elif POLICY_OF[policy] == "other" and "nice" in th:
            nice = th.get("nice")
            if isinstance(nice, bool) or not isinstance(nice, int) or not -20 <= nice <= 19:
                raise InputError(f"{where}: field 'nice': expected an integer from -20 to 19, got {json.dumps(nice)}")
            if nice:
                task["nice"] = nice
        delay = th.get("delay", 0)
        if delay:
            task["offset"] = _ns(_int(delay, f"{where}: field 'delay'"))
        cpu = _cpu(name, th.get("cpus"), src, cpus)
        phase_cpus = [(p, ph.get("cpus")) for p, ph in (th.get("phases") or []) if isinstance(ph, Obj) and "cpus" in ph]
        if phase_cpus:
            raise InputError(f"{where}: phase '{phase_cpus[0][0]}': field 'cpus': an affinity that changes between "
                             "phases has no rtsched meaning (give 'cpus' on the thread)")
        if cpu is not None:
            task["cpu"] = cpu
        if sections:
            task["sections"] = [{"resource": r, "start": _ns(s), "length": _ns(n)} for r, s, n in sections]
        if "loop" in th and th.get("phases") is not None and th.get("loop") not in (-1, None):
            warn(f"{where}: 'loop': {th.get('loop')}: rt-app stops the thread after that many iterations; "
                 "the rtsched task is periodic for the whole run")
        if instances == 1:
            out_tasks.append(task)
        else:
            for k in range(instances):
                out_tasks.append(dict(task, name=f"{name}-{k}"))
    ts = {"name": src.rsplit("/", 1)[-1], "description": "converted from rt-app" + (f"; {'; '.join(notes)}" if notes else ""),
          "platform": {"cpus": cpus}, "tasks": out_tasks}
    # rt-app's global.default_policy (SCHED_OTHER when not given) is the tasks' default policy.
    ts["run"] = {"default_policy": POLICY_OF[default_policy]}
    duration = glob.get("duration", -1)
    if duration not in (-1, None):
        d = _int(duration, f"{src}: field 'global.duration'", 1)
        ts["run"]["duration"] = f"{d}s"
    for key in glob.keys():
        if key not in GLOBAL_IGNORED:
            raise InputError(f"{src}: field 'global.{key}': not an rt-app global key")
    names = [t["name"] for t in out_tasks]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise InputError(f"{src}: task '{dup}': two tasks of that name once instances are numbered")
    return ts


# ----------------------------------------------------------------------------- rt-app's log

#: Columns of rt-app's per-thread log (one row per loop of the thread's phases; µs except
#: start/end, which are ns of CLOCK_MONOTONIC): rt-app 1.0's and upstream's first columns.
LOG_COLUMNS = ("idx", "perf", "run", "period", "start", "end", "rel_st", "slack", "c_duration", "c_period", "wu_lat")


def read_log(path) -> dict:
    """rt-app's log of one thread (``LOGDIR/BASENAME-THREAD-INDEX.log``, written when
    ``global.logdir`` is set): ``{"policy": the header's policy line, "rows": [{column: int}]}``,
    one row per activation (``run``: µs spent in the run events; ``period``: µs from the
    activation's start to its end, timer wait included; ``c_duration``/``c_period``: the
    configured run and timer period)."""
    rows, policy = [], None
    with open(path) as f:
        for line in f:
            if line.startswith("# Policy"):
                policy = line[1:].strip()
                continue
            if line.startswith("#") or not line.strip():
                continue
            vals = line.split()
            try:
                rows.append({k: int(v) for k, v in zip(LOG_COLUMNS, vals)})
            except ValueError:
                raise InputError(f"{path}: not an rt-app log row: {line.strip()[:80]!r}") from None
    return {"policy": policy, "rows": rows}
