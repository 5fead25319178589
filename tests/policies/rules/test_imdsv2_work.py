"""imdsv2-required reads an instance's metadata_options block once per judged inputs, and that
one reading says what facts.http_tokens and facts.http_endpoint say."""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from gpupool.catalog import load_catalog
from policies.facts import http_endpoint, http_tokens, instances, metadata_options
from policies.model import UNKNOWN, ChangeKind, ResourceChange, ResourceKind
from policies.rules import get_rule
from policies.rules import imdsv2_required as imds

_VALUE = st.one_of(st.sampled_from(["required", "optional", "enabled", "disabled", "", " x"]),
                   st.just(UNKNOWN), st.none(), st.integers(0, 2), st.booleans())
_OPTIONS = st.dictionaries(st.sampled_from(["http_tokens", "http_endpoint", "other"]), _VALUE,
                           max_size=3)
_BLOCK = st.one_of(st.none(), st.just(UNKNOWN), st.just("x"), st.just([]), _OPTIONS,
                   st.lists(_OPTIONS, max_size=2))


@given(st.one_of(st.just({}), st.builds(lambda b: {"metadata_options": b}, _BLOCK)))
def test_one_reading_says_what_the_facts_say(inputs: dict[str, Any]) -> None:
    assert imds._tokens_and_endpoint(metadata_options(inputs)) == (http_tokens(inputs),
                                                                   http_endpoint(inputs))


def _instance(i: int, new: dict[str, Any]) -> ResourceChange:
    return ResourceChange(address=f"aws_instance.r{i}", type="aws_instance", name=f"r{i}",
                          change=ChangeKind.CREATE, new=new, old=None, source="test",
                          kind=ResourceKind.INSTANCE)


def test_the_block_is_read_once_per_instance() -> None:
    changes = [_instance(i, {"instance_type": "g5.xlarge", "metadata_options": options})
               for i, options in enumerate([[{"http_tokens": "required"}],
                                            [{"http_tokens": "optional"}],
                                            [{"http_endpoint": "disabled"}], UNKNOWN] * 5)]
    with mock.patch.object(instances, "block", wraps=instances.block) as read:
        found = get_rule("imdsv2-required").run(changes, load_catalog(), {})
    assert read.call_count == len(changes) == 20  # was 3 each: the rule, tokens, endpoint
    assert sorted({f.message for f in found}) == [
        'IMDSv1 is allowed: metadata_options.http_tokens = "optional"; set it to "required"',
        "cannot verify: metadata_options unknown until apply"]
    assert len(found) == 10


def test_pulumis_object_with_string_options_is_read_without_helper_calls() -> None:
    """Pulumi gives metadata_options as an object: read with no block() call, and its string
    tokens and endpoint with no text() call (asked of every instance and launch template)."""
    changes = [_instance(i, {"instance_type": "g5.xlarge", "metadata_options": options})
               for i, options in enumerate([{"http_tokens": "required"},
                                            {"http_tokens": "optional", "http_endpoint": "enabled"},
                                            {"http_endpoint": "disabled"}] * 4)]
    with mock.patch.object(instances, "block", wraps=instances.block) as read, \
            mock.patch.object(imds, "text", wraps=imds.text) as texts:
        found = get_rule("imdsv2-required").run(changes, load_catalog(), {})
    assert read.call_count == 0
    assert texts.call_count == 8  # only the absent ones: None, as text(None) says
    assert [f.message for f in found] == [
        'IMDSv1 is allowed: metadata_options.http_tokens = "optional"; set it to "required"'] * 4
