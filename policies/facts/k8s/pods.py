"""Pod specs and containers: the GPUs each container asks for, and where it says so.

:func:`pod_spec` reads one pod spec (``containers`` and ``initContainers``, or Terraform's
``container`` / ``init_container`` blocks); :func:`resources_block` reads a bare resources block
where a kind keeps one instead of a pod template (NIMService's ``spec.resources``, TrainJob's
``resourcesPerNode``). Every container carries the snake_case path of its resources block, so a
message can name the line to change in the user's own spelling
(:func:`policies.rules._common.prop`).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpupool.record import Frozen
from policies.facts.k8s.quantities import GPU_RESOURCES, Quantity, quantity
from policies.facts.values import Maybe, block, blocks, is_map
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


class ContainerGpus(Frozen):
    """The GPUs one container asks for: per GPU resource name, in limits and in requests."""

    __slots__ = ("name", "init", "limits", "requests", "unknown", "path", "resources_path")

    name: str
    init: bool
    limits: Mapping[str, Quantity]
    requests: Mapping[str, Quantity]
    unknown: str | None  # the container's resources are unknown until apply
    path: str  # snake_case path of the container (spec.template.spec.containers[0])
    resources_path: str  # …and of its resources block (….containers[0].resources)

    def __init__(
        self,
        name: str,
        init: bool,
        limits: Mapping[str, Quantity],
        requests: Mapping[str, Quantity],
        unknown: str | None = None,
        path: str = "",
        resources_path: str = "",
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "init", init)
        object.__setattr__(self, "limits", limits)
        object.__setattr__(self, "requests", requests)
        object.__setattr__(self, "unknown", unknown)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "resources_path", resources_path)

    @property
    def resources(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*self.limits, *self.requests]))

    def count(self, resource: str) -> Quantity:
        """What the scheduler reserves: the limit (requests default to it), else the request."""
        return self.limits.get(resource) or self.requests.get(resource) or Quantity(0, 0.0)

    @property
    def total(self) -> float | None:
        """Every GPU of the container, or None when a count is unknown or unreadable."""
        out = 0.0
        for r in self.resources:
            q = self.count(r)
            if q.value is None:
                return None
            out += q.value
        return out


class PodGpus(Frozen):
    """A pod template's containers and what they ask for; ``unknown`` says why it is unknown."""

    __slots__ = ("containers", "unknown", "path")

    containers: tuple[ContainerGpus, ...]
    unknown: str | None
    path: str  # snake_case path of the pod spec, for messages (spec.template.spec)

    def __init__(
        self,
        containers: tuple[ContainerGpus, ...] = (),
        unknown: str | None = None,
        path: str = "",
    ) -> None:
        object.__setattr__(self, "containers", containers)
        object.__setattr__(self, "unknown", unknown)
        object.__setattr__(self, "path", path)

    @property
    def gpu_containers(self) -> tuple[ContainerGpus, ...]:
        return tuple(c for c in self.containers if c.resources or c.unknown)

    @property
    def gpu_resources(self) -> tuple[str, ...]:
        """Every GPU resource name a container asks for, in order of appearance."""
        return tuple(dict.fromkeys(r for c in self.containers for r in c.resources))

    @property
    def per_pod(self) -> float | None:
        """GPUs the pod holds: init containers run one at a time before the others, so the
        pod's effective request is max(largest init container, sum of the app containers)."""
        if self.unknown:
            return None
        app, init = 0.0, 0.0
        for c in self.containers:
            if c.unknown:
                return None
            total = c.total
            if total is None:
                return None
            if c.init:
                init = max(init, total)
            else:
                app += total
        return max(app, init)


_CONTAINER_KEYS = ((False, ("containers", "container")),
                   (True, ("init_containers", "init_container")))


def pod_spec(spec: Any, path: str, *, extra: tuple[tuple[str, bool], ...] = ()) -> PodGpus:
    """The containers of the pod spec ``spec`` found at ``path`` (UNKNOWN or absent allowed).

    ``extra`` names further container lists a kind keeps beside them, with whether they run
    before the others (Argo's ``sidecars``: ``(("sidecars", False),)``)."""
    if spec is UNKNOWN:
        return PodGpus(unknown=f"{_last(path)} unknown until apply", path=path)
    if not is_map(spec):
        return PodGpus(path=path)
    out: list[ContainerGpus] = []
    lists = [*((key, init) for init, keys in _CONTAINER_KEYS for key in keys), *extra]
    for key, init in lists:
        items = blocks(spec.get(key))
        if items is UNKNOWN:
            return PodGpus(unknown=f"{key} unknown until apply", path=path)
        for i, c in enumerate(items):
            out.append(container(c, f"{path}.{key}[{i}]", init, default_name=f"#{i}"))
    return PodGpus(tuple(out), None, path)


def container(c: Any, path: str, init: bool = False, *, default_name: str = "") -> ContainerGpus:
    """One container (a mapping with ``name`` and ``resources``) at ``path``."""
    if not is_map(c):
        return ContainerGpus(default_name or _last(path), init, {}, {},
                             "unknown until apply" if c is UNKNOWN else None, path,
                             f"{path}.resources")
    raw_name = c.get("name")
    name = raw_name if isinstance(raw_name, str) else (default_name or _last(path))
    return resources_block(c.get("resources"), name, path, f"{path}.resources", init)


def resources_block(raw: Any, name: str, path: str, resources_path: str,
                    init: bool = False) -> ContainerGpus:
    """A resources block (``{limits, requests}``) read as the container ``name`` would ask."""
    res = block(raw)
    if res is UNKNOWN:
        return ContainerGpus(name, init, {}, {}, "resources unknown until apply", path,
                             resources_path)
    if res is None:
        return ContainerGpus(name, init, {}, {}, None, path, resources_path)
    sides: list[dict[str, Quantity]] = []
    for key in ("limits", "requests"):
        value = res.get(key)
        if value is UNKNOWN:
            return ContainerGpus(name, init, {}, {}, f"resources.{key} unknown until apply",
                                 path, resources_path)
        values = value if is_map(value) else {}
        sides.append({r: quantity(values[r]) for r in GPU_RESOURCES if r in values})
    return ContainerGpus(name, init, sides[0], sides[1], None, path, resources_path)


def step(node: Any, path: str) -> tuple[Any, str | None]:
    """Walk ``a.b.c`` (block-aware: Terraform's one-element lists) from ``node``: the node found
    (None when absent) and, when a part is unknown until apply, that part's name."""
    for part in path.split("."):
        node = block(node.get(part)) if is_map(node) else None
        if node is UNKNOWN:
            return UNKNOWN, part
        if node is None:
            return None, None
    return node, None


def labels_of(template: Any) -> Mapping[str, Any]:
    """A pod template's ``metadata.labels`` ({} when absent or unknown)."""
    meta = block(template.get("metadata")) if is_map(template) else None
    labels = meta.get("labels") if is_map(meta) else None
    return labels if is_map(labels) else {}


def as_map(node: Any) -> Mapping[str, Any] | Maybe | None:
    """``node`` when it is a mapping or UNKNOWN, else None."""
    if node is UNKNOWN:
        return UNKNOWN
    return node if is_map(node) else None


def _last(path: str) -> str:
    return path.rsplit(".", 1)[-1]
