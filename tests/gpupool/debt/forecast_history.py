"""Generated daily-peak histories for the forecast's backtest: shapes a GPU fleet's
allocation takes, with seeded noise (the same figures every run)."""

from __future__ import annotations

import random
from collections.abc import Callable

DAYS = 180  # fit on the first 90, forecast the next 90

Shape = Callable[[int, random.Random], float | None]


def weekly(d: int) -> float:
    return 3.0 if d % 7 < 5 else 0.0  # weekdays run more


SHAPES: dict[str, Shape] = {
    "flat, weekly": lambda d, rng: 20 + weekly(d) + rng.gauss(0, 2),
    "growing 3 GPUs/month": lambda d, rng: 10 + 0.1 * d + weekly(d) + rng.gauss(0, 1.5),
    "shrinking 3 GPUs/month": lambda d, rng: 40 - 0.1 * d + weekly(d) + rng.gauss(0, 1.5),
    "bursty": lambda d, rng: 8 + (8 if rng.random() < 0.1 else 0) + rng.gauss(0, 0.5),
    "growing, 20% days missing": lambda d, rng: (
        None if rng.random() < 0.2 else 10 + 0.1 * d + weekly(d) + rng.gauss(0, 1.5)),
}


def history(shape: str, seed: int) -> list[float | None]:
    rng = random.Random(f"{shape}/{seed}")
    out: list[float | None] = []
    for d in range(DAYS):
        v = SHAPES[shape](d, rng)
        out.append(None if v is None else max(round(v), 0))  # whole GPUs, never negative
    return out
