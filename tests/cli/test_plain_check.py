"""A plain ``gpupool check`` command line is read without argparse (gpupool.cliargs.plain_check,
issue 16 item 25) and means exactly what argparse makes of it; anything else is argparse's.
(That such a check imports no argparse is held in test_check_imports.py.)"""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest
from cli_support import run_in_process
from hypothesis import given, settings
from hypothesis import strategies as st

from gpupool.cli import parser_for
from gpupool.cliargs.plain_check import OPTIONS, parse


def _check_parser() -> argparse.ArgumentParser:
    (subs,) = [a for a in parser_for(["check"])._actions
               if isinstance(a, argparse._SubParsersAction)]
    return subs.choices["check"]


def _argparse(argv: list[str]) -> dict[str, object] | None:
    """What argparse makes of ``argv``: its namespace, or None when it refuses it (or helps)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return vars(parser_for(argv).parse_args(argv))
        except SystemExit:
            return None


def test_the_table_is_the_check_parsers_options() -> None:
    """An option added to add_check without the table would be read wrongly: held here."""
    kinds = {argparse._AppendAction: "append", argparse._StoreAction: "store",
             argparse._StoreTrueAction: "flag"}
    parser = _check_parser()
    assert parser.prefix_chars == "-" and parser.fromfile_prefix_chars is None
    table, positionals = {}, []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if not action.option_strings:
            positionals.append((action.dest, action.nargs, action.default, action.type))
            continue
        (option,) = action.option_strings  # long options only, no abbreviation table to keep
        how = kinds[type(action)]
        assert action.type is None and action.choices is None and not action.required
        if how == "flag":
            assert (action.nargs, action.const, action.default) == (0, True, False)
        else:
            assert (action.nargs, action.const, action.default) == (None, None, None)
        table[option] = (action.dest, how)
    assert list(table.items()) == list(OPTIONS.items())
    assert positionals == [("plans", "*", None, None)]


PLAIN = [
    ["check", "plan.json", "--format", "json"],
    ["check", "plan.json"],
    ["check"],
    ["check", "a.json", "b.json", "--format", "sarif", "--output", "r.sarif"],
    ["check", "--format", "json", "--output", "-", "a.json", "b.json"],
    ["check", "-", "--format=markdown=c.md", "--format", "text", "--soft-fail"],
    ["check", "--stack", "dev", "--stack", "prod", "--base", "origin/main", "--changed-only"],
    ["check", "p.json", "--check", "gpu-*", "--skip-check", "ebs-encrypted,imdsv2-required",
     "--config", "c.yaml", "--waivers", "w.yaml", "--today", "2026-01-01", "--teams", "t.yaml",
     "--utilisation", "u.json", "--tf-root", "tf", "--cluster-dump", "d.json",
     "--output", "a", "--output", "b"],
    ["check", "check", "a=b.json", "ünïcode plan.json"],
]


@pytest.mark.parametrize("argv", PLAIN, ids=[" ".join(a) for a in PLAIN])
def test_a_plain_command_line_is_read_as_argparse_reads_it(argv: list[str]) -> None:
    plain = parse(argv)
    assert plain is not None
    assert vars(plain) == _argparse(argv)
    assert list(vars(plain)) == list(_argparse(argv) or ())  # same names, same order


NOT_PLAIN = [
    ["check", "--help"], ["check", "-h"], ["check", "--form", "json"], ["check", "--version"],
    ["check", "a.json", "--format", "json", "b.json"], ["check", "--format"],
    ["check", "--output", "-x"], ["check", "--output", ""], ["check", " "],
    ["check", "--output="], ["check", "--soft-fail=yes"], ["check", "--", "a.json"],
    ["check", "--unknown"], ["plan", "dev"], [], ["--version"], ["chek", "a.json"],
    ["check", "-o", "x"], ["check", "--skip-check", "-1"],
]


@pytest.mark.parametrize("argv", NOT_PLAIN, ids=[" ".join(a) or "(none)" for a in NOT_PLAIN])
def test_anything_else_is_left_to_argparse(argv: list[str]) -> None:
    assert parse(argv) is None


WORDS = ["a.json", "b.json", "-", "", " ", "json", "x=y", "-x", "--", "-1", "--form", "-h",
         "--help", "--version", "--format=json", "--format=", "--soft-fail=1", "--output=-",
         "check", *OPTIONS]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=7))
def test_whatever_plain_reads_argparse_reads_the_same(words: list[str]) -> None:
    """Both ways on generated command lines: plain reads a line only as argparse does."""
    argv = ["check", *words]
    plain = parse(argv)
    if plain is not None:
        assert vars(plain) == _argparse(argv), argv


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a.json", "b.json", "-", "json", "x=y", "check", *OPTIONS]),
                max_size=7))
def test_lines_of_plain_words_read_alike(words: list[str]) -> None:
    """Words each of which plain reads: where it reads the line, argparse agrees."""
    argv = ["check", *words]
    plain = parse(argv)
    if plain is not None:
        assert vars(plain) == _argparse(argv), argv


def test_a_line_left_to_argparse_gets_its_help_and_errors() -> None:
    """The counter-case, through the real CLI: argparse's did-you-mean and its help."""
    typo = run_in_process(["check", "plan.json", "--formt", "json"])
    assert typo.code == 2
    assert typo.err_lines == ["gpupool check: unrecognized arguments: --formt json "
                              "(did you mean --format?)"]
    helped = run_in_process(["check", "--help"])
    assert helped.code == 0 and helped.out.startswith("usage: gpupool check")
