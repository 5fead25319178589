"""``--format junit``: JUnit XML, so any CI test tab shows policy results next to test results.

Mapping (one ``testsuite`` per policy, one ``testcase`` per finding):

- a blocking violation (mandatory, not waived — "cannot verify" included when configured
  mandatory) is a ``failure``;
- an advisory finding or a waived one is ``skipped`` with the reason, so it stays visible
  without failing the build, as the check itself does not fail on it;
- a rule error is an ``error`` (it fails the check, as a crashing test fails a suite);
- a policy with no finding gets one passing testcase, so "N tests, 0 failures" means the
  policy ran, and a disabled policy one skipped testcase saying so.

Counts on every ``testsuite`` and on ``testsuites`` are computed from the cases written, so they
agree by construction. No timestamps or host names: the same result gives the same bytes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from policies.reports._common import policy_index, resource_names, waiver_justification
from policies.result import Result, RuleError, Violation
from policies.rules.params import Enforcement

# XML 1.0 cannot carry these at all, escaped or not; a plan's strings might contain them.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def render(result: Result) -> str:
    policies = policy_index(result)
    root = ET.Element("testsuites", {"name": "gpupool check"})
    # ``testsuites`` carries no ``skipped`` count in the Jenkins JUnit schema; suites do.
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for pid, policy in policies.items():
        suite = _suite(
            pid,
            policy,
            [v for v in result.violations if v.policy == pid],
            [e for e in result.errors if e.policy == pid],
        )
        root.append(suite)
        for key in totals:
            totals[key] += int(suite.get(key, "0"))
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", "0")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _suite(
    pid: str, policy: Mapping[str, Any], violations: list[Violation], errors: list[RuleError]
) -> ET.Element:
    suite = ET.Element("testsuite", {"name": _clean(pid)})
    enforcement = str(policy.get("enforcement") or "")
    props = ET.SubElement(suite, "properties")
    for name, value in (("enforcement", enforcement), ("title", str(policy.get("title") or ""))):
        ET.SubElement(props, "property", {"name": name, "value": _clean(value)})
    seen: dict[str, int] = {}
    for v in violations:
        case = _case(suite, pid, _unique(resource_names(v), seen))
        where = "".join(f"\nresource: {r.address}" for r in v.resources)
        text = _clean(f"{v.message}{where}\nsource: {v.source}")
        if v.blocking:
            kind = "cannot verify" if v.unknown else "mandatory"
            el = ET.SubElement(case, "failure", {"message": _clean(v.message), "type": kind})
            el.text = text
        else:
            reason = waiver_justification(v) if v.waived_by is not None else _why(v)
            ET.SubElement(case, "skipped", {"message": _clean(reason)})
            ET.SubElement(case, "system-out").text = text
    for e in errors:
        case = _case(suite, pid, _unique(e.resource or "(rule)", seen))
        el = ET.SubElement(case, "error", {"message": _clean(e.message), "type": "rule-error"})
        el.text = _clean(f"{e.policy} raised: {e.message}")
    if not violations and not errors:
        if enforcement == Enforcement.DISABLED:
            case = _case(suite, pid, "disabled")
            ET.SubElement(case, "skipped", {"message": "disabled by configuration"})
        else:
            _case(suite, pid, "no findings")
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    suite.set("errors", str(sum(1 for c in cases if c.find("error") is not None)))
    suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
    suite.set("time", "0")
    return suite


def _why(v: Violation) -> str:
    if not v.unknown:
        return f"advisory: {v.message}"
    return v.message if v.message.startswith("cannot verify") else f"cannot verify: {v.message}"


def _case(suite: ET.Element, pid: str, name: str) -> ET.Element:
    return ET.SubElement(
        suite, "testcase", {"name": _clean(name), "classname": _clean(pid), "time": "0"}
    )


def _unique(name: str, seen: dict[str, int]) -> str:
    """Two findings of one policy on one resource must not merge in a CI's test view."""
    seen[name] = seen.get(name, 0) + 1
    return name if seen[name] == 1 else f"{name} ({seen[name]})"
