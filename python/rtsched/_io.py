"""Atomic file output: a temporary file beside the target, then a rename over it, so a crash
or an error leaves the old file or the new one, never half of one."""

from __future__ import annotations

import os
import tempfile


def write_atomic(path, write, suffix=".tmp", binary=False):
    """Call ``write(tmp_path)`` to produce the content, then move it over ``path``."""
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".rtsched-", suffix=suffix)
    os.close(fd)
    try:
        write(tmp)
        commit(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def commit(tmp, path):
    """Make the finished temporary file ``tmp`` the file ``path``: fsync it, give it the
    permissions a new file gets (not mkstemp's 0600), rename it over ``path``."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    os.replace(tmp, path)


def write_text_atomic(path, text: str):
    def w(tmp):
        with open(tmp, "w") as f:
            f.write(text)

    write_atomic(path, w)
