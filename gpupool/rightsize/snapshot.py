"""``rightsize --utilisation FILE``: the saved debt document read back as the live figures.

A version 2 document of ``gpupool debt --format json`` (:mod:`gpupool.debt.series`) holds each
pool's row and, under ``pool_series``, its tags, unrounded sums and per-bucket timelines: enough
to rebuild the :class:`~gpupool.debt.model.PoolFigures` the live read gave, so the proposals,
the diff and the pull request's text are the live run's. An older document (no series), a
series that does not match its row, or a timeline that is not the window's length is bad input:
one line naming the file and the key, exit 2. Nothing here calls AWS or Prometheus.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpupool.debt.model import Charge, PoolFigures, Status, Sums, Timeline
from gpupool.debt.series import SERIES_KEY, SERIES_VERSION, TIMELINE_KEYS
from gpupool.debt.window import Window
from gpupool.errors import InputError

_NonNeg = Annotated[float, Field(ge=0)]
_Gpus = list[_NonNeg | None]
HOW = "write one with gpupool debt --format json --output FILE"


class _Doc(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class TimelineDoc(_Doc):
    capacity: _Gpus
    allocated: _Gpus
    used: _Gpus
    measured: _Gpus


class SumsDoc(_Doc):
    capacity_gpu_hours: _NonNeg | None = None
    allocated_gpu_hours: _NonNeg | None = None
    used_gpu_hours: _NonNeg | None = None
    measured_gpu_hours: _NonNeg = 0.0
    unmeasured_gpu_hours: _NonNeg = 0.0
    unattributed_gpu_hours: _NonNeg = 0.0
    idle_gpu_hours: _NonNeg | None = None
    allocated_usd: _NonNeg | None = None
    debt_usd: _NonNeg | None = None


class LineDoc(_Doc):
    team: str
    kind: Literal["pool", "namespace", "unattributed", "capacity"]
    namespace: str | None = None
    status: Status
    cost_center: str | None = None
    pods: list[str] = []
    sums: SumsDoc
    timeline: TimelineDoc


class SeriesDoc(_Doc):
    pool: Annotated[str, Field(min_length=1)]
    account: str | None = None
    region: str | None = None
    tags: dict[str, str]
    on_demand_base: Annotated[int, Field(ge=0)] | None = None
    price_per_gpu_hour: _NonNeg | None = None
    peak_in_service: _NonNeg | None = None
    memory_utilisation: _NonNeg | None = None
    group_metric_hours: _NonNeg
    expected_hours: _NonNeg
    sums: SumsDoc
    timeline: TimelineDoc
    lines: list[LineDoc] = []
    namespace_quota: dict[str, _NonNeg] = {}
    autoscalers: list[dict[str, Any]] = []


class RowDoc(_Doc):
    pool: Annotated[str, Field(min_length=1)]
    platform: Literal["aws", "kubernetes", "on-prem"] = "aws"
    role: str = "pool"
    team: str | None = None
    cost_center: str | None = None
    instance_type: str
    gpu_model: str = ""
    gpus_per_instance: _NonNeg
    min_size: Annotated[int, Field(ge=0)] | None = None
    max_size: Annotated[int, Field(ge=0)] | None = None
    desired_capacity: Annotated[int, Field(ge=0)] | None = None
    target_utilisation: _NonNeg | None = None
    spot_share: _NonNeg | None = None
    status: Status
    impossible_readings: Annotated[int, Field(ge=0)] = 0
    gpu_limit: _NonNeg | None = None
    source: str = ""
    arn: str = ""


class WindowDoc(_Doc):
    start: datetime
    end: datetime
    period_s: Annotated[int, Field(gt=0)]


class DocumentDoc(_Doc):
    version: int
    region: str | None = None
    window: WindowDoc
    pools: list[RowDoc]
    pool_series: list[SeriesDoc]


@dataclass(frozen=True)
class SavedPool:
    """A pool as the saved document describes it (the :class:`PoolInfo` the report gave)."""

    name: str
    platform: str
    role: str
    team: str | None
    cost_center: str | None
    instance_type_name: str
    gpu_model: str
    gpus_per_instance: float
    tags: Mapping[str, str] = field(default_factory=dict)
    account: str | None = None
    region: str | None = None
    min_size: int | None = None
    max_size: int | None = None
    desired_capacity: int | None = None
    target_utilisation: float | None = None
    spot_share: float | None = None
    on_demand_base: int | None = None
    gpu_limit: float | None = None
    source: str = ""
    arn: str = ""


@dataclass(frozen=True)
class Saved:
    """What rightsize reads from the file: the window and every pool's figures."""

    path: str
    window: Window
    pools: list[PoolFigures]
    generated_at: datetime | None


def _one_line(lines: list[str]) -> InputError:
    more = f" (and {len(lines) - 1} more problem(s))" if len(lines) > 1 else ""
    return InputError(lines[0] + more)


def _utc(when: datetime) -> datetime:
    return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)


def _version(doc: Mapping[str, Any], shown: str) -> None:
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < SERIES_VERSION:
        got = "no version" if version is None else f"version {version!r}"
        raise InputError(f"{shown}: version: expected a snapshot of version {SERIES_VERSION} "
                         f"or later, with each pool's per-bucket series ({SERIES_KEY}), got "
                         f"{got}: rightsize needs them for the percentile evidence; {HOW}")
    if SERIES_KEY not in doc:
        raise InputError(f"{shown}: {SERIES_KEY}: expected each pool's per-bucket series "
                         f"(rightsize needs them for the percentile evidence); {HOW}")


def _timeline(t: TimelineDoc, buckets: int, where: str, shown: str) -> Timeline:
    for key in TIMELINE_KEYS:
        got = len(getattr(t, key))
        if got != buckets:
            raise InputError(f"{shown}: {where}.timeline.{key}: expected {buckets} value(s), "
                             f"one per bucket of the window, got {got}")
    return Timeline(tuple(t.capacity), tuple(t.allocated), tuple(t.used), tuple(t.measured))


def _sums(s: SumsDoc) -> Sums:
    return Sums(**s.model_dump())


def _figures(row: RowDoc, s: SeriesDoc, i: int, buckets: int, region: str | None,
             shown: str) -> PoolFigures:
    where = f"{SERIES_KEY}[{i}]"
    if s.pool != row.pool:
        raise InputError(f"{shown}: {where}.pool: expected {row.pool!r} (the series follow "
                         f"the pools rows in order), got {s.pool!r}")
    # an AWS row without its own region is the document's (a one-region report's)
    region = s.region or (region if row.platform == "aws" else None)
    info = SavedPool(
        row.pool, row.platform, row.role, row.team, row.cost_center, row.instance_type,
        row.gpu_model, row.gpus_per_instance, dict(s.tags), s.account,
        region, row.min_size, row.max_size, row.desired_capacity,
        row.target_utilisation, row.spot_share, s.on_demand_base, row.gpu_limit, row.source,
        row.arn)
    scope = f"{s.account}/{region or ''}" if s.account else ""
    lines = [Charge(row.pool, c.team, c.kind, c.status, _sums(c.sums),
                    _timeline(c.timeline, buckets, f"{where}.lines[{j}]", shown),
                    c.namespace, c.cost_center, tuple(c.pods), scope)
             for j, c in enumerate(s.lines)]
    return PoolFigures(
        info, row.status, _sums(s.sums), _timeline(s.timeline, buckets, where, shown),
        s.memory_utilisation, s.price_per_gpu_hour, s.group_metric_hours, s.expected_hours,
        s.peak_in_service, impossible_readings=row.impossible_readings, lines=lines,
        namespace_quota=dict(s.namespace_quota), autoscalers=list(s.autoscalers))


def parse_saved(doc: Any, shown: str) -> Saved:
    from gpupool.debt.snapshot import problems

    if not isinstance(doc, dict) or "pools" not in doc or "window" not in doc:
        raise InputError(f"{shown}: expected the JSON of `gpupool debt --format json` "
                         "(an object with window and pools)")
    _version(doc, shown)
    try:
        d = DocumentDoc.model_validate(doc)
    except ValidationError as e:
        raise _one_line(problems(e, shown)) from None
    start, end = _utc(d.window.start), _utc(d.window.end)
    seconds = (end - start).total_seconds()
    if seconds <= 0 or seconds % d.window.period_s:
        raise InputError(f"{shown}: window: expected an end after the start by whole periods "
                         f"of {d.window.period_s} s")
    if len(d.pool_series) != len(d.pools):
        raise InputError(f"{shown}: {SERIES_KEY}: expected one entry per pools row "
                         f"({len(d.pools)}), got {len(d.pool_series)}")
    window = Window(start, end, d.window.period_s)
    pools = [_figures(row, s, i, window.buckets, d.region, shown)
             for i, (row, s) in enumerate(zip(d.pools, d.pool_series, strict=True))]
    when = doc.get("generated_at")
    taken = None
    if isinstance(when, str):
        try:
            taken = _utc(datetime.fromisoformat(when.replace("Z", "+00:00")))
        except ValueError:
            taken = None
    return Saved(shown, window, pools, taken)


def read_saved(path: str | os.PathLike[str]) -> Saved:
    from gpupool.debt.snapshot import load_document

    return parse_saved(load_document(path), str(path))
