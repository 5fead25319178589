"""docs/policies.md is generated from the rules and committed; it must match the generator."""

from __future__ import annotations

from pathlib import Path

from policies.docs import DOCS_PATH, main, render
from policies.rules import ALL_RULES
from policies.rules.param_schema import json_schema


def test_committed_docs_match_the_generator() -> None:
    assert DOCS_PATH.read_text() == render(), "run: python -m policies.docs"


def test_docs_cover_every_rule_param_and_example() -> None:
    text = render()
    for rule in ALL_RULES:
        assert f"\n## {rule.meta.id}\n" in text
        assert rule.meta.rationale in text
        for alias in json_schema(rule.meta.params)["properties"]:
            assert f"| `{alias}` |" in text
        for ex in rule.examples:
            assert ex.title in text
    assert "> g4dn.xlarge → g4dn.16xlarge adds 60 vCPU" in text


def test_check_mode_reports_drift(tmp_path: Path) -> None:
    stale = tmp_path / "policies.md"
    stale.write_text("old\n")
    assert main(["--check", "--output", str(stale)]) == 1
    assert main(["--output", str(stale)]) == 0
    assert main(["--check", "--output", str(stale)]) == 0
