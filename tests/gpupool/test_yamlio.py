"""The shared YAML reader refuses what PyYAML's safe_load would accept silently or blow up on."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpupool.errors import InputError
from gpupool.yamlio import parse_yaml, quote, read_yaml

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
    start = time.perf_counter()
    with pytest.raises(InputError) as e:
        parse_yaml(text, "f.yaml")
    assert time.perf_counter() - start < 2.0  # refused fast, never expanded
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
