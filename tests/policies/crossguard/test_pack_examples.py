"""Every rule's own examples, sent through the pack over gRPC, say what the engine says.

The examples are the rules' documentation and the engine's tests; replaying the Pulumi-shaped
ones through CrossGuard (old inputs via a baseline, stack rules via AnalyzeStack) proves "one
rule, every source": same findings, same words, same levels.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpupool.catalog import load_catalog
from policies.crossguard.levels import TO_SDK, finding_level
from policies.rules import ALL_RULES
from policies.rules.base import KNOWN_AFTER_APPLY, Example, Rule
from policies.testing import UNKNOWN, PolicyPackHarness, Resource

PACK_DIR = Path(__file__).resolve().parents[3] / "policies"


def _pulumi_shaped(ex: Example) -> bool:
    """CrossGuard only ever sees Pulumi resources, alive, linked by values or dependencies."""
    return all(
        ":" in r["type"] and r.get("new") is not None and not r.get("references")
        and r.get("change") in (None, "create", "update") and not r.get("address")
        for r in ex.resources
    )


CASES = [
    pytest.param(rule, ex, id=f"{rule.meta.id}: {ex.title}")
    for rule in ALL_RULES for ex in rule.examples if _pulumi_shaped(ex)
]


def _wire(value: Any) -> Any:
    if value == KNOWN_AFTER_APPLY:
        return UNKNOWN
    if isinstance(value, dict):
        return {k: _wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_wire(v) for v in value]
    return value


@pytest.fixture(scope="module")
def example_pack() -> Any:

    # Example addresses are urn:pulumi:example::gpupool::TYPE::NAME: the harness builds the same.
    with PolicyPackHarness(PACK_DIR, stack="example", project="gpupool") as h:
        yield h


def test_there_are_examples_for_every_rule() -> None:
    covered = {c.values[0].meta.id for c in CASES}
    assert covered == {r.meta.id for r in ALL_RULES}


@pytest.mark.parametrize(("rule", "ex"), CASES)
def test_example_through_the_pack(example_pack: PolicyPackHarness, tmp_path: Path, rule: Rule,
                                  ex: Example) -> None:
    pack = example_pack
    entry: dict[str, Any] = {"enforcementLevel": str(rule.meta.default_enforcement),
                             **ex.params}
    olds = [r for r in ex.resources if r.get("old") is not None]
    if olds:
        path = tmp_path / "baseline.json"
        path.write_text(json.dumps({"version": 3, "deployment": {"resources": [
            {"urn": pack.urn(r["type"], r["name"]), "type": r["type"], "inputs": r["old"]}
            for r in olds]}}))
        entry["baseline"] = str(path)
    pack.configure({"all": "disabled", rule.meta.id: entry})

    resources = [Resource(r["type"], r["name"], _wire(r["new"])) for r in ex.resources]
    if rule.meta.scope == "stack":
        diagnostics = list(pack.analyze_stack(resources))
    else:
        diagnostics = [d for r in resources for d in pack.analyze_resource(r)]

    # A resource policy sees one resource per Analyze call: links to other resources of the
    # plan are judged by stack policies only, so the engine is asked the same question.
    changes = ex.changes()
    groups = [changes] if rule.meta.scope == "stack" else [[c] for c in changes]
    findings = [f for g in groups for f in rule.run(g, load_catalog(), ex.params)]
    params = rule.parse_params(ex.params)
    in_force = TO_SDK[rule.meta.default_enforcement]
    expected = sorted((f.resource, f.message, finding_level(f, in_force, params).value)
                      for f in findings)
    got = sorted((d.urn, d.detail, d.enforcement_level) for d in diagnostics)
    assert {d.policy_name for d in diagnostics} <= {rule.meta.id}
    assert got == expected

    if ex.allowed:
        assert not [d for d in diagnostics if d.mandatory and "cannot verify" not in d.detail]
    else:
        assert diagnostics, "a denied example must be reported"
        text = "\n".join(d.detail for d in diagnostics)
        for phrase in ex.message_contains:
            assert phrase in text
        if ex.unknown:
            assert all(d.enforcement_level == "advisory" for d in diagnostics)
