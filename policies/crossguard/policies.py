"""One pulumi-policy ``Policy`` per gpupool rule, built from the rule's own metadata.

Name = rule id, description = title, enforcement = the rule's default, config schema = its
params model. A resource-scope rule becomes a ``ResourceValidationPolicy`` judging the resource
the CLI sends; a stack-scope rule a ``StackValidationPolicy`` judging all resources at once.
Messages are the rule's findings, unchanged: the same words ``gpupool check`` prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from gpupool.catalog import Catalog, load_catalog
from policies.crossguard.baseline import Baseline, BaselineCache, BaselineError
from policies.crossguard.config import (
    BASELINE_KEY,
    ConfigParser,
    RuleConfig,
    RuleConfigError,
    config_properties,
)
from policies.crossguard.levels import TO_SDK, finding_level
from policies.crossguard.props import normalised_props, request_props
from policies.model import ChangeKind, ResourceChange, resource_kind
from policies.rules.base import Finding, Rule, RuleContext
from policies.sources.pulumi_values import (
    dependency_references,
    is_engine_resource,
    urn_type_name,
)

SOURCE = "crossguard"


class PackRuntime:
    """State shared by every policy of the pack: the catalog and the baseline cache."""

    def __init__(self, catalog: Catalog | None = None, base_dir: str | None = None) -> None:
        self._catalog = catalog
        self.base_dir = base_dir
        self.baselines = BaselineCache()

    @cached_property
    def catalog(self) -> Catalog:
        return self._catalog if self._catalog is not None else load_catalog()

    def baseline(self, cfg: RuleConfig) -> Baseline | None:
        return None if cfg.baseline is None else self.baselines.load(cfg.baseline, self.base_dir)


def resource_change(
    type_: str,
    urn: str,
    name: str,
    props: Mapping[str, Any],
    *,
    baseline: Baseline | None,
    require_baseline: bool = False,
    parent: str | None = None,
    references: Mapping[str, str] | None = None,
    new: Mapping[str, Any] | None = None,
) -> ResourceChange:
    """The change a rule sees for one CrossGuard resource.

    CrossGuard does not say whether a resource is created or updated. With a baseline it is
    known: in the baseline → an update with its old inputs, absent → a create. Without one it
    is a create, unless ``require_baseline``: then an update whose old inputs are unknown
    (``old=None``), so a rule that needs them says "cannot verify" instead of passing.
    """
    old = None if baseline is None else baseline.old_inputs(urn, type_)
    if baseline is None:
        kind = ChangeKind.UPDATE if require_baseline else ChangeKind.CREATE
    else:
        kind = ChangeKind.CREATE if old is None else ChangeKind.UPDATE
    return ResourceChange(
        address=urn,
        type=type_,
        name=name,
        change=kind,
        new=normalised_props(props) if new is None else new,
        old=old,
        source=SOURCE,
        kind=resource_kind(type_),
        references=dict(references or {}),
        parent=parent,
    )


class RulePolicy:
    """The glue between one rule and pulumi-policy: config, changes, findings → violations."""

    def __init__(self, rule: Rule, runtime: PackRuntime) -> None:
        self.rule = rule
        self.runtime = runtime
        self.parser = ConfigParser(rule)

    @property
    def id(self) -> str:
        return self.rule.meta.id

    def config_schema(self) -> PolicyConfigSchema:
        return PolicyConfigSchema(properties=config_properties(self.rule))

    def config_problems(self, enforcement: str, raw: Mapping[str, Any]) -> list[str]:
        """Every problem with this policy's config (none to check when it is disabled)."""
        if enforcement == "disabled":
            return []
        problems: list[str] = []
        path: Any = raw.get(BASELINE_KEY) if self.rule.meta.needs_old_inputs else None
        try:
            path = self.parser.parse(raw).baseline
        except RuleConfigError as e:
            problems.extend(e.problems)
        if isinstance(path, str) and path.strip():
            try:
                self.runtime.baselines.load(path, self.runtime.base_dir)
            except BaselineError as e:
                problems.append(f"{self.id}: {e}")
        return problems

    def build(self) -> Policy:
        meta = self.rule.meta
        common: dict[str, Any] = {
            "name": meta.id,
            "description": meta.title,
            "enforcement_level": TO_SDK[meta.default_enforcement],
            "config_schema": self.config_schema(),
        }
        if meta.scope == "stack":
            return StackValidationPolicy(validate=self.validate_stack, **common)
        return ResourceValidationPolicy(validate=self.validate_resource, **common)

    # -- validation ------------------------------------------------------------------------

    def _config(self, raw: Mapping[str, Any], report: ReportViolation, urn: str | None
                ) -> tuple[RuleConfig, Baseline | None] | None:
        """Config and baseline, or None after reporting why they cannot be used (mandatory:
        a pack that cannot judge must not pass)."""
        try:
            cfg = self.parser.parse(raw)
            return cfg, self.runtime.baseline(cfg)
        except RuleConfigError as e:
            problems = e.problems
        except BaselineError as e:
            problems = [f"{self.id}: {e}"]
        for p in problems:
            _report(report, EnforcementLevel.MANDATORY, f"invalid policy config: {p}", urn)
        return None

    def validate_resource(self, args: ResourceValidationArgs, report: ReportViolation) -> None:
        loaded = self._config(args.get_config(), report, args.urn)
        if loaded is None:
            return
        cfg, baseline = loaded
        change = resource_change(
            args.resource_type, args.urn, args.name, args.props,
            baseline=baseline, require_baseline=cfg.require_baseline,
            parent=_parent_urn(args.opts.parent if args.opts else None),
            new=request_props(args.urn, args.props),
        )
        self._judge([change], cfg, report, default_urn=args.urn)

    def validate_stack(self, args: StackValidationArgs, report: ReportViolation) -> None:
        loaded = self._config(args.get_config(), report, None)
        if loaded is None:
            return
        cfg, baseline = loaded
        changes = [
            resource_change(
                r.resource_type, r.urn, r.name, r.props,
                baseline=baseline,
                require_baseline=cfg.require_baseline,
                parent=_parent(r),
                references=_references(r.property_dependencies),
            )
            for r in args.resources
            if not is_engine_resource(r.resource_type)  # the stack and providers, as in sources
        ]
        self._judge(changes, cfg, report, default_urn=None)

    def _judge(self, changes: Sequence[ResourceChange], cfg: RuleConfig,
               report: ReportViolation, *, default_urn: str | None) -> None:
        ctx = RuleContext(
            catalog=self.runtime.catalog,
            params=cfg.params,
            index={c.address: c for c in changes},
        )
        in_force = getattr(report, "level", None)
        try:
            findings: Iterable[Finding] = list(self.rule.check(changes, ctx))
        except Exception as e:  # a rule that raises fails closed, worded as the engine does
            where = f" on {default_urn}" if default_urn else ""
            _report(report, EnforcementLevel.MANDATORY,
                    f"rule raised {type(e).__name__}{where}: {e}", default_urn)
            return
        for f in findings:
            level = finding_level(f, in_force, cfg.params) if in_force is not None else None
            _report(report, level, f.message, f.resource or default_urn)


def _report(report: ReportViolation, level: EnforcementLevel | None, message: str,
            urn: str | None) -> None:
    at = getattr(report, "at", None)
    if level is None or at is None:
        report(message, urn)
    else:
        at(level)(message, urn)


def _references(property_dependencies: Mapping[str, Sequence[Any]]) -> dict[str, str]:
    """Links the engine proves even when values are unknown (input key → the one URN it was
    computed from), by the same rule as the Pulumi preview and offline plan sources."""
    deps = {key: [d.urn for d in ds] for key, ds in property_dependencies.items()}
    return dependency_references(deps, SOURCE, "propertyDependencies")


def _parent_urn(urn: str | None) -> str | None:
    found = urn_type_name(urn) if urn else None
    return None if found is None or is_engine_resource(found[0]) else urn


def _parent(resource: PolicyResource) -> str | None:
    """The parent URN; None for top-level resources (parented to the stack itself)."""
    parent = resource.parent
    if parent is None or is_engine_resource(parent.resource_type):
        return None
    return parent.urn
