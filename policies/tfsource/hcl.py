"""Where blocks and arguments sit in a ``.tf`` file: python-hcl2's parse tree, reduced to the
names and positions a report points at.

python-hcl2 (a Lark grammar of HCL2, kept by Amplify) parses what Terraform parses, heredocs,
comments and templates included, so a ``resource`` inside a string or a comment is never taken
for a block. Its dict serialisation (``hcl2.load``) drops positions in 8.x, so the Lark tree
(``hcl2.parses_to_tree``, built with ``propagate_positions``) is read instead: ``block`` nodes
(an identifier, labels, a body) and ``attribute`` nodes (a name). A file it cannot parse gives
no blocks: reports then fall back to the plan.
"""

from __future__ import annotations

from pathlib import Path

from gpupool.record import Frozen
from policies.tfsource.refs import references

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any

MAX_BYTES = 4 * 1024 * 1024  # a .tf file past this is not parsed (generated, not read by people)


class Block(Frozen):
    """A block (``resource "aws_instance" "web" {``): its type, labels and position; what its
    body declares, by name: arguments (line, column) and nested blocks."""

    __slots__ = ("type", "labels", "line", "column", "arguments", "blocks", "for_each")

    type: str
    labels: tuple[str, ...]
    line: int
    column: int
    arguments: dict[str, tuple[int, int]]
    blocks: tuple[Block, ...]
    # A `dynamic` block's for_each: what it refers to (policies.tfsource.refs); None when it
    # has none or calls a function known only at apply.
    for_each: tuple[str, ...] | None

    def __init__(
        self,
        type: str,
        labels: tuple[str, ...],
        line: int,
        column: int,
        arguments: dict[str, tuple[int, int]] | None = None,
        blocks: tuple[Block, ...] = (),
        for_each: tuple[str, ...] | None = None,
    ) -> None:
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "column", column)
        object.__setattr__(self, "arguments", {} if arguments is None else arguments)
        object.__setattr__(self, "blocks", blocks)
        object.__setattr__(self, "for_each", for_each)

    def find(self, path: str) -> tuple[int, int] | None:
        """Position of ``a.b.c`` (arguments or nested blocks, ``override[1]`` the second of its
        name) within this block; None when the body does not declare it (or only dynamically)."""
        head, _, rest = path.partition(".")
        name, _, index = head.partition("[")
        if not rest and name in self.arguments:
            return self.arguments[name]
        nested = [b for b in self.blocks if b.type == name]
        if not nested:
            return None
        at = index.rstrip("]")
        chosen = nested[int(at)] if at.isdigit() and int(at) < len(nested) else nested[0]
        if not rest:
            return chosen.line, chosen.column
        return chosen.find(rest) or (chosen.line, chosen.column)


def parse_blocks(path: Path) -> list[Block]:
    """The top-level blocks of a ``.tf`` file (empty when it cannot be read or parsed)."""
    try:
        if path.stat().st_size > MAX_BYTES:
            return []
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    try:
        import hcl2

        tree = hcl2.parses_to_tree(text)
    except Exception:  # a syntax error, or a grammar corner the library lacks: no locations
        return []
    return [b for b in (_block(n) for n in _body_nodes(tree)) if b is not None]


def _body_nodes(tree: Any) -> list[Any]:
    for child in getattr(tree, "children", ()):
        if getattr(child, "data", None) == "body":
            return list(child.children)
    return []


def _block(node: Any) -> Block | None:
    if getattr(node, "data", None) != "block" or node.meta.empty:
        return None
    parts = [c for c in node.children if hasattr(c, "data")]
    if not parts or parts[0].data != "identifier":
        return None
    labels = tuple(_text(p) for p in parts[1:] if p.data in ("string", "identifier"))
    arguments: dict[str, tuple[int, int]] = {}
    nested: list[Block] = []
    for_each: tuple[str, ...] | None = None
    body = next((p for p in parts if p.data == "body"), None)
    for child in body.children if body is not None else ():
        kind = getattr(child, "data", None)
        if kind == "attribute" and not child.meta.empty:
            named = [c for c in child.children if hasattr(c, "data")]
            name = _text(named[0])
            arguments.setdefault(name, (child.meta.line, child.meta.column))
            if name == "for_each" and _text(parts[0]) == "dynamic" and len(named) > 1:
                for_each = references(named[-1])
        elif kind == "block":
            inner = _block(child)
            if inner is not None:
                nested.append(inner)
    return Block(_text(parts[0]), labels, node.meta.line, node.meta.column, arguments,
                 tuple(nested), for_each)


def _text(node: Any) -> str:
    """An identifier's name or a plain string's characters."""
    out: list[str] = []
    for child in getattr(node, "children", ()):
        if hasattr(child, "data"):
            out.append(_text(child))
        elif child.type in ("NAME", "STRING_CHARS", "FOR_EACH", "IN", "FOR", "IF"):
            out.append(str(child.value))
    return "".join(out)
