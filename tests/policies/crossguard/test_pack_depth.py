"""Deeply nested properties over real gRPC (issue 7, item 12).

A property nested 200+ levels deep made the SDK's recursive conversion exhaust Python's stack:
the whole Analyze or AnalyzeStack call failed with gRPC UNKNOWN, judging no resource of it. Now
the pack cuts such values (read as unknown) and reports a mandatory ``gpupool-input`` finding on
that resource, and every policy still judges it and every other resource.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import struct_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pulumi.runtime.proto import analyzer_pb2

from policies.testing import PolicyPackHarness, Resource
from policies.testing.messages import analyze_result
from policies.testing.values import from_struct, to_struct

INSTANCE = "aws:ec2/instance:Instance"
INPUT_POLICY = "gpupool-input"  # the pack's finding on input it cannot read whole
MAX_DEPTH = 64


def nest(levels: int) -> Any:
    value: Any = "x"
    for i in range(levels):
        value = {"a": value} if i % 2 else [value]
    return value


def test_a_deep_property_is_a_finding_on_that_resource(pack: PolicyPackHarness) -> None:
    pack.configure({})
    result = pack.analyze(INSTANCE, "gpu", {"instanceType": "g4dn.2xlarge",
                                            "userData": nest(250)})
    [deep] = result.for_policy(INPUT_POLICY)
    assert (deep.enforcement_level, deep.urn) == ("mandatory", pack.urn(INSTANCE, "gpu"))
    assert f"nest deeper than {MAX_DEPTH} levels at userData.a[0].a[0]" in deep.detail
    # the rest of the resource is judged as usual
    assert {"gpu-smallest-instance", "imdsv2-required"} <= result.policies


def test_a_deep_resource_does_not_take_the_stack_call_down(pack: PolicyPackHarness) -> None:
    pack.configure({})
    result = pack.analyze_stack([
        Resource(INSTANCE, "deep", {"instanceType": "g4dn.xlarge", "tags": nest(300)}),
        Resource(INSTANCE, "fine", {"instanceType": "g4dn.xlarge"}),
    ])
    assert [d.urn for d in result.for_policy(INPUT_POLICY)] == [pack.urn(INSTANCE, "deep")]


def test_thousands_of_levels(pack: PolicyPackHarness) -> None:
    """Built as a protobuf directly: the harness's own Python conversion stops near 300."""
    inner = struct_pb2.Struct()
    inner.fields["a"].string_value = "x"
    for _ in range(2000):
        outer = struct_pb2.Struct()
        outer.fields["a"].struct_value.CopyFrom(inner)
        inner = outer
    props = to_struct({"instanceType": "g4dn.xlarge"})
    props.fields["userData"].struct_value.CopyFrom(inner)
    pack.configure({})
    request = analyzer_pb2.AnalyzeRequest(type=INSTANCE, name="gpu", properties=props,
                                          urn=pack.urn(INSTANCE, "gpu"))
    result = analyze_result(pack._call("Analyze", request))
    assert INPUT_POLICY in result.policies


_TREES = st.recursive(st.one_of(st.integers(), st.text(max_size=3), st.none()),
                      lambda inner: st.one_of(st.lists(inner, max_size=3),
                                              st.dictionaries(st.sampled_from("abc"), inner,
                                                              max_size=3)),
                      max_leaves=30)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


# deep trees are legitimately heavy to draw: no health check on their wall time or size
@settings(deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.dictionaries(st.sampled_from(["p", "q"]), _TREES, max_size=2),
       st.integers(min_value=1, max_value=4))
def test_cut_keeps_everything_within_the_limit(props: dict[str, Any], limit: int) -> None:
    from policies.crossguard.depth import cut_deep

    struct = to_struct(props)
    cuts = cut_deep(struct, limit)
    after = from_struct(struct)
    assert all(_depth(v) <= limit for v in after.values())
    assert bool(cuts) == any(_depth(v) > limit for v in props.values())
    if not cuts:
        assert after == from_struct(to_struct(props))
