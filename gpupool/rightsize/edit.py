"""Write proposed values into a stack file, changing nothing else.

ruamel.yaml's round-trip loader says where each value is (line and column of the scalar); the
new value replaces exactly that scalar's text, so comments, key order, quoting, flow and block
styles and blank lines are the file's own, byte for byte. The edited text is read back with
the round-trip loader and must equal the original document with the new values in place (and
nothing else changed), or nothing is written.
"""

from __future__ import annotations

import difflib
import io
import re
from collections.abc import Mapping, Sequence
from typing import Any

from gpupool.errors import InputError

KeyPath = tuple[str | int, ...]
_SCALAR = re.compile(r"[^\s#,\]}]+")  # a plain scalar (the stack's sizes are plain numbers)


def _yaml() -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="rt")


def _load(text: str, shown: str) -> Any:
    try:
        return _yaml().load(io.StringIO(text))
    except Exception as e:  # ruamel's errors: a file that changed under us, or is not YAML
        raise InputError(f"{shown}: expected YAML the round-trip reader accepts ({e})") from None


def _parent(doc: Any, path: KeyPath, shown: str) -> Any:
    node = doc
    for part in path[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            raise InputError(f"{shown}: {_show(path)}: expected it in the file") from None
    return node


def _show(path: KeyPath) -> str:
    out = ""
    for part in path[1:]:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def apply(text: str, changes: Sequence[tuple[KeyPath, float]], shown: str) -> str:
    """The file's text with each key's scalar replaced by its new value."""
    doc = _load(text, shown)
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []
    for path, value in changes:
        parent = _parent(doc, path, shown)
        key = path[-1]
        if key not in parent:
            raise InputError(f"{shown}: {_show(path)}: expected the key in the file to change "
                             f"it to {_number(value)}")
        line, col = parent.lc.value(key)
        m = _SCALAR.match(lines[line], col)
        if m is None:
            raise InputError(f"{shown}: {_show(path)}: expected a plain number to change")
        edits.append((line, m.start(), m.end(), _number(value)))
    for line, start, end, new in sorted(edits, reverse=True):
        lines[line] = lines[line][:start] + new + lines[line][end:]
    out = "".join(lines)
    _verify(doc, _load(out, shown), changes, shown)
    return out


def _verify(before: Any, after: Any, changes: Sequence[tuple[KeyPath, float]],
            shown: str) -> None:
    expected = _plain(before)
    for path, value in changes:
        node = expected
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = int(value) if float(value).is_integer() else value
    if _plain(after) != expected:
        raise InputError(f"{shown}: expected the edit to change only the proposed values; "
                         "nothing written")


def unified_diff(before: str, after: str, shown: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True),
                                        after.splitlines(keepends=True),
                                        f"a/{shown}", f"b/{shown}"))
