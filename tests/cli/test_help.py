"""Help that teaches (issue 7, item 16): every command, including those added later, explains
itself with a description and examples that parse; bare ``gpupool`` prints the help; a typo gets
a "did you mean"; a stack file given as a plan says how to check the stack; the catalog reads
well at 100 columns, accepts families and sorts by price per GPU-hour."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys

import pytest
from cli_support import ROOT, run_in_process, run_process, subcommands

from gpupool.catalog import load_catalog
from gpupool.cli import build_parser

COMMANDS = list(subcommands(build_parser()))


def test_the_walk_finds_every_command() -> None:
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {"validate", "catalog", "catalog refresh", "plan", "check"} <= names
    assert len(names) >= 5


@pytest.mark.parametrize(("path", "parser"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_has_a_description_and_examples_that_parse(
        path: tuple[str, ...], parser: argparse.ArgumentParser) -> None:
    """Held for commands added later too: the walk finds them in build_parser()."""
    assert parser.description and len(parser.description) > 40, path
    epilog = parser.epilog or ""
    assert epilog.startswith("examples:\n"), path
    examples = [line.strip() for line in epilog.splitlines()[1:] if line.strip()]
    prefix = "gpupool " + " ".join(path)
    mine = [e for e in examples if e == prefix or e.startswith(prefix + " ")]
    assert mine, f"{prefix}: no example of this command in its --help"
    for example in examples:
        try:
            build_parser().parse_args(shlex.split(example)[1:])
        except SystemExit as e:
            pytest.fail(f"{prefix} --help example does not parse ({e.code}): {example}")
    helptext = parser.format_help()
    assert parser.description.split()[0] in helptext and "examples:" in helptext


@pytest.mark.parametrize("argv", [[], ["netcheck"]], ids=["gpupool", "gpupool netcheck"])
def test_a_missing_command_prints_the_help(argv: list[str]) -> None:
    run = run_process(argv)
    assert run.code == 0 and run.err == ""
    assert run.out.startswith("usage: gpupool")
    if not argv:
        assert all(name in run.out for name in ("validate", "catalog", "plan", "check"))
        assert "examples:" in run.out


@pytest.mark.parametrize(("argv", "says"), [
    (["check", "--fromat", "json", "x.json"], "gpupool check: unrecognized arguments: --fromat "
                                              "(did you mean --format?)"),
    (["plan", "dev", "--outptu", "p.json"], "gpupool plan: unrecognized arguments: --outptu "
                                            "p.json (did you mean --output?)"),
    (["chek", "plan.json"], "(did you mean check?)"),
    (["catalog", "--format", "jsn"], "(did you mean json?)"),
    (["check", "x.json", "--format", "sarfi"], "(did you mean sarif?)"),
])
def test_a_typo_gets_a_suggestion(argv: list[str], says: str) -> None:
    run = run_in_process(argv)
    assert run.code == 2 and run.out == ""
    (line,) = run.err_lines
    assert says in line, line


def test_a_stack_file_given_as_a_plan_hints_at_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    run = run_in_process(["check", "stacks/Pulumi.dev.yaml"])
    assert run.code == 2 and run.err_lines == [
        "gpupool check: stacks/Pulumi.dev.yaml: expected a plan file (terraform show -json, "
        "pulumi preview --json, gpupool plan --format json), got a Pulumi stack file; to check "
        "the stack, run: gpupool check --stack dev"]


# -- the catalog -----------------------------------------------------------------------------


def _catalog(*args: str, env: dict[str, str] | None = None) -> str:
    p = subprocess.run([sys.executable, "-m", "gpupool", "catalog", *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    assert (p.returncode, p.stderr) == (0, ""), p.stderr
    return p.stdout


def _rows(out: str) -> list[str]:
    return [line for line in out.splitlines()
            if re.fullmatch(r"[a-z][a-z0-9-]*\.[a-z0-9]+", line.split(" ", 1)[0])]


@pytest.mark.parametrize("env", [{"COLUMNS": "100"}, {"COLUMNS": "100", "FORCE_COLOR": "1"}],
                         ids=["pipe", "terminal"])
def test_the_catalog_fits_100_columns_one_line_per_type(env: dict[str, str]) -> None:
    out = re.sub(r"\x1b\[[0-9;]*m", "", _catalog(env=env))
    assert max(len(line) for line in out.splitlines()) <= 100
    rows = _rows(out)
    assert sorted(r.split(" ", 1)[0] for r in rows) == sorted(t.instance_type
                                                             for t in load_catalog())
    assert all("…" not in r for r in rows)  # nothing cut
    header = next(line for line in out.splitlines() if line.startswith("type"))
    assert header.rstrip().endswith("◆")  # the last column is still there


def test_the_catalog_is_sorted_by_price_per_gpu_hour() -> None:
    prices = [float(r.replace("◆", "").split()[-1]) for r in _rows(_catalog()) if "—" not in r]
    assert prices == sorted(prices) and len(prices) > 30


def test_the_catalog_takes_families_and_suggests_near_names() -> None:
    rows = _rows(_catalog("--gpu", "g5"))
    assert {r.split(" ", 1)[0].split(".")[0] for r in rows} == {"g5"}
    assert rows[0].startswith("g5.xlarge ")  # the cheapest GPU-hour of the family first
    run = run_in_process(["catalog", "--gpu", "g55"])
    assert run.code == 2 and run.err_lines[0].endswith("got 'g55' (did you mean g5 or g5g?)")
