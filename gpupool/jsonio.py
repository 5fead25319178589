"""Parse JSON the kit can trust: what ``json.loads`` lets through silently, refused in one line.

Python's ``json`` module accepts input that is not JSON, or that a reader must not take at face
value:

- a key twice in one object: the second silently wins (a second ``resource_changes`` or
  ``expires`` would replace the first unseen);
- ``NaN``, ``Infinity``, ``-Infinity``: not JSON (RFC 8259), and a rule comparing a size with NaN
  is always false;
- ``1e999``: parsed as infinity;
- a number of more than 4,300 digits (``ValueError`` from the int conversion limit), nesting
  deeper than the interpreter's stack (``RecursionError``).

:func:`loads` refuses each with a :class:`JsonProblem` whose text says where and what (without
the file name: callers add it, as every InputError line starts with the file). The duplicate
check is an ``object_pairs_hook`` that builds the dict and compares sizes; the pure-C parser
stays in charge of everything else, so the cost is one small call per object.

A compact document (no line breaks, tabs or ``" `` but around it: Terraform's ``show -json``,
which ends with a line break, Pulumi's event lines) first takes a cheaper proof, since the
hook's pairs cost the C parser a third of its time: parsed plainly, its keys (the objects'
sizes) are counted and compared with an upper bound of the keys written in the text. Equal, no
key was dropped, so none was repeated; otherwise, or on any error, the document is read again
with the hook, which names the key (and gives every other error as it always did).

An indented document (``pulumi preview --json``) keeps the hook: proving that its keys' quotes
meet their colons takes another scan of every byte, and its spaces slow the counts down, so
the proof would cost more than the hook (36.9 M instructions more on a 1,000-resource preview).
"""

from __future__ import annotations

import json
import math
import re
from itertools import repeat

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

MAX_DIGITS: Final = 4300  # CPython's default int_max_str_digits


class JsonProblem(ValueError):
    """Input that is not (trustworthy) JSON; the text names the place and the problem."""


class _Duplicate(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return out


class _Constant(ValueError):
    pass


def _constant(name: str) -> Any:
    raise _Constant(name)


class _Overflow(ValueError):
    pass


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Overflow(text)
    return value


def loads(raw: bytes | str) -> Any:
    """Parse one JSON document; :class:`JsonProblem` on anything listed in the module docstring
    (and on invalid JSON, with json's own message, line and column)."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if _compact(data):
        sizes: list[int] = []
        size = sizes.append

        def counted(obj: dict[str, Any]) -> dict[str, Any]:
            size(len(obj))
            return obj

        try:
            doc = json.loads(raw, object_hook=counted, parse_constant=_constant,
                             parse_float=_finite)
        except (ValueError, RecursionError):
            pass  # read again below: the hook's reading words every error as it always did
        else:
            if sum(sizes) == _key_bound(data):
                return doc
    try:
        return json.loads(raw, object_pairs_hook=_pairs, parse_constant=_constant,
                          parse_float=_finite)
    except _Duplicate as e:
        raise JsonProblem(f"{_key(e.key)}: expected each key once in an object, got it twice "
                          "(JSON readers differ on which one wins)") from None
    except _Constant as e:
        raise JsonProblem(f"{_where(raw, re.escape(str(e)))}expected a JSON number, got "
                          f"{e} (not JSON)") from None
    except _Overflow as e:
        raise JsonProblem(f"{_where(raw, re.escape(str(e)))}expected a finite number, got "
                          f"{_short(str(e))} (beyond the largest double)") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise  # the caller words these (it knows the file's encoding and what it expected)
    except RecursionError:
        raise JsonProblem("expected JSON nested to a reasonable depth, got nesting too deep "
                          "to read") from None
    except ValueError as e:
        if "digits" in str(e):  # the int conversion limit
            raise JsonProblem(f"{_where(raw, _LONG_NUMBER)}expected a "
                              f"number of at most {MAX_DIGITS:,} digits, got a longer one"
                              ) from None
        raise JsonProblem(f"expected valid JSON ({e})") from None


def _compact(data: bytes) -> bool:
    """UTF-8 text in which every key's closing quote is followed by its colon: between the
    first and last non-blank byte, no JSON whitespace but the space, and no space after a
    quote (escaped or not).

    Blanks around the value (``show -json``'s final line break, a CRLF) hold no key; runs of
    more than 64 of them are not looked past (such a text just takes the hook).
    """
    if json.detect_encoding(data) not in ("utf-8", "utf-8-sig"):
        return False
    head, tail = data[:64], data[-64:]
    start = len(head) - len(head.lstrip(_BLANKS))
    end = len(data) - len(tail) + len(tail.rstrip(_BLANKS))
    return (data.find(b"\n", start, end) == -1 and data.find(b"\r", start, end) == -1
            and data.find(b"\t", start, end) == -1 and data.find(b'" ', start, end) == -1)


def _key_bound(data: bytes) -> int:
    """At least the number of keys written in a :func:`_compact` document (and exactly that
    unless it has a string starting with a colon or an escaped quote and colon after an odd
    run of three or more backslashes).

    Each key's closing quote is unescaped and followed by ``:``, so the keys are at most the
    ``":`` in the text less those whose quote is escaped (an odd run of backslashes before
    it); ``\\":`` not after another backslash counts the runs of exactly one, some of those.
    ASCII bytes never occur inside a multi-byte UTF-8 character, so bytes count as characters.
    The ``\\":`` are found by one split (a scan) and the pieces before them looked at, not
    counted by a second scan with a longer needle (4 M instructions on a 1.4 MB plan).
    """
    pieces = data.split(b'\\":')
    escaped = len(pieces) - 1
    if escaped:
        last = pieces.pop()  # the text after the last one (bytes, or bytearray as data)
        escaped -= sum(map(type(last).endswith, pieces, repeat(b"\\", escaped)))
    return data.count(b'":') - escaped


def _short(text: str) -> str:
    return text if len(text) <= 24 else text[:21] + "..."


def _key(key: str) -> str:
    shown = json.dumps(key if len(key) <= 60 else key[:57] + "...", ensure_ascii=True)
    return f"key {shown}"


_BLANKS: Final = b" \t\r\n"  # JSON's whitespace
_LONG_NUMBER: Final = "-?[0-9]{" + str(MAX_DIGITS + 1) + ",}"
_QUOTE: Final = b'"'
_KEY_BEFORE: Final = rb'"((?:[^"\\]|\\.){0,200})"\s*:\s*$'  # compiled on an error only


def _where(raw: bytes | str, token: str) -> str:
    """``line L column C (key "k"): `` of the first ``token`` outside a string, best effort."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    # A token outside strings: after ':', '[' or ',' (and whitespace).
    found = re.search(r"[:\[,]\s*(" + token + ")", text)
    if found is None:
        return ""
    pos = found.start(1)
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    before = re.search(_KEY_BEFORE, text[max(0, pos - 300):pos].encode("utf-8"))
    key = ""
    if before is not None:
        try:
            key = f" ({_key(json.loads(_QUOTE + before.group(1) + _QUOTE))})"
        except ValueError:
            key = ""
    return f"line {line} column {column}{key}: "
