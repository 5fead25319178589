"""Reading a plan tests change kinds and resource kinds against module constants, counted.

On Python 3.11 ``ChangeKind.DELETE`` is a Python-level call (``EnumType`` defines
``__getattr__``, so every class attribute read takes the slow hook), ~10x a global. The readers
test each step's or resource's kinds, so they bind the members once at import: reading the
bench's fleet of 200 resources reads exactly as many members through their class as reading
100 (none per resource).
"""

from __future__ import annotations

import enum
import importlib.util
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from policies.model import ChangeKind
from policies.sources import load_plan

ROOT = Path(__file__).resolve().parents[3]


def _generator(name: str) -> Callable[[int], dict[str, Any]]:
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate  # type: ignore[no-any-return]


@pytest.mark.parametrize("generator", ["gen_preview", "gen_tfplan"])
def test_reading_a_plan_reads_no_enum_member_through_its_class_per_resource(
        generator: str, tmp_path: Path) -> None:
    paths = {}
    for n in (100, 200):
        paths[n] = tmp_path / f"plan-{n}.json"
        paths[n].write_text(json.dumps(_generator(generator)(n)))
        load_plan(paths[n])  # the readers imported (their module-level reads)
    real = type.__getattribute__
    reads: Counter[tuple[int, str]] = Counter()
    counting = [0]

    def counted(cls: type, name: str) -> Any:
        found = real(cls, name)
        if counting[0] and isinstance(found, enum.Enum) and type(found) is cls:
            reads[(counting[0], name)] += 1
        return found

    kinds: dict[int, set[ChangeKind]] = {}
    enum.EnumType.__getattribute__ = counted  # type: ignore[method-assign,assignment]
    try:
        for n in (100, 200):
            counting[0] = n
            plan = load_plan(paths[n])
            counting[0] = 0
            assert len(plan.changes) >= n
            kinds[n] = {c.change for c in plan.changes}
    finally:
        del enum.EnumType.__getattribute__  # type: ignore[misc]
    assert len(kinds[200]) >= 2  # the fleet has several change kinds, each tested per resource
    small = Counter({name: k for (n, name), k in reads.items() if n == 100})
    large = Counter({name: k for (n, name), k in reads.items() if n == 200})
    assert large == small, large - small
