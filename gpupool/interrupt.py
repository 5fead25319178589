"""SIGTERM and SIGINT unwind the stack, so every ``finally`` and context manager cleans up.

Python turns SIGINT into KeyboardInterrupt, but SIGTERM (what CI runners, ``timeout`` and
``kill`` send) ends the process at once: git worktrees, temporary directories and child
processes would be left behind. :func:`signals_unwind` makes SIGTERM (and SIGHUP) raise
:class:`Terminated` instead. The first signal starts the unwinding; SIGINT, SIGTERM and SIGHUP
are ignored from then on (the process is already on its way out), so a second Ctrl-C cannot cut
the cleanup short. SIGKILL, as always, cannot be caught.

Every command runs inside :func:`signals_unwind`, so this module is on every command's start-up:
it asks ``_signal`` (the C module behind ``signal``, which builds three enum classes when
imported) and is its own context manager (no ``contextlib``). ``signal`` is imported only to
name a signal that arrived.
"""

from __future__ import annotations

import _signal
from types import FrameType

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Final

_SIGNALS: Final = tuple(s for s in (_signal.SIGINT, _signal.SIGTERM,
                                    getattr(_signal, "SIGHUP", None)) if s is not None)


class Terminated(BaseException):
    """The process was asked to stop by a signal other than SIGINT (exit code 128 + signal)."""

    def __init__(self, signum: int) -> None:
        import signal

        self.signum = signum
        super().__init__(signal.Signals(signum).name)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _unwind(signum: int, frame: FrameType | None) -> None:
    for s in _SIGNALS:
        _signal.signal(s, _signal.SIG_IGN)
    if signum == _signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


class _Unwinding:
    """The context manager :func:`signals_unwind` returns."""

    __slots__ = ("_previous",)

    def __init__(self) -> None:
        self._previous: dict[int, object] | None = None

    def __enter__(self) -> None:
        previous = {s: _signal.getsignal(s) for s in _SIGNALS}
        try:
            for s in _SIGNALS:
                if previous[s] != _signal.SIG_IGN:  # `nohup` and friends asked to ignore it
                    _signal.signal(s, _unwind)
        except ValueError:  # not the main thread (asked of signal, not of threading)
            return
        self._previous = previous

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            for s, handler in self._previous.items():
                _signal.signal(s, handler)  # type: ignore[arg-type]


def signals_unwind() -> _Unwinding:
    """Within the block, SIGINT/SIGTERM/SIGHUP raise (see the module docstring); the previous
    handlers come back afterwards. Outside the main thread it does nothing (Python allows
    signal handlers only there)."""
    return _Unwinding()
