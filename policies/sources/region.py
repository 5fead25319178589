"""The AWS region a plan deploys to, where the plan says so: costs are priced for it.

- Terraform (``terraform show -json``): the ``region`` of the ``aws`` provider configurations in
  ``configuration.provider_config`` (a constant, or a root variable the plan gives a value).
- Pulumi preview (``pulumi preview --json``): the stack's ``aws:region`` config, which the
  preview's ``config`` map carries.
- gpupool offline plans carry their stack's region themselves.

A plan whose AWS providers name several regions, or none that can be read, has no region here:
costs are then priced at us-east-1, and messages say so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


@cache
def _region() -> re.Pattern[str]:  # compiled on first use: only a plan naming a region asks
    return re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")


def plan_region(kind: str, doc: Mapping[str, Any]) -> str | None:
    if kind == "terraform":
        return terraform_region(doc)
    if kind == "pulumi-preview":
        return pulumi_region(doc)
    region = doc.get("region")
    return region if isinstance(region, str) and _region().match(region) else None


def terraform_region(doc: Mapping[str, Any]) -> str | None:
    config = doc.get("configuration")
    providers = config.get("provider_config") if isinstance(config, Mapping) else None
    if not isinstance(providers, Mapping):
        return None
    variables = doc.get("variables") if isinstance(doc.get("variables"), Mapping) else {}
    found: set[str] = set()
    for provider in providers.values():
        if not isinstance(provider, Mapping) or provider.get("name") != "aws":
            continue
        expr = (provider.get("expressions") or {}).get("region")
        if not isinstance(expr, Mapping):
            return None  # a provider without a readable region (environment, profile)
        value = expr.get("constant_value")
        refs = expr.get("references")
        if value is None and isinstance(refs, list) and refs and isinstance(refs[0], str):
            var = refs[0].removeprefix("var.") if refs[0].startswith("var.") else None
            entry = variables.get(var) if var else None  # type: ignore[union-attr]
            value = entry.get("value") if isinstance(entry, Mapping) else None
        if not isinstance(value, str) or not _region().match(value):
            return None
        found.add(value)
    return found.pop() if len(found) == 1 else None


def pulumi_region(doc: Mapping[str, Any]) -> str | None:
    config = doc.get("config")
    value = config.get("aws:region") if isinstance(config, Mapping) else None
    return value if isinstance(value, str) and _region().match(value) else None
