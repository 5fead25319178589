"""Messages name properties the way the user's code spells them (issue 7, item 16).

Rules read snake_case inputs whatever the source; a Pulumi user searching their program for
``min_size`` or ``metadata_options`` finds nothing, so a finding on a Pulumi resource must say
``minSize`` / ``metadataOptions.httpTokens``, and one on a Terraform resource the reverse.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from gpupool.catalog import load_catalog
from policies.engine import evaluate
from policies.model import ResourceChange
from policies.rules import ALL_RULES
from policies.rules._common import prop
from policies.settings import Settings
from policies.sources import load_plan
from tests.conftest import FIXTURES


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield str(k)
            yield from _keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _keys(v)


def _foreign_names(change: ResourceChange) -> set[str]:
    """Input names as the *other* tool spells them (only names where the two differ)."""
    pulumi = ":" in change.type
    out = set()
    for key in set(_keys(change.new)) | set(_keys(change.old)):
        if "_" not in key:
            continue
        out.add(key if pulumi else prop("aws:x/y:Z", key))
    return out


def _assert_own_spelling(changes: list[ResourceChange], messages: list[tuple[str, str]]) -> None:
    by_address = {c.address: c for c in changes}
    for address, message in messages:
        change = by_address.get(address)
        if change is None:
            continue
        for name in _foreign_names(change):
            assert not re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", message), (
                f"{change.type} finding names {name!r}: {message}")


CASES = [pytest.param(rule, ex, id=f"{rule.meta.id}:{ex.title}")
         for rule in ALL_RULES for ex in rule.examples]


@pytest.mark.parametrize(("rule", "example"), CASES)
def test_example_messages_use_the_sources_property_names(rule: Any, example: Any) -> None:
    changes = example.changes()
    findings = rule.run(changes, load_catalog(), example.params)
    _assert_own_spelling(changes, [(f.resource, f.message) for f in findings])


@pytest.mark.parametrize("fixture", sorted(
    p.relative_to(FIXTURES).as_posix()
    for sub in ("pulumi", "terraform", "gpupool") for p in (FIXTURES / sub).glob("*.json")))
def test_fixture_findings_use_the_sources_property_names(fixture: str) -> None:
    plan = load_plan(FIXTURES / fixture)
    result = evaluate([plan], Settings.default())
    _assert_own_spelling(list(plan.changes), [(v.resource, v.message) for v in result.violations])


def test_pulumi_findings_name_pulumi_properties() -> None:
    """The cases a Pulumi user meets first: IMDS, scale-from-zero, root volume encryption."""
    from policies.rules.base import Example

    lt = {"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "lt",
          "new": {"instanceType": "g4dn.xlarge"}}
    asg = {"type": "aws:autoscaling/group:Group", "name": "pool",
           "new": {"name": "pool", "minSize": 0, "maxSize": 2,
                   "mixedInstancesPolicy": {"launchTemplate": {
                       "overrides": [{"instanceType": "g4dn.xlarge"}]}}}}
    pol = {"type": "aws:autoscaling/policy:Policy", "name": "util",
           "new": {"autoscalingGroupName": "pool", "policyType": "TargetTrackingScaling",
                   "targetTrackingConfiguration": {
                       "targetValue": 70, "disableScaleIn": True,
                       "customizedMetricSpecification": {
                           "metricName": "nvidia_smi_utilization_gpu", "namespace": "CWAgent",
                           "statistic": "Average", "metricDimensions": [
                               {"name": "AutoScalingGroupName", "value": "pool"}]}}}}
    changes = Example("x", False, [lt, asg, pol]).changes()
    text = " | ".join(f.message for r in ALL_RULES for f in r.run(changes, load_catalog()))
    for name in ("metadataOptions is not set", 'metadataOptions.httpTokens = "required"',
                 "declare the root device in blockDeviceMappings with ebs.encrypted = true",
                 "sets disableScaleIn"):
        assert name in text, (name, text)
    for name in ("metadata_options", "http_tokens", "block_device_mappings",
                 "disable_scale_in"):
        assert name not in text, (name, text)
