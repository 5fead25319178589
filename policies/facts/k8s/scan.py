"""Where an object asks for an accelerator, whatever its shape: the fail-closed net.

:func:`accelerator_requests` walks an object for accelerator resource names
(:func:`~policies.facts.k8s.quantities.is_accelerator`) used as keys of a ``limits`` /
``requests`` mapping or of a mapping named ``…resources`` (NIMService's ``resources``, a
quota-like ``capacity`` is not a request). Labels, annotations and node selectors (where
``nvidia.com/gpu.present`` is a label, not a request) and ``status`` are not looked into.
:func:`text_requests` does the same for text a kind embeds (Argo's ``podSpecPatch``, a resource
template's ``manifest``): a non-zero count next to an accelerator name.
"""

from __future__ import annotations

import re

from gpupool.record import Frozen
from policies.facts.k8s.quantities import is_accelerator, quantity
from policies.facts.values import is_map

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

_SKIP: Final = frozenset({"labels", "annotations", "node_selector", "match_labels", "status",
                          "managed_fields"})
_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
_TEXT: Final = re.compile(r"""["']?((?:nvidia\.com/(?:gpu[\w.-]*|mig-[\w.-]+))|amd\.com/gpu)["']?"""
                          r"""\s*:\s*["']?([^\s"',}]+)""")


class Request(Frozen):
    """An accelerator asked for at ``path`` (the mapping's snake_case path) for ``resource``."""

    __slots__ = ("path", "resource", "count")

    path: str
    resource: str
    count: Any

    def __init__(self, path: str, resource: str, count: Any) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "resource", resource)
        object.__setattr__(self, "count", count)


def _requesting(key: str) -> bool:
    return key in ("limits", "requests") or key.endswith("resources")


def accelerator_requests(root: Any, skip_top: tuple[str, ...] = ()) -> list[Request]:
    """Every accelerator request under ``root`` (``skip_top``: top-level keys not to enter).

    Paths are built only for what is found: each visited container remembers its parent's slot
    in ``trail``, so a walk of a large object allocates no path strings."""
    out: list[Request] = []
    trail: list[tuple[int, str]] = [(-1, "")]  # (parent slot, step from the parent)
    stack: list[tuple[Any, int, str]] = [(root, 0, "")]
    while stack:
        node, slot, key = stack.pop()
        if type(node) is list:
            for i, v in enumerate(node):
                if type(v) is dict or type(v) is list:
                    trail.append((slot, f"[{i}]"))
                    stack.append((v, len(trail) - 1, key))
            continue
        if type(node) is not dict and not is_map(node):
            continue
        if key and _requesting(key):
            for k, v in node.items():
                if type(k) is str and is_accelerator(k):
                    out.append(Request(_path(trail, slot), k, v))
        for k, v in node.items():
            kind = type(v)
            if kind is not dict and kind is not list and (kind in _SCALARS or not is_map(v)):
                continue
            k = str(k)
            if k in _SKIP or (slot == 0 and k in skip_top):
                continue
            trail.append((slot, k))
            stack.append((v, len(trail) - 1, k))
    out.sort(key=lambda r: r.path)
    return out


def _path(trail: list[tuple[int, str]], slot: int) -> str:
    parts: list[str] = []
    while slot > 0:
        slot, step = trail[slot]
        parts.append(step)
    path = ""
    for step in reversed(parts):
        path = f"{path}{step}" if step.startswith("[") or not path else f"{path}.{step}"
    return path


def text_requests(text: str) -> list[tuple[str, str]]:
    """Accelerators asked for in embedded text with a count other than zero (or unreadable)."""
    found = []
    for m in _TEXT.finditer(text):
        q = quantity(m.group(2))
        if q.value != 0:
            found.append((m.group(1), m.group(2)))
    return found
