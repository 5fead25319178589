"""A composed YAML node tree to Python values in one direct walk, for plain trees only.

PyYAML's constructor builds every value through generic machinery (a generator per mapping and
sequence, the recursion bookkeeping anchors need, merge-key flattening); for the documents a
Kubernetes check reads (10,000 manifests: issue 15) that was most of the time above parsing.
A plain tree — no node reached twice (no anchor), mappings with string keys only (so no merge
key), only the standard tags — is built here directly with the loader's own scalar
constructors, so every value is exactly what the loader would build. Anything else (and a
mapping with a key twice, which the loader refuses in its own words) answers :data:`NOT_PLAIN`
and the caller constructs the document the loader's way.
"""

from __future__ import annotations

import yaml

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

NOT_PLAIN: Final = object()

_STR: Final = "tag:yaml.org,2002:str"
_MAP: Final = "tag:yaml.org,2002:map"
_SEQ: Final = "tag:yaml.org,2002:seq"
# Scalar tags whose constructors are plain functions of one node (no generator, no state).
_SCALARS: Final = frozenset({"tag:yaml.org,2002:null", "tag:yaml.org,2002:bool",
                             "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                             "tag:yaml.org,2002:timestamp", _STR})


class _NotPlain(Exception):
    pass


def plain_value(loader: yaml.BaseLoader, node: yaml.Node) -> Any:
    """The value of ``node`` as ``loader.construct_document`` builds it, or :data:`NOT_PLAIN`
    when the tree is not plain (see the module docstring). For a loader whose mapping
    constructor is SafeConstructor's with duplicate keys refused, and whose string constructor
    is SafeConstructor's (gpupool.yamlio's stream loader); the caller has bounded the depth and
    knows no node is reached twice."""
    constructors = loader.yaml_constructors
    if constructors.get(_STR) is not _DEFAULT_STR or not constructors.keys() >= _SCALARS:
        return NOT_PLAIN
    try:
        return _value(node, constructors, loader)
    except _NotPlain:
        return NOT_PLAIN


def _value(node: yaml.Node, constructors: dict[Any, Any], loader: Any) -> Any:
    kind = type(node)
    tag = node.tag
    if kind is yaml.ScalarNode:
        if tag == _STR:
            return node.value  # SafeConstructor.construct_yaml_str: the scalar's text
        if tag in _SCALARS:
            return constructors[tag](loader, node)
        raise _NotPlain
    if kind is yaml.MappingNode and tag == _MAP:
        pairs = node.value
        out: dict[Any, Any] = {}
        for key, value in pairs:
            if type(key) is not yaml.ScalarNode or key.tag != _STR:
                raise _NotPlain  # a merge key (<<), a non-string or complex key
            out[key.value] = _value(value, constructors, loader)
        if len(out) != len(pairs):
            raise _NotPlain  # a key twice: the loader says so in its own words
        return out
    if kind is yaml.SequenceNode and tag == _SEQ:
        return [_value(child, constructors, loader) for child in node.value]
    raise _NotPlain


_DEFAULT_STR: Final = yaml.constructor.SafeConstructor.yaml_constructors[_STR]
