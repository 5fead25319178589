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
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic collection inside the block; the collector's previous state after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
