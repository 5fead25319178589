"""SIGTERM and SIGINT unwind the stack, so every ``finally`` and context manager cleans up.

Python turns SIGINT into KeyboardInterrupt, but SIGTERM (what CI runners, ``timeout`` and
``kill`` send) ends the process at once: git worktrees, temporary directories and child
processes would be left behind. :func:`signals_unwind` makes SIGTERM (and SIGHUP) raise
:class:`Terminated` instead. The first signal starts the unwinding; SIGINT, SIGTERM and SIGHUP
are ignored from then on (the process is already on its way out), so a second Ctrl-C cannot cut
the cleanup short. SIGKILL, as always, cannot be caught.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Final

_SIGNALS: Final = tuple(s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None))
                        if s is not None)


class Terminated(BaseException):
    """The process was asked to stop by a signal other than SIGINT (exit code 128 + signal)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _unwind(signum: int, frame: FrameType | None) -> None:
    for s in _SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


@contextmanager
def signals_unwind() -> Iterator[None]:
    """Within the block, SIGINT/SIGTERM/SIGHUP raise (see the module docstring); the previous
    handlers come back afterwards. Outside the main thread it does nothing (Python allows
    signal handlers only there)."""
    previous = {s: signal.getsignal(s) for s in _SIGNALS}
    try:
        for s in _SIGNALS:
            if previous[s] != signal.SIG_IGN:  # `nohup` and friends asked to ignore it: keep that
                signal.signal(s, _unwind)
    except ValueError:  # not the main thread (asked of signal, not of threading: not imported)
        yield
        return
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
