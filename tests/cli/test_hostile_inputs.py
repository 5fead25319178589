"""Hostile files in every command that reads one: exit 2, one line naming the file, no traceback.

Issue 7, items 6 and 7: duplicate keys, alias bombs, deep nesting, huge integers and lone
surrogates, in stack files (``validate``, ``plan``, ``check --stack``), policy config and waiver
files (``check --config/--waivers``), application profiles (``remoting``), plan files
(``check``) and the structured values the Pulumi engine hands the program as JSON text.
``validate`` and ``plan`` printed tracebacks for deep nesting and huge integers before.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import ROOT, run_in_process

DEV = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()

# name → YAML text that must be refused (each small; an alias bomb expands to ~400M nodes)
_BOMB = "".join(f"  {n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n"
                for p, n in zip("abcdefgh", "bcdefghi", strict=True))
HOSTILE_YAML: dict[str, tuple[str, str]] = {
    "alias bomb": ("config:\n  a: &a [x, x, x, x, x, x, x, x, x]\n" + _BOMB, "alias bomb"),
    "deep nesting": ("config:\n  gpupool:tags: " + "[" * 3000 + "]" * 3000 + "\n",
                     "nesting deeper than 64 levels"),
    "deep mapping": ("config:\n  gpupool:tags: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n",
                     "nesting deeper than 64 levels"),
    "huge integer": (DEV.replace("maxSize: 4", "maxSize: " + "9" * 5000, 1),
                     "a number of more than 4,300 digits"),
    "lone surrogate": (DEV.replace("ml-platform", '"team-\\ud800"', 1),
                       "a lone surrogate escape is not text"),
    "duplicate key": (DEV + "  gpupool:team: someone-else\n", "appears twice"),
}


def _stack(tmp: Path, text: str) -> list[str]:
    f = tmp / "Pulumi.hostile.yaml"
    f.write_text(text, encoding="utf-8")
    return [str(f)]


def _config(tmp: Path, text: str) -> list[str]:
    f = tmp / "policy.yaml"
    f.write_text(text.replace("config:", "gpu-smallest-instance:", 1), encoding="utf-8")
    return ["check", str(ROOT / "tests/fixtures/terraform/upsize-g4dn.json"), "--config", str(f)]


def _waivers(tmp: Path, text: str) -> list[str]:
    f = tmp / "waivers.yaml"
    f.write_text(text.replace("config:", "waivers:", 1), encoding="utf-8")
    return ["check", str(ROOT / "tests/fixtures/terraform/upsize-g4dn.json"), "--waivers", str(f)]


def _profile(tmp: Path, text: str) -> list[str]:
    f = tmp / "profile.yaml"
    f.write_text(text, encoding="utf-8")
    return ["remoting", str(f), "--rtt-us", "10"]


COMMANDS: dict[str, Callable[[Path, str], list[str]]] = {
    "validate": lambda tmp, text: ["validate", *_stack(tmp, text)],
    "plan": lambda tmp, text: ["plan", *_stack(tmp, text)],
    "check --stack": lambda tmp, text: ["check", "--stack", *_stack(tmp, text)],
    "check --config": _config,
    "check --waivers": _waivers,
    "remoting": _profile,
}


@pytest.mark.parametrize("hostile", sorted(HOSTILE_YAML))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_hostile_yaml_in_every_command(tmp_path: Path, command: str, hostile: str) -> None:
    text, expected = HOSTILE_YAML[hostile]
    args = COMMANDS[command](tmp_path, text)
    start = time.process_time()  # in process: its CPU time, which a busy machine leaves alone
    run = run_in_process(args)
    assert time.process_time() - start < 10
    assert run.code == 2, (run.code, run.err[-2000:])
    assert "Traceback" not in run.err
    lines = run.err_lines
    assert lines and all(line.startswith(f"gpupool {args[0]}: ") for line in lines), lines
    assert any(expected in line for line in lines), lines


# --- JSON: plan files ---------------------------------------------------------------------------

_PLAN = '{"format_version": "1.2", "resource_changes": [%s]}'
_RC = ('{"address": "aws_instance.gpu", "mode": "managed", "type": "aws_instance", "name": "gpu", '
       '"change": {"actions": ["create"], "before": null, "after": {%s}}}')

HOSTILE_JSON: dict[str, tuple[str, str]] = {
    "duplicate resource_changes": (
        '{"format_version": "1.2", "resource_changes": [], "resource_changes": [%s]}'
        % (_RC % '"instance_type": "g4dn.12xlarge"'),
        'key "resource_changes": expected each key once in an object'),
    "duplicate key in inputs": (
        _PLAN % (_RC % '"instance_type": "g4dn.xlarge", "instance_type": "g4dn.12xlarge"'),
        'key "instance_type": expected each key once'),
    "NaN": (_PLAN % (_RC % '"max_size": NaN'),
            '(key "max_size"): expected a JSON number, got NaN (not JSON)'),
    "Infinity": (_PLAN % (_RC % '"max_size": -Infinity'), "got -Infinity (not JSON)"),
    "1e999": (_PLAN % (_RC % '"max_size": 1e999'), "expected a finite number, got 1e999"),
    "5000 digits": (_PLAN % (_RC % ('"max_size": ' + "9" * 5000)),
                    '(key "max_size"): expected a number of at most 4,300 digits'),
    "deep nesting": ('{"format_version": "1.2", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
                     "nesting too deep"),
}


@pytest.mark.parametrize("hostile", sorted(HOSTILE_JSON))
def test_hostile_json_plan(tmp_path: Path, hostile: str) -> None:
    text, expected = HOSTILE_JSON[hostile]
    plan = tmp_path / "plan.json"
    plan.write_text(text, encoding="utf-8")
    run = run_in_process(["check", str(plan), "--format", "json"])
    assert run.code == 2, (run.code, run.err[-500:])
    (line,) = run.err_lines
    assert line.startswith(f"gpupool check: {plan}: ") and expected in line, line
    assert run.out == ""


def test_structured_config_values_from_the_engine_are_json_too(tmp_path: Path) -> None:
    """``pulumi config set --path`` values reach the program as JSON text: same refusals."""
    text = DEV.split("  gpupool:pools:")[0] + (
        '  gpupool:pools: \'[{"name": "a", "name": "b", "gpu": "T4"}]\'\n')
    run = run_in_process(["validate", *_stack(tmp_path, text)])
    assert run.code == 2
    assert any('gpupool:pools: key "name": expected each key once' in x for x in run.err_lines)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('"g4dn.xlarge": 0.526, "g4dn.xlarge": 0.001', 'key "g4dn.xlarge": expected each key once'),
        ('"g4dn.xlarge": NaN', "expected a JSON number, got NaN"),
        ('"g4dn.xlarge": 1e999', "expected a finite number, got 1e999"),
    ],
)
def test_hostile_price_list(tmp_path: Path, body: str, expected: str) -> None:
    """``catalog refresh --prices``: refused before any call to EC2 is made."""
    prices = tmp_path / "prices.json"
    prices.write_text('{"source": "s", "generated_at": "2026-07-01", "region": "us-east-1", '
                      '"prices": {' + body + "}}", encoding="utf-8")
    run = run_in_process(["catalog", "refresh", "--prices", str(prices),
                          "--output", str(tmp_path / "out.json")])
    assert run.code == 2
    (line,) = run.err_lines
    assert line.startswith(f"gpupool catalog: {prices}: ") and expected in line, line
