"""Validate Kubernetes objects against the real schemas before anything is written.

Built-in kinds use the Kubernetes OpenAPI schemas shipped by the ``kubernetes-validate`` package
for the cluster's minor version, in their *strict* form (an unknown field is an error, as
``kubectl apply --validate=strict`` would say). Custom resources (KEDA ScaledObject, Karpenter
NodePool/EC2NodeClass, Prometheus Operator ServiceMonitor) use the ``openAPIV3Schema`` of their
own CRDs, vendored in ``crds/`` (source, tag and commit in ``crds/SOURCES.md``), made strict the
same way: an object with ``properties`` and neither ``additionalProperties`` nor
``x-kubernetes-preserve-unknown-fields`` refuses other keys (the API server would prune them),
and their CEL rules (``x-kubernetes-validations``) are evaluated too (:mod:`gpupool.k8s.cel`).
A kind may have CRDs of several releases (Karpenter v1.0.0 and v1.14.1, the oldest and newest v1
release the kit supports): an object must pass every one of them.

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

from gpupool.k8s import cel

# (file, the release it comes from): crds/SOURCES.md has each one's repository and commit
CRD_FILES = (
    ("keda.sh_scaledobjects.yaml", "KEDA v2.20.2"),
    ("karpenter.sh_nodepools.yaml", "Karpenter v1.14.1"),
    ("karpenter.sh_nodepools.v1.0.0.yaml", "Karpenter v1.0.0"),
    ("karpenter.k8s.aws_ec2nodeclasses.yaml", "Karpenter v1.14.1"),
    ("karpenter.k8s.aws_ec2nodeclasses.v1.0.0.yaml", "Karpenter v1.0.0"),
    ("monitoring.coreos.com_servicemonitors.yaml", "Prometheus Operator v0.93.0"),
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
def _crds() -> dict[tuple[str, str], list[tuple[str, dict[str, Any]]]]:
    """(apiVersion, kind) → (release, strict openAPIV3Schema) of every served version of
    every vendored CRD, oldest release last."""
    out: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = {}
    root = resources.files("gpupool.k8s").joinpath("crds")
    for name, release in CRD_FILES:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        crd = yaml.load(root.joinpath(name).read_text(), Loader=loader)  # our own vendored file
        spec = crd["spec"]
        for v in spec["versions"]:
            if v.get("served", True) and "schema" in v:
                key = (f"{spec['group']}/{v['name']}", spec["names"]["kind"])
                out.setdefault(key, []).append(
                    (release, strict(v["schema"]["openAPIV3Schema"])))
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
def _custom(api_version: str, kind: str
            ) -> list[tuple[jsonschema.protocols.Validator, dict[str, Any], str]]:
    return [(jsonschema.Draft202012Validator(schema), schema,
             f"the {kind} CRD's schema ({api_version}, {release})")
            for release, schema in _crds().get((api_version, kind), [])]


def crd_kinds() -> list[tuple[str, str]]:
    return sorted(_crds())


def validators(obj: Mapping[str, Any], version: str
               ) -> list[tuple[jsonschema.protocols.Validator, dict[str, Any] | None, str]]:
    """Each validator an object must pass, its CRD schema when it has CEL rules to run (None
    for built-in kinds), and where it comes from (for messages)."""
    api, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    custom = _custom(api, kind)
    if custom:
        return [(check, schema, source) for check, schema, source in custom]
    found = _builtin(version, api, kind)
    if found is not None:
        return [(found, None, f"the Kubernetes {version} schema of {api} {kind}")]
    raise SchemaMissing(f"no schema for {api} {kind}: neither a Kubernetes {version} kind nor "
                        f"a vendored CRD ({', '.join(k for _, k in crd_kinds())})")


def problems(obj: Mapping[str, Any], version: str) -> Iterator[str]:
    """Every schema violation of ``obj`` as ``<path>: <message> (<schema>)``; none if valid:
    structure first, then (CRDs) the CEL rules of each schema it must pass."""
    for check, schema, source in validators(obj, version):
        errors = sorted(check.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
        for e in errors:
            path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
            yield f"{path.lstrip('.') or '(object)'}: {_short(e.message)} ({source})"
        if schema is not None and not errors:
            for path, message in cel.problems(schema, obj):
                yield f"{path}: {_short(message)} ({source}, CEL rule)"


def _short(message: str) -> str:
    return message if len(message) <= 160 else message[:157] + "..."
