"""Pause Python's cyclic garbage collector over work that builds millions of acyclic objects.

A plan of 100k resources parses into millions of dicts, lists and strings, and evaluating it
adds findings, facts and index entries by the hundred thousand. The collector starts a pass
whenever enough new containers were allocated, and every full pass rescans everything alive:
reading, evaluating and reporting such a plan spent 20-35 % of its time in collections that
found nothing to free (the objects are acyclic and all still in use). Pausing it over that work
leaves the peak memory as it was (measured on 100k-resource plans, bench/check_bench.py).

:func:`paused_gc` disables the collector for a block and restores the state it found, so
pauses nest and a caller that had the collector off keeps it off.
"""

from __future__ import annotations

import gc


class _Paused:
    """The context manager :func:`paused_gc` returns (its own: no ``contextlib`` on a check's
    start-up)."""

    __slots__ = ("_enabled",)

    def __enter__(self) -> None:
        self._enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self._enabled:
            gc.enable()


def paused_gc() -> _Paused:
    """No cyclic collection inside the block; the collector's previous state after it."""
    return _Paused()
