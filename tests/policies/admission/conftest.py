"""Shared helpers (as a fixture: tests import nothing from each other): admission objects
for given settings, and the Python rule's verdict on the same objects."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

import pytest

from gpupool.catalog import Catalog, load_catalog
from gpupool.record import replace
from policies.admission.generate import admission_objects
from policies.rules import get_rule
from policies.rules.base import Finding
from policies.settings import PolicySettings, Settings


class Harness:
    today = date(2026, 12, 2)

    def __init__(self) -> None:
        self.catalog: Catalog = load_catalog()
        self._cache: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def settings_with(self, rule_id: str, params: Mapping[str, Any] | None = None,
                      base: Settings | None = None) -> Settings:
        base = base or Settings.default()
        policies = dict(base.policies)
        policies[rule_id] = PolicySettings(policies[rule_id].enforcement,
                                           get_rule(rule_id).parse_params(params or {}))
        return replace(base, policies=policies)

    def objects_for(self, rule_id: str, params: Mapping[str, Any] | None = None
                    ) -> list[dict[str, Any]]:
        key = (rule_id, repr(sorted((params or {}).items())))
        if key not in self._cache:
            self._cache[key] = admission_objects(self.settings_with(rule_id, params),
                                                 self.catalog, today=self.today)
        return self._cache[key]

    def python_findings(self, rule_id: str, changes: list[Any],
                        params: Mapping[str, Any] | None = None) -> list[Finding]:
        return [f for f in get_rule(rule_id).run(changes, self.catalog, params)
                if not f.advisory_only]


@pytest.fixture(scope="session")
def harness() -> Harness:
    return Harness()
