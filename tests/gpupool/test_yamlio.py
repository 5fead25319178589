"""The shared YAML reader refuses what PyYAML's safe_load would accept silently or blow up on."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gpupool import yamlio
from gpupool.errors import InputError
from gpupool.yamlio import (
    _HAVE_LIBYAML,
    _SLOW,
    _parse_fast,
    compose_yaml,
    parse_yaml,
    parse_yaml_documents,
    quote,
    read_yaml,
)

BOMB = "".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi", strict=True)
)


def test_plain_documents_and_small_aliases_parse() -> None:
    assert parse_yaml("a: &x {b: 1}\nc: *x\n", "f.yaml") == {"a": {"b": 1}, "c": {"b": 1}}
    assert parse_yaml("", "f.yaml") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: 1\na: 2\n", "f.yaml: expected valid YAML (line 2, column 1: key 'a' appears twice)"),
        ("expires: 2026-01-01\nexpires: 2099-01-01\n", "key 'expires' appears twice"),
        ("a: &a 1\n" + BOMB.replace("*a", "*a"), "alias bomb"),
        ("[" * 5000 + "]" * 5000, "nesting deeper than 64 levels"),
        ("a: &a 1\nb: [" + ",".join(["*a"] * 2000) + "]", "more than 1000 aliases"),
        ("a: \ud800", "lone surrogate"),
        ('a: "\\ud800"', "line 1, column 4: a lone surrogate escape is not text"),
        ('"\\udc00": 1', "a lone surrogate escape is not text"),
        ("a: " + "9" * 5000, "line 1, column 4: a number of more than 4,300 digits"),
        ("a: [", "expected valid YAML (line 1, column 5"),
    ],
)
def test_hostile_yaml_is_one_clear_error(text: str, expected: str) -> None:
    start = time.process_time()  # this process's CPU: a busy machine stretches wall time only
    with pytest.raises(InputError) as e:
        parse_yaml(text, "f.yaml")
    # refused fast, never expanded: milliseconds of CPU; an expanded bomb would take minutes
    assert time.process_time() - start < 5.0
    assert len(e.value.problems) == 1
    assert expected in e.value.problems[0]


def test_files_that_are_not_utf8_or_missing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"a: \xff\n")
    with pytest.raises(InputError, match=r"bad.yaml: expected UTF-8 text \(byte 3 is not\)"):
        read_yaml(bad)
    with pytest.raises(InputError, match="no such file"):
        read_yaml(tmp_path / "missing.yaml")
    with pytest.raises(InputError, match="expected a file, got a directory"):
        read_yaml(tmp_path)


def test_quote_is_bounded_and_printable() -> None:
    shown = quote("x" * 500)
    assert len(shown) == 60 and shown.endswith("…")
    assert quote("\ud800").encode("utf-8")



ROOT = Path(__file__).resolve().parents[2]
REAL_FILES = sorted([*ROOT.glob("stacks/**/*.yaml"), *ROOT.glob("tests/fixtures/**/*.yaml"),
                     *ROOT.glob("tests/fixtures/**/*.yml")])


def _outcome(text: str) -> tuple[str, object]:
    """What parse_yaml answers: the value, the error lines, or the exception's type."""
    try:
        return "value", parse_yaml(text, "f.yaml")
    except InputError as e:
        return "error", e.problems
    except Exception as e:
        return "raised", type(e).__name__


def _python_outcome(text: str) -> tuple[str, object]:
    """parse_yaml's answer with the libyaml path switched off: the Python reader alone."""
    fast = yamlio._parse_fast
    yamlio._parse_fast = lambda _text: _SLOW
    try:
        return _outcome(text)
    finally:
        yamlio._parse_fast = fast


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_libyaml_path_reads_real_files_as_the_python_reader_does(path: Path) -> None:
    """parse_yaml takes libyaml for plain documents (the speed of `gpupool validate` and
    `new-stack`); every answer (value or error line) must be the bounded Python reader's."""
    text = path.read_bytes().decode("utf-8", "replace")  # not UTF-8: refused before parsing
    assert _outcome(text) == _python_outcome(text)


def test_plain_stack_takes_the_libyaml_path() -> None:
    assert _HAVE_LIBYAML  # PyYAML's wheels ship libyaml; without it every parse is Python's
    assert _parse_fast((ROOT / "stacks/Pulumi.prod.yaml").read_text()) is not _SLOW
    assert _parse_fast("a: &x 1\nb: *x\n") is _SLOW  # aliases: the Python reader's bounds
    assert _parse_fast("a: [" * 40 + "]" * 40) is _SLOW  # deeper than MAX_DEPTH levels
    assert _parse_fast("a: 1\na: 2\n") is _SLOW  # any error: reported in the Python's words


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20),
                    st.floats(allow_nan=False), st.dates())
documents = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)),
    max_leaves=30)


@settings(deadline=None)
@given(documents, st.booleans())
def test_both_readers_agree(value: object, flow: bool) -> None:
    text = yaml.safe_dump(value, default_flow_style=flow, allow_unicode=True)
    assert _outcome(text) == _python_outcome(text)


@settings(deadline=None)
@given(st.text(alphabet="ab: -[]{},&*!#?|>%1'\"\n\t\x07\u00e9", max_size=40))
def test_both_readers_agree_on_any_text(text: str) -> None:
    """Broken input included: errors go to the Python reader, which words them as before."""
    assert _outcome(text) == _python_outcome(text)


@pytest.mark.parametrize("text", ["a: \x07\n", "a: b\x1b\n", "\x00"])
def test_control_characters_are_bad_input_not_a_traceback(text: str) -> None:
    with pytest.raises(InputError) as e:
        parse_yaml(text, "stack.yaml")
    [line] = e.value.problems
    assert line.startswith("stack.yaml: expected valid YAML (character 0x")
    assert "control characters are not allowed" in line
    for reader in (parse_yaml_documents, compose_yaml):
        with pytest.raises(InputError):
            reader(text, "manifests.yaml")
