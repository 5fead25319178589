"""The window flags: durations, ISO times, automatic periods, CloudWatch retention, bad input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gpupool.debt.window import auto_period, parse_duration, parse_time, resolve_window
from gpupool.errors import InputError

NOW = datetime(2026, 11, 30, 12, 34, 56, tzinfo=UTC)


def test_since_seven_days_is_168_hourly_buckets_ending_at_the_last_whole_hour() -> None:
    w = resolve_window(since="7d", start=None, end=None, period=None, now=NOW)
    assert w.period_s == 3600
    assert w.end == datetime(2026, 11, 30, 12, tzinfo=UTC)
    assert w.start == w.end - timedelta(days=7)
    assert w.buckets == 168 and w.hours == 168


def test_default_window_is_seven_days() -> None:
    assert resolve_window(since=None, start=None, end=None, period=None, now=NOW).hours == 168


@pytest.mark.parametrize(("length", "age", "period"), [
    (timedelta(hours=6), timedelta(hours=6), 300),     # 72 points
    (timedelta(days=1), timedelta(days=1), 900),       # 96 points
    (timedelta(days=7), timedelta(days=7), 3600),      # 168 points
    (timedelta(days=30), timedelta(days=30), 21600),   # 120 points
    (timedelta(hours=1), timedelta(days=20), 300),     # 20 days old: 5-minute data only
    (timedelta(hours=1), timedelta(days=70), 3600),    # 70 days old: hourly data only
])
def test_auto_period_keeps_one_page_and_respects_retention(length: timedelta, age: timedelta,
                                                           period: int) -> None:
    assert auto_period(length, age) == period


def test_start_end_are_aligned_to_the_period() -> None:
    w = resolve_window(since=None, start="2026-11-29T06:10:00Z", end="2026-11-29T11:50+00:00",
                       period=3600, now=NOW)
    assert (w.start, w.end) == (datetime(2026, 11, 29, 6, tzinfo=UTC),
                                datetime(2026, 11, 29, 11, tzinfo=UTC))
    assert w.bucket_of(datetime(2026, 11, 29, 8, 30, tzinfo=UTC)) == 2
    assert w.bucket_of(datetime(2026, 11, 29, 11, 0, tzinfo=UTC)) is None


def test_naive_and_date_only_times_are_utc() -> None:
    assert parse_time("2026-11-23", "--start") == datetime(2026, 11, 23, tzinfo=UTC)
    assert parse_time("2026-11-23T06:00+02:00", "--start") == datetime(2026, 11, 23, 4,
                                                                        tzinfo=UTC)


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"since": "7x"}, "--since 7x: expected a duration such as 90m, 12h, 7d or 2w"),
    ({"since": "0d"}, "--since 0d: expected a duration longer than zero"),
    ({"since": "7d", "start": "2026-11-01"}, "--since cannot be combined with --start/--end"),
    ({"end": "2026-11-01"}, "--end needs --start"),
    ({"start": "yesterday"}, "--start yesterday: expected an ISO 8601 time"),
    ({"start": "2026-11-29", "end": "2026-11-28"}, "expected a time before the end"),
    ({"start": "2026-11-29", "end": "2027-01-01"}, "--end 2027-01-01: expected a time in the "
                                                   "past"),
    ({"since": "7d", "period": 90}, "--period 90: expected a whole number of minutes"),
    ({"start": "2026-10-01", "end": "2026-10-02", "period": 60},
     "--period 60: CloudWatch keeps data from 2026-10-01T00:00:00Z at 300 s resolution only"),
    ({"start": "2025-01-01"}, "CloudWatch keeps metrics for 455 days"),
    ({"since": "30m", "period": 3600}, "shorter than one period"),
])
def test_bad_windows_are_one_line_input_errors(kwargs: dict[str, object], expected: str) -> None:
    args = {"since": None, "start": None, "end": None, "period": None, **kwargs}
    with pytest.raises(InputError) as e:
        resolve_window(**args, now=NOW)  # type: ignore[arg-type]
    assert len(e.value.problems) == 1 and expected in e.value.problems[0]


def test_durations() -> None:
    assert parse_duration("90m") == timedelta(minutes=90)
    assert parse_duration("2w") == timedelta(days=14)
    assert parse_duration("1.5h") == timedelta(minutes=90)
