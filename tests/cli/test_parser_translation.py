"""argparse's own words (``options``, ``positional arguments``, -h's help) are translated when a
help is written, not when a parser is built: building one looked each up in gettext, the first
lookup importing locale (4.5 M instructions of a check's start-up, issue 16 item 25). The help
is the same text in a locale that translates them as in one that does not."""

from __future__ import annotations

import argparse
import contextlib
import gettext
import io
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import ROOT

from gpupool.cli import build_parser, parser_for
from gpupool.cliargs.parser import Parser

GERMAN = {"options": "Optionen", "positional arguments": "Positionsargumente",
          "show this help message and exit": "diese Hilfe zeigen und beenden",
          "usage: ": "Aufruf: "}


def _mo(catalog: dict[str, str]) -> bytes:
    """A GNU gettext catalog (.mo) of ``catalog``, as msgfmt writes it (no hash table)."""
    keys = sorted(catalog)
    ids = [k.encode() for k in keys]
    strs = [catalog[k].encode() for k in keys]
    start = 7 * 4 + 16 * len(keys)
    table, data = [], b""
    for text in ids + strs:
        table.append((len(text), start + len(data)))
        data += text + b"\0"
    header = struct.pack("<7I", 0x950412DE, 0, len(keys), 7 * 4, 7 * 4 + 8 * len(keys), 0, 0)
    return header + b"".join(struct.pack("<2I", n, at) for n, at in table) + data


@pytest.fixture
def german(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """argparse's words translated, as a system with a German ``messages`` catalog has them."""
    (tmp_path / "de" / "LC_MESSAGES").mkdir(parents=True)
    (tmp_path / "de" / "LC_MESSAGES" / "messages.mo").write_bytes(_mo(GERMAN))
    monkeypatch.setitem(gettext._localedirs, "messages", str(tmp_path))  # type: ignore[attr-defined]
    monkeypatch.setenv("LANGUAGE", "de")
    monkeypatch.setenv("COLUMNS", "100")


def _argparse_help(parser_class: type[argparse.ArgumentParser]) -> str:
    p = parser_class(prog="tool", description="d")
    p.add_argument("plan")
    p.add_argument("--format")
    return p.format_help()


def test_a_translated_locale_gets_the_same_help_as_from_argparse(german: None) -> None:
    assert gettext.gettext("options") == "Optionen"  # the catalog is read
    help_text = _argparse_help(Parser)
    assert help_text == _argparse_help(argparse.ArgumentParser)
    assert "Positionsargumente:" in help_text and "Optionen:" in help_text
    assert "diese Hilfe zeigen und beenden" in help_text
    check = parser_for(["check"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        check.parse_args(["check", "--help"])
    assert "Optionen:" in out.getvalue() and "  -h, --help" in out.getvalue()
    assert "diese Hilfe zeigen und beenden" in out.getvalue()
    assert out.getvalue().startswith("Aufruf: gpupool check")


def test_without_a_catalog_the_help_is_argparses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert _argparse_help(Parser) == _argparse_help(argparse.ArgumentParser)
    assert "options:" in build_parser().format_help()


def test_building_and_parsing_a_check_imports_no_locale() -> None:
    child = ("import sys\nfrom gpupool.cli import parser_for\n"
             "argv = ['check', 'plan.json', '--format', 'json']\n"
             "parser_for(argv).parse_args(argv)\n"
             "print('locale' in sys.modules)\n")
    p = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                       cwd=ROOT, timeout=120, check=True, env={"LANG": "en_US.UTF-8",
                                                                "PYTHONPATH": str(ROOT)})
    assert p.stdout.strip() == "False", p.stdout + p.stderr
