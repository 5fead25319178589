"""Read an input file the way a shell user hands it over: a path, ``-`` for standard input, or a
named pipe (``<(terraform show -json plan.out)``, ``mkfifo``).

The one place that opens input files for reading (plan files, YAML files through
``gpupool.yamlio``), so that none of them can hang on a FIFO nobody writes to: the wait for a
writer is bounded by ``GPUPOOL_FIFO_TIMEOUT`` (see :mod:`gpupool.fifo`).

:func:`read_regular` is for the small documents a command reads whole (a model's config.json,
a remoting profile and its trace, a utilisation snapshot, a token): a regular file within a
stated size, or one line saying why not; a device or a FIFO is never read at all.
"""

from __future__ import annotations

import os
import stat
import sys

from gpupool.errors import InputError

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Final

STDIN: Final = "-"
STDIN_SHOWN: Final = "<stdin>"


def shown_name(path: str | Path) -> str:
    """How an input is named in messages and reports: ``<stdin>`` for ``-``."""
    return STDIN_SHOWN if str(path) == STDIN else str(path)


def read_bytes(path: str | Path, shown: str | None = None, *, allow_stdin: bool = False,
               limit: int | None = None) -> bytes:
    """The bytes of ``path`` (at most ``limit`` + 1 when a limit is given, so the caller can
    tell "too big" without reading an endless stream whole).

    ``-`` is standard input when ``allow_stdin``; a FIFO waits for its writer at most
    ``GPUPOOL_FIFO_TIMEOUT`` seconds (InputError after that). Other failures raise the OSError
    that ``Path.read_bytes`` would (FileNotFoundError, IsADirectoryError, ...), so callers keep
    their own wording for them.
    """
    name = str(path)
    shown = shown or shown_name(name)
    if allow_stdin and name == STDIN:
        if sys.stdin is None:  # started with stdin closed (<&-)
            raise InputError(f"{shown}: standard input is closed; give the input a file or "
                             "a pipe")
        stream = sys.stdin.buffer
        return stream.read() if limit is None else stream.read(limit + 1)
    st = os.stat(name)
    if stat.S_ISFIFO(st.st_mode):
        from gpupool import fifo

        fd = fifo.open_for_reading(name, shown)
        with os.fdopen(fd, "rb") as f:
            return f.read() if limit is None else f.read(limit + 1)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "Is a directory", name)
    with open(name, "rb") as f:
        if limit is None or (stat.S_ISREG(st.st_mode) and st.st_size <= limit):
            return f.read()  # read(limit + 1) would allocate limit + 1 bytes for every file
        return f.read(limit + 1)


_KINDS: Final = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
                 (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def size_text(n: int) -> str:
    """A limit as people say it: 1 MiB, 256 MiB, 64 KiB."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n:,} bytes"


def read_regular(path: str | Path, shown: str | None = None, *, limit: int, what: str,
                 missing: str = "") -> bytes:
    """The bytes of a REGULAR file of at most ``limit`` bytes, or one InputError line.

    For inputs that are small documents by nature (a model's config.json, a profile, a trace,
    a utilisation snapshot): a device (``/dev/zero``), a FIFO or a socket is refused rather
    than read without end, and so is a file past the limit, before it is read. The file is
    opened without blocking (a FIFO cannot hang the open) and judged by ``fstat`` of what was
    opened, so a file swapped after a check cannot slip through; a file growing while it is
    read is caught by reading one byte past the limit. ``what`` names the document in the
    messages ("a trace"); ``missing`` is added to "no such file" (how to make one).
    """
    shown = shown or str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError(f"{shown}: no such file{missing}") from None
    except OSError as e:
        raise InputError(f"{shown}: cannot read ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
    except OSError as e:
        os.close(fd)
        raise InputError(f"{shown}: cannot read ({e.strerror or e})") from None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{shown}: expected {what} file, got a directory")
        kind = next((k for test, k in _KINDS if test(st.st_mode)), "not a regular file")
        raise InputError(f"{shown}: expected {what} as a regular file, got {kind}")
    with os.fdopen(fd, "rb") as f:
        too_big = (f"{shown}: expected {what} of at most {size_text(limit)}, got a file of "
                   f"{{:,}} bytes")
        if st.st_size > limit:
            raise InputError(too_big.format(st.st_size))
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise InputError(f"{shown}: cannot read ({e.strerror or e})") from None
    if len(data) > limit:
        raise InputError(too_big.format(len(data)) + " (it grew while it was read)")
    return data


__all__ = ["STDIN", "STDIN_SHOWN", "read_bytes", "read_regular", "shown_name", "size_text"]
