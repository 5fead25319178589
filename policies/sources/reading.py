"""Read a plan file into JSON, and say precisely what is wrong when it is not one.

Every source reports bad input the same way: one line naming the file, the key path inside it
and what was expected (``plan.json: resource_changes[3].change.actions: expected an array of
strings, got object``). The helpers here build those lines; callers build key paths only on the
error path, so the happy path pays nothing for them.
"""

from __future__ import annotations

import json

from gpupool import jsonio
from gpupool.errors import InputError
from gpupool.inputs import read_bytes

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, NoReturn

_JSON_TYPES: dict[type, str] = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "number",
    float: "number",
    type(None): "null",
}


def json_type(value: object) -> str:
    """JSON's name for a value's type, as users know it from their files."""
    return _JSON_TYPES.get(type(value), type(value).__name__)


# Line breaks as str.splitlines sees them, and other control characters: escaped, so that a
# problem stays one line whatever the file name, key or value it quotes.
_ESCAPES: dict[int, str] = {
    c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, 0x85)
} | {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def problem(text: str) -> InputError:
    """An InputError of exactly one line (quoted user data cannot break it)."""
    return InputError(text.translate(_ESCAPES))


def fail(origin: str, path: str, expected: str, got: object = ...) -> NoReturn:
    """Raise the one-line InputError: ``<file>: <key path>: expected ..., got ...``."""
    where = f"{origin}: {path}: " if path else f"{origin}: "
    tail = "" if got is ... else f", got {_describe(got)}"
    raise problem(f"{where}expected {expected}{tail}")


def _describe(value: object) -> str:
    if isinstance(value, str) and not isinstance(value, bool):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"string {json.dumps(shown)}"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        digits = len(str(value)) if value.bit_length() < 4000 else "over 1,000"
        return f"a number of {digits} digits"  # str() of 5,000 digits would raise
    if isinstance(value, bool | int | float) or value is None:
        return json.dumps(value)
    if isinstance(value, list | dict):
        try:
            text = json.dumps(value, separators=(",", ":"), default=str)
        except (ValueError, TypeError, RecursionError):
            text = ""
        if text and len(text) <= 60:
            return f"{json_type(value)} {text}"
    return json_type(value)


def want_obj(value: Any, origin: str, path: str) -> dict[str, Any]:
    if type(value) is not dict:
        fail(origin, path, "an object", value)
    return value


def want_list(value: Any, origin: str, path: str) -> list[Any]:
    if type(value) is not list:
        fail(origin, path, "an array", value)
    return value


def want_str(value: Any, origin: str, path: str) -> str:
    if type(value) is not str:
        fail(origin, path, "a string", value)
    return value


def opt_obj(value: Any, origin: str, path: str) -> dict[str, Any] | None:
    """An object or null/absent (the caller passes ``doc.get(key)``)."""
    if value is not None and type(value) is not dict:
        fail(origin, path, "an object or null", value)
    return value


class JsonLines(list["Any"]):
    """The documents of a JSON-lines file (one JSON object per non-blank line), with the line
    each came from: Pulumi's streaming preview writes one engine event per line."""

    def __init__(self, docs: list[Any], line_numbers: list[int]) -> None:
        super().__init__(docs)
        self.line_numbers = line_numbers


def read_json(path: str | Path, origin: str) -> Any:
    """Parse a file as JSON (UTF-8/16/32, with or without BOM), or raise a one-line InputError.

    A file of several JSON objects, one per line, is returned as :class:`JsonLines`; the
    caller decides whether that is a stream it reads (Pulumi engine events) or refuses.
    """
    return parse_json_bytes(read_input(path, origin), origin)


def read_input(path: str | Path, origin: str) -> bytes:
    """The bytes of a plan input (``-`` is standard input; a FIFO times out without a writer),
    or a one-line InputError."""
    try:
        return read_bytes(path, origin, allow_stdin=True)
    except IsADirectoryError:
        raise problem(f"{origin}: is a directory, expected a plan file") from None
    except OSError as e:
        raise problem(f"{origin}: cannot read: {e.strerror or e}") from None


def is_k8s_object(doc: Any) -> bool:
    """Does a parsed document look like a Kubernetes object (or List)?"""
    return type(doc) is dict and isinstance(doc.get("apiVersion"), str) and isinstance(
        doc.get("kind"), str)


def looks_like_json(raw: bytes) -> bool:
    """Does the input start like JSON (an object or array, UTF-8 or a UTF-16/32 encoding), or
    like a binary Terraform plan (which the JSON reader names)? Anything else with text in it
    is read as YAML: Kubernetes manifests (``{{`` starts no JSON: a Helm template's action)."""
    if raw.startswith(b"PK\x03\x04"):
        return True
    text = raw[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    return (not text or (text[:1] in (b"{", b"[") and not text.startswith(b"{{"))
            or b"\x00" in raw[:4])


def parse_json_bytes(raw: bytes, origin: str) -> Any:
    """:func:`read_json` on bytes already read (standard input and FIFOs are read only once)."""
    if raw.startswith(b"PK\x03\x04"):
        raise problem(
            f"{origin}: expected JSON, got a binary Terraform plan; "
            f"convert it with `terraform show -json {origin} > plan.json`"
        )
    if not raw or raw.isspace():  # raw.strip() would copy a plan ending in a line break
        raise problem(f"{origin}: expected a JSON plan, got an empty file")
    try:
        return jsonio.loads(raw)
    except UnicodeDecodeError:
        raise problem(f"{origin}: expected JSON text (UTF-8), got undecodable bytes") from None
    except jsonio.JsonProblem as e:
        raise problem(f"{origin}: {e}") from None
    except json.JSONDecodeError as e:
        if e.msg == "Extra data":
            lines = _json_lines(raw, origin)
            if lines is not None:
                return lines
        raise problem(f"{origin}: {_json_problem(raw, e)}") from None


def _json_lines(raw: bytes, origin: str) -> JsonLines | None:
    """Every non-blank line a JSON object, or None (then the file is just invalid JSON)."""
    docs: list[Any] = []
    numbers: list[int] = []
    for n, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            doc = jsonio.loads(line)
        except jsonio.JsonProblem as e:
            raise problem(f"{origin}: line {n}: {e}") from None
        except (ValueError, RecursionError):
            return None  # not JSON lines: the caller reports the first document's problem
        if type(doc) is not dict:
            return None
        docs.append(doc)
        numbers.append(n)
    return JsonLines(docs, numbers)


def _json_problem(raw: bytes, e: json.JSONDecodeError) -> str:
    return f"expected valid JSON: {e.msg} at line {e.lineno} column {e.colno}"
