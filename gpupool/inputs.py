"""Read an input file the way a shell user hands it over: a path, ``-`` for standard input, or a
named pipe (``<(terraform show -json plan.out)``, ``mkfifo``).

The one place that opens input files for reading (plan files, YAML files through
``gpupool.yamlio``), so that none of them can hang on a FIFO nobody writes to: the wait for a
writer is bounded by ``GPUPOOL_FIFO_TIMEOUT`` (see :mod:`gpupool.fifo`).
"""

from __future__ import annotations

import os
import stat
import sys
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
        return f.read() if limit is None else f.read(limit + 1)


__all__ = ["STDIN", "STDIN_SHOWN", "read_bytes", "shown_name"]
