"""A run of one command builds that command's parser alone (``gpupool.cli.parser_for``, issue 16
item 25: all twelve cost ~10 ms of a check's start-up). What it prints and what it parses are
the full parser's, held here command by command; the full parser is still built for the top
help, the version and anything that is not a command's name (its did-you-mean)."""

from __future__ import annotations

import argparse
import contextlib
import io
import shlex
import shutil

import pytest
from cli_support import subcommands

from gpupool.cli import COMMANDS, build_parser, parser_for
from gpupool.cliargs.parser import terminal_columns

NAMES = [c[0] for c in COMMANDS]


def _top_choices(parser: argparse.ArgumentParser) -> list[str]:
    (subs,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return list(subs.choices)


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[object, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result: object = vars(parser.parse_args(argv))
        except SystemExit as e:
            result = ("exit", e.code)
    return result, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name", NAMES)
def test_a_commands_own_parser_is_the_full_ones(name: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    full = dict(subcommands(build_parser()))
    alone = dict(subcommands(parser_for([name])))
    assert set(alone) == {path for path in full if path[0] == name}
    for path, parser in alone.items():
        assert parser.prog == full[path].prog
        assert parser.format_help() == full[path].format_help()
    examples = [shlex.split(line.strip())[1:] for line in (full[(name,)].epilog or "")
                .splitlines()[1:] if line.strip().startswith(f"gpupool {name}")]
    assert examples
    for argv in [*examples, [name, "--help"], [name, "--no-such-option"], [name, "--formt", "x"],
                 [name, "--today", ""]]:
        assert _parse(parser_for(argv), argv) == _parse(build_parser(), argv), argv


def test_only_a_commands_name_first_builds_one_parser() -> None:
    assert _top_choices(parser_for(["check", "plan.json"])) == ["check"]
    assert _top_choices(parser_for(["catalog", "refresh"])) == ["catalog"]
    for argv in ([], ["--help"], ["--version"], ["chek", "plan.json"], ["-h", "check"],
                 ["plan.json"], ["--", "check"]):
        assert _top_choices(parser_for(argv)) == NAMES, argv
    assert _parse(parser_for(["chek"]), ["chek"]) == _parse(build_parser(), ["chek"])
    assert "(did you mean check?)" in _parse(parser_for(["chek"]), ["chek"])[2]


@pytest.mark.parametrize("columns", [None, "100", "41", "0", "-3", "wide"])
def test_the_help_is_as_wide_as_shutil_says(columns: str | None,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """argparse asked shutil for the terminal's width; the parser reads it the same way."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns
    formatter = build_parser()._get_formatter()
    assert formatter._width == argparse.HelpFormatter("gpupool")._width
