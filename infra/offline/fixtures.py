"""One region's offline answers: what is recorded, what is derived, and what is a placeholder.

The offline plan cannot reach AWS, so ``aws.get_availability_zones`` and friends are answered
(``infra.offline.answers``) from a :class:`Fixture`, made of three layers, later ones winning:

1. derived (``infra.offline.derived``): the partition, the S3 prefix list's name, and the marked
   placeholders (AMI ids, the account, the prefix list id, the example VPC);
2. recorded, bundled for every region with recorded prices: ``fixtures/<region>.json``, the
   region's availability zones and the GPU types each zone ID offers (written by
   ``python -m infra.offline.record``); the offerings by zone *name* are derived from them;
3. an override: ``GPUPOOL_OFFLINE_FIXTURES`` may name a directory of ``<region>.json`` files whose
   tables are merged over the others (an existing VPC, the account's own zone names, a region
   without bundled answers).

A region with neither a bundled nor an override file is :class:`NoFixture`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Final

from infra.offline.derived import NotDerivable, derived_tables, offerings_by_name

FIXTURES_ENV: Final = "GPUPOOL_OFFLINE_FIXTURES"
_TABLES: Final = ("ssmParameters", "prefixLists", "vpcs", "instanceTypeOfferings",
                  "instanceTypeOfferingsByZoneId", "images")
RECORDED: Final = ("availabilityZones", "instanceTypeOfferingsByZoneId")


class UnansweredCall(Exception):
    """A data-source call the offline fixtures cannot answer."""


class NoFixture(UnansweredCall):
    """No answers, bundled or overridden, for the region."""

    def __init__(self, region: str, message: str) -> None:
        super().__init__(message)
        self.region = region


@dataclass(frozen=True, slots=True)
class Fixture:
    """One region's answers (read-only); ``layers`` says where each key comes from."""

    region: str
    origin: str  # the file(s) the answers come from, for messages
    data: Mapping[str, Any]
    layers: Mapping[str, str] = field(default_factory=dict)  # key → derived|recorded|override

    def table(self, key: str) -> Mapping[str, Any]:
        value = self.data.get(key)
        return value if isinstance(value, Mapping) else {}

    def record(self, key: str) -> Mapping[str, Any]:
        value = self.data.get(key)
        if not isinstance(value, Mapping):
            raise UnansweredCall(f"{self.origin} has no {key!r} record")
        return value


def bundled_regions() -> list[str]:
    root = resources.files("infra.offline").joinpath("fixtures")
    return sorted(p.name.removesuffix(".json") for p in root.iterdir() if p.name.endswith(".json"))


def load_fixture(region: str) -> Fixture:
    """Derived answers for ``region``, its bundled recording and any override, merged."""
    name = f"{region}.json"
    bundled = resources.files("infra.offline").joinpath("fixtures", name)
    recorded: dict[str, Any] = {}
    origins: list[str] = []
    if bundled.is_file():
        recorded = json.loads(bundled.read_text())
        origins.append(f"infra/offline/fixtures/{name}")
    extra: dict[str, Any] = {}
    extra_dir = os.environ.get(FIXTURES_ENV)
    if extra_dir and (Path(extra_dir) / name).is_file():
        extra_path = Path(extra_dir) / name
        try:
            extra = json.loads(extra_path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise UnansweredCall(f"{extra_path}: cannot read offline fixture ({e})") from None
        if not isinstance(extra, dict):
            raise UnansweredCall(f"{extra_path}: expected a JSON object of offline answers")
        origins.append(str(extra_path))
    if not origins:
        raise NoFixture(region, f"no offline answers for {region}: the bundled ones cover the "
                        f"{len(bundled_regions())} regions with recorded prices")
    try:
        data: dict[str, Any] = derived_tables(region)
    except NotDerivable as e:
        raise UnansweredCall(f"{' + '.join(origins)}: {e}") from None
    layers = dict.fromkeys(data, "derived")
    for layer, doc in (("recorded", recorded), ("override", extra)):
        for key, value in doc.items():
            if key in _TABLES and isinstance(value, dict):
                data[key] = {**data.get(key, {}), **value}
            else:
                data[key] = value
            layers[key] = layer
    zones, by_id = data.get("availabilityZones"), data.get("instanceTypeOfferingsByZoneId")
    if isinstance(zones, list) and isinstance(by_id, dict):
        derived = offerings_by_name(zones, by_id)
        named = extra.get("instanceTypeOfferings")  # an override by zone name wins
        data["instanceTypeOfferings"] = {**derived, **(named if isinstance(named, dict) else {})}
        layers.setdefault("instanceTypeOfferings", "derived")
    return Fixture(region=region, origin=" + ".join(origins), data=data, layers=layers)
