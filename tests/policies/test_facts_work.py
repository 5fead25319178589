"""Facts read once and cheaply: what the shortcuts of the facts' hot paths must keep equal to
the plain reading (a group's role tag, blocks of every shape, a type written on thousands of
resources), and the work they save, counted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from policies.facts import PlanIndex, block, blocks, own_instance_types, own_tag
from policies.facts.network.links import LinkIndex
from policies.facts.tags import group_tags
from policies.model import UNKNOWN, ChangeKind, ResourceChange, ResourceKind, is_unknown
from policies.rules import get_rule

ROLE = "gpupool:role"


def _reference_own_tag(inputs: Mapping[str, Any], key: str) -> Any:
    """own_tag of an autoscaling group as it read before: every tag made, then the first."""
    unknown = False
    for maps_key in ("tags", "tags_all"):
        tags = inputs.get(maps_key)
        if tags is UNKNOWN:
            unknown = True
        elif isinstance(tags, Mapping) and key in tags:
            value = tags[key]
            if value is UNKNOWN or (isinstance(value, str) and value):
                return value
    listed = group_tags(inputs)
    if listed is UNKNOWN:
        unknown = True
    else:
        for tag in listed:
            if tag.key == key:
                return tag.value
    return UNKNOWN if unknown else None


def _asg(inputs: dict[str, Any]) -> ResourceChange:
    return ResourceChange(address="aws_autoscaling_group.g", type="aws_autoscaling_group",
                          name="g", change=ChangeKind.CREATE, new=inputs, old=None,
                          source="test", kind=ResourceKind.AUTOSCALING_GROUP)


_VALUES = st.one_of(st.just(UNKNOWN), st.none(), st.sampled_from(["gpu-proxy", "", "x"]),
                    st.integers(0, 2), st.booleans())
_KEYS = st.one_of(st.just(ROLE), st.just(UNKNOWN), st.sampled_from(["team", ""]), st.none(),
                  st.integers(0, 1))
_TAG = st.one_of(st.fixed_dictionaries({"key": _KEYS, "value": _VALUES}, optional={
    "propagate_at_launch": st.one_of(st.booleans(), st.just("true"), st.just(UNKNOWN))}),
    st.just(UNKNOWN), st.none(), st.text(max_size=2))
_TAG_LIST = st.one_of(st.lists(_TAG, max_size=4), _TAG, st.just(UNKNOWN), st.none(),
                      st.dictionaries(st.sampled_from([ROLE, "team"]), _VALUES, max_size=2))


_TAG_MAP = st.one_of(st.none(), st.just(UNKNOWN),
                    st.dictionaries(st.sampled_from([ROLE, "team"]), _VALUES, max_size=2))


@given(tag=_TAG_LIST, tags=_TAG_LIST, tags_all=_TAG_MAP)
def test_a_groups_role_tag_reads_as_every_tag_made_would(tag: Any, tags: Any,
                                                        tags_all: Any) -> None:
    inputs = {k: v for k, v in (("tag", tag), ("tags", tags), ("tags_all", tags_all))
              if v is not None}
    expected = _reference_own_tag(inputs, ROLE)
    got = own_tag(_asg(inputs), ROLE)
    assert got == expected or (is_unknown(got) and is_unknown(expected))


def test_blocks_of_every_shape() -> None:
    class Odd(dict[str, Any]):
        pass

    class Items(list[Any]):
        pass

    odd, items = Odd(a=1), Items([{"a": 1}])
    cases: list[tuple[Any, Any, Any]] = [
        ({"a": 1}, [{"a": 1}], {"a": 1}), ([{"a": 1}, {"b": 2}], [{"a": 1}, {"b": 2}], {"a": 1}),
        ([], [], None), (None, [], None), (UNKNOWN, UNKNOWN, UNKNOWN), ([UNKNOWN], [UNKNOWN],
                                                                          UNKNOWN),
        (["x"], ["x"], None), ("x", [], None), (3, [], None), (odd, [odd], odd),
        (items, items, {"a": 1}), ([odd], [odd], odd),
    ]
    for value, as_blocks, as_block in cases:
        assert blocks(value) == as_blocks and block(value) == as_block, value


def test_a_type_written_on_many_resources_is_read_once() -> None:
    """Its InstanceTypes is made once per spelling and shared (it is immutable)."""
    def instance(i: int, name: str) -> ResourceChange:
        return ResourceChange(address=f"aws_instance.i{i}", type="aws_instance", name="i",
                              change=ChangeKind.CREATE, new={"instance_type": name}, old=None,
                              source="test", kind=ResourceKind.INSTANCE)

    first = [own_instance_types(instance(i, "g5.2xlarge")) for i in range(50)]
    assert all(t is first[0] for t in first)
    assert first[0].known == ("g5.2xlarge",) and first[0].respelled == ()
    respelled = own_instance_types(instance(0, " G5.2XLARGE"))
    assert respelled.known == ("g5.2xlarge",)
    assert respelled.respelled == ((" G5.2XLARGE", "g5.2xlarge"),)
    none = own_instance_types(instance(0, ""))
    assert none.known == () and none.unknown is None


def test_no_index_by_id_or_name_unless_a_link_is_followed_by_value() -> None:
    """A plan without proxies: the network facts list launchers and templates and never index
    every resource by id and name; a tier whose links are names indexes them once."""
    changes = [ResourceChange(address=f"{rtype}.r{i}", type=rtype, name=f"r{i}",
                              change=ChangeKind.CREATE, new={"id": f"x-{i}", "name": f"n{i}"},
                              old=None, source="test", kind=kind)
               for i in range(20) for rtype, kind in (
                   ("aws_instance", ResourceKind.INSTANCE),
                   ("aws_launch_template", ResourceKind.LAUNCH_TEMPLATE),
                   ("aws_subnet", ResourceKind.SUBNET))]
    plain = PlanIndex(changes)
    net = plain.network
    assert net.proxies() == [] and net.clients() == []
    assert isinstance(net, LinkIndex) and net._by_value is None
    by_name = get_rule("gpu-proxy-placement").examples[0]  # placement group by its name
    index = PlanIndex(by_name.changes())
    for proxy in index.network.proxies():
        index.network.placement_group(proxy)
    built = index.network._by_value
    assert built is not None and built
    for proxy in index.network.proxies():
        index.network.placement_group(proxy)
    assert index.network._by_value is built


def _reference_roles(net: Any) -> dict[str, list[str]]:
    """Proxies and clients as they were found before: every launcher's role through its launch
    template, and the templates nothing launches from."""
    found: dict[str, list[str]] = {"gpu-proxy": [], "gpu-client": []}
    used = set()
    for launcher in net.launchers:
        role = net.role(launcher)
        if role in found:
            found[role].append(launcher.address)
        used.update(t.address for t in net.plan.launch_templates(launcher).targets)
    for t in net.templates:
        role = own_tag(t, ROLE)
        if t.address not in used and role in found:
            found[role].append(t.address)
    return found


def _launcher(i: int, kind: ResourceKind, tags: dict[str, str] | None,
              change: ChangeKind = ChangeKind.CREATE) -> ResourceChange:
    rtype = {ResourceKind.INSTANCE: "aws_instance", ResourceKind.AUTOSCALING_GROUP:
             "aws_autoscaling_group", ResourceKind.LAUNCH_TEMPLATE: "aws_launch_template"}[kind]
    new: dict[str, Any] = {"name": "lt" if kind is ResourceKind.LAUNCH_TEMPLATE else f"n{i}"}
    if tags is not None:
        new["tags"] = tags
    if kind is not ResourceKind.LAUNCH_TEMPLATE:
        new["launch_template"] = [{"name": "lt"}]
    return ResourceChange(address=f"{rtype}.r{i}", type=rtype, name=f"r{i}", change=change,
                          new=new if change is not ChangeKind.DELETE else None,
                          old=new if change is ChangeKind.DELETE else None, source="test",
                          kind=kind)


def test_no_launch_template_is_resolved_for_roles_when_no_template_has_one(
        monkeypatch: Any) -> None:
    """Most plans have no proxy tier: when no launch template of the plan carries a role tag,
    the launchers' own tags say who is a proxy or client, and no launcher's template link is
    followed (counted); a role on a template, one the plan only reads too, still reaches the
    launchers that start from it. Proxies and clients equal the full reading in every case."""
    calls = [0]
    real = PlanIndex._launch_templates

    def counted(self: PlanIndex, change: ResourceChange, side: Any) -> Any:
        calls[0] += 1
        return real(self, change, side)

    monkeypatch.setattr(PlanIndex, "_launch_templates", counted)
    own = [_launcher(i, ResourceKind.INSTANCE, {ROLE: "gpu-proxy"} if i == 1 else None)
           for i in range(6)]
    own.append(_launcher(7, ResourceKind.AUTOSCALING_GROUP, {ROLE: "gpu-client"}))
    plain = [*own, _launcher(9, ResourceKind.LAUNCH_TEMPLATE, {"team": "a"})]
    net = PlanIndex(plain).network
    assert [p.address for p in net.proxies()] == ["aws_instance.r1"]
    assert [c.address for c in net.clients()] == ["aws_autoscaling_group.r7"]
    assert calls[0] == 0
    assert _reference_roles(net) == {"gpu-proxy": ["aws_instance.r1"],
                                     "gpu-client": ["aws_autoscaling_group.r7"]}
    for change in (ChangeKind.CREATE, ChangeKind.READ):
        tagged = _launcher(9, ResourceKind.LAUNCH_TEMPLATE, {ROLE: "gpu-proxy"}, change)
        net = PlanIndex([*own, tagged]).network
        want = _reference_roles(net)
        assert [p.address for p in net.proxies()] == want["gpu-proxy"]
        assert [c.address for c in net.clients()] == want["gpu-client"]
        assert len(want["gpu-proxy"]) == 6  # instances with no role of their own: the template's
    for rule in ("gpu-proxy-private", "gpu-proxy-placement", "gpu-proxy-network-budget"):
        for example in get_rule(rule).examples:
            net = PlanIndex(example.changes()).network
            want = _reference_roles(net)
            assert [p.address for p in net.proxies()] == want["gpu-proxy"], example.title
            assert [c.address for c in net.clients()] == want["gpu-client"], example.title
