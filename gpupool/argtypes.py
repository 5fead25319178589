"""argparse types for figures on the command line: a bad one is one line and exit 2.

Kept apart from the commands (and free of heavy imports) because ``gpupool.cli`` declares every
command's arguments before any command module is imported.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _number(text: str, *, strict: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value < 0 or (strict and value == 0):
        kind = "more than 0" if strict else "at least 0"
        raise argparse.ArgumentTypeError(f"expected a finite number {kind}, got {text!r}")
    return value


def positive(text: str) -> float:
    """A finite number > 0 (a bandwidth, an overhead budget, a duration)."""
    return _number(text, strict=True)


def non_negative(text: str) -> float:
    """A finite number ≥ 0 (an RTT)."""
    return _number(text, strict=False)


def count(text: str) -> int:
    """A whole number ≥ 1 (streams, rows)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def at_most(limit: float, kind: Callable[[str], float] = positive, unit: str = ""
            ) -> Callable[[str], float]:
    """``kind`` (positive, non_negative) and at most ``limit``: an absurd figure (``--seconds
    1e300``, ``--timeout 1e12``) is refused before it overflows a clock or a sleep."""

    def parse(text: str) -> float:
        value = kind(text)
        if value > limit:
            raise argparse.ArgumentTypeError(f"expected at most {limit:,g}{unit}, got {text!r}")
        return value

    parse.__name__ = kind.__name__
    return parse


def between(low: float, high: float, unit: str = "") -> Callable[[str], float]:
    """A finite number from ``low`` to ``high``: a bandwidth of 1e-300 Gbps is as absurd as
    one of 1e300, and either would make a budget infinite."""

    def parse(text: str) -> float:
        value = _number(text, strict=False)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected a number from {low:,g} to {high:,g}"
                                             f"{unit}, got {text!r}")
        return value

    parse.__name__ = "between"
    return parse


def count_at_most(limit: int) -> Callable[[str], int]:
    """A whole number from 1 to ``limit`` (streams, sessions)."""

    def parse(text: str) -> int:
        value = count(text)
        if value > limit:
            raise argparse.ArgumentTypeError(f"expected a whole number from 1 to {limit:,}, got "
                                             f"{text!r}")
        return value

    parse.__name__ = "count"
    return parse


def listen_port(text: str) -> int:
    """A TCP port to listen on: 1-65535, or 0 for any free one (the server prints it)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65535 (0: any free port), "
                                         f"got {text!r}")
    return value
