"""``rightsize --utilisation FILE``: the saved debt document read back as the live figures.

A version 2 document of ``gpupool debt --format json`` (:mod:`gpupool.debt.series`) holds each
pool's row and, under ``pool_series``, its tags, unrounded sums and per-bucket timelines: enough
to rebuild the :class:`~gpupool.debt.model.PoolFigures` the live read gave, so the proposals,
the diff and the pull request's text are the live run's; since version 3 its Kubernetes and
on-premises pools' entries also carry their namespaces' labels and their pods' timelines (what
:mod:`gpupool.rightsize.kubernetes` needs). A version 2 document's AWS pools are read as before
and its Kubernetes pools are left alone, each saying why (:attr:`Saved.left_alone`). An older
document (no series), a series that does not match its row, a version 3 Kubernetes entry
without its pods or labels, or a timeline that is not the window's length is bad input: one
line naming the file and the key, exit 2. Nothing here calls AWS or Prometheus.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpupool.debt.model import Charge, PodFigures, PoolFigures, Status, Sums, Timeline
from gpupool.debt.series import PODS_VERSION, SERIES_KEY, SERIES_VERSION, TIMELINE_KEYS
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


class PodTimelineDoc(_Doc):
    capacity: _Gpus | None = None  # written only when known: a pod's nodes' capacity
    allocated: _Gpus
    used: _Gpus
    measured: _Gpus


class PodDoc(_Doc):
    namespace: str
    pod: Annotated[str, Field(min_length=1)]
    node: str
    team: str
    status: Literal["measured", "partial", "not measured", "unattributed"]
    allocated_gpu_hours: _NonNeg
    used_gpu_hours: _NonNeg | None
    measured_gpu_hours: _NonNeg
    unmeasured_gpu_hours: _NonNeg
    unattributed_gpu_hours: _NonNeg
    debt_usd: _NonNeg | None
    first_bucket: Annotated[int, Field(ge=0)] = 0
    timeline: PodTimelineDoc | None


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
    namespace_labels: dict[str, dict[str, str]] | None = None  # version 3: Kubernetes pools
    pods: list[PodDoc] | None = None  # version 3: Kubernetes pools


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
    version: int = PODS_VERSION
    # the Kubernetes and on-premises pools rightsize can size (their pods and labels saved)
    kubernetes: list[PoolFigures] = field(default_factory=list)
    left_alone: list[tuple[str, str]] = field(default_factory=list)  # (pool, why): the others


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


def _pod(pool: str, p: PodDoc, buckets: int, where: str, shown: str) -> PodFigures:
    timeline = None
    if p.timeline is not None:
        t = p.timeline
        n = len(t.allocated)
        for key in TIMELINE_KEYS:
            values = getattr(t, key)
            if values is not None and len(values) != n:
                raise InputError(f"{shown}: {where}.timeline.{key}: expected {n} value(s), as "
                                 f"many as allocated, got {len(values)}")
        if p.first_bucket + n > buckets:
            raise InputError(f"{shown}: {where}.first_bucket: expected the pod's {n} "
                             f"value(s) to end within the window's {buckets} buckets, got "
                             f"first_bucket {p.first_bucket}")
        before, after = (None,) * p.first_bucket, (None,) * (buckets - p.first_bucket - n)

        def pad(values: list[float | None] | None) -> tuple[float | None, ...]:
            return (*before, *(values if values is not None else (None,) * n), *after)

        timeline = Timeline(pad(t.capacity), pad(t.allocated), pad(t.used), pad(t.measured))
    return PodFigures(pool, p.namespace, p.pod, p.node, p.team, p.status,
                      p.allocated_gpu_hours, p.used_gpu_hours, p.measured_gpu_hours,
                      p.unmeasured_gpu_hours, p.unattributed_gpu_hours, p.debt_usd, timeline)


def _kube_parts(row: RowDoc, s: SeriesDoc, version: int, buckets: int, where: str,
                shown: str) -> tuple[list[PodFigures], dict[str, dict[str, str]]] | None:
    """A Kubernetes entry's pods and namespace labels; None for a version 2 document's."""
    if row.platform == "aws":
        return [], {}
    if version < PODS_VERSION:
        return None
    for key in ("namespace_labels", "pods"):
        if getattr(s, key) is None:
            raise InputError(f"{shown}: {where}.{key}: expected the {key.replace('_', ' ')} "
                             f"of a {row.platform} pool (a version {PODS_VERSION} document "
                             f"carries them); {HOW}")
    pods = [_pod(row.pool, p, buckets, f"{where}.pods[{j}]", shown)
            for j, p in enumerate(s.pods or [])]
    return pods, {ns: dict(lb) for ns, lb in (s.namespace_labels or {}).items()}


def _figures(row: RowDoc, s: SeriesDoc, i: int, buckets: int, region: str | None,
             shown: str, version: int) -> tuple[PoolFigures, bool]:
    """The pool's figures, and whether they are whole (a version 2 Kubernetes pool's: not)."""
    where = f"{SERIES_KEY}[{i}]"
    if s.pool != row.pool:
        raise InputError(f"{shown}: {where}.pool: expected {row.pool!r} (the series follow "
                         f"the pools rows in order), got {s.pool!r}")
    kube = _kube_parts(row, s, version, buckets, where, shown)
    pods, labels = kube if kube is not None else ([], {})
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
        pods=pods, namespace_quota=dict(s.namespace_quota), autoscalers=list(s.autoscalers),
        namespace_labels=labels), kube is not None


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
    read = [_figures(row, s, i, window.buckets, d.region, shown, d.version)
            for i, (row, s) in enumerate(zip(d.pools, d.pool_series, strict=True))]
    pools = [f for f, _ in read]
    kube = [f for f, whole in read if whole and f.platform != "aws"]
    left = [(f.name, f"the snapshot is format version {d.version}, which does not carry "
             "the pods' series and namespace labels of Kubernetes and on-premises pools: not "
             f"proposed from it; write a version {PODS_VERSION} one with gpupool debt --stack "
             "STACK --format json --output FILE") for f, whole in read if not whole]
    when = doc.get("generated_at")
    taken = None
    if isinstance(when, str):
        try:
            taken = _utc(datetime.fromisoformat(when.replace("Z", "+00:00")))
        except ValueError:
            taken = None
    return Saved(shown, window, pools, taken, d.version, kube, left)


def read_saved(path: str | os.PathLike[str]) -> Saved:
    from gpupool.debt.snapshot import load_document

    return parse_saved(load_document(path), str(path))
