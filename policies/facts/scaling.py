"""What an autoscaling policy tracks: its type, metric, dimensions and target.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpupool.record import Frozen
from policies.facts.values import Maybe, block, blocks, flag, is_map, number, text
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, ClassVar


class _PolicyFields:
    """ScalingPolicy's fields, assignable: filled by plain slot stores, then the instance is
    given its (frozen) class, as :class:`policies.model.ResourceChange` is made (one is read
    per scaling policy judged; eleven ``object.__setattr__`` calls cost ~10x the stores)."""

    __slots__ = (
        "policy_type", "group_name", "enabled", "predefined_metric", "metric_name", "namespace",
        "statistic", "dimensions", "target", "disable_scale_in", "metric_math"
    )
    _fields: ClassVar[tuple[str, ...]] = __slots__


_new_fields = object.__new__


class ScalingPolicy(_PolicyFields, Frozen):
    """What a scaling policy tracks. Fields are UNKNOWN when the plan does not know them."""

    __slots__ = ()

    policy_type: str | Maybe
    group_name: str | Maybe | None
    enabled: bool | Maybe
    predefined_metric: str | Maybe | None
    metric_name: str | Maybe | None
    namespace: str | Maybe | None
    statistic: str | Maybe | None
    dimensions: Mapping[str, Any] | Maybe  # name → value (a value may be UNKNOWN)
    target: float | Maybe | None
    disable_scale_in: bool | Maybe
    metric_math: bool  # a math expression over several metrics: cannot be judged

    def __new__(
        cls,
        policy_type: str | Maybe,
        group_name: str | Maybe | None,
        enabled: bool | Maybe,
        predefined_metric: str | Maybe | None,
        metric_name: str | Maybe | None,
        namespace: str | Maybe | None,
        statistic: str | Maybe | None,
        dimensions: Mapping[str, Any] | Maybe,
        target: float | Maybe | None,
        disable_scale_in: bool | Maybe,
        metric_math: bool = False,
    ) -> ScalingPolicy:
        self = _new_fields(_PolicyFields)
        self.policy_type = policy_type
        self.group_name = group_name
        self.enabled = enabled
        self.predefined_metric = predefined_metric
        self.metric_name = metric_name
        self.namespace = namespace
        self.statistic = statistic
        self.dimensions = dimensions
        self.target = target
        self.disable_scale_in = disable_scale_in
        self.metric_math = metric_math
        self.__class__ = cls  # type: ignore[assignment]  (same slots: see _PolicyFields)
        return self  # type: ignore[return-value]

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle: through the constructor
        return (self.__class__, self._key(self))


def scaling_policy(inputs: Mapping[str, Any]) -> ScalingPolicy:
    # One is read per scaling policy judged: the usual shapes (non-empty strings, booleans,
    # Pulumi's objects) are read inline, anything else by text(), flag() and block().
    raw = inputs.get("policy_type")
    policy_type = (raw if type(raw) is str and raw else text(raw)) or "SimpleScaling"  # default
    raw = inputs.get("autoscaling_group_name")
    group = raw if type(raw) is str and raw else text(raw)
    enabled_raw = inputs.get("enabled", True)
    enabled = (True if enabled_raw is None else enabled_raw if type(enabled_raw) is bool
               else flag(enabled_raw))
    raw = inputs.get("target_tracking_configuration")
    ttc = raw if type(raw) is dict else block(raw)
    if ttc is UNKNOWN:
        return ScalingPolicy(policy_type, group, enabled, *([UNKNOWN] * 7))  # type: ignore[arg-type]
    if ttc is None:
        return ScalingPolicy(policy_type, group, enabled, None, None, None, None, {}, None, False)
    target = number(ttc.get("target_value"))
    scale_in_raw = ttc.get("disable_scale_in")
    disable_scale_in = False if scale_in_raw is None else flag(scale_in_raw)
    predefined_spec = block(ttc.get("predefined_metric_specification"))
    predefined: str | Maybe | None = (
        predefined_spec if predefined_spec is UNKNOWN
        else None if predefined_spec is None
        else text(predefined_spec.get("predefined_metric_type"))
    )
    raw = ttc.get("customized_metric_specification")
    spec = raw if type(raw) is dict else block(raw)
    if spec is UNKNOWN:
        return ScalingPolicy(policy_type, group, enabled, predefined, UNKNOWN, UNKNOWN, UNKNOWN,
                             UNKNOWN, target, disable_scale_in)
    if spec is None:
        return ScalingPolicy(policy_type, group, enabled, predefined, None, None, None, {},
                             target, disable_scale_in)
    queries = blocks(spec.get("metrics"))
    if queries is UNKNOWN:
        return ScalingPolicy(policy_type, group, enabled, predefined, UNKNOWN, UNKNOWN, UNKNOWN,
                             UNKNOWN, target, disable_scale_in)
    if queries:
        return _metric_query(policy_type, group, enabled, predefined, queries, target,
                             disable_scale_in)
    dims_key = "metric_dimension" if "metric_dimension" in spec else "metric_dimensions"
    name, namespace, statistic = (spec.get("metric_name"), spec.get("namespace"),
                                  spec.get("statistic"))
    return ScalingPolicy(
        policy_type, group, enabled, predefined,
        name if type(name) is str and name else text(name),
        namespace if type(namespace) is str and namespace else text(namespace),
        statistic if type(statistic) is str and statistic else text(statistic),
        _dimensions(spec.get(dims_key)), target, disable_scale_in,
    )


def _metric_query(
    policy_type: str | Maybe, group: str | Maybe | None, enabled: bool | Maybe,
    predefined: str | Maybe | None, queries: Sequence[Any], target: float | Maybe | None,
    disable_scale_in: bool | Maybe,
) -> ScalingPolicy:
    """The ``metrics`` form: judgeable only when it returns one plain metric (no math)."""
    def math() -> ScalingPolicy:
        return ScalingPolicy(policy_type, group, enabled, predefined, None, None, None, {},
                             target, disable_scale_in, metric_math=True)

    if any(not is_map(q) for q in queries):
        return ScalingPolicy(policy_type, group, enabled, predefined, UNKNOWN, UNKNOWN, UNKNOWN,
                             UNKNOWN, target, disable_scale_in)
    if any(q.get("expression") for q in queries) or len(queries) != 1:
        return math()
    stat = block(queries[0].get("metric_stat"))
    metric = stat if stat is UNKNOWN or stat is None else block(stat.get("metric"))
    if metric is UNKNOWN or stat is UNKNOWN:
        return ScalingPolicy(policy_type, group, enabled, predefined, UNKNOWN, UNKNOWN, UNKNOWN,
                             UNKNOWN, target, disable_scale_in)
    if metric is None or stat is None:
        return math()
    return ScalingPolicy(
        policy_type, group, enabled, predefined,
        text(metric.get("metric_name")), text(metric.get("namespace")), text(stat.get("stat")),
        _dimensions(metric.get("dimensions")), target, disable_scale_in,
    )


def _dimensions(value: Any) -> Mapping[str, Any] | Maybe:
    items = blocks(value)
    if items is UNKNOWN:
        return UNKNOWN
    out: dict[str, Any] = {}
    for item in items:
        if item is UNKNOWN:
            return UNKNOWN
        if is_map(item):
            name = item.get("name")
            if name is UNKNOWN:
                return UNKNOWN
            if isinstance(name, str):
                out[name] = item.get("value")
    return out
