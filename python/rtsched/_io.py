"""Atomic file output: a temporary file beside the target, then a rename over it, so a crash
or an error leaves the old file or the new one, never half of one.

Only a regular file (or a path where nothing is yet) is ever replaced, the same rules as the
Rust writers' (crates/model/src/results/atomic.rs ``output_target``): a symbolic link is followed and
stays a link; ``-`` (standard output), a character device (/dev/null, /dev/stdout) and a FIFO
are written through, never replaced; a directory, a block device, a socket or a link to no file
is refused; so is an input of the run (:func:`resolve_output`'s ``inputs``), as root too.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile

from ._core import InputError

_KINDS = [(stat.S_ISDIR, "is a directory"), (stat.S_ISBLK, "is a block device"), (stat.S_ISSOCK, "is a socket")]


class OutputRefused(InputError):
    """An output path that must not be written (exit 2): the message names it and says why."""


def resolve_output(path, inputs=()) -> tuple[str, str]:
    """How ``path`` is written: ``("replace", file)``, a regular file or a new one, replaced
    atomically (``file`` is where a symbolic link leads), or ``("through", path)``: ``-``, a
    character device or a FIFO, opened and written. Raises :class:`OutputRefused` for anything
    else, and for a path that is (or leads to) one of ``inputs``, the files the run reads."""
    p = os.fspath(path)
    if p == "-":
        return "through", p
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return "replace", p
    target = p
    if stat.S_ISLNK(st.st_mode):
        target = os.path.realpath(p)
        try:
            st = os.stat(p)
        except OSError:
            raise OutputRefused(f"{p}: a symbolic link that leads to no file ({target}): refusing to write through it "
                                "or to replace it") from None
    for inp in inputs:
        try:
            if inp is not None and os.fspath(inp) != "-" and os.path.samestat(st, os.stat(inp)):
                raise OutputRefused(f"{p}: is {os.fspath(inp)}, an input of this run: refusing to replace it "
                                    "(name another output file)")
        except OSError:
            pass
    if stat.S_ISREG(st.st_mode):
        return "replace", target
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return "through", target
    why = next((w for test, w in _KINDS if test(st.st_mode)), "is not a regular file")
    raise OutputRefused(f"{p}: {why}: refusing to replace it")


def read_input_bytes(path, limit: int, what: str) -> bytes:
    """The bytes of an input file the user named: a regular file of at most ``limit`` bytes, or
    a FIFO (read up to ``limit``); anything else (a directory, /dev/zero, a socket) is refused
    with :class:`InputError` naming the path before it is read (as the Rust reader,
    ``rtsched_model::file::read_input_text``)."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except OSError as e:
        raise InputError(f"{p}: cannot read: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{p}: is a directory, not {what}")
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        kind = "a character device" if stat.S_ISCHR(st.st_mode) else "a block device" if stat.S_ISBLK(st.st_mode) else "not a regular file"
        raise InputError(f"{p}: is {kind}, not {what}")
    if st.st_size > limit:
        raise InputError(f"{p}: {st.st_size} bytes, more than {what}'s limit of {limit} bytes")
    try:
        with open(p, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise InputError(f"{p}: cannot read: {e.strerror or e}") from None
    if len(data) > limit:
        raise InputError(f"{p}: more than {what}'s limit of {limit} bytes")
    return data


def write_atomic(path, write, suffix=".tmp", binary=False, inputs=()):
    """Call ``write(tmp_path)`` to produce the content, then move it over ``path`` (or, for a
    path written through, copy it there: :func:`resolve_output`)."""
    how, target = resolve_output(path, inputs)
    if how == "through":
        fd, tmp = tempfile.mkstemp(prefix=".rtsched-", suffix=suffix)
        os.close(fd)
        try:
            write(tmp)
            with open(tmp, "rb") as src:
                if target == "-":  # the process's standard output, even while sys.stdout is redirected
                    sys.stdout.flush()
                    sys.__stdout__.flush()
                    with open(1, "wb", closefd=False) as out:
                        shutil.copyfileobj(src, out)
                else:
                    with open(target, "wb") as dst:
                        shutil.copyfileobj(src, dst)
        finally:
            os.unlink(tmp)
        return
    d = os.path.dirname(os.path.abspath(target))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".rtsched-", suffix=suffix)
    os.close(fd)
    try:
        write(tmp)
        commit(tmp, target)
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


def write_text_atomic(path, text: str, inputs=()):
    def w(tmp):
        with open(tmp, "w") as f:
            f.write(text)

    write_atomic(path, w, inputs=inputs)
