"""Which line of a stack file sets a resource input: where a reviewer fixes a finding.

The kit's program builds every pool's resources from one entry of ``gpupool:pools`` (AWS,
``infra/aws/gpu_pool.py``) or ``gpupool:kubernetes`` (``infra/k8s/pool.py``); the component is
named ``<stack>-<pool>`` and its children ``<stack>-<pool>-<part>``. :data:`POOL_KEYS` says which
key of a pool entry sets which resource input, as the program uses them (tests/infra checks each
entry against the program under the mock runtime). :func:`locate` turns a finding on a planned
resource into ``gpupool:pools[0].minSize`` and its line; when the input has no key of its own,
the pool entry itself (its first line) is the place to look.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

import yaml

from gpupool.errors import InputError
from gpupool.yamlio import compose_yaml, parse_yaml

# Component type (in a URN's type chain) → the stack key listing its pools.
POOL_LISTS: Final = {
    "gpupool:aws:GpuPool": "gpupool:pools",
    "gpupool:k8s:KubernetesGpuPool": "gpupool:kubernetes",
}
# Resource input (snake_case, as policies see it) → the key of an AWS pool entry that sets it.
POOL_KEYS: Final = {
    "instance_type": "gpu",
    "min_size": "minSize",
    "max_size": "maxSize",
    "desired_capacity": "desiredCapacity",
    "target_tracking_configuration": "targetGpuUtilisation",
    "block_device_mappings": "rootVolumeGib",
}


@dataclass(frozen=True, slots=True)
class KeyLine:
    key: str  # "gpupool:pools[0].minSize", or "gpupool:pools[0]" for the entry
    line: int  # 1-based
    column: int  # 1-based


def locate(stack_file: Path, urn: str, prop: str | None, *, base: str | None = None
           ) -> KeyLine | None:
    """The key (and its line) of ``stack_file`` that sets ``prop`` of the resource ``urn``;
    None when the resource does not come from a pool entry of this stack file.

    ``base``: the stack file's text at the ref the change is diffed against. When ``prop`` has
    no key of its own, the first key of the pool entry whose value differs from the base's
    entry of the same pool is the place (the line the pull request changed)."""
    parsed = _urn(urn)
    if parsed is None:
        return None
    stack, components, name = parsed
    lists = [POOL_LISTS[c] for c in components if c in POOL_LISTS]
    if not lists:
        return None
    try:
        text = stack_file.read_text(encoding="utf-8")
        values = parse_yaml(text, str(stack_file))  # refuses what compose would take silently
        root = compose_yaml(text, str(stack_file))
    except (OSError, UnicodeDecodeError, InputError):
        return None
    config = _get(root, "config")
    entries = _get(config, lists[0])
    if not isinstance(entries, yaml.SequenceNode):
        return None
    best: tuple[int, int, yaml.MappingNode] | None = None
    for i, entry in enumerate(entries.value):
        pool = _get(entry, "name")
        if not isinstance(entry, yaml.MappingNode) or not isinstance(pool, yaml.ScalarNode):
            continue
        prefix = f"{stack}-{pool.value}"
        if (name == prefix or name.startswith(prefix + "-")) and (
                best is None or len(pool.value) > best[0]):
            best = (len(pool.value), i, entry)
    if best is None:
        return None
    _, i, entry = best
    where = f"{lists[0]}[{i}]"
    key = POOL_KEYS.get(prop or "") if lists[0] == "gpupool:pools" else None
    node = _key_node(entry, key) if key else None
    if node is None and base is not None:
        key = _changed_key(values, base, lists[0], i, str(stack_file))
        node = _key_node(entry, key) if key else None
    if node is not None:
        return KeyLine(f"{where}.{key}", node.start_mark.line + 1, node.start_mark.column + 1)
    first = entry.value[0][0] if entry.value else entry
    return KeyLine(where, first.start_mark.line + 1, first.start_mark.column + 1)


def _urn(urn: str) -> tuple[str, list[str], str] | None:
    """``urn:pulumi:STACK::PROJECT::TYPE$TYPE::NAME`` → (stack, parent types, name)."""
    if not urn.startswith("urn:pulumi:"):
        return None
    parts = urn.split("::")
    if len(parts) < 4:
        return None
    stack = parts[0].removeprefix("urn:pulumi:")
    chain = parts[2].split("$")
    return stack, chain[:-1] or chain, "::".join(parts[3:])


def _key_node(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for k, _ in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return k
    return None


def _get(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return v
    return None


def _changed_key(values: object, base: str, pools_key: str, index: int, where: str
                 ) -> str | None:
    """The first key of pool entry ``index`` whose value differs from the base's entry of the
    same name (None for a pool the base lacks, or an unreadable base)."""
    try:
        old = parse_yaml(base, f"{where} (base)")
    except InputError:
        return None
    head = _entries(values, pools_key)
    if index >= len(head):
        return None
    name = head[index].get("name")
    before = next((e for e in _entries(old, pools_key) if e.get("name") == name), None)
    if before is None:
        return None
    return next((str(k) for k, v in head[index].items() if before.get(k) != v), None)


def _entries(values: object, pools_key: str) -> list[dict[object, object]]:
    config = values.get("config") if isinstance(values, dict) else None
    pools = config.get(pools_key) if isinstance(config, dict) else None
    return [e if isinstance(e, dict) else {} for e in pools] if isinstance(pools, list) else []
