"""``gpupool admission render``: the kit's per-object Kubernetes rules as the cluster's
ValidatingAdmissionPolicies, from the policy config and waivers ``gpupool check`` reads.

The objects come from :mod:`policies.admission` (imported here, lazily: the CLI is where
policies meet the rest); ``gpupool render`` calls :func:`objects` too, for the pools whose
``admissionPolicies`` is on. Every object is validated against the Kubernetes 1.30 schemas
(the first version serving admissionregistration.k8s.io/v1 policies) and the newest ones
before anything is written.
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from typing import Any

from gpupool.errors import InputError

MIN_VERSION = "1.30"
HEADER = "# Rendered by gpupool admission render"


def objects(args: argparse.Namespace, namespace: str = "gpupool-system") -> list[dict[str, Any]]:
    """The admission objects for the ``--config``, ``--waivers`` and ``--today`` of ``args``."""
    from gpupool.catalog import load_catalog
    from policies.admission.generate import admission_objects
    from policies.settings import load_settings

    settings = load_settings(getattr(args, "config", None), getattr(args, "waivers", None))
    return admission_objects(settings, load_catalog(), today=_today(getattr(args, "today", None)),
                             namespace=namespace)


def _today(given: str | None) -> date | None:
    if given is None:
        return None
    try:
        return date.fromisoformat(given.strip())
    except ValueError:
        raise InputError(f"--today: expected a date YYYY-MM-DD, got {given[:40]!r}") from None


def validate(found: list[dict[str, Any]], versions: list[str]) -> list[str]:
    from gpupool.k8s import schemas

    out = []
    for version in versions:
        for o in found:
            shown = f"{o['kind']} {o['metadata']['name']}"
            out += [f"Kubernetes {version}: {shown}: {p}" for p in schemas.problems(o, version)]
    return out


def run(args: argparse.Namespace) -> int:
    from gpupool.extras import require
    from gpupool.k8s import render, schemas

    require("infra", "gpupool admission render (it validates against the Kubernetes schemas)",
            "kubernetes_validate")
    found = objects(args, args.namespace)
    versions = [MIN_VERSION, schemas.supported_versions()[-1]]
    problems = validate(found, versions)
    if problems:
        raise InputError(problems)
    if not found:
        sys.stderr.write("gpupool admission render: note: every Kubernetes rule is disabled: "
                         "nothing to render\n")
    if args.out is None:
        sys.stdout.write("".join(f"---\n{render.dump(o)}" for o in found))
        return 0
    from gpupool.k8s.render import RenderedObject, file_name, ordered
    from gpupool.outdir import write_tree

    header = f"{HEADER}: edit the policy config and render again, not this file\n"
    ranked = ordered([RenderedObject("", o) for o in found])
    files = {file_name(i, o): header + render.dump(o.obj) for i, o in enumerate(ranked, 1)}
    written = write_tree(args.out, files, option="--out",
                         ours=lambda head: head.startswith(HEADER.encode()))
    sys.stdout.write(f"wrote {len(written)} files to {args.out}; every object validated "
                     f"against the Kubernetes {' and '.join(versions)} schemas (the policies "
                     f"need Kubernetes {MIN_VERSION} or later)\n")
    return 0
