"""The rules' shortcuts on a plan's common case: each says what the full reading says (the
findings with the shortcut taken out, on inputs of every shape), and the work it saves, counted
(objects made and calls per resource, never time)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from gpupool.catalog import load_catalog
from policies.facts import tags as tag_facts
from policies.model import UNKNOWN, ChangeKind, ResourceChange, ResourceKind
from policies.rules import get_rule
from policies.rules import gpu_chargeback_tags as chargeback
from policies.rules.base import Finding

CATALOG = load_catalog()
REQUIRED = ["team", "cost-center", "environment"]
TAGS = {"team": "ml", "cost-center": "cc-42", "environment": "dev"}

_TYPES = {ResourceKind.INSTANCE: "aws_instance", ResourceKind.LAUNCH_TEMPLATE:
          "aws_launch_template", ResourceKind.AUTOSCALING_GROUP: "aws_autoscaling_group",
          ResourceKind.EKS_NODE_GROUP: "aws_eks_node_group"}


def _change(i: int, kind: ResourceKind, new: dict[str, Any]) -> ResourceChange:
    rtype = _TYPES[kind]
    return ResourceChange(address=f"{rtype}.r{i}", type=rtype, name=f"r{i}",
                          change=ChangeKind.CREATE, new=new, old=None, source="test", kind=kind)


def _findings(rule_id: str, changes: list[ResourceChange], **params: Any) -> list[Finding]:
    return get_rule(rule_id).run(changes, CATALOG, params)


# ------------------------------------------------------------------ gpu-chargeback-tags

_KEY = st.sampled_from(["team", "cost-center", "environment", "owner", "", "1"])
_ODD_KEY = st.one_of(_KEY, st.just(1), st.just(UNKNOWN), st.none(), st.booleans())
_VALUE = st.one_of(st.just(UNKNOWN), st.none(), st.sampled_from(["", "x", " "]),
                   st.integers(0, 1), st.booleans())
_MAP = st.one_of(st.dictionaries(st.one_of(_KEY, st.just(1)), _VALUE, max_size=5),
                 st.builds(lambda more: {**TAGS, **more},  # the common case, and near misses
                           st.dictionaries(st.one_of(_KEY, st.just(1)), _VALUE, max_size=2)))
_TAG_MAP = st.one_of(st.none(), st.just(UNKNOWN), st.sampled_from(["x", ""]), _MAP,
                     st.lists(_MAP, max_size=1))
_GROUP_TAG = st.one_of(
    st.fixed_dictionaries({"key": _ODD_KEY, "value": _VALUE}, optional={
        "propagate_at_launch": st.one_of(st.booleans(), st.sampled_from(["true", " TRUE ",
                                                                         "false", 1]),
                                         st.just(UNKNOWN), st.none())}),
    st.just(UNKNOWN), st.none(), st.just("x"))
_PROPAGATED = [{"key": k, "value": v, "propagate_at_launch": True} for k, v in TAGS.items()]
_NEAR_PROPAGATED = st.builds(lambda more, at: [*_PROPAGATED[:at], *more, *_PROPAGATED[at:]],
                             st.lists(_GROUP_TAG, min_size=1, max_size=2), st.integers(0, 3))
_GROUP_TAGS = st.one_of(_NEAR_PROPAGATED, st.just(_PROPAGATED), st.lists(_GROUP_TAG, max_size=5),
                        _GROUP_TAG, st.just(UNKNOWN), st.none(), _MAP)
_SPEC = st.one_of(st.fixed_dictionaries({}, optional={
    "resource_type": st.sampled_from(["instance", "volume", UNKNOWN]), "tags": _TAG_MAP}),
    st.just(UNKNOWN))
_REQUIRED = st.one_of(st.just(REQUIRED), st.lists(_KEY, min_size=1, max_size=3))
_GPU = st.sampled_from(["g5.xlarge", "m7i.large", UNKNOWN])


@st.composite
def _resources(draw: Any) -> list[ResourceChange]:
    """A launch template, an instance and a group linked to the template, tags of any shape."""
    template: dict[str, Any] = {"name": "lt", "instance_type": draw(_GPU)}
    for key, value in (("tags", draw(_TAG_MAP)), ("tags_all", draw(_TAG_MAP)),
                       ("tag_specifications", draw(st.lists(_SPEC, max_size=2)))):
        if value is not None:
            template[key] = value
    instance: dict[str, Any] = {"instance_type": draw(_GPU)}
    for key in ("tags", "tags_all"):
        value = draw(_TAG_MAP)
        if value is not None:
            instance[key] = value
    group: dict[str, Any] = {"launch_template": [{"name": "lt"}]}
    for key in ("tag", "tags"):
        value = draw(_GROUP_TAGS)
        if value is not None:
            group[key] = value
    return [_change(0, ResourceKind.LAUNCH_TEMPLATE, template),
            _change(1, ResourceKind.INSTANCE, instance),
            _change(2, ResourceKind.AUTOSCALING_GROUP, group),
            _change(3, ResourceKind.EKS_NODE_GROUP, {"instance_types": [draw(_GPU)],
                                                     "tags": instance.get("tags")})]


@contextmanager
def _full_reading() -> Iterator[None]:
    """gpu-chargeback-tags without its shortcuts: every resource's tags read in full."""
    with mock.patch.object(chargeback, "tags_set", lambda inputs, required: False), \
            mock.patch.object(chargeback, "group_propagates", lambda inputs, required: False):
        yield


@settings(max_examples=400, deadline=None)
@given(changes=_resources(), required=_REQUIRED)
def test_chargeback_findings_equal_the_full_reading(changes: list[ResourceChange],
                                                    required: list[str]) -> None:
    got = _findings("gpu-chargeback-tags", changes, requiredTags=required)
    with _full_reading():
        assert got == _findings("gpu-chargeback-tags", changes, requiredTags=required)


def test_chargeback_shortcuts_prove_only_what_the_full_reading_says() -> None:
    """A key set only under a non-string key, an empty value, an unknown tag after the
    required ones, a required "" key: no shortcut, the full reading decides."""
    assert not tag_facts.tags_set({"tags": {1: "x"}}, ["1"])
    assert tag_facts.resource_tags({"tags": {1: "x"}}).missing(["1"]) == []
    assert not tag_facts.tags_set({"tags": {**TAGS, "team": ""}}, REQUIRED)
    assert tag_facts.tags_set({"tags": {"team": "ml"}, "tags_all": TAGS}, REQUIRED)
    propagated = _PROPAGATED
    assert tag_facts.group_propagates({"tag": propagated}, REQUIRED)
    assert tag_facts.group_propagates({"tags": [*propagated[:2], {
        "key": "environment", "value": "dev", "propagate_at_launch": " True"}]}, REQUIRED)
    assert not tag_facts.group_propagates({"tag": [*propagated, UNKNOWN]}, REQUIRED)
    assert not tag_facts.group_propagates({"tag": [*propagated, {"key": UNKNOWN}]}, REQUIRED)
    assert not tag_facts.group_propagates({"tag": propagated, "tags": UNKNOWN}, REQUIRED)
    assert not tag_facts.group_propagates({"tag": [{"key": "", "value": "x",
                                                    "propagate_at_launch": True}]}, [""])


def _pool(i: int) -> list[ResourceChange]:
    tags = [{"key": k, "value": v, "propagate_at_launch": True} for k, v in TAGS.items()]
    return [_change(3 * i, ResourceKind.INSTANCE, {"instance_type": "g5.xlarge", "tags": TAGS}),
            _change(3 * i + 1, ResourceKind.LAUNCH_TEMPLATE, {
                "name": f"lt{i}", "instance_type": "g5.xlarge", "tags": TAGS}),
            _change(3 * i + 2, ResourceKind.AUTOSCALING_GROUP, {
                "launch_template": [{"name": f"lt{i}"}], "tag": tags})]


def test_tagged_resources_make_no_tag_objects() -> None:
    """Every resource tagged (most plans): no Tags, GroupTag or set of a resource's tags is
    made, for 10 pools as for 40 (counted)."""
    made = {"Tags": 0, "GroupTag": 0}

    def counting(cls: type) -> Any:
        real = cls.__init__

        def init(self: Any, *args: Any, **kwargs: Any) -> None:
            made[cls.__name__] += 1
            real(self, *args, **kwargs)
        return init

    with mock.patch.object(tag_facts.Tags, "__init__", counting(tag_facts.Tags)), \
            mock.patch.object(tag_facts.GroupTag, "__init__", counting(tag_facts.GroupTag)):
        for pools in (10, 40):
            changes = [c for i in range(pools) for c in _pool(i)]
            assert _findings("gpu-chargeback-tags", changes) == []
            assert made == {"Tags": 0, "GroupTag": 0}
        untagged = _pool(0)[0]
        assert untagged.new is not None
        untagged.new.pop("tags")  # the full reading still runs where a tag is missing
        [f] = _findings("gpu-chargeback-tags", [untagged])
        assert "missing chargeback tags: team, cost-center, environment" in f.message
        assert made["Tags"] == 1


# ------------------------------------------------------------------ gpu-pool-scales-on-utilisation


def _scaled_pool(i: int) -> list[ResourceChange]:
    name = f"pool-{i}"
    group = ResourceChange(
        address=f"aws_autoscaling_group.g{i}", type="aws_autoscaling_group", name=f"g{i}",
        change=ChangeKind.CREATE, new={"name": name, "min_size": 1, "max_size": 4,
                                       "launch_template": [{"name": f"lt{i}"}]},
        old=None, source="test", kind=ResourceKind.AUTOSCALING_GROUP)
    policy = ResourceChange(
        address=f"aws_autoscaling_policy.p{i}", type="aws_autoscaling_policy", name=f"p{i}",
        change=ChangeKind.CREATE, new={
            "autoscaling_group_name": name, "policy_type": "TargetTrackingScaling",
            "target_tracking_configuration": [{"target_value": 70, "disable_scale_in": False,
                                               "customized_metric_specification": [{
                                                   "metric_name": "nvidia_smi_utilization_gpu",
                                                   "namespace": "CWAgent",
                                                   "metric_dimension": [{
                                                       "name": "AutoScalingGroupName",
                                                       "value": name}]}]}]},
        old=None, source="test", kind=ResourceKind.SCALING_POLICY)
    template = _change(10_000 + i, ResourceKind.LAUNCH_TEMPLATE,
                       {"name": f"lt{i}", "instance_type": "g5.xlarge"})
    return [template, group, policy]


def test_groups_scaling_on_gpu_utilisation_make_no_judgement() -> None:
    """A policy that makes its group scale on GPU utilisation is judged ok without a Judgement
    made (nor its wording): none for 10 pools as for 40 (counted); a bad one still says why."""
    from policies.rules import _scaling_judge

    made = [0]
    real = _scaling_judge.Judgement.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        made[0] += 1
        real(self, *args, **kwargs)

    with mock.patch.object(_scaling_judge.Judgement, "__init__", counted):
        for pools in (10, 40):
            changes = [c for i in range(pools) for c in _scaled_pool(i)]
            assert _findings("gpu-pool-scales-on-utilisation", changes) == []
        assert made[0] == 0
        changes = _scaled_pool(0)
        assert changes[2].new is not None
        changes[2].new["target_tracking_configuration"][0]["target_value"] = 20
        [f] = _findings("gpu-pool-scales-on-utilisation", changes)
        assert "scaling policy p0: target 20 % is outside 40" in f.message
        assert made[0] == 1


# ------------------------------------------------------------------ ebs-encrypted

_FLAG = st.one_of(st.booleans(), st.sampled_from(["true", "false", " TRUE", 1]), st.just(UNKNOWN),
                  st.none())
_EBS = st.one_of(st.fixed_dictionaries({}, optional={"encrypted": _FLAG,
                                                     "device_name": st.sampled_from(["/dev/x"])}),
                 st.just(UNKNOWN), st.none(), st.just("x"))
_MAPPING = st.one_of(st.fixed_dictionaries({}, optional={
    "device_name": st.sampled_from(["/dev/xvda", UNKNOWN]), "ebs": st.one_of(_EBS, st.lists(
        _EBS, max_size=1)), "virtual_name": st.just("ephemeral0")}), st.just(UNKNOWN), st.just(3))
_BLOCKS = st.one_of(st.lists(_EBS, max_size=3), _EBS)


@st.composite
def _storage(draw: Any) -> list[ResourceChange]:
    """An instance (root, EBS devices, maybe a launch template), a launch template, a
    volume and a launch configuration, their storage of any shape."""
    instance: dict[str, Any] = {}
    template: dict[str, Any] = {"name": "lt"}
    if draw(st.booleans()):
        instance["launch_template"] = [{"name": "lt"}]
    for key, value in (("root_block_device", draw(_BLOCKS)),
                       ("ebs_block_device", draw(_BLOCKS)), ("ebs_block_devices", draw(_BLOCKS))):
        if draw(st.booleans()):
            instance[key] = value
    if draw(st.booleans()):
        template["block_device_mappings"] = draw(st.one_of(st.lists(_MAPPING, max_size=3),
                                                           _MAPPING))
    volume = {"encrypted": draw(_FLAG)}
    config = {"root_block_device": draw(_BLOCKS)}
    return [_change(0, ResourceKind.INSTANCE, instance),
            _change(1, ResourceKind.LAUNCH_TEMPLATE, template),
            ResourceChange(address="aws_ebs_volume.v", type="aws_ebs_volume", name="v",
                           change=ChangeKind.CREATE, new=volume, old=None, source="test",
                           kind=ResourceKind.EBS_VOLUME),
            ResourceChange(address="aws_launch_configuration.c", type="aws_launch_configuration",
                           name="c", change=ChangeKind.CREATE, new=config, old=None,
                           source="test", kind=ResourceKind.LAUNCH_CONFIGURATION)]


@settings(max_examples=400, deadline=None)
@given(changes=_storage())
def test_ebs_findings_equal_the_full_reading(changes: list[ResourceChange]) -> None:
    from policies.rules import ebs_encrypted

    got = _findings("ebs-encrypted", changes)
    with mock.patch.object(ebs_encrypted, "all_encrypted", lambda change: False):
        assert got == _findings("ebs-encrypted", changes)


def test_encrypted_storage_makes_no_volume() -> None:
    """Encrypted roots, devices and mappings (most plans): no Volume made, for 10 resources as
    for 40 (counted); an unencrypted one is still found."""
    from policies.facts import storage

    made = [0]
    real = storage.Volume.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        made[0] += 1
        real(self, *args, **kwargs)

    def pair(i: int, encrypted: Any = True) -> list[ResourceChange]:
        return [_change(2 * i, ResourceKind.INSTANCE, {
                    "root_block_device": [{"encrypted": encrypted}],
                    "ebs_block_device": [{"device_name": "/dev/sdf", "encrypted": "true"}]}),
                _change(2 * i + 1, ResourceKind.LAUNCH_TEMPLATE, {"block_device_mappings": [
                    {"device_name": "/dev/xvda", "ebs": [{"encrypted": "true"}]},
                    {"device_name": "/dev/sdb", "virtual_name": "ephemeral0"}]})]

    with mock.patch.object(storage.Volume, "__init__", counted):
        for n in (10, 40):
            assert _findings("ebs-encrypted", [c for i in range(n) for c in pair(i)]) == []
        assert made[0] == 0
        [f] = _findings("ebs-encrypted", pair(0, encrypted=False))
        assert "root volume is not encrypted" in f.message and made[0] == 2


# ------------------------------------------------------------------ records made per finding


def _records() -> list[tuple[Any, dict[str, Any]]]:
    from policies.facts.instances import InstanceTypes
    from policies.facts.scaling import ScalingPolicy
    from policies.result import CostLine, Violation
    from policies.rules.base import Enforcement

    return [
        (Finding, {"resource": "a", "message": "m", "detail": {"k": 1}, "prop": "min_size"}),
        (Violation, {"policy": "p", "enforcement": Enforcement.ADVISORY, "resource": "a",
                     "message": "m", "also": ()}),
        (CostLine, {"resource": "a", "before_per_hour": None, "after_per_hour": 1.5}),
        (ScalingPolicy, {"policy_type": "TargetTrackingScaling", "group_name": None,
                         "enabled": True, "predefined_metric": None, "metric_name": "m",
                         "namespace": "n", "statistic": None, "dimensions": {}, "target": 70.0,
                         "disable_scale_in": False}),
        (InstanceTypes, {"known": ("g5.xlarge",), "unknown": "u", "via": "overrides",
                         "respelled": (("G5.XLARGE", "g5.xlarge"),)}),
    ]


def test_records_made_per_finding_are_plain_slot_stores() -> None:
    """Findings, violations, cost lines and scaling policies (one per finding, GPU resource or
    policy judged) are filled by one plain store per field, no ``object.__setattr__`` call;
    each stays a frozen record: equal by its fields, shown, copied, pickled, replaced, and
    refused assignment."""
    import copy
    import dis
    import pickle

    from gpupool.record import FrozenInstanceError, fields, replace

    for cls, values in _records():
        ops = list(dis.get_instructions(cls.__new__))
        stores = [i.argval for i in ops if i.opname == "STORE_ATTR"]
        assert stores == [*fields(cls), "__class__"], cls
        assert "__setattr__" not in [i.argval for i in ops if i.opname == "LOAD_ATTR"]
        a = cls(**values)
        assert type(a) is cls and a == cls(**values)
        assert a == copy.copy(a) == copy.deepcopy(a) == pickle.loads(pickle.dumps(a))
        assert repr(a).startswith(f"{cls.__name__}({fields(cls)[0]}=")
        first = fields(cls)[0]
        assert getattr(replace(a, **{first: "other"}), first) == "other" and a != replace(
            a, **{first: "other"})
        try:
            setattr(a, first, "x")
        except FrozenInstanceError:
            pass
        else:
            raise AssertionError(f"a {cls.__name__} took an assignment")
    assert Finding("a", "m").detail == {} and Finding("a", "m").unknown is False
