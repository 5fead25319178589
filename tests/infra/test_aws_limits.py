"""Every name, description and tag the program emits, held against AWS's documented limits.

The mock runtime never runs AWS's own validation, so these tests stand in for it. The
constraints, with the API reference that states each one, are in ``infra/aws/limits.py``:

- security group name and description: EC2 API_CreateSecurityGroup (GroupName, GroupDescription:
  up to 255 of a-z, A-Z, 0-9, spaces and ._-:/()#,@[]+=&;{}!$*)
- security group rule description: EC2 API_IpRange (Description: same characters, 255)
- EC2 tags: EC2 API_Tag (keys up to 127 characters, not aws:; values up to 256)
- launch template name: EC2 API_CreateLaunchTemplate (3-128 of [a-zA-Z0-9().-/_])
- Auto Scaling group and scaling policy names, Auto Scaling tags: Auto Scaling API reference
  (CreateAutoScalingGroup, PutScalingPolicy, Tag)
- IAM role and instance profile names, role description, IAM tags: IAM API_CreateRole,
  API_CreateInstanceProfile, API_Tag (role name 1-64 of [\\w+=,.@-]; tags: letters, separators,
  numbers and _.:/=+-@)
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpupool.config import load_stack
from gpupool.errors import InputError
from infra.aws import limits
from infra.offline import OfflineError, OfflinePlan, run_offline

from .conftest import EXISTING_VPC_STACK, STACKS

# The longest names and tag values the stack models accept, with every character they allow.
WORST_CASE_STACK = """\
    config:
      aws:region: us-east-1
      gpupool:environment: staging
      gpupool:team: "Team_ .:/=+-@ Zz09"
      gpupool:costCenter: "cc_ .:/=+-@ 0123456789 0123456789 0123456789 0123456789 01234567"
      gpupool:tags:
        "ÄÖÜ key_ .:/=+-@ with every allowed character 0123456789": "välue_ .:/=+-@ ñ 9"
        "k": ""
      gpupool:network:
        createVpc: true
        cidr: 10.70.0.0/16
        azCount: 3
      gpupool:pools:
        - name: p0123456789abcdefghijklmnopqrst9
          gpu: A10G
          minSize: 1
          maxSize: 3
          team: "t_ .:/=+-@"
          costCenter: "c_ .:/=+-@"
"""


def problems_of(plan: OfflinePlan) -> list[str]:
    out = []
    for r in plan.resources:
        if r.custom:
            out += [f"{r.type} {r.name}: {p}"
                    for p in limits.resource_problems(r.type, r.name, r.inputs)]
    return out


@pytest.mark.parametrize("stack", STACKS)
def test_kit_stacks_emit_only_what_aws_accepts(stack: str, stack_plans: dict[str, Any]) -> None:
    _, plan = stack_plans[stack]
    assert problems_of(plan) == []


def test_existing_vpc_stack_emits_only_what_aws_accepts(
    write_stack: Callable[[str, str], Path],
) -> None:
    """Regression: the pool's egress rule to an existing VPC said "the VPC's own endpoints", and
    AWS refuses an apostrophe in a security group rule description."""
    plan = run_offline(load_stack(str(write_stack("edge", EXISTING_VPC_STACK))))
    rules = [r for r in plan.resources if r.type.startswith("aws:vpc/securityGroup")]
    assert rules and all("'" not in r.inputs["description"] for r in rules)
    assert problems_of(plan) == []


def test_worst_case_stack_emits_only_what_aws_accepts(
    write_stack: Callable[[str, str], Path],
) -> None:
    loaded = load_stack(str(write_stack("s-1", WORST_CASE_STACK)))
    plan = run_offline(loaded)
    assert len(plan.resources) > 30
    assert problems_of(plan) == []


@pytest.mark.parametrize(
    ("limit", "value", "expected"),
    [
        (limits.SG_RULE_DESCRIPTION, "HTTPS to the VPC's own endpoints", "characters AWS refuses"),
        (limits.SG_DESCRIPTION, "x" * 256, "0-255 characters"),
        (limits.ROLE_NAME, "r" * 65, "1-64 characters"),
        (limits.ROLE_NAME, "team role", "characters AWS refuses"),
        (limits.LT_NAME, "pool:lt", "characters AWS refuses"),
        (limits.IAM_TAG_VALUE, "R&D", "characters AWS refuses"),
        (limits.EC2_TAG_KEY, "k" * 128, "1-127 characters"),
    ],
)
def test_limits_refuse_what_aws_refuses(limit: limits.Limit, value: str, expected: str) -> None:
    (problem,) = limit.problems(value)
    assert expected in problem
    assert limit.source.startswith("https://docs.aws.amazon.com/")


def test_reserved_tag_prefix_is_refused() -> None:
    found = list(limits.tag_problems("aws:ec2/vpc:Vpc", {"tags": {"aws:owner": "x"}}))
    assert found == ["EC2 tag key 'aws:owner' may not begin with aws: (reserved for AWS)"]


def test_autoname_too_long_for_iam_fails_at_plan_time(
    write_stack: Callable[[str, str], Path],
) -> None:
    """Stack name + pool name + "-role" + Pulumi's 8 characters must fit IAM's 64."""
    text = textwrap.dedent(WORST_CASE_STACK)
    path = write_stack("ml-research-platform-production", text)
    with pytest.raises(OfflineError) as e:
        run_offline(load_stack(str(path)))
    (line,) = e.value.problems
    assert "IAM role name must be 1-64 characters" in line
    assert "shorten the stack name or the pool name" in line


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("gpupool:tags", {"owner": "R&D"}, "gpupool:tags.owner: expected letters, digits"),
        ("gpupool:tags", {"aws:owner": "x"}, "do not begin with aws:"),
        ("gpupool:tags", {"k" * 128: "x"}, "expected at most 127 characters"),
    ],
)
def test_config_refuses_tags_aws_would_refuse(key: str, value: Any, expected: str,
                                             write_stack: Callable[[str, str], Path]) -> None:
    import yaml

    doc = yaml.safe_load(textwrap.dedent(EXISTING_VPC_STACK))
    doc["config"][key] = value
    path = write_stack("t", yaml.safe_dump(doc))
    with pytest.raises(InputError) as e:
        load_stack(str(path))
    assert any(expected in line for line in e.value.problems), e.value.problems


def test_pool_team_with_a_character_iam_refuses_is_a_config_error(
    write_stack: Callable[[str, str], Path],
) -> None:
    text = textwrap.dedent(EXISTING_VPC_STACK).replace(
        "targetGpuUtilisation: 55", "targetGpuUtilisation: 55\n      team: R&D")
    with pytest.raises(InputError) as e:
        load_stack(str(write_stack("t", text)))
    assert any("pools[0].team: expected a tag value" in line for line in e.value.problems)
