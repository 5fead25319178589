"""SARIF output: valid against the official 2.1.0 schema, and what GitHub code scanning reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator
from jsonschema.validators import validator_for
from report_samples import (
    ASG_ADDR,
    LT_ADDR,
    TF_ADDR,
    URN,
    advisory_only_result,
    empty_result,
    full_result,
)

from policies.reports import sarif
from policies.result import Result, Violation
from policies.rules.base import Enforcement

SCHEMAS = Path(__file__).resolve().parents[2] / "fixtures" / "schemas"
SCHEMA_PATH = SCHEMAS / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text())


def schema_errors(schema: dict[str, Any], doc: Any) -> list[str]:
    """Errors under draft-07 and under the draft the schema declares, formats checked."""
    out = []
    for cls in {Draft7Validator, validator_for(schema)}:
        v = cls(schema, format_checker=cls.FORMAT_CHECKER)
        out += [f"{cls.__name__}: {e.json_path}: {e.message}" for e in v.iter_errors(doc)]
    return out


def run_of(doc: dict[str, Any]) -> dict[str, Any]:
    assert len(doc["runs"]) == 1
    run: dict[str, Any] = doc["runs"][0]
    return run


def result_for(run: dict[str, Any], policy: str, resource: str) -> dict[str, Any]:
    hits = [
        r for r in run["results"]
        if r["ruleId"] == policy
        and r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == resource
    ]
    assert len(hits) == 1, (policy, resource, hits)
    return hits[0]


@pytest.mark.parametrize("make", [full_result, empty_result, advisory_only_result])
def test_valid_against_official_schema(make: Any, plan_file: str, schema: dict[str, Any]) -> None:
    text = sarif.render(make())
    assert schema_errors(schema, json.loads(text)) == []


def test_schema_check_catches_real_mistakes(plan_file: str, schema: dict[str, Any]) -> None:
    """The validation above is not vacuous: the schema and formats really are enforced."""
    doc = sarif.to_sarif(full_result())
    doc["runs"][0]["results"][0]["level"] = "fatal"
    assert any("fatal" in e for e in schema_errors(schema, doc))
    doc = sarif.to_sarif(full_result())
    loc = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    loc["uri"] = "a path with spaces"
    assert any("uri-reference" in e for e in schema_errors(schema, doc))


def test_header_tool_and_rules(plan_file: str) -> None:
    doc = sarif.to_sarif(full_result())
    assert doc["version"] == "2.1.0" and doc["$schema"].startswith("https://")
    driver = run_of(doc)["tool"]["driver"]
    assert driver["name"] == "gpupool" and driver["version"]
    ids = [r["id"] for r in driver["rules"]]
    # every evaluated policy, plus the policy only a rule error names
    assert ids[:5] == [
        "gpu-no-vertical-upsize", "gpu-smallest-instance", "gpu-chargeback-tags",
        "imdsv2-required", "ebs-encrypted",
    ]
    assert "gpu-pool-scales-on-utilisation" in ids
    upsize = driver["rules"][0]
    assert upsize["name"] == "GpuNoVerticalUpsize"
    assert upsize["shortDescription"]["text"] == "Never scale a GPU instance vertically"
    assert upsize["fullDescription"]["text"].startswith("A bigger size")
    assert upsize["help"]["text"] == upsize["fullDescription"]["text"]
    assert upsize["defaultConfiguration"] == {"level": "error"}
    by_id = {r["id"]: r for r in driver["rules"]}
    assert by_id["gpu-chargeback-tags"]["defaultConfiguration"] == {"level": "warning"}
    assert by_id["ebs-encrypted"]["defaultConfiguration"] == {"enabled": False, "level": "none"}


def test_every_result_points_at_its_rule(plan_file: str) -> None:
    run = run_of(sarif.to_sarif(full_result()))
    rules = run["tool"]["driver"]["rules"]
    assert len(run["results"]) == 6
    for r in run["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]


def test_levels_follow_what_blocks(plan_file: str) -> None:
    run = run_of(sarif.to_sarif(full_result()))
    assert result_for(run, "gpu-no-vertical-upsize", TF_ADDR)["level"] == "error"
    assert result_for(run, "gpu-chargeback-tags", LT_ADDR)["level"] == "warning"
    # advisory "cannot verify" is information, a mandatory one blocks the check
    assert result_for(run, "imdsv2-required", LT_ADDR)["level"] == "note"
    assert result_for(run, "gpu-smallest-instance", ASG_ADDR)["level"] == "error"
    assert result_for(run, "imdsv2-required", LT_ADDR)["properties"]["cannotVerify"] is True


def test_waived_finding_is_an_external_suppression(plan_file: str) -> None:
    run = run_of(sarif.to_sarif(full_result()))
    waived = result_for(run, "gpu-smallest-instance", URN)
    (s,) = waived["suppressions"]
    assert s["kind"] == "external" and s["status"] == "accepted"
    assert "W-7" in s["justification"] and "ml-team" in s["justification"]
    assert "2027-01-31" in s["justification"]
    others = [r for r in run["results"] if r is not waived]
    assert all("suppressions" not in r for r in others)


def test_rule_errors_are_failed_execution_notifications(plan_file: str) -> None:
    run = run_of(sarif.to_sarif(full_result()))
    (inv,) = run["invocations"]
    assert inv["executionSuccessful"] is False and inv["exitCode"] == 1
    notes = inv["toolExecutionNotifications"]
    assert [n["associatedRule"]["id"] for n in notes] == [
        "gpu-pool-scales-on-utilisation", "imdsv2-required",
    ]
    assert all(n["level"] == "error" for n in notes)
    assert "KeyError" in notes[0]["message"]["text"]
    assert notes[0]["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == ASG_ADDR
    rules = run["tool"]["driver"]["rules"]
    assert all(rules[n["associatedRule"]["index"]]["id"] == n["associatedRule"]["id"]
               for n in notes)


def test_clean_run_is_successful(plan_file: str) -> None:
    run = run_of(sarif.to_sarif(empty_result()))
    assert run["results"] == []
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 0}]


def test_fingerprints_stable_and_distinct(plan_file: str) -> None:
    a = run_of(sarif.to_sarif(full_result()))["results"]
    b = run_of(sarif.to_sarif(full_result("elsewhere.json")))["results"]
    fa = [r["partialFingerprints"][sarif.FINGERPRINT_KEY] for r in a]
    fb = [r["partialFingerprints"][sarif.FINGERPRINT_KEY] for r in b]
    assert fa == fb  # a regenerated plan at another path is the same finding to GitHub
    assert len(set(fa)) == len(fa)  # distinct policy+resource pairs never collide
    assert sarif.fingerprint("p", "r") != sarif.fingerprint("p", "r2")


def test_location_is_the_plan_file_at_the_resource_change(plan_file: str) -> None:
    run = run_of(sarif.to_sarif(full_result(), root=Path.cwd()))
    lines = Path(plan_file).read_text().splitlines()
    for addr in (TF_ADDR, LT_ADDR):
        pol = "gpu-no-vertical-upsize" if addr == TF_ADDR else "gpu-chargeback-tags"
        phys = result_for(run, pol, addr)["locations"][0]["physicalLocation"]
        assert phys["artifactLocation"] == {"uri": "plans/tf.json", "uriBaseId": "%SRCROOT%"}
        line = phys["region"]["startLine"]
        text = lines[line - 1]
        assert json.dumps(addr) in text
        assert text[phys["region"]["startColumn"] - 1:].startswith('"address"')
        # the resource_changes entry, not the earlier planned_values mention
        assert line > next(i for i, t in enumerate(lines, 1) if "resource_changes" in t)
    srcroot = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert srcroot == Path.cwd().resolve().as_uri() + "/"


def test_resource_not_in_file_and_non_file_sources(plan_file: str, schema: dict[str, Any]) -> None:
    run = run_of(sarif.to_sarif(full_result()))
    asg = result_for(run, "gpu-smallest-instance", ASG_ADDR)["locations"][0]["physicalLocation"]
    assert asg["region"] == {"startLine": 1, "startColumn": 1}
    stack = result_for(run, "gpu-smallest-instance", URN)["locations"][0]["physicalLocation"]
    uri = stack["artifactLocation"]["uri"]
    assert "uriBaseId" not in stack["artifactLocation"] and " " not in uri
    assert "stack" in uri and "HEAD~1..worktree" in uri


def test_file_outside_root_is_an_absolute_uri(tmp_path: Path, plan_file: str) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.json"
    body = '{"resource_changes": [{"address": "aws_instance.a"}]}'
    outside.write_text(body)
    try:
        v = Violation("imdsv2-required", Enforcement.MANDATORY, "aws_instance.a", "m",
                      source=str(outside))
        res = Result([v], [], [str(outside)], [], 1)
        loc = sarif.to_sarif(res, root=tmp_path)["runs"][0]["results"][0]["locations"][0]
        assert loc["physicalLocation"]["artifactLocation"] == {"uri": outside.resolve().as_uri()}
        assert loc["physicalLocation"]["region"]["startColumn"] == body.index('"address"') + 1
    finally:
        outside.unlink()


def test_one_line_plan_columns_count_code_points(tmp_path: Path) -> None:
    """terraform show -json writes one line: the column must still land on the address."""
    doc = {"resource_changes": [
        {"address": "aws_instance.ä", "change": {"after": {"tags": {"t": "→→→"}}}},
        {"address": 'module.m["é"].aws_instance.b'},
    ]}
    path = tmp_path / "plan.json"
    text = json.dumps(doc, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    found = sarif.address_lines(path)
    for addr in ("aws_instance.ä", 'module.m["é"].aws_instance.b'):
        line, col = found[addr]
        assert line == 1
        assert text[col - 1:].startswith('"address"')
        assert text[col - 1:].startswith('"address": ' + json.dumps(addr, ensure_ascii=False))


def test_waiver_finding_located_in_waivers_yaml(tmp_path: Path) -> None:
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text("waivers:\n  - id: W-9\n    policy: p\n")
    v = Violation("gpupool-waiver", Enforcement.MANDATORY, "W-9", "expired",
                  resource_type="waiver", source=str(waivers))
    doc = sarif.to_sarif(Result([v], [], [], [], 0), root=tmp_path)
    phys = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert phys["artifactLocation"]["uri"] == "waivers.yaml"
    assert phys["region"] == {"startLine": 2, "startColumn": len("  - id: ") + 1}
    assert doc["runs"][0]["tool"]["driver"]["rules"][0]["id"] == "gpupool-waiver"


@pytest.mark.parametrize("origin", ["stack dev @ main..worktree", "stack dev (working tree)",
                                    "stack stacks/Pulumi.dev.yaml @ HEAD~1..worktree"])
def test_stack_findings_point_at_the_stack_file(plan_file: str, origin: str) -> None:
    Path("stacks").mkdir()
    Path("stacks/Pulumi.dev.yaml").write_text("config:\n  gpupool:pools: []\n")
    v = Violation("gpu-smallest-instance", Enforcement.MANDATORY, URN, "m", source=origin)
    loc = sarif.to_sarif(Result([v], [], [origin], [], 1))["runs"][0]["results"][0]
    artifact = loc["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": "stacks/Pulumi.dev.yaml", "uriBaseId": "%SRCROOT%"}


def test_unknown_stack_falls_back_to_a_named_reference(plan_file: str) -> None:
    v = Violation("p", Enforcement.MANDATORY, URN, "m", source="stack gone @ main..worktree")
    loc = sarif.to_sarif(Result([v], [], [], [], 1))["runs"][0]["results"][0]["locations"][0]
    assert loc["physicalLocation"]["artifactLocation"] == {
        "uri": "stack%20gone%20@%20main..worktree"
    }


def test_result_cap_keeps_the_most_severe(plan_file: str, schema: dict[str, Any]) -> None:
    res = full_result()  # 3 errors, 1 warning, 1 note, 1 suppressed
    doc = sarif.to_sarif(res, max_results=4)
    run = run_of(doc)
    assert [r["level"] for r in run["results"]] == ["error", "error", "warning", "error"]
    assert all("suppressions" not in r for r in run["results"])
    assert run["properties"]["resultsOmitted"] == 2
    note = run["invocations"][0]["toolExecutionNotifications"][-1]
    assert note["level"] == "warning" and note["message"]["text"].startswith("2 of 6 results")
    assert schema_errors(schema, doc) == []
    assert run_of(sarif.to_sarif(res))["properties"]["resultsOmitted"] == 0


def test_large_runs_are_compact_and_equal(plan_file: str, monkeypatch: pytest.MonkeyPatch) -> None:
    res = full_result()
    pretty = sarif.render(res)
    monkeypatch.setattr(sarif, "PRETTY_MAX_RESULTS", 2)
    compact = sarif.render(res)
    assert "\n  " in pretty and compact.count("\n") == 1
    assert json.loads(pretty) == json.loads(compact)


def test_information_uri_comes_from_package_metadata(
    plan_file: str, monkeypatch: pytest.MonkeyPatch, schema: dict[str, Any]
) -> None:
    from email.message import Message

    meta = Message()
    meta["Project-URL"] = "Homepage, https://example.org/gpupool"
    monkeypatch.setattr(sarif, "metadata", lambda name: meta)
    doc = sarif.to_sarif(empty_result())
    assert run_of(doc)["tool"]["driver"]["informationUri"] == "https://example.org/gpupool"
    assert schema_errors(schema, doc) == []
    monkeypatch.setattr(sarif, "metadata", lambda name: Message())
    assert "informationUri" not in run_of(sarif.to_sarif(empty_result()))["tool"]["driver"]
