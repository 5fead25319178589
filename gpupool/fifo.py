"""Open a named pipe (FIFO) without waiting forever for the process at the other end.

``open()`` on a FIFO blocks until the other side opens it too: ``gpupool check plan.fifo`` with
no writer, or ``--output report.fifo`` with no reader, would hang a CI job until it is killed.
Both directions wait at most :func:`timeout` seconds (``GPUPOOL_FIFO_TIMEOUT``, default 30)
and then fail with one line saying what is missing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import time

from gpupool.errors import InputError

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Final

TIMEOUT_ENV: Final = "GPUPOOL_FIFO_TIMEOUT"
DEFAULT_TIMEOUT_S: Final = 30.0
_POLL_S: Final = 0.02


def timeout() -> float:
    """Seconds to wait for the other end of a FIFO (``GPUPOOL_FIFO_TIMEOUT``, default 30)."""
    raw = os.environ.get(TIMEOUT_ENV, "")
    try:
        value = float(raw) if raw.strip() else DEFAULT_TIMEOUT_S
    except ValueError:
        raise InputError(f"{TIMEOUT_ENV}: expected a number of seconds, got {raw[:40]!r}") from None
    if not value > 0 or value == float("inf"):
        raise InputError(f"{TIMEOUT_ENV}: expected a positive number of seconds, got {raw!r}")
    return value


def open_for_reading(path: str, shown: str) -> int:
    """A blocking read descriptor once a writer has opened the FIFO, or InputError.

    A blocking ``open`` returns exactly when a writer arrives, however slow it is to write
    afterwards; it runs in a helper thread so that the wait can be bounded. On timeout the
    thread is released by opening the FIFO for writing ourselves (and closing it at once).
    """
    limit = timeout()
    got: dict[str, int | OSError] = {}

    def opener() -> None:
        try:
            got["fd"] = os.open(path, os.O_RDONLY)
        except OSError as e:
            got["error"] = e

    thread = threading.Thread(target=opener, name="gpupool-fifo-open", daemon=True)
    thread.start()
    thread.join(limit)
    if thread.is_alive():
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(1.0)
        fd = got.get("fd")
        if isinstance(fd, int):
            os.close(fd)
        raise InputError(f"{shown}: is a named pipe (FIFO) and no process wrote to it within "
                         f"{limit:g} s; start the writer first, or set {TIMEOUT_ENV}")
    error = got.get("error")
    if isinstance(error, OSError):
        raise error
    fd = got["fd"]
    assert isinstance(fd, int)
    return fd


def open_for_writing(path: str, shown: str, option: str) -> int:
    """A blocking write descriptor once a reader has opened the FIFO, or InputError.

    A non-blocking ``open`` for writing fails with ENXIO while no reader exists, so the wait
    is a short poll loop; the descriptor is switched back to blocking before it is returned.
    """
    limit = timeout()
    deadline = time.monotonic() + limit
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as e:
            if e.errno != errno.ENXIO:
                raise
        if time.monotonic() >= deadline:
            raise InputError(f"{option} {shown}: is a named pipe (FIFO) and no process opened it "
                             f"for reading within {limit:g} s; start the reader first, or set "
                             f"{TIMEOUT_ENV}")
        time.sleep(_POLL_S)
    os.set_blocking(fd, True)
    return fd
