"""AWS's documented character sets and lengths for the names, descriptions and tags we emit.

The program runs under the mock runtime in tests, where AWS's own validation never happens: a
description with an apostrophe, or a role name one character too long, passes every offline check
and fails at ``pulumi up``. Each constraint below quotes the API reference that states it; the
same table serves the program (names checked before any resource is declared) and the tests
(every value of every offline plan checked against it).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

# Pulumi autonaming appends "-" and 7 random hex characters to the logical name (and refuses a
# name that would then exceed the provider's maximum: it does not truncate).
AUTONAME_SUFFIX: Final = 8

_EC2_TEXT: Final = r"[a-zA-Z0-9 ._\-:/()#,@\[\]+=&;{}!$*]*"
# AWS's XmlString: tab, newlines and every character from U+0020 but surrogates, U+FFFE, U+FFFF
_XML_STRING: Final = "[\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff\r\n\t]*"


@dataclass(frozen=True, slots=True)
class Limit:
    """One documented constraint: a length range and the characters allowed."""

    what: str
    min_len: int
    max_len: int
    pattern: str | None  # full-match regular expression, or None when any character goes
    source: str  # the API reference that documents it
    check: Callable[[str], bool] | None = None  # for character classes ``re`` cannot spell

    def problems(self, value: str) -> list[str]:
        out = []
        if not self.min_len <= len(value) <= self.max_len:
            out.append(
                f"{self.what} must be {self.min_len}-{self.max_len} characters, "
                f"{value!r} has {len(value)}"
            )
        if self.pattern is not None and re.fullmatch(self.pattern, value) is None:
            bad = sorted({c for c in value if re.fullmatch(self.pattern, c) is None})
            out.append(f"{self.what} {value!r} has characters AWS refuses: {''.join(bad)!r}")
        if self.check is not None and not self.check(value):
            bad = sorted({c for c in value if not self.check(c)})
            out.append(f"{self.what} {value!r} has characters AWS refuses: {''.join(bad)!r}")
        return out


def _iam_tag_chars(value: str) -> bool:
    """IAM tags: ``[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]`` (letters, separators, numbers, and _.:/=+-@)."""
    return all(unicodedata.category(c)[0] in "LZN" or c in "_.:/=+-@" for c in value)


EC2: Final = "https://docs.aws.amazon.com/AWSEC2/latest/APIReference"
IAM: Final = "https://docs.aws.amazon.com/IAM/latest/APIReference"
ASG: Final = "https://docs.aws.amazon.com/autoscaling/ec2/APIReference"
CLOUD_MAP: Final = "https://docs.aws.amazon.com/cloud-map/latest/api"
CLOUDWATCH: Final = "https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference"
SNS: Final = "https://docs.aws.amazon.com/sns/latest/api"
KMS: Final = "https://docs.aws.amazon.com/kms/latest/APIReference"

SG_NAME: Final = Limit("security group name", 1, 255, _EC2_TEXT,
                       f"{EC2}/API_CreateSecurityGroup.html (GroupName)")
SG_DESCRIPTION: Final = Limit("security group description", 0, 255, _EC2_TEXT,
                              f"{EC2}/API_CreateSecurityGroup.html (GroupDescription)")
SG_RULE_DESCRIPTION: Final = Limit("security group rule description", 0, 255, _EC2_TEXT,
                                   f"{EC2}/API_IpRange.html (Description)")
EC2_TAG_KEY: Final = Limit("EC2 tag key", 1, 127, None, f"{EC2}/API_Tag.html (Key)")
EC2_TAG_VALUE: Final = Limit("EC2 tag value", 0, 256, None, f"{EC2}/API_Tag.html (Value)")
LT_NAME: Final = Limit("launch template name", 3, 128, r"[a-zA-Z0-9().\-/_]+",
                       f"{EC2}/API_CreateLaunchTemplate.html (LaunchTemplateName)")
LT_DESCRIPTION: Final = Limit("launch template version description", 0, 255, None,
                              f"{EC2}/API_CreateLaunchTemplate.html (VersionDescription)")
ASG_NAME: Final = Limit("Auto Scaling group name", 1, 255, _XML_STRING,
                        f"{ASG}/API_CreateAutoScalingGroup.html (AutoScalingGroupName)")
ASG_POLICY_NAME: Final = Limit("scaling policy name", 1, 255, _XML_STRING,
                               f"{ASG}/API_PutScalingPolicy.html (PolicyName)")
ASG_TAG_KEY: Final = Limit("Auto Scaling tag key", 1, 128, _XML_STRING, f"{ASG}/API_Tag.html")
ASG_TAG_VALUE: Final = Limit("Auto Scaling tag value", 0, 256, _XML_STRING,
                             f"{ASG}/API_Tag.html")
ROLE_NAME: Final = Limit("IAM role name", 1, 64, r"[\w+=,.@-]+",
                         f"{IAM}/API_CreateRole.html (RoleName)")
ROLE_DESCRIPTION: Final = Limit("IAM role description", 0, 1000,
                                "[\u0009\u000a\u000d\u0020-\u007e\u00a1-\u00ff]*",
                                f"{IAM}/API_CreateRole.html (Description)")
ROLE_POLICY_NAME: Final = Limit("IAM inline policy name", 1, 128, r"[\w+=,.@-]+",
                                f"{IAM}/API_PutRolePolicy.html (PolicyName)")
PROFILE_NAME: Final = Limit("instance profile name", 1, 128, r"[\w+=,.@-]+",
                            f"{IAM}/API_CreateInstanceProfile.html (InstanceProfileName)")
IAM_TAG_KEY: Final = Limit("IAM tag key", 1, 128, None, f"{IAM}/API_Tag.html (Key)",
                           check=_iam_tag_chars)
IAM_TAG_VALUE: Final = Limit("IAM tag value", 0, 256, None, f"{IAM}/API_Tag.html (Value)",
                             check=_iam_tag_chars)

PLACEMENT_GROUP_NAME: Final = Limit("placement group name", 1, 255, r"[\x00-\x7f]+",
                                    f"{EC2}/API_CreatePlacementGroup.html (GroupName: up to 255 "
                                    "ASCII characters)")
LIFECYCLE_HOOK_NAME: Final = Limit("lifecycle hook name", 1, 255, r"[A-Za-z0-9\-_\/]+",
                                   f"{ASG}/API_LifecycleHookSpecification.html "
                                   "(LifecycleHookName)")
NAMESPACE_NAME: Final = Limit("Cloud Map private DNS namespace name", 1, 253,
                              r"(?!arn:)[!-~]{1,253}",
                              f"{CLOUD_MAP}/API_CreatePrivateDnsNamespace.html (Name)")
SERVICE_NAME: Final = Limit(
    "Cloud Map service name", 1, 127,
    r"((?=^.{1,127}$)^([a-zA-Z0-9_][a-zA-Z0-9-_]{0,61}[a-zA-Z0-9_]|[a-zA-Z0-9])"
    r"(\.([a-zA-Z0-9_][a-zA-Z0-9-_]{0,61}[a-zA-Z0-9_]|[a-zA-Z0-9]))*$)|(^\.$)",
    f"{CLOUD_MAP}/API_CreateService.html (Name)")
CLOUD_MAP_DESCRIPTION: Final = Limit("Cloud Map description", 0, 1024, None,
                                     f"{CLOUD_MAP}/API_CreateService.html (Description)")
CLOUD_MAP_TAG_KEY: Final = Limit("Cloud Map tag key", 1, 128, None, f"{CLOUD_MAP}/API_Tag.html")
CLOUD_MAP_TAG_VALUE: Final = Limit("Cloud Map tag value", 0, 256, None,
                                   f"{CLOUD_MAP}/API_Tag.html")
# the metric a target-tracking policy follows (Auto Scaling reads it from CloudWatch)
METRIC_NAME: Final = Limit("CloudWatch metric name", 1, 255, None,
                           f"{CLOUDWATCH}/API_MetricDatum.html (MetricName)")
METRIC_NAMESPACE: Final = Limit("CloudWatch namespace", 1, 255, "[^:].*",
                                f"{CLOUDWATCH}/API_PutMetricData.html (Namespace)")
DIMENSION_NAME: Final = Limit("CloudWatch dimension name", 1, 255, None,
                              f"{CLOUDWATCH}/API_Dimension.html (Name)")
DIMENSION_VALUE: Final = Limit("CloudWatch dimension value", 1, 1024, None,
                               f"{CLOUDWATCH}/API_Dimension.html (Value)")
ALARM_NAME: Final = Limit("CloudWatch alarm name", 1, 255, None,
                          f"{CLOUDWATCH}/API_PutMetricAlarm.html (AlarmName)")
ALARM_DESCRIPTION: Final = Limit("CloudWatch alarm description", 0, 1024, None,
                                 f"{CLOUDWATCH}/API_PutMetricAlarm.html (AlarmDescription)")
DASHBOARD_NAME: Final = Limit("CloudWatch dashboard name", 1, 255, r"[A-Za-z0-9_\-]+",
                              f"{CLOUDWATCH}/API_PutDashboard.html (DashboardName)")
CLOUDWATCH_TAG_KEY: Final = Limit("CloudWatch tag key", 1, 128, None,
                                  f"{CLOUDWATCH}/API_Tag.html (Key)")
CLOUDWATCH_TAG_VALUE: Final = Limit("CloudWatch tag value", 0, 256, None,
                                    f"{CLOUDWATCH}/API_Tag.html (Value)")
SNS_TOPIC_NAME: Final = Limit("SNS topic name", 1, 256, r"[A-Za-z0-9_\-]+",
                              f"{SNS}/API_CreateTopic.html (Name, a standard topic)")
SNS_TAG_KEY: Final = Limit("SNS tag key", 1, 128, None, f"{SNS}/API_Tag.html (Key)")
SNS_TAG_VALUE: Final = Limit("SNS tag value", 0, 256, None, f"{SNS}/API_Tag.html (Value)")
KMS_DESCRIPTION: Final = Limit("KMS key description", 0, 8192, None,
                               f"{KMS}/API_CreateKey.html (Description)")
KMS_TAG_KEY: Final = Limit("KMS tag key", 1, 128, None, f"{KMS}/API_Tag.html (TagKey)")
KMS_TAG_VALUE: Final = Limit("KMS tag value", 0, 256, None, f"{KMS}/API_Tag.html (TagValue)")

# Tags by the service that stores them (type prefix → key and value limits); EC2's otherwise.
_TAG_LIMITS: Final[Mapping[str, tuple[Limit, Limit]]] = {
    "aws:iam/": (IAM_TAG_KEY, IAM_TAG_VALUE),
    "aws:servicediscovery/": (CLOUD_MAP_TAG_KEY, CLOUD_MAP_TAG_VALUE),
    "aws:cloudwatch/": (CLOUDWATCH_TAG_KEY, CLOUDWATCH_TAG_VALUE),
    "aws:sns/": (SNS_TAG_KEY, SNS_TAG_VALUE),
    "aws:kms/": (KMS_TAG_KEY, KMS_TAG_VALUE),
}

# Resource type → (its name's limit, {input key: limit}) for the values the program sets.
NAMES: Final[Mapping[str, Limit]] = {
    "aws:ec2/securityGroup:SecurityGroup": SG_NAME,
    "aws:ec2/launchTemplate:LaunchTemplate": LT_NAME,
    "aws:autoscaling/group:Group": ASG_NAME,
    "aws:autoscaling/policy:Policy": ASG_POLICY_NAME,
    "aws:iam/role:Role": ROLE_NAME,
    "aws:iam/instanceProfile:InstanceProfile": PROFILE_NAME,
    "aws:iam/rolePolicy:RolePolicy": ROLE_POLICY_NAME,
    "aws:ec2/placementGroup:PlacementGroup": PLACEMENT_GROUP_NAME,
    "aws:servicediscovery/privateDnsNamespace:PrivateDnsNamespace": NAMESPACE_NAME,
    "aws:servicediscovery/service:Service": SERVICE_NAME,
    "aws:cloudwatch/metricAlarm:MetricAlarm": ALARM_NAME,
    "aws:cloudwatch/dashboard:Dashboard": DASHBOARD_NAME,
    "aws:sns/topic:Topic": SNS_TOPIC_NAME,
    "aws:autoscaling/lifecycleHook:LifecycleHook": LIFECYCLE_HOOK_NAME,
}
# The input holding the name where it is not ``name`` (no autoname: the name is required).
NAME_KEYS: Final[Mapping[str, str]] = {"aws:cloudwatch/dashboard:Dashboard": "dashboardName"}
DESCRIPTIONS: Final[Mapping[str, Limit]] = {
    "aws:ec2/securityGroup:SecurityGroup": SG_DESCRIPTION,
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": SG_DESCRIPTION,
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": SG_RULE_DESCRIPTION,
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": SG_RULE_DESCRIPTION,
    "aws:ec2/launchTemplate:LaunchTemplate": LT_DESCRIPTION,
    "aws:iam/role:Role": ROLE_DESCRIPTION,
    "aws:servicediscovery/privateDnsNamespace:PrivateDnsNamespace": CLOUD_MAP_DESCRIPTION,
    "aws:servicediscovery/service:Service": CLOUD_MAP_DESCRIPTION,
    "aws:cloudwatch/metricAlarm:MetricAlarm": ALARM_DESCRIPTION,
    "aws:kms/key:Key": KMS_DESCRIPTION,
}
DESCRIPTION_KEYS: Final[Mapping[str, str]] = {
    "aws:cloudwatch/metricAlarm:MetricAlarm": "alarmDescription"}
_METRIC: Final = "targetTrackingConfiguration.customizedMetricSpecification"
# Values nested in a resource's inputs, by path (``[]``: every item of a list).
NESTED: Final[Mapping[str, Mapping[str, Limit]]] = {
    "aws:autoscaling/policy:Policy": {
        f"{_METRIC}.metricName": METRIC_NAME,
        f"{_METRIC}.namespace": METRIC_NAMESPACE,
        f"{_METRIC}.metricDimensions[].name": DIMENSION_NAME,
        f"{_METRIC}.metricDimensions[].value": DIMENSION_VALUE,
    },
    "aws:cloudwatch/metricAlarm:MetricAlarm": {
        "metricName": METRIC_NAME,
        "namespace": METRIC_NAMESPACE,
        "dimensions{}": DIMENSION_NAME,  # ``{}``: a map's keys, its values by DIMENSION_VALUE
        "dimensions": DIMENSION_VALUE,
    },
}
TAG_PATHS: Final = ("tags", "tagSpecifications[].tags")


def checked_paths(type_: str) -> frozenset[str]:
    """The input paths :func:`resource_problems` holds against a limit for ``type_``."""
    paths = set(TAG_PATHS) | {p.removesuffix("{}") for p in NESTED.get(type_, {})}
    if type_ in NAMES:
        paths |= {NAME_KEYS.get(type_, "name"), "namePrefix"}
    if type_ in DESCRIPTIONS:
        paths.add(DESCRIPTION_KEYS.get(type_, "description"))
    return frozenset(paths)


def values_at(inputs: Any, path: str) -> Iterator[Any]:
    """Every value at ``path`` (dotted keys; ``key[]`` walks each item of a list)."""
    if not path:
        yield inputs
        return
    head, _, rest = path.partition(".")
    each = head.endswith("[]")
    key = head.removesuffix("[]")
    if not isinstance(inputs, Mapping) or key not in inputs:
        return
    value = inputs[key]
    items = (value if isinstance(value, list) else []) if each else [value]
    for item in items:
        yield from values_at(item, rest)


def physical_name(type_: str, logical: str, inputs: Mapping[str, Any]) -> str | None:
    """The name AWS will see: an explicit ``name`` input, or Pulumi's autoname of the logical
    name (its 7 random characters stood for by ``0``: only length and characters matter)."""
    if type_ not in NAMES:
        return None
    explicit = inputs.get(NAME_KEYS.get(type_, "name"))
    if isinstance(explicit, str):
        return explicit
    prefix = inputs.get("namePrefix")
    base = prefix if isinstance(prefix, str) else f"{logical}-"
    return base + "0" * (AUTONAME_SUFFIX - 1)


def resource_problems(type_: str, logical: str, inputs: Mapping[str, Any]) -> Iterator[str]:
    """Every documented constraint the resource's name, description and tags break."""
    name = physical_name(type_, logical, inputs)
    if name is not None:
        yield from NAMES[type_].problems(name)
    description = inputs.get(DESCRIPTION_KEYS.get(type_, "description"))
    if isinstance(description, str) and type_ in DESCRIPTIONS:
        yield from DESCRIPTIONS[type_].problems(description)
    for path, limit in NESTED.get(type_, {}).items():
        keys = path.endswith("{}")
        for value in values_at(inputs, path.removesuffix("{}")):
            texts = list(value) if keys and isinstance(value, Mapping) else (
                list(value.values()) if isinstance(value, Mapping) else [value])
            for text in texts:
                if isinstance(text, str):
                    yield from limit.problems(text)
    yield from tag_problems(type_, inputs)


def tag_problems(type_: str, inputs: Mapping[str, Any]) -> Iterator[str]:
    """Tags by the rules of the service that stores them (EC2, IAM, Cloud Map, CloudWatch, SNS,
    Auto Scaling; an Auto Scaling tag propagated at launch becomes an EC2 tag too)."""
    key_limit, value_limit = next(
        (limits for prefix, limits in _TAG_LIMITS.items() if type_.startswith(prefix)),
        (EC2_TAG_KEY, EC2_TAG_VALUE))
    maps: list[Mapping[str, Any]] = []
    if isinstance(inputs.get("tags"), Mapping):
        maps.append(inputs["tags"])
    for spec in inputs.get("tagSpecifications") or []:  # launch template: instance, volume, ENI
        if isinstance(spec, Mapping) and isinstance(spec.get("tags"), Mapping):
            maps.append(spec["tags"])
    for tags in maps:
        for key, value in tags.items():
            yield from _tag(key, value, key_limit, value_limit)
    if type_ == "aws:autoscaling/group:Group":
        for tag in inputs.get("tags") or []:
            if isinstance(tag, Mapping):
                key, value = str(tag.get("key", "")), tag.get("value", "")
                yield from _tag(key, value, ASG_TAG_KEY, ASG_TAG_VALUE)
                if tag.get("propagateAtLaunch"):
                    yield from _tag(key, value, EC2_TAG_KEY, EC2_TAG_VALUE)


def _tag(key: str, value: Any, key_limit: Limit, value_limit: Limit) -> Iterator[str]:
    yield from key_limit.problems(key)
    if key.lower().startswith("aws:"):
        yield f"{key_limit.what} {key!r} may not begin with aws: (reserved for AWS)"
    yield from value_limit.problems(str(value))
