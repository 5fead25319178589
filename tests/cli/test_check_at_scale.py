"""What keeps ``gpupool check`` fast on large plans (issue 7, item 22), held structurally.

Timings are measured by bench/check_bench.py, not here (a shared 2-core machine makes timing
tests flaky). What these tests hold is what the speed comes from:

- the cyclic garbage collector is paused while the plan is read, judged and reported (its
  collections rescanning millions of acyclic objects were 20-35 % of a 100k-resource check),
  and switched back on afterwards;
- a large JSON report is written one item per line by the C encoder: ``indent=2`` runs in
  pure Python, three times slower; a small report stays indented throughout;
- checking a plan does not import the stack config's pydantic models (start-up).
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import PULUMI_UPSIZE, ROOT, TF_UPSIZE, run_in_process

import policies.engine
import policies.reports
import policies.sources
from policies.reports import json as json_report
from policies.result import CostLine, Result, RuleError, Violation
from policies.rules.base import Enforcement


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


@pytest.mark.parametrize("plan", [TF_UPSIZE, PULUMI_UPSIZE], ids=["terraform", "pulumi"])
def test_collector_paused_while_reading_judging_and_reporting(
        plan: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, list[bool]] = {"read": [], "rules": [], "report": []}

    def spy(phase: str, real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            seen[phase].append(gc.isenabled())
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(policies.sources, "load_plans", spy("read", policies.sources.load_plans))
    monkeypatch.setattr(policies.engine, "_run", spy("rules", policies.engine._run))
    monkeypatch.setattr(policies.reports, "render_utf8",
                        spy("report", policies.reports.render_utf8))
    run = run_in_process(["check", str(plan), "--format", "json"])
    assert run.code == 1 and json.loads(run.out)["verdict"] == "fail"
    assert seen["read"] == [False] and seen["report"] == [False]
    assert seen["rules"] and not any(seen["rules"])
    assert gc.isenabled()  # and on again once the check is done


def test_evaluate_pauses_the_collector_for_every_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CrossGuard pack and library callers evaluate without the CLI around them."""
    from policies.settings import load_settings
    from policies.sources import load_plan

    plan = load_plan(TF_UPSIZE)
    during: list[bool] = []
    real = policies.engine._run

    def run(*args: Any) -> None:
        during.append(gc.isenabled())
        real(*args)

    monkeypatch.setattr(policies.engine, "_run", run)
    result = policies.engine.evaluate([plan], load_settings(None, None))
    assert result.violations and during and not any(during)
    assert gc.isenabled()


def _result(findings: int) -> Result:
    violations = [Violation("gpu-smallest-instance", Enforcement.MANDATORY,
                            f"aws_instance.gpu[{i}]",
                            f"g4dn.2xlarge → g4dn.xlarge, {i} \"quoted\"\nand a new line",
                            "aws_instance", "plan.json",
                            detail={"n": i, "level": Enforcement.ADVISORY})
                  for i in range(findings)]
    cost = [CostLine(f"aws_instance.gpu[{i}]", 0.526, 0.752) for i in range(3)]
    errors = [RuleError("imdsv2-required", "aws_instance.x", "boom")]
    return Result(violations, errors, ["plan.json"], [], findings, cost)


def test_a_large_report_is_one_item_per_line_and_the_same_document() -> None:
    big = _result(json_report.INDENT_MAX_ITEMS + 1)
    assert not json_report.indents(big)
    out = json_report.render(big)
    doc = json.loads(out)
    indented = json.dumps(big.to_json(), indent=2, ensure_ascii=False, default=str)
    assert doc == json.loads(indented)  # the same keys and values as the indented report
    lines = out.splitlines()
    assert lines[0] == "{" and lines[1] == '  "verdict": "fail",' and lines[-1] == "}"
    found = [line for line in lines if line.startswith('    {"policy": "gpu-smallest')]
    assert len(found) == len(big.violations)  # every finding on a line of its own
    assert json.loads(found[7].rstrip(",")) == doc["violations"][7]
    assert len(lines) < len(big.violations) + 100  # not indented throughout (that is ~20x)


def test_a_small_report_stays_indented() -> None:
    small = _result(json_report.INDENT_MAX_ITEMS - 4)  # + three cost lines and an error
    assert json_report.indents(small)
    out = json_report.render(small)
    assert out == json.dumps(small.to_json(), indent=2, ensure_ascii=False, default=str) + "\n"


def test_a_large_report_keeps_surrogates_and_refuses_nan() -> None:
    big = _result(json_report.INDENT_MAX_ITEMS + 1)
    big.violations[0] = Violation("p", Enforcement.MANDATORY, "aws_instance.gpu\ud800", "m")
    doc = json.loads(policies.reports.render(big, "json"))
    assert doc["violations"][0]["resource"] == "aws_instance.gpu\ud800"
    big.cost[0] = CostLine("aws_instance.x", float("nan"), 1.0)
    with pytest.raises(ValueError, match="JSON"):
        json_report.render(big)


def test_checking_a_plan_does_not_import_the_stack_config_models(tmp_path: Path) -> None:
    """gpupool.config's pydantic models (and gpupool.teams on top) were a sixth of a check's
    start-up; a plan without a teams file never needs them."""
    code = (
        "import sys\n"
        "from gpupool.cli import main\n"
        f"rc = main(['check', {str(TF_UPSIZE)!r}, '--format', 'json', '--output', "
        f"{str(tmp_path / 'r.json')!r}])\n"
        "print(rc, sorted(m for m in sys.modules if m.startswith(('gpupool.config', "
        "'gpupool.teams'))))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert p.stdout.split(None, 1) == ["1", "[]\n"], p.stdout + p.stderr
