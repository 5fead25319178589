"""What an HCL expression refers to, read from python-hcl2's parse tree: ``var.x``,
``aws_lb_target_group.t``, ``each.value`` — the same strings Terraform's JSON configuration
lists as an expression's ``references`` (roots and their first attribute).

Used for a ``dynamic`` block's ``for_each``, which the JSON configuration leaves out: when
everything it refers to is known at plan time, so is how many blocks it writes.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

# Functions whose result Terraform knows only at apply (https://developer.hashicorp.com/
# terraform/language/functions: timestamp, uuid, bcrypt are re-evaluated at apply).
_APPLY_TIME: Final = frozenset({"timestamp", "uuid", "bcrypt"})
_LITERALS: Final = frozenset({"null", "true", "false"})


def references(node: Any) -> tuple[str, ...] | None:
    """The references of an expression node; None when it calls a function known only at
    apply (its value is unknown whatever it refers to)."""
    out: list[str] = []
    if not _walk(node, out, 0):
        return None
    return tuple(dict.fromkeys(out))


def _walk(node: Any, out: list[str], depth: int) -> bool:
    kind = getattr(node, "data", None)
    if kind is None or depth > 200:
        return depth <= 200
    children = [c for c in node.children if hasattr(c, "data")]
    if kind == "function_call" and children and _name(children[0]) in _APPLY_TIME:
        return False
    if kind == "get_attr_expr_term" and len(children) >= 2:
        root = _bare(children[0])
        if root is not None:
            attr = next((_name(c) for c in children[1].children
                         if getattr(c, "data", None) == "identifier"), "")
            out.append(f"{root}.{attr}" if attr else root)
            return all(_walk(c, out, depth + 1) for c in children[2:])
    if kind == "expr_term":
        root = _bare(node)
        if root is not None:
            if root not in _LITERALS:
                out.append(root)  # a for-expression's iterator, or the like: not a constant
            return True
    if kind == "function_call":
        children = children[1:]  # the function's own name is not a reference
    return all(_walk(c, out, depth + 1) for c in children)


def _bare(node: Any) -> str | None:
    """The identifier an ``expr_term`` holds alone (``var`` in ``var.x``), else None."""
    if getattr(node, "data", None) != "expr_term":
        return None
    parts = [c for c in node.children if hasattr(c, "data")]
    if len(parts) == 1 and parts[0].data == "identifier" and len(node.children) == 1:
        return _name(parts[0])
    return None


def _name(node: Any) -> str:
    return "".join(str(t.value) for t in getattr(node, "children", ()) if hasattr(t, "value"))
