"""rt-app's events as rtsched tasks, triggers, suspensions and chains (docs/workloads.md,
"rt-app's events"; the model is docs/chains.md).

rt-app runs each thread as a loop of events (rt-app/src/rt-app.c ``run_event``). One iteration of the
loop (its phases unrolled) is cut where the thread waits to be released — a ``timer`` (its
period), a ``suspend``/``wait``/``sync`` (a condition another thread's ``resume``/``signal``/
``broad``/``sync`` wakes: rt-app's ``pthread_cond_wait``/``_signal``/``_broadcast``) or a
``barrier`` (a rendezvous of every thread that names it) — into *pieces*; each piece is cut
again after each event that wakes another thread, so the woken thread's release is the end of a
piece. Every piece with work becomes a task: released by its timer (``period``), by the piece
that woke it (``trigger: A``), by its own previous piece and its waker together (``trigger:
{all: [...]}``, the thread reached its wait and was woken), or by every thread's piece ending at
a barrier (``all``). A piece without work passes its release on to the pieces it releases.
``sleep`` inside a piece is a suspension segment; ``lock``/``unlock`` are critical sections.
A trigger cycle (threads waking each other in turn) is cut at its first piece in file order
(with every piece its barrier releases), which becomes periodic with the cycle's length: the
longest path of runs and sleeps back to it, or through its thread's own loop if longer. Unlike
rt-app's condition variables, where a wake that comes before the wait is lost, a trigger
counts every finished job. Triggered tasks' deadlines are the period of the periodic task that starts their cascade.
Each periodic task that triggers others heads a chain: the trigger path from it that passes
from thread to thread most often (the longest of those).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .._core import InputError

#: Events rt-app knows, matched by prefix as rt-app does (``run0``, ``lock_bus``...); longer
#: names first (``runtime`` before ``run``).
EVENTS = ("lock", "unlock", "wait", "signal", "broad", "sync", "sleep", "runtime", "run", "timer", "suspend",
          "resume", "mem", "iorun", "yield", "barrier", "fork")
#: Events that release the thread: it waits here for a timer or for another thread.
RELEASES = ("timer", "suspend", "wait", "sync", "barrier")
#: Events that wake another thread (``sync`` signals, then waits).
WAKES = ("resume", "signal", "broad", "sync", "fork")
#: ``mem`` writes N bytes to a buffer, ``iorun`` N bytes to ``io_device``: time taken at these
#: stated bandwidths (bytes per µs), **warned**: the real time depends on the machine.
MEM_BYTES_PER_US = 2000  # 2 GB/s, a memset into a few-MB buffer
IO_BYTES_PER_US = 1000   # 1 GB/s, write(2) to /dev/null in mem_buffer_size chunks
#: Upper bound on the events of one thread once phases are unrolled.
MAX_EVENTS = 200_000
#: Upper bound on the pieces of a file (threads × the waits and wakes of their loops): the
#: linking is quadratic in them, and rt-app's largest example has 90.
MAX_PIECES = 2_000


@dataclass
class Ev:
    kind: str
    key: str
    value: object
    phase: str
    line: int


@dataclass(eq=False)
class Piece:
    """A run of a thread's events between two cuts; its task when it has work."""
    thread: str
    name: str = ""
    items: list = field(default_factory=list)    # ("run", us) | ("sleep", us) | ("lock"/"unlock", res, Ev)
    release: tuple = ()                           # ("period", us, offset_us) | ("trigger", [Piece...]) | ("cut",)
    wakes: list = field(default_factory=list)     # events at its end that wake others
    line: int = 0

    @property
    def work(self) -> int:
        return sum(x[1] for x in self.items if x[0] == "run")


def event_kind(key: str):
    for e in EVENTS:
        if key.startswith(e):
            return e
    return None


def whole(v, where: str, minimum=0, unit="microseconds"):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise InputError(f"{where}: expected a whole number of {unit}, got {json.dumps(v)}")
    v = int(v)
    if v < minimum:
        raise InputError(f"{where}: must be ≥ {minimum}, got {v}")
    return v


def at(src, name, ev: Ev) -> str:
    phase = f", phase '{ev.phase}'" if ev.phase else ""
    return f"{src}:{ev.line}: task '{name}'{phase}, event '{ev.key}'"


def cond_name(ev: Ev, where: str) -> str:
    """The condition (rt-app resource) a wait/wake event names."""
    v = ev.value
    if ev.kind in ("wait", "sync"):
        ref = v.get("ref") if hasattr(v, "get") else None
        if not isinstance(ref, str) or not ref:
            raise InputError(f"{where}: expected an object {{\"ref\": CONDITION, \"mutex\": MUTEX}}")
        return ref
    if not isinstance(v, str) or not v:
        raise InputError(f"{where}: expected the name of a {'thread' if ev.kind == 'fork' else 'condition'}")
    return v


def smallest_unit(events: list) -> list:
    """The shortest prefix whose repetition is ``events`` (a loop of three equal phases is one)."""
    sig = [(e.kind, json.dumps(e.value, sort_keys=True, default=str)) for e in events]
    n = len(sig)
    for d in range(1, n):
        if n % d == 0 and sig == sig[:d] * (n // d):
            return events[:d]
    return events


def _items(name, ev: Ev, src, warn_once) -> list:
    where = at(src, name, ev)
    k = ev.kind
    if k in ("run", "runtime"):
        return [("run", whole(ev.value, where))]
    if k == "sleep":
        return [("sleep", whole(ev.value, where))]
    if k in ("mem", "iorun"):
        size = whole(ev.value, where, unit="bytes")
        bw = MEM_BYTES_PER_US if k == "mem" else IO_BYTES_PER_US
        us = max(1, -(-size // bw))
        warn_once(k, f"{where}: {size} bytes taken as {us} us of execution at {bw} bytes/us "
                     f"(a stated bandwidth: the real time depends on the {'memory' if k == 'mem' else 'device'})")
        return [("run", us)]
    if k in ("lock", "unlock"):
        if not isinstance(ev.value, str) or not ev.value:
            raise InputError(f"{where}: expected the name of a mutex")
        return [(k, ev.value, ev)]
    if k == "yield":
        warn_once("yield", f"{where}: yield gives the CPU up for no time: a boundary inside the job, "
                           "no time of its own (a policy's requeue on yield is not modelled)")
        return []
    return []


def cut(name, events: list, src, warn_once, start_release) -> list:
    """The thread's pieces for one loop iteration: cut after each release event (the next piece
    is released by it) and after each wake (the next piece is released by the end of this one).
    ``start_release``: the release of the first piece when the loop has no release event."""
    for m in dict.fromkeys(e.value for e in events if e.kind == "lock" and isinstance(e.value, str)):
        n_lock = sum(1 for e in events if e.kind == "lock" and e.value == m)
        n_unlock = sum(1 for e in events if e.kind == "unlock" and e.value == m)
        if n_lock != n_unlock:
            raise InputError(f"{src}:{events[0].line}: task '{name}': '{m}' is locked {n_lock} times and unlocked "
                             f"{n_unlock} in one iteration of its loop (rt-app would deadlock on the next lock)")
    rel = [i for i, e in enumerate(events) if e.kind in RELEASES]
    if rel:
        first = rel[0]
        seq = events[first + 1:] + events[:first + 1]
        opening = events[first]
    else:
        seq, opening = events, None
    pieces, held = [], []
    cur = Piece(name, release=("event", opening) if opening else start_release,
                line=opening.line if opening else (events[0].line if events else 0))
    for ev in seq:
        if ev.kind in WAKES or ev.kind in ("suspend", "wait", "barrier"):
            cond_name(ev, at(src, name, ev))  # a name (or {ref}) where rt-app wants one
        if ev.kind in RELEASES:
            if ev.kind == "sync":
                cur.wakes.append(ev)  # signals the condition, then waits on it
            pieces.append(cur)
            cur = Piece(name, release=("event", ev), line=ev.line)
            continue
        if ev.kind in WAKES:
            cur.wakes.append(ev)
            pieces.append(cur)
            cur = Piece(name, release=("after",), line=ev.line)
            # a mutex held over the wake is still held in the next piece
            cur.items.extend(("lock", r, e) for r, e in held)
            continue
        for x in _items(name, ev, src, warn_once):
            if x[0] == "lock":
                held.append((x[1], x[2]))
            elif x[0] == "unlock" and any(r == x[1] for r, _ in held):
                held.remove(next(h for h in held if h[0] == x[1]))
            cur.items.append(x)
    if rel:
        # the events after the last release event wrapped round: ``cur`` is empty here
        if cur.items or cur.wakes:
            pieces.append(cur)
    else:
        pieces.append(cur)
    return pieces


#: The run that closes a job whose piece ends with a sleep (rtsched segments end with a run):
#: 1 ns, written as such (the other segments are whole µs).
TAIL_RUN_NS = 1
TAIL_RUN = f"{TAIL_RUN_NS}ns"


def segments(task_name, piece: Piece, src, warn_once):
    """(runs and suspensions as rtsched ``segments`` or None, WCET µs, sections) of a piece.
    Runs are whole µs but for a closing ``TAIL_RUN`` after a trailing sleep."""
    out, held, sections, pos = [], [], [], 0
    for x in piece.items:
        if x[0] == "run":
            if out and isinstance(out[-1], int):
                out[-1] += x[1]
            else:
                out.append(x[1])
            pos += x[1]
        elif x[0] == "sleep":
            if held:
                raise InputError(f"{src}:{piece.line}: task '{task_name}': a sleep while holding '{held[-1][0]}'; rtsched sections "
                                 "hold a mutex over work only")
            if out and isinstance(out[-1], dict):
                out[-1]["suspend"] += x[1]
            elif x[1]:
                out.append({"suspend": x[1]})
        elif x[0] == "lock":
            if any(r == x[1] for r, _, _ in held):
                raise InputError(f"{at(src, piece.thread, x[2])}: locks '{x[1]}' again while holding it (a mutex is not recursive)")
            held.append((x[1], pos, len(sections)))
            sections.append(None)
        else:
            if not held:
                # locked before the loop's first wait (rt-app's cond_wait takes it back): held from the start
                sections.append((x[1], 0, pos))
                continue
            if held[-1][0] != x[1]:
                raise InputError(f"{at(src, piece.thread, x[2])}: unlocks '{x[1]}' but '{held[-1][0]}' is held innermost; "
                                 "sections must be nested (unlock in reverse order)")
            r, start, i = held.pop()
            sections[i] = (r, start, pos - start)
    for r, start, i in held:  # held into a wait (released there) or to the piece's end
        sections[i] = (r, start, pos - start)
    while out and isinstance(out[0], dict):
        warn_once("edge-sleep", f"{src}: task '{task_name}': a sleep before the first run of an activation: dropped "
                                "(rtsched segments start and end with a run)")
        out.pop(0)
    if len(out) > 1 and isinstance(out[-1], dict):
        # rt-app's thread sleeps, then waits (or wakes others, or meets at a barrier): what comes
        # next comes after the sleep. rtsched segments end with a run, so the job ends with one
        # of TAIL_RUN_NS: its completion, which releases what it triggers, is the sleep's end.
        warn_once("tail-sleep", f"{src}: task '{task_name}': a sleep after the last run of an activation, before the "
                                f"thread waits again: kept as a suspension closed by a {TAIL_RUN_NS} ns run (rtsched "
                                "segments end with a run), so what it releases comes after the sleep, as in rt-app")
        out.append(TAIL_RUN)
    work = sum(x for x in out if isinstance(x, int))
    segs = out if len(out) > 1 else None
    return segs, work, [s for s in sections if s and s[2] > 0]


def timer_job(name, pieces, src, warn):
    """The pieces of one job of a timer-driven thread and its period multiplier: its loop's
    jobs (a timer each) are the same job when they are equal; else the largest, or, when they
    differ in whom they wake, the job that wakes others, released once per that many timers."""
    jobs = []
    for p in pieces:
        if p.release[0] == "event":
            jobs.append([p])
        else:
            jobs[-1].append(p)

    def sig(job):
        return tuple((x[0], x[1]) for p in job for x in p.items if x[0] in ("run", "sleep")), \
            tuple((e.kind, json.dumps(e.value, default=str)) for p in job for e in p.wakes)

    def wakes(job):
        return sig(job)[1]

    best = max(jobs, key=lambda j: (bool(wakes(j)), sum(p.work for p in j)))
    if len({sig(j) for j in jobs}) > 1:
        same = sum(1 for j in jobs if wakes(j) == wakes(best))
        mult = len(jobs) // same if len({wakes(j) for j in jobs}) > 1 and len(jobs) % same == 0 else 1
        what = (f"its timer periods differ in whom they wake: the job that wakes others comes once in {mult}, "
                f"taken as one job every {mult} timer periods") if mult > 1 else \
            "its jobs differ between timers: the rtsched task takes the largest job"
        warn(f"{src}: task '{name}': {what}")
        return best, mult
    return best, 1


class Linker:
    """Releases of every piece of every thread, resolved to tasks' ``period`` or ``trigger``."""

    def __init__(self, src, warn):
        self.src, self.warn = src, warn
        self.threads = {}     # thread instance name → its pieces (the ones kept)
        self.forked = {}      # thread instance name → the forking rt-app thread name
        self.eff = {}

    def add(self, thread, pieces):
        if sum(map(len, self.threads.values())) + len(pieces) > MAX_PIECES:
            raise InputError(f"{self.src}: task '{thread}': more than {MAX_PIECES} tasks once the threads' loops are "
                             "cut at each wait and wake")
        self.threads[thread] = pieces
        k = 0
        for i, p in enumerate(pieces):
            if p.work:
                p.name = thread if k == 0 else f"{thread}.{k}"
                k += 1
            else:
                p.name = f"{thread}~{i}"  # passes its release on; never a task

    def all_pieces(self):
        return [p for ps in self.threads.values() for p in ps]

    def prev(self, p):
        ps = self.threads[p.thread]
        return ps[ps.index(p) - 1]

    def wakers(self, cond, thread, kinds):
        return [p for p in self.all_pieces() if p.thread != thread
                and any(e.kind in kinds and cond_name(e, "") == cond for e in p.wakes)]

    def raw(self, p):
        """The release of piece ``p`` before work-less pieces are passed through."""
        r = p.release
        if r[0] != "event":
            return ("trigger", [self.prev(p)]) if r[0] == "after" else r
        ev = r[1]
        where = at(self.src, p.thread, ev)
        if ev.kind == "timer":
            raise AssertionError("timer pieces are periodic before linking")
        if ev.kind == "barrier":
            name = cond_name(ev, where)
            users = [self.prev(q) for q in self.all_pieces()
                     if q.release[0] == "event" and q.release[1].kind == "barrier" and q.release[1].value == name]
            return ("trigger", list(dict.fromkeys(users)))
        cond = cond_name(ev, where)
        kinds = ("resume",) if ev.kind == "suspend" else ("signal", "broad", "sync")
        ws = self.wakers(cond, p.thread, kinds)
        if not ws:
            verb = "resumes" if ev.kind == "suspend" else "signals, broadcasts or syncs"
            raise InputError(f"{where}: no other thread {verb} '{cond}', so the thread would wait forever "
                             "(rtsched would need a thread released by nothing)")
        if len({w.thread for w in ws}) == 1 and len(ws) > 1:
            self.warn(f"{where}: woken {len(ws)} times in a loop of '{ws[0].thread}': rtsched's trigger is one task, "
                      f"so it is taken as triggered by the first, '{ws[0].name}'; the later wakes are not modelled")
        elif len({w.thread for w in ws}) > 1:
            self.warn(f"{where}: woken by any of {len({w.thread for w in ws})} threads "
                      f"({', '.join(dict.fromkeys(w.thread for w in ws))}): rtsched's trigger is one task or a join of "
                      f"all, so it is taken as triggered by the first, '{ws[0].name}'; the others' wakes are not modelled")
        ps = self.threads[p.thread]
        members = [ws[0]] if ps.index(p) == 0 else [self.prev(p), ws[0]]
        return ("trigger", members)

    def resolve(self, p, stack=()):
        """The release of ``p`` with work-less pieces replaced by their own releases."""
        if p.name in self.eff:
            return self.eff[p.name]
        if p.name in stack:
            raise InputError(f"{self.src}: task '{p.thread}': threads that wake each other without any work between "
                             f"({' → '.join(stack)}): no rtsched task to release")
        r = self.forked.get(p.name) or self.raw(p)
        if r[0] == "trigger":
            members, period = [], None
            for m in r[1]:
                if m.work:
                    members.append(m)
                    continue
                mr = self.resolve(m, stack + (p.name,))
                if mr[0] == "trigger":
                    members.extend(mr[1])
                else:
                    period = mr
            members = list(dict.fromkeys(members))
            if period and not members:
                r = period
            else:
                if period:
                    self.warn(f"{self.src}: task '{p.name}': released by a timer and another thread together: "
                              "the timer's part is not modelled (rtsched's join takes tasks only)")
                r = ("trigger", members)
        self.eff[p.name] = r
        return r


def _length(p: Piece) -> int:
    """Runs and sleeps of a piece: how long it takes alone."""
    return sum(x[1] for x in p.items if x[0] in ("run", "sleep"))


def _cycle(rel: dict):
    """A trigger cycle among ``rel`` (name → release) as a list of names, or None."""
    state = {}

    def visit(n, path):
        state[n] = 1
        path.append(n)
        r = rel[n]
        for m in (r[1] if r[0] == "trigger" else []):
            if state.get(m.name) == 1:
                return path[path.index(m.name):]
            if m.name not in state:
                c = visit(m.name, path)
                if c:
                    return c
        state[n] = 2
        path.pop()
        return None

    for n in rel:
        if n not in state:
            c = visit(n, [])
            if c:
                return c
    return None


def releases(lk: Linker, order: list):
    """name → ("period", us, offset_us) | ("trigger", [Piece]) of every piece with work, trigger
    cycles cut. ``order``: the pieces in file order. A cycle is cut at its first piece and
    every piece released with it (a barrier releases all its threads at once): they become
    periodic with the cycle's length, the longest run-and-sleep path from them back round."""
    pieces = [p for p in order if p.work]
    by_name = {p.name: p for p in pieces}
    rel = {p.name: lk.resolve(p) for p in pieces}
    groups = []
    for _ in range(len(pieces) + 1):
        c = _cycle(rel)
        if c is None:
            break
        head = by_name[min(c, key=lambda n: order.index(by_name[n]))]
        group = [q.name for q in pieces if q is head or (_barrier(q) and _barrier(q) == _barrier(head))]
        for n in group:
            rel[n] = ("period", 1, 0)  # measured below, once every cycle is cut
        groups.append((group, c))
    else:
        raise InputError(f"{lk.src}: trigger cycles that could not be cut")
    for group, c in groups:
        longest = _longest_from(group, rel, by_name)
        # what releases the group again: its triggers, and its threads' last pieces (a thread
        # starts its next iteration when it has finished this one)
        feeders = {m.name for n in group for m in _members(lk.eff[n])}
        feeders |= {next(q.name for q in reversed(lk.threads[by_name[n].thread]) if q.work) for n in group}
        period = max([longest[f] for f in feeders if f in longest] or [max(_length(by_name[n]) for n in group)])
        for n in group:
            rel[n] = ("period", max(1, period), 0)
        lk.warn(f"{lk.src}: task '{group[0]}': threads release each other in a cycle ({' → '.join(c + [c[0]])}): "
                f"rtsched's triggers cannot, so {', '.join(repr(n) for n in group)} "
                f"{'is' if len(group) == 1 else 'are'} taken as periodic with the cycle's length alone, {period} us "
                "(the longest run-and-sleep path round it or through its threads' own loops)")
    return rel


def _barrier(p: Piece):
    r = p.release
    return r[1].value if r and r[0] == "event" and r[1].kind == "barrier" else None


def _members(r):
    return r[1] if r and r[0] == "trigger" else []


def _longest_from(group, rel, by_name):
    """For each piece reachable from ``group`` by triggers (an acyclic graph): the longest path
    of runs and sleeps from the group's release to that piece's end."""
    succ, indeg = {}, {n: 0 for n in rel}
    for n, r in rel.items():
        for m in _members(r):
            succ.setdefault(m.name, []).append(n)
            indeg[n] += 1
    topo, ready = [], [n for n, d in indeg.items() if d == 0]
    while ready:
        n = ready.pop()
        topo.append(n)
        for s in succ.get(n, []):
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(s)
    best = {n: _length(by_name[n]) for n in group}
    for n in topo:
        if n in best:
            for s in succ.get(n, []):
                best[s] = max(best.get(s, 0), best[n] + _length(by_name[s]))
    return best


def chains(rel: dict, order: list) -> list:
    """One chain per periodic task that triggers others: the trigger path from it that passes
    from thread to thread most often (a pipeline of threads), the longest among those."""
    succ = {}
    for n, r in rel.items():
        for m in _members(r):
            succ.setdefault(m.name, []).append(n)
    thread = {p.name: p.thread for p in order}
    memo = {}

    def best(n):
        """(thread changes, tasks) of the best path from ``n``, and the path."""
        if n not in memo:
            score, path = (0, 1), [n]
            for s in succ.get(n, []):
                (changes, length), rest = best(s)
                cand = (changes + (thread[s] != thread[n]), length + 1)
                if cand > score:
                    score, path = cand, [n] + rest
            memo[n] = (score, path)
        return memo[n]

    return [{"name": p.name, "tasks": best(p.name)[1]} for p in order
            if p.name in rel and rel[p.name][0] == "period" and succ.get(p.name)]


def periods(rel: dict, order: list) -> dict:
    """name → the period of the periodic task(s) whose cascade releases it (the longest)."""
    out = {}

    def eff(n, depth=0):
        if n not in out:
            r = rel[n]
            out[n] = r[1] if r[0] == "period" else max(eff(m.name, depth + 1) for m in r[1])
        return out[n]

    for p in order:
        if p.name in rel:
            eff(p.name)
    return out
