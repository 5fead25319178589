"""parse_yaml_documents builds plain trees directly (gpupool.yamltree: the per-document path of a
Kubernetes check, issue 15); every answer must be the loader's own, value or error line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gpupool import yamlio
from gpupool.errors import InputError
from gpupool.yamlio import parse_yaml_documents
from gpupool.yamltree import NOT_PLAIN, plain_value

ROOT = Path(__file__).resolve().parents[2]
REAL_FILES = sorted([*ROOT.glob("stacks/**/*.yaml"), *ROOT.glob("tests/fixtures/**/*.yaml"),
                     *ROOT.glob("tests/fixtures/**/*.yml"), *ROOT.glob("examples/**/*.yaml")])


def _outcome(text: str) -> tuple[str, object]:
    try:
        return "value", [(d.index, d.line, d.value) for d in parse_yaml_documents(text, "f.yaml")]
    except InputError as e:
        return "error", e.problems


def _loader_outcome(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, object]:
    """The same with the direct walk switched off: the loader's constructor alone."""
    with monkeypatch.context() as m:
        m.setattr(yamlio, "plain_value", lambda _loader, _node: NOT_PLAIN)
        return _outcome(text)


def _typed(value: object) -> object:
    """Equality that also tells 1 from 1.0 and True from 1."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return type(value).__name__, value


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_real_files_read_as_the_loader_reads_them(path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    text = path.read_bytes().decode("utf-8", "replace")
    ours, theirs = _outcome(text), _loader_outcome(text, monkeypatch)
    assert ours == theirs
    assert _typed(ours[1]) == _typed(theirs[1])


@pytest.mark.parametrize("text", [
    "a: 1\na: 2\n",  # a key twice: the loader's words
    "base: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n",  # a merge key
    "c:\n  <<: {x: 1}\n  y: 2\n",  # a merge key without an anchor
    "? [a, b]\n: c\n",  # a complex key
    "1: one\ntrue: yes\n",  # keys that are not strings
    "a: !!binary aGVsbG8=\nb: !!set {x, y}\n",  # tags the walk leaves to the loader
    "a: !custom x\n",  # an unknown tag: the loader's error
    "t: 2026-12-02T10:00:00Z\nd: 2026-12-02\nf: .inf\nn: ~\nb: off\no: 0o17\nh: 0x1f\n",
    "---\n---\na: 1\n...\n",  # empty documents
])
def test_unusual_documents_are_the_loaders(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ours, theirs = _outcome(text), _loader_outcome(text, monkeypatch)
    assert ours == theirs
    assert _typed(ours[1]) == _typed(theirs[1])


def test_only_plain_trees_are_walked() -> None:
    def walk(text: str) -> object:
        loader = yamlio._StreamLoader(text)
        try:
            return plain_value(loader, loader.get_single_node())
        finally:
            loader.dispose()

    assert walk("a: [1, 2.5, x, null, true]\nb: {c: d}\n") == {
        "a": [1, 2.5, "x", None, True], "b": {"c": "d"}}
    for text in ("a: 1\na: 2\n", "c:\n  <<: {x: 1}\n", "1: one\n", "a: !!binary aGVsbG8=\n"):
        assert walk(text) is NOT_PLAIN, text


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20),
                    st.floats(allow_nan=False), st.dates(), st.datetimes())
documents = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)),
    max_leaves=30)


@settings(deadline=None)
@given(st.lists(documents, min_size=1, max_size=3), st.booleans())
def test_any_stream_reads_as_the_loader_reads_it(values: list[object], flow: bool) -> None:
    text = yaml.safe_dump_all(values, default_flow_style=flow, allow_unicode=True)
    with pytest.MonkeyPatch.context() as mp:
        assert _outcome(text) == _loader_outcome(text, mp)


@settings(deadline=None)
@given(st.text(alphabet="ab: -[]{},&*!#?|>%1'\"\n\t<\u00e9", max_size=40))
def test_any_text_reads_as_the_loader_reads_it(text: str) -> None:
    with pytest.MonkeyPatch.context() as mp:
        try:
            theirs: object = _loader_outcome(text, mp)
        except Exception as e:  # what the loader raises unwrapped, the walk must raise too
            theirs = type(e).__name__
        try:
            ours: object = _outcome(text)
        except Exception as e:
            ours = type(e).__name__
        assert ours == theirs
