"""A GPU group at min size 0 passes, with an advisory: target tracking cannot start it."""

from __future__ import annotations

from gpupool.catalog import load_catalog
from gpupool.record import replace
from policies.rules import get_rule

RULE = get_rule("gpu-pool-scales-on-utilisation")
EXAMPLE = next(ex for ex in RULE.examples if "min size 0" in ex.title)


def _findings(min_size: int) -> list:
    changes = EXAMPLE.changes()
    group = changes[0]
    inputs = dict(group.after) | {"min_size": min_size}
    changes[0] = replace(group, new=inputs)
    return list(RULE.run(changes, load_catalog(), {}))


def test_min_size_zero_is_advisory_information() -> None:
    findings = _findings(0)
    assert len(findings) == 1
    assert findings[0].advisory_only
    assert "cannot scale out from zero" in findings[0].message


def test_min_size_one_says_nothing() -> None:
    assert _findings(1) == []
