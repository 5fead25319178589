"""``gpupool debt --forecast 90d``: each pool's and team's GPU need for the next N days.

The method, on the report's own history (its window's allocation timeline):

1. **Daily peaks.** For each UTC day of the window, the largest allocation (GPUs) of its
   buckets with data. A day without any known bucket is left out (missing, never zero).
2. **Trend.** With at least ``MIN_TREND_DAYS`` days of peaks, the least-squares line through
   them gives a slope in GPUs per day; with fewer, the trend is taken as flat (0) and the
   forecast says so.
3. **Need.** Every day's peak is moved along the trend to the day of the horizon where it
   matters most (its last day when the trend grows, the first day after the window when it
   falls), and the need is the ``PERCENTILE`` (95th, linear interpolation) of those projected
   peaks, never below zero: the GPUs that would have covered 95 % of the days' peaks, had the
   history already been at the horizon's level.

The need is shown beside today's capacity (the last known capacity bucket, GPUs) and the
headroom between them; a negative headroom is capacity to add before the horizon. Sums for
teams and the total are made from their own timelines (the peaks of a sum, not a sum of
peaks).

:func:`backtest` fits on the first part of a daily history and measures the need against what
followed (the 95th percentile of the next days' peaks and the share of them it covered); the
tests run it on generated histories and docs/debt.md states the error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gpupool.debt.model import Timeline
from gpupool.debt.window import Window
from gpupool.errors import InputError

PERCENTILE = 0.95
MIN_TREND_DAYS = 14
MAX_HORIZON_DAYS = 730
MIN_HISTORY_DAYS = 28  # the default history when --forecast has no --since/--start
METHOD = (f"p{PERCENTILE * 100:.0f} of the daily peak allocation, each day's peak moved along "
          f"the least-squares trend of the peaks (flat with fewer than {MIN_TREND_DAYS} days) "
          "to the horizon's most demanding day")
_HORIZON = re.compile(r"^\s*(\d+)\s*([dw])\s*$")


def parse_horizon(text: str) -> int:
    """``90d``, ``12w`` → days."""
    m = _HORIZON.match(text)
    days = 0 if m is None else int(m[1]) * (7 if m[2] == "w" else 1)
    if not 1 <= days <= MAX_HORIZON_DAYS:
        raise InputError(f"--forecast {text}: expected a horizon in whole days or weeks "
                         f"such as 30d, 90d or 12w, at most {MAX_HORIZON_DAYS}d")
    return days


def daily_peaks(values: Sequence[float | None], window: Window) -> list[tuple[int, float]]:
    """(day index from the window's first UTC day, the day's largest known value)."""
    first = window.start.date()
    peaks: dict[int, float] = {}
    for i, v in enumerate(values):
        if v is None:
            continue
        day = (window.bucket_start(i).date() - first).days
        peaks[day] = max(peaks.get(day, v), v)
    return sorted(peaks.items())


def trend(points: Sequence[tuple[int, float]]) -> float | None:
    """The least-squares slope of the points (per day); None with fewer than MIN_TREND_DAYS."""
    if len(points) < MIN_TREND_DAYS:
        return None
    n = len(points)
    mx = sum(d for d, _ in points) / n
    my = sum(v for _, v in points) / n
    sxx = sum((d - mx) ** 2 for d, _ in points)
    return 0.0 if sxx == 0 else sum((d - mx) * (v - my) for d, v in points) / sxx


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default)."""
    s = sorted(values)
    pos = (len(s) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def project(points: Sequence[tuple[int, float]], last_day: int, horizon_days: int
            ) -> tuple[float | None, float | None]:
    """(need, slope) for ``horizon_days`` after ``last_day`` (the window's last day index)."""
    if not points:
        return None, None
    slope = trend(points)
    b = slope or 0.0
    target = last_day + (horizon_days if b > 0 else 1)
    need = percentile([v + b * (target - d) for d, v in points], PERCENTILE)
    return max(need, 0.0), slope


@dataclass(frozen=True)
class Need:
    """One pool's, team's or the total's forecast; GPUs throughout."""

    name: str
    days: int  # days of history with allocation data
    peak_gpus: float | None  # the largest daily peak in the history
    trend_gpus_per_day: float | None  # None: too short a history for a trend (taken as flat)
    need_gpus: float | None  # None: no allocation data at all
    capacity_gpus: float | None  # today's: the last known capacity bucket

    @property
    def headroom_gpus(self) -> float | None:
        if self.need_gpus is None or self.capacity_gpus is None:
            return None
        return self.capacity_gpus - self.need_gpus

    def to_dict(self, key: str) -> dict[str, Any]:
        def r(v: float | None, digits: int = 2) -> float | None:
            return None if v is None else round(v, digits)

        return {key: self.name, "history_days": self.days, "capacity_gpus": r(self.capacity_gpus),
                "peak_gpus": r(self.peak_gpus), "trend_gpus_per_day": r(
                    self.trend_gpus_per_day, 4), "need_gpus": r(self.need_gpus),
                "headroom_gpus": r(self.headroom_gpus)}


def need_of(name: str, timeline: Timeline, window: Window, horizon_days: int) -> Need:
    points = daily_peaks(timeline.allocated, window)
    last_day = (window.bucket_start(max(window.buckets - 1, 0)).date()
                - window.start.date()).days
    need, slope = project(points, last_day, horizon_days)
    capacity = next((v for v in reversed(timeline.capacity) if v is not None), None)
    return Need(name, len(points), max((v for _, v in points), default=None), slope, need,
                capacity)


@dataclass(frozen=True)
class Forecast:
    horizon_days: int
    history_days: float
    pools: list[Need]
    teams: list[Need]
    total: Need

    def to_dict(self) -> dict[str, Any]:
        return {"horizon_days": self.horizon_days, "history_days": round(self.history_days, 3),
                "method": METHOD, "percentile": PERCENTILE, "unit": "GPUs",
                "pools": [n.to_dict("pool") for n in self.pools],
                "teams": [n.to_dict("team") for n in self.teams],
                "total": self.total.to_dict("scope")}


def forecast(pools: Sequence[tuple[str, Timeline]], teams: Sequence[tuple[str, Timeline]],
             total: Timeline, window: Window, horizon_days: int) -> Forecast:
    return Forecast(horizon_days, window.hours / 24,
                    [need_of(n, t, window, horizon_days) for n, t in pools],
                    [need_of(n, t, window, horizon_days) for n, t in teams],
                    need_of("total", total, window, horizon_days))


@dataclass(frozen=True)
class Backtest:
    need: float | None
    actual_p95: float  # the 95th percentile of the daily peaks that followed
    covered: float  # share of the following days whose peak the need covered

    @property
    def error(self) -> float | None:
        """(need - actual) / actual: positive is capacity to spare."""
        if self.need is None or self.actual_p95 <= 0:
            return None
        return (self.need - self.actual_p95) / self.actual_p95


def backtest(peaks: Sequence[float | None], fit_days: int, horizon_days: int) -> Backtest:
    """Fit on the first ``fit_days`` daily peaks (None: a day without data), forecast
    ``horizon_days``, and compare with the days that followed."""
    points = [(d, v) for d, v in enumerate(peaks[:fit_days]) if v is not None]
    need, _ = project(points, fit_days - 1, horizon_days)
    after = [v for v in peaks[fit_days:fit_days + horizon_days] if v is not None]
    if not after:
        raise ValueError("backtest: no history after the fitted part")
    covered = 0.0 if need is None else sum(v <= need + 1e-9 for v in after) / len(after)
    return Backtest(need, percentile(after, PERCENTILE), covered)
