"""JUnit XML: parses, validates against the Jenkins JUnit schema, and the counts are right."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from report_samples import ASG_ADDR, TF_ADDR, advisory_only_result, empty_result, full_result

from policies.reports import junit
from policies.result import Result, RuleError, Violation
from policies.rules.base import Enforcement

XSD = Path(__file__).resolve().parents[2] / "fixtures" / "schemas" / "junit-10.xsd"


@pytest.fixture(scope="module")
def schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(XSD)


def suites(xml: str) -> dict[str, ET.Element]:
    root = ET.fromstring(xml)
    assert root.tag == "testsuites"
    return {s.get("name", ""): s for s in root.findall("testsuite")}


@pytest.mark.parametrize("make", [full_result, empty_result, advisory_only_result])
def test_valid_against_junit_schema(make, schema: xmlschema.XMLSchema) -> None:
    errors = [str(e.reason) for e in schema.iter_errors(junit.render(make()))]
    assert errors == []


def test_schema_check_is_not_vacuous(schema: xmlschema.XMLSchema) -> None:
    bad = junit.render(full_result()).replace("<testsuites ", "<testsuites skipped=\"1\" ", 1)
    assert not schema.is_valid(bad)


def test_counts_add_up() -> None:
    xml = junit.render(full_result())
    root = ET.fromstring(xml)
    by = suites(xml)
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("9", "3", "2")
    assert sum(int(s.get("skipped", "0")) for s in by.values()) == 4
    for s in by.values():
        cases = s.findall("testcase")
        assert int(s.get("tests", "-1")) == len(cases)
        for kind in ("failure", "error", "skipped"):
            n = sum(1 for c in cases if c.find(kind) is not None)
            assert int(s.get("failures" if kind == "failure" else
                             "errors" if kind == "error" else "skipped", "-1")) == n


def test_each_finding_maps_to_the_right_outcome() -> None:
    by = suites(junit.render(full_result()))
    smallest = by["gpu-smallest-instance"]
    cases = {c.get("name"): c for c in smallest.findall("testcase")}
    assert cases[TF_ADDR].find("failure").get("type") == "mandatory"
    assert cases[ASG_ADDR].find("failure").get("type") == "cannot verify"
    waived = [c for c in cases.values() if c.find("skipped") is not None]
    assert len(waived) == 1 and "W-7" in waived[0].find("skipped").get("message")
    imds = {c.get("name"): c for c in by["imdsv2-required"].findall("testcase")}
    assert imds["(rule)"].find("error").get("message") == "rule crashed: boom"
    assert imds["aws_launch_template.gpu"].find("skipped").get("message").startswith(
        "cannot verify: metadata_options")
    assert by["gpu-chargeback-tags"].find("testcase/skipped").get("message").startswith(
        "advisory: ")
    assert by["gpu-pool-scales-on-utilisation"].get("errors") == "1"


def test_clean_policies_get_a_passing_case_and_disabled_a_skipped_one() -> None:
    by = suites(junit.render(empty_result()))
    assert set(by) == {"gpu-no-vertical-upsize", "gpu-smallest-instance", "gpu-chargeback-tags",
                       "imdsv2-required", "ebs-encrypted"}
    for name, s in by.items():
        (case,) = s.findall("testcase")
        if name == "ebs-encrypted":
            assert case.find("skipped").get("message") == "disabled by configuration"
        else:
            assert case.get("name") == "no findings" and len(case) == 0
        assert s.find("properties/property[@name='enforcement']") is not None


def test_hostile_text_and_duplicate_names_survive() -> None:
    M = Enforcement.MANDATORY
    res = Result(
        [Violation("p", M, "r", "bell \x07 and ]]> and <x/> & \x00"),
         Violation("p", M, "r", "second on the same resource")],
        [RuleError("p", "nul \x00 in error")], [], [], 1)
    xml = junit.render(res)
    cases = suites(xml)["p"].findall("testcase")
    assert [c.get("name") for c in cases] == ["r", "r (2)", "(rule)"]
    assert "<x/> & " in cases[0].find("failure").get("message")


def test_deterministic() -> None:
    assert junit.render(full_result()) == junit.render(full_result())
