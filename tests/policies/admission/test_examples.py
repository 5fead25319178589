"""One verdict in both places: every rule example, through the generated CEL, as the API
server would judge it, gives the rule's own verdict and says what the PR check says. An
example with an old object is an UPDATE (``oldObject``), as gpu-no-vertical-upsize compares."""

from __future__ import annotations

from typing import Any

import pytest

from policies.admission.cel import ADMISSION_RULES
from policies.admission.evaluate import group_of, judge
from policies.rules import get_rule
from policies.rules.base import KNOWN_AFTER_APPLY, Example

CASES = [(spec.rule_id, i) for spec in ADMISSION_RULES
         for i in range(len(get_rule(spec.rule_id).examples))]
MATCHED = {k for spec in ADMISSION_RULES for k in spec.kinds}
RULE_KINDS = {spec.rule_id: set(spec.kinds) for spec in ADMISSION_RULES}
# Rules whose policy judges only some kinds: the rest of the rule needs two objects
TWO_OBJECTS = {"k8s-gpu-workload-autoscaled": (
    "a workload and the HPA or ScaledObject naming it: two objects, judged in PR checks")}


def _holds_unknown(value: Any) -> bool:
    if value == KNOWN_AFTER_APPLY:
        return True
    if isinstance(value, dict):
        return any(_holds_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_unknown(v) for v in value)
    return False


def admissible(example: Example, rule_id: str = "") -> str | None:
    """Why an example cannot reach admission (None when it can)."""
    if rule_id in TWO_OBJECTS and any(
            isinstance(r.get("new"), dict)
            and (group_of(r["new"])[0], r["new"].get("kind")) not in RULE_KINDS[rule_id]
            for r in example.resources):
        return TWO_OBJECTS[rule_id]
    for r in example.resources:
        if not str(r["type"]).startswith("kubernetes:") or not isinstance(r.get("new"), dict):
            return "a Terraform resource: the API server sees the object, not the plan"
        if _holds_unknown(r["new"]):
            return "a value unknown until apply: an object at admission has every value"
    if example.unknown and any((group_of(r["new"])[0], r["new"].get("kind")) not in MATCHED
                               for r in example.resources):
        return "a kind no reader understands: matchConstraints cannot name it"
    return None


@pytest.mark.parametrize(("rule_id", "index"), CASES,
                         ids=[f"{r}-{i}" for r, i in CASES])
def test_example_gives_the_rules_verdict_through_cel(harness: Any, rule_id: str,
                                                     index: int) -> None:
    example = get_rule(rule_id).examples[index]
    why = admissible(example, rule_id)
    if why is not None:
        assert (example.unknown or not example.allowed or "Terraform" in why
                or why == TWO_OBJECTS.get(rule_id)), why
        pytest.skip(why)
    objects = harness.objects_for(rule_id, example.params)
    python = harness.python_findings(rule_id, example.changes(), example.params)
    assert bool(python) == (not example.allowed)  # the rule's own verdict, as its tests hold
    messages = []
    for r in example.resources:
        decision = judge(objects, r["new"], old=r.get("old"))
        messages += decision.failures(f"gpupool-{rule_id}")
    assert bool(messages) == (not example.allowed), messages
    for message in messages:
        assert message.startswith(f"{rule_id}: "), message
        assert "could not be evaluated" not in message and "failed:" not in message, message
        # word for word, the container's path too (spec.template.spec.containers[0].resources)
        assert message.removeprefix(f"{rule_id}: ") in [f.message for f in python], (
            message, [f.message for f in python])


def test_the_examples_that_cannot_reach_admission_are_the_ones_we_say() -> None:
    skipped = [(r, get_rule(r).examples[i]) for r, i in CASES
               if admissible(get_rule(r).examples[i], r) is not None]
    for rule_id, e in skipped:  # what no API server sees (plans' own resources, unknown
        # values), and the parts of a rule that need two objects
        assert e.unknown or any(not str(r["type"]).startswith("kubernetes:")
                                for r in e.resources) or (
            admissible(e, rule_id) == TWO_OBJECTS.get(rule_id)), e.title
    judged = len(CASES) - len(skipped)
    assert judged >= 25, (judged, [e.title for _, e in skipped])
    own = [e.title for r, e in skipped if r == "k8s-gpu-workload-autoscaled"
           and admissible(e, r) == TWO_OBJECTS[r]]
    assert len(own) == 5, own  # every example with a Deployment: the KServe and Ray ones run
