"""The pack's parts in-process: props with unknowns, baselines, config schemas, levels.

The gRPC tests (test_pack_grpc.py) prove the whole; these pin down the edge cases that are
slow or awkward to reach over the wire.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pulumi_policy import EnforcementLevel
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import unknown_checking_proxy

from policies.crossguard.baseline import BaselineCache, BaselineError, parse_export
from policies.crossguard.config import ConfigParser, RuleConfigError, config_properties
from policies.crossguard.levels import finding_level
from policies.crossguard.policies import PackRuntime, RulePolicy, resource_change
from policies.crossguard.props import normalised_props
from policies.model import UNKNOWN, ChangeKind
from policies.rules.base import Enforcement, Finding, Rule
from policies.testing.values import UNKNOWN_SENTINEL, from_struct, to_struct


def _rules() -> list[Rule]:
    from policies.rules import ALL_RULES

    return list(ALL_RULES)


def _rule(rule_id: str) -> Rule:
    from policies.rules import get_rule

    return get_rule(rule_id)


# -- props -----------------------------------------------------------------------------------


def _as_pulumi_policy_gives_it(props: dict[str, Any]) -> Any:
    return unknown_checking_proxy(deserialize_properties(props))


def test_unknowns_anywhere_become_the_engine_sentinel() -> None:
    proxied = _as_pulumi_policy_gives_it({
        "instanceType": UNKNOWN_SENTINEL,
        "metadataOptions": {"httpTokens": "required", "httpEndpoint": UNKNOWN_SENTINEL},
        "blockDeviceMappings": [UNKNOWN_SENTINEL, {"ebs": {"encrypted": "true"}}],
        "tags": {"cost-center": UNKNOWN_SENTINEL, "team": "ml"},
        "count": "3eeb2bf0-c639-47a8-9e75-3b44932eb421",  # an older engine's number sentinel
    })
    assert normalised_props(proxied) == {
        "instance_type": UNKNOWN,
        "metadata_options": {"http_tokens": "required", "http_endpoint": UNKNOWN},
        "block_device_mappings": [UNKNOWN, {"ebs": {"encrypted": "true"}}],
        "tags": {"cost-center": UNKNOWN, "team": "ml"},  # tag keys are user data: verbatim
        "count": UNKNOWN,
    }


def test_a_wholly_unknown_object_is_unknown_not_empty() -> None:
    proxied = _as_pulumi_policy_gives_it({"mixedInstancesPolicy": UNKNOWN_SENTINEL})
    assert normalised_props(proxied) == {"mixed_instances_policy": UNKNOWN}


# -- baseline --------------------------------------------------------------------------------

URN = "urn:pulumi:prod::gpupool::aws:ec2/launchTemplate:LaunchTemplate::pool"
LT = "aws:ec2/launchTemplate:LaunchTemplate"


def _export(resources: list[dict[str, Any]], version: int = 3) -> dict[str, Any]:
    return {"version": version, "deployment": {"manifest": {}, "resources": resources}}


def test_baseline_reads_inputs_by_urn_and_type() -> None:
    b = parse_export(_export([
        {"urn": URN, "type": LT, "inputs": {"instanceType": "g4dn.xlarge",
                                            "tags": {"cost-center": "42"}}},
        {"urn": URN, "type": LT, "inputs": {"instanceType": "g4dn.16xlarge"}, "delete": True},
    ]), "b.json")
    assert b.old_inputs(URN, LT) == {"instance_type": "g4dn.xlarge", "tags": {"cost-center": "42"}}
    assert b.old_inputs(URN, "aws:ec2/instance:Instance") is None  # same URN, another type
    assert b.old_inputs(URN.replace("pool", "other"), LT) is None


def test_baseline_secrets_plaintext_read_ciphertext_unknown() -> None:
    sig = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}
    b = parse_export(_export([
        {"urn": "a", "type": LT, "inputs": {"instanceType": {**sig, "plaintext": '"g5.xlarge"'}}},
        {"urn": "b", "type": LT, "inputs": {"instanceType": {**sig, "ciphertext": "AAAA"}}},
    ]), "b.json")
    assert b.old_inputs("a", LT) == {"instance_type": "g5.xlarge"}
    assert b.old_inputs("b", LT) == {"instance_type": UNKNOWN}  # cannot verify, never a pass


@pytest.mark.parametrize(
    ("document", "phrase"),
    [
        ([], "expected a JSON object"),
        ({"version": 9, "deployment": {}}, "version 9 is not"),
        ({"version": 3}, "`deployment` is missing"),
        ({"version": 3, "deployment": {"resources": [{"urn": 1}]}}, "resources[0] has no"),
        ({"version": 3, "deployment": {"resources": [{"urn": "u", "type": "t", "inputs": []}]}},
         "inputs must be an object"),
    ],
)
def test_baseline_format_errors_name_the_file(document: Any, phrase: str) -> None:
    with pytest.raises(BaselineError, match=r"baseline b\.json: ") as e:
        parse_export(document, "b.json")
    assert phrase in str(e.value)


def test_baseline_cache_rereads_only_a_changed_file(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(_export([{"urn": URN, "type": LT,
                                         "inputs": {"instanceType": "g4dn.xlarge"}}])))
    cache = BaselineCache()
    first = cache.load("baseline.json", tmp_path)
    assert cache.load(str(path)) is first  # same file, same object: parsed once
    path.write_text(json.dumps(_export([{"urn": URN, "type": LT,
                                         "inputs": {"instanceType": "g5.xlarge"}}])))
    os.utime(path, ns=(1, 1))
    assert cache.load(str(path)).old_inputs(URN, LT) == {"instance_type": "g5.xlarge"}
    with pytest.raises(BaselineError, match="cannot read it"):
        cache.load(str(tmp_path / "missing.json"))
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(BaselineError, match="not JSON"):
        cache.load(str(tmp_path / "bad.json"))


def test_change_kind_follows_the_baseline() -> None:
    b = parse_export(_export([{"urn": URN, "type": LT, "inputs": {"instanceType": "g4dn.xlarge"}}]),
                     "b.json")
    known = resource_change(LT, URN, "pool", {"instanceType": "g4dn.2xlarge"}, baseline=b)
    assert (known.change, known.old) == (ChangeKind.UPDATE, {"instance_type": "g4dn.xlarge"})
    new = resource_change(LT, URN + "2", "pool2", {}, baseline=b)
    assert (new.change, new.old) == (ChangeKind.CREATE, None)
    # No baseline: a create (nothing to compare), or, when a baseline is required, an update
    # whose old inputs are unknown, so the rule says "cannot verify".
    assert resource_change(LT, URN, "pool", {}, baseline=None).change is ChangeKind.CREATE
    blind = resource_change(LT, URN, "pool", {}, baseline=None, require_baseline=True)
    assert (blind.change, blind.old) == (ChangeKind.UPDATE, None)


# -- config ----------------------------------------------------------------------------------


def test_every_rule_schema_is_self_contained_camel_case_and_accepts_its_defaults() -> None:
    for rule in _rules():
        props = config_properties(rule)
        text = json.dumps(props)
        assert "$ref" not in text and "$defs" not in text, rule.meta.id
        assert "unknownEnforcement" in props, rule.meta.id
        assert all("_" not in k for k in props), rule.meta.id
        assert ("baseline" in props) == rule.meta.needs_old_inputs
        assert ("requireBaseline" in props) == rule.meta.needs_old_inputs
        # What the CLI does: fill schema defaults, validate, send through a Struct (numbers
        # become doubles), and the pack must accept it.
        defaults = {k: v["default"] for k, v in props.items() if "default" in v}
        jsonschema.Draft7Validator({"type": "object", "properties": props}).validate(defaults)
        wired = from_struct(to_struct(defaults))
        cfg = ConfigParser(rule).parse(wired)
        assert cfg.params == rule.meta.params(), rule.meta.id


def test_bad_config_says_which_policy_key_and_value() -> None:
    parser = ConfigParser(_rule("gpu-no-vertical-upsize"))
    with pytest.raises(RuleConfigError) as e:
        parser.parse({"unknownEnforcement": "sometimes", "allowGpuPackin": True, "baseline": 3,
                      "requireBaseline": "yes"})
    text = "\n".join(e.value.problems)
    assert "gpu-no-vertical-upsize: baseline: expected a file path (got 3)" in text
    assert "gpu-no-vertical-upsize: requireBaseline: expected true or false (got 'yes')" in text
    assert "gpu-no-vertical-upsize: unknownEnforcement:" in text and "'sometimes'" in text
    assert "gpu-no-vertical-upsize: allowGpuPackin: Extra inputs are not permitted" in text


def test_config_problems_include_an_unreadable_baseline(tmp_path: Path) -> None:
    rp = RulePolicy(_rule("gpu-no-vertical-upsize"), PackRuntime(base_dir=str(tmp_path)))
    assert rp.config_problems("mandatory", {"baseline": "nope.json"}) == [
        f"gpu-no-vertical-upsize: baseline {tmp_path / 'nope.json'}: cannot read it "
        "(No such file or directory)"
    ]
    assert rp.config_problems("disabled", {"baseline": "nope.json"}) == []


# -- levels ----------------------------------------------------------------------------------


class _P:
    def __init__(self, level: str) -> None:
        self.unknown_enforcement = Enforcement(level)


@pytest.mark.parametrize(
    ("finding", "in_force", "unknown_level", "expected"),
    [
        (Finding("r", "m"), EnforcementLevel.MANDATORY, "advisory", EnforcementLevel.MANDATORY),
        (Finding("r", "m"), EnforcementLevel.ADVISORY, "advisory", EnforcementLevel.ADVISORY),
        (Finding("r", "m", unknown=True), EnforcementLevel.MANDATORY, "advisory",
         EnforcementLevel.ADVISORY),
        (Finding("r", "m", unknown=True), EnforcementLevel.MANDATORY, "mandatory",
         EnforcementLevel.MANDATORY),
        # never stricter than the policy's own level
        (Finding("r", "m", unknown=True), EnforcementLevel.ADVISORY, "mandatory",
         EnforcementLevel.ADVISORY),
        (Finding("r", "m", advisory_only=True), EnforcementLevel.MANDATORY, "mandatory",
         EnforcementLevel.ADVISORY),
    ],
)
def test_finding_levels(finding: Finding, in_force: EnforcementLevel, unknown_level: str,
                        expected: EnforcementLevel) -> None:
    assert finding_level(finding, in_force, _P(unknown_level)) is expected


def test_without_the_leveled_servicer_findings_keep_the_policy_level() -> None:
    """If pulumi-policy's internals change, the pack degrades to stricter, never laxer."""
    rp = RulePolicy(_rule("gpu-smallest-instance"), PackRuntime())
    reported: list[tuple[str, str | None]] = []

    class Args:
        resource_type = "aws:ec2/instance:Instance"
        urn = "urn:pulumi:s::p::aws:ec2/instance:Instance::gpu"
        name = "gpu"
        props = _as_pulumi_policy_gives_it({"instanceType": UNKNOWN_SENTINEL})
        opts = None

        @staticmethod
        def get_config() -> dict[str, Any]:
            return {}

    rp.validate_resource(Args(), lambda m, u=None: reported.append((m, u)))  # type: ignore[arg-type]
    assert reported and reported[0][0].startswith("cannot verify")
    assert reported[0][1] == Args.urn


def test_leveled_servicer_degrades_when_pulumi_policy_internals_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pulumi_policy.policy as sdk

    from policies.crossguard.levels import leveled_servicer

    assert leveled_servicer({}, "gpupool") is not None
    monkeypatch.setattr(sdk, "_PolicyAnalyzerServicer", type("Renamed", (), {}))
    assert leveled_servicer({}, "gpupool") is None


class _Broken(Rule):
    meta = _rule("gpu-smallest-instance").meta
    examples = ()

    def check_resource(self, change: Any, ctx: Any) -> Any:
        raise ZeroDivisionError("division by zero")


def test_a_rule_that_raises_is_a_mandatory_diagnostic_worded_as_the_engine() -> None:
    from policies.crossguard.levels import LeveledReport

    rp = RulePolicy(_Broken(), PackRuntime())
    reported: list[tuple[EnforcementLevel, str, str | None]] = []

    def make(level: EnforcementLevel) -> Any:
        return lambda m, u=None: reported.append((level, m, u))

    class Args:
        resource_type = "aws:ec2/instance:Instance"
        urn = "urn:pulumi:s::p::aws:ec2/instance:Instance::gpu"
        name = "gpu"
        props = _as_pulumi_policy_gives_it({"instanceType": "g4dn.xlarge"})
        opts = None

        @staticmethod
        def get_config() -> dict[str, Any]:
            return {}

    rp.validate_resource(Args(), LeveledReport(make, EnforcementLevel.ADVISORY))  # type: ignore[arg-type]
    assert reported == [(EnforcementLevel.MANDATORY,
                         f"rule raised ZeroDivisionError on {Args.urn}: division by zero",
                         Args.urn)]
