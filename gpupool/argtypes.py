"""argparse types for figures on the command line: a bad one is one line and exit 2.

Kept apart from the commands (and free of heavy imports) because ``gpupool.cli`` declares every
command's arguments before any command module is imported.
"""

from __future__ import annotations

import argparse
import math


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
