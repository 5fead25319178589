"""The report's time window: ``--since 7d`` or ``--start T --end T``, and its period.

CloudWatch keeps one-minute data for 15 days, five-minute data for 63 days and hourly data for
455 days. A period finer than what is kept for the window's start returns no datapoints, which
the report would then read as "not measured": so such a window is refused here, in one line,
before any API call. Start and end are aligned to the period, so every bucket is whole and
GetMetricData answers with the same bucket timestamps the report counts.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from gpupool.errors import InputError

# Periods the automatic choice picks from (all multiples of 60 s, as GetMetricData requires).
STANDARD_PERIODS = (60, 300, 900, 3600, 21600, 86400)
# Points per series the automatic period aims at: 500 series x 200 points = 100,000, within
# GetMetricData's 100,800 datapoints per call, so each batch of 500 queries is one page.
TARGET_POINTS = 200
MAX_POINTS = 100_800  # GetMetricData's limit per call; more buckets than this per series: refused
# (age of the data, finest period CloudWatch still keeps for it)
RETENTION = ((timedelta(days=15), 60), (timedelta(days=63), 300), (timedelta(days=455), 3600))
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([mhdw])\s*$")
_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


@dataclass(frozen=True, slots=True)
class Window:
    start: datetime  # UTC, aligned to period_s
    end: datetime  # UTC, aligned to period_s, exclusive
    period_s: int

    @property
    def hours(self) -> float:
        return (self.end - self.start).total_seconds() / 3600

    @property
    def buckets(self) -> int:
        return int((self.end - self.start).total_seconds()) // self.period_s

    @property
    def bucket_hours(self) -> float:
        return self.period_s / 3600

    def bucket_start(self, index: int) -> datetime:
        return self.start + timedelta(seconds=index * self.period_s)

    def bucket_of(self, when: datetime) -> int | None:
        """Index of the bucket starting at ``when`` (any timezone), None when outside."""
        offset = (when.astimezone(UTC) - self.start).total_seconds()
        index = int(offset // self.period_s)
        return index if 0 <= index < self.buckets else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": iso(self.start),
            "end": iso(self.end),
            "period_s": self.period_s,
            "hours": round(self.hours, 3),
        }


def iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_duration(text: str, flag: str = "--since") -> timedelta:
    """``90m``, ``12h``, ``7d``, ``2w``."""
    m = _DURATION.match(text)
    if m is None:
        raise InputError(f"{flag} {text}: expected a duration such as 90m, 12h, 7d or 2w")
    seconds = float(m[1]) * _UNITS[m[2]]
    if seconds <= 0:
        raise InputError(f"{flag} {text}: expected a duration longer than zero")
    kept = RETENTION[-1][0]
    if seconds > kept.total_seconds():  # also what keeps timedelta and datetime in range
        raise InputError(f"{flag} {text}: expected at most {kept.days}d (CloudWatch keeps "
                         f"metrics for {kept.days} days)")
    return timedelta(seconds=seconds)


def parse_time(text: str, flag: str) -> datetime:
    """ISO 8601 (``2026-11-23``, ``2026-11-23T06:00``, ``…Z``, ``…+01:00``); naive means UTC."""
    raw = text.strip()
    try:
        when = datetime.fromisoformat(raw[:-1] + "+00:00" if raw.endswith(("Z", "z")) else raw)
    except ValueError:
        raise InputError(
            f"{flag} {text}: expected an ISO 8601 time such as 2026-11-23 or 2026-11-23T06:00Z"
        ) from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _floor(when: datetime, period_s: int) -> datetime:
    epoch = int(when.timestamp())
    return datetime.fromtimestamp(epoch - epoch % period_s, UTC)


def auto_period(length: timedelta, start_age: timedelta) -> int:
    """The smallest standard period that gives at most TARGET_POINTS buckets and that
    CloudWatch still keeps for data as old as the window's start."""
    finest = retention_floor(start_age)
    for period in STANDARD_PERIODS:
        if period >= finest and length.total_seconds() / period <= TARGET_POINTS:
            return period
    return STANDARD_PERIODS[-1]


def retention_floor(age: timedelta) -> int:
    """Finest period CloudWatch keeps for data of this age (seconds); 0 when none is kept."""
    for limit, period in RETENTION:
        if age <= limit:
            return period
    return 0


def resolve_window(
    *,
    since: str | None,
    start: str | None,
    end: str | None,
    period: int | None,
    now: datetime | None = None,
    cloudwatch: bool = True,
) -> Window:
    """The window the flags describe; :class:`InputError` for any window that cannot be read.

    ``cloudwatch`` False (Prometheus only, ``--no-aws``): CloudWatch's retention and its
    datapoint limit do not apply; Prometheus keeps what its own retention keeps."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    if since is not None and (start is not None or end is not None):
        raise InputError("--since cannot be combined with --start/--end: give one or the other")
    if end is not None and start is None:
        raise InputError("--end needs --start: the window is --start T --end T, or --since D")
    if start is not None:
        t0 = parse_time(start, "--start")
        t1 = parse_time(end, "--end") if end is not None else now
        if t1 > now + timedelta(minutes=1):
            raise InputError(f"--end {end}: expected a time in the past (now is {iso(now)})")
        t1 = min(t1, now)
        if t0 >= t1:
            raise InputError(f"--start {start}: expected a time before the end of the window "
                             f"({iso(t1)})")
    else:
        length = parse_duration("7d" if since is None else since)
        t1, t0 = now, now - length
    if period is not None and (period < 60 or period % 60):
        raise InputError(f"--period {period}: expected a whole number of minutes in seconds "
                         "(60, 300, 3600, …), as CloudWatch requires")
    age = now - t0
    chosen = period or auto_period(t1 - t0, age if cloudwatch else timedelta(0))
    finest = retention_floor(age) if cloudwatch else 60
    if finest == 0:
        raise InputError(f"--start {iso(t0)}: CloudWatch keeps metrics for 455 days; the window "
                         "starts before any data it still holds")
    if chosen < finest:
        raise InputError(
            f"--period {chosen}: CloudWatch keeps data from {iso(t0)} at {finest} s resolution "
            f"only; use --period {finest} or more (a finer period returns no data, which would "
            "read as 'not measured')"
        )
    t0a, t1a = _floor(t0, chosen), _floor(t1, chosen)
    if t1a <= t0a:
        raise InputError(f"the window {iso(t0)} .. {iso(t1)} is shorter than one period "
                         f"({chosen} s): widen it or give a smaller --period")
    window = Window(t0a, t1a, chosen)
    if cloudwatch and window.buckets > MAX_POINTS:
        need = math.ceil((t1a - t0a).total_seconds() / MAX_POINTS / 60) * 60
        raise InputError(f"--period {chosen}: {window.buckets:,} points per series is more than "
                         f"GetMetricData returns ({MAX_POINTS:,}); use --period {need} or more")
    return window
