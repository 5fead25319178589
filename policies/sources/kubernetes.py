"""Kubernetes manifests (YAML or JSON files, directories of them) → one Plan.

What is read: single- and multi-document YAML (``---``), ``kubectl get -o yaml|json`` and
``helm template`` output, ``List`` kinds (``v1/List``, ``DeploymentList``, …) whose ``items``
are unwrapped, and directories of such files (``*.yaml``, ``*.yml``, ``*.json``, recursively, in
path order). Every object becomes a CREATE (what applying the manifests would make), with
inputs normalised like every other source (snake_case keys; label keys kept as written) and the
Pulumi-style type token ``kubernetes:<group>/<version>:<Kind>`` (``core/v1`` for the core
group), so one rule serves manifests, Pulumi previews and offline plans alike.

All manifest inputs of one ``gpupool check`` form ONE plan, as ``kubectl apply -f a -f b``
would apply them together: a HorizontalPodAutoscaler in one file targets a Deployment in
another, a ResourceQuota in ``namespaces.yaml`` covers the workloads of ``apps/``. Each change
remembers the file and line it came from (``ResourceChange.origin``) for the reports.

Bad input is refused in one line, never turned into a passing empty plan: a document that is
not a Kubernetes object (no ``apiVersion``/``kind``), a file or directory without any object,
the same object twice, YAML bombs, non-UTF-8 (the bounds of :mod:`gpupool.yamlio`); a chart's
unrendered template is told to be one (:mod:`policies.sources.helm`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from gpupool.errors import InputError
from gpupool.record import Frozen
from gpupool.yamldoc import YamlDocument
from policies.model import ChangeKind, Plan, ResourceChange, normalise_inputs, resource_kind
from policies.sources.helm import file_text, unrendered
from policies.sources.reading import is_k8s_object, json_type, problem

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

SOURCE: Final = "kubernetes"
SUFFIXES: Final = (".yaml", ".yml", ".json")
TOKEN_PREFIX: Final = "kubernetes:"


def type_token(api_version: str, kind: str) -> str:
    """``apps/v1`` + ``Deployment`` → ``kubernetes:apps/v1:Deployment`` (Pulumi's token);
    the core group (``v1``) is ``core/v1``."""
    group_version = api_version if "/" in api_version else f"core/{api_version}"
    return f"{TOKEN_PREFIX}{group_version}:{kind}"


is_object = is_k8s_object  # does a parsed document look like a Kubernetes object (or List)?


class Manifest(Frozen):
    """One object read from a file: where it is (``file:line``) and what it says."""

    __slots__ = ("origin", "where", "obj")

    origin: str  # "path/to/file.yaml:12"
    where: str  # "path/to/file.yaml: document 2 (line 12)" for messages
    obj: dict[str, Any]

    def __init__(self, origin: str, where: str, obj: dict[str, Any]) -> None:
        object.__setattr__(self, "origin", origin)
        object.__setattr__(self, "where", where)
        object.__setattr__(self, "obj", obj)


def manifest_files(path: Path, shown: str) -> list[tuple[Path, str]]:
    """A file, or the manifest files under a directory in path order (hidden entries skipped)."""
    if not path.is_dir():
        return [(path, shown)]
    found: list[tuple[Path, str]] = []
    top = str(path)
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        below = os.path.join(shown, os.path.relpath(root, top)) if root != top else shown
        for name in sorted(files):
            if name.endswith(SUFFIXES) and not name.startswith("."):
                found.append((Path(root, name), os.path.join(below, name)))
    if not found:
        raise problem(f"{shown}: expected a directory of Kubernetes manifests (*.yaml, *.yml, "
                      "*.json), found none")
    return found


def read_documents(path: Path, shown: str) -> list[YamlDocument]:
    """A manifest file's documents (JSON is YAML to this reader, and gets the same bounds).
    gpupool.yamlio (PyYAML) is imported where YAML is read, so a plan check never loads it."""
    from gpupool.yamlio import read_yaml_documents

    return read_yaml_documents(path, shown)


def read_manifests(path: Path, shown: str) -> list[Manifest]:
    """A manifest file's objects; an unrendered Helm template is said to be one."""
    try:
        return manifests_of(read_documents(path, shown), shown)
    except InputError:
        from gpupool.yamlio import MAX_BYTES

        text = file_text(path, MAX_BYTES)
        found = unrendered(text, shown) if text is not None else None
        if found is not None:
            raise found from None
        raise


def parse_documents(raw: bytes, shown: str) -> list[YamlDocument]:
    """The documents of manifests already read (standard input, a FIFO: read only once), with
    the size, encoding and YAML bounds of a file."""
    from gpupool.yamlio import decode_text, parse_yaml_documents

    text = decode_text(raw, shown)
    try:
        docs = parse_yaml_documents(text, shown)
        manifests_of(docs, shown)  # refused here, while the text can still be looked at
    except InputError:
        found = unrendered(text, shown)
        if found is not None:
            raise found from None
        raise
    return docs


def manifests_of(docs: Sequence[YamlDocument], shown: str) -> list[Manifest]:
    """The objects of one file's documents, Lists unwrapped; one-line errors for anything else."""
    out: list[Manifest] = []
    for doc in docs:
        if doc.value is None:
            continue  # an empty document (a trailing ---, a comment-only file part)
        where = f"{shown}: document {doc.index + 1} (line {doc.line})"
        out.extend(_objects(doc.value, where, f"{shown}:{doc.line}"))
    if not out:
        raise problem(f"{shown}: expected Kubernetes manifests, got no documents")
    return out


def _objects(value: Any, where: str, origin: str) -> Iterator[Manifest]:
    _require_object(value, where)
    kind: str = value["kind"]
    items = value.get("items")
    if kind.endswith("List") and "items" in value:
        if type(items) is not list:
            raise problem(f"{where}: items: expected a list of Kubernetes objects, got "
                          f"{json_type(items)}")
        for i, item in enumerate(items):
            yield from _objects(item, f"{where}: items[{i}]", origin)
        return
    metadata = value.get("metadata")
    if metadata is not None and type(metadata) is not dict:
        raise problem(f"{where}: metadata: expected a mapping, got {json_type(metadata)}")
    yield Manifest(origin, where, value)


def _require_object(value: Any, where: str) -> None:
    if type(value) is not dict:
        raise problem(f"{where}: expected a Kubernetes object (a mapping with apiVersion and "
                      f"kind), got {json_type(value)}")
    missing = [k for k in ("apiVersion", "kind") if not isinstance(value.get(k), str)
               or not value.get(k)]
    if missing:
        keys = ", ".join(sorted(map(str, value))[:5]) or "none"
        raise problem(f"{where}: {missing[0]}: expected a Kubernetes object with apiVersion and "
                      f"kind, got a mapping with keys: {keys}")


def address(obj: dict[str, Any]) -> str:
    """``Deployment/ml-research/embeddings``; ``Namespace/ml-research`` without a namespace."""
    meta = obj.get("metadata") or {}
    name = meta.get("name") or (f"{meta['generateName']}*" if meta.get("generateName") else "")
    ns = meta.get("namespace")
    parts = [obj["kind"], *([str(ns)] if ns else []), str(name or "(unnamed)")]
    return "/".join(parts)


def to_changes(manifests: Iterable[Manifest]) -> list[ResourceChange]:
    """Every object as a CREATE; the same object twice is refused (which one applies?)."""
    seen: dict[tuple[str, str], str] = {}
    out: list[ResourceChange] = []
    for m in manifests:
        obj = m.obj
        token = type_token(obj["apiVersion"], obj["kind"])
        addr = address(obj)
        group = obj["apiVersion"].rsplit("/", 1)[0] if "/" in obj["apiVersion"] else ""
        key = (group, addr)
        if key in seen:
            raise problem(f"{m.where}: expected each Kubernetes object once, {addr} is also at "
                          f"{seen[key]}")
        seen[key] = m.origin
        out.append(ResourceChange(
            address=addr,
            type=token,
            name=str((obj.get("metadata") or {}).get("name") or addr),
            change=ChangeKind.CREATE,
            new=normalise_inputs(obj),
            old=None,
            source=SOURCE,
            kind=resource_kind(token),
            origin=m.origin,
        ))
    return out


def plan_of(manifests: Iterable[Manifest], origin: str) -> Plan:
    return Plan(source=SOURCE, origin=origin, changes=tuple(to_changes(manifests)))
