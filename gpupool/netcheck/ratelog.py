"""A log that cannot be flooded: at most ``burst`` lines at once, refilled at ``per_second``.

The server logs every session and every refusal; a peer that opens thousands of connections a
second (a port scan, a flood while all slots are taken) would otherwise fill the disk of the
proxy host with "refused" lines. Lines past the budget are counted, not written, and the next
line that is written says how many were left out, so nothing is silently lost.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class RateLimitedLog:
    """``log(line)`` through a token bucket (thread-safe); ``clock`` is injectable for tests."""

    def __init__(self, write: Callable[[str], None], *, burst: int = 20,
                 per_second: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._write = write
        self._burst = float(burst)
        self._rate = per_second
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()
        self._dropped = 0
        self._lock = threading.Lock()

    def __call__(self, line: str) -> None:
        with self._lock:
            now = self._clock()
            self._tokens = min(self._burst, self._tokens + (now - self._last) * self._rate)
            self._last = now
            if self._tokens < 1:
                self._dropped += 1
                return
            self._tokens -= 1
            dropped, self._dropped = self._dropped, 0
        if dropped:
            line = f"({dropped:,} more line(s) left out: too many at once) {line}"
        self._write(line)

    @property
    def dropped(self) -> int:
        """Lines counted but not written since the last line written."""
        return self._dropped
