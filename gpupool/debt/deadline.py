"""One deadline for the whole read (``gpupool debt --deadline S``): AWS calls and Prometheus.

Each AWS attempt (retries included) and each Prometheus request checks it before it is sent,
and a Prometheus request is given at most the time that is left, so a throttled or stalled
endpoint ends the command with one line instead of hanging a nightly job. The clock is
``time.monotonic``, looked up when read, so tests can count calls instead of waiting.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from gpupool.errors import InputError

DEFAULT_S = 900.0  # 15 minutes: a week of 1,000 pools reads in well under a minute
MAX_S = 86_400.0


def clock() -> float:
    return time.monotonic()


@dataclass
class Deadline:
    seconds: float = DEFAULT_S
    started: float = field(default_factory=lambda: clock())

    def remaining(self) -> float:
        return self.seconds - (clock() - self.started)

    def check(self, what: str) -> float:
        """Seconds left; :class:`InputError` when none are."""
        left = self.remaining()
        if left <= 0:
            raise InputError(
                f"--deadline {self.seconds:g}: the reads did not finish in time ({what} not "
                "sent); nothing is reported: give more time with --deadline, or a shorter "
                "window")
        return left

    def on_send(self, event_name: str = "", **_: Any) -> None:
        """botocore's ``before-send`` hook: every attempt checks the deadline first."""
        self.check(f"AWS {event_name.rsplit('.', 1)[-1] or 'request'}")


def parse_deadline(value: str) -> float:
    """``--deadline`` in seconds: a number above 0 and at most a day."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds <= MAX_S:
        raise InputError(f"--deadline {value}: expected seconds above 0 and at most "
                         f"{MAX_S:,.0f} (a day), such as 600")
    return seconds
