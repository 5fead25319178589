
"""Reports a reviewer can read in a pull request (issue 7, item 14): one finding per cause
naming every resource it is on, resources as ``name (type)`` rather than URNs, the stack in the
heading, SARIF locations at the stack-file line that sets the value, several formats from one
run."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from jsonschema import Draft7Validator

from policies.engine import evaluate
from policies.model import Plan
from policies.reports import render
from policies.rules.base import Example
from policies.settings import Settings, Waiver
from policies.sources import load_plan
from tests.cli.cli_support import (
    PULUMI_UPSIZE,
    ROOT,
    SCHEMAS,
    TF_UPSIZE,
    run_in_process,
    run_process,
)

TODAY = date(2026, 6, 1)
UPSIZE_LT = {"type": "aws_launch_template", "name": "gpu", "address": "aws_launch_template.gpu",
             "old": {"instance_type": "g4dn.xlarge", "name": "gpu"},
             "new": {"instance_type": "g4dn.2xlarge", "name": "gpu"}}


def group(name: str) -> dict[str, object]:
    overrides = [{"override": [{"instance_type": "g4dn.xlarge"}],
                  "launch_template_specification": [{"launch_template_name": "gpu"}]}]
    new = [{"override": [{"instance_type": "g4dn.2xlarge"}],
            "launch_template_specification": [{"launch_template_name": "gpu"}]}]
    return {"type": "aws_autoscaling_group", "name": name,
            "address": f"aws_autoscaling_group.{name}",
            "old": {"mixed_instances_policy": [{"launch_template": overrides}]},
            "new": {"mixed_instances_policy": [{"launch_template": new}]}}


def upsizes(*resources: dict[str, object], waivers: tuple[Waiver, ...] = ()) -> list[list[str]]:
    plan = Plan("test", "plan.json", tuple(Example("t", False, resources).changes()))
    result = evaluate([plan], Settings.default().with_waivers(waivers, "w.yaml"), today=TODAY)
    return [[r.address for r in v.resources] for v in result.violations
            if v.policy == "gpu-no-vertical-upsize" and v.waived_by is None]


# -- one finding per cause -----------------------------------------------------------------


def test_a_template_and_the_groups_launching_from_it_are_one_finding() -> None:
    assert upsizes(UPSIZE_LT, group("a"), group("b")) == [
        ["aws_launch_template.gpu", "aws_autoscaling_group.a", "aws_autoscaling_group.b"]]


def test_the_same_change_on_unlinked_resources_stays_separate() -> None:
    other = {"type": "aws_instance", "name": "x", "address": "aws_instance.x",
             "old": {"instance_type": "g4dn.xlarge"}, "new": {"instance_type": "g4dn.2xlarge"}}
    assert upsizes(UPSIZE_LT, other) == [["aws_launch_template.gpu"], ["aws_instance.x"]]


def test_a_waiver_must_cover_every_resource_of_the_cause() -> None:
    def waiver(resource: str) -> Waiver:
        return Waiver.model_validate({
            "id": "W", "policy": "gpu-no-vertical-upsize", "resource": resource, "owner": "o",
            "reason": "r", "expires": date(2027, 1, 1)})

    assert upsizes(UPSIZE_LT, group("a"), waivers=(waiver("aws_launch_template.*"),)) == [
        ["aws_launch_template.gpu", "aws_autoscaling_group.a"]]
    assert upsizes(UPSIZE_LT, group("a"), waivers=(waiver("aws_*.*"),)) == []


def test_json_lists_every_resource_of_a_finding() -> None:
    doc = json.loads(render(evaluate([load_plan(TF_UPSIZE)], Settings.default()), "json"))
    both = [v for v in doc["violations"] if len(v["resources"]) > 1]
    assert {tuple(v["resources"]) for v in both} == {
        ("aws_launch_template.gpu", "aws_autoscaling_group.gpu")}
    assert all(v["resource"] == v["resources"][0] for v in doc["violations"])
    assert {v["property"] for v in both} == {"instance_type"}


# -- names, not URNs -------------------------------------------------------------------------


def test_markdown_names_resources_and_the_stack() -> None:
    md = render(evaluate([load_plan(PULUMI_UPSIZE)], Settings.default()), "markdown")
    assert md.splitlines()[1] == (
        "## ❌ gpupool check failed for stack prod: 5 mandatory violations")
    assert "urn:pulumi:" not in md
    assert ("| inference (aws.ec2.LaunchTemplate)<br>inference (aws.autoscaling.Group) "
            "| g4dn.xlarge → g4dn.2xlarge adds") in md
    assert "| trainer (aws.ec2.Instance) |" in md


def _valid_sarif(doc: dict[str, object]) -> None:
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    assert list(Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER)
                .iter_errors(doc)) == []


def test_sarif_messages_name_resources_and_one_result_carries_both() -> None:
    doc = json.loads(render(evaluate([load_plan(PULUMI_UPSIZE)], Settings.default()), "sarif",
                            root=ROOT))
    _valid_sarif(doc)
    results = doc["runs"][0]["results"]
    assert all("urn:pulumi:" not in r["message"]["text"] for r in results)
    upsize = [r for r in results if r["ruleId"] == "gpu-no-vertical-upsize"]
    assert [r["message"]["text"].split(": g4dn")[0] for r in upsize] == [
        "inference (aws.ec2.LaunchTemplate) and inference (aws.autoscaling.Group)",
        "trainer (aws.ec2.Instance)"]
    names = [loc["fullyQualifiedName"].rsplit("::", 1)[-1] + " " + loc["decoratedName"]
             for loc in upsize[0]["locations"][0]["logicalLocations"]]
    assert names == ["inference aws:ec2/launchTemplate:LaunchTemplate",
                     "inference aws:autoscaling/group:Group"]
    assert doc["runs"][0]["properties"]["stacks"] == ["prod"]


def test_sarif_points_at_the_stack_file_line_that_sets_the_value() -> None:
    """staging's training pool starts at minSize 0: the advisory lands on that very line."""
    run = run_process(["check", "--stack", "staging", "--format", "sarif"])
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    _valid_sarif(doc)
    base = doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file:///") and base.endswith("/")
    (result,) = [r for r in doc["runs"][0]["results"] if "minSize is 0" in r["message"]["text"]]
    location = result["locations"][0]
    phys = location["physicalLocation"]
    assert phys["artifactLocation"] == {"uri": "stacks/Pulumi.staging.yaml",
                                        "uriBaseId": "%SRCROOT%"}
    lines = (ROOT / "stacks" / "Pulumi.staging.yaml").read_text().splitlines()
    pools = [i for i, line in enumerate(lines) if line.lstrip().startswith("- name:")]
    training = next(i for i in pools
                    if lines[i].split(":", 1)[1].split("#")[0].strip() == "training")
    index = pools.index(training)
    line = phys["region"]["startLine"]
    assert line > training + 1 and lines[line - 1].strip() == "minSize: 0"
    assert phys["region"]["startColumn"] == lines[line - 1].index("minSize") + 1
    assert location["message"]["text"] == f"set by gpupool:pools[{index}].minSize"
    assert result["message"]["text"].startswith("staging-training-asg (aws.autoscaling.Group): ")


# -- several formats from one run --------------------------------------------------------


def test_several_reports_from_one_run(tmp_path: Path) -> None:
    sarif, md = tmp_path / "gpupool.sarif", tmp_path / "comment.md"
    run = run_in_process(["check", str(TF_UPSIZE), "--format", f"sarif={sarif}",
                          "--format", f"markdown={md}", "--format", "json"])
    assert run.code == 1
    assert json.loads(run.out)["verdict"] == "fail"
    _valid_sarif(json.loads(sarif.read_text()))
    assert md.read_text().startswith("<!-- gpupool-check -->\n## ❌ gpupool check failed")
    (line,) = run.err_lines
    assert line.endswith(f"; sarif report written to {sarif}, markdown report written to {md}")


def test_two_reports_cannot_share_stdout() -> None:
    run = run_in_process(["check", str(TF_UPSIZE), "--format", "sarif", "--format", "json"])
    assert run.code == 2 and run.err_lines == [
        "gpupool check: --format: sarif and json would both go to stdout; give all but one a "
        "file: --format FORMAT=FILE"]
