"""``--format json`` is the DESIGN.md document, pretty-printed and complete."""

from __future__ import annotations

import json

from report_samples import full_result

from policies.reports import json as json_report
from policies.result import Result, Violation
from policies.rules.base import Enforcement


def test_fixed_shape() -> None:
    doc = json.loads(json_report.render(full_result()))
    assert doc == json.loads(json.dumps(full_result().to_json()))
    assert doc["verdict"] == "fail"
    for v in doc["violations"]:
        assert {"policy", "enforcement", "resource", "message"} <= set(v)
    assert [e["policy"] for e in doc["errors"]] == ["gpu-pool-scales-on-utilisation",
                                                   "imdsv2-required"]
    assert doc["summary"]["mandatory"] == 3 and doc["summary"]["waived"] == 1


def test_pretty_unicode_and_odd_detail() -> None:
    """Rule detail may hold values JSON cannot carry; the report still renders them."""
    v = Violation("p", Enforcement.ADVISORY, "r", "a → b", detail={"level": Enforcement.MANDATORY,
                                                                  "odd": object})
    out = json_report.render(Result([v], [], [], [], 1))
    assert "a → b" in out and out.startswith("{\n  ")
    assert json.loads(out)["violations"][0]["detail"]["level"] == "mandatory"
