"""The threads of a process tree, read from /proc (Linux)."""

from __future__ import annotations

import os


def tree_threads(root: int):
    """Yield ``(pid, tid)`` for every thread of ``root`` and of its descendants as they are now
    (``/proc/TID/children``); a process or thread that ends meanwhile is passed over."""
    todo, seen = [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            yield pid, tid
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    todo += [int(x) for x in f.read().split()]
            except (OSError, ValueError):
                pass
