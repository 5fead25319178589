"""Validate Kubernetes objects against the real schemas before anything is written.

Built-in kinds use the Kubernetes OpenAPI schemas shipped by the ``kubernetes-validate`` package
for the cluster's minor version, in their *strict* form (an unknown field is an error, as
``kubectl apply --validate=strict`` would say). Custom resources (KEDA ScaledObject, Karpenter
NodePool/EC2NodeClass, Prometheus Operator ServiceMonitor) use the ``openAPIV3Schema`` of their
own CRDs, vendored in ``crds/`` (source, tag and commit in ``crds/SOURCES.md``), made strict the
same way: an object with ``properties`` and neither ``additionalProperties`` nor
``x-kubernetes-preserve-unknown-fields`` refuses other keys (the API server would prune them).

Validators are built once per (version, kind) and report every problem of an object, each as
``<path>: <what is wrong>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
import yaml
from referencing import Registry, Resource

CRD_FILES = (
    "keda.sh_scaledobjects.yaml",
    "karpenter.sh_nodepools.yaml",
    "karpenter.k8s.aws_ec2nodeclasses.yaml",
    "monitoring.coreos.com_servicemonitors.yaml",
)


class SchemaMissing(LookupError):
    """No schema for an object's apiVersion/kind at the requested Kubernetes version."""


def supported_versions() -> list[str]:
    """Kubernetes minor versions kubernetes-validate ships schemas for ("1.25" … )."""
    from kubernetes_validate.utils import all_versions, major_minor

    return sorted({major_minor(v) for v in all_versions()}, key=lambda v: tuple(map(int,
                                                                                   v.split("."))))


@cache
def _schema_dir(version: str) -> str:
    """The newest schema set not newer than ``version`` (how kubernetes-validate picks)."""
    from kubernetes_validate.utils import all_versions, major_minor

    wanted = tuple(map(int, version.split(".")))
    fits = [v for v in all_versions() if tuple(map(int, major_minor(v).split("."))) <= wanted]
    if not fits:
        raise SchemaMissing(f"no Kubernetes schemas for version {version} (supported: "
                            f"{', '.join(supported_versions())})")
    return f"v{fits[-1]}-local-strict"


def _package_json(*parts: str) -> Any:
    ref = resources.files("kubernetes_validate").joinpath("kubernetes-json-schema", *parts)
    try:
        return json.loads(ref.read_text())
    except FileNotFoundError:
        return None


@cache
def _definitions(version: str) -> Registry:
    defs = _package_json(_schema_dir(version), "_definitions.json")
    return Resource.from_contents(defs) @ Registry()  # type: ignore[no-any-return]


@cache
def _builtin(version: str, api_version: str, kind: str) -> jsonschema.protocols.Validator | None:
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    schema = _package_json(_schema_dir(version), f"{kind.lower()}-{group_version}.json")
    if schema is None:
        return None
    registry = Resource.from_contents(schema) @ _definitions(version)
    return jsonschema.Draft202012Validator(schema, registry=registry)


@cache
def _crds() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) → the strict openAPIV3Schema of every served version of every CRD."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    root = resources.files("gpupool.k8s").joinpath("crds")
    for name in CRD_FILES:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        crd = yaml.load(root.joinpath(name).read_text(), Loader=loader)  # our own vendored file
        spec = crd["spec"]
        for v in spec["versions"]:
            if v.get("served", True) and "schema" in v:
                key = (f"{spec['group']}/{v['name']}", spec["names"]["kind"])
                out[key] = strict(v["schema"]["openAPIV3Schema"])
    return out


def strict(schema: Any) -> Any:
    """A copy of a CRD schema in which objects with declared properties refuse unknown keys."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) if k != "enum" and k != "default" and k != "example" else v
           for k, v in schema.items()}
    if ("properties" in out and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    return out


@cache
def _custom(api_version: str, kind: str) -> jsonschema.protocols.Validator | None:
    schema = _crds().get((api_version, kind))
    if schema is None:
        return None
    return jsonschema.Draft202012Validator(schema)


def crd_kinds() -> list[tuple[str, str]]:
    return sorted(_crds())


def validator(obj: Mapping[str, Any], version: str) -> tuple[jsonschema.protocols.Validator, str]:
    """The validator for an object and where its schema comes from (for messages)."""
    api, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    found = _custom(api, kind)
    if found is not None:
        return found, f"the {kind} CRD's schema ({api})"
    found = _builtin(version, api, kind)
    if found is not None:
        return found, f"the Kubernetes {version} schema of {api} {kind}"
    raise SchemaMissing(f"no schema for {api} {kind}: neither a Kubernetes {version} kind nor "
                        f"a vendored CRD ({', '.join(k for _, k in crd_kinds())})")


def problems(obj: Mapping[str, Any], version: str) -> Iterator[str]:
    """Every schema violation of ``obj`` as ``<path>: <message> (<schema>)``; none if valid."""
    check, source = validator(obj, version)
    errors = sorted(check.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
    for e in errors:
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
        yield f"{path.lstrip('.') or '(object)'}: {_short(e.message)} ({source})"


def _short(message: str) -> str:
    return message if len(message) <= 160 else message[:157] + "..."
