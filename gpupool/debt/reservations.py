# ruff: noqa: RUF002, RUF003  (× is the multiplication sign users read)
"""Reserved GPU capacity nobody uses: On-Demand Capacity Reservations and Capacity Blocks for ML.

Both are billed whether or not an instance runs in them. ``DescribeCapacityReservations`` (one
call a page of 1,000, every reservation of the account and region) says each one's instance
type, zone, total and available instance counts, state, start and end, match criteria
(``open``: any matching instance uses it; ``targeted``: only launches that name it) and
reservation type (``default`` or ``capacity-block``); its ``team`` tag says who pays.

Over the window, for a reservation of *g* GPUs per instance that is ``active`` now:

- reserved GPU-hours = TotalInstanceCount × g × hours of the window it was in force (from
  ``max(start, window start)`` to ``min(end, window end)``);
- **unused GPU-hours** = AvailableInstanceCount × g × the same hours, on the API's basis: the
  count it answers now is taken to have held over the window (the API has no history; a
  reservation whose use changed during the window is better judged from CloudWatch's
  ``AWS/EC2CapacityReservations`` metrics, which the report does not read yet);
- dollars = unused instance-hours × the type's on-demand price in the region (what an ODCR
  costs; a Capacity Block's price was its upfront fee, which the API does not give, so its
  dollars are on-demand-equivalent and say so).

A reservation that expired or was cancelled during the window was billed for part of it, but
what it left unused then is not known: it is listed, its unused figures ``None``. Each
reservation names the pools that could use it: GPU pools of the same instance type with a
subnet in its zone (an ``open`` one they use as they scale out; a ``targeted`` one needs their
launch template's ``CapacityReservationSpecification`` to name it).

moto does not implement ``DescribeCapacityReservations``: the tests answer it with botocore's
``Stubber``, which checks requests and answers against the EC2 service model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gpupool.catalog import Catalog
from gpupool.debt.aws import Clients, aws_errors, paginate
from gpupool.debt.discover import TEAM_KEYS, Pool
from gpupool.debt.model import UNTAGGED
from gpupool.debt.window import Window, iso

COLUMNS = ("reservation", "kind", "account", "region", "zone", "instance_type", "gpu_model",
           "gpus_per_instance", "team", "state", "match", "start", "end", "total_instances",
           "available_instances", "hours_in_window", "reserved_gpu_hours", "unused_gpu_hours",
           "unused_usd", "price_basis", "basis", "pools_that_could_use_it", "advice")
BILLED_NOW = ("active",)
ENDED = ("expired", "cancelled")


@dataclass(frozen=True)
class Reservation:
    id: str
    instance_type: str
    zone: str
    total: int
    available: int
    state: str
    kind: str  # default (an On-Demand Capacity Reservation) | capacity-block
    match: str  # open | targeted
    start: datetime | None
    end: datetime | None
    team: str | None
    account: str | None = None
    region: str | None = None
    platform: str = ""
    tenancy: str = "default"
    owner: str = ""  # OwnerId: the account that owns it (shared reservations: another one)


def _team(tags: Sequence[Mapping[str, Any]]) -> str | None:
    lowered = {str(t.get("Key", "")).casefold(): str(t.get("Value", "")) for t in tags}
    for key in TEAM_KEYS:
        if lowered.get(key):
            return lowered[key]
    return None


def _utc(value: Any) -> datetime | None:
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def read_reservations(clients: Clients) -> list[Reservation]:
    """Every capacity reservation of the clients' account and region."""
    out = []
    with aws_errors("DescribeCapacityReservations", str(clients.ec2.meta.endpoint_url)):
        for r in paginate(clients.ec2, "describe_capacity_reservations",
                          "CapacityReservations", PaginationConfig={"PageSize": 1000}):
            out.append(Reservation(
                id=str(r.get("CapacityReservationId", "")),
                instance_type=str(r.get("InstanceType", "")),
                zone=str(r.get("AvailabilityZone", "")),
                total=int(r.get("TotalInstanceCount") or 0),
                available=int(r.get("AvailableInstanceCount") or 0),
                state=str(r.get("State", "")),
                kind=str(r.get("ReservationType") or "default"),
                match=str(r.get("InstanceMatchCriteria") or "open"),
                start=_utc(r.get("StartDate")),
                end=_utc(r.get("EndDate")),
                team=_team(r.get("Tags") or []),
                account=clients.account,
                owner=str(r.get("OwnerId") or ""),
                region=clients.region,
                platform=str(r.get("InstancePlatform", "")),
                tenancy=str(r.get("Tenancy", "default")),
            ))
    return sorted(out, key=lambda r: r.id)


def hours_in(r: Reservation, window: Window) -> float:
    """Hours of the window the reservation was in force (billed)."""
    start = max(r.start or window.start, window.start)
    end = min(r.end or window.end, window.end)
    return max((end - start).total_seconds() / 3600, 0.0)


def users(r: Reservation, pools: Sequence[Pool]) -> list[str]:
    """GPU pools of the same account, region and instance type with a subnet in its zone."""
    return sorted(p.name for p in pools
                  if r.instance_type in p.instance_types and r.zone in p.zones
                  and (p.account, p.region) == (r.account, r.region))


def reservation_rows(reservations: Sequence[Reservation], pools: Sequence[Pool],
                     window: Window, catalog: Catalog) -> list[dict[str, Any]]:
    """The JSON rows: one per GPU reservation in force during the window."""
    rows = []
    for r in reservations:
        itype = catalog.get(r.instance_type)
        if itype is None or not itype.gpu_count:
            continue  # not a GPU type: not this report's business
        hours = hours_in(r, window)
        if hours <= 0 or r.state not in BILLED_NOW + ENDED:
            continue
        g = float(itype.gpu_count)
        known = r.state in BILLED_NOW
        unused_h = r.available * g * hours if known else None
        price = itype.price_per_hour
        usd = None if unused_h is None or price is None else unused_h / g * price
        who = users(r, pools)
        rows.append({
            "reservation": r.id, "kind": r.kind, "account": r.account or r.owner or None,
            "region": r.region,
            "zone": r.zone, "instance_type": r.instance_type, "gpu_model": itype.gpu_model,
            "gpus_per_instance": g, "team": r.team, "state": r.state, "match": r.match,
            "start": iso(r.start) if r.start else None, "end": iso(r.end) if r.end else None,
            "total_instances": r.total, "available_instances": r.available if known else None,
            "hours_in_window": round(hours, 3),
            "reserved_gpu_hours": round(r.total * g * hours, 3),
            "unused_gpu_hours": None if unused_h is None else round(unused_h, 3),
            "unused_usd": None if usd is None else round(usd, 2),
            "price_basis": "on-demand equivalent (a Capacity Block's upfront fee is not in "
                           "the API)" if r.kind == "capacity-block" else "on-demand",
            "basis": "the current AvailableInstanceCount over the hours in the window"
                     if known else f"{r.state}: its use while in force is not in the API",
            "pools_that_could_use_it": who,
            "advice": _advice(r, who, known),
        })
    return rows


def _advice(r: Reservation, who: list[str], known: bool) -> str:
    if not known:
        return ""
    if r.available == 0:
        return "fully used"
    spare = f"{r.available} of {r.total} {r.instance_type} in {r.zone} unused"
    if not who:
        return (f"{spare}, and no GPU pool of that type has a subnet in {r.zone}: "
                "move a pool there, or let the reservation go" + (
                    "" if r.kind == "capacity-block" else " (cancel it)"))
    names = ", ".join(who)
    if r.match == "open":
        return (f"{spare}: {names} can use it as they scale out (open: matching instances "
                "use it by themselves); lower its count, or raise their minimum into it")
    return (f"{spare}: {names} can use it once their launch template's "
            f"CapacityReservationSpecification targets {r.id} (it is targeted)")


def by_team(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reserved-but-unused GPU-hours and dollars per team (their tags)."""
    teams: dict[str, dict[str, Any]] = {}
    for row in rows:
        t = teams.setdefault(row["team"] or UNTAGGED, {
            "team": row["team"] or UNTAGGED, "reservations": 0, "reserved_gpu_hours": 0.0,
            "unused_gpu_hours": 0.0, "unused_usd": 0.0, "unpriced": 0, "not_known": 0})
        t["reservations"] += 1
        t["reserved_gpu_hours"] += row["reserved_gpu_hours"]
        if row["unused_gpu_hours"] is None:
            t["not_known"] += 1
            continue
        t["unused_gpu_hours"] += row["unused_gpu_hours"]
        if row["unused_usd"] is None:
            t["unpriced"] += 1
        else:
            t["unused_usd"] += row["unused_usd"]
    out = []
    for t in teams.values():
        for k in ("reserved_gpu_hours", "unused_gpu_hours"):
            t[k] = round(t[k], 3)
        t["unused_usd"] = round(t["unused_usd"], 2)
        out.append(t)
    return sorted(out, key=lambda t: (-t["unused_usd"], t["team"]))


def totals(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    known = [r for r in rows if r["unused_gpu_hours"] is not None]
    return {"reservations": len(rows),
            "reserved_gpu_hours": round(sum(r["reserved_gpu_hours"] for r in rows), 3),
            "unused_gpu_hours": round(sum(r["unused_gpu_hours"] for r in known), 3),
            "unused_usd": round(sum(r["unused_usd"] or 0.0 for r in known), 2),
            "not_known": len(rows) - len(known)}
