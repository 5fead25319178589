"""``gpupool render STACK --out DIR``: the Kubernetes manifests of a stack, as YAML files.

The objects come from the same program ``pulumi up`` runs, planned offline (``infra.offline``),
so what is rendered is exactly what Pulumi would apply: each Kubernetes resource's inputs are
the object itself. Only the Kubernetes pools' part of the program runs (``define_kubernetes``,
which ``define_stack`` calls too; they take nothing from the AWS side): the AWS provider is
never imported, which halves the command's time. Every object is validated (Kubernetes
OpenAPI schemas of the pool's cluster version, the vendored CRD schemas for custom resources)
before a single file is written.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from gpupool.config import load_stack
from gpupool.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from gpupool.config.kubernetes import KubernetesPoolConfig
    from gpupool.k8s.render import RenderedObject
    from infra.offline import OfflinePlan

POOL_TYPE = "gpupool:k8s:KubernetesGpuPool"


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gpupool.k8s import render

    loaded = load_stack(args.stack)
    where = loaded.shown_path
    pools = loaded.config.kubernetes
    if not pools:
        raise InputError(f"{where}: gpupool:kubernetes: expected at least one Kubernetes pool "
                         "to render; this stack has none")
    from infra.offline import run_offline

    objects = objects_of(run_offline(loaded, kubernetes_only=True), loaded.name)
    objects += admission_of(args, pools, objects)
    versions = {name: p.cluster.version for p in pools
                for name in (p.name, f"{p.name}-admission")}
    problems = render.validate(objects, versions, where)
    if problems:
        raise InputError(problems)
    written = render.write(objects, Path(args.out), f"stack {loaded.name} ({where})")
    per_pool = ", ".join(f"{p.name}: {sum(o.pool == p.name for o in objects)} objects "
                         f"(Kubernetes {p.cluster.version})" for p in pools)
    policies = sum(o.kind == "ValidatingAdmissionPolicy" for o in objects)
    sys.stdout.write(f"wrote {len(written)} files to {args.out} ({per_pool}); every object "
                     f"validated against its schema; {policies} admission policies\n")
    return 0


def admission_of(args: argparse.Namespace, pools: Sequence[KubernetesPoolConfig],
                 objects: Sequence[RenderedObject]) -> list[RenderedObject]:
    """The admission policies (``gpupool admission render``'s objects) of each pool whose
    ``admissionPolicies`` is on, in a directory of their own beside the pool's,
    ``<pool>-admission/`` (cluster-wide objects, applied once per cluster; the pool's own
    numbering stays as it was), without a Namespace the pool already declares."""
    from gpupool.commands import admission
    from gpupool.k8s.render import RenderedObject

    wanted = [p for p in pools if p.admission_policies]
    if not wanted:
        return []
    found = admission.objects(args)
    out = []
    for p in wanted:
        have = {(o.kind, o.name) for o in objects if o.pool == p.name and o.kind == "Namespace"}
        out += [RenderedObject(f"{p.name}-admission", o) for o in found
                if (o["kind"], o["metadata"]["name"]) not in have]
    return out


def objects_of(plan: OfflinePlan, stack: str) -> list[RenderedObject]:
    """Each Kubernetes resource of the plan as (pool, object), pools named by their component."""
    from gpupool.k8s.render import RenderedObject

    pools = {r.urn: r.name.removeprefix(f"{stack}-") for r in plan.resources
             if r.type == POOL_TYPE}
    out = []
    for r in plan.resources:
        if not r.custom or not r.type.startswith("kubernetes:") or r.parent not in pools:
            continue
        out.append(RenderedObject(pools[r.parent], dict(r.inputs)))
    return out
