"""What a rule's admission twin is: the CEL beside each rule, and what it needs.

Each module of :mod:`policies.admission.cel` defines ``ADMISSION``, an :class:`AdmissionRule`
for one rule ID: the kinds it matches, its CEL variables and validations, and how the rule's
parameters (the pydantic model the policy config file fills) become the params ConfigMap's
``data``. :mod:`policies.admission.generate` turns it, with the rule's own metadata and the
configured enforcement and waivers, into a ValidatingAdmissionPolicy, its binding and the
ConfigMap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gpupool.catalog import Catalog
from policies.rules.base import RuleParams


@dataclass(frozen=True)
class Validation:
    """One CEL validation: ``expression`` must hold; ``message_expression`` says why not in
    the words of the PR check (``message`` is the fallback if it cannot be evaluated)."""

    expression: str
    message: str
    message_expression: str
    reason: str = "Forbidden"


@dataclass(frozen=True)
class AdmissionRule:
    """The admission form of one rule.

    ``kinds``: (API group, kind) pairs matched; the pod-reading rules match every kind of
    :data:`policies.admission.kinds.KINDS` and read them through the ``roles`` variable
    (``uses_roles``). ``variables``: (name, CEL) after the shared ``gk`` and ``roles``.
    ``params``: the ConfigMap ``data`` from the rule's validated parameters, or None when the
    rule has no parameter CEL reads (then the policy has no paramKind)."""

    rule_id: str
    kinds: tuple[tuple[str, str], ...]
    variables: tuple[tuple[str, str], ...]
    validations: tuple[Validation, ...]
    params: Callable[[RuleParams], Mapping[str, str]] | None = None
    uses_roles: bool = True
    # Variables computed from the rule's parameters and the GPU catalog at render time (not
    # from a ConfigMap): (name, CEL); docs/kubernetes.md says which rules have them.
    compiled: Callable[[RuleParams, Catalog], tuple[tuple[str, str], ...]] | None = None
    # The requests matched: a rule that compares an object with the one it replaces (its
    # ``oldObject``) judges UPDATE only, as the PR check judges only updates.
    operations: tuple[str, ...] = ("CREATE", "UPDATE")
    # ``oldRoles``: the ``roles`` of ``oldObject`` (an UPDATE's stored object) as well.
    uses_old_roles: bool = False
