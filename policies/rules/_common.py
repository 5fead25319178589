# ruff: noqa: RUF001, RUF002, RUF003  (× is the multiplication sign users read in messages)
"""Wording and numbers the GPU rules share, so every message reads and rounds the same way."""

from __future__ import annotations

from functools import lru_cache

from gpupool.catalog import Catalog, InstanceType
from gpupool.catalog.model import HOURS_PER_MONTH

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Final

CANNOT_VERIFY = "cannot verify"


def cannot_verify(reason: str) -> str:
    return f"{CANNOT_VERIFY}: {reason}"


def usd(value: float) -> str:
    """$0.526, $0.8048, $1,234.5678: at least 3 decimals, at most 4, no float noise."""
    out = f"{abs(value):,.4f}"
    if out.endswith("0"):
        out = out[:-1]
    return ("-$" if value < 0 else "$") + out


def signed_per_hour(delta: float) -> str:
    return ("+" if delta >= 0 else "") + usd(round(delta, 4)) + "/h"


def signed_per_month(delta: float) -> str:
    monthly = round(delta * HOURS_PER_MONTH, 2)
    sign = "+" if monthly >= 0 else "-"
    return f"{sign}${abs(monthly):,.2f}/month"


def cost_change(delta: float | None) -> str:
    """"+$3.826/h (+$2,792.98/month)", or why the change cannot be priced."""
    if delta is None:
        return "cost change unknown (no recorded price)"
    return f"{signed_per_hour(delta)} ({signed_per_month(delta)})"


def prices_of(catalog: Catalog) -> str:
    """Which prices a cost figure uses: the plan's region, or us-east-1 when it names none."""
    region = catalog.meta.get("price_region", "us-east-1")
    if catalog.meta.get("price_region_from") == "plan":
        return f"{region} on-demand prices"
    return f"{region} on-demand prices; the plan names no region"


def count(value: float) -> str:
    if float(value).is_integer():
        return str(int(value))
    from fractions import Fraction  # (and decimal): only for a fractional count

    return str(Fraction(value).limit_denominator(64))


def gpus(t: InstanceType) -> str:
    """"1 × T4", "4 × A10G", "1/8 × L4"."""
    return f"{count(t.gpu_count)} × {t.gpu_model}"


def per_gpu_hour(t: InstanceType) -> str:
    price = t.price_per_gpu_hour
    return "no recorded price" if price is None else f"{usd(price)} per GPU-hour"


@lru_cache(maxsize=8)
def gpu_families(catalog: Catalog) -> frozenset[str]:
    """Families that carry GPUs: a type of such a family missing from the catalog is suspect."""
    return catalog.gpu_families


def family(instance_type: str) -> str:
    return instance_type.split(".", 1)[0]


def not_in_catalog(name: str, catalog: Catalog) -> str:
    """Why a GPU-family type the catalog lacks cannot be judged, and what to do."""
    fam = family(name)
    known = (catalog.meta.get("gpu_families_without_rows") or {}).get(fam)
    if known:
        why = f"{fam} carries GPUs ({known}) but the catalog has no row for it"
    elif fam in catalog.gpu_families:
        why = f"{fam} instances carry GPUs, but the catalog has no {name}"
    else:
        why = (f"{fam} is not a family the catalog knows, and p/g/gr families carry GPUs")
    return (f"{name} is not in the GPU catalog: {why} (check the name; refresh the catalog "
            "with gpupool catalog refresh)")


def respelled(written: str, name: str) -> str:
    """A type written otherwise than EC2 names it: judged as ``name``, refused by AWS as is."""
    return (f"instance type {written!r} is not written as EC2 names types (lowercase, no "
            f"spaces): AWS refuses it as written (InvalidParameterValue); judged as {name}")


# Terraform blocks that Pulumi's AWS provider names in the plural (a list of objects): the
# camel-cased Terraform name would be a property Pulumi does not have.
_PULUMI_RENAMED: Final = {
    "ebs_block_device": "ebsBlockDevices",
    "ephemeral_block_device": "ephemeralBlockDevices",
    "network_interface": "networkInterfaces",
    "override": "overrides",
    "tag": "tags",
    "metric_dimension": "metricDimensions",
    "step_adjustment": "stepAdjustments",
}


def _camel(part: str) -> str:
    part, bracket, index = part.partition("[")  # override[1] → overrides[1]
    suffix = bracket + index
    renamed = _PULUMI_RENAMED.get(part)
    if renamed is not None:
        return renamed + suffix
    words = part.split("_")
    return words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:]) + suffix


@lru_cache(maxsize=4096)  # bounded: types and paths come from the plan
def prop(resource_type: str, path: str) -> str:
    """A property path as the user wrote it: ``metadataOptions.httpTokens`` on a Pulumi resource
    (type tokens contain ``:``), ``metadata_options.http_tokens`` on a Terraform one.

    Rules see snake_case inputs whatever the source; messages name the property in the user's
    own spelling so it can be searched for in their code. ``path`` is always written in
    Terraform's snake_case (dots between nested keys); blocks Pulumi pluralises
    (``ebs_block_device`` → ``ebsBlockDevices``) are renamed.

    Worked out once per type and path (messages of a large plan name the same few properties
    of the same few types thousands of times).
    """
    if resource_type == "kubernetes_manifest":  # the object as written, under `manifest`
        return "manifest." + ".".join(_camel(part) for part in path.split("."))
    if ":" not in resource_type:
        return path
    return ".".join(_camel(part) for part in path.split("."))
