"""Read a YAML file the kit can trust: one reader for stack, config, waiver, profile and team files.

PyYAML's ``safe_load`` lets a second key silently win, expands aliases without bound (a few
hundred bytes of anchors become gigabytes: the "billion laughs"), and recurses until Python's
stack runs out on deep nesting. Each of those is input a user or an attacker can hand the kit,
so this reader refuses them with one line that names the file and what was expected:

- a key that appears twice in one mapping (the line of the second);
- more than :data:`MAX_ALIASES` aliases in one document, or an alias that expands to more than
  :data:`MAX_ALIAS_NODES` nodes;
- nesting deeper than :data:`MAX_DEPTH`;
- a file larger than :data:`MAX_BYTES`, text that is not UTF-8, or a lone surrogate (also one
  written as an escape, ``"\\ud800"``);
- an integer of more digits than Python converts (4,300 by default).

Anything quoted in an error message is cut to :data:`QUOTE_LIMIT` characters.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from gpupool.errors import InputError
from gpupool.inputs import read_bytes
from gpupool.yamldoc import YamlDocument
from gpupool.yamltree import NOT_PLAIN, plain_value

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

MAX_BYTES: Final = 8 * 1024 * 1024
MAX_DEPTH: Final = 64
MAX_ALIASES: Final = 1000
MAX_ALIAS_NODES: Final = 10_000
QUOTE_LIMIT: Final = 60
MAX_DOCUMENTS: Final = 100_000
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def quote(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)`` cut to ``limit`` characters, safe to print (no lone surrogates)."""
    shown = repr(value)
    if len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    return shown.encode("utf-8", "backslashreplace").decode("utf-8")


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader with duplicate keys refused and aliases and depth bounded."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.aliases = 0
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):  # type: ignore[no-untyped-call]
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(
                    None, None, f"more than {MAX_ALIASES} aliases", mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(
                    None, None, f"nesting deeper than {MAX_DEPTH} levels", mark)
            return super().compose_node(parent, index)  # type: ignore[no-untyped-call]
        finally:
            self._depth -= 1


def _expanded_size(node: yaml.Node, limit: int) -> int:
    """Nodes ``node`` stands for once aliases are expanded, counting stops past ``limit``."""
    seen: dict[int, int] = {}

    def size(n: yaml.Node) -> int:
        key = id(n)
        if key in seen:
            return seen[key]
        seen[key] = 1  # a cycle counts once (recursive anchors)
        total = 1
        if isinstance(n, yaml.SequenceNode):
            for child in n.value:
                total += size(child)
                if total > limit:
                    break
        elif isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                total += size(k) + size(v)
                if total > limit:
                    break
        seen[key] = total
        return total

    return size(node)


_STR_TAG: Final = "tag:yaml.org,2002:str"


def _construct_mapping(loader: _BoundedLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    # The common case, told without constructing the keys twice: every key a string scalar
    # (its node's value is the key) and none twice. Anything else takes the loop below.
    pairs = node.value
    names = [k.value for k, _ in pairs if k.tag == _STR_TAG and type(k) is yaml.ScalarNode]
    if len(names) == len(pairs) and len(set(names)) == len(names):
        return loader.construct_mapping(node, deep=deep)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
        if isinstance(key, str | int | float | bool) and key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {quote(key)} appears twice", key_node.start_mark)
        if isinstance(key, str | int | float | bool):
            seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_BoundedLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _construct_str(loader: _BoundedLoader, node: yaml.ScalarNode) -> Any:
    """A string, unless an escape (``"\\ud800"``) made it a lone surrogate: not text."""
    value = loader.construct_yaml_str(node)  # type: ignore[no-untyped-call]
    if _SURROGATE.search(value):
        raise yaml.constructor.ConstructorError(
            None, None, "a lone surrogate escape is not text", node.start_mark)
    return value


def _construct_int(loader: _BoundedLoader, node: yaml.ScalarNode) -> Any:
    """An integer, unless it has more digits than Python converts (a ValueError otherwise)."""
    try:
        return loader.construct_yaml_int(node)  # type: ignore[no-untyped-call]
    except ValueError:
        raise yaml.constructor.ConstructorError(
            None, None, f"a number of more than {sys.get_int_max_str_digits():,} digits",
            node.start_mark) from None


_BoundedLoader.add_constructor("tag:yaml.org,2002:str", _construct_str)
_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def where(e: yaml.YAMLError) -> str:
    """``line 3, column 5: key 'a' appears twice``: the place and the problem of a YAML error."""
    if isinstance(e, yaml.reader.ReaderError) and isinstance(e.character, int):
        return (f"character {e.character:#06x} at offset {e.position}: "
                "control characters are not allowed")
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or "syntax error"
    if mark is None:
        return str(problem)
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"


@contextmanager
def yaml_problems(shown: str) -> Iterator[None]:
    """PyYAML's errors (also those a reader raises while it is built, such as a control
    character) and runaway nesting, as the one :class:`InputError` line naming ``shown``."""
    try:
        yield
    except yaml.YAMLError as e:
        raise InputError(f"{shown}: expected valid YAML ({where(e)})") from None
    except RecursionError:
        raise InputError(f"{shown}: expected YAML nested at most {MAX_DEPTH} levels") from None


def parse_yaml(text: str, shown: str) -> Any:
    """The one document in ``text``; :class:`InputError` naming ``shown`` on any problem."""
    if _SURROGATE.search(text):
        raise InputError(f"{shown}: expected UTF-8 text, found a lone surrogate")
    value = _parse_fast(text)
    if value is not _SLOW:
        return value
    with yaml_problems(shown):
        loader = _BoundedLoader(text)
        try:
            node = loader.get_single_node()  # type: ignore[no-untyped-call]
            if node is None:
                return None
            if _expanded_size(node, MAX_ALIAS_NODES) > MAX_ALIAS_NODES and loader.aliases:
                raise InputError(
                    f"{shown}: expected YAML whose aliases expand to at most "
                    f"{MAX_ALIAS_NODES:,} values (refused: an alias bomb)")
            return loader.construct_document(node)  # type: ignore[no-untyped-call]
        finally:
            loader.dispose()  # type: ignore[no-untyped-call]


_HAVE_LIBYAML: Final = hasattr(yaml, "CSafeLoader")


class _FastLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """libyaml's scanner, parser and composer (when PyYAML has them) under the same constructors
    as :class:`_BoundedLoader`: the common case of :func:`parse_yaml`, several times faster."""


_FastLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_FastLoader.add_constructor("tag:yaml.org,2002:str", _construct_str)
_FastLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_SLOW: Final = object()  # "take the Python reader": the exact errors and bounds of parse_yaml
_NON_PRINTABLE: Final = yaml.reader.Reader.NON_PRINTABLE
# Where libyaml accepts what the Python scanner refuses, or reads it otherwise (found by
# property tests): tabs, tags (a lone ``!``), anchors and aliases, directives, and a ``#`` or
# ``?`` glued to the text before it (``|#``, ``{a#b}``, ``[b?]``). Stack files have none.
_UNUSUAL: Final = re.compile(r"[\t!&*%]|(?<=[^ \n])[#?]")


def _parse_fast(text: str) -> Any:
    """The document parsed by libyaml, or :data:`_SLOW` whenever the Python reader could answer
    differently: characters it refuses, :data:`_UNUSUAL` text, any alias, nesting past
    :data:`MAX_DEPTH`, or any error at all (which the Python reader then reports in its own
    words). So a file that is refused is
    refused exactly as before, and only plain, bounded documents take the fast path."""
    if not _HAVE_LIBYAML or _UNUSUAL.search(text) or _NON_PRINTABLE.search(text):
        return _SLOW
    loader = _FastLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if not _plain_tree(node):
            return _SLOW
        return loader.construct_document(node)
    except Exception:  # the Python reader raises (or reports) it in its own words
        return _SLOW
    finally:
        loader.dispose()


def _plain_tree(node: yaml.Node) -> bool:
    """No node reached twice (no alias) and no nesting deeper than :data:`MAX_DEPTH`, counted as
    :class:`_BoundedLoader` counts (the root is level 1, a key or value one level below)."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(node, 1)]
    while stack:
        n, depth = stack.pop()
        if id(n) in seen or depth > MAX_DEPTH:
            return False
        seen.add(id(n))
        if isinstance(n, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in n.value)
        elif isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                stack.append((k, depth + 1))
                stack.append((v, depth + 1))
    return True


def compose_yaml(text: str, shown: str) -> yaml.Node | None:
    """The node tree of ``text`` (with line marks), under the same bounds as :func:`parse_yaml`
    (call that first: this one does not look for duplicate keys); for tools that point at the
    line of a key, such as SARIF locations in a stack file."""
    with yaml_problems(shown):
        loader = _BoundedLoader(text)
        try:
            return loader.get_single_node()  # type: ignore[no-untyped-call, no-any-return]
        finally:
            loader.dispose()  # type: ignore[no-untyped-call]



# libyaml's parser when PyYAML has it (its composer caps nesting itself); the constructor is
# SafeConstructor's Python either way, with duplicate keys refused.
_FAST_BASE: Any = getattr(yaml, "CSafeLoader", None) or _BoundedLoader


class _StreamLoader(_FAST_BASE):  # type: ignore[misc,valid-type]
    """The multi-document loader: aliases and depth are checked on each composed node graph."""


_StreamLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _check_depth(node: yaml.Node, shown: str) -> None:
    """Nesting depth alone, level by level (a document without an anchor has no alias)."""
    level, depth = [node], 1
    while level:
        below = [c for n in level if type(n) is not yaml.ScalarNode
                 for c in (n.value if type(n) is yaml.SequenceNode else
                           (x for pair in n.value for x in pair))]
        if below and depth >= MAX_DEPTH:
            raise InputError(f"{shown}: expected YAML nested at most {MAX_DEPTH} levels "
                             f"(line {below[0].start_mark.line + 1})")
        level, depth = below, depth + 1


def _check_bounds(node: yaml.Node, shown: str, anchored: bool = True) -> None:
    """The bounds :func:`parse_yaml` enforces, on a composed document: aliases (a node reached a
    second time is an alias), nesting depth, and what the aliases expand to. ``anchored``: the
    text may hold an anchor (``&``); without one no node can be reached twice, and only the
    depth is checked."""
    if not anchored:
        _check_depth(node, shown)
        return
    aliases = 0
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(node, 1)]
    while stack:
        n, depth = stack.pop()
        if id(n) in seen:
            aliases += 1
            if aliases > MAX_ALIASES:
                raise InputError(f"{shown}: expected valid YAML (line {n.start_mark.line + 1}: "
                                 f"more than {MAX_ALIASES} aliases)")
            continue
        seen.add(id(n))
        if depth > MAX_DEPTH:
            raise InputError(f"{shown}: expected YAML nested at most {MAX_DEPTH} levels "
                             f"(line {n.start_mark.line + 1})")
        if isinstance(n, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in n.value)
        elif isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                stack.append((k, depth + 1))
                stack.append((v, depth + 1))
    if aliases and _expanded_size(node, MAX_ALIAS_NODES) > MAX_ALIAS_NODES:
        raise InputError(
            f"{shown}: expected YAML whose aliases expand to at most {MAX_ALIAS_NODES:,} "
            "values (refused: an alias bomb)")


def parse_yaml_documents(text: str, shown: str) -> list[YamlDocument]:
    """Every document of a ``---``-separated stream (``kubectl``/``helm template`` output), with
    the bounds of :func:`parse_yaml` applied to each; one :class:`InputError` line on a problem."""
    if _SURROGATE.search(text):
        raise InputError(f"{shown}: expected UTF-8 text, found a lone surrogate")
    docs: list[YamlDocument] = []
    anchored = "&" in text
    with yaml_problems(shown):
        loader = _StreamLoader(text)
        try:
            while loader.check_node():
                node = loader.get_node()
                if len(docs) >= MAX_DOCUMENTS:
                    raise InputError(
                        f"{shown}: expected at most {MAX_DOCUMENTS:,} YAML documents")
                _check_bounds(node, shown, anchored)
                value = NOT_PLAIN if anchored else plain_value(loader, node)
                if value is NOT_PLAIN:
                    value = loader.construct_document(node)
                docs.append(YamlDocument(len(docs), node.start_mark.line + 1, value))
            return docs
        finally:
            loader.dispose()


def read_yaml_documents(path: str | Path, shown: str | None = None) -> list[YamlDocument]:
    """:func:`read_yaml` for multi-document files: same size and encoding bounds, every document."""
    shown = shown or str(path)
    return parse_yaml_documents(_read_text(Path(path), shown), shown)


def read_yaml(path: str | Path, shown: str | None = None) -> Any:
    """Read and parse ``path``; every failure is one :class:`InputError` line naming the file."""
    shown = shown or str(path)
    return parse_yaml(_read_text(Path(path), shown), shown)


def _read_text(p: Path, shown: str) -> str:
    """The file as text, within :data:`MAX_BYTES` and valid UTF-8, or one InputError line."""
    try:  # at most MAX_BYTES + 1 bytes are read: decode_text refuses a larger file
        raw = read_bytes(p, shown, limit=MAX_BYTES)  # a FIFO with no writer times out
    except FileNotFoundError:
        raise InputError(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{shown}: expected a file, got a directory") from None
    except OSError as e:
        raise InputError(f"{shown}: cannot read ({e.strerror or e})") from None
    return decode_text(raw, shown)


def decode_text(raw: bytes, shown: str) -> str:
    """Bytes already read (standard input, a FIFO) as YAML text: the size and UTF-8 bounds of a
    file, one InputError line otherwise."""
    if len(raw) > MAX_BYTES:
        raise InputError(f"{shown}: expected a YAML file of at most {MAX_BYTES // 2**20} MiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{shown}: expected UTF-8 text (byte {e.start} is not)") from None
    return text
