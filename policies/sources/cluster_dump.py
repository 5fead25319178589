"""A cluster dump (``kubectl get <kinds> -A -o json``: one v1 List) → one Plan.

``gpupool check --cluster-dump FILE`` judges what already runs on a cluster with the same
rules as the pull request and the admission policies, so a platform team sees what the
policies would refuse before it switches them from Audit to Deny. Every item becomes a CREATE
(what admitting it again would be), read like any manifest (:mod:`.kubernetes`); what the
server adds (``status``, ``managedFields``) is not looked into by the rules. Bad input is one
line: a file that is not JSON, a document that is not a List, items that are not objects.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

from gpupool.inputs import shown_name
from gpupool.record import replace
from gpupool.yamldoc import YamlDocument
from policies.model import Plan
from policies.sources import kubernetes
from policies.sources.reading import JsonLines, json_type, problem, read_json

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

_HOW: Final = "kubectl get <kinds> -A -o json"


def load_cluster_dump(path: str) -> Plan:
    shown = shown_name(path)
    doc = read_json(Path(path), shown)
    if isinstance(doc, JsonLines) or type(doc) is not dict:
        raise problem(f"{shown}: expected a List ({_HOW}), got "
                      f"{'JSON lines' if isinstance(doc, JsonLines) else json_type(doc)}")
    kind = doc.get("kind")
    if not isinstance(kind, str) or not kind.endswith("List"):
        got = f"kind {kind!r}" if isinstance(kind, str) else "no kind"
        raise problem(f"{shown}: kind: expected List ({_HOW}), got {got}: give one object's "
                      "manifest as a PLAN_FILE instead")
    items = doc.get("items")
    if type(items) is not list:
        raise problem(f"{shown}: items: expected a list of Kubernetes objects ({_HOW}), got "
                      f"{json_type(items)}")
    if not items:
        return Plan(source=kubernetes.SOURCE, origin=shown, changes=(),
                    meta={"cluster_dump": True})
    manifests = kubernetes.manifests_of([YamlDocument(0, 1, doc)], shown)
    plan = kubernetes.plan_of(manifests, shown)
    return replace(plan, meta={"cluster_dump": True})


def namespace_of(address: str) -> str:
    """``Deployment/ml/llm`` → ``ml``; cluster-scoped objects (``NodePool/gpu``) → ``""``."""
    parts = address.split("/")
    return parts[1] if len(parts) >= 3 else ""


def group_kind(resource_type: str) -> tuple[str, str]:
    """``kubernetes:apps/v1:Deployment`` → ``("apps", "Deployment")``; the core group is ``""``
    (as the API server and the admission policies name it)."""
    _, api, kind = [*resource_type.split(":", 2), "", ""][:3]
    group = api.rsplit("/", 1)[0] if "/" in api else ""
    return ("" if group == "core" else group, kind)


def summary(plan: Plan, violations: Iterable[Any]) -> str:
    """One line per dump: objects per namespace, how many of them the admission policies would
    refuse at Deny (a mandatory violation of a rule whose policy matches the object's kind: the
    HPA part of k8s-gpu-workload-autoscaled, say, is never judged on a Deployment at
    admission), and how many have other findings (advisory ones, and the parts of rules that
    stay in PR checks: docs/kubernetes.md)."""
    from policies.admission.cel import ADMISSION_RULES

    matched = {a.rule_id: frozenset(a.kinds) for a in ADMISSION_RULES}
    kinds = {c.address: group_kind(c.type) for c in plan.changes}
    objects = Counter(namespace_of(a) for a in kinds)
    refused: dict[str, set[str]] = defaultdict(set)
    other: dict[str, set[str]] = defaultdict(set)
    for v in violations:
        mandatory = str(v.enforcement) == "mandatory"
        for a in (v.resource, *getattr(v, "also", ())):
            if a in kinds:
                deny = mandatory and kinds[a] in matched.get(v.policy, frozenset())
                (refused if deny else other)[namespace_of(a)].add(a)
    parts = []
    for ns in sorted(objects):
        part = f"{ns or '(cluster-scoped)'} {len(refused[ns])} of {objects[ns]}"
        if other[ns]:
            part += f" ({len(other[ns])} with other findings)"
        parts.append(part)
    return (f"cluster dump {plan.origin}: {len(kinds)} objects in "
            f"{sum(1 for ns in objects if ns)} namespaces; objects the admission policies would "
            f"refuse at Deny, by namespace: {'; '.join(parts) or 'none'}")
