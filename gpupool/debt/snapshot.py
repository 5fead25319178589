"""Read a ``gpupool debt --format json`` document back: the utilisation snapshot policies judge.

Deliberately free of boto3 and of the report's own code: the policy engine and the CrossGuard
pack load this module, and a pull-request check must not pay for (or need) an AWS SDK. Only the
keys the guardrail reads are validated; everything else in the document is kept but ignored.
"""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpupool.errors import InputError
from gpupool.jsonio import JsonProblem, loads

MAX_BYTES = 64 * 1024 * 1024
_Fraction = Annotated[float, Field(ge=0, le=1)]
_NonNegative = Annotated[float, Field(ge=0)]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class SnapshotWindow(_Lenient):
    start: datetime
    end: datetime
    period_s: Annotated[int, Field(gt=0)]

    @property
    def hours(self) -> float:
        return (self.end - self.start).total_seconds() / 3600


class SnapshotPool(_Lenient):
    pool: Annotated[str, Field(min_length=1)]
    team: str | None = None
    role: str | None = None  # pool, gpu-proxy or kubernetes-nodes (older snapshots: absent)
    platform: str | None = None  # aws, kubernetes or on-prem (older snapshots: absent, aws)
    account: str | None = None  # AWS pools of a --accounts/--regions report (older: absent)
    region: str | None = None
    instance_type: str
    gpus_per_instance: _NonNegative
    status: str = "measured"
    min_size: Annotated[int, Field(ge=0)] | None = None
    max_size: Annotated[int, Field(ge=0)] | None = None
    desired_capacity: Annotated[int, Field(ge=0)] | None = None
    allocated_gpu_hours: _NonNegative | None = None
    used_gpu_hours: _NonNegative | None = None
    debt_gpu_hours: _NonNegative | None = None
    utilisation: _Fraction | None = None
    debt_usd: _NonNegative | None = None
    price_per_gpu_hour: _NonNegative | None = None
    impossible_readings: Annotated[int, Field(ge=0)] = 0  # left out of the figures

    @property
    def measured(self) -> bool:
        return self.utilisation is not None


class Snapshot(_Lenient):
    generated_at: datetime | None = None
    region: str | None = None
    window: SnapshotWindow
    pools: list[SnapshotPool]
    path: str = ""

    def taken_at(self) -> datetime:
        when = self.generated_at or self.window.end
        return when if when.tzinfo else when.replace(tzinfo=UTC)

    def age(self, now: datetime | None = None) -> timedelta:
        return (now or datetime.now(UTC)) - self.taken_at()

    def by_name(self) -> dict[str, SnapshotPool]:
        return {p.pool: p for p in self.pools}


def _where(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out.lstrip(".") or "(document)"


def _expected(err: Any) -> str:
    kind, ctx = str(err["type"]), err.get("ctx") or {}
    if kind.startswith(("datetime", "date")):
        return "expected an ISO 8601 time such as 2026-11-30T06:00:00Z"
    if kind == "missing":
        return "expected a value: this key is required"
    if kind == "less_than_equal":
        return f"expected at most {ctx.get('le'):g}"
    if kind in ("greater_than_equal", "greater_than"):
        return f"expected at least {ctx.get('ge', ctx.get('gt')):g}"
    if kind.startswith(("float", "int")):
        return "expected a number"
    if kind.startswith("string"):
        return "expected text"
    msg = str(err["msg"]).removeprefix("Value error, ")
    return f"expected {msg[:1].lower()}{msg[1:]}"


def parse_snapshot(doc: Any, path: str) -> Snapshot:
    """Validate a parsed document; :class:`InputError` names the file and every bad key."""
    if not isinstance(doc, dict) or "pools" not in doc or "window" not in doc:
        raise InputError(f"{path}: expected the JSON of `gpupool debt --format json` "
                         "(an object with window and pools)")
    try:
        snap = Snapshot.model_validate({**doc, "path": path})
    except ValidationError as e:
        raise InputError(problems(e, path)) from None
    return snap


def problems(e: ValidationError, path: str) -> list[str]:
    """One line per bad key of a snapshot: the file, the key, what was expected (and got)."""
    lines = []
    for err in e.errors(include_url=False):
        got = err.get("input")
        shown = "" if isinstance(got, dict | list) or err["type"] == "missing" else (
            f", got {got!r}")
        lines.append(f"{path}: {_where(tuple(err['loc']))}: {_expected(err)}{shown}")
    return lines


def load_document(path: str | os.PathLike[str]) -> Any:
    """The parsed JSON of a snapshot file (not yet validated); bad files are one InputError."""
    from gpupool.inputs import read_regular

    shown = str(path)
    raw = read_regular(path, shown, limit=MAX_BYTES, what="a utilisation snapshot",
                       missing=" (write one with gpupool debt --format json --output FILE)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{shown}: expected UTF-8 text (byte {e.start} is not)") from None
    try:
        doc = loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{shown}: line {e.lineno}: expected JSON ({e.msg})") from None
    except JsonProblem as e:
        raise InputError(f"{shown}: {e}") from None
    return doc


def read_snapshot(path: str | os.PathLike[str]) -> Snapshot:
    return parse_snapshot(load_document(path), str(path))


class SnapshotCache:
    """Snapshots by path, re-read only when the file changes (the pack is called per stack)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[tuple[int, int], Snapshot]] = {}

    def load(self, path: str) -> Snapshot:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return read_snapshot(path)  # its message: no such file, and how to make one
        except OSError as e:
            raise InputError(f"{path}: cannot read ({e.strerror})") from None
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            hit = self._entries.get(path)
            if hit is not None and hit[0] == stamp:
                return hit[1]
        snap = read_snapshot(path)
        with self._lock:
            self._entries[path] = (stamp, snap)
        return snap


CACHE = SnapshotCache()
